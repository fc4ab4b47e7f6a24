import CWayland
import Glibc
import TouchlockCore
import TouchlockSystem

/// Why the connection to the compositor ended: a value the owner reports, never a crash.
public enum WaylandFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The compositor ended the connection for a request it refused.
    case protocolError(interface: String, code: UInt32, object: UInt32)
    /// The socket failed or the compositor went away (EPIPE, ECONNRESET).
    case connectionLost(String)
    /// No compositor at the socket yet: it does not exist, or nobody listens on it
    /// (ENOENT, ECONNREFUSED), as before the compositor has started.
    case noCompositor(socket: String, Errno)

    public var description: String {
        switch self {
        case .protocolError(let i, let code, let object): "protocol error \(code) on \(i)@\(object)"
        case .connectionLost(let why): "the compositor's connection was lost: \(why)"
        case .noCompositor(let socket, let e): "no compositor at \(socket) (\(e))"
        }
    }
}

/// What became of a session lock asked for (`WaylandConnection.lock`).
public enum SessionLockEvent: Hashable, Sendable {
    /// The compositor shows only our lock surfaces and gives them every touch and key.
    case locked
    /// The compositor refused the lock, or ended it (another locker holds it, its policy).
    case finished(wasLocked: Bool)
    /// The unlock reached the compositor (the roundtrip after unlock_and_destroy returned).
    case unlocked
    /// The connection ended.
    case failed(WaylandFailure)
}

/// A client of the compositor's ext-session-lock-v1, on the daemon's event loop: the
/// globals (wl_compositor, wl_shm, wl_seat, wl_output, the lock manager), one lock surface
/// per output while locked, and the seat's touches and keys on them. Everything runs on the
/// loop: the display's descriptor is read when readable (prepare_read, read_events,
/// dispatch_pending) and flushed after each turn that made requests (POLLOUT when the
/// socket is full). Errors come back as `SessionLockEvent.failed`.
public final class WaylandConnection {
    let display: OpaquePointer
    private let loop: EventLoop
    private let fd: Int32
    private var registry: OpaquePointer?
    var compositor: OpaquePointer?
    var shm: OpaquePointer?
    private var lockManager: OpaquePointer?
    private var lockManagerVersion: UInt32 = 0
    /// wp_viewporter and wp_fractional_scale_manager_v1, when the compositor offers both:
    /// lock surfaces then get buffers of the output's own pixels at a fractional scale.
    private(set) var viewporter: OpaquePointer?
    private(set) var fractionalScaleManager: OpaquePointer?
    private var seats: [Seat] = []
    /// The outputs the compositor announced, in its order.
    public private(set) var outputs: [WaylandOutput] = []
    private var session: OpaquePointer?
    private var unlockCallback: OpaquePointer?
    private var flushQueued = false
    private var waitingWritable = false
    private(set) var failure: WaylandFailure?
    let xkb: OpaquePointer?

    /// What became of the lock, the unlock, or the connection.
    public var onLockEvent: ((SessionLockEvent) -> Void)?
    /// Outputs announced or withdrawn after the start (lock surfaces follow them).
    public var onOutputsChanged: ((_ added: [WaylandOutput], _ removed: [WaylandOutput]) -> Void)?
    /// An output's size in pixels changed after the start (a new mode, transform or scale;
    /// its lock surface configured anew).
    public var onOutputResized: ((WaylandOutput) -> Void)?
    /// A frame of touches on a lock surface (every finger down on that output, the
    /// surface's pixels), with the output and the time.
    public var onTouches: (([ScreenTouch], WaylandOutput, Instant) -> Void)?
    /// A key pressed on a lock surface.
    public var onKey: ((KeyInput, Instant) -> Void)?

    /// Whether the compositor offers ext_session_lock_manager_v1.
    public var offersSessionLock: Bool { lockManager != nil }
    /// Whether the session is locked by us now (`locked` received, no unlock since).
    public var isLocked: Bool { lockedAt != nil }
    /// When the compositor granted the lock held now (its `locked` received), on the
    /// loop's clock; nil while none is held.
    public private(set) var lockedAt: Instant?
    /// Whether a lock was asked for and the compositor has not answered yet.
    public var isAskingForLock: Bool { session != nil && !isLocked && failure == nil }

    /// Connects to `socket` (a name in XDG_RUNTIME_DIR or an absolute path; nil:
    /// WAYLAND_DISPLAY) and learns the globals and the outputs (two roundtrips).
    public init(socket: String?, loop: EventLoop) throws(WaylandFailure) {
        guard let d = wl_display_connect(socket) else {
            let e = Errno.current
            let name = socket ?? Self.defaultSocketName
            if e.rawValue == ENOENT || e.rawValue == ECONNREFUSED { throw .noCompositor(socket: name, e) }
            throw .connectionLost("cannot connect to \(name): \(e)")
        }
        display = d
        self.loop = loop
        fd = wl_display_get_fd(d)
        xkb = xkb_context_new(XKB_CONTEXT_NO_FLAGS)
        registry = wl_display_get_registry(d)
        wl_registry_add_listener(registry, &registryListener, Unmanaged.passUnretained(self).toOpaque())
        // The globals, then what each bound object sends at once (outputs' modes, names).
        for _ in 0..<2 where wl_display_roundtrip(d) < 0 {
            let why = Self.failure(of: d)
            wl_display_disconnect(d)
            throw why
        }
        do {
            try loop.register(fd, .readable) { [unowned self] ready in self.ready(ready) }
        } catch {
            wl_display_disconnect(d)
            throw .connectionLost("\(error)")
        }
    }

    deinit { disconnect() }

    /// Closes the connection as `disconnect` does, but no sooner than `deadline`: the
    /// requests made so far are sent first, then this thread waits (at a stop, the loop
    /// over). A lock held stays with the compositor.
    public func disconnect(notBefore deadline: Instant) {
        if failure == nil, registry != nil {
            _ = wl_display_flush(display)
            let left = deadline - EventLoop.now()
            if left.microseconds > 0 { usleep(useconds_t(clamping: left.microseconds)) }
        }
        disconnect()
    }

    /// WAYLAND_DISPLAY, or libwayland's default.
    public static var defaultSocketName: String {
        getenv("WAYLAND_DISPLAY").map { String(cString: $0) } ?? "wayland-0"
    }

    /// Closes the connection: a lock still held stays (the compositor keeps the session
    /// locked when its locker goes, for the next one to take over).
    public func disconnect() {
        guard failure == nil || registry != nil else { return }
        loop.unregister(fd)
        _ = wl_display_flush(display)
        wl_display_disconnect(display)
        registry = nil
        failure = failure ?? .connectionLost("disconnected")
    }

    // MARK: locking

    /// Asks the compositor to lock the session; `locked` or `finished` follows. Lock
    /// surfaces are made for every output at once (the compositor shows them once locked).
    public func lock() {
        guard failure == nil, let lockManager, session == nil else { return }
        session = ext_session_lock_manager_v1_lock(lockManager)
        lockedAt = nil
        ext_session_lock_v1_add_listener(session, &sessionLockListener, Unmanaged.passUnretained(self).toOpaque())
        for o in outputs { o.makeLockSurface(session!) }
        requestsMade()
    }

    /// Unlocks: unlock_and_destroy, the lock surfaces destroyed, then a roundtrip;
    /// `unlocked` follows when the compositor has it. A lock never granted is withdrawn.
    public func unlock() {
        guard failure == nil, let s = session else {
            onLockEvent?(.unlocked)
            return
        }
        session = nil
        if isLocked {
            ext_session_lock_v1_unlock_and_destroy(s)
        } else {
            ext_session_lock_v1_destroy(s)
        }
        lockedAt = nil
        for o in outputs { o.destroyLockSurface() }
        unlockCallback = wl_display_sync(display)
        wl_callback_add_listener(unlockCallback, &unlockDoneListener, Unmanaged.passUnretained(self).toOpaque())
        requestsMade()
    }

    /// At a stop that gives the screen back: unlocks and waits for the compositor to have
    /// it (a roundtrip), on the spot.
    public func unlockNow() {
        guard failure == nil, let s = session, isLocked else { return }
        session = nil
        lockedAt = nil
        ext_session_lock_v1_unlock_and_destroy(s)
        for o in outputs { o.destroyLockSurface() }
        if wl_display_roundtrip(display) < 0 { Log.warning("wayland: unlock at stop: \(Self.failure(of: display))") }
    }

    fileprivate func sessionEvent(locked: Bool) {
        if locked {
            lockedAt = EventLoop.now()
            Log.info("wayland: the compositor locked the session")
            onLockEvent?(.locked)
            return
        }
        let was = isLocked
        Log.warning("wayland: the compositor ended our session lock (finished\(was ? ", after it was locked" : ": refused"))")
        if let s = session {
            // The lock object goes the way the protocol asks for its state.
            if was { ext_session_lock_v1_unlock_and_destroy(s) } else { ext_session_lock_v1_destroy(s) }
            session = nil
        }
        lockedAt = nil
        for o in outputs { o.destroyLockSurface() }
        requestsMade()
        onLockEvent?(.finished(wasLocked: was))
    }

    fileprivate func unlockDone() {
        if let c = unlockCallback { wl_callback_destroy(c) }
        unlockCallback = nil
        Log.info("wayland: the session is unlocked")
        onLockEvent?(.unlocked)
    }

    // MARK: the loop

    /// Runs `f` on the loop after the current handler.
    func deferred(_ f: @escaping () -> Void) { loop.deferred(f) }

    /// Requests were made this turn: they are flushed before the loop sleeps.
    func requestsMade() {
        guard !flushQueued else { return }
        flushQueued = true
        loop.deferred { [weak self] in
            guard let self else { return }
            self.flushQueued = false
            self.flush()
        }
    }

    private func flush() {
        guard failure == nil else { return }
        if wl_display_flush(display) < 0 {
            let e = Errno.current
            if e == .wouldBlock {
                // The socket is full: flushed again when it can take more.
                if !waitingWritable {
                    waitingWritable = true
                    try? loop.modify(fd, [.readable, .writable])
                }
                return
            }
            fail(.connectionLost("flush: \(e)"))
            return
        }
        if waitingWritable {
            waitingWritable = false
            try? loop.modify(fd, .readable)
        }
    }

    private func ready(_ r: IOReadiness) {
        if r.writable { flush() }
        guard r.readable || r.hangup, failure == nil else { return }
        while wl_display_prepare_read(display) != 0 {
            if wl_display_dispatch_pending(display) < 0 { return fail(Self.failure(of: display)) }
        }
        if wl_display_read_events(display) < 0 { return fail(Self.failure(of: display)) }
        if wl_display_dispatch_pending(display) < 0 { return fail(Self.failure(of: display)) }
        requestsMade()
    }

    private func fail(_ f: WaylandFailure) {
        guard failure == nil else { return }
        failure = f
        Log.error("wayland: \(f)")
        loop.unregister(fd)
        session = nil
        lockedAt = nil
        onLockEvent?(.failed(f))
    }

    static func failure(of d: OpaquePointer) -> WaylandFailure {
        let code = wl_display_get_error(d)
        if code == EPROTO {
            var interface: UnsafePointer<wl_interface>?
            var id: UInt32 = 0
            let c = wl_display_get_protocol_error(d, &interface, &id)
            let name = interface.flatMap { $0.pointee.name.map { String(cString: $0) } } ?? "?"
            return .protocolError(interface: name, code: c, object: id)
        }
        return .connectionLost(code == 0 ? "connection closed" : "\(Errno(rawValue: code))")
    }

    // MARK: globals

    fileprivate func global(name: UInt32, interface: String, version: UInt32) {
        switch interface {
        case "wl_compositor":
            compositor = bind(name, tl_wl_compositor_interface(), min(version, 4))
        case "wl_shm":
            shm = bind(name, tl_wl_shm_interface(), 1)
        case "wl_seat":
            guard let s = bind(name, tl_wl_seat_interface(), min(version, 5)) else { return }
            let seat = Seat(proxy: s, connection: self)
            seats.append(seat)
        case "wl_output":
            // Version 4 names the output (HDMI-A-1) when the compositor offers it.
            guard let o = bind(name, tl_wl_output_interface(), min(version, 4)) else { return }
            let output = WaylandOutput(proxy: o, globalName: name, version: min(version, 4), connection: self)
            outputs.append(output)
        case "ext_session_lock_manager_v1":
            lockManager = bind(name, tl_ext_session_lock_manager_v1_interface(), 1)
            lockManagerVersion = version
        case "wp_viewporter":
            viewporter = bind(name, tl_wp_viewporter_interface(), 1)
        case "wp_fractional_scale_manager_v1":
            fractionalScaleManager = bind(name, tl_wp_fractional_scale_manager_v1_interface(), 1)
        default:
            break
        }
    }

    fileprivate func globalRemoved(name: UInt32) {
        guard let i = outputs.firstIndex(where: { $0.globalName == name }) else { return }
        let o = outputs.remove(at: i)
        Log.info("wayland: output \(o.name) went away")
        o.withdrawn()
        onOutputsChanged?([], [o])
    }

    /// An output announced after the start is ready (its first `done`).
    func outputReady(_ o: WaylandOutput, first: Bool) {
        guard first, isStarted else { return }
        Log.info("wayland: output \(o.name) came: \(o.size.width)x\(o.size.height), scale \(o.scaleText)")
        if let session { o.makeLockSurface(session) }
        onOutputsChanged?([o], [])
        requestsMade()
    }

    /// Tells the owner an output's size changed; false if none is told (before the start).
    @discardableResult
    func outputResized(_ o: WaylandOutput, from before: Size) -> Bool {
        guard isStarted, let onOutputResized else { return false }
        Log.info("wayland: output \(o.name) is now \(o.size.width)x\(o.size.height) pixels (scale \(o.scaleText)),"
                 + " \(before.width)x\(before.height) before")
        onOutputResized(o)
        return true
    }

    /// Set once the start's roundtrips are over: outputs after it are news to the owner.
    public var isStarted = false

    private func bind(_ name: UInt32, _ interface: UnsafePointer<wl_interface>, _ version: UInt32) -> OpaquePointer? {
        wl_registry_bind(registry, name, interface, version).map(OpaquePointer.init)
    }

    /// The output a surface is, when it is one of our lock surfaces.
    func output(of surface: OpaquePointer?) -> WaylandOutput? {
        outputs.first { $0.surface != nil && $0.surface == surface }
    }
}

// MARK: listeners (C function pointers: no captures; `data` is the Swift object)

private func connection(_ data: UnsafeMutableRawPointer?) -> WaylandConnection {
    Unmanaged<WaylandConnection>.fromOpaque(data!).takeUnretainedValue()
}

nonisolated(unsafe) private var registryListener = wl_registry_listener(
    global: { data, _, name, interface, version in
        connection(data).global(name: name, interface: String(cString: interface!), version: version)
    },
    global_remove: { data, _, name in connection(data).globalRemoved(name: name) }
)

nonisolated(unsafe) private var sessionLockListener = ext_session_lock_v1_listener(
    locked: { data, _ in connection(data).sessionEvent(locked: true) },
    finished: { data, _ in connection(data).sessionEvent(locked: false) }
)

nonisolated(unsafe) private var unlockDoneListener = wl_callback_listener(
    done: { data, _, _ in connection(data).unlockDone() }
)
