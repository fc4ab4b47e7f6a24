import Glibc
import CLinux
import TouchlockCore

/// What a file descriptor is waited for.
public struct IOInterest: OptionSet, Sendable {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let readable = IOInterest(rawValue: EPOLLIN.rawValue)
    public static let writable = IOInterest(rawValue: EPOLLOUT.rawValue)
}

/// What epoll reported for a file descriptor.
public struct IOReadiness: Sendable {
    public var readable: Bool
    public var writable: Bool
    /// The peer hung up or the descriptor is in error.
    public var hangup: Bool
}

/// One single-threaded epoll loop that owns all state. Handlers run on the loop's thread;
/// when no descriptor is ready and no timer is due, the process sleeps in epoll_wait.
///
/// Timers are multiplexed onto one timerfd (CLOCK_MONOTONIC), re-armed to the earliest
/// deadline; a timer is removed before its callback runs, so the callback may re-arm it.
/// SIGTERM and SIGINT arrive through a signalfd and end the loop.
public final class EventLoop {
    public typealias Handler = (IOReadiness) -> Void
    public typealias TimerID = Int

    private let epfd: Int32
    private let timerfd: Int32
    private let signalfd: Int32
    private var handlers: [Int32: Handler] = [:]
    private var timers: [TimerID: (deadline: Instant, callback: (Instant) -> Void)] = [:]
    private var nextTimerID = 1
    private var armed: Instant?
    private var deferredWork: [() -> Void] = []
    private var signalMask = sigset_t()
    private var signalHandlers: [Int32: () -> Void] = [:]
    private var running = false
    public private(set) var stopSignal: Int32?
    /// How many times epoll_wait returned: a wake-up count for benchmarks and tests.
    public private(set) var wakeups = 0

    /// Each descriptor it makes goes through the seam (`SystemCalls.current`); if one
    /// cannot be made, those made before it are closed.
    public init(signals: [Int32] = [SIGTERM, SIGINT]) throws(SystemError) {
        let sys = SystemCalls.current
        let ep = try SystemCall.check("epoll_create1") { sys.epollCreate(Int32(EPOLL_CLOEXEC)) }
        let tfd: Int32, sfd: Int32
        var mask = sigset_t()
        do throws(SystemError) {
            tfd = try SystemCall.check("timerfd_create") {
                sys.timerfdCreate(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
            }
            do throws(SystemError) {
                sigemptyset(&mask)
                for s in signals { sigaddset(&mask, s) }
                // Block the signals so they are only delivered through the signalfd.
                try SystemCall.checkCode("pthread_sigmask") { pthread_sigmask(SIG_BLOCK, &mask, nil) }
                sfd = try SystemCall.check("signalfd") { sys.signalfd(-1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK)) }
            } catch {
                Self.close(tfd)
                throw error
            }
        } catch {
            Self.close(ep)
            throw error
        }
        epfd = ep
        timerfd = tfd
        signalfd = sfd
        signalMask = mask
        // Registered once every descriptor is kept: deinit closes them if this fails.
        try register(timerfd, .readable) { [unowned self] _ in self.timerReadable() }
        try register(signalfd, .readable) { [unowned self] _ in self.signalReadable() }
    }

    deinit {
        Self.close(signalfd)
        Self.close(timerfd)
        Self.close(epfd)
    }

    /// Closes one of the loop's descriptors through the seam (an error is logged).
    private static func close(_ fd: Int32) {
        _ = FileDescriptor(adopting: fd)
    }

    /// The monotonic clock, the same clock evdev timestamps use (libevdev_set_clock_id).
    public static func now() -> Instant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Instant(microseconds: Int64(ts.tv_sec) * 1_000_000 + Int64(ts.tv_nsec) / 1000)
    }

    public func register(_ fd: Int32, _ interest: IOInterest, handler: @escaping Handler) throws(SystemError) {
        var ev = epoll_event(events: interest.rawValue, data: epoll_data_t(fd: fd))
        try SystemCall.check("epoll_ctl(ADD)", "fd \(fd)") { epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) }
        handlers[fd] = handler
    }

    public func modify(_ fd: Int32, _ interest: IOInterest) throws(SystemError) {
        var ev = epoll_event(events: interest.rawValue, data: epoll_data_t(fd: fd))
        try SystemCall.check("epoll_ctl(MOD)", "fd \(fd)") { epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) }
    }

    /// Stops watching `fd`. The caller still owns it and closes it.
    public func unregister(_ fd: Int32) {
        if handlers.removeValue(forKey: fd) != nil {
            epoll_ctl(epfd, EPOLL_CTL_DEL, fd, nil)
        }
    }

    /// Runs `callback` once at `deadline` (monotonic).
    @discardableResult
    public func schedule(at deadline: Instant, _ callback: @escaping (Instant) -> Void) -> TimerID {
        let id = nextTimerID
        nextTimerID += 1
        timers[id] = (deadline, callback)
        rearm()
        return id
    }

    public func cancel(_ id: TimerID) {
        if timers.removeValue(forKey: id) != nil { rearm() }
    }

    /// Calls `handler` on the loop each time `signo` arrives (it no longer stops the loop).
    public func handle(signal signo: Int32, _ handler: @escaping () -> Void) throws(SystemError) {
        var one = sigset_t()
        sigemptyset(&one)
        sigaddset(&one, signo)
        try SystemCall.checkCode("pthread_sigmask", "blocking signal \(signo)") { pthread_sigmask(SIG_BLOCK, &one, nil) }
        sigaddset(&signalMask, signo)
        let fd = signalfd
        try SystemCall.check("signalfd", "adding signal \(signo)") {
            SystemCalls.current.signalfd(fd, &signalMask, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        }
        signalHandlers[signo] = handler
    }

    /// Runs `work` after the current handler, before the loop sleeps again.
    public func deferred(_ work: @escaping () -> Void) { deferredWork.append(work) }

    public func stop() { running = false }

    /// Runs until `stop()` or a stop signal.
    public func run() throws(SystemError) {
        running = true
        var events = [epoll_event](repeating: epoll_event(), count: 32)
        while running {
            runDeferred()
            if !running { break }
            let n = epoll_wait(epfd, &events, Int32(events.count), -1)
            wakeups += 1
            if n < 0 {
                let e = Errno.current
                if e == .interrupted { continue }
                throw SystemError("epoll_wait", e)
            }
            for i in 0..<Int(n) {
                let ev = events[i]
                let fd = ev.data.fd
                guard let h = handlers[fd] else { continue }  // unregistered by an earlier handler
                let bits = ev.events
                h(IOReadiness(readable: bits & EPOLLIN.rawValue != 0,
                              writable: bits & EPOLLOUT.rawValue != 0,
                              hangup: bits & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0))
            }
        }
    }

    private func runDeferred() {
        while !deferredWork.isEmpty {
            let work = deferredWork
            deferredWork.removeAll()
            for w in work { w() }
        }
    }

    private func rearm() {
        let earliest = timers.values.map(\.deadline).min()
        if earliest == armed { return }
        armed = earliest
        var spec = itimerspec()
        if let e = earliest {
            // TFD_TIMER_ABSTIME; 0 would disarm, so a past deadline becomes 1 ns.
            let us = max(e.microseconds, 0)
            spec.it_value.tv_sec = Int(us / 1_000_000)
            spec.it_value.tv_nsec = Int(us % 1_000_000) * 1000
            if spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0 { spec.it_value.tv_nsec = 1 }
        }
        timerfd_settime(timerfd, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    private func timerReadable() {
        var expirations: UInt64 = 0
        _ = try? withUnsafeMutableBytes(of: &expirations) { b throws(SystemError) in try IO.read(timerfd, into: b, "timerfd") }
        armed = nil
        let now = Self.now()
        while let (id, t) = timers.filter({ $0.value.deadline <= now }).min(by: { $0.value.deadline < $1.value.deadline }) {
            timers.removeValue(forKey: id)
            t.callback(now)
        }
        rearm()
    }

    private func signalReadable() {
        var info = signalfd_siginfo()
        while (try? withUnsafeMutableBytes(of: &info) { b throws(SystemError) in try IO.read(signalfd, into: b, "signalfd") })
                == .bytes(MemoryLayout<signalfd_siginfo>.size) {
            if let handler = signalHandlers[Int32(info.ssi_signo)] {
                handler()
                continue
            }
            Log.info("signal \(info.ssi_signo): stopping")
            stopSignal = Int32(info.ssi_signo)
            running = false
        }
    }
}
