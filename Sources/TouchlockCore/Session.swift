/// How the device was unlocked.
public enum UnlockMethod: String, Hashable, Sendable, Codable {
    case pattern, code
    /// A one-time service code (docs/service-codes.md).
    case service
}

/// The lock session, apart from any one gesture (swaylock keeps auth state apart from
/// input state the same way). The diagram in docs/state-machines.md changes with it.
///
/// A persistent session (the daemon's) counts an attempt before it is checked, as
/// Android's Gatekeeper does: the record with one more failure (and the wait it earns)
/// is stored durably first, and only once it is on disk is the attempt verified. A right
/// answer then stores the cleared record before it unlocks. So a crash or a power cut at
/// any moment leaves every wrong attempt counted (a right one at worst counted too).
///
///     locked --submit--> storing(attempt) --stored--> verifying --no match--> wrong --hold over--> locked
///                           |                            |              or lockout --deadline--> locked
///                           |                            +--match--> storing(unlock) --stored--> unlocked
///                           |                            +--repeat of a recent wrong guess-->
///                           |                                  storing(uncount) --stored--> wrong (not counted)
///                           +--store failed--> storeFailed --touch: retry--> storing(retry) --stored--> locked
///
/// A session that is not persistent (in memory: previews, replays) goes from `locked`
/// straight to `verifying` and counts after the verdict.
public struct Session: Sendable {
    /// What a store in progress is for.
    public enum Pending: Hashable, Sendable {
        /// The attempt counted as a failure before it is checked.
        case attempt(UnlockMethod)
        /// A repeated wrong guess: the count goes back to what it was.
        case uncount(UnlockMethod)
        /// The cleared record after a match.
        case unlock(UnlockMethod, at: Instant, duress: Bool)
        /// A store tried again after it failed (no attempt is waiting).
        case retry
    }

    public enum State: Hashable, Sendable, CustomStringConvertible {
        case locked
        case verifying(UnlockMethod)
        /// A record is being stored; nothing of the attempt is checked, shown or told
        /// until it is.
        case storing(Pending)
        case wrong(UnlockMethod, until: Instant)
        case lockout(until: Instant)
        /// An attempt could not be counted (so it was not checked): input stays blocked
        /// until a store succeeds.
        case storeFailed(reason: String)
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
        /// Not the method's secret, but a one-time service code typed on its pad
        /// (docs/service-codes.md): unlocks as `service`.
        case service
    }

    /// Something the owner of the session must do or tell.
    public enum Action: Hashable, Sendable {
        /// Check the attempt waiting, then call `verified`.
        case verify(UnlockMethod)
        /// Write the record durably, then call `stored`.
        case store(LockoutRecord)
        case unlocked(UnlockMethod, at: Instant, duress: Bool)
        case failed(UnlockMethod, failures: Int, retryAfter: Interval)
        /// An attempt could not be counted, so it is not checked: told instead of
        /// `failed`. The attempt waiting is dropped unchecked.
        case storeFailed(UnlockMethod, reason: String)
        case lockout(until: Instant)
        case armTimer(Instant)
        case stateChanged
    }

    public private(set) var state: State = .locked
    public private(set) var failures: Int
    public var errorHold: Interval
    public var schedule: LockoutSchedule
    /// Whether attempts are counted on disk before they are checked (the daemon) or not
    /// (in-memory sessions).
    public var persistent: Bool
    private var wrongGuesses = RecentWrongGuesses()
    /// The count and deadline before the attempt in progress, to go back to when it is
    /// a repeated wrong guess or its count cannot be stored.
    private var before = LockoutRecord()

    public init(failures: Int = 0, errorHold: Interval = .milliseconds(500),
                schedule: LockoutSchedule = .none, persistent: Bool = false) {
        self.failures = max(0, failures)
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

    /// The record as it stands: the count, and the deadline while one is ahead.
    public var record: LockoutRecord {
        if case .lockout(let until) = state { return LockoutRecord(failures: failures, deadline: until) }
        return LockoutRecord(failures: failures, deadline: pendingDeadline)
    }

    private var pendingDeadline: Instant?

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

    /// An attempt was made. A persistent session asks first for the record with it
    /// counted as a failure to be stored; the check follows `stored`.
    public mutating func submit(_ method: UnlockMethod, at now: Instant) -> [Action] {
        switch state {
        case .locked:
            guard persistent else {
                transition(to: .verifying(method), "submit")
                return [.stateChanged, .verify(method)]
            }
            before = LockoutRecord(failures: failures, deadline: pendingDeadline)
            count(at: now)
            transition(to: .storing(.attempt(method)), "submit (counted first)")
            return [.stateChanged, .store(record)]
        case .verifying, .storing, .wrong, .lockout, .storeFailed, .unlocked:
            Log.bug("session: attempt submitted while \(state)")
            return []
        }
    }

    /// One more failure, and the wait it earns (a deadline only when the wait is longer
    /// than the error hold). Saturates: a count read as the largest stays so.
    private mutating func count(at now: Instant) {
        failures = failures >= LockoutRecord.maximumFailures ? LockoutRecord.maximumFailures : failures + 1
        let wait = schedule.wait(after: failures)
        pendingDeadline = errorHold < wait ? now + wait : nil
    }

    /// The count before the attempt in progress.
    private mutating func uncount() {
        failures = before.failures
        pendingDeadline = nil
    }

    /// The record as it stands while no wait is ahead, with a deadline that says the wait
    /// was served (a record with failures and no deadline re-arms the full wait at a
    /// restart).
    private func servedRecord(at now: Instant) -> LockoutRecord {
        LockoutRecord(failures: failures, deadline: failures > 0 ? now : nil)
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
            failures = 0
            pendingDeadline = nil
            if persistent {
                // The attempt was counted: the cleared record goes on disk before the unlock.
                transition(to: .storing(.unlock(method, at: now, duress: duress)), "match")
                return [.store(LockoutRecord())]
            }
            return finish(.unlock(method, at: now, duress: duress), at: now, "match")
        case .service:
            wrongGuesses.removeAll()
            failures = 0
            pendingDeadline = nil
            if persistent {
                transition(to: .storing(.unlock(.service, at: now, duress: false)), "service code")
                return [.store(LockoutRecord())]
            }
            return finish(.unlock(.service, at: now, duress: false), at: now, "service code")
        case .wrong(let digest):
            if let digest {
                if wrongGuesses.contains(digest, at: now) {
                    // Shown as wrong, not counted: the same wrong guess again.
                    if persistent {
                        uncount()
                        transition(to: .storing(.uncount(method)), "repeated wrong guess")
                        return [.store(servedRecord(at: now))]
                    }
                    return notCounted(method, at: now)
                }
                wrongGuesses.record(digest, at: now)
            }
            // A persistent session counted it already, on disk.
            if !persistent { count(at: now) }
            return finish(.failure(method), at: now, "no match")
        }
    }

    private enum Outcome {
        case failure(UnlockMethod)
        case unlock(UnlockMethod, at: Instant, duress: Bool)
    }

    /// The owner stored the record (`error` nil) or could not (`error` says why).
    public mutating func stored(error: String?, at now: Instant) -> [Action] {
        guard case .storing(let pending) = state else {
            Log.bug("session: store result while \(state)")
            return []
        }
        switch pending {
        case .attempt(let method):
            if let error {
                // Not counted, so not checked: the attempt is dropped.
                failures = before.failures
                pendingDeadline = before.deadline
                transition(to: .storeFailed(reason: error), "store failed")
                return [.stateChanged, .storeFailed(method, reason: error)]
            }
            transition(to: .verifying(method), "stored")
            return [.stateChanged, .verify(method)]
        case .uncount(let method):
            if let error {
                // The count stays on disk: it stays in memory too (the safe side).
                Log.error("session: cannot take back the count of a repeated guess: \(error)")
                failures = before.failures
                count(at: now)
                return finish(.failure(method), at: now, "store failed, counted")
            }
            return notCounted(method, at: now)
        case .unlock(let method, let at, let duress):
            if let error {
                // The right secret was given; the stored count stays higher than it is,
                // which only errs on the safe side.
                Log.error("session: cannot store the reset failure count: \(error)")
            }
            return finish(.unlock(method, at: at, duress: duress), at: now,
                          error == nil ? "stored" : "store failed, unlocking anyway")
        case .retry:
            if let error {
                transition(to: .storeFailed(reason: error), "retry failed")
                return [.stateChanged]
            }
            transition(to: .locked, "stored")
            return [.stateChanged]
        }
    }

    /// Tries again to store, after a store failed; attempts are taken again once one
    /// succeeds.
    public mutating func retryStore(at now: Instant) -> [Action] {
        guard case .storeFailed = state else { return [] }
        transition(to: .storing(.retry), "retry")
        return [.stateChanged, .store(servedRecord(at: now))]
    }

    private mutating func notCounted(_ method: UnlockMethod, at now: Instant) -> [Action] {
        let until = now + errorHold
        transition(to: .wrong(method, until: until), "not counted")
        return [.stateChanged, .failed(method, failures: failures, retryAfter: errorHold), .armTimer(until)]
    }

    private mutating func finish(_ outcome: Outcome, at now: Instant, _ event: String) -> [Action] {
        switch outcome {
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
