/// How the picture is turned on the panel: clockwise, in quarter turns. The scene is laid
/// out in the logical (upright) size; the copy to scanout turns it by this much, so that a
/// panel mounted turned the other way shows it upright.
///
/// With `degrees90`, the logical top row is shown in the panel's rightmost column: right
/// for a panel whose right side is at the top of the device (the kernel's "Right Side Up").
public enum Rotation: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case degrees0 = 0
    case degrees90 = 90
    case degrees180 = 180
    case degrees270 = 270

    public init?(degrees: Int) { self.init(rawValue: degrees) }
    public var degrees: Int { rawValue }
    public var description: String { "\(rawValue)" }

    /// A quarter or three-quarter turn: width and height trade places.
    public var swapsAxes: Bool { self == .degrees90 || self == .degrees270 }

    /// The logical size of a panel (scanout) of `size`.
    public func logicalSize(panel size: Size) -> Size {
        swapsAxes ? Size(width: size.height, height: size.width) : size
    }

    /// The panel (scanout) size for a logical size.
    public func panelSize(logical size: Size) -> Size {
        swapsAxes ? Size(width: size.height, height: size.width) : size
    }

    /// The physical size in millimetres as the logical picture sees it.
    public func logical(millimetres mm: (width: Int, height: Int)?) -> (width: Int, height: Int)? {
        guard let mm else { return nil }
        return swapsAxes ? (mm.height, mm.width) : mm
    }

    /// The rectangle of the panel (scanout, `panel` pixels) a logical rectangle lands on.
    public func panelRect(_ r: PixelRect, panel: Size) -> PixelRect {
        switch self {
        case .degrees0: r
        case .degrees90: PixelRect(x: panel.width - r.maxY, y: r.x, width: r.height, height: r.width)
        case .degrees180: PixelRect(x: panel.width - r.maxX, y: panel.height - r.maxY, width: r.width, height: r.height)
        case .degrees270: PixelRect(x: r.y, y: panel.height - r.maxX, width: r.height, height: r.width)
        }
    }

    /// Panel coordinates to logical ones, in normalized device coordinates (the panel's
    /// [0, 1] square to the logical picture's): how touch follows the display. It is the
    /// inverse of the picture's turn, so libinput's matrix for the opposite rotation.
    public var touchMatrix: AffineMatrix {
        switch self {
        case .degrees0: .identity
        case .degrees90: AffineMatrix(0, 1, 0, -1, 0, 1)    // (x, y) -> (y, 1 - x)
        case .degrees180: AffineMatrix(-1, 0, 1, 0, -1, 1)  // (x, y) -> (1 - x, 1 - y)
        case .degrees270: AffineMatrix(0, -1, 1, 1, 0, 0)   // (x, y) -> (1 - y, x)
        }
    }

    /// The rotation that shows the picture upright on a panel with the connector property
    /// "panel orientation" (drm_connector.c): "Left Side Up" means the panel's left edge is
    /// at the top of the device, so the logical top goes to the panel's left column (a
    /// counter-clockwise turn: 270); "Right Side Up" the other way (90). Nil for a value
    /// the kernel does not define.
    public init?(panelOrientation name: String) {
        switch name {
        case "Normal": self = .degrees0
        case "Upside Down": self = .degrees180
        case "Left Side Up": self = .degrees270
        case "Right Side Up": self = .degrees90
        default: return nil
        }
    }
}
