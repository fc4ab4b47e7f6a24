/// How the device was unlocked.
public enum UnlockMethod: String, Hashable, Sendable, Codable {
    case pattern, code
}

/// The lock session, apart from any one gesture (swaylock keeps auth state apart from
/// input state the same way). The diagram in docs/state-machines.md changes with it.
///
///     locked --submit--> verifying --match--> unlocked --lock--> locked
///                            |
///                            +--no match--> (storing) --stored--> wrong --hold over--> locked
///                                               |             or lockout --deadline--> locked
///                                               +--store failed--> storeFailed --retry--> (storing)
///
/// A persistent session (the daemon's) stores the failure count and the deadline, and
/// waits until they are on disk before it shows or tells the result (`store` action,
/// then `stored`). A wrong guess equal to one of the last few distinct wrong guesses is
/// shown as wrong but not counted again.
public struct Session: Sendable {
    /// What happened once a result is stored.
    public enum Pending: Hashable, Sendable {
        case failure(UnlockMethod)
        case unlock(UnlockMethod, at: Instant, duress: Bool)
    }

    public enum State: Hashable, Sendable, CustomStringConvertible {
        case locked
        case verifying(UnlockMethod)
        /// The result is being stored; nothing is shown or told until it is.
        case storing(Pending)
        case wrong(UnlockMethod, until: Instant)
        case lockout(until: Instant)
        /// A failure could not be stored: input stays blocked until it is.
        case storeFailed(reason: String, Pending)
        case unlocked(UnlockMethod, at: Instant)

        public var name: String {
            switch self {
            case .locked: "locked"
            case .verifying: "verifying"
            case .storing: "storing"
            case .wrong: "wrong"
            case .lockout: "lockout"
            case .storeFailed: "store_failed"
            case .unlocked: "unlocked"
            }
        }
        public var description: String { name }
    }

    /// The result of checking an attempt.
    public enum Verdict: Hashable, Sendable {
        /// The secret matched; `duress` when it was the duress code.
        case match(duress: Bool)
        /// No match. `digest` is a salted digest of the guess (never the guess) used to
        /// recognise a repeated wrong guess; nil counts every time.
        case wrong(digest: [UInt8]?)
    }

    /// Something the owner of the session must do or tell.
    public enum Action: Hashable, Sendable {
        case verify(UnlockMethod)
        /// Write the record durably, then call `stored`.
        case store(LockoutRecord)
        case unlocked(UnlockMethod, at: Instant, duress: Bool)
        case failed(UnlockMethod, failures: Int, retryAfter: Interval)
        /// A failure could not be stored: told instead of `failed`, which follows only a
        /// stored record.
        case storeFailed(UnlockMethod, reason: String)
        case lockout(until: Instant)
        case armTimer(Instant)
        case stateChanged
    }

    public private(set) var state: State = .locked
    public private(set) var failures: Int
    public var errorHold: Interval
    public var schedule: LockoutSchedule
    /// Whether results wait for `store` (the daemon) or not (in-memory sessions).
    public var persistent: Bool
    private var wrongGuesses = RecentWrongGuesses()
    /// The store in progress is a retry: its failure was told already.
    private var retrying = false

    public init(failures: Int = 0, errorHold: Interval = .milliseconds(500),
                schedule: LockoutSchedule = .none, persistent: Bool = false) {
        self.failures = failures
        self.errorHold = errorHold
        self.schedule = schedule
        self.persistent = persistent
    }

    /// A session resumed from a stored record: still locked out if its deadline is ahead.
    public init(restoring record: LockoutRecord, at now: Instant, errorHold: Interval = .milliseconds(500),
                schedule: LockoutSchedule, persistent: Bool = true) {
        self.init(failures: record.failures, errorHold: errorHold, schedule: schedule, persistent: persistent)
        if let d = record.deadline, d > now { state = .lockout(until: d) }
    }

    /// What must be stored now.
    public var record: LockoutRecord {
        if case .lockout(let until) = state { return LockoutRecord(failures: failures, deadline: until) }
        if case .storeFailed(_, .failure) = state { return pendingFailureRecord }
        if case .storing(.failure) = state { return pendingFailureRecord }
        return LockoutRecord(failures: failures)
    }

    private var pendingDeadline: Instant?
    private var pendingFailureRecord: LockoutRecord { LockoutRecord(failures: failures, deadline: pendingDeadline) }

    public var acceptsInput: Bool {
        switch state {
        case .locked: true
        case .verifying, .storing, .wrong, .lockout, .storeFailed, .unlocked: false
        }
    }

    /// When the next attempt is allowed, while locked out.
    public var lockedOutUntil: Instant? {
        if case .lockout(let until) = state { return until }
        return nil
    }

    public mutating func submit(_ method: UnlockMethod, at now: Instant) -> [Action] {
        switch state {
        case .locked:
            transition(to: .verifying(method), "submit")
            return [.stateChanged, .verify(method)]
        case .verifying, .storing, .wrong, .lockout, .storeFailed, .unlocked:
            Log.bug("session: attempt submitted while \(state)")
            return []
        }
    }

    /// The old interface: true is a match, false a wrong guess counted every time.
    public mutating func verified(_ match: Bool, at now: Instant) -> [Action] {
        verified(match ? .match(duress: false) : .wrong(digest: nil), at: now)
    }

    public mutating func verified(_ verdict: Verdict, at now: Instant) -> [Action] {
        guard case .verifying(let method) = state else {
            Log.bug("session: verification result while \(state)")
            return []
        }
        switch verdict {
        case .match(let duress):
            wrongGuesses.removeAll()
            let hadFailures = failures > 0
            failures = 0
            pendingDeadline = nil
            let pending = Pending.unlock(method, at: now, duress: duress)
            if persistent && hadFailures {
                transition(to: .storing(pending), "match")
                return [.store(LockoutRecord())]
            }
            return finish(pending, at: now, "match")
        case .wrong(let digest):
            if let digest {
                if wrongGuesses.contains(digest, at: now) {
                    // Shown as wrong, not counted: the same wrong guess again.
                    let until = now + errorHold
                    transition(to: .wrong(method, until: until), "repeated wrong guess")
                    return [.stateChanged, .failed(method, failures: failures, retryAfter: errorHold), .armTimer(until)]
                }
                wrongGuesses.record(digest, at: now)
            }
            failures += 1
            let wait = schedule.wait(after: failures)
            pendingDeadline = errorHold < wait ? now + wait : nil
            if persistent {
                transition(to: .storing(.failure(method)), "no match")
                return [.store(pendingFailureRecord)]
            }
            return finish(.failure(method), at: now, "no match")
        }
    }

    /// The owner stored the record (`error` nil) or could not (`error` says why).
    public mutating func stored(error: String?, at now: Instant) -> [Action] {
        guard case .storing(let pending) = state else {
            Log.bug("session: store result while \(state)")
            return []
        }
        let wasRetry = retrying
        retrying = false
        guard let error else { return finish(pending, at: now, "stored") }
        switch pending {
        case .failure(let method):
            transition(to: .storeFailed(reason: error, pending), "store failed")
            if wasRetry { return [.stateChanged] }
            return [.stateChanged, .storeFailed(method, reason: error)]
        case .unlock:
            // The right secret was given; the stored count stays higher than it is,
            // which only errs on the safe side.
            Log.error("session: cannot store the reset failure count: \(error)")
            return finish(pending, at: now, "store failed, unlocking anyway")
        }
    }

    /// Tries again to store a failure that could not be stored.
    public mutating func retryStore() -> [Action] {
        guard case .storeFailed(_, let pending) = state else { return [] }
        retrying = true
        transition(to: .storing(pending), "retry")
        return [.stateChanged, .store(pendingFailureRecord)]
    }

    private mutating func finish(_ pending: Pending, at now: Instant, _ event: String) -> [Action] {
        switch pending {
        case .unlock(let method, let at, let duress):
            transition(to: .unlocked(method, at: at), event)
            return [.stateChanged, .unlocked(method, at: at, duress: duress)]
        case .failure(let method):
            if let until = pendingDeadline, until > now {
                transition(to: .lockout(until: until), event)
                return [.stateChanged, .failed(method, failures: failures, retryAfter: until - now),
                        .lockout(until: until), .armTimer(until)]
            }
            let until = now + errorHold
            transition(to: .wrong(method, until: until), event)
            return [.stateChanged, .failed(method, failures: failures, retryAfter: errorHold), .armTimer(until)]
        }
    }

    public mutating func timerFired(at now: Instant) -> [Action] {
        switch state {
        case .wrong(_, let until), .lockout(let until):
            if now < until { return [.armTimer(until)] }
            pendingDeadline = nil
            transition(to: .locked, "timeout")
            return [.stateChanged]
        case .locked, .verifying, .storing, .storeFailed, .unlocked:
            return []
        }
    }

    /// Root cleared the failures and the wait on purpose; false (nothing changed) while an
    /// attempt is being checked or stored, whose result would carry the old count.
    public mutating func resetLockout() -> Bool {
        switch state {
        case .verifying, .storing, .storeFailed:
            return false
        case .locked, .wrong, .lockout:
            failures = 0
            pendingDeadline = nil
            wrongGuesses.removeAll()
            transition(to: .locked, "lockout reset")
            return true
        case .unlocked:
            failures = 0
            return true
        }
    }

    /// The daemon before this one was unlocked (by `method`, at `at`) when it stopped:
    /// this one starts unlocked too, but only from a clean locked state with no failure
    /// on record. Whether it did.
    public mutating func resumeUnlocked(_ method: UnlockMethod, at: Instant) -> Bool {
        guard case .locked = state, failures == 0 else { return false }
        transition(to: .unlocked(method, at: at), "resumed unlocked")
        return true
    }

    /// A client asked to lock again.
    public mutating func lock() -> [Action] {
        switch state {
        case .unlocked:
            transition(to: .locked, "lock")
            return [.stateChanged]
        case .locked, .verifying, .storing, .wrong, .lockout, .storeFailed:
            return []
        }
    }

    private mutating func transition(to new: State, _ event: String) {
        Log.debug("session: \(state) -> \(event) -> \(new)")
        state = new
    }
}
