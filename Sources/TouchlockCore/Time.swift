/// A point on the monotonic clock, in microseconds. Core never reads a clock: every
/// instant comes from a kernel event timestamp or from the event loop's timer.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }
    /// Saturates at the ends of the clock: a time read from a device or a file can be
    /// anything, and arithmetic on it must not trap.
    public init(seconds: Int, microseconds: Int) {
        self.microseconds = Int64(clamping: seconds).saturatingMultiplied(by: 1_000_000)
            .saturatingAdding(Int64(clamping: microseconds))
    }

    public static func < (a: Instant, b: Instant) -> Bool { a.microseconds < b.microseconds }
    public static func + (a: Instant, d: Interval) -> Instant {
        Instant(microseconds: a.microseconds.saturatingAdding(d.microseconds))
    }
    public static func - (a: Instant, b: Instant) -> Interval {
        Interval(microseconds: a.microseconds.saturatingSubtracting(b.microseconds))
    }

    public var description: String { "\(microseconds)us" }
}

/// A span of time in microseconds.
public struct Interval: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var microseconds: Int64
    public init(microseconds: Int64) { self.microseconds = microseconds }
    public static func milliseconds(_ ms: Int64) -> Interval { Interval(microseconds: ms.saturatingMultiplied(by: 1000)) }
    public static func < (a: Interval, b: Interval) -> Bool { a.microseconds < b.microseconds }
    public var milliseconds: Int64 { microseconds / 1000 }
    public var description: String { "\(Double(microseconds) / 1000)ms" }
}

extension Int64 {
    /// The sum, held at Int64.min or Int64.max instead of overflowing.
    @inlinable public func saturatingAdding(_ other: Int64) -> Int64 {
        let (r, o) = addingReportingOverflow(other)
        return o ? (other > 0 ? .max : .min) : r
    }

    @inlinable public func saturatingSubtracting(_ other: Int64) -> Int64 {
        let (r, o) = subtractingReportingOverflow(other)
        return o ? (other < 0 ? .max : .min) : r
    }

    @inlinable public func saturatingMultiplied(by other: Int64) -> Int64 {
        let (r, o) = multipliedReportingOverflow(by: other)
        return o ? ((self < 0) == (other < 0) ? .max : .min) : r
    }
}
