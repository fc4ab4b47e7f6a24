/// How the device was unlocked.
public enum UnlockMethod: String, Hashable, Sendable, Codable {
    case pattern, code
}

/// The lock session, apart from any one gesture (swaylock keeps auth state apart from
/// input state the same way):
///
///     locked --submit--> verifying --match--> unlocked --lock--> locked
///                            |
///                            +--no match--> wrong --hold over--> locked
///                                             (or lockout --deadline--> locked)
public struct Session: Sendable {
    public enum State: Hashable, Sendable, CustomStringConvertible {
        case locked
        case verifying(UnlockMethod)
        case wrong(UnlockMethod, until: Instant)
        case lockout(until: Instant)
        case unlocked(UnlockMethod, at: Instant)

        public var name: String {
            switch self {
            case .locked: "locked"
            case .verifying: "verifying"
            case .wrong: "wrong"
            case .lockout: "lockout"
            case .unlocked: "unlocked"
            }
        }
        public var description: String { name }
    }

    /// Something the owner of the session must do or tell.
    public enum Action: Hashable, Sendable {
        case verify(UnlockMethod)
        case unlocked(UnlockMethod, at: Instant)
        case failed(UnlockMethod, failures: Int, retryAfter: Interval)
        case armTimer(Instant)
        case stateChanged
    }

    public private(set) var state: State = .locked
    public private(set) var failures: Int
    public var errorHold: Interval
    /// Waits after the n-th consecutive failure; nil means no lockout.
    public var lockoutAfter: @Sendable (Int) -> Interval?

    public init(failures: Int = 0, errorHold: Interval = .milliseconds(500),
                lockoutAfter: @escaping @Sendable (Int) -> Interval? = { _ in nil }) {
        self.failures = failures
        self.errorHold = errorHold
        self.lockoutAfter = lockoutAfter
    }

    public var acceptsInput: Bool {
        switch state {
        case .locked: true
        case .verifying, .wrong, .lockout, .unlocked: false
        }
    }

    public mutating func submit(_ method: UnlockMethod, at now: Instant) -> [Action] {
        switch state {
        case .locked:
            transition(to: .verifying(method), "submit")
            return [.stateChanged, .verify(method)]
        case .verifying, .wrong, .lockout, .unlocked:
            Log.bug("session: attempt submitted while \(state)")
            return []
        }
    }

    public mutating func verified(_ match: Bool, at now: Instant) -> [Action] {
        guard case .verifying(let method) = state else {
            Log.bug("session: verification result while \(state)")
            return []
        }
        if match {
            failures = 0
            transition(to: .unlocked(method, at: now), "match")
            return [.stateChanged, .unlocked(method, at: now)]
        }
        failures += 1
        let wait = lockoutAfter(failures)
        let until: Instant
        if let wait, errorHold < wait {
            until = now + wait
            transition(to: .lockout(until: until), "no match")
        } else {
            until = now + errorHold
            transition(to: .wrong(method, until: until), "no match")
        }
        return [.stateChanged, .failed(method, failures: failures, retryAfter: until - now), .armTimer(until)]
    }

    public mutating func timerFired(at now: Instant) -> [Action] {
        switch state {
        case .wrong(_, let until), .lockout(let until):
            if now < until { return [.armTimer(until)] }
            transition(to: .locked, "timeout")
            return [.stateChanged]
        case .locked, .verifying, .unlocked:
            return []
        }
    }

    /// A client asked to lock again.
    public mutating func lock() -> [Action] {
        switch state {
        case .unlocked:
            transition(to: .locked, "lock")
            return [.stateChanged]
        case .locked, .verifying, .wrong, .lockout:
            return []
        }
    }

    private mutating func transition(to new: State, _ event: String) {
        Log.debug("session: \(state) -> \(event) -> \(new)")
        state = new
    }
}
