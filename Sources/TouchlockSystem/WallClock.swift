import Glibc

/// The time of day (CLOCK_REALTIME), for what is told to the outside as a date: the
/// metrics' timestamps. Everything that decides runs on the monotonic clock.
public enum WallClock {
    /// Seconds since the Unix epoch, with microseconds.
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec / 1000) / 1_000_000
    }
}
