/// What the metrics count since the daemon started, from the lock screen's events: the
/// unlocks by method, the failures and lockouts, the time spent locked, and the moments
/// they happened as the time of day. Time is passed in with each event (the monotonic
/// clock for the locked time, the time of day for the timestamps).
public struct LockTally: Hashable, Sendable {
    /// Unlocks by method (`UnlockMethod.rawValue`).
    public private(set) var unlocks: [String: Int] = [:]
    public private(set) var failures = 0
    public private(set) var lockouts = 0
    /// Counted at each unlock: a figure read late (the textfile) is never stale.
    private var lockedMicroseconds: Int64 = 0
    private var lockedSince: Instant?
    /// The lock under way began at this time of day.
    public private(set) var lockedSinceWall: Double?
    public private(set) var lastUnlockWall: Double?
    public private(set) var lastFailureWall: Double?
    /// The lockout's end as the time of day, while one lasts.
    public private(set) var lockoutUntilWall: Double?

    /// A daemon starts locked, at `now` (the time of day `wall`).
    public init(lockedAt now: Instant, wall: Double) {
        lockedSince = now
        lockedSinceWall = wall
    }

    /// The seconds spent locked, up to the last unlock.
    public var lockedSeconds: Double { Double(lockedMicroseconds) / 1e6 }

    /// The daemon started handed over (unlocked before this start): not locked.
    public mutating func startedUnlocked() {
        lockedSince = nil
        lockedSinceWall = nil
    }

    /// Counts `event`, told at `now` (the time of day `wall`).
    public mutating func count(_ event: LockEvent, at now: Instant, wall: Double) {
        switch event {
        case .unlocked(let m, _):
            unlocks[m.rawValue, default: 0] += 1
            if let since = lockedSince { lockedMicroseconds &+= (now - since).microseconds }
            lockedSince = nil
            lockoutUntilWall = nil
            lockedSinceWall = nil
            lastUnlockWall = wall
        case .locked:
            if lockedSince == nil {
                lockedSince = now
                lockedSinceWall = wall
            }
        case .failed:
            failures &+= 1
            lastFailureWall = wall
        case .lockout(let until):
            lockouts += 1
            lockoutUntilWall = wall + Double((until - now).microseconds) / 1e6
        case .duress, .storeFailed, .progress, .enrolled, .enrollFailed, .handedOver: break
        }
    }
}
