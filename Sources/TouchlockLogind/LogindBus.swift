import CLogind
import Glibc
import TouchlockCore
import TouchlockSystem

/// logind on the system bus, on the event loop: its Lock, Unlock and PrepareForSleep
/// signals in, a sleep delay, a session's seat and the idle hint out. sd-bus is reached
/// through CLogind (libsystemd is loaded when this connects, not at start); its
/// connection's descriptor is polled by the loop and its timeout is a loop timer. Every
/// request is asynchronous: a logind that is slow or gone never stalls the touch path.
///
/// Only logind is believed: a signal counts only from the current owner of
/// org.freedesktop.login1, as the bus tells it. The system bus lets any local user send
/// any signal to our connection; those are dropped in CLogind after one comparison, and
/// only their count comes here (`ignoredSignals`, once per turn that had any). A turn
/// dispatches at most `batch` messages: a flood waits its turn with the other descriptors.
public final class LogindBus {
    public enum Event: Equatable, Sendable {
        /// The signal matches are installed: from now on Lock and PrepareForSleep are heard.
        case watching
        case lock(session: String)
        case unlock(session: String)
        case prepareForSleep(before: Bool)
        /// The seat of a session asked about (nil: none, an ssh session).
        case seat(session: String, seat: String?)
        /// A delay inhibitor on sleep is held (until `releaseSleepDelay`).
        case sleepDelayTaken
        /// The idle hint of a session on the seat was set (nil: the seat has none).
        case idleHintSet(session: String?, idle: Bool)
        /// A request failed (`request` says which); the connection is still there.
        case failed(Request, String)
        /// The connection is lost: nothing more comes from it.
        case disconnected(String)
        /// The owner of org.freedesktop.login1 is known, or changed (nil: nobody owns it,
        /// logind is not running): only its signals are believed.
        case owner(String?)
        /// Signals not from logind were dropped: `total` since connecting.
        case ignoredSignals(total: UInt64)
    }

    public enum Request: Sendable {
        case watch, seat, sleepDelay, idleHint, signal
    }

    private let loop: EventLoop
    private var handle: OpaquePointer?
    private var fd: Int32 = -1
    private var interest: IOInterest = .readable
    private var deadline: (at: Instant, timer: EventLoop.TimerID)?
    private let onEvent: (Event) -> Void
    private var sleepDelay: FileDescriptor?
    private var ignoredTold: UInt64 = 0
    /// Messages dispatched in one turn of the loop, at most.
    public static let batch: Int32 = 64

    /// Connects to the system bus (loading libsystemd), and starts watching for logind's
    /// signals. Throws when there is no bus or no libsystemd (`cannotLoad`): the daemon
    /// runs without.
    public init(loop: EventLoop, onEvent: @escaping (Event) -> Void) throws(SystemError) {
        self.loop = loop
        self.onEvent = onEvent
        var why: UnsafePointer<CChar>?
        var h: OpaquePointer?
        let context = Unmanaged.passUnretained(self).toOpaque()
        let r = tl_logind_open(&h, { context, event, path, text, number in
            guard let context else { return }
            Unmanaged<LogindBus>.fromOpaque(context).takeUnretainedValue()
                .received(event, path.map { String(cString: $0) }, text.map { String(cString: $0) }, number)
        }, context, &why)
        if r < 0 {
            throw SystemError(why.map { String(cString: $0) } ?? "sd_bus_open_system", Errno(rawValue: -r))
        }
        handle = h
        fd = tl_logind_fd(h)
        do {
            try SystemCall.checkNegative("sd_bus_match_signal_async") { tl_logind_watch(h) }
            try loop.register(fd, interest) { [unowned self] _ in self.process() }
        } catch {
            tl_logind_close(h)
            handle = nil
            throw error
        }
        // Not from here: an event dispatched now would reach an owner that does not hold
        // this object yet.
        loop.deferred { [weak self] in self?.process() }
    }

    deinit { close() }

    /// Disconnects; a sleep delay held is let go with it.
    public func close() {
        guard let h = handle else { return }
        handle = nil
        loop.unregister(fd)
        if let d = deadline { loop.cancel(d.timer) }
        deadline = nil
        tl_logind_close(h)
        releaseSleepDelay()
    }

    /// Whether a failure to connect is libsystemd's absence (nothing to try again).
    public static func cannotLoad(_ error: SystemError) -> Bool {
        error.errno == Errno(rawValue: ELIBACC) || error.errno == Errno(rawValue: ENOSYS)
    }

    /// Where to watch for the system bus's socket (sd-bus's default address) to appear:
    /// its directory and its name, or, while that directory is not there, /run and it.
    public static var socketToWatch: (directory: String, name: String) {
        access("/run/dbus", F_OK) == 0 ? ("/run/dbus", "system_bus_socket") : ("/run", "dbus")
    }

    /// Asks for the seat of the session at `path` (`Event.seat`).
    public func askSeat(ofSession path: String) {
        send(.seat) { tl_logind_ask_seat($0, path) }
    }

    /// Takes a delay inhibitor on sleep (`Event.sleepDelayTaken`).
    public func takeSleepDelay(who: String, why: String) {
        send(.sleepDelay) { tl_logind_inhibit_sleep($0, who, why) }
    }

    /// Lets a sleep that waits for us go on.
    public func releaseSleepDelay() {
        guard let d = sleepDelay.take() else { return }
        try? d.close()
    }

    /// Sets the idle hint of each session on `seat` (`Event.idleHintSet` for each).
    public func setIdleHint(_ idle: Bool, seat: String) {
        send(.idleHint) { tl_logind_set_idle_hint($0, seat, idle ? 1 : 0) }
    }

    private func send(_ request: Request, _ body: (OpaquePointer) -> Int32) {
        guard let h = handle else {
            onEvent(.failed(request, "not connected to the system bus"))
            return
        }
        let r = body(h)
        if r < 0 { onEvent(.failed(request, "\(Errno(rawValue: -r))")) }
        // What was queued goes out on this turn.
        loop.deferred { [weak self] in self?.process() }
    }

    private func received(_ event: Int32, _ path: String?, _ text: String?, _ number: Int32) {
        switch Int(event) {
        case Int(TL_LOGIND_WATCHING.rawValue): onEvent(.watching)
        case Int(TL_LOGIND_LOCK.rawValue): onEvent(.lock(session: path ?? ""))
        case Int(TL_LOGIND_UNLOCK.rawValue): onEvent(.unlock(session: path ?? ""))
        case Int(TL_LOGIND_PREPARE_FOR_SLEEP.rawValue): onEvent(.prepareForSleep(before: number != 0))
        case Int(TL_LOGIND_SESSION_SEAT.rawValue):
            onEvent(.seat(session: path ?? "", seat: text.flatMap { $0.isEmpty ? nil : $0 }))
        case Int(TL_LOGIND_SLEEP_DELAY.rawValue):
            releaseSleepDelay()
            sleepDelay = FileDescriptor(adopting: number)
            onEvent(.sleepDelayTaken)
        case Int(TL_LOGIND_IDLE_HINT.rawValue):
            onEvent(.idleHintSet(session: path.flatMap { $0.isEmpty ? nil : $0 }, idle: number != 0))
        case Int(TL_LOGIND_OWNER.rawValue):
            onEvent(.owner(text))
        case Int(TL_LOGIND_FAILED.rawValue):
            let request: Request = switch Int(number) {
            case Int(TL_LOGIND_WATCHING.rawValue), Int(TL_LOGIND_OWNER.rawValue): .watch
            case Int(TL_LOGIND_SESSION_SEAT.rawValue): .seat
            case Int(TL_LOGIND_SLEEP_DELAY.rawValue): .sleepDelay
            case Int(TL_LOGIND_IDLE_HINT.rawValue): .idleHint
            default: .signal
            }
            onEvent(.failed(request, text ?? "failed"))
        default:
            Log.bug("logind: an event \(event) CLogind does not define")
        }
    }

    /// Reads, writes and dispatches what is there, at most `batch` messages (the rest on
    /// the next turn, a timer due now); then waits for what sd-bus waits for.
    private func process() {
        guard let h = handle else { return }
        let r = tl_logind_process(h, Self.batch)
        guard r >= 0, handle != nil else {
            if handle != nil {
                close()
                onEvent(.disconnected("\(Errno(rawValue: -r))"))
            }
            return
        }
        let ignored = tl_logind_ignored(h)
        if ignored != ignoredTold {
            ignoredTold = ignored
            onEvent(.ignoredSignals(total: ignored))
            guard handle != nil else { return }
        }
        let wanted: IOInterest = (tl_logind_events(h) & Int32(POLLOUT)) != 0 ? [.readable, .writable] : .readable
        if wanted != interest {
            interest = wanted
            do { try loop.modify(fd, wanted) } catch { Log.warning("logind: \(error)") }
        }
        var usec: UInt64 = .max
        if let d = deadline { loop.cancel(d.timer) }
        deadline = nil
        // A full batch: what may be left goes on the next turn, after the other descriptors.
        if r > 0 { usec = 0 } else if tl_logind_timeout(h, &usec) < 0 { usec = .max }
        if usec != .max {
            let at = Instant(microseconds: Int64(clamping: usec))
            deadline = (at, loop.schedule(at: at) { [weak self] _ in
                self?.deadline = nil
                self?.process()
            })
        }
    }
}
