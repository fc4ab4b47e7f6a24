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

/// Colours and sizes of the lock screen. Sizes are in dp (1 dp = dpi/160 px); the layout
/// turns them into pixels (`scaled(by:)`). Defaults follow seed 001: a translucent blue
/// path 10 dp wide (0, 170, 255 at 0.5 alpha), red on error.
public struct Theme: Hashable, Sendable {
    public var background = Color(red: 0.06, green: 0.07, blue: 0.09)
    public var text = Color(red: 0.92, green: 0.93, blue: 0.95)
    public var node = Color(red: 0.55, green: 0.58, blue: 0.63)
    public var nodeSelected = Color(red: 0, green: 170.0 / 255, blue: 1)
    public var error = Color(red: 1, green: 0.23, blue: 0.19)
    public var path = Color(red: 0, green: 170.0 / 255, blue: 1, alpha: 0.5)
    public var lineWidth = 10.0
    public var fontFamily = "DejaVu Sans"
    /// The prompt's size; it wraps, then shrinks, where the screen is small.
    public var fontSize = 22.0

    // The code pad (seeds 000, 002, 003) and the on-screen controls.
    /// The focused box's underline and the cursor's default (seed 000's blue).
    public var accent = Color(red: 0, green: 170.0 / 255, blue: 1)
    /// An empty box's underline (seed 000's light grey, seed 003's #f0f0f0 on white).
    public var underline = Color(red: 0.33, green: 0.35, blue: 0.39)
    /// A filled box's underline (seed 003's #999999; seed 002 colours filled boxes apart).
    public var underlineFilled = Color(red: 0.75, green: 0.77, blue: 0.8)
    public var cursor = Color(red: 0, green: 170.0 / 255, blue: 1)
    public var key = Color(red: 0.16, green: 0.18, blue: 0.22)
    public var keyPressed = Color(red: 0.32, green: 0.36, blue: 0.42)
    public var keyText = Color(red: 0.92, green: 0.93, blue: 0.95)
    public var codeFontSize = 36.0
    public var keyFontSize = 28.0
    /// A PNG drawn behind everything, scaled to cover the screen (seed 002).
    public var backgroundImage: String?
    /// Pixels per dp on the screen the theme is laid out for (1 until `scaled(by:)`).
    public var unit = 1.0
    public init() {}

    /// The theme with every size multiplied by `factor` (pixels per dp).
    public func scaled(by factor: Double) -> Theme {
        var t = self
        t.unit = factor
        t.lineWidth *= factor; t.fontSize *= factor
        t.codeFontSize *= factor; t.keyFontSize *= factor
        return t
    }
}
