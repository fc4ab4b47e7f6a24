import CDrm
import Glibc
import TouchlockCore
import TouchlockPixels
import TouchlockSystem

/// One KMS output (a connector on its own CRTC) of a `DrmCard`, driven with two dumb
/// buffers and page flips (legacy KMS API), in the order of drm-howto's modeset-vsync.c:
///
/// connected connector -> mode -> free encoder + CRTC -> save the CRTC -> two dumb buffers
/// (create, AddFB, map, mmap) -> first present: SetCrtc -> later presents: copy damage into
/// the back buffer, PageFlip with an event -> the event (read by the card on the loop with
/// drmHandleEvent) swaps front and back.
///
/// Scanout memory is only written, never read: each buffer keeps the damage it missed while
/// the other one was shown (buffer age 2), and a present copies that plus the new damage
/// from the shadow buffer. Losing the display (master taken, a flip failing, events that
/// cannot be read, a flip that never completes) moves `state` (an `OutputState`), whose
/// actions this carries out; `retry` tries again.
public final class DrmDisplay: Display {
    /// The logical size: the mode's, turned by `rotation`.
    public let size: Size
    /// How the picture is turned on the panel: `[display] rotation`, else the connector's
    /// "panel orientation", else none.
    public let rotation: Rotation
    public let physicalSize: (width: Int, height: Int)?
    /// A flip is in flight, or its completion is held until a refresh period has passed.
    public var isBusy: Bool { state.flipPending || paceTimer != nil }
    public var isHoldingFrame: Bool { paceTimer != nil }
    public var onFrameComplete: ((Instant) -> Void)?
    public var onStateChanged: (() -> Void)?
    public var onRedrawNeeded: (() -> Void)?
    public private(set) var state: OutputState

    /// The card, which holds its outputs.
    public unowned let card: DrmCard
    /// Opened alone (`open`): the output keeps its card until it shuts down.
    private var ownCard: DrmCard?
    /// The device node, e.g. /dev/dri/card0.
    public var devicePath: String { card.path }
    /// The connector's name, e.g. Virtual-1 or HDMI-A-1.
    public let connectorName: String
    public var name: String { connectorName }
    public var cardNode: String? { card.path.split(separator: "/").last.map(String.init) }

    private var fd: Int32 { card.fd }
    private var loop: EventLoop { card.loop }
    private(set) var connectorID: UInt32
    let crtcID: UInt32
    private var mode: drmModeModeInfo
    /// The CRTC as it was before us, restored by shutdown (nil if it could not be read).
    private let savedCrtc: drmModeCrtc?
    /// The two scanout buffers; each frees itself (unmap, RmFB, destroy) when dropped,
    /// and shutdown drops the second before the first.
    private var buffers: [DumbBuffer]
    /// Per buffer, what it lacks of the shadow buffer's current content.
    private var missing: [Damage]
    /// The buffer on screen, and the one a pending flip will put there.
    private var front = 0
    private var flipTarget = 0
    private var modeSet = false
    private var isShutDown = false
    private var flipTimer: EventLoop.TimerID?
    /// One refresh of the mode (nil if the mode gives no clock or refresh rate).
    let refreshPeriod: Interval?
    /// When the last frame was shown (nil before the first flip, and for a mode set, which is
    /// not paced).
    private var lastShown: Instant?
    /// Holds back a flip's completion that came less than a refresh period after the one
    /// before (a driver without vblank, e.g. bochs, completes flips at once): at most one
    /// frame per refresh, the damage meanwhile going into the next. A driver that completes
    /// flips at vblank shows them a period apart and is never held.
    private var paceTimer: EventLoop.TimerID?
    /// Not ours to show on now (handed over, or lost).
    public var isReleased: Bool { !state.isActive }

    // MARK: opening

    /// Opens `path`, or else the first /dev/dri/card* that has a connected output we can
    /// drive, for its first output; the card closes when this output shuts down.
    /// `rotation` (the config's) wins over the connector's panel orientation.
    public static func open(path: String? = nil, loop: EventLoop, rotation: Rotation? = nil) throws(SystemError) -> DrmDisplay {
        let candidates = path.map { [$0] } ?? DrmCard.cardNodes()
        var lastError = SystemError("open", .noEntry, "/dev/dri/card*: no DRM device")
        for candidate in candidates {
            do throws(SystemError) {
                let card = try DrmCard(path: candidate, loop: loop, connectors: [], mode: nil, rotation: rotation,
                                       closeWhenEmpty: true)
                let output = card.outputs[0]
                output.ownCard = card
                return output
            } catch {
                Log.info("drm: \(candidate) not usable: \(error)")
                lastError = error
            }
        }
        throw lastError
    }

    /// `rotation`: `[display] rotation` (nil: the connector's panel orientation, if any).
    init(card: DrmCard, connectorID: UInt32, name: String, crtcID: UInt32, mode: drmModeModeInfo,
         physicalSize: (width: Int, height: Int)?, rotation: Rotation?) throws(SystemError) {
        // Each step owns what it acquired: if a later step throws, what exists so far is
        // released in reverse order as it goes out of scope.
        let drm = DrmCalls.current
        var saved: drmModeCrtc?
        if let crtc = drm.getCrtc(card.fd, crtcID) {
            saved = crtc.pointee
            drm.freeCrtc(crtc)
        } else {
            Log.warning("drm: cannot read CRTC \(crtcID) (\(Errno.current)); it will not be restored")
        }
        let panelSize = Size(width: Int(mode.hdisplay), height: Int(mode.vdisplay))
        var buffers: [DumbBuffer] = []
        for _ in 0..<2 { buffers.append(try DumbBuffer(fd: card.fd, size: panelSize)) }
        let orientation = Self.panelOrientation(fd: card.fd, connectorID: connectorID)
        let turn = rotation ?? orientation ?? .degrees0
        let size = turn.logicalSize(panel: panelSize)

        self.card = card
        self.connectorID = connectorID
        self.connectorName = name
        self.crtcID = crtcID
        self.mode = mode
        self.refreshPeriod = Self.refreshPeriod(of: mode)
        self.savedCrtc = saved
        self.buffers = buffers
        self.size = size
        self.rotation = turn
        self.physicalSize = turn.logical(millimetres: physicalSize)
        self.state = OutputState(name: name)
        // Neither buffer holds anything yet: each lacks the whole frame, so each gets a
        // full copy before it is first scanned out (SetCrtc, then the first flip to it).
        var all = Damage(bounds: size)
        all.addAll()
        self.missing = [all, all]
        let refresh = mode.vrefresh
        Log.info("drm: \(card.path): \(name) \(panelSize.width)x\(panelSize.height)@\(refresh)Hz on CRTC \(crtcID)"
                 + (physicalSize.map { ", \($0.width)x\($0.height) mm" } ?? "")
                 + ", rotation \(turn) (\(rotation != nil ? "[display] rotation" : orientation != nil ? "panel orientation" : "default"))")
    }

    deinit { shutdown() }

    /// One refresh of `mode`: from its pixel clock and totals, else from its rounded rate.
    static func refreshPeriod(of mode: drmModeModeInfo) -> Interval? {
        let pixels = Int64(mode.htotal) * Int64(mode.vtotal)
        if mode.clock > 0, pixels > 0 { return Interval(microseconds: pixels * 1000 / Int64(mode.clock)) }
        if mode.vrefresh > 0 { return Interval(microseconds: 1_000_000 / Int64(mode.vrefresh)) }
        return nil
    }

    // MARK: frames

    public func present(_ shadow: ShadowBuffer, damage: Damage) throws(SystemError) {
        precondition(shadow.size == size, "shadow buffer \(shadow.size) does not match the mode \(size)")
        if isShutDown { throw SystemError("present", .noDevice, "\(devicePath) \(connectorName): output shut down") }
        guard state.isActive else {
            throw SystemError("present", .notPermitted, "\(devicePath) \(connectorName): \(state.reason.map { "inactive: \($0)" } ?? "display released (DRM master dropped)")")
        }
        if isBusy {
            Log.bug("drm: present while a frame is in flight")
            throw SystemError("drmModePageFlip", .busy, "a flip is already pending")
        }
        if buffers.count < 2 {
            // The card was opened again and no buffers could be made on it: made now.
            try rebuildBuffers()
        }
        let target = modeSet ? 1 - front : 0
        var copy = missing[target]
        copy.formUnion(damage)
        let b = buffers[target]
        shadow.copy(copy.rects, to: b.map, stride: b.pitch, rotation: rotation)
        // The target is now the shadow's equal; every other buffer also lacks this damage.
        missing[target].removeAll()
        for i in buffers.indices where i != target { missing[i].formUnion(damage) }

        let sequence = card.nextSequence()
        if !modeSet {
            try masterCall("drmModeSetCrtc") {
                DrmCalls.current.setCrtc(fd, crtcID, b.fbID, 0, 0, &connectorID, 1, &mode)
            }
            modeSet = true
            card.modeSet()
            front = 0
            flipTarget = 0
            lastShown = nil
            perform(state.submitted(sequence, at: EventLoop.now()))
            // SetCrtc is synchronous; complete the frame on the next turn of the loop, like a flip.
            loop.deferred { [weak self] in
                guard let self, !self.isShutDown else { return }
                self.flipCompleted(sequence: sequence, at: EventLoop.now())
            }
            return
        }
        try masterCall("drmModePageFlip") {
            DrmCalls.current.pageFlip(fd, crtcID, b.fbID, UInt32(DRM_MODE_PAGE_FLIP_EVENT),
                                      UnsafeMutableRawPointer(bitPattern: UInt(sequence)))
        }
        flipTarget = target
        perform(state.submitted(sequence, at: EventLoop.now()))
    }

    public func release() throws(SystemError) {
        guard !isShutDown else { return }
        perform(state.released())
        try card.outputHandedOver()
    }

    public var holdsMaster: Bool { !isShutDown && card.holdsMaster }

    public func showAgain() {
        guard !isShutDown, state.isActive, card.holdsMaster else { return }
        forgetScreen()
        onRedrawNeeded?()
    }

    public func acquire() throws(SystemError) {
        guard !isShutDown else { return }
        // Opened while another process drove the display (a kiosk, before our VT was
        // shown): master is taken here too.
        guard !state.isActive || !card.holdsMaster else { return }
        do throws(SystemError) {
            try card.takeMaster()
            try card.startEvents()
        } catch {
            perform(state.failed(.notMaster, "\(error)"))
            throw error
        }
        // Whoever drove the display meanwhile left anything on it: set the mode again and
        // repaint everything.
        forgetScreen()
        perform(state.acquired())
    }

    public func retry(_ trigger: OutputState.Trigger) {
        guard !isShutDown else { return }
        perform(state.retry(trigger))
    }

    /// Switches the connector off or on through its "DPMS" property (the legacy power
    /// control every KMS driver has); the CRTC keeps its mode and buffers.
    public func setPowered(_ on: Bool) throws(SystemError) {
        guard state.isActive, !isShutDown else { return }
        let drm = DrmCalls.current
        let props = try SystemCall.checkPointer("drmModeObjectGetProperties", "\(connectorName)") {
            drm.getObjectProperties(fd, connectorID, UInt32(DRM_MODE_OBJECT_CONNECTOR))
        }
        defer { drm.freeObjectProperties(props) }
        var dpms: UInt32?
        for i in 0..<Int(props.pointee.count_props) {
            guard let p = drm.getProperty(fd, props.pointee.props[i]) else { continue }
            defer { drm.freeProperty(p) }
            let name = withUnsafeBytes(of: p.pointee.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "DPMS" { dpms = p.pointee.prop_id }
        }
        guard let dpms else { throw SystemError("setPowered", Errno(rawValue: ENOTSUP), "\(connectorName) has no DPMS property") }
        let value = UInt64(on ? DRM_MODE_DPMS_ON : DRM_MODE_DPMS_OFF)
        try masterCall("drmModeConnectorSetProperty") { drm.connectorSetProperty(fd, connectorID, dpms, value) }
        Log.info("drm: \(connectorName) \(on ? "on" : "off (blank)")")
    }

    /// A mode-setting call; EACCES/EPERM mean another process is DRM master now. A
    /// failure makes the output inactive.
    private func masterCall(_ call: String, _ body: () -> Int32) throws(SystemError) {
        do throws(SystemError) {
            _ = try SystemCall.checkNegative(call, "\(devicePath) \(connectorName) CRTC \(crtcID)", body)
        } catch {
            if error.errno == .permissionDenied || error.errno == .notPermitted {
                let lost = SystemError(call, error.errno, "\(devicePath) \(connectorName) CRTC \(crtcID): not DRM master (the display was taken by another process)")
                perform(state.failed(.notMaster, "\(lost)"))
                throw lost
            }
            perform(state.failed(.flip, "\(error)"))
            throw error
        }
    }

    /// The card was opened again (`DrmCard.takeMaster`): the buffers of the old descriptor
    /// are freed while it is still open, and two new ones made on the new one, each lacking
    /// the whole frame; the mode is set again at the next present.
    func rebuildBuffers() throws(SystemError) {
        guard !isShutDown else { return }
        while !buffers.isEmpty { buffers.removeLast() }
        let panelSize = Size(width: Int(mode.hdisplay), height: Int(mode.vdisplay))
        var fresh: [DumbBuffer] = []
        for _ in 0..<2 { fresh.append(try DumbBuffer(fd: fd, size: panelSize)) }
        buffers = fresh
        front = 0
        flipTarget = 0
        forgetScreen()
    }

    /// Nothing of ours can be assumed on the screen: the mode is set again and each buffer
    /// gets the whole frame.
    private func forgetScreen() {
        modeSet = false
        for i in missing.indices { missing[i].addAll() }
    }

    /// Carries out the state machine's actions.
    private func perform(_ actions: [OutputState.Action]) {
        for a in actions {
            switch a {
            case .armFlipTimer(let t):
                if let id = flipTimer { loop.cancel(id) }
                flipTimer = loop.schedule(at: t) { [weak self] now in
                    guard let self else { return }
                    self.flipTimer = nil
                    self.perform(self.state.timerFired(at: now))
                }
            case .disarmFlipTimer:
                if let id = flipTimer { loop.cancel(id) }
                flipTimer = nil
            case .abandonFlip:
                forgetScreen()
            case .stopEvents:
                card.stopEvents()
            case .reacquire:
                var error: String?
                do throws(SystemError) {
                    try card.takeMaster()
                    try card.startEvents()
                    forgetScreen()
                } catch let e {
                    error = "\(e)"
                }
                perform(state.reacquired(error: error))
            case .frameShown(let t):
                front = flipTarget
                // Sooner than a refresh after the frame before (an eighth of a period of
                // slack for a vblank's jitter): the next frame waits for the refresh.
                // The loop's clock, not the event's: a mode set completes without one.
                let now = EventLoop.now()
                if let period = refreshPeriod, let last = lastShown,
                   now < last + Interval(microseconds: period.microseconds * 7 / 8), !isShutDown {
                    paceTimer = loop.schedule(at: last + period) { [weak self] firedAt in
                        guard let self else { return }
                        self.paceTimer = nil
                        self.lastShown = firedAt
                        if !self.isShutDown { self.onFrameComplete?(t) }
                    }
                } else {
                    lastShown = now
                    if !isShutDown { onFrameComplete?(t) }
                }
            case .redraw:
                if !isShutDown { onRedrawNeeded?() }
            case .changed:
                if !isShutDown { onStateChanged?() }
            }
        }
    }

    func flipCompleted(sequence: UInt64, at time: Instant) {
        perform(state.completed(sequence, at: time))
    }

    func eventsFailed(_ why: String) {
        perform(state.failed(.events, why))
    }

    // MARK: shutdown

    /// Buffers left on the screen at a stop while locked (`leaveOnScreen`): never freed by
    /// this process, which is about to exit; the kernel frees them with the card's file.
    nonisolated(unsafe) private static var leftOnScreen: [DumbBuffer] = []

    /// The daemon stops while locked: the output is left as it is, its frame on the screen
    /// (its card's `leaveOnScreen` leaves the card too).
    public func leaveOnScreen() {
        if isShutDown { return }
        isShutDown = true
        if let id = flipTimer { loop.cancel(id) }
        flipTimer = nil
        if let id = paceTimer { loop.cancel(id) }
        paceTimer = nil
        Self.leftOnScreen += buffers
        buffers = []
    }

    public func shutdown() {
        if isShutDown { return }
        isShutDown = true
        if let id = flipTimer { loop.cancel(id) }
        flipTimer = nil
        if let id = paceTimer { loop.cancel(id) }
        paceTimer = nil
        let drm = DrmCalls.current

        // A flip cannot be cancelled: wait for its event before touching the buffers.
        if isBusy && modeSet { card.drainEvents() }

        // Only what we still own is restored: after a hand-over (master dropped, or never
        // taken from the kiosk) or a loss the CRTC is someone else's, who repaints it.
        if modeSet, state.isActive, card.holdsMaster, card.restoresScreenAtShutdown, var s = savedCrtc {
            let r: Int32
            if s.buffer_id != 0 && s.mode_valid != 0 {
                r = drm.setCrtc(fd, s.crtc_id, s.buffer_id, s.x, s.y, &connectorID, 1, &s.mode)
            } else {
                r = drm.setCrtc(fd, s.crtc_id, 0, 0, 0, nil, 0, nil)
            }
            if r < 0 { Log.warning("drm: restoring CRTC \(s.crtc_id): \(Errno(rawValue: -r))") }
        }
        // Release in reverse order of acquisition: the second buffer, then the first.
        while !buffers.isEmpty { buffers.removeLast() }
        Log.info("drm: \(devicePath): \(connectorName) released")
        card.outputShutDown(ObjectIdentifier(self))
        ownCard = nil
    }
}

/// A GEM dumb buffer; destroyed when dropped.
private struct DumbHandle: ~Copyable {
    let fd: Int32
    let handle: UInt32
    let pitch: UInt32
    let byteCount: UInt64

    init(fd: Int32, size: Size) throws(SystemError) {
        var handle: UInt32 = 0, pitch: UInt32 = 0, bytes: UInt64 = 0
        try SystemCall.checkNegative("drmModeCreateDumbBuffer", "\(size.width)x\(size.height)") {
            DrmCalls.current.createDumbBuffer(fd, UInt32(size.width), UInt32(size.height), 32, &handle, &pitch, &bytes)
        }
        self.fd = fd
        self.handle = handle
        self.pitch = pitch
        self.byteCount = bytes
    }

    deinit { _ = DrmCalls.current.destroyDumbBuffer(fd, handle) }
}

/// A framebuffer (XRGB8888: depth 24, bpp 32) on a dumb buffer, which it owns: dropping
/// it removes the framebuffer, then destroys the buffer.
private struct Framebuffer: ~Copyable {
    let dumb: DumbHandle
    let fbID: UInt32

    init(on dumb: consuming DumbHandle, size: Size) throws(SystemError) {
        var fbID: UInt32 = 0
        let (fd, pitch, handle) = (dumb.fd, dumb.pitch, dumb.handle)
        try SystemCall.checkNegative("drmModeAddFB") {
            DrmCalls.current.addFB(fd, UInt32(size.width), UInt32(size.height), 24, 32, pitch, handle, &fbID)
        }
        self.dumb = dumb
        self.fbID = fbID
    }

    deinit { _ = DrmCalls.current.rmFB(dumb.fd, fbID) }
}

/// One scanout buffer: a dumb buffer, a framebuffer on it and its mapping, acquired in
/// that order. It frees itself when dropped, in reverse: unmap (here), RmFB, destroy.
private final class DumbBuffer {
    private let framebuffer: Framebuffer
    let map: UnsafeMutableRawPointer
    let pitch: Int
    private let byteCount: Int
    var fbID: UInt32 { framebuffer.fbID }

    /// Not cleared: the display copies the whole frame into a buffer before it is first
    /// shown, so clearing would only write the scanout memory twice (two full frames of
    /// writes before the first frame: about 80 ms of a 500 ms start under emulation).
    init(fd: Int32, size: Size) throws(SystemError) {
        let fb = try Framebuffer(on: try DumbHandle(fd: fd, size: size), size: size)
        let handle = fb.dumb.handle
        var offset: UInt64 = 0
        try SystemCall.checkNegative("drmModeMapDumbBuffer") { DrmCalls.current.mapDumbBuffer(fd, handle, &offset) }
        let bytes = Int(fb.dumb.byteCount)
        let p = SystemCalls.current.mmap(bytes, fd, off_t(offset))
        guard let p, p != MAP_FAILED else { throw SystemError("mmap", .current, "dumb buffer \(handle)") }
        pitch = Int(fb.dumb.pitch)
        map = p
        byteCount = bytes
        framebuffer = fb
    }

    deinit { _ = SystemCalls.current.munmap(map, byteCount) }
}

extension DrmDisplay {
    /// The rotation that shows the picture upright on the connector's panel, from its
    /// "panel orientation" property (an enum; set by the kernel from the firmware or its
    /// quirk table); nil when there is none or it cannot be read.
    static func panelOrientation(fd: Int32, connectorID: UInt32) -> Rotation? {
        let drm = DrmCalls.current
        guard let props = drm.getObjectProperties(fd, connectorID, UInt32(DRM_MODE_OBJECT_CONNECTOR)) else { return nil }
        defer { drm.freeObjectProperties(props) }
        for i in 0..<Int(props.pointee.count_props) {
            guard let p = drm.getProperty(fd, props.pointee.props[i]) else { continue }
            defer { drm.freeProperty(p) }
            guard cString(p.pointee.name) == "panel orientation", let values = props.pointee.prop_values else { continue }
            let value = values[i]
            for e in UnsafeBufferPointer(start: p.pointee.enums, count: Int(p.pointee.count_enums)) where e.value == value {
                let name = cString(e.name)
                guard let r = Rotation(panelOrientation: name) else {
                    Log.warning("drm: connector \(connectorID): unknown panel orientation '\(name)'")
                    return nil
                }
                return r
            }
        }
        return nil
    }
}

/// A fixed-size C string field (a property's or an enum value's name).
private func cString<T>(_ field: T) -> String {
    withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
}
