import Glibc
import CLinux
import TouchlockCore

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

/// The local time of day as people read it (the lock screen's clock): the time zone of
/// TZ or /etc/localtime, looked at again at each call (tzset), so a changed zone shows
/// at the next minute; names of days and months and AM/PM in the locale of LC_TIME once
/// `useLocale` has taken it from the environment.
public enum LocalTime {
    /// Takes LC_TIME from the environment (LC_ALL, LC_TIME, LANG), for the names and the
    /// locale's 12 or 24 hours; nothing else of the locale.
    public static func useLocale() {
        _ = setlocale(LC_TIME, "")
    }

    /// The locale's time format (nl_langinfo(T_FMT)): "%H:%M:%S" in C, "%r" or
    /// "%I:%M:%S %p" in en_US.
    public static var localeTimeFormat: String { String(cString: nl_langinfo(nl_item(T_FMT))) }

    /// `pattern` (strftime(3)) for the local time at `seconds` since the epoch.
    public static func format(_ pattern: String, at seconds: Int) -> String {
        tzset()
        var t = time_t(seconds)
        var tm = Glibc.tm()
        guard localtime_r(&t, &tm) != nil else { return "" }
        return format(pattern, tm)
    }

    /// `pattern` (strftime(3)) for the broken-down time `tm`.
    public static func format(_ pattern: String, _ tm: tm) -> String {
        var tm = tm
        var buffer = [CChar](repeating: 0, count: 256)
        let n = strftime(&buffer, buffer.count, pattern, &tm)
        return n == 0 ? "" : String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The next whole minute of the local time after `seconds` since the epoch (a zone
    /// offset of seconds, as old ones have, is a minute that starts at :SS UTC).
    public static func nextMinute(after seconds: Int) -> Int {
        tzset()
        var t = time_t(seconds)
        var tm = Glibc.tm()
        guard localtime_r(&t, &tm) != nil else { return seconds - ((seconds % 60) + 60) % 60 + 60 }
        return seconds - Int(tm.tm_sec) + 60
    }
}

/// Calls back at each whole minute of the wall clock, and at once when the wall clock is
/// set (NTP's first step, `date -s`): a timerfd on CLOCK_REALTIME armed for the next
/// minute with TFD_TIMER_CANCEL_ON_SET, one wake-up a minute and none in between.
public final class MinuteTimer {
    private let fd: Int32
    private let loop: EventLoop
    private let onMinute: (Int) -> Void
    /// Armed: wakes the loop at the next minute.
    public private(set) var running = false
    /// How many times it woke the loop: each minute, and each time the clock was set.
    public private(set) var wakeups = 0

    /// `onMinute` is given the wall clock's seconds since the epoch.
    public init(loop: EventLoop, onMinute: @escaping (Int) -> Void) throws(SystemError) {
        fd = try SystemCall.check("timerfd_create", "CLOCK_REALTIME") {
            SystemCalls.current.timerfdCreate(CLOCK_REALTIME, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        }
        self.loop = loop
        self.onMinute = onMinute
        // Registered once every property is set: deinit closes the timer if this fails.
        try loop.register(fd, .readable) { [unowned self] _ in self.readable() }
    }

    deinit {
        loop.unregister(fd)
        _ = FileDescriptor(adopting: fd)  // closed through the seam
    }

    /// Arms the timer for the next minute (after now).
    public func start() {
        running = true
        arm()
    }

    /// Disarms it: no wake-up until `start`.
    public func stop() {
        running = false
        var spec = itimerspec()
        timerfd_settime(fd, 0, &spec, nil)
    }

    /// Seconds until it fires; nil when it is not armed.
    public var timeLeft: Double? {
        var current = itimerspec()
        guard timerfd_gettime(fd, &current) == 0, current.it_value.tv_sec != 0 || current.it_value.tv_nsec != 0 else { return nil }
        return Double(current.it_value.tv_sec) + Double(current.it_value.tv_nsec) / 1e9
    }

    private func arm() {
        let now = Int(WallClock.now().rounded(.down))
        var spec = itimerspec()
        spec.it_value.tv_sec = LocalTime.nextMinute(after: now)
        // TFD_TIMER_CANCEL_ON_SET: a read fails with ECANCELED once the clock is set.
        if timerfd_settime(fd, Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET), &spec, nil) != 0 {
            Log.warning("clock: timerfd_settime: \(Errno.current); the clock is not kept")
            running = false
        }
    }

    private func readable() {
        var expirations: UInt64 = 0
        let n = withUnsafeMutableBytes(of: &expirations) { b in SystemCalls.current.read(fd, b.baseAddress, b.count) }
        if n < 0, Errno.current == .wouldBlock { return }  // woken for nothing
        // A minute (n == 8) or the clock set (ECANCELED): tell the time, wait for the next.
        wakeups += 1
        if n < 0 {
            // settimeofday, NTP's step, or the kernel's timekeeping changing its clock source.
            let e = Errno.current
            Log.info(e.rawValue == ECANCELED ? "clock: the wall clock was set; the time is told again" : "clock: timerfd: \(e)")
        }
        guard running else { return }
        onMinute(Int(WallClock.now().rounded(.down)))
        if running { arm() }
    }
}
