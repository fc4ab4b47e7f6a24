/// Running percentiles of a latency, in fixed memory: 1 µs buckets up to 2 ms, 100 µs
/// buckets up to 200 ms, one bucket beyond; the maximum is kept exactly. Recording is
/// O(1) and allocates nothing, so the daemon can keep it on the touch path.
public struct LatencyStats: Sendable {
    static let fineLimit: Int64 = 2_000          // µs, 1 µs per bucket below
    static let coarseStep: Int64 = 100           // µs per bucket above
    static let coarseLimit: Int64 = 200_000      // µs; beyond goes in the last bucket
    private var buckets: [UInt32]
    public private(set) var count = 0
    public private(set) var maximum = Interval(microseconds: 0)

    public init() {
        let coarse = Int((Self.coarseLimit - Self.fineLimit) / Self.coarseStep)
        buckets = Array(repeating: 0, count: Int(Self.fineLimit) + coarse + 1)
    }

    public mutating func record(_ d: Interval) {
        let us = max(0, d.microseconds)
        let i: Int
        if us < Self.fineLimit {
            i = Int(us)
        } else if us < Self.coarseLimit {
            i = Int(Self.fineLimit) + Int((us - Self.fineLimit) / Self.coarseStep)
        } else {
            i = buckets.count - 1
        }
        buckets[i] &+= 1
        count += 1
        if d > maximum { maximum = d }
    }

    /// The latency below which `fraction` (0...1) of the samples fall, to the bucket's
    /// upper edge; nil before the first sample.
    public func percentile(_ fraction: Double) -> Interval? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((Double(count) * fraction).rounded(.up)))
        var seen = 0
        for (i, n) in buckets.enumerated() {
            seen += Int(n)
            if seen >= rank {
                if i == buckets.count - 1 { return maximum }
                let upper = i < Int(Self.fineLimit)
                    ? Int64(i) + 1
                    : Self.fineLimit + Int64(i - Int(Self.fineLimit) + 1) * Self.coarseStep
                return Interval(microseconds: min(upper, maximum.microseconds))
            }
        }
        return maximum
    }

    /// "p50 12 µs, p99 80 µs, max 310 µs over 10000 frames".
    public var summary: String {
        guard let p50 = percentile(0.5), let p99 = percentile(0.99) else { return "no frames" }
        return "p50 \(p50.microseconds) µs, p99 \(p99.microseconds) µs, max \(maximum.microseconds) µs over \(count) frames"
    }
}
