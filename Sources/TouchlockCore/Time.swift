/// A point on the monotonic clock, in microseconds. Core never reads a clock: every
/// instant comes from a kernel event timestamp or from the event loop's timer.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }
    public init(seconds: Int, microseconds: Int) {
        self.microseconds = Int64(seconds) * 1_000_000 + Int64(microseconds)
    }

    public static func < (a: Instant, b: Instant) -> Bool { a.microseconds < b.microseconds }
    public static func + (a: Instant, d: Interval) -> Instant { Instant(microseconds: a.microseconds + d.microseconds) }
    public static func - (a: Instant, b: Instant) -> Interval { Interval(microseconds: a.microseconds - b.microseconds) }

    public var description: String { "\(microseconds)us" }
}

/// A span of time in microseconds.
public struct Interval: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var microseconds: Int64
    public init(microseconds: Int64) { self.microseconds = microseconds }
    public static func milliseconds(_ ms: Int64) -> Interval { Interval(microseconds: ms * 1000) }
    public static func < (a: Interval, b: Interval) -> Bool { a.microseconds < b.microseconds }
    public var milliseconds: Int64 { microseconds / 1000 }
    public var description: String { "\(Double(microseconds) / 1000)ms" }
}
