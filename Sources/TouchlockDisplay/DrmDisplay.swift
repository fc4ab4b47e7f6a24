import CDrm
import Glibc
import TouchlockCore
import TouchlockPixels
import TouchlockSystem

/// A KMS output driven with two dumb buffers and page flips (legacy KMS API), in the order
/// of drm-howto's modeset-vsync.c:
///
/// open -> DUMB_BUFFER cap -> resources -> connected connector -> preferred mode -> free
/// encoder + CRTC -> save the CRTC -> two dumb buffers (create, AddFB, map, mmap) ->
/// first present: SetCrtc -> later presents: copy damage into the back buffer, PageFlip with
/// an event -> the event (read on the loop with drmHandleEvent) swaps front and back.
///
/// Scanout memory is only written, never read: each buffer keeps the damage it missed while
/// the other one was shown (buffer age 2), and a present copies that plus the new damage
/// from the shadow buffer. Losing DRM master (EACCES/EPERM on SetCrtc or PageFlip) is
/// reported as a `SystemError`; the caller decides what to do.
public final class DrmDisplay: Display {
    /// The logical size: the mode's, turned by `rotation`.
    public let size: Size
    /// How the picture is turned on the panel: `[display] rotation`, else the connector's
    /// "panel orientation", else none.
    public let rotation: Rotation
    public let physicalSize: (width: Int, height: Int)?
    public private(set) var isBusy = false
    public var onFrameComplete: ((Instant) -> Void)?

    /// The device node, e.g. /dev/dri/card0.
    public let devicePath: String
    /// The connector's name, e.g. Virtual-1 or HDMI-A-1.
    public let connectorName: String

    /// The device node, open while the display lives; shutdown closes it.
    private var device: FileDescriptor?
    /// Its number, for libdrm calls (valid while `device` is open).
    private let fd: Int32
    private let loop: EventLoop
    private var connectorID: UInt32
    private let crtcID: UInt32
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
    /// DRM master was dropped (after an unlock) and not taken back yet.
    public private(set) var isReleased = false
    private var eventContext = drmEventContext()

    // MARK: opening

    /// Opens `path`, or else the first /dev/dri/card* that has a connected output we can
    /// drive, and registers its file descriptor with `loop` for page-flip events.
    /// `rotation` (the config's) wins over the connector's panel orientation.
    public static func open(path: String? = nil, loop: EventLoop, rotation: Rotation? = nil) throws(SystemError) -> DrmDisplay {
        let candidates = path.map { [$0] } ?? cardNodes()
        var lastError = SystemError("open", .noEntry, "/dev/dri/card*: no DRM device")
        for candidate in candidates {
            do throws(SystemError) {
                return try DrmDisplay(path: candidate, loop: loop, rotation: rotation)
            } catch {
                Log.info("drm: \(candidate) not usable: \(error)")
                lastError = error
            }
        }
        throw lastError
    }

    /// /dev/dri/card0, card1, ... in numeric order.
    static func cardNodes() -> [String] {
        guard let dir = opendir("/dev/dri") else { return [] }
        defer { closedir(dir) }
        var numbers: [Int] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("card"), let n = Int(name.dropFirst(4)) { numbers.append(n) }
        }
        return numbers.sorted().map { "/dev/dri/card\($0)" }
    }

    private init(path: String, loop: EventLoop, rotation: Rotation?) throws(SystemError) {
        // Each step owns what it acquired: if a later step throws, what exists so far is
        // released in reverse order as it goes out of scope (buffers, then the device).
        let device = try FileDescriptor.open(path, O_RDWR)
        let fd = device.rawValue
        let drm = DrmCalls.current
        var cap: UInt64 = 0
        try SystemCall.check("drmGetCap(DRM_CAP_DUMB_BUFFER)", path) {
            drm.getCap(fd, UInt64(DRM_CAP_DUMB_BUFFER), &cap)
        }
        if cap == 0 { throw SystemError("drmGetCap(DRM_CAP_DUMB_BUFFER)", .noDevice, "\(path): no dumb buffers") }
        if drm.isMaster(fd) == 0 {
            Log.warning("drm: \(path): not DRM master (another process drives the display); mode setting will fail")
        }

        let output = try Self.findOutput(fd: fd, path: path)
        var saved: drmModeCrtc?
        if let crtc = drm.getCrtc(fd, output.crtcID) {
            saved = crtc.pointee
            drm.freeCrtc(crtc)
        } else {
            Log.warning("drm: cannot read CRTC \(output.crtcID) (\(Errno.current)); it will not be restored")
        }

        let panelSize = Size(width: Int(output.mode.hdisplay), height: Int(output.mode.vdisplay))
        var buffers: [DumbBuffer] = []
        for _ in 0..<2 { buffers.append(try DumbBuffer(fd: fd, size: panelSize)) }
        let orientation = Self.panelOrientation(fd: fd, connectorID: output.connectorID)
        let turn = rotation ?? orientation ?? .degrees0
        let size = turn.logicalSize(panel: panelSize)

        self.device = .some(consume device)
        self.fd = fd
        self.loop = loop
        self.devicePath = path
        self.connectorID = output.connectorID
        self.connectorName = output.name
        self.crtcID = output.crtcID
        self.mode = output.mode
        self.savedCrtc = saved
        self.buffers = buffers
        self.size = size
        self.rotation = turn
        self.physicalSize = turn.logical(millimetres: output.physicalSize)
        // Neither buffer holds anything yet: each lacks the whole frame, so each gets a
        // full copy before it is first scanned out (SetCrtc, then the first flip to it).
        var all = Damage(bounds: size)
        all.addAll()
        self.missing = [all, all]

        // From here on the object is whole: if registering fails, deinit releases it all.
        eventContext.version = 2
        eventContext.page_flip_handler = { _, _, seconds, microseconds, userData in
            guard let userData else { return }
            let display = Unmanaged<DrmDisplay>.fromOpaque(userData).takeUnretainedValue()
            display.flipCompleted(seconds: seconds, microseconds: microseconds)
        }
        try loop.register(fd, .readable) { [unowned self] readiness in self.readEvents(readiness) }
        let refresh = mode.vrefresh
        Log.info("drm: \(path): \(connectorName) \(panelSize.width)x\(panelSize.height)@\(refresh)Hz on CRTC \(crtcID)"
                 + (output.physicalSize.map { ", \($0.width)x\($0.height) mm" } ?? "")
                 + ", rotation \(turn) (\(rotation != nil ? "[display] rotation" : orientation != nil ? "panel orientation" : "default"))")
    }

    private struct Output {
        var connectorID: UInt32
        var name: String
        var physicalSize: (width: Int, height: Int)?
        var mode: drmModeModeInfo
        var crtcID: UInt32

        init(_ c: drmModeConnector, mode: drmModeModeInfo, crtcID: UInt32) {
            connectorID = c.connector_id
            name = DrmDisplay.name(of: c)
            physicalSize = c.mmWidth > 0 && c.mmHeight > 0 ? (Int(c.mmWidth), Int(c.mmHeight)) : nil
            self.mode = mode
            self.crtcID = crtcID
        }
    }

    /// The first connected connector with a mode and a CRTC no other output uses.
    private static func findOutput(fd: Int32, path: String) throws(SystemError) -> Output {
        let drm = DrmCalls.current
        let res = try SystemCall.checkPointer("drmModeGetResources", path) { drm.getResources(fd) }
        defer { drm.freeResources(res) }
        let r = res.pointee
        let connectorIDs = Array(UnsafeBufferPointer(start: r.connectors, count: Int(r.count_connectors)))
        let crtcIDs = Array(UnsafeBufferPointer(start: r.crtcs, count: Int(r.count_crtcs)))

        // CRTCs that other connectors are showing something on right now.
        func crtcsInUse(except skip: UInt32) -> Set<UInt32> {
            var used: Set<UInt32> = []
            for id in connectorIDs where id != skip {
                guard let c = drm.getConnector(fd, id) else { continue }
                defer { drm.freeConnector(c) }
                guard c.pointee.connection == DRM_MODE_CONNECTED, c.pointee.encoder_id != 0,
                      let e = drm.getEncoder(fd, c.pointee.encoder_id) else { continue }
                if e.pointee.crtc_id != 0 { used.insert(e.pointee.crtc_id) }
                drm.freeEncoder(e)
            }
            return used
        }

        for id in connectorIDs {
            guard let conn = drm.getConnector(fd, id) else {
                Log.warning("drm: \(path): cannot read connector \(id): \(Errno.current)")
                continue
            }
            defer { drm.freeConnector(conn) }
            let c = conn.pointee
            guard c.connection == DRM_MODE_CONNECTED, c.count_modes > 0 else { continue }
            let modes = UnsafeBufferPointer(start: c.modes, count: Int(c.count_modes))
            let mode = modes.first { $0.type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0 } ?? modes[0]
            let used = crtcsInUse(except: id)

            // The encoder and CRTC already driving this connector first, then any compatible pair.
            var encoderIDs = Array(UnsafeBufferPointer(start: c.encoders, count: Int(c.count_encoders)))
            if c.encoder_id != 0 { encoderIDs.insert(c.encoder_id, at: 0) }
            for encoderID in encoderIDs {
                guard let enc = drm.getEncoder(fd, encoderID) else { continue }
                defer { drm.freeEncoder(enc) }
                let e = enc.pointee
                if encoderID == c.encoder_id, e.crtc_id != 0, !used.contains(e.crtc_id) {
                    return Output(c, mode: mode, crtcID: e.crtc_id)
                }
                for (index, crtc) in crtcIDs.enumerated()
                where e.possible_crtcs & (1 << UInt32(index)) != 0 && !used.contains(crtc) {
                    return Output(c, mode: mode, crtcID: crtc)
                }
            }
            Log.info("drm: \(path): connector \(id) is connected but has no free CRTC")
        }
        throw SystemError("drmModeGetConnector", .noDevice, "\(path): no connected output with a free CRTC")
    }

    fileprivate static func name(of c: drmModeConnector) -> String {
        let type = drmModeGetConnectorTypeName(c.connector_type).map { String(cString: $0) } ?? "Unknown"
        return "\(type)-\(c.connector_type_id)"
    }

    deinit { shutdown() }

    // MARK: frames

    public func present(_ shadow: ShadowBuffer, damage: Damage) throws(SystemError) {
        precondition(shadow.size == size, "shadow buffer \(shadow.size) does not match the mode \(size)")
        if isShutDown { throw SystemError("present", .noDevice, "\(devicePath): display shut down") }
        if isReleased { throw SystemError("present", .notPermitted, "\(devicePath): display released (DRM master dropped)") }
        if isBusy {
            Log.bug("drm: present while a frame is in flight")
            throw SystemError("drmModePageFlip", .busy, "a flip is already pending")
        }
        let target = modeSet ? 1 - front : 0
        var copy = missing[target]
        copy.formUnion(damage)
        let b = buffers[target]
        shadow.copy(copy.rects, to: b.map, stride: b.pitch, rotation: rotation)
        // The target is now the shadow's equal; every other buffer also lacks this damage.
        missing[target].removeAll()
        for i in buffers.indices where i != target { missing[i].formUnion(damage) }

        if !modeSet {
            try masterCall("drmModeSetCrtc") {
                DrmCalls.current.setCrtc(fd, crtcID, b.fbID, 0, 0, &connectorID, 1, &mode)
            }
            modeSet = true
            front = 0
            flipTarget = 0
            // SetCrtc is synchronous; complete the frame on the next turn of the loop, like a flip.
            isBusy = true
            loop.deferred { [weak self] in
                guard let self, self.isBusy, !self.isShutDown else { return }
                self.isBusy = false
                self.onFrameComplete?(EventLoop.now())
            }
            return
        }
        let userData = Unmanaged.passUnretained(self).toOpaque()
        try masterCall("drmModePageFlip") {
            DrmCalls.current.pageFlip(fd, crtcID, b.fbID, UInt32(DRM_MODE_PAGE_FLIP_EVENT), userData)
        }
        flipTarget = target
        isBusy = true
    }

    public func release() throws(SystemError) {
        guard !isReleased, !isShutDown else { return }
        try SystemCall.check("drmDropMaster", devicePath) { DrmCalls.current.dropMaster(fd) }
        isReleased = true
        Log.info("drm: \(devicePath): DRM master dropped")
    }

    public func acquire() throws(SystemError) {
        guard !isShutDown else { return }
        // Opened while another process drove the display (a kiosk, before our VT was
        // shown): master is taken here too.
        guard isReleased || DrmCalls.current.isMaster(fd) == 0 else { return }
        try SystemCall.check("drmSetMaster", "\(devicePath) (another process may hold DRM master)") { DrmCalls.current.setMaster(fd) }
        isReleased = false
        // Whoever drove the display meanwhile left anything on it: set the mode again and
        // repaint everything.
        modeSet = false
        for i in missing.indices { missing[i].addAll() }
        Log.info("drm: \(devicePath): DRM master taken back")
    }

    /// Switches the connector off or on through its "DPMS" property (the legacy power
    /// control every KMS driver has); the CRTC keeps its mode and buffers.
    public func setPowered(_ on: Bool) throws(SystemError) {
        guard !isReleased, !isShutDown else { return }
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

    /// A mode-setting call; EACCES/EPERM mean another process is DRM master now.
    private func masterCall(_ call: String, _ body: () -> Int32) throws(SystemError) {
        do throws(SystemError) {
            try SystemCall.checkNegative(call, "\(devicePath) CRTC \(crtcID)", body)
        } catch {
            if error.errno == .permissionDenied || error.errno == .notPermitted {
                throw SystemError(call, error.errno, "\(devicePath) CRTC \(crtcID): not DRM master (the display was taken by another process)")
            }
            throw error
        }
    }

    private func readEvents(_ readiness: IOReadiness) {
        if DrmCalls.current.handleEvent(fd, &eventContext) != 0 {
            let e = Errno.current
            if e == .interrupted || e == .wouldBlock { return }
            Log.error("drm: drmHandleEvent on \(devicePath): \(e); no more page-flip events")
            loop.unregister(fd)
        }
    }

    fileprivate func flipCompleted(seconds: UInt32, microseconds: UInt32) {
        guard isBusy else {
            Log.bug("drm: page-flip event with no flip pending")
            return
        }
        isBusy = false
        front = flipTarget
        if isShutDown { return }
        // Event times are CLOCK_MONOTONIC; a driver without vblank may leave them zero.
        let time = seconds == 0 && microseconds == 0
            ? EventLoop.now() : Instant(seconds: Int(seconds), microseconds: Int(microseconds))
        onFrameComplete?(time)
    }

    // MARK: shutdown

    public func shutdown() {
        if isShutDown { return }
        isShutDown = true
        loop.unregister(fd)
        let drm = DrmCalls.current

        // A flip cannot be cancelled: wait for its event before touching the buffers.
        if isBusy && modeSet {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if SystemCalls.current.poll(&p, 1, 1000) > 0 {
                if drm.handleEvent(fd, &eventContext) != 0 {
                    Log.warning("drm: drmHandleEvent at shutdown: \(Errno.current)")
                }
            } else {
                Log.warning("drm: the pending page flip did not complete within 1 s")
            }
        }
        isBusy = false

        // Only what we still own is restored: after a hand-over (master dropped, or never
        // taken from the kiosk) the CRTC is the kiosk's, and it repaints it itself.
        if modeSet, !isReleased, drm.isMaster(fd) != 0, var s = savedCrtc {
            let r: Int32
            if s.buffer_id != 0 && s.mode_valid != 0 {
                r = drm.setCrtc(fd, s.crtc_id, s.buffer_id, s.x, s.y, &connectorID, 1, &s.mode)
            } else {
                r = drm.setCrtc(fd, s.crtc_id, 0, 0, 0, nil, 0, nil)
            }
            if r < 0 { Log.warning("drm: restoring CRTC \(s.crtc_id): \(Errno(rawValue: -r))") }
        }
        // Release in reverse order of acquisition: the second buffer, the first, the device.
        while !buffers.isEmpty { buffers.removeLast() }
        do { try device.take()?.close() } catch { Log.warning("drm: \(error)") }
        Log.info("drm: \(devicePath) released")
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
