/// The lock screens' settings: unlock methods, the code pad, stealth, messages, layout.
/// They are kept apart from the daemon's other keys (Config.swift) so they can move to a
/// section of their own as a block.
public struct ScreenSettings: Sendable {
    /// Which unlock methods the screen offers.
    public enum Methods: String, Sendable, CaseIterable {
        case pattern, code, both
    }

    public var methods = Methods.pattern
    /// Draw no path and no chosen nodes while a pattern is drawn.
    public var stealth = false
    /// Made by `touchlockctl hash-code`.
    public var codeHash: String?
    /// Digits in the code; a count below 1 means 4 (seed 003).
    public var codeLength = 4
    /// Dots instead of digits (seed 002).
    public var codeSecure = false
    /// With `codeSecure`, the last digit typed shows this long before it becomes a dot
    /// (Android shows it 1.3 s); zero shows no digit.
    public var codeReveal = Interval.milliseconds(0)
    /// Shuffle the keypad's digits once per prompt.
    public var keypadShuffle = false
    /// Dots per inch of the panel; nil: from the connector's physical size.
    public var dpi: Double?
    public var messages = Messages()

    public init() {}
}

/// What the screens say. `{n}`, `{min}` and `{s}` are replaced by numbers.
public struct Messages: Hashable, Sendable {
    public var patternPrompt = "Draw your pattern to unlock"
    public var codePrompt = "Enter your code"
    public var wrongPattern = "Wrong pattern, try again"
    public var wrongCode = "Wrong code, try again"
    /// {min}: the minimum length; {n}: nodes drawn.
    public var tooShort = "Connect at least {min} dots ({n} drawn)"
    /// {n}: digits in the code.
    public var codeIncomplete = "Enter all {n} digits"
    /// {s}: whole seconds left.
    public var lockout = "Too many attempts, try again in {s} s"
    public var unlocked = "Unlocked"
    public var useCode = "Use code"
    public var usePattern = "Use pattern"
    public init() {}

    /// `template` with each `{name}` replaced.
    public static func fill(_ template: String, _ values: [String: Int]) -> String {
        var s = template
        for (k, v) in values { s = s.replacingAll("{\(k)}", with: String(v)) }
        return s
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = "", rest = Substring(self)
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound]
            out += replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}

extension Config {
    /// Applies one of the lock screens' keys; false when `key` is not one of them.
    mutating func applyScreenSetting(key: String, value: String, file: String, line: Int) throws(Error) -> Bool {
        func bad(_ why: String) -> Error { Error(file: file, line: line, message: "\(key): \(why)") }
        func int(_ range: ClosedRange<Int>) throws(Error) -> Int {
            guard let v = Int(value), range.contains(v) else {
                throw bad("expected a whole number from \(range.lowerBound) to \(range.upperBound), found '\(value)'")
            }
            return v
        }
        func number(_ range: ClosedRange<Double>) throws(Error) -> Double {
            guard let v = Double(value), range.contains(v) else {
                throw bad("expected a number from \(range.lowerBound) to \(range.upperBound), found '\(value)'")
            }
            return v
        }
        func bool() throws(Error) -> Bool {
            switch value.lowercased() {
            case "true", "yes", "on", "1": return true
            case "false", "no", "off", "0": return false
            default: throw bad("expected true or false, found '\(value)'")
            }
        }
        func color() throws(Error) -> Color {
            guard let c = Color(hex: value) else { throw bad("expected a colour like #00aaff or #00aaff80, found '\(value)'") }
            return c
        }
        func text() throws(Error) -> String {
            guard !value.isEmpty else { throw bad("expected some text") }
            return value
        }
        switch key {
        case "unlock_method":
            guard let m = ScreenSettings.Methods(rawValue: value) else {
                throw bad("expected pattern, code or both, found '\(value)'")
            }
            screens.methods = m
        case "stealth": screens.stealth = try bool()
        case "code_hash":
            guard value.hasPrefix("$"), value.count >= 20, !value.contains(" ") else {
                throw bad("expected a hash made by 'touchlockctl hash-code' (it starts with '$')")
            }
            screens.codeHash = value
        case "code_length":
            let n = try int(-99...12)
            screens.codeLength = n < 1 ? 4 : n
        case "code_secure": screens.codeSecure = try bool()
        case "code_reveal_ms": screens.codeReveal = .milliseconds(Int64(try int(0...10_000)))
        case "keypad_shuffle": screens.keypadShuffle = try bool()
        case "dpi": screens.dpi = try number(30...1000)
        // Theme keys of the screens.
        case "accent_color": theme.accent = try color()
        case "underline_color": theme.underline = try color()
        case "underline_filled_color": theme.underlineFilled = try color()
        case "cursor_color": theme.cursor = try color()
        case "key_color": theme.key = try color()
        case "key_pressed_color": theme.keyPressed = try color()
        case "key_text_color": theme.keyText = try color()
        case "code_font_size": theme.codeFontSize = try number(4...200)
        case "key_font_size": theme.keyFontSize = try number(4...200)
        case "background_image":
            guard value.hasPrefix("/"), value.hasSuffix(".png") else {
                throw bad("expected the absolute path of a PNG file, found '\(value)'")
            }
            theme.backgroundImage = value
        // Messages.
        case "message_pattern_prompt": screens.messages.patternPrompt = try text()
        case "message_code_prompt": screens.messages.codePrompt = try text()
        case "message_wrong_pattern": screens.messages.wrongPattern = try text()
        case "message_wrong_code": screens.messages.wrongCode = try text()
        case "message_too_short": screens.messages.tooShort = try text()
        case "message_code_incomplete": screens.messages.codeIncomplete = try text()
        case "message_lockout": screens.messages.lockout = try text()
        case "message_unlocked": screens.messages.unlocked = try text()
        case "label_use_code": screens.messages.useCode = try text()
        case "label_use_pattern": screens.messages.usePattern = try text()
        default:
            return false
        }
        return true
    }
}

/// The panel's density: dots per inch and the factor sizes are multiplied by.
public struct Density: Hashable, Sendable {
    public var dpi: Double
    public var scale: Double { min(4, max(0.75, dpi / 96)) }

    /// `override` when set; else from the connector's physical size in millimetres,
    /// unless that is missing or not believable (EDIDs report 0x0, or the aspect ratio
    /// as 160x90 or 16x9 cm); else 96.
    public init(screen: Size, physicalMillimetres: (width: Int, height: Int)?, override: Double? = nil) {
        if let override { dpi = override; return }
        if let (mw, mh) = physicalMillimetres, mw > 0, mh > 0 {
            let aspectOnly = [(160, 90), (160, 100), (16, 9), (16, 10)].contains { $0 == (mw, mh) }
            let d = Double(screen.width) * 25.4 / Double(mw)
            if !aspectOnly, (50...600).contains(d) { dpi = d; return }
        }
        dpi = 96
    }
}

extension LockScreen {
    /// The lock screen the settings describe, laid out on a screen of `size` pixels.
    /// `shuffleSeed` (from the kernel's randomness) is used when the keypad is shuffled.
    public static func make(config: Config, size: Size, density: Density, shuffleSeed: UInt64,
                            at now: Instant = Instant(microseconds: 0)) -> LockScreen {
        let st = config.screens
        let scale = density.scale
        let theme = config.theme.scaled(by: scale)
        // With both methods, a strip at the bottom holds the control that switches.
        var area = size
        var toggle: PixelRect? = nil
        if st.methods == .both {
            let strip = Int((72 * scale).rounded())
            area.height = max(64, size.height - strip)
            let w = Int((260 * scale).rounded()), h = Int((52 * scale).rounded())
            toggle = PixelRect(x: (size.width - w) / 2, y: area.height + (strip - h) / 2, width: w, height: h)
        }
        let grid = PatternGrid.layout(rows: config.rows, columns: config.columns, on: area, hitFactor: config.hitFactor)
        var code: CodePad? = nil
        if st.methods != .pattern {
            let layout = CodePadLayout.layout(length: st.codeLength, on: area, scale: scale)
            code = CodePad(length: st.codeLength, layout: layout, secure: st.codeSecure, reveal: st.codeReveal,
                           shuffleSeed: st.keypadShuffle ? shuffleSeed : nil, at: now)
        }
        return LockScreen(pattern: PatternLock(grid: grid, minimumLength: config.minimumLength),
                          session: Session(errorHold: config.errorHold),
                          builder: SceneBuilder(theme: theme, size: size, stealth: st.stealth, messages: st.messages),
                          code: code, methods: st.methods, toggle: toggle)
    }
}
