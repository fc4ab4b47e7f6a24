/// How long to wait after the n-th consecutive failure before the next attempt.
///
/// The default is Android Gatekeeper's current table (`kTimeoutTable`): failures 1-4 are
/// free, then 5: 1 min, 6: 5 min, 7: 15 min, 8: 30 min, 9: 90 min, 10: 3^5 min, and each
/// further failure triples the wait up to the 19th (9.09 years); from the 20th on, no
/// more attempts (a wait of 2^31-1 s, as Gatekeeper's INT32_MAX).
public struct LockoutSchedule: Hashable, Sendable, CustomStringConvertible {
    /// Wait in seconds after failure 1, 2, ...; the last entry holds for every later one.
    public var seconds: [Int64]

    public init(seconds: [Int64]) { self.seconds = seconds }

    public static let forever: Int64 = Int64(Int32.max)

    public static let gatekeeper = LockoutSchedule(seconds: [
        0, 0, 0, 0, 60, 300, 900, 1800, 5400,
        14_580, 43_740, 131_220, 393_660, 1_180_980, 3_542_940, 10_628_820, 31_886_460,
        95_659_380, 286_978_140, forever,
    ])

    /// No lockout at all: every failure only shows the error for the error hold.
    public static let none = LockoutSchedule(seconds: [0])

    /// The wait after `failures` consecutive failures (zero for none).
    public func wait(after failures: Int) -> Interval {
        guard failures > 0, let last = seconds.last else { return Interval(microseconds: 0) }
        let s = failures <= seconds.count ? seconds[failures - 1] : last
        return Interval(microseconds: s.saturatingMultiplied(by: 1_000_000))
    }

    /// "gatekeeper", "none", or a comma-separated list of seconds per failure.
    public init?(parsing text: String) {
        switch text {
        case "gatekeeper": self = .gatekeeper
        case "none": self = .none
        default:
            var out: [Int64] = []
            for part in text.split(separator: ",", omittingEmptySubsequences: false) {
                let t = part.trimmingSpaces
                guard let v = Int64(t), v >= 0, v <= Self.forever else { return nil }
                out.append(v)
            }
            guard !out.isEmpty else { return nil }
            self.seconds = out
        }
    }

    public var description: String {
        if self == .gatekeeper { return "gatekeeper" }
        if self == .none { return "none" }
        return seconds.map(String.init).joined(separator: ",")
    }
}

/// The part of the lock state that must survive a crash or a power cut: the count of
/// consecutive failures and, while locked out, when the next attempt is allowed.
/// `deadline` is on the monotonic clock of the boot named by the store (boot_id).
public struct LockoutRecord: Hashable, Sendable {
    public var failures: Int
    public var deadline: Instant?

    /// The largest count there is: a larger one read from a file reads as this, and
    /// counting on from it stays there.
    public static let maximumFailures = Int.max

    /// A count as written (decimal digits): one beyond `maximumFailures` reads as it;
    /// anything else (a sign, no digits, other characters) is no count.
    public static func count(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(String(text)) ?? maximumFailures
    }

    public init(failures: Int = 0, deadline: Instant? = nil) {
        self.failures = failures
        self.deadline = deadline
    }

    /// The record as it holds at `now` after a restart. On the same boot the remaining
    /// wait is honoured as it was; after a reboot the monotonic clock started again, so,
    /// as Gatekeeper does, the full wait for the count is armed again from `now`
    /// (without counting a failure). A record of the same boot with failures but no
    /// deadline (a wait never stored) is treated the same way: the full wait again.
    public func restored(sameBoot: Bool, now: Instant, schedule: LockoutSchedule) -> LockoutRecord {
        if sameBoot, let d = deadline {
            return d > now ? self : LockoutRecord(failures: failures, deadline: nil)
        }
        return Self.fullWait(failures: failures, now: now, schedule: schedule)
    }

    /// The record a damaged or unreadable state file stands for: at least
    /// `damagedCount` failures (more if a complete line of it said more), with the full
    /// wait for that count from `now`. Never fewer failures than the file could have held
    /// up to `damagedCount`.
    public static func damaged(readable: Int, damagedCount: Int, now: Instant, schedule: LockoutSchedule) -> LockoutRecord {
        fullWait(failures: max(readable, damagedCount, 1), now: now, schedule: schedule)
    }

    static func fullWait(failures: Int, now: Instant, schedule: LockoutSchedule) -> LockoutRecord {
        let wait = schedule.wait(after: failures)
        return LockoutRecord(failures: failures, deadline: wait.microseconds > 0 ? now + wait : nil)
    }
}

/// The last few distinct wrong guesses, as opaque salted digests (never the guess), so
/// that repeating one of them within a while does not count as another failure (AOSP's
/// SoftwareRateLimiter: 5 guesses, 5 minutes). The owner makes the digests.
public struct RecentWrongGuesses: Sendable {
    public var capacity: Int
    public var lifetime: Interval
    private var entries: [(digest: [UInt8], at: Instant)] = []

    public init(capacity: Int = 5, lifetime: Interval = .milliseconds(5 * 60 * 1000)) {
        self.capacity = capacity
        self.lifetime = lifetime
    }

    public var count: Int { entries.count }

    /// True if `digest` was recorded within the lifetime before `now`.
    public mutating func contains(_ digest: [UInt8], at now: Instant) -> Bool {
        expire(at: now)
        return entries.contains { Self.equal($0.digest, digest) }
    }

    /// Remembers a wrong guess; the oldest goes when the memory is full.
    public mutating func record(_ digest: [UInt8], at now: Instant) {
        expire(at: now)
        if let i = entries.firstIndex(where: { Self.equal($0.digest, digest) }) { entries.remove(at: i) }
        entries.append((digest, now))
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
    }

    /// Forgets everything (after an unlock).
    public mutating func removeAll() { entries.removeAll() }

    private mutating func expire(at now: Instant) {
        entries.removeAll { now - $0.at >= lifetime }
    }

    private static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in a.indices { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}

extension Interval {
    /// "1:05" (minutes and seconds), "2:03:04", or "3 d 4 h" for long waits, rounded up
    /// to the second, for the countdown on screen.
    public var countdown: String {
        let total = microseconds.saturatingAdding(999_999) / 1_000_000
        if total <= 0 { return "0:00" }
        let d = total / 86_400, h = (total % 86_400) / 3600, m = (total % 3600) / 60, s = total % 60
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        if d > 0 { return "\(d) d \(h) h" }
        if h > 0 { return "\(h):\(two(m)):\(two(s))" }
        return "\(m):\(two(s))"
    }
}
