/// A colour with straight (not premultiplied) alpha, components 0...1.
public struct Color: Hashable, Sendable, CustomStringConvertible {
    public var red: Double, green: Double, blue: Double, alpha: Double
    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red; self.green = green; self.blue = blue; self.alpha = alpha
    }

    /// "#rrggbb" or "#rrggbbaa".
    public init?(hex: String) {
        var s = Substring(hex)
        if s.hasPrefix("#") { s = s.dropFirst() }
        guard s.count == 6 || s.count == 8, let v = UInt32(s, radix: 16) else { return nil }
        let full = s.count == 6 ? (v << 8) | 0xff : v
        self.init(red: Double((full >> 24) & 0xff) / 255, green: Double((full >> 16) & 0xff) / 255,
                  blue: Double((full >> 8) & 0xff) / 255, alpha: Double(full & 0xff) / 255)
    }

    public func with(alpha a: Double) -> Color { Color(red: red, green: green, blue: blue, alpha: a) }

    public var description: String {
        let c = [red, green, blue, alpha].map { Int(($0 * 255).rounded()) }
        return "#" + c.map { String($0, radix: 16).leftPadded(2) }.joined()
    }
}

extension String {
    func leftPadded(_ n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }
}

/// Colours and sizes of the lock screen. Defaults follow seed 001: a translucent
/// blue path 10 px wide (0, 170, 255 at 0.5 alpha), red on error.
public struct Theme: Hashable, Sendable {
    public var background = Color(red: 0.06, green: 0.07, blue: 0.09)
    public var text = Color(red: 0.92, green: 0.93, blue: 0.95)
    public var node = Color(red: 0.55, green: 0.58, blue: 0.63)
    public var nodeSelected = Color(red: 0, green: 170.0 / 255, blue: 1)
    public var error = Color(red: 1, green: 0.23, blue: 0.19)
    public var path = Color(red: 0, green: 170.0 / 255, blue: 1, alpha: 0.5)
    public var lineWidth = 10.0
    public var fontFamily = "DejaVu Sans"
    public var fontSize = 28.0
    public init() {}
}
