/// What the session tells the world (socket subscribers).
public enum LockEvent: Hashable, Sendable {
    case unlocked(UnlockMethod, at: Instant)
    /// The secret given was the duress code; sent just before `unlocked`.
    case duress(UnlockMethod, at: Instant)
    case failed(UnlockMethod, failures: Int, retryAfter: Interval)
    /// No attempt is accepted before `until` (monotonic clock).
    case lockout(until: Instant)
    case locked(at: Instant)
    /// Digits entered on the code pad, of how many: never the digits (seed 003's
    /// uncompleted callback).
    case progress(entered: Int, of: Int)
    /// A secret enrolled on the screen is stored (told by the daemon once it is on disk).
    case enrolled(UnlockMethod)
    /// An enrollment on the screen ended without a new secret.
    case enrollFailed(UnlockMethod, reason: String)
}

/// Why an enrollment on the screen cannot begin.
public enum EnrollRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The device is locked and a secret exists for the method: unlock first.
    case locked
    /// An attempt is being checked, shown as wrong, or waited out.
    case busy(String)
    /// Another enrollment is under way.
    case enrolling
    /// The screen has no code pad.
    case noCodePad

    public var description: String {
        switch self {
        case .locked: "the device is locked and a secret exists: unlock it first"
        case .busy(let state): "the lock screen is busy (\(state))"
        case .enrolling: "an enrollment is already under way"
        case .noCodePad: "the screen has no code pad"
        }
    }
}

/// The lock screen as one value: the pattern gesture and the code pad feeding the
/// session, and the scene that shows them. The daemon carries out the actions (verifying
/// a secret, arming the timer, telling subscribers, redrawing); this type never touches
/// the outside world. Time comes in with every event; the scene is drawn as of the last.
public struct LockScreen: Sendable {
    public enum Action: Hashable, Sendable {
        /// Check an attempt against the stored secret and call `verified`.
        case verify(Pattern)
        /// Check a code against the stored secret and call `verified`.
        case verifyCode(Code)
        /// Store the record durably, then call `stored`; nothing of the result is shown
        /// or told before.
        case store(LockoutRecord)
        /// A secret enrolled on the screen, drawn twice alike: hash and store it, wipe
        /// the bytes, then tell subscribers `enrolled` (or `enrollFailed`).
        case enroll(UnlockMethod, [UInt8])
        case emit(LockEvent)
        case armTimer(Instant)
        case redraw
    }

    public private(set) var pattern: PatternLock
    public private(set) var code: CodePad?
    public private(set) var session: Session
    public var builder: SceneBuilder
    /// Which methods the screen offers, and the one shown.
    public let methods: ScreenSettings.Methods
    public private(set) var active: UnlockMethod
    /// Where the control that switches methods is (with both methods).
    public let toggleRect: PixelRect?
    /// How long an accepted pattern stays on screen before the unlocked screen.
    public var acceptHold = Interval.milliseconds(500)
    /// Fingers that landed while input was blocked, or on the switch: ignored until they lift.
    private var ignored: Set<Int> = []
    private var notice: String?
    /// The time of the last event: what the scene is drawn as of.
    public private(set) var now = Instant(microseconds: 0)
    /// An enrollment of a new secret under way: attempts are kept and compared, never
    /// verified, and never count as failures.
    public private(set) var enrollment: Enrollment?

    public init(pattern: PatternLock, session: Session, builder: SceneBuilder, code: CodePad? = nil,
                methods: ScreenSettings.Methods = .pattern, toggle: PixelRect? = nil) {
        self.pattern = pattern
        self.session = session
        self.builder = builder
        self.code = code
        precondition(methods == .pattern || code != nil, "a code screen needs a code pad")
        self.methods = methods
        self.active = methods == .code ? .code : .pattern
        self.toggleRect = methods == .both ? toggle : nil
    }

    public var scene: Scene {
        var s: Scene
        // While enrolling, the screen takes input whatever the session's state.
        let shown = enrollment == nil ? session : Session()
        switch active {
        case .pattern:
            s = builder.pattern(pattern, session: shown)
        case .code:
            let pad = code!
            if case .unlocked = shown.state, pad.state == .entering {
                s = Scene(size: builder.size, theme: builder.theme, prompt: "",
                          promptBox: PixelRect(x: 0, y: 0, width: builder.size.width, height: builder.size.height),
                          nodes: [], path: [], pathColor: builder.theme.path, tail: nil)
            } else {
                s = builder.code(pad, session: shown, prompt: "", at: now)
            }
        }
        s.prompt = prompt
        if let r = toggleRect, enrollment == nil, s.boxes.count + s.nodes.count > 0 {
            let label = active == .pattern ? builder.messages.useCode : builder.messages.usePattern
            s.toggle = Scene.KeyCap(rect: r, label: .text(label), pressed: false, round: false,
                                    fontSize: min(builder.theme.fontSize * 0.8, Double(r.height) * 0.5))
        }
        return s
    }

    /// What the prompt says now.
    public var prompt: String {
        let m = builder.messages
        if let e = enrollment {
            if let notice { return notice }
            switch (e.method, e.stage) {
            case (.pattern, .first): return m.enrollPattern
            case (.pattern, .confirm): return m.enrollPatternAgain
            case (.code, .first): return m.enrollCode
            case (.code, .confirm): return m.enrollCodeAgain
            }
        }
        switch session.state {
        case .locked, .verifying, .storing:
            if let notice, machineIdle { return notice }
            return active == .pattern ? m.patternPrompt : m.codePrompt
        case .wrong(let method, _):
            return method == .pattern ? m.wrongPattern : m.wrongCode
        case .lockout(let until):
            let left = max(0, (until - now).microseconds)
            return m.lockout(left: Interval(microseconds: left))
        case .storeFailed(let reason, _):
            return "Locked: cannot record the attempt (\(reason)). Touch to retry"
        case .unlocked:
            return m.unlocked
        }
    }

    /// Whether touches and keys reach the gesture machines.
    private var takesInput: Bool { enrollment != nil || session.acceptsInput }

    private var machineIdle: Bool {
        switch active {
        case .pattern: return pattern.state == .idle
        case .code: return code?.state == .entering
        }
    }

    /// Resumes a session restored from storage: arms the lockout deadline and countdown.
    public mutating func resume(at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        guard let until = session.lockedOutUntil else { return [] }
        return [.emit(.lockout(until: until)), .armTimer(until), .redraw] + countdownTick()
    }

    public mutating func touches(_ touches: [ScreenTouch], at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        var passed: [ScreenTouch] = []
        var out: [Action] = []
        // A touch retries a record that could not be stored.
        if enrollment == nil, case .storeFailed = session.state, touches.contains(where: { $0.phase == .began }) {
            out += sessionActions(session.retryStore(), at: now)
        }
        for t in touches {
            if ignored.contains(t.id) {
                if t.phase == .ended { ignored.remove(t.id) }
                continue
            }
            if t.phase == .began && !takesInput {
                ignored.insert(t.id)
                continue
            }
            if t.phase == .began, enrollment == nil, let r = toggleRect, r.contains(t.point), machineIdle, passed.isEmpty {
                ignored.insert(t.id)
                out += switchMethod(at: now)
                continue
            }
            passed.append(t)
        }
        if passed.isEmpty { return out }
        if notice != nil, passed.contains(where: { $0.phase == .began }) {
            notice = nil
            out.append(.redraw)
        }
        switch active {
        case .pattern: return out + apply(pattern.handle(passed, at: now), at: now)
        case .code: return out + apply(code!.handle(passed, at: now), at: now)
        }
    }

    /// A key of a hardware keypad: digits, delete, enter. It shows the code pad when both
    /// methods are offered.
    public mutating func key(_ k: CodePad.Key, at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        guard code != nil, takesInput else { return [] }
        var out: [Action] = []
        if active == .pattern {
            guard enrollment == nil, methods == .both, pattern.state == .idle else { return [] }
            out += switchMethod(at: now)
        }
        notice = nil
        return out + apply(code!.key(k, at: now), at: now)
    }

    private mutating func switchMethod(at now: Instant) -> [Action] {
        notice = nil
        var out = apply(pattern.reset(), at: now)
        if code != nil { out += apply(code!.reset(at: now), at: now) }
        active = active == .pattern ? .code : .pattern
        Log.debug("lock screen: switched to \(active.rawValue)")
        if active == .pattern { out = out.filter { if case .armTimer = $0 { false } else { true } } }
        return out + [.redraw]
    }

    /// A key from a hardware keypad or keyboard: digits, backspace and enter work the
    /// code pad as its own keys do; escape clears what was typed.
    public mutating func hardwareKey(_ key: KeyInput, at now: Instant) -> [Action] {
        switch key {
        case .digit(let d): return self.key(CodePad.Key.digit(d), at: now)
        case .backspace: return self.key(CodePad.Key.delete, at: now)
        case .enter: return self.key(CodePad.Key.ok, at: now)
        case .escape:
            self.now = max(self.now, now)
            guard code != nil, active == .code, takesInput else { return [] }
            return apply(code!.reset(at: now), at: now) + [.redraw]
        }
    }

    public mutating func verified(_ match: Bool, at now: Instant) -> [Action] {
        verified(match ? .match(duress: false) : .wrong(digest: nil), at: now)
    }

    public mutating func verified(_ verdict: Session.Verdict, at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        return sessionActions(session.verified(verdict, at: now), at: now)
    }

    /// The record asked for by `store` is on disk (`error` nil), or could not be stored.
    public mutating func stored(error: String?, at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        return sessionActions(session.stored(error: error, at: now), at: now)
    }

    private mutating func sessionActions(_ actions: [Session.Action], at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in actions {
            switch a {
            case .store(let r): out.append(.store(r))
            case .unlocked(let m, let t, let duress):
                out += verdict(m, accepted: true, at: now)
                if duress { out.append(.emit(.duress(m, at: t))) }
                out.append(.emit(.unlocked(m, at: t)))
                out.append(.armTimer(now + acceptHold))
            case .failed(let m, let failures, let retry):
                out += verdict(m, accepted: false, at: now)
                out.append(.emit(.failed(m, failures: failures, retryAfter: retry)))
            case .lockout(let until):
                out.append(.emit(.lockout(until: until)))
            case .armTimer(let t): out.append(.armTimer(t))
            case .stateChanged: out.append(.redraw)
            case .verify(let m): Log.bug("lock screen: session asked to verify \(m) after a verdict")
            }
        }
        out += countdownTick()
        return out
    }

    /// Tells the machine of `m` the verdict on its submitted attempt. A verdict for an
    /// attempt no longer on screen (a failure stored after a retry) changes nothing.
    private mutating func verdict(_ m: UnlockMethod, accepted: Bool, at now: Instant) -> [Action] {
        switch m {
        case .pattern:
            guard case .submitted = pattern.state else { return [] }
            return apply(pattern.verdict(accepted: accepted, at: now, errorHold: session.errorHold), at: now)
        case .code:
            guard code != nil else {
                Log.bug("lock screen: a code verdict without a code pad")
                return []
            }
            guard code!.state == .submitted else { return [] }
            return apply(code!.verdict(accepted: accepted, at: now, errorHold: session.errorHold), at: now)
        }
    }

    /// During a lockout the countdown changes every second: wake at the next whole second.
    private func countdownTick() -> [Action] {
        guard case .lockout(let until) = session.state, now < until else { return [] }
        let left = (until - now).microseconds
        let step = left % 1_000_000 == 0 ? 1_000_000 : left % 1_000_000
        return [.armTimer(now + Interval(microseconds: step))]
    }

    /// The screen is first shown at `now`: the prompt starts (the code pad's cursor starts
    /// blinking from here).
    public mutating func begin(at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        guard code != nil, active == .code else { return [.redraw] }
        return apply(code!.reset(at: now), at: now)
    }

    public mutating func timer(at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        var out: [Action] = []
        let wasLockout: Bool
        if case .lockout = session.state { wasLockout = true } else { wasLockout = false }
        for a in session.timerFired(at: now) {
            switch a {
            case .armTimer(let t): out.append(.armTimer(t))
            case .stateChanged: out.append(.redraw)
            case .verify, .store, .unlocked, .failed, .lockout: Log.bug("lock screen: session action \(a) on a timer")
            }
        }
        if wasLockout {
            out.append(.redraw)
            out += countdownTick()
        }
        if case .unlocked(_, let at) = session.state, now >= at + acceptHold {
            if case .accepted = pattern.state { out += apply(pattern.reset(), at: now) }
            if code?.state == .accepted {
                // Nothing of the code stays on screen; nothing blinks, nothing is announced.
                let quiet = code!.reset(at: now).filter {
                    switch $0 {
                    case .armTimer, .progress: false
                    case .redraw, .submit, .incomplete: true
                    }
                }
                out += apply(quiet, at: now)
            }
        }
        out += apply(pattern.timerFired(at: now), at: now)
        if code != nil {
            let acts = code!.timerFired(at: now)
            // Only the pad on screen animates, and only while it takes input: a hidden pad,
            // or one waiting out a lockout, has no cursor and needs no wake-ups.
            let animate = active == .code && takesInput
            out += apply(animate ? acts : acts.filter { if case .armTimer = $0 { false } else { true } }, at: now)
            if wasLockout, enrollment == nil, active == .code, session.acceptsInput {
                // The lockout is over: the cursor blinks again from now.
                out += apply(code!.reset(at: now), at: now)
            }
        }
        return out
    }

    /// A client asked to lock the device again.
    public mutating func lock(at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        var out = cancelEnrollment(reason: "cancelled by a lock request", at: now)
        let changed = session.lock()
        if !changed.isEmpty {
            out += apply(pattern.reset(), at: now)
            if code != nil { out += apply(code!.reset(at: now), at: now) }
            out.append(.redraw)
            out.append(.emit(.locked(at: now)))
        }
        return out
    }

    private mutating func apply(_ actions: [PatternLock.Action], at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in actions {
            switch a {
            case .redraw: out.append(.redraw)
            case .armTimer(let t): out.append(.armTimer(t))
            case .tooShort(let n, let minimum):
                notice = Messages.fill(builder.messages.tooShort, ["min": minimum, "n": n])
                out.append(.redraw)
            case .submit(let p):
                if enrollment != nil {
                    var bytes = p.secretBytes
                    out += enrollAttempt(.pattern, &bytes, at: now)
                } else {
                    out += submit(.pattern, .verify(p), at: now)
                }
            }
        }
        return out
    }

    private mutating func apply(_ actions: [CodePad.Action], at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in actions {
            switch a {
            case .redraw: out.append(.redraw)
            case .armTimer(let t): out.append(.armTimer(t))
            case .progress(let e, let n):
                // Subscribers follow unlock attempts, not a new secret being typed.
                if enrollment == nil { out.append(.emit(.progress(entered: e, of: n))) }
            case .incomplete(_, let n):
                notice = Messages.fill(builder.messages.codeIncomplete, ["n": n])
                out.append(.redraw)
            case .submit(let c):
                if enrollment != nil {
                    var bytes = c.secretBytes
                    out += enrollAttempt(.code, &bytes, at: now)
                } else {
                    out += submit(.code, .verifyCode(c), at: now)
                }
            }
        }
        return out
    }

    private mutating func submit(_ method: UnlockMethod, _ verify: Action, at now: Instant) -> [Action] {
        var out: [Action] = []
        for s in session.submit(method, at: now) {
            switch s {
            case .verify: out.append(verify)
            case .stateChanged: out.append(.redraw)
            case .armTimer(let t): out.append(.armTimer(t))
            case .store, .unlocked, .failed, .lockout: Log.bug("lock screen: session decided before verifying")
            }
        }
        return out
    }

    // MARK: enrollment

    /// Shows the enrollment screen of `method`: the new secret is drawn (or typed) twice.
    /// Allowed while unlocked, or while locked when no secret exists for `method`
    /// (`hasSecret`, which the owner knows).
    public mutating func beginEnrollment(_ method: UnlockMethod, hasSecret: Bool,
                                         at now: Instant) throws(EnrollRefusal) -> [Action] {
        self.now = max(self.now, now)
        if enrollment != nil { throw .enrolling }
        if method == .code && code == nil { throw .noCodePad }
        switch session.state {
        case .unlocked: break
        case .locked: if hasSecret { throw .locked }
        case .verifying, .storing, .wrong, .lockout, .storeFailed: throw .busy(session.state.name)
        }
        enrollment = Enrollment(method: method, returnTo: active)
        notice = nil
        Log.info("lock screen: enrolling a \(method.rawValue)")
        var out = apply(pattern.reset(), at: now)
        active = method
        if code != nil { out += apply(code!.reset(at: now), at: now) }
        if method == .pattern { out = out.filter { if case .armTimer = $0 { false } else { true } } }
        return out + [.redraw]
    }

    /// Ends an enrollment under way without a new secret (nothing when none is).
    public mutating func cancelEnrollment(reason: String, at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        guard let method = enrollment?.method else { return [] }
        Log.info("lock screen: enrollment of a \(method.rawValue) cancelled: \(reason)")
        return endEnrollment(at: now) + [.emit(.enrollFailed(method, reason: reason))]
    }

    /// Back to the screen shown before; the kept attempt is wiped.
    private mutating func endEnrollment(at now: Instant) -> [Action] {
        guard enrollment != nil else { return [] }
        enrollment!.restart()
        let back = enrollment!.returnTo
        enrollment = nil
        notice = nil
        active = back
        var out = apply(pattern.reset(), at: now)
        if code != nil {
            // The pad starts a new prompt; it blinks only if it is shown and takes input.
            let acts = code!.reset(at: now)
            out += apply(active == .code && session.acceptsInput
                         ? acts : acts.filter { if case .armTimer = $0 { false } else { true } }, at: now)
        }
        return out + [.redraw]
    }

    /// An attempt made while enrolling (`secret` is wiped or handed over): the first is
    /// kept, the second compared with it.
    private mutating func enrollAttempt(_ method: UnlockMethod, _ secret: inout [UInt8], at now: Instant) -> [Action] {
        // Only the stage is read: a copy of the enrollment would keep the first attempt
        // from being wiped in place.
        guard let stage = enrollment?.stage, enrollment?.method == method else {
            Log.bug("lock screen: a \(method.rawValue) attempt while enrolling \(enrollment?.method.rawValue ?? "nothing")")
            Enrollment.wipe(&secret)
            return []
        }
        switch stage {
        case .first:
            enrollment!.keep(&secret)
            notice = nil
            Log.debug("enrollment: first \(method.rawValue) kept; asking again")
            return resetMachine(method, at: now) + [.redraw]
        case .confirm:
            if enrollment!.matches(secret) {
                Log.info("enrollment: the \(method.rawValue) was given twice alike")
                let bytes = secret
                secret = []
                return endEnrollment(at: now) + [.enroll(method, bytes)]
            }
            Enrollment.wipe(&secret)
            enrollment!.restart()
            notice = builder.messages.enrollMismatch
            Log.info("enrollment: the two \(method.rawValue)s differ; starting again")
            switch method {
            case .pattern:
                return apply(pattern.verdict(accepted: false, at: now, errorHold: session.errorHold), at: now)
            case .code:
                return apply(code!.verdict(accepted: false, at: now, errorHold: session.errorHold), at: now)
            }
        }
    }

    private mutating func resetMachine(_ method: UnlockMethod, at now: Instant) -> [Action] {
        switch method {
        case .pattern: return apply(pattern.reset(), at: now)
        case .code: return apply(code!.reset(at: now), at: now)
        }
    }
}
