import CWayland
import Glibc
import TouchlockCore
import TouchlockDisplay
import TouchlockPixels
import TouchlockSystem

/// One of the compositor's outputs, as a display the presenter draws for: while the
/// session is locked, a lock surface on it shows the frames, copied from the shadow buffer
/// into wl_shm buffers (a memfd pool of two: one in flight, the other drawn into once the
/// compositor released it; only the damage, plus what that buffer missed). A frame
/// "completes" at the surface's frame callback. Before the lock surface's first
/// configure, a frame waits (the display is busy) and is shown whole at it.
///
/// The buffers have the output's own pixels. At an integer scale they are the surface's
/// size times wl_output.scale (wl_surface.set_buffer_scale). When the compositor offers
/// viewporter and fractional-scale-v1, they are the surface's size times the scale the
/// compositor prefers for the surface, in 120ths (1.5 is 180), rounded as the protocol
/// asks, and the viewport shows them at the surface's size: at 1.5 a 1280x720 output gets
/// 1280x720 buffers, where without the protocol it got 1706x960 at scale 2, which the
/// compositor scaled down.
public final class WaylandOutput: Display {
    let proxy: OpaquePointer
    let globalName: UInt32
    private unowned let connection: WaylandConnection
    /// The size in pixels: the output's current mode, turned by its transform; while a
    /// lock surface is configured, its size times the scale its buffers are drawn at
    /// (`pixelsPerUnit`). A change after the start is told (`onOutputResized`): the lock
    /// screen is laid out again.
    public private(set) var size = Size(width: 0, height: 0)
    /// The compositor turns what we draw: nothing to turn here.
    public var rotation: Rotation { .degrees0 }
    public private(set) var physicalSize: (width: Int, height: Int)?
    public private(set) var name: String
    public private(set) var state: OutputState
    public var onFrameComplete: ((Instant) -> Void)?
    public var onStateChanged: (() -> Void)?
    public var onRedrawNeeded: (() -> Void)?
    /// wl_output.scale: buffers are this many pixels per surface unit.
    public private(set) var scale: Int32 = 1
    private var mode = Size(width: 0, height: 0)
    private var transform: Int32 = 0
    private var announced = false

    var surface: OpaquePointer?
    private var lockSurface: OpaquePointer?
    /// The lock surface's size in its own units, from its last configure.
    private var surfaceUnits: Size?
    /// The scale the lock surface's buffers are drawn at (the buffer scale given to it,
    /// or the fractional scale its viewport shows), applied at its next commit.
    private var drawnAt = SurfaceScale.buffer(1)
    /// With viewporter and fractional-scale-v1: the lock surface's viewport (its size in
    /// units, set apart from its buffers'), its fractional scale object, and the scale
    /// the compositor prefers for this output's surface, in 120ths (kept for the next
    /// lock surface: the compositor tells a new one only once it is shown).
    private var viewport: OpaquePointer?
    private var viewportUnits: Size?
    private var fractionalScale: OpaquePointer?
    private var preferredScale120: UInt32?
    /// wl_output.scale when that preferred scale came: once the output's scale changed
    /// (set back to 1 while unlocked), a new lock surface does not start at the old one.
    private var preferredAtScale: Int32 = 0
    private var refitQueued = false
    /// The serial of the configure to acknowledge before the next commit.
    private var configured = false
    private var buffers: [ShmBuffer] = []
    private var frameCallback: OpaquePointer?
    /// The shadow buffer the presenter draws into (the same one every time) and what of it
    /// waits for the lock surface's configure.
    private var waitingShadow: ShadowBuffer?
    private var waitingDamage: Damage?
    private var handedOver = false
    /// Frames committed to the compositor.
    public private(set) var frames = 0

    init(proxy: OpaquePointer, globalName: UInt32, version: UInt32, connection: WaylandConnection) {
        self.proxy = proxy
        self.globalName = globalName
        self.connection = connection
        name = "wayland-\(globalName)"
        state = OutputState(name: name)
        wl_output_add_listener(proxy, &outputListener, Unmanaged.passUnretained(self).toOpaque())
    }

    public var isBusy: Bool {
        frameCallback != nil || waitingShadow != nil || (configured && !buffers.contains { !$0.busy })
    }

    // MARK: the output's description

    fileprivate func geometry(physicalWidth: Int32, physicalHeight: Int32, transform: Int32) {
        if physicalWidth > 0 && physicalHeight > 0 { physicalSize = (Int(physicalWidth), Int(physicalHeight)) }
        self.transform = transform
    }

    fileprivate func mode(flags: UInt32, width: Int32, height: Int32) {
        guard flags & WL_OUTPUT_MODE_CURRENT.rawValue != 0 else { return }
        mode = Size(width: Int(width), height: Int(height))
    }

    fileprivate func named(_ n: String) {
        name = n
        state = OutputState(name: n, handedOver: state.phase == .handedOver)
    }

    fileprivate func done() {
        // Transforms 90 and 270 (and their flipped forms, 5 and 7) swap the sides.
        let turned = transform % 2 == 1
        let before = size
        if configured {
            // A new scale while locked: the same surface, buffers of its new pixels. With a
            // viewport, the configure and the preferred scale that follow it say them.
            if viewport == nil { guard fitSurface() else { return } }
        } else {
            size = turned ? Size(width: mode.height, height: mode.width) : mode
        }
        let first = !announced
        announced = true
        connection.outputReady(self, first: first)
        if !first && size != before { connection.outputResized(self, from: before) }
    }

    fileprivate func scaled(_ s: Int32) { scale = max(1, s) }

    /// The buffers' pixels per surface unit: touches come in units and are turned into
    /// pixels by it.
    public var pixelsPerUnit: Double { drawnAt.pixelsPerUnit }

    /// The scale the next buffers are drawn at: with a viewport, the compositor's preferred
    /// scale (the integer one until it says), else the integer scale.
    private var wantedScale: SurfaceScale {
        guard viewport != nil else { return .buffer(Int(scale)) }
        let preferred = preferredAtScale == scale ? preferredScale120 : nil
        return .fractional(per120: Int(preferred ?? UInt32(scale) * 120))
    }

    /// The scale as a log line says it: "2", "1.5".
    var scaleText: String { lockSurface != nil ? "\(drawnAt)" : "\(scale)" }

    /// fractional-scale-v1's preferred_scale. While configured, the buffers follow once the
    /// events read with it are handled: a compositor that changes the output's scale sends
    /// the new preferred scale and the configure of the surface's new size together, and
    /// the buffers are made once, for both.
    fileprivate func preferred(scale120 s: UInt32) {
        guard s > 0, s != preferredScale120 || preferredAtScale != scale else { return }
        preferredScale120 = s
        preferredAtScale = scale
        guard configured, !refitQueued else { return }
        refitQueued = true
        loop { self.refitForPreferredScale() }
    }

    private func refitForPreferredScale() {
        refitQueued = false
        guard configured, wantedScale != drawnAt else { return }
        let before = size
        guard fitSurface() else { return }
        if size != before { connection.outputResized(self, from: before) }
        connection.requestsMade()
    }

    // MARK: the lock surface

    func makeLockSurface(_ session: OpaquePointer) {
        guard lockSurface == nil, let compositor = connection.compositor else { return }
        surface = wl_compositor_create_surface(compositor)
        if let viewporter = connection.viewporter, let manager = connection.fractionalScaleManager {
            // Buffer scale 1: the viewport gives the surface its size in units.
            viewport = wp_viewporter_get_viewport(viewporter, surface)
            fractionalScale = wp_fractional_scale_manager_v1_get_fractional_scale(manager, surface)
            wp_fractional_scale_v1_add_listener(fractionalScale, &fractionalScaleListener,
                                                Unmanaged.passUnretained(self).toOpaque())
        } else {
            wl_surface_set_buffer_scale(surface, scale)
        }
        drawnAt = wantedScale
        surfaceUnits = nil
        viewportUnits = nil
        lockSurface = ext_session_lock_v1_get_lock_surface(session, surface, proxy)
        ext_session_lock_surface_v1_add_listener(lockSurface, &lockSurfaceListener, Unmanaged.passUnretained(self).toOpaque())
        configured = false
    }

    func destroyLockSurface() {
        if let c = frameCallback { wl_callback_destroy(c) }
        frameCallback = nil
        if let v = viewport { wp_viewport_destroy(v) }
        if let f = fractionalScale { wp_fractional_scale_v1_destroy(f) }
        if let l = lockSurface { ext_session_lock_surface_v1_destroy(l) }
        if let s = surface { wl_surface_destroy(s) }
        viewport = nil
        viewportUnits = nil
        fractionalScale = nil
        lockSurface = nil
        surface = nil
        surfaceUnits = nil
        configured = false
        // A buffer the compositor still held is free once the surface is gone.
        for b in buffers { b.busy = false }
        completeWaiting()
    }

    fileprivate func configure(serial: UInt32, width: UInt32, height: UInt32) {
        guard let lockSurface else { return }
        ext_session_lock_surface_v1_ack_configure(lockSurface, serial)
        surfaceUnits = Size(width: Int(width), height: Int(height))
        let before = size
        let first = !configured
        configured = true
        guard fitSurface() else { return }
        if size != before, connection.outputResized(self, from: before) {
            // A frame drawn for the old size is not shown: the lock screen laid out for the
            // new one comes instead (until then a frame is drawn clipped to these buffers,
            // which the compositor accepts).
            waitingShadow = nil
            waitingDamage = nil
        } else if first, let shadow = waitingShadow {
            // The frame that waited for this configure, whole.
            waitingShadow = nil
            waitingDamage = nil
            commit(shadow, damage: Damage(bounds: size))
        } else if !first {
            onRedrawNeeded?()
        }
        connection.requestsMade()
    }

    /// Two buffers for the lock surface's last configure at the scale it is drawn at, and
    /// the buffer scale or the viewport's size that shows them at the configured size;
    /// `size` becomes their size. Every commit after an acknowledged configure must match
    /// it (the compositor ends the connection otherwise), so all are set before the next
    /// commit. False if no buffer could be made.
    private func fitSurface() -> Bool {
        guard let surface, let units = surfaceUnits else { return true }
        let scale = wantedScale
        if let viewport {
            if viewportUnits != units {
                wp_viewport_set_destination(viewport, Int32(units.width), Int32(units.height))
                viewportUnits = units
            }
        } else if scale != drawnAt, case .buffer(let s) = scale {
            wl_surface_set_buffer_scale(surface, Int32(s))
        }
        if scale != drawnAt {
            Log.info("wayland: output \(name) is drawn at scale \(scale), a surface of \(units.width)x\(units.height) units")
        }
        drawnAt = scale
        let wanted = scale.pixels(for: units)
        size = wanted
        if buffers.first?.size != wanted {
            buffers = []
            for _ in 0..<2 {
                do {
                    let b = try ShmBuffer(connection: connection, size: wanted)
                    b.owner = self
                    buffers.append(b)
                } catch {
                    Log.error("wayland: output \(name): no buffer: \(error)")
                    fail(.flipFailed("\(error)"))
                    return false
                }
            }
        }
        for b in buffers { b.missed.addAll() }
        return true
    }

    // MARK: Display

    public func present(_ shadow: ShadowBuffer, damage: Damage) throws(SystemError) {
        guard connection.failure == nil else { throw SystemError("wl_surface.commit", Errno(rawValue: EPIPE), "the compositor is gone") }
        guard configured, lockSurface != nil else {
            // Not on the screen yet: shown whole at the configure (or dropped at the unlock).
            waitingShadow = shadow
            waitingDamage = damage
            return
        }
        commit(shadow, damage: damage)
    }

    private func commit(_ shadow: ShadowBuffer, damage: Damage) {
        guard let surface, let buffer = buffers.first(where: { !$0.busy }) else { return }
        var rects = damage
        rects.formUnion(buffer.missed)
        let clipped = rects.rects.compactMap { r -> PixelRect? in
            let c = r.intersection(PixelRect(x: 0, y: 0, width: min(shadow.size.width, buffer.size.width),
                                             height: min(shadow.size.height, buffer.size.height)))
            return c.isEmpty ? nil : c
        }
        shadow.copy(clipped, to: buffer.pixels, stride: buffer.stride)
        buffer.missed.removeAll()
        for other in buffers where other !== buffer { other.missed.formUnion(damage) }
        wl_surface_attach(surface, buffer.proxy, 0, 0)
        for r in clipped { wl_surface_damage_buffer(surface, Int32(r.x), Int32(r.y), Int32(r.width), Int32(r.height)) }
        frameCallback = wl_surface_frame(surface)
        wl_callback_add_listener(frameCallback, &frameListener, Unmanaged.passUnretained(self).toOpaque())
        wl_surface_commit(surface)
        buffer.busy = true
        frames += 1
        connection.requestsMade()
    }

    fileprivate func frameDone() {
        if let c = frameCallback { wl_callback_destroy(c) }
        frameCallback = nil
        onFrameComplete?(EventLoop.now())
    }

    /// A buffer came back: a frame that waited for one may go now.
    fileprivate func bufferReleased() {
        if frameCallback == nil { onFrameComplete?(EventLoop.now()) }
    }

    /// Nothing will show what waits (the lock surface went): it counts as shown.
    private func completeWaiting() {
        guard waitingShadow != nil || frameCallback != nil else { return }
        waitingShadow = nil
        waitingDamage = nil
        loop { self.onFrameComplete?(EventLoop.now()) }
    }

    private func loop(_ f: @escaping () -> Void) { connection.deferred(f) }

    /// After an unlock: nothing is shown until the next lock.
    public func release() throws(SystemError) {
        handedOver = true
        change(state.released())
    }

    public func acquire() throws(SystemError) {
        handedOver = false
        change(state.acquired())
    }

    private func fail(_ r: OutputState.Reason) {
        switch r {
        case .flipFailed(let why): change(state.failed(.flip, why))
        default: change(state.failed(.flip, "\(r)"))
        }
    }

    private func change(_ actions: [OutputState.Action]) {
        for a in actions {
            switch a {
            case .changed: onStateChanged?()
            case .redraw: onRedrawNeeded?()
            case .armFlipTimer, .disarmFlipTimer, .abandonFlip, .stopEvents, .reacquire, .frameShown:
                break
            }
        }
    }

    /// The compositor withdrew the output: its surface goes.
    func withdrawn() {
        destroyLockSurface()
        wl_output_release_or_destroy()
    }

    private func wl_output_release_or_destroy() {
        if wl_proxy_get_version(proxy) >= 3 { wl_output_release(proxy) } else { wl_output_destroy(proxy) }
    }

    public func shutdown() {}
    public func leaveOnScreen() {}
}

/// A wl_buffer in a memfd of its own, XRGB8888 (the shadow buffer's pixels as they are).
final class ShmBuffer {
    let proxy: OpaquePointer
    let size: Size
    let stride: Int
    let pixels: UnsafeMutableRawPointer
    private let length: Int
    /// Committed and not released by the compositor yet.
    var busy = false
    /// What was drawn into the other buffer since this one was last drawn.
    var missed: Damage
    /// Told when the compositor gives this buffer back.
    weak var owner: WaylandOutput?
    private unowned let connection: WaylandConnection

    init(connection: WaylandConnection, size: Size) throws(SystemError) {
        self.connection = connection
        self.size = size
        stride = size.width * 4
        length = stride * size.height
        missed = Damage(bounds: size)
        missed.addAll()
        let fd = tl_memfd("touchlock-wl-shm")
        guard fd >= 0 else { throw SystemError("memfd_create", .current) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(length)) == 0 else { throw SystemError("ftruncate", .current) }
        guard let map = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), map != MAP_FAILED else {
            throw SystemError("mmap", .current)
        }
        pixels = map
        let pool = wl_shm_create_pool(connection.shm, fd, Int32(length))
        proxy = wl_shm_pool_create_buffer(pool, 0, Int32(size.width), Int32(size.height), Int32(stride),
                                          WL_SHM_FORMAT_XRGB8888.rawValue)!
        wl_shm_pool_destroy(pool)
        wl_buffer_add_listener(proxy, &bufferListener, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        wl_buffer_destroy(proxy)
        munmap(pixels, length)
        connection.requestsMade()
    }

    fileprivate func released() { busy = false }
}

private func output(_ data: UnsafeMutableRawPointer?) -> WaylandOutput {
    Unmanaged<WaylandOutput>.fromOpaque(data!).takeUnretainedValue()
}

nonisolated(unsafe) private var outputListener = wl_output_listener(
    geometry: { data, _, _, _, pw, ph, _, _, _, transform in
        output(data).geometry(physicalWidth: pw, physicalHeight: ph, transform: transform)
    },
    mode: { data, _, flags, w, h, _ in output(data).mode(flags: flags, width: w, height: h) },
    done: { data, _ in output(data).done() },
    scale: { data, _, s in output(data).scaled(s) },
    name: { data, _, n in output(data).named(String(cString: n!)) },
    description: { _, _, _ in }
)

nonisolated(unsafe) private var lockSurfaceListener = ext_session_lock_surface_v1_listener(
    configure: { data, _, serial, w, h in output(data).configure(serial: serial, width: w, height: h) }
)

nonisolated(unsafe) private var fractionalScaleListener = wp_fractional_scale_v1_listener(
    preferred_scale: { data, _, s in output(data).preferred(scale120: s) }
)

nonisolated(unsafe) private var frameListener = wl_callback_listener(
    done: { data, _, _ in output(data).frameDone() }
)

nonisolated(unsafe) private var bufferListener = wl_buffer_listener(
    release: { data, _ in
        let b = Unmanaged<ShmBuffer>.fromOpaque(data!).takeUnretainedValue()
        b.released()
        b.owner?.bufferReleased()
    }
)
