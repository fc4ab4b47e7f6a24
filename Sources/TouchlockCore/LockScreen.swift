/// What the session tells the world (socket subscribers).
public enum LockEvent: Hashable, Sendable {
    case unlocked(UnlockMethod, at: Instant)
    case failed(UnlockMethod, failures: Int, retryAfter: Interval)
    case locked(at: Instant)
}

/// The lock screen as one value: the pattern gesture feeding the session, and the scene
/// that shows both. The daemon carries out the actions (verifying a secret, arming the
/// timer, telling subscribers, redrawing); this type never touches the outside world.
public struct LockScreen: Sendable {
    public enum Action: Hashable, Sendable {
        /// Check an attempt against the stored secret and call `verified`.
        case verify(Pattern)
        case emit(LockEvent)
        case armTimer(Instant)
        case redraw
    }

    public private(set) var pattern: PatternLock
    public private(set) var session: Session
    public var builder: SceneBuilder
    /// How long an accepted pattern stays on screen before the unlocked screen.
    public var acceptHold = Interval.milliseconds(500)
    /// Fingers that landed while input was blocked: ignored until they lift.
    private var ignored: Set<Int> = []
    private var notice: String?

    public init(pattern: PatternLock, session: Session, builder: SceneBuilder) {
        self.pattern = pattern
        self.session = session
        self.builder = builder
    }

    public var scene: Scene {
        var s = builder.pattern(pattern, session: session)
        if let notice, case .locked = session.state, case .idle = pattern.state { s.prompt = notice }
        return s
    }

    public mutating func touches(_ touches: [ScreenTouch], at now: Instant) -> [Action] {
        var passed: [ScreenTouch] = []
        for t in touches {
            if ignored.contains(t.id) {
                if t.phase == .ended { ignored.remove(t.id) }
                continue
            }
            if t.phase == .began && !session.acceptsInput {
                ignored.insert(t.id)
                continue
            }
            passed.append(t)
        }
        if passed.isEmpty { return [] }
        if notice != nil, passed.contains(where: { $0.phase == .began }) { notice = nil }
        return apply(pattern.handle(passed, at: now), at: now)
    }

    /// A key from a hardware keypad. The lock screen has no code pad yet, so a key changes
    /// nothing; it is logged (never its digit) so that a keypad can be checked.
    public mutating func key(_ key: KeyInput, at now: Instant) -> [Action] {
        switch key {
        case .digit: Log.debug("keypad: a digit at \(now)")
        case .backspace: Log.debug("keypad: backspace at \(now)")
        case .enter: Log.debug("keypad: enter at \(now)")
        case .escape: Log.debug("keypad: escape at \(now)")
        }
        return []
    }

    public mutating func verified(_ match: Bool, at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in session.verified(match, at: now) {
            switch a {
            case .unlocked(let m, let t):
                out += apply(pattern.verdict(accepted: true, at: now, errorHold: session.errorHold), at: now)
                out.append(.emit(.unlocked(m, at: t)))
                out.append(.armTimer(now + acceptHold))
            case .failed(let m, let failures, let retry):
                out += apply(pattern.verdict(accepted: false, at: now, errorHold: session.errorHold), at: now)
                out.append(.emit(.failed(m, failures: failures, retryAfter: retry)))
            case .armTimer(let t): out.append(.armTimer(t))
            case .stateChanged: out.append(.redraw)
            case .verify(let m): Log.bug("lock screen: session asked to verify \(m) after a verdict")
            }
        }
        return out
    }

    public mutating func timer(at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in session.timerFired(at: now) {
            switch a {
            case .armTimer(let t): out.append(.armTimer(t))
            case .stateChanged: out.append(.redraw)
            case .verify, .unlocked, .failed: Log.bug("lock screen: session action \(a) on a timer")
            }
        }
        if case .accepted = pattern.state, now >= lastAcceptDeadline(now) {
            out += apply(pattern.reset(), at: now)
        }
        out += apply(pattern.timerFired(at: now), at: now)
        return out
    }

    private func lastAcceptDeadline(_ now: Instant) -> Instant {
        if case .unlocked(_, let at) = session.state { return at + acceptHold }
        return now
    }

    /// A client asked to lock the device again.
    public mutating func lock(at now: Instant) -> [Action] {
        var out: [Action] = []
        let changed = session.lock()
        if !changed.isEmpty {
            out += apply(pattern.reset(), at: now)
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
                notice = "Connect at least \(minimum) dots (\(n) drawn)"
                out.append(.redraw)
            case .submit(let p):
                for s in session.submit(.pattern, at: now) {
                    switch s {
                    case .verify: out.append(.verify(p))
                    case .stateChanged: out.append(.redraw)
                    case .armTimer(let t): out.append(.armTimer(t))
                    case .unlocked, .failed: Log.bug("lock screen: session decided before verifying")
                    }
                }
            }
        }
        return out
    }
}
