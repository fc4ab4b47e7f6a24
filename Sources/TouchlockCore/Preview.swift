/// Lock screens put into a named state without hardware, for `touchlockctl preview`,
/// the screenshots in docs/ and the golden-image tests. Every state is reached by
/// feeding the machines the touches, keys and verdicts a user would cause.
public enum Preview {
    public enum Screen: String, Sendable, CaseIterable { case pattern, code, service }

    /// The states a screen can be shown in.
    public static func states(of screen: Screen) -> [String] {
        switch screen {
        case .pattern: ["idle", "drawing", "error", "too-short", "lockout", "unlocked",
                        "enroll", "enroll-again", "enroll-mismatch"]
        case .code: ["idle", "digits:K", "secure:K", "reveal:K", "pressed", "full", "error", "incomplete", "lockout", "blurred",
                     "enroll", "enroll-again", "enroll-mismatch"]
        case .service: ["idle", "digits:K", "error"]
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The lock screen of `config` on `size`, in `state`.
    public static func lockScreen(config: Config, screen: Screen, state: String, size: Size,
                                  density: Density, info: InfoText? = nil,
                                  measure: any TextMeasure = EstimatedTextMeasure()) throws(Failure) -> LockScreen {
        var config = config
        let parts = state.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let name = parts.first ?? ""
        let k = parts.count > 1 ? Int(parts[1]).flatMap { $0 >= 0 ? $0 : nil } : nil
        if parts.count > 1 && k == nil { throw Failure(description: "state \(state): expected a whole number from 0 after ':'") }
        switch screen {
        case .pattern: if config.screens.methods == .code { config.screens.methods = .both }
        case .code: if config.screens.methods == .pattern { config.screens.methods = .both }
        case .service: break  // over the owner's screen as configured
        }
        if screen == .code && (name == "secure" || name == "reveal") {
            config.screens.codeSecure = true
            if name == "reveal" && config.screens.codeReveal.microseconds == 0 { config.screens.codeReveal = .milliseconds(1300) }
        }
        var s = LockScreen.make(config: config, size: size, density: density, shuffleSeed: 0x5eed, measure: measure,
                                serviceDigits: screen == .service ? config.service.digits : nil)
        if name == "lockout" {
            s = LockScreen(pads: s.pads, session: Session(errorHold: config.errorHold, schedule: LockoutSchedule(seconds: [30])),
                           builder: s.builder, toggle: s.toggleRect)
        }
        var t: Int64 = 1_000_000
        func next() -> Instant { t += 40_000; return Instant(microseconds: t) }
        if screen == .code && s.active == .pattern { _ = s.key(.delete, at: next()) }  // brings the pad up
        if screen == .pattern && s.active == .code, let r = s.toggleRect {
            _ = s.touches([ScreenTouch(id: 900, phase: .began, point: r.centre)], at: next())
            _ = s.touches([ScreenTouch(id: 900, phase: .ended, point: r.centre)], at: next())
        }
        if name.hasPrefix("enroll") {
            // Enrolling a new secret on a device with none yet.
            let method: UnlockMethod = screen == .pattern ? .pattern : .code
            do { _ = try s.beginEnrollment(method, hasSecret: false, at: next()) } catch {
                throw Failure(description: "state \(state): enrollment refused (\(error))")
            }
        }
        if screen == .service {
            // Opened as a technician does: a finger held on the prompt.
            guard let p = s.serviceBand.last?.centre else { throw Failure(description: "the screen has no prompt to press") }
            _ = s.touches([ScreenTouch(id: 800, phase: .began, point: p)], at: next())
            t += ServiceEntry.hold.microseconds
            _ = s.timer(at: next())
            _ = s.touches([ScreenTouch(id: 800, phase: .ended, point: p)], at: next())
            guard s.showing == .service else { throw Failure(description: "the service pad did not open") }
        }
        switch screen {
        case .service:
            let length = s.serviceEntry?.digits ?? 0
            if let k, !(0..<length).contains(k) {
                throw Failure(description: "'\(state)': K is 0 to \(length - 1) for a service code of \(length) digits")
            }
            func type(_ n: Int) { for i in 0..<n { _ = s.key(CodePad.Key.digit((i * 7 + 2) % 10), at: next()) } }
            switch name {
            case "idle": break
            case "digits": type(min(k ?? 2, length - 1))
            case "error":
                type(length)
                _ = s.verified(false, at: next())
            default:
                throw Failure(description: "unknown service state '\(state)'; one of \(states(of: .service).joined(separator: ", "))")
            }
        case .pattern:
            guard let g = s.pattern?.grid else { throw Failure(description: "the screen has no pattern grid") }
            // A Z: the top row, the diagonal, the bottom row (whatever the grid's size).
            let last = g.columns - 1, bottom = (g.rows - 1) * g.columns
            let z = [0, last, bottom, bottom + last]
            func draw(_ nodes: [Int], lift: Bool) -> [LockScreen.Action] {
                var out = s.touches([ScreenTouch(id: 1, phase: .began, point: g.center(of: nodes[0]))], at: next())
                for n in nodes.dropFirst() {
                    out += s.touches([ScreenTouch(id: 1, phase: .moved, point: g.center(of: n))], at: next())
                }
                if lift { out += s.touches([ScreenTouch(id: 1, phase: .ended, point: g.center(of: nodes.last!))], at: next()) }
                return out
            }
            switch name {
            case "idle": break
            case "drawing":
                _ = draw(z, lift: false)
                // The finger on its way to the next node, the tail half faded in.
                let a = g.center(of: z.last!)
                _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: Point(x: a.x - g.cell * 0.35, y: a.y - g.cell * 0.3))], at: next())
            case "error":
                _ = draw(z, lift: true)
                _ = s.verified(false, at: next())
            case "too-short":
                _ = draw([0, 1], lift: true)
            case "lockout":
                _ = draw(z, lift: true)
                _ = s.verified(false, at: next())
                _ = s.timer(at: Instant(microseconds: t + 2_500_000))
            case "unlocked":
                _ = draw(z, lift: true)
                _ = s.verified(true, at: next())
                _ = s.timer(at: Instant(microseconds: t + 600_000))
            case "enroll": break
            case "enroll-again": _ = draw(z, lift: true)
            case "enroll-mismatch":
                _ = draw(z, lift: true)
                _ = draw(Array(z.reversed()), lift: true)
            default:
                throw Failure(description: "unknown pattern state '\(state)'; one of \(states(of: .pattern).joined(separator: ", "))")
            }
        case .code:
            guard let pad = s.code else { throw Failure(description: "the screen has no code pad") }
            func type(_ n: Int) { for i in 0..<n { _ = s.key(CodePad.Key.digit((i * 7 + 2) % 10), at: next()) } }
            // K digits typed, the pad not full: 0 to the code's length less one; more is
            // refused, not clamped (a picture of another state than the one asked for).
            if let k, !(0..<pad.length).contains(k) {
                throw Failure(description: "'\(state)': K is 0 to \(pad.length - 1) for a code of \(pad.length) digits (the full pad is 'full')")
            }
            let n = min(k ?? 2, pad.length - 1)
            switch name {
            case "idle": break
            case "digits", "secure", "reveal": type(n)
            case "pressed":
                type(min(k ?? 1, pad.length - 1))
                let r = pad.layout.keys[4]
                _ = s.touches([ScreenTouch(id: 5, phase: .began, point: r.centre)], at: next())
            case "full":
                // The last digit typed, the check not over (or OK awaited with code_submit = ok).
                type(pad.length)
            case "error":
                type(pad.length)
                if pad.submitOnOK { _ = s.key(.ok, at: next()) }
                _ = s.verified(false, at: next())
            case "incomplete":
                type(n)
                _ = s.key(.ok, at: next())
            case "lockout":
                type(pad.length)
                if pad.submitOnOK { _ = s.key(.ok, at: next()) }
                _ = s.verified(false, at: next())
                _ = s.timer(at: Instant(microseconds: t + 2_500_000))
            case "blurred":
                type(n)
                _ = s.touches([ScreenTouch(id: 6, phase: .began, point: Point(x: 1, y: 1))], at: next())
            case "enroll": break
            case "enroll-again": type(pad.length)
            case "enroll-mismatch":
                type(pad.length)
                for i in 0..<pad.length { _ = s.key(CodePad.Key.digit((i * 3 + 1) % 10), at: next()) }
            default:
                throw Failure(description: "unknown code state '\(state)'; one of \(states(of: .code).joined(separator: ", "))")
            }
        }
        _ = s.setInfo(info ?? sampleInfo(config))
        return s
    }

    /// What a preview's information area says: ten past ten on Saturday 14 March (24
    /// hours unless `clock_hours = 12`), and the configured message.
    public static func sampleInfo(_ config: Config) -> InfoText {
        let st = config.screens
        var t = InfoText(message: st.message)
        if st.clock != .off { t.time = st.clockHours == .twelve ? "10:09 AM" : "10:09" }
        if st.clock == .dateTime { t.date = "Sat 14 Mar" }
        return t
    }
}

extension PixelRect {
    public var centre: Point { Point(x: Double(x) + Double(width) / 2, y: Double(y) + Double(height) / 2) }
}
