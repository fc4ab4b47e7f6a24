/// What the session tells the world (socket subscribers).
public enum LockEvent: Hashable, Sendable {
    case unlocked(UnlockMethod, at: Instant)
    /// The secret given was the duress code; sent just before `unlocked`.
    case duress(UnlockMethod, at: Instant)
    case failed(UnlockMethod, failures: Int, retryAfter: Interval)
    /// No attempt is accepted before `until` (monotonic clock).
    case lockout(until: Instant)
    case locked(at: Instant)
}

/// The lock screen as one value: the pattern gesture feeding the session, and the scene
/// that shows both. The daemon carries out the actions (verifying a secret, arming the
/// timer, telling subscribers, redrawing); this type never touches the outside world.
public struct LockScreen: Sendable {
    public enum Action: Hashable, Sendable {
        /// Check an attempt against the stored secret and call `verified`.
        case verify(Pattern)
        /// Store the record durably, then call `stored`; nothing of the result is shown
        /// or told before.
        case store(LockoutRecord)
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
    /// The time of the latest event handled, for the countdown.
    private var clock = Instant(microseconds: 0)

    public init(pattern: PatternLock, session: Session, builder: SceneBuilder) {
        self.pattern = pattern
        self.session = session
        self.builder = builder
    }

    public var scene: Scene {
        var s = builder.pattern(pattern, session: session)
        if let notice, case .locked = session.state, case .idle = pattern.state { s.prompt = notice }
        switch session.state {
        case .lockout(let until):
            s.prompt = "Too many attempts. Try again in \((until - clock).countdown)"
        case .storeFailed(let reason, _):
            s.prompt = "Locked: cannot record the attempt (\(reason)). Touch to retry"
        case .locked, .verifying, .storing, .wrong, .unlocked:
            break
        }
        return s
    }

    /// Resumes a session restored from storage: arms the lockout deadline and countdown.
    public mutating func resume(at now: Instant) -> [Action] {
        clock = now
        guard let until = session.lockedOutUntil else { return [] }
        return [.emit(.lockout(until: until)), .armTimer(until)] + countdownTick(until: until, at: now)
    }

    /// The next moment the countdown on screen changes (whole seconds before `until`).
    private func countdownTick(until: Instant, at now: Instant) -> [Action] {
        let left = (until - now).microseconds
        if left <= 1_000_000 { return [] }
        let next = until + Interval(microseconds: -((left - 1) / 1_000_000) * 1_000_000)
        return next > now ? [.armTimer(next)] : []
    }

    public mutating func touches(_ touches: [ScreenTouch], at now: Instant) -> [Action] {
        clock = now
        var retry: [Action] = []
        if case .storeFailed = session.state, touches.contains(where: { $0.phase == .began }) {
            retry = sessionActions(session.retryStore(), at: now)
        }
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
        if passed.isEmpty { return retry }
        if notice != nil, passed.contains(where: { $0.phase == .began }) { notice = nil }
        return retry + apply(pattern.handle(passed, at: now), at: now)
    }

    public mutating func verified(_ match: Bool, at now: Instant) -> [Action] {
        verified(match ? .match(duress: false) : .wrong(digest: nil), at: now)
    }

    public mutating func verified(_ verdict: Session.Verdict, at now: Instant) -> [Action] {
        clock = now
        return sessionActions(session.verified(verdict, at: now), at: now)
    }

    /// The record asked for by `store` is on disk (`error` nil), or could not be stored.
    public mutating func stored(error: String?, at now: Instant) -> [Action] {
        clock = now
        return sessionActions(session.stored(error: error, at: now), at: now)
    }

    private mutating func sessionActions(_ actions: [Session.Action], at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in actions {
            switch a {
            case .store(let r): out.append(.store(r))
            case .unlocked(let m, let t, let duress):
                out += apply(pattern.verdict(accepted: true, at: now, errorHold: session.errorHold), at: now)
                if duress { out.append(.emit(.duress(m, at: t))) }
                out.append(.emit(.unlocked(m, at: t)))
                out.append(.armTimer(now + acceptHold))
            case .failed(let m, let failures, let retry):
                if case .submitted = pattern.state {
                    out += apply(pattern.verdict(accepted: false, at: now, errorHold: session.errorHold), at: now)
                }
                out.append(.emit(.failed(m, failures: failures, retryAfter: retry)))
            case .lockout(let until):
                out.append(.emit(.lockout(until: until)))
                out += countdownTick(until: until, at: now)
            case .armTimer(let t): out.append(.armTimer(t))
            case .stateChanged: out.append(.redraw)
            case .verify(let m): Log.bug("lock screen: session asked to verify \(m) after a verdict")
            }
        }
        return out
    }

    public mutating func timer(at now: Instant) -> [Action] {
        clock = now
        var out: [Action] = []
        for a in session.timerFired(at: now) {
            switch a {
            case .armTimer(let t): out.append(.armTimer(t))
            case .stateChanged: out.append(.redraw)
            case .verify, .store, .unlocked, .failed, .lockout: Log.bug("lock screen: session action \(a) on a timer")
            }
        }
        if let until = session.lockedOutUntil {
            // The countdown on screen changes every second.
            out.append(.redraw)
            out += countdownTick(until: until, at: now)
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
        clock = now
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
                    case .store, .unlocked, .failed, .lockout: Log.bug("lock screen: session decided before verifying")
                    }
                }
            }
        }
        return out
    }
}
