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
    public let size: Size
    public let physicalSize: (width: Int, height: Int)?
    public private(set) var isBusy = false
    public var onFrameComplete: ((Instant) -> Void)?

    /// The device node, e.g. /dev/dri/card0.
    public let devicePath: String
    /// The connector's name, e.g. Virtual-1 or HDMI-A-1.
    public let connectorName: String

    private let fd: Int32
    private let loop: EventLoop
    private let resources: drmModeResPtr
    private let connector: drmModeConnectorPtr
    private var connectorID: UInt32
    private let crtcID: UInt32
    private var mode: drmModeModeInfo
    /// The CRTC as it was before us, restored by shutdown (nil if it could not be read).
    private let savedCrtc: drmModeCrtcPtr?
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
    public static func open(path: String? = nil, loop: EventLoop) throws(SystemError) -> DrmDisplay {
        let candidates = path.map { [$0] } ?? cardNodes()
        var lastError = SystemError("open", .noEntry, "/dev/dri/card*: no DRM device")
        for candidate in candidates {
            do throws(SystemError) {
                return try DrmDisplay(path: candidate, loop: loop)
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

    private init(path: String, loop: EventLoop) throws(SystemError) {
        // Everything acquired so far, released in reverse order if a later step fails.
        var undo: [() -> Void] = []
        func unwind() { for u in undo.reversed() { u() } }

        let fd = try SystemCall.check("open", path) { Glibc.open(path, O_RDWR | O_CLOEXEC) }
        undo.append { Glibc.close(fd) }
        do throws(SystemError) {
            var cap: UInt64 = 0
            try SystemCall.check("drmGetCap(DRM_CAP_DUMB_BUFFER)", path) {
                drmGetCap(fd, UInt64(DRM_CAP_DUMB_BUFFER), &cap)
            }
            if cap == 0 { throw SystemError("drmGetCap(DRM_CAP_DUMB_BUFFER)", .noDevice, "\(path): no dumb buffers") }
            if drmIsMaster(fd) == 0 {
                Log.warning("drm: \(path): not DRM master (another process drives the display); mode setting will fail")
            }

            let res = try SystemCall.checkPointer("drmModeGetResources", path) { drmModeGetResources(fd) }
            undo.append { drmModeFreeResources(res) }
            let output = try Self.findOutput(fd: fd, resources: res, path: path)
            undo.append { drmModeFreeConnector(output.connector) }

            let saved = drmModeGetCrtc(fd, output.crtcID)
            if saved == nil { Log.warning("drm: cannot read CRTC \(output.crtcID) (\(Errno.current)); it will not be restored") }
            undo.append { if let saved { drmModeFreeCrtc(saved) } }

            let size = Size(width: Int(output.mode.hdisplay), height: Int(output.mode.vdisplay))
            var buffers: [DumbBuffer] = []
            for _ in 0..<2 {
                let b = try DumbBuffer(fd: fd, size: size)
                buffers.append(b)
                undo.append { b.destroy(fd: fd) }
            }

            let c = output.connector.pointee
            self.fd = fd
            self.loop = loop
            self.devicePath = path
            self.resources = res
            self.connector = output.connector
            self.connectorID = c.connector_id
            self.connectorName = Self.name(of: c)
            self.crtcID = output.crtcID
            self.mode = output.mode
            self.savedCrtc = saved
            self.buffers = buffers
            self.size = size
            self.physicalSize = c.mmWidth > 0 && c.mmHeight > 0 ? (Int(c.mmWidth), Int(c.mmHeight)) : nil
            // Neither buffer holds anything yet: each lacks the whole frame, so each gets a
            // full copy before it is first scanned out (SetCrtc, then the first flip to it).
            var all = Damage(bounds: size)
            all.addAll()
            self.missing = [all, all]

        } catch {
            unwind()
            throw error
        }
        // From here on the object is whole: if registering fails, deinit releases it all.
        eventContext.version = 2
        eventContext.page_flip_handler = { _, _, seconds, microseconds, userData in
            guard let userData else { return }
            let display = Unmanaged<DrmDisplay>.fromOpaque(userData).takeUnretainedValue()
            display.flipCompleted(seconds: seconds, microseconds: microseconds)
        }
        try loop.register(fd, .readable) { [unowned self] readiness in self.readEvents(readiness) }
        let refresh = mode.vrefresh
        Log.info("drm: \(path): \(connectorName) \(size.width)x\(size.height)@\(refresh)Hz on CRTC \(crtcID)"
                 + (physicalSize.map { ", \($0.width)x\($0.height) mm" } ?? ""))
    }

    private struct Output {
        var connector: drmModeConnectorPtr
        var mode: drmModeModeInfo
        var crtcID: UInt32
    }

    /// The first connected connector with a mode and a CRTC no other output uses.
    private static func findOutput(fd: Int32, resources res: drmModeResPtr, path: String) throws(SystemError) -> Output {
        let r = res.pointee
        let connectorIDs = Array(UnsafeBufferPointer(start: r.connectors, count: Int(r.count_connectors)))
        let crtcIDs = Array(UnsafeBufferPointer(start: r.crtcs, count: Int(r.count_crtcs)))

        // CRTCs that other connectors are showing something on right now.
        func crtcsInUse(except skip: UInt32) -> Set<UInt32> {
            var used: Set<UInt32> = []
            for id in connectorIDs where id != skip {
                guard let c = drmModeGetConnector(fd, id) else { continue }
                defer { drmModeFreeConnector(c) }
                guard c.pointee.connection == DRM_MODE_CONNECTED, c.pointee.encoder_id != 0,
                      let e = drmModeGetEncoder(fd, c.pointee.encoder_id) else { continue }
                if e.pointee.crtc_id != 0 { used.insert(e.pointee.crtc_id) }
                drmModeFreeEncoder(e)
            }
            return used
        }

        for id in connectorIDs {
            guard let conn = drmModeGetConnector(fd, id) else {
                Log.warning("drm: \(path): cannot read connector \(id): \(Errno.current)")
                continue
            }
            let c = conn.pointee
            guard c.connection == DRM_MODE_CONNECTED, c.count_modes > 0 else {
                drmModeFreeConnector(conn)
                continue
            }
            let modes = UnsafeBufferPointer(start: c.modes, count: Int(c.count_modes))
            let mode = modes.first { $0.type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0 } ?? modes[0]
            let used = crtcsInUse(except: id)

            // The encoder and CRTC already driving this connector first, then any compatible pair.
            var encoderIDs = Array(UnsafeBufferPointer(start: c.encoders, count: Int(c.count_encoders)))
            if c.encoder_id != 0 { encoderIDs.insert(c.encoder_id, at: 0) }
            for encoderID in encoderIDs {
                guard let enc = drmModeGetEncoder(fd, encoderID) else { continue }
                defer { drmModeFreeEncoder(enc) }
                let e = enc.pointee
                if encoderID == c.encoder_id, e.crtc_id != 0, !used.contains(e.crtc_id) {
                    return Output(connector: conn, mode: mode, crtcID: e.crtc_id)
                }
                for (index, crtc) in crtcIDs.enumerated()
                where e.possible_crtcs & (1 << UInt32(index)) != 0 && !used.contains(crtc) {
                    return Output(connector: conn, mode: mode, crtcID: crtc)
                }
            }
            Log.info("drm: \(path): connector \(id) is connected but has no free CRTC")
            drmModeFreeConnector(conn)
        }
        throw SystemError("drmModeGetConnector", .noDevice, "\(path): no connected output with a free CRTC")
    }

    private static func name(of c: drmModeConnector) -> String {
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
        shadow.copy(copy.rects, to: b.map, stride: b.pitch)
        // The target is now the shadow's equal; every other buffer also lacks this damage.
        missing[target].removeAll()
        for i in buffers.indices where i != target { missing[i].formUnion(damage) }

        if !modeSet {
            try masterCall("drmModeSetCrtc") {
                drmModeSetCrtc(fd, crtcID, b.fbID, 0, 0, &connectorID, 1, &mode)
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
            drmModePageFlip(fd, crtcID, b.fbID, UInt32(DRM_MODE_PAGE_FLIP_EVENT), userData)
        }
        flipTarget = target
        isBusy = true
    }

    public func release() throws(SystemError) {
        guard !isReleased, !isShutDown else { return }
        try SystemCall.check("drmDropMaster", devicePath) { drmDropMaster(fd) }
        isReleased = true
        Log.info("drm: \(devicePath): DRM master dropped")
    }

    public func acquire() throws(SystemError) {
        guard !isShutDown else { return }
        // Opened while another process drove the display (a kiosk, before our VT was
        // shown): master is taken here too.
        guard isReleased || drmIsMaster(fd) == 0 else { return }
        try SystemCall.check("drmSetMaster", "\(devicePath) (another process may hold DRM master)") { drmSetMaster(fd) }
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
        let props = try SystemCall.checkPointer("drmModeObjectGetProperties", "\(connectorName)") {
            drmModeObjectGetProperties(fd, connectorID, UInt32(DRM_MODE_OBJECT_CONNECTOR))
        }
        defer { drmModeFreeObjectProperties(props) }
        var dpms: UInt32?
        for i in 0..<Int(props.pointee.count_props) {
            guard let p = drmModeGetProperty(fd, props.pointee.props[i]) else { continue }
            defer { drmModeFreeProperty(p) }
            let name = withUnsafeBytes(of: p.pointee.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "DPMS" { dpms = p.pointee.prop_id }
        }
        guard let dpms else { throw SystemError("setPowered", Errno(rawValue: ENOTSUP), "\(connectorName) has no DPMS property") }
        let value = UInt64(on ? DRM_MODE_DPMS_ON : DRM_MODE_DPMS_OFF)
        try masterCall("drmModeConnectorSetProperty") { drmModeConnectorSetProperty(fd, connectorID, dpms, value) }
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
        if drmHandleEvent(fd, &eventContext) != 0 {
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

        // A flip cannot be cancelled: wait for its event before touching the buffers.
        if isBusy && modeSet {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 1000) > 0 {
                if drmHandleEvent(fd, &eventContext) != 0 {
                    Log.warning("drm: drmHandleEvent at shutdown: \(Errno.current)")
                }
            } else {
                Log.warning("drm: the pending page flip did not complete within 1 s")
            }
        }
        isBusy = false

        if modeSet, let saved = savedCrtc {
            var s = saved.pointee
            let r: Int32
            if s.buffer_id != 0 && s.mode_valid != 0 {
                r = drmModeSetCrtc(fd, s.crtc_id, s.buffer_id, s.x, s.y, &connectorID, 1, &s.mode)
            } else {
                r = drmModeSetCrtc(fd, s.crtc_id, 0, 0, 0, nil, 0, nil)
            }
            if r < 0 { Log.warning("drm: restoring CRTC \(s.crtc_id): \(Errno(rawValue: -r))") }
        }
        for b in buffers.reversed() { b.destroy(fd: fd) }
        buffers.removeAll()
        if let saved = savedCrtc { drmModeFreeCrtc(saved) }
        drmModeFreeConnector(connector)
        drmModeFreeResources(resources)
        Glibc.close(fd)
        Log.info("drm: \(devicePath) released")
    }
}

/// One dumb buffer: a GEM handle, a framebuffer on it and its mapping.
private struct DumbBuffer {
    let handle: UInt32
    let fbID: UInt32
    let pitch: Int
    let byteCount: Int
    let map: UnsafeMutableRawPointer

    /// Creates, adds as an XRGB8888 framebuffer (depth 24, bpp 32) and maps. Not cleared: the
    /// display copies the whole frame into a buffer before it is first shown, so clearing
    /// would only write the scanout memory twice (two full frames of writes before the first
    /// frame: about 80 ms of a 500 ms start under emulation).
    init(fd: Int32, size: Size) throws(SystemError) {
        var handle: UInt32 = 0, pitch: UInt32 = 0, bytes: UInt64 = 0
        try SystemCall.checkNegative("drmModeCreateDumbBuffer", "\(size.width)x\(size.height)") {
            drmModeCreateDumbBuffer(fd, UInt32(size.width), UInt32(size.height), 32, 0, &handle, &pitch, &bytes)
        }
        var fbID: UInt32 = 0
        do throws(SystemError) {
            try SystemCall.checkNegative("drmModeAddFB") {
                drmModeAddFB(fd, UInt32(size.width), UInt32(size.height), 24, 32, pitch, handle, &fbID)
            }
        } catch {
            drmModeDestroyDumbBuffer(fd, handle)
            throw error
        }
        var offset: UInt64 = 0
        let mapped: UnsafeMutableRawPointer
        do throws(SystemError) {
            try SystemCall.checkNegative("drmModeMapDumbBuffer") { drmModeMapDumbBuffer(fd, handle, &offset) }
            let p = mmap(nil, Int(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset))
            if p == MAP_FAILED || p == nil { throw SystemError("mmap", .current, "dumb buffer \(handle)") }
            mapped = p!
        } catch {
            drmModeRmFB(fd, fbID)
            drmModeDestroyDumbBuffer(fd, handle)
            throw error
        }
        self.handle = handle
        self.fbID = fbID
        self.pitch = Int(pitch)
        self.byteCount = Int(bytes)
        self.map = mapped
    }

    /// Unmaps, removes the framebuffer and destroys the buffer: creation in reverse.
    func destroy(fd: Int32) {
        munmap(map, byteCount)
        drmModeRmFB(fd, fbID)
        drmModeDestroyDumbBuffer(fd, handle)
    }
}
