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
/// turns them into pixels (`scaled(by:)`). Defaults: a translucent blue
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
    /// The file of `fontFamily`'s regular face, read with FreeType alone: text it covers
    /// costs no fontconfig start-up. Nil: `defaultFontFile` when the family is the
    /// default one, else fontconfig finds the family.
    public var fontFile: String?
    /// DejaVu Sans as Debian installs it (the package depends on fonts-dejavu-core).
    public static let defaultFontFile = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    /// The file to read `fontFamily` from without fontconfig, if any.
    public var directFontFile: String? {
        fontFile ?? (fontFamily == Theme().fontFamily ? Self.defaultFontFile : nil)
    }
    /// The prompt's size; it wraps, then shrinks, where the screen is small.
    public var fontSize = 22.0

    // The code pad and the on-screen controls.
    /// The focused box's underline and the cursor's default (blue).
    public var accent = Color(red: 0, green: 170.0 / 255, blue: 1)
    /// An empty box's underline (a light grey).
    public var underline = Color(red: 0.33, green: 0.35, blue: 0.39)
    /// A filled box's underline: filled boxes are told apart from empty ones.
    public var underlineFilled = Color(red: 0.75, green: 0.77, blue: 0.8)
    public var cursor = Color(red: 0, green: 170.0 / 255, blue: 1)
    public var key = Color(red: 0.16, green: 0.18, blue: 0.22)
    public var keyPressed = Color(red: 0.32, green: 0.36, blue: 0.42)
    public var keyText = Color(red: 0.92, green: 0.93, blue: 0.95)
    /// A pressed key's label (nil: `keyText`): a light pressed key needs dark text.
    public var keyPressedText: Color?
    /// The outline of keys and the switch (nil: none, unless the key's colour is so close
    /// to the background (contrast under 1.15) that the key cannot be seen; then
    /// `underline`), `keyOutlineWidth` dp wide.
    public var keyOutline: Color?
    public var keyOutlineWidth = 2.0
    /// How much the background colour covers a background image (0...1), so text stays
    /// readable over a light picture.
    public var backgroundDim = 0.4
    /// The weight of digits in the boxes and on the keys.
    public var digitBold = false
    /// The diameter of a secure entry's dot, in dp.
    public var dotSize = 12.0
    public var codeFontSize = 36.0
    public var keyFontSize = 28.0
    /// A PNG drawn behind everything, scaled to cover the screen.
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
        t.keyOutlineWidth *= factor; t.dotSize *= factor
        return t
    }
}

extension Theme {
    /// The built-in themes, by the name `theme =` takes.
    public static func named(_ name: String) -> Theme? {
        switch name {
        case "default": return Theme()
        case "high-contrast": return .highContrast
        default: return nil
        }
    }

    /// Black and white with yellow for what is chosen or pressed (WCAG AAA contrast:
    /// white on black 21:1, black on yellow 19.6:1), outlined keys, bold digits.
    public static var highContrast: Theme {
        var t = Theme()
        let black = Color(red: 0, green: 0, blue: 0), white = Color(red: 1, green: 1, blue: 1)
        let yellow = Color(red: 1, green: 0.84, blue: 0)
        t.background = black
        t.text = white
        t.node = white
        t.nodeSelected = yellow
        t.error = Color(red: 1, green: 0.35, blue: 0.35)
        t.path = yellow.with(alpha: 0.8)
        t.accent = yellow
        t.underline = Color(red: 0.6, green: 0.6, blue: 0.6)
        t.underlineFilled = white
        t.cursor = yellow
        t.key = black
        t.keyPressed = yellow
        t.keyText = white
        t.keyPressedText = black
        t.keyOutline = white
        t.keyOutlineWidth = 2
        t.backgroundDim = 0.7
        t.digitBold = true
        return t
    }

    /// The outline keys and the switch are drawn with, if any.
    public var effectiveKeyOutline: Color? {
        if let keyOutline { return keyOutline }
        return key.contrast(with: background) < 1.15 ? underline : nil
    }
}

extension Color {
    /// WCAG's relative luminance, the sRGB curve taken as a plain power of 2.25 (close to
    /// the exact curve; enough to tell a key it cannot be seen on its background).
    public var luminance: Double {
        func lin(_ c: Double) -> Double { c * c * c.squareRoot().squareRoot() }
        return 0.2126 * lin(red) + 0.7152 * lin(green) + 0.0722 * lin(blue)
    }

    /// WCAG's contrast ratio between two opaque colours (1...21).
    public func contrast(with o: Color) -> Double {
        let a = luminance, b = o.luminance
        return (max(a, b) + 0.05) / (min(a, b) + 0.05)
    }
}
