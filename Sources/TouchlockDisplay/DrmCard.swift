import CDrm
import Glibc
import TouchlockCore
import TouchlockSystem

/// One DRM device (/dev/dri/cardN): its file descriptor, DRM master (one per descriptor,
/// so one for all its outputs), its page-flip events, and one `DrmDisplay` per connected
/// connector (each with its own CRTC, mode and buffers). `probe` is run again on a
/// hotplug: outputs are set up for newly connected connectors and torn down for
/// unplugged ones, newest first.
public final class DrmCard {
    public let path: String
    /// Only these connectors (by name, e.g. HDMI-A-1) are driven; empty: all.
    public let connectorNames: [String]
    /// The mode to pick where an output offers it; else the preferred one.
    public let mode: DisplayMode?
    /// `[display] rotation` for every output; nil: each connector's panel orientation.
    public let rotation: Rotation?
    /// The card was opened for one output (`DrmDisplay.open`): it closes with it.
    private let closeWhenEmpty: Bool

    private var device: FileDescriptor?
    /// Its number, for libdrm calls (valid while `device` is open; a new one after
    /// `takeMaster` had to open the card again).
    private(set) var fd: Int32
    let loop: EventLoop
    /// The outputs, in the order they were set up; each is dropped when it shuts down.
    public private(set) var outputs: [DrmDisplay] = []
    private var eventContext = drmEventContext()
    private var readingEvents = false
    /// DRM master was dropped (all outputs handed over) and not taken back yet.
    private(set) var masterDropped = false
    private var isClosed = false
    /// `close` is tearing the outputs down.
    private var closing = false
    private var sequence: UInt64 = 0
    /// Called after a re-probe changed the outputs (hotplug).
    public var onOutputsChanged: ((_ added: [DrmDisplay], _ removed: [DrmDisplay]) -> Void)?
    /// Whether closing puts back the CRTCs as they were before us. Off at a system
    /// shutdown while locked: what was there before is the kiosk app's last frame.
    public var restoresScreenAtShutdown = true
    /// Told the descriptor in use whenever it changes (opened again to become master) and
    /// nil when the card is closed: the daemon keeps it in systemd's descriptor store.
    public var descriptorChanged: ((Int32?) -> Void)?
    /// The descriptor in use.
    public var descriptor: Int32 { fd }
    /// Framebuffers an earlier process made on an inherited descriptor (the lock screen
    /// it left on the screen): removed, with their buffers, once none is scanned out.
    private var leftovers: [UInt32] = []
    /// The descriptor in use was opened by the process before: the kernel lets only the
    /// process that opened a descriptor (or CAP_SYS_ADMIN) drop or set DRM master on it.
    private var inheritedDescriptor = false

    /// Opens `path`, or else the first /dev/dri/card* with a connected output we can drive.
    /// `inherited`: a descriptor of the card at `path` kept from the process before
    /// (systemd's descriptor store), used for that card: DRM master and the framebuffer on
    /// the screen come with it, so the screen never goes dark between the two processes.
    /// It is taken (closed if that card is not opened).
    public static func open(path: String? = nil, loop: EventLoop, connectors: [String] = [],
                            mode: DisplayMode? = nil, rotation: Rotation? = nil,
                            inherited: (path: String, fd: Int32)? = nil) throws(SystemError) -> DrmCard {
        let candidates = path.map { [$0] } ?? cardNodes()
        var lastError = SystemError("open", .noEntry, "/dev/dri/card*: no DRM device")
        var kept = inherited?.fd
        defer {
            if let k = kept {
                Log.info("drm: the descriptor kept from before is of \(inherited?.path ?? "?"), not used; closed")
                try? FileDescriptor(adopting: k).close()
            }
        }
        for candidate in candidates {
            let same = kept != nil && candidate == inherited?.path
            do throws(SystemError) {
                let device: FileDescriptor
                if same, let k = kept {
                    device = FileDescriptor(adopting: k)
                    kept = nil
                } else {
                    device = try FileDescriptor.open(candidate, O_RDWR)
                }
                return try DrmCard(path: candidate, device: device, inherited: same, loop: loop, connectors: connectors,
                                   mode: mode, rotation: rotation, closeWhenEmpty: false)
            } catch {
                Log.info("drm: \(candidate) not usable: \(error)")
                lastError = error
            }
        }
        throw lastError
    }

    /// /dev/dri/card0, card1, ... in numeric order.
    static func cardNodes() -> [String] {
        let numbers = ((try? DirectoryListing.names("/dev/dri")) ?? []).compactMap { name in
            name.hasPrefix("card") ? Int(name.dropFirst(4)) : nil
        }
        return numbers.sorted().map { "/dev/dri/card\($0)" }
    }

    /// The cards present, in numeric order, each with its device's sysfs path (where
    /// /sys/class/drm/cardN links to); a node whose link cannot be read is left out.
    public static func present() -> [DrmCardName] {
        cardNodes().compactMap { path in
            let node = String(path.split(separator: "/").last ?? "")
            guard let target = readLink("/sys/class/drm/\(node)"), let card = DrmCardName(devpath: target), card.node == node else {
                Log.info("drm: \(path): no device in /sys/class/drm/\(node); not covered")
                return nil
            }
            return card
        }
    }

    /// The card node `path` is or links to (e.g. /dev/dri/by-path/pci-0000:00:02.0-card ->
    /// card0), or nil when it is not one (absent, or something else).
    public static func node(of path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        let full = String(cString: resolved)
        guard full.hasPrefix("/dev/dri/") else { return nil }
        let name = String(full.dropFirst("/dev/dri/".count))
        return DrmCardName.isCardNode(name) ? name : nil
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = Glibc.readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    convenience init(path: String, loop: EventLoop, connectors: [String], mode: DisplayMode?, rotation: Rotation?,
                     closeWhenEmpty: Bool) throws(SystemError) {
        try self.init(path: path, device: try FileDescriptor.open(path, O_RDWR), inherited: false, loop: loop,
                      connectors: connectors, mode: mode, rotation: rotation, closeWhenEmpty: closeWhenEmpty)
    }

    init(path: String, device: consuming FileDescriptor, inherited: Bool, loop: EventLoop, connectors: [String],
         mode: DisplayMode?, rotation: Rotation?, closeWhenEmpty: Bool) throws(SystemError) {
        let fd = device.rawValue
        var cap: UInt64 = 0
        try SystemCall.check("drmGetCap(DRM_CAP_DUMB_BUFFER)", path) {
            DrmCalls.current.getCap(fd, UInt64(DRM_CAP_DUMB_BUFFER), &cap)
        }
        if cap == 0 { throw SystemError("drmGetCap(DRM_CAP_DUMB_BUFFER)", .noDevice, "\(path): no dumb buffers") }
        self.device = .some(consume device)
        self.fd = fd
        self.path = path
        self.loop = loop
        self.connectorNames = connectors
        self.mode = mode
        self.rotation = rotation
        self.closeWhenEmpty = closeWhenEmpty
        // Version 3: the handler is told the CRTC, so one descriptor serves every output.
        eventContext.version = 3
        eventContext.page_flip_handler2 = { _, _, seconds, microseconds, crtc, userData in
            DrmCard.dispatching?.flipCompleted(crtc: crtc, sequence: UInt64(UInt(bitPattern: userData)),
                                               seconds: seconds, microseconds: microseconds)
        }
        // From here on the object is whole: if a step fails, deinit releases it all.
        inheritedDescriptor = inherited
        if inherited {
            // What the process before left: its framebuffers (listed for this descriptor only).
            if let res = DrmCalls.current.getResources(fd) {
                leftovers = Array(UnsafeBufferPointer(start: res.pointee.fbs, count: Int(res.pointee.count_fbs)))
                DrmCalls.current.freeResources(res)
            }
            Log.info("drm: \(path): the descriptor kept from before, \(DrmCalls.current.isMaster(fd) != 0 ? "DRM master" : "not master")"
                     + ", \(leftovers.count) framebuffer(s) of it left")
        }
        try probe()
        if outputs.isEmpty {
            throw SystemError("drmModeGetConnector", .noDevice, "\(path): no connected output with a free CRTC"
                              + (connectors.isEmpty ? "" : " among \(connectors.joined(separator: ", "))"))
        }
        try startEvents()
    }

    deinit { close() }

    // MARK: outputs

    /// One connector as read: enough to choose a mode and a CRTC.
    private struct Connector {
        var id: UInt32
        var name: String
        var connected: Bool
        var modes: [drmModeModeInfo]
        var encoderID: UInt32
        var encoders: [UInt32]
        var physicalSize: (width: Int, height: Int)?
    }

    /// Reads the connectors again: tears down the outputs whose connector is no longer
    /// connected (newest first), then sets up one for each connected connector (among
    /// `connectorNames`) that has none, on a CRTC no other output uses. Returns the changes.
    @discardableResult
    public func probe() throws(SystemError) -> (added: [DrmDisplay], removed: [DrmDisplay]) {
        let drm = DrmCalls.current
        let res = try SystemCall.checkPointer("drmModeGetResources", path) { drm.getResources(fd) }
        defer { drm.freeResources(res) }
        let r = res.pointee
        let connectorIDs = Array(UnsafeBufferPointer(start: r.connectors, count: Int(r.count_connectors)))
        let crtcIDs = Array(UnsafeBufferPointer(start: r.crtcs, count: Int(r.count_crtcs)))

        var connectors: [Connector] = []
        for id in connectorIDs {
            guard let conn = drm.getConnector(fd, id) else {
                Log.warning("drm: \(path): cannot read connector \(id): \(Errno.current)")
                continue
            }
            defer { drm.freeConnector(conn) }
            let c = conn.pointee
            connectors.append(Connector(
                id: id, name: Self.name(of: c), connected: c.connection == DRM_MODE_CONNECTED,
                modes: Array(UnsafeBufferPointer(start: c.modes, count: Int(c.count_modes))),
                encoderID: c.encoder_id,
                encoders: Array(UnsafeBufferPointer(start: c.encoders, count: Int(c.count_encoders))),
                physicalSize: c.mmWidth > 0 && c.mmHeight > 0 ? (Int(c.mmWidth), Int(c.mmHeight)) : nil))
        }
        func wanted(_ c: Connector) -> Bool {
            c.connected && !c.modes.isEmpty && (connectorNames.isEmpty || connectorNames.contains(c.name))
        }

        // Unplugged (or gone): torn down in reverse order of setup.
        var removed: [DrmDisplay] = []
        for o in outputs.reversed() where !connectors.contains(where: { $0.id == o.connectorID && wanted($0) }) {
            Log.info("drm: \(path): \(o.connectorName) disconnected")
            o.shutdown()
            removed.append(o)
        }

        // CRTCs taken: ours, and those other connected connectors (not ours to drive) show on.
        var used = Set(outputs.map(\.crtcID))
        for c in connectors where c.connected && !wanted(c) && c.encoderID != 0 {
            if let e = drm.getEncoder(fd, c.encoderID) {
                if e.pointee.crtc_id != 0 { used.insert(e.pointee.crtc_id) }
                drm.freeEncoder(e)
            }
        }
        var added: [DrmDisplay] = []
        for c in connectors where wanted(c) && !outputs.contains(where: { $0.connectorID == c.id }) {
            guard let crtc = freeCrtc(for: c, crtcIDs: crtcIDs, used: used) else {
                Log.warning("drm: \(path): \(c.name) is connected but has no free CRTC; it is not locked")
                continue
            }
            let mode = chooseMode(c)
            do throws(SystemError) {
                let o = try DrmDisplay(card: self, connectorID: c.id, name: c.name, crtcID: crtc, mode: mode,
                                       physicalSize: c.physicalSize, rotation: rotation)
                outputs.append(o)
                used.insert(crtc)
                added.append(o)
            } catch {
                Log.warning("drm: \(path): cannot set up \(c.name): \(error)")
                if outputs.isEmpty && added.isEmpty { throw error }
            }
        }
        if !added.isEmpty || !removed.isEmpty { onOutputsChanged?(added, removed) }
        return (added, removed)
    }

    /// The encoder and CRTC already driving the connector first, then any pair the
    /// encoder can drive (its possible_crtcs) that no other output uses.
    private func freeCrtc(for c: Connector, crtcIDs: [UInt32], used: Set<UInt32>) -> UInt32? {
        let drm = DrmCalls.current
        var encoderIDs = c.encoders
        if c.encoderID != 0 { encoderIDs.insert(c.encoderID, at: 0) }
        for encoderID in encoderIDs {
            guard let enc = drm.getEncoder(fd, encoderID) else { continue }
            defer { drm.freeEncoder(enc) }
            let e = enc.pointee
            if encoderID == c.encoderID, e.crtc_id != 0, !used.contains(e.crtc_id) { return e.crtc_id }
            for (index, crtc) in crtcIDs.enumerated()
            where index < 32 && e.possible_crtcs & (1 << UInt32(index)) != 0 && !used.contains(crtc) {
                return crtc
            }
        }
        return nil
    }

    /// `[display] mode` when the connector offers it, else its preferred mode (or its first).
    private func chooseMode(_ c: Connector) -> drmModeModeInfo {
        let preferred: drmModeModeInfo = c.modes.first { $0.type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0 } ?? c.modes[0]
        guard let mode else { return preferred }
        let offered = c.modes.map { (width: Int($0.hdisplay), height: Int($0.vdisplay), refresh: Int($0.vrefresh)) }
        if let i = mode.pick(offered) { return c.modes[i] }
        Log.warning("drm: \(c.name) has no mode \(mode); using its preferred \(preferred.hdisplay)x\(preferred.vdisplay)@\(preferred.vrefresh)")
        return preferred
    }

    static func name(of c: drmModeConnector) -> String {
        let type = drmModeGetConnectorTypeName(c.connector_type).map { String(cString: $0) } ?? "Unknown"
        return "\(type)-\(c.connector_type_id)"
    }

    /// An output shut down on its own (its owner let it go).
    func outputShutDown(_ id: ObjectIdentifier) {
        outputs.removeAll { ObjectIdentifier($0) == id }
        if closeWhenEmpty && !closing && outputs.isEmpty { close() }
    }

    /// An output set its mode (its first frame): the framebuffers left from before that
    /// no CRTC shows any more are removed, with their buffers.
    func modeSet() {
        guard !leftovers.isEmpty, !isClosed else { return }
        let drm = DrmCalls.current
        var shown = Set<UInt32>()
        if let res = drm.getResources(fd) {
            for crtc in UnsafeBufferPointer(start: res.pointee.crtcs, count: Int(res.pointee.count_crtcs)) {
                if let c = drm.getCrtc(fd, crtc) {
                    shown.insert(c.pointee.buffer_id)
                    drm.freeCrtc(c)
                }
            }
            drm.freeResources(res)
        }
        var kept: [UInt32] = []
        for fb in leftovers {
            if shown.contains(fb) { kept.append(fb); continue }
            let handle = drm.framebufferHandle(fd, fb)
            do throws(SystemError) {
                try SystemCall.check("drmModeRmFB", "\(path): framebuffer \(fb)") { drm.rmFB(fd, fb) }
                if handle != 0 {
                    try SystemCall.check("drmModeDestroyDumbBuffer", "\(path): buffer \(handle)") { drm.destroyDumbBuffer(fd, handle) }
                }
            } catch {
                Log.info("drm: what was left from before: \(error)")
            }
        }
        if kept.count < leftovers.count {
            Log.info("drm: \(path): \(leftovers.count - kept.count) framebuffer(s) left from before removed")
        }
        leftovers = kept
    }

    // MARK: master

    /// An output was handed over: master is dropped once no output is still shown.
    func outputHandedOver() throws(SystemError) {
        guard !masterDropped, !isClosed, outputs.allSatisfy({ !$0.state.isActive }) else { return }
        if DrmCalls.current.isMaster(fd) == 0 {
            // Lost to another process already: nothing to drop.
            masterDropped = true
            return
        }
        if inheritedDescriptor {
            // drmDropMaster would be refused (EACCES): master goes with the descriptor,
            // closed once the outputs are on one of our own (not master: opened while the
            // inherited one was; it becomes master again as `takeMaster` says).
            let fresh = try FileDescriptor.open(path, O_RDWR)
            try move(to: fresh)
            masterDropped = true
            Log.info("drm: \(path): DRM master let go with the descriptor kept from before")
            return
        }
        try SystemCall.check("drmDropMaster", path) { DrmCalls.current.dropMaster(fd) }
        masterDropped = true
        Log.info("drm: \(path): DRM master dropped")
    }

    /// Takes DRM master if it is not ours (dropped, taken by another process, or never
    /// had: opened while a kiosk drove the display).
    func takeMaster() throws(SystemError) {
        guard !isClosed else { throw SystemError("drmSetMaster", .noDevice, "\(path): closed") }
        guard masterDropped || DrmCalls.current.isMaster(fd) == 0 else { return }
        do throws(SystemError) {
            try SystemCall.check("drmSetMaster", "\(path) (another process may hold DRM master)") { DrmCalls.current.setMaster(fd) }
        } catch where error.errno == .permissionDenied || error.errno == .notPermitted {
            // Without CAP_SYS_ADMIN only a descriptor that was master before may become
            // master again, and this one never was (opened while the kiosk's compositor
            // held the card: a daemon restarted behind it). Nobody is master once the VT
            // owner has dropped it, and the first descriptor opened then is.
            try reopen(after: error)
        }
        if masterDropped { Log.info("drm: \(path): DRM master taken back") }
        masterDropped = false
    }

    /// Opens the card again, which makes the new descriptor master if nobody is, and moves
    /// every output onto it (new buffers; the mode is set again at the next frame). The old
    /// descriptor is closed last, once nothing of it is in use.
    private func reopen(after refusal: SystemError) throws(SystemError) {
        let fresh = try FileDescriptor.open(path, O_RDWR)
        guard DrmCalls.current.isMaster(fresh.rawValue) != 0 else {
            throw SystemError("drmSetMaster", refusal.errno, "\(path): refused on this descriptor, and another process holds DRM master")
        }
        try move(to: fresh)
        Log.info("drm: \(path): opened again to become DRM master (\(refusal.errno) on the descriptor opened while another process held it)")
    }

    /// Moves every output onto `fresh` (new buffers; the mode is set again at the next
    /// frame) and closes the descriptor used until now, last, once nothing of it is in use.
    private func move(to fresh: consuming FileDescriptor) throws(SystemError) {
        let wasReading = readingEvents
        stopEvents()
        let old = device.take()
        fd = fresh.rawValue
        device = .some(consume fresh)
        var failure: SystemError?
        for o in outputs {
            do throws(SystemError) { try o.rebuildBuffers() } catch {
                Log.warning("drm: \(path): \(o.connectorName): no buffers on the card opened again: \(error)")
                failure = failure ?? error
            }
        }
        do { try old?.close() } catch { Log.warning("drm: \(path): closing the descriptor used until now: \(error)") }
        leftovers = []
        inheritedDescriptor = false
        descriptorChanged?(fd)
        if wasReading { try startEvents() }
        if let failure { throw failure }
    }

    /// Whether this descriptor is DRM master now.
    var holdsMaster: Bool { !masterDropped && !isClosed && DrmCalls.current.isMaster(fd) != 0 }

    // MARK: events

    /// The card whose events are being read (the C callback cannot capture it), in a
    /// thread-specific slot set for the duration of `drmHandleEvent` only: two loops on two
    /// threads (tests running side by side) each see their own card. (A task-local would
    /// link Swift's concurrency runtime into the daemon: 0.7 MB.)
    private static let dispatchingKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create")
        return key
    }()

    static var dispatching: DrmCard? {
        pthread_getspecific(dispatchingKey).map { Unmanaged<DrmCard>.fromOpaque($0).takeUnretainedValue() }
    }

    /// `drmHandleEvent` with this card bound for its callbacks; the result and errno.
    private func handleEvents(_ drm: DrmCalls) -> (Int32, Errno) {
        pthread_setspecific(Self.dispatchingKey, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(Self.dispatchingKey, nil) }
        let r = drm.handleEvent(fd, &eventContext)
        return (r, Errno.current)
    }

    func nextSequence() -> UInt64 {
        sequence += 1
        return sequence
    }

    func startEvents() throws(SystemError) {
        guard !readingEvents, !isClosed else { return }
        try loop.register(fd, .readable) { [unowned self] _ in self.readEvents() }
        readingEvents = true
    }

    func stopEvents() {
        guard readingEvents else { return }
        loop.unregister(fd)
        readingEvents = false
    }

    private func readEvents() {
        let (r, e) = handleEvents(DrmCalls.current)
        guard r != 0, e != .interrupted, e != .wouldBlock else { return }
        Log.error("drm: drmHandleEvent on \(path): \(e); page-flip events cannot be read")
        stopEvents()
        for o in outputs { o.eventsFailed("drmHandleEvent: \(e)") }
    }

    /// Waits up to a second for the card's pending events (a flip cannot be cancelled:
    /// its buffer stays in use until the event), at shutdown only.
    func drainEvents() {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if SystemCalls.current.poll(&p, 1, 1000) > 0 {
            let (r, e) = handleEvents(DrmCalls.current)
            if r != 0 { Log.warning("drm: drmHandleEvent at shutdown: \(e)") }
        } else {
            Log.warning("drm: the pending page flip did not complete within 1 s")
        }
    }

    private func flipCompleted(crtc: UInt32, sequence: UInt64, seconds: UInt32, microseconds: UInt32) {
        guard let o = outputs.first(where: { $0.crtcID == crtc }) ?? (outputs.count == 1 && crtc == 0 ? outputs.first : nil) else {
            Log.info("drm: \(path): page-flip event for CRTC \(crtc), which no output uses now")
            return
        }
        // Event times are CLOCK_MONOTONIC; a driver without vblank may leave them zero.
        let time = seconds == 0 && microseconds == 0
            ? EventLoop.now() : Instant(seconds: Int(seconds), microseconds: Int(microseconds))
        o.flipCompleted(sequence: sequence, at: time)
    }

    // MARK: shutdown

    /// The daemon stops while locked: the card is left as it is for the daemon after this
    /// one. Nothing is torn down (no framebuffer removed, no CRTC given back) and nothing
    /// is taken out of systemd's store: the store's copy of the descriptor keeps the file,
    /// and with it DRM master and the lock screen's last frame on the screen. Page-flip
    /// events are no longer read; `close` does nothing after it.
    public func leaveOnScreen() {
        if isClosed || closing { return }
        isClosed = true
        for o in outputs { o.leaveOnScreen() }
        stopEvents()
        Log.info("drm: \(path) left as it is (DRM master, the lock screen on it) for the daemon after this one")
    }

    /// Tears every output down, newest first, then closes the card. Safe to call twice.
    public func close() {
        if isClosed || closing { return }
        closing = true
        for o in outputs.reversed() { o.shutdown() }
        isClosed = true
        stopEvents()
        do { try device.take()?.close() } catch { Log.warning("drm: \(error)") }
        descriptorChanged?(nil)
        Log.info("drm: \(path) released")
    }
}
