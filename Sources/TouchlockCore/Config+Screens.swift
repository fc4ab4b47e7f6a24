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
    /// Digits in the code, and boxes on the pad: `CodeRules.lengths`; 0 or below in
    /// the config means the default.
    public var codeLength = CodeRules.defaultLength
    /// Dots instead of digits.
    public var codeSecure = false
    /// With `codeSecure`, the last digit typed shows this long before it becomes a dot
    /// (Android shows it 1.3 s); zero shows no digit.
    public var codeReveal = Interval.milliseconds(0)
    /// Submit the code only on OK (a return key), not at the Nth digit.
    public var codeSubmitOnOK = false
    /// Shuffle the keypad's digits once per prompt.
    public var keypadShuffle = false
    /// Dots per inch of the panel; nil: from the connector's physical size.
    public var dpi: Double?
    /// The clock above the prompt (`[screen] clock`), of 12 or 24 hours (`clock_hours`).
    public var clock = ClockMode.off
    public var clockHours = ClockHours.auto
    /// The message shown under the clock (`[screen] message`); one set over the socket
    /// is shown instead while there is one.
    public var message: String?
    /// A PNG drawn above the clock (`[screen] logo`).
    public var logo: String?

    /// The information area's parts, with a message or not.
    public func infoParts(message: Bool) -> InfoParts {
        InfoParts(clock: clock, message: message, logo: logo != nil)
    }
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
    /// {time}: the wait left, as 0:59, 1:29:59 or 3 d 2 h; {s}: whole seconds left.
    public var lockout = "Too many attempts. Try again in {time}"
    /// After a damaged or unreadable state file; {time} and {s} as for `lockout`.
    public var recordDamaged = "Lock record damaged. Try again in {time}"
    /// After a state file others could have written: no attempt is accepted, no wait ends it.
    public var recordUntrusted = "Lock record not trusted. Locked until an administrator puts it right"
    public var unlocked = "Unlocked"
    public var useCode = "Use code"
    public var usePattern = "Use pattern"
    public var enrollPattern = "Draw your new pattern"
    public var enrollPatternAgain = "Draw it again to confirm"
    public var enrollCode = "Enter your new code"
    public var enrollCodeAgain = "Enter it again"
    public var enrollMismatch = "They did not match, start again"
    /// The service pad's prompt (a long press on the prompt opens it, docs/service-codes.md).
    public var servicePrompt = "Service code"
    /// The service pad's control back to the owner's screen.
    public var cancel = "Cancel"
    public init() {}

    /// Every text the prompt's box shows, the numbers in them at their widest (a lockout's
    /// wait of hours, a 12-digit code), for the layout to make room for the longest.
    public func prompts(minimumLength: Int, codeLength: Int) -> [String] {
        let wait = Interval.milliseconds(35_999_000)
        return [patternPrompt, codePrompt, wrongPattern, wrongCode,
                Self.fill(tooShort, ["min": minimumLength, "n": max(0, minimumLength - 1)]),
                Self.fill(codeIncomplete, ["n": codeLength]), lockout(left: wait), lockout(left: wait, damagedRecord: true),
                recordUntrusted, unlocked, enrollPattern, enrollPatternAgain, enrollCode, enrollCodeAgain, enrollMismatch]
    }

    /// `template` with each `{name}` replaced.
    public static func fill(_ template: String, _ values: [String: Int]) -> String {
        fill(template, values.mapValues { String($0) })
    }

    public static func fill(_ template: String, _ values: [String: String]) -> String {
        var s = template
        for (k, v) in values { s = s.replacingAll("{\(k)}", with: v) }
        return s
    }

    /// The lockout message for a wait of `left`.
    public func lockout(left: Interval, damagedRecord: Bool = false) -> String {
        let seconds = max(0, left.microseconds.saturatingAdding(999_999) / 1_000_000)
        return Self.fill(damagedRecord ? recordDamaged : lockout, ["time": left.countdown, "s": String(seconds)])
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
    /// `[code] length`: a length `CodeRules` allows, or 0 (or below) for the default.
    static func codeLength(_ v: String) throws(BadValue) -> Int {
        guard let n = Int(v) else { throw BadValue(message: "expected a number of digits, found '\(v)'") }
        if n < 1 { return CodeRules.defaultLength }
        do { try CodeRules.check(length: n) } catch {
            throw BadValue(message: "expected \(CodeRules.lengths.lowerBound) to \(CodeRules.lengths.upperBound) digits "
                           + "(0 for the default, \(CodeRules.defaultLength)), found '\(v)'")
        }
        return n
    }

    /// The lock screens' keys: [screen], [code], the screens' part of [theme], [messages].
    static let screenKeys: [Key] = [
        Key(section: "screen", name: "unlock_method", flatName: "unlock_method",
            set: { c, v throws(BadValue) in guard let m = ScreenSettings.Methods(rawValue: v) else { throw BadValue(message: "expected pattern, code or both, found '\(v)'") }; c.screens.methods = m }, show: { $0.screens.methods.rawValue }),
        Key(section: "screen", name: "stealth", flatName: "stealth",
            set: { c, v throws(BadValue) in c.screens.stealth = try bool(v) }, show: { "\($0.screens.stealth)" }),
        Key(section: "screen", name: "dpi", flatName: "dpi",
            set: { c, v throws(BadValue) in c.screens.dpi = try number(v, 30...1000) }, show: { $0.screens.dpi.map { "\($0)" } ?? "" }),
        Key(section: "screen", name: "clock", flatName: nil,
            set: { c, v throws(BadValue) in guard let m = ClockMode(rawValue: v) else { throw BadValue(message: "expected off, time or date-time, found '\(v)'") }; c.screens.clock = m }, show: { $0.screens.clock.rawValue }),
        Key(section: "screen", name: "clock_hours", flatName: nil,
            set: { c, v throws(BadValue) in guard let h = ClockHours(rawValue: v) else { throw BadValue(message: "expected auto (the locale's), 12 or 24, found '\(v)'") }; c.screens.clockHours = h }, show: { $0.screens.clockHours.rawValue }),
        Key(section: "screen", name: "message", flatName: nil,
            set: { c, v throws(BadValue) in
                do throws(ScreenMessage.Refusal) { c.screens.message = try ScreenMessage.check(v) } catch { throw BadValue(message: error.description) }
            }, show: { $0.screens.message ?? "" }),
        Key(section: "screen", name: "logo", flatName: nil,
            set: { c, v throws(BadValue) in guard v.hasPrefix("/"), v.hasSuffix(".png") else { throw BadValue(message: "expected the absolute path of a PNG file, found '\(v)'") }; c.screens.logo = v }, show: { $0.screens.logo ?? "" }),
        Key(section: "code", name: "hash", flatName: "code_hash",
            set: { c, v throws(BadValue) in guard v.hasPrefix("$"), v.count >= 20, !v.contains(" ") else { throw BadValue(message: "expected a hash made by 'touchlockctl hash-code' (it starts with '$')") }; c.screens.codeHash = v }, show: { $0.screens.codeHash == nil ? "" : "(set)" }),
        Key(section: "code", name: "length", flatName: "code_length",
            set: { c, v throws(BadValue) in c.screens.codeLength = try codeLength(v) }, show: { "\($0.screens.codeLength)" }),
        Key(section: "code", name: "secure", flatName: "code_secure",
            set: { c, v throws(BadValue) in c.screens.codeSecure = try bool(v) }, show: { "\($0.screens.codeSecure)" }),
        Key(section: "code", name: "reveal_ms", flatName: "code_reveal_ms",
            set: { c, v throws(BadValue) in c.screens.codeReveal = .milliseconds(Int64(try int(v, 0...10_000))) }, show: { "\($0.screens.codeReveal.milliseconds)" }),
        Key(section: "code", name: "submit", flatName: "code_submit",
            set: { c, v throws(BadValue) in
                switch v { case "auto": c.screens.codeSubmitOnOK = false; case "ok": c.screens.codeSubmitOnOK = true
                default: throw BadValue(message: "expected auto (at the last digit) or ok (on OK), found '\(v)'") }
            }, show: { $0.screens.codeSubmitOnOK ? "ok" : "auto" }),
        Key(section: "code", name: "keypad_shuffle", flatName: "keypad_shuffle",
            set: { c, v throws(BadValue) in c.screens.keypadShuffle = try bool(v) }, show: { "\($0.screens.keypadShuffle)" }),
        colorKey("accent_color", \.accent),
        colorKey("underline_color", \.underline),
        colorKey("underline_filled_color", \.underlineFilled),
        colorKey("cursor_color", \.cursor),
        colorKey("key_color", \.key),
        colorKey("key_pressed_color", \.keyPressed),
        colorKey("key_text_color", \.keyText),
        Key(section: "theme", name: "key_pressed_text_color", flatName: "key_pressed_text_color",
            set: { c, v throws(BadValue) in c.theme.keyPressedText = try color(v) }, show: { $0.theme.keyPressedText?.description ?? "" }),
        Key(section: "theme", name: "key_outline_color", flatName: "key_outline_color",
            set: { c, v throws(BadValue) in c.theme.keyOutline = v == "none" ? nil : try color(v) }, show: { $0.theme.keyOutline?.description ?? "none" }),
        Key(section: "theme", name: "key_outline_width", flatName: "key_outline_width",
            set: { c, v throws(BadValue) in c.theme.keyOutlineWidth = try number(v, 0...16) }, show: { "\($0.theme.keyOutlineWidth)" }),
        Key(section: "theme", name: "background_dim", flatName: "background_dim",
            set: { c, v throws(BadValue) in c.theme.backgroundDim = try number(v, 0...1) }, show: { "\($0.theme.backgroundDim)" }),
        Key(section: "theme", name: "digit_font_weight", flatName: "digit_font_weight",
            set: { c, v throws(BadValue) in
                switch v { case "normal": c.theme.digitBold = false; case "bold": c.theme.digitBold = true
                default: throw BadValue(message: "expected normal or bold, found '\(v)'") }
            }, show: { $0.theme.digitBold ? "bold" : "normal" }),
        Key(section: "theme", name: "dot_size", flatName: "dot_size",
            set: { c, v throws(BadValue) in c.theme.dotSize = try number(v, 2...64) }, show: { "\($0.theme.dotSize)" }),
        Key(section: "theme", name: "code_font_size", flatName: "code_font_size",
            set: { c, v throws(BadValue) in c.theme.codeFontSize = try number(v, 4...200) }, show: { "\($0.theme.codeFontSize)" }),
        Key(section: "theme", name: "key_font_size", flatName: "key_font_size",
            set: { c, v throws(BadValue) in c.theme.keyFontSize = try number(v, 4...200) }, show: { "\($0.theme.keyFontSize)" }),
        Key(section: "theme", name: "background_image", flatName: "background_image",
            set: { c, v throws(BadValue) in guard v.hasPrefix("/"), v.hasSuffix(".png") else { throw BadValue(message: "expected the absolute path of a PNG file, found '\(v)'") }; c.theme.backgroundImage = v }, show: { $0.theme.backgroundImage ?? "" }),
        Key(section: "messages", name: "pattern_prompt", flatName: "message_pattern_prompt",
            set: { c, v throws(BadValue) in c.screens.messages.patternPrompt = try text(v) }, show: { $0.screens.messages.patternPrompt }),
        Key(section: "messages", name: "code_prompt", flatName: "message_code_prompt",
            set: { c, v throws(BadValue) in c.screens.messages.codePrompt = try text(v) }, show: { $0.screens.messages.codePrompt }),
        Key(section: "messages", name: "wrong_pattern", flatName: "message_wrong_pattern",
            set: { c, v throws(BadValue) in c.screens.messages.wrongPattern = try text(v) }, show: { $0.screens.messages.wrongPattern }),
        Key(section: "messages", name: "wrong_code", flatName: "message_wrong_code",
            set: { c, v throws(BadValue) in c.screens.messages.wrongCode = try text(v) }, show: { $0.screens.messages.wrongCode }),
        Key(section: "messages", name: "too_short", flatName: "message_too_short",
            set: { c, v throws(BadValue) in c.screens.messages.tooShort = try text(v) }, show: { $0.screens.messages.tooShort }),
        Key(section: "messages", name: "code_incomplete", flatName: "message_code_incomplete",
            set: { c, v throws(BadValue) in c.screens.messages.codeIncomplete = try text(v) }, show: { $0.screens.messages.codeIncomplete }),
        Key(section: "messages", name: "lockout", flatName: "message_lockout",
            set: { c, v throws(BadValue) in c.screens.messages.lockout = try text(v) }, show: { $0.screens.messages.lockout }),
        Key(section: "messages", name: "record_damaged", flatName: nil,
            set: { c, v throws(BadValue) in c.screens.messages.recordDamaged = try text(v) }, show: { $0.screens.messages.recordDamaged }),
        Key(section: "messages", name: "record_untrusted", flatName: nil,
            set: { c, v throws(BadValue) in c.screens.messages.recordUntrusted = try text(v) }, show: { $0.screens.messages.recordUntrusted }),
        Key(section: "messages", name: "unlocked", flatName: "message_unlocked",
            set: { c, v throws(BadValue) in c.screens.messages.unlocked = try text(v) }, show: { $0.screens.messages.unlocked }),
        Key(section: "messages", name: "use_code", flatName: "label_use_code",
            set: { c, v throws(BadValue) in c.screens.messages.useCode = try text(v) }, show: { $0.screens.messages.useCode }),
        Key(section: "messages", name: "use_pattern", flatName: "label_use_pattern",
            set: { c, v throws(BadValue) in c.screens.messages.usePattern = try text(v) }, show: { $0.screens.messages.usePattern }),
        Key(section: "messages", name: "enroll_pattern", flatName: "message_enroll_pattern",
            set: { c, v throws(BadValue) in c.screens.messages.enrollPattern = try text(v) }, show: { $0.screens.messages.enrollPattern }),
        Key(section: "messages", name: "enroll_pattern_again", flatName: "message_enroll_pattern_again",
            set: { c, v throws(BadValue) in c.screens.messages.enrollPatternAgain = try text(v) }, show: { $0.screens.messages.enrollPatternAgain }),
        Key(section: "messages", name: "enroll_code", flatName: "message_enroll_code",
            set: { c, v throws(BadValue) in c.screens.messages.enrollCode = try text(v) }, show: { $0.screens.messages.enrollCode }),
        Key(section: "messages", name: "enroll_code_again", flatName: "message_enroll_code_again",
            set: { c, v throws(BadValue) in c.screens.messages.enrollCodeAgain = try text(v) }, show: { $0.screens.messages.enrollCodeAgain }),
        Key(section: "messages", name: "enroll_mismatch", flatName: "message_enroll_mismatch",
            set: { c, v throws(BadValue) in c.screens.messages.enrollMismatch = try text(v) }, show: { $0.screens.messages.enrollMismatch }),
        Key(section: "messages", name: "service_prompt", flatName: nil,
            set: { c, v throws(BadValue) in c.screens.messages.servicePrompt = try text(v) }, show: { $0.screens.messages.servicePrompt }),
        Key(section: "messages", name: "cancel", flatName: nil,
            set: { c, v throws(BadValue) in c.screens.messages.cancel = try text(v) }, show: { $0.screens.messages.cancel }),
    ]

    static func bool(_ v: String) throws(BadValue) -> Bool {
        switch v.lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw BadValue(message: "expected true or false, found '\(v)'")
        }
    }

    static func text(_ v: String) throws(BadValue) -> String {
        guard !v.isEmpty else { throw BadValue(message: "expected some text") }
        return v
    }
}

extension LockScreen {
    /// The lock screen the settings describe, laid out on a screen of `size` pixels.
    /// `shuffleSeed` (from the kernel's randomness) is used when the keypad is shuffled.
    /// `session` is a session restored from storage; by default a new one.
    /// `message`: whether a message is shown (by default, whether the config has one).
    /// `serviceDigits`: the device has service codes of that many digits, and the screen
    /// offers their hidden entry (nil: it has none).
    public static func make(config: Config, size: Size, density: Density, shuffleSeed: UInt64,
                            at now: Instant = Instant(microseconds: 0), session: Session? = nil,
                            message: Bool? = nil, measure: any TextMeasure = EstimatedTextMeasure(),
                            serviceDigits: Int? = nil) -> LockScreen {
        let st = config.screens
        let layout = ScreenLayout(size: size, density: density, methods: st.methods, rows: config.rows,
                                  columns: config.columns, hitFactor: config.hitFactor, codeLength: st.codeLength,
                                  theme: config.theme, toggleLabels: [st.messages.useCode, st.messages.usePattern],
                                  info: st.infoParts(message: message ?? (st.message != nil)),
                                  direction: TextDirection(of: st.methods == .code ? st.messages.codePrompt : st.messages.patternPrompt),
                                  measure: measure, prompts: st.messages.prompts(minimumLength: config.minimumLength,
                                                                                  codeLength: st.codeLength))
        func patternLock() -> PatternLock {
            PatternLock(grid: layout.grid, minimumLength: config.minimumLength, repeats: config.patternRepeat)
        }
        func codePad() -> CodePad {
            CodePad(length: st.codeLength, layout: layout.pad!, secure: st.codeSecure, reveal: st.codeReveal,
                    shuffleSeed: st.keypadShuffle ? shuffleSeed : nil, submitOnOK: st.codeSubmitOnOK, at: now)
        }
        let pads: LockScreen.Pads
        switch st.methods {
        case .pattern: pads = .pattern(patternLock())
        case .code: pads = .code(codePad())
        case .both: pads = .both(patternLock(), codePad(), showing: .pattern)
        }
        var builder = SceneBuilder(theme: layout.pixels(config.theme), size: size, stealth: st.stealth, messages: st.messages)
        builder.layout = layout
        builder.logo = st.logo
        builder.measure = measure
        var lock = LockScreen(pads: pads,
                              session: session ?? Session(errorHold: config.errorHold, schedule: config.lockoutSchedule),
                              builder: builder, toggle: layout.toggle)
        lock.stillContacts.jitter = StillContacts.jitterDp * density.px
        lock.idleLock = config.idleLock
        lock.blankAfter = config.blankAfter
        if let digits = serviceDigits {
            // The service pad's screen: its boxes, the keypad and Cancel where the switch
            // between methods goes, the information area as on the owner's.
            let m = st.messages
            let service = ScreenLayout(size: size, density: density, methods: .both, rows: config.rows,
                                       columns: config.columns, hitFactor: config.hitFactor, codeLength: digits,
                                       theme: config.theme, toggleLabels: [m.cancel],
                                       info: st.infoParts(message: message ?? (st.message != nil)),
                                       direction: TextDirection(of: m.servicePrompt), measure: measure,
                                       prompts: [m.servicePrompt, m.wrongCode, Messages.fill(m.codeIncomplete, ["n": digits]),
                                                 m.lockout(left: .milliseconds(35_999_000)), m.unlocked])
            lock.offerServiceEntry(ServiceEntry(digits: digits, layout: service, jitter: StillContacts.jitterDp * density.px,
                                                secure: st.codeSecure, shuffleSeed: st.keypadShuffle ? shuffleSeed : nil))
        }
        return lock
    }
}
