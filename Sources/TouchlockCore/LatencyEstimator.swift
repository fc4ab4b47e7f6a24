/// A running estimate of latency quantiles in constant memory: a histogram on a
/// logarithmic scale (buckets 4% wide, from 10 us to over an hour), so p50 and p99 are
/// known within a bucket's width however many samples arrive.
public struct LatencyEstimator: Sendable {
    /// Upper bounds of the buckets, in microseconds: 10, 10.4, 10.8, ...
    private static let bounds: [Double] = {
        var b: [Double] = []
        var v = 10.0
        for _ in 0..<512 { b.append(v); v *= 1.04 }
        return b
    }()
    private var counts = [Int](repeating: 0, count: LatencyEstimator.bounds.count)
    public private(set) var count = 0
    public private(set) var maximum: Interval?
    /// The samples added up (for a histogram's `_sum`).
    public private(set) var total = Interval(microseconds: 0)

    public init() {}

    public mutating func record(_ latency: Interval) {
        let us = Double(max(latency.microseconds, 0))
        // The first bucket whose bound is not below the sample (binary search).
        var lo = 0, hi = Self.bounds.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if Self.bounds[mid] < us { lo = mid + 1 } else { hi = mid }
        }
        counts[lo] += 1
        count += 1
        total.microseconds += max(latency.microseconds, 0)
        if maximum.map({ latency > $0 }) ?? true { maximum = latency }
    }

    /// The upper bound of the bucket holding the q-th quantile (0 < q <= 1), never more
    /// than the largest sample; nil with no samples.
    public func quantile(_ q: Double) -> Interval? {
        guard count > 0, let maximum else { return nil }
        let rank = max(1, Int((q * Double(count)).rounded(.up)))
        var seen = 0
        for i in counts.indices {
            seen += counts[i]
            if seen >= rank { return min(maximum, Interval(microseconds: Int64(Self.bounds[i].rounded(.up)))) }
        }
        return maximum
    }
}

extension LatencyEstimator {
    /// How many samples are at most each of `bounds` (ascending), as a Prometheus
    /// histogram's cumulative buckets: the samples in the log-scale buckets whose upper
    /// bound is not above it, so a count may miss samples within 4% below a bound.
    public func cumulativeCounts(atMost bounds: [Interval]) -> [Int] {
        var out: [Int] = []
        var i = 0, seen = 0
        for b in bounds {
            let limit = Double(b.microseconds)
            while i < counts.count && Self.bounds[i] <= limit { seen += counts[i]; i += 1 }
            out.append(seen)
        }
        return out
    }

    /// "p50 12 µs, p99 80 µs, max 310 µs over 10000 frames".
    public var summary: String {
        guard let p50 = quantile(0.5), let p99 = quantile(0.99), let maximum else { return "no frames" }
        return "p50 \(p50.microseconds) µs, p99 \(p99.microseconds) µs, max \(maximum.microseconds) µs over \(count) frames"
    }
}
