import TouchlockCore

/// The scale a lock surface's buffers are drawn at, and what follows from it: their size
/// in pixels for the surface's configured size in units, and the pixels per unit a touch
/// is turned by. Either an integer buffer scale (wl_surface.set_buffer_scale, from
/// wl_output.scale), or a fractional one in 120ths (fractional-scale-v1's preferred scale:
/// 1.5 is 180), whose buffers a viewport shows at the surface's size.
public enum SurfaceScale: Hashable, Sendable, CustomStringConvertible {
    case buffer(Int)
    case fractional(per120: Int)

    /// The buffers' size for a surface of `units`; on the fractional path rounded half away
    /// from zero, as fractional-scale-v1 asks (a 853x480 surface at 1.5 is 1280x720).
    public func pixels(for units: Size) -> Size {
        switch self {
        case .buffer(let s):
            Size(width: units.width * s, height: units.height * s)
        case .fractional(let n):
            Size(width: (units.width * n + 60) / 120, height: (units.height * n + 60) / 120)
        }
    }

    public var pixelsPerUnit: Double {
        switch self {
        case .buffer(let s): Double(s)
        case .fractional(let n): Double(n) / 120
        }
    }

    /// As a log line says it: "2", "1.5".
    public var description: String {
        switch self {
        case .buffer(let s): "\(s)"
        case .fractional(let n): n % 120 == 0 ? "\(n / 120)" : "\(Double(n) / 120)"
        }
    }
}
