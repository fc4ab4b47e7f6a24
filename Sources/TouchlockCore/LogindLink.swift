/// What the daemon does with logind (the logind layer brings the events, the daemon
/// carries out the actions):
///
/// - `loginctl lock-session`, `lock-sessions` and the session tools that call them
///   (xss-lock, swayidle) lock, for a session on our seat; other seats' sessions and those
///   with none (ssh) are not ours.
/// - Before a sleep the lock screen is shown: a delay inhibitor is held while awake, and
///   let go once the lock screen is on the display after PrepareForSleep (logind waits for
///   it up to its InhibitDelayMaxSec), then taken again after the wake-up.
/// - Unlock is refused: the lock screen opens only with its secret. logind lets a
///   session's owner send it, and on a kiosk that is the app's user.
/// - The seat's idle hint follows the panel: idle once the screen blanks or the idle lock
///   locks, active again at the first touch or key (and said again at most once a
///   `activityRefresh` while touches go on: a session started or a hint set by another
///   process meanwhile is put right).
/// - Only logind is believed (the logind layer drops any signal not from the owner of its
///   name, which any local user can send on the system bus); how many were dropped is
///   said at most once an `ignoredReport`, never once each.
/// - Every PrepareForSleep(true) locks, even one with no wake-up since the last (a logind
///   restarted mid-sleep never sends it): a sleep is never taken as one already locked for.
public struct LogindLink: Equatable, Sendable {
    public enum Action: Equatable, Sendable {
        case askSeat(session: String)
        /// Lock the device (a no-op when locked), and tell `lockShown` once the lock
        /// screen is on the display, or `lockRefused`.
        case lock(reason: String)
        case takeSleepDelay
        case releaseSleepDelay
        case setIdleHint(Bool)
    }

    public enum SleepDelay: Equatable, Sendable {
        case none, asked, held
    }

    /// Our seat (`[logind] seat`, seat0 by default).
    public let seat: String
    public private(set) var delay: SleepDelay = .none
    /// PrepareForSleep(true) came, the lock screen is not yet shown for it.
    public private(set) var sleepPending = false
    /// Asleep, or going to sleep: between PrepareForSleep(true) and (false).
    public private(set) var sleeping = false
    /// Sessions whose Lock waits for the answer to which seat they are on.
    public private(set) var locksAsked: Set<String> = []
    /// The idle hint last set (nil: never), and when "active" was last said.
    public private(set) var idleHint: Bool?
    private var activeSaid: Instant?
    public static let activityRefresh = Interval.milliseconds(60_000)
    /// The count of signals not from logind last said, and when.
    private var ignoredTold: UInt64 = 0
    private var ignoredSaid: Instant?
    public static let ignoredReport = Interval.milliseconds(60_000)

    public init(seat: String) { self.seat = seat }

    /// Connected to the bus, the signals watched.
    public mutating func watching() -> [Action] {
        guard delay == .none, !sleeping else { return [] }
        delay = .asked
        return [.takeSleepDelay]
    }

    /// The connection is lost: nothing asked on it will be answered. A delay already held
    /// stays held (it is a descriptor of its own).
    public mutating func disconnected() {
        if delay == .asked { delay = .none }
        locksAsked = []
        // A new connection counts from 0.
        ignoredTold = 0
    }

    /// Signals not from logind were dropped: `total` since connecting. What to log: the
    /// first at once, then, once an `ignoredReport` has passed, the count since the last
    /// line with the next that come (nil: nothing now).
    public mutating func signalsIgnored(total: UInt64, at now: Instant) -> String? {
        guard total > ignoredTold else { return nil }
        let first = ignoredSaid == nil
        if let said = ignoredSaid, now - said < Self.ignoredReport { return nil }
        let n = total - ignoredTold
        ignoredTold = total
        ignoredSaid = now
        return "logind: \(n) signal\(n == 1 ? "" : "s") from another connection than logind's dropped"
            + (first ? " (any local user can send one on the system bus); counted, said at most once a minute" : "")
    }

    public mutating func sessionLockAsked(_ session: String) -> [Action] {
        guard locksAsked.insert(session).inserted else { return [] }
        return [.askSeat(session: session)]
    }

    public mutating func seatOf(_ session: String, is seat: String?) -> [Action] {
        guard locksAsked.remove(session) != nil else {
            Log.bug("logind: the seat of \(session) came, and no Lock asked for it")
            return []
        }
        guard seat == self.seat else {
            Log.info("logind: Lock for \(session) ignored: it is on \(seat.map { "seat \($0)" } ?? "no seat"), not \(self.seat)")
            return []
        }
        return [.lock(reason: "logind: Lock for \(session)")]
    }

    public mutating func seatUnknown(_ why: String) {
        Log.warning("logind: which seat a locked session is on is not known (\(why)): not locked")
        locksAsked = []
    }

    public func sessionUnlockAsked(_ session: String) {
        Log.info("logind: Unlock for \(session) refused: the lock screen opens only with its secret")
    }

    /// PrepareForSleep: `before` a sleep, or after the wake-up.
    public mutating func prepareForSleep(before: Bool) -> [Action] {
        if before {
            if sleeping {
                // Only logind sends it: its PrepareForSleep(false) was lost (it restarted
                // mid-sleep). Still a sleep, locked for as any.
                Log.warning("logind: going to sleep again with no wake-up between: locking again")
            }
            sleeping = true
            sleepPending = true
            if delay != .held {
                Log.warning("logind: going to sleep with no delay held: the lock screen may come after the wake-up")
            }
            return [.lock(reason: "logind: going to sleep")]
        }
        guard sleeping else { return [] }
        sleeping = false
        sleepPending = false
        var out: [Action] = []
        if delay == .held {
            // The lock screen never came before the sleep: its delay is let go now.
            delay = .none
            out.append(.releaseSleepDelay)
        }
        if delay == .none {
            delay = .asked
            out.append(.takeSleepDelay)
        }
        return out
    }

    /// The lock screen is on the display (after a `lock` action).
    public mutating func lockShown() -> [Action] { lockSettled() }

    /// The lock screen could not be shown: a sleep does not wait for it.
    public mutating func lockRefused(_ why: String) -> [Action] {
        if sleepPending { Log.error("logind: going to sleep without the lock screen: \(why)") }
        return lockSettled()
    }

    private mutating func lockSettled() -> [Action] {
        guard sleepPending else { return [] }
        sleepPending = false
        guard delay == .held else { return [] }
        delay = .none
        return [.releaseSleepDelay]
    }

    public mutating func sleepDelayTaken() -> [Action] {
        guard delay == .asked else {
            // The layer holds one delay at a time (a new one replaces the old): none is held
            // once this one is let go.
            Log.bug("logind: a sleep delay came, and none was asked for")
            delay = .none
            return [.releaseSleepDelay]
        }
        // Taken while the system is going to sleep: it would only hold the sleep up.
        if sleeping && !sleepPending {
            delay = .none
            return [.releaseSleepDelay]
        }
        delay = .held
        return []
    }

    public mutating func sleepDelayRefused(_ why: String) {
        Log.warning("logind: no sleep delay (\(why)): a sleep may come before the lock screen")
        if delay == .asked { delay = .none }
    }

    /// A touch or a key.
    public mutating func activity(at now: Instant) -> [Action] {
        if idleHint == false, let said = activeSaid, now - said < Self.activityRefresh { return [] }
        idleHint = false
        activeSaid = now
        return [.setIdleHint(false)]
    }

    /// The screen blanked, or the idle lock locked.
    public mutating func idle() -> [Action] {
        guard idleHint != true else { return [] }
        idleHint = true
        return [.setIdleHint(true)]
    }
}
