import CDrm
import Glibc
import TouchlockDisplay
import TouchlockSystem

/// A KMS device in memory: a connected connector (Virtual-1, 64x48) and a second one
/// (Virtual-2, 32x24, unplugged until a test plugs it), each on its own encoder, with two
/// CRTCs either encoder can drive, dumb buffers backed by anonymous memory, page flips completed through an
/// eventfd that stands in for the card's descriptor. It records every call in order and
/// fails the calls a test names with the errno it names, as a real card would (after an
/// unplug, while another process is DRM master, with a flip pending).
final class FakeDrmDevice: @unchecked Sendable {
    static let path = "/dev/dri/card0"
    static let size = (width: 64, height: 48)
    let connectorID: UInt32 = 31, encoderID: UInt32 = 41, crtcID: UInt32 = 51
    let connector2: UInt32 = 32, encoder2: UInt32 = 42, crtc2: UInt32 = 52
    /// Whether Virtual-2 is plugged in.
    var secondConnected = false

    /// Every call, in order: "drmModeAddFB(1)", "munmap(2)", "close"...
    private(set) var trace: [String] = []
    /// Descriptor of the open card (one end of a socket pair), -1 when closed.
    private(set) var fd: Int32 = -1
    /// The other end, where the "kernel" writes page-flip events.
    private var eventWriter: Int32 = -1
    /// Allocations handed out and not freed: resources, connectors, encoders, CRTCs,
    /// dumb buffers, framebuffers and mappings.
    private(set) var live: [String: Int] = [:]
    private var failures: [String: (from: Int, through: Int, errno: Int32)] = [:]
    private var calls: [String: Int] = [:]
    private var nextHandle: UInt32 = 1
    private var mappings: [UnsafeMutableRawPointer: (handle: UInt32, length: Int)] = [:]
    /// The flips submitted and not yet completed, oldest first: at most one per CRTC, as
    /// the kernel allows; each event the card turns readable with completes the oldest.
    private var pendingFlips: [(crtc: UInt32, userData: UnsafeMutableRawPointer?)] = []
    /// Per CRTC, what SetCrtc and PageFlip last put on it.
    private(set) var scannedOutOn: [UInt32: UInt32] = [:]
    /// Whether the open card is DRM master (another process may take it: a test sets it false).
    var master = true
    /// When set, an open makes the new descriptor master or not (the kernel makes the first
    /// descriptor opened while nobody is master the master).
    var masterAtOpen: Bool?
    /// How many times the card was opened.
    private(set) var opens = 0
    /// A flip is pending and its event will not come (a stuck driver) until `deliverFlip`.
    var holdFlips = false
    /// drmHandleEvent fails with this errno (a card whose events cannot be read).
    var failEvents: Int32?
    /// What SetCrtc and PageFlip last put on screen.
    private(set) var scannedOut: UInt32 = 0
    /// The connector's "panel orientation" (0 Normal, 1 Upside Down, 2 Left Side Up,
    /// 3 Right Side Up, as in the kernel's enum); nil: the connector has no such property.
    var panelOrientation: UInt64?
    /// Framebuffers a process before made on the descriptor (`leaveFramebuffers`): listed
    /// by GetResources, and while there, GetCrtc reports what each CRTC scans out.
    private(set) var leftovers: [UInt32] = []
    private let leftoverIDs = UnsafeMutablePointer<UInt32>.allocate(capacity: 8)

    private let connectorIDs: UnsafeMutablePointer<UInt32>
    private let crtcIDs: UnsafeMutablePointer<UInt32>
    private let encoderIDs: UnsafeMutablePointer<UInt32>
    private let modes: UnsafeMutablePointer<drmModeModeInfo>
    /// Virtual-2's: 32x24 (preferred) and 16x12.
    private let modes2: UnsafeMutablePointer<drmModeModeInfo>

    init() {
        connectorIDs = Self.array([connectorID, connector2])
        crtcIDs = Self.array([crtcID, crtc2])
        encoderIDs = Self.array([encoderID, encoder2])
        modes = Self.array([Self.mode(Self.size.width, Self.size.height, preferred: true)])
        modes2 = Self.array([Self.mode(32, 24, preferred: true), Self.mode(16, 12, preferred: false)])
    }

    /// `values` where libdrm's structures can point to them, until deinit.
    private static func array<T>(_ values: [T]) -> UnsafeMutablePointer<T> {
        let p = UnsafeMutablePointer<T>.allocate(capacity: values.count)
        p.initialize(from: values, count: values.count)
        return p
    }

    private static func mode(_ w: Int, _ h: Int, preferred: Bool) -> drmModeModeInfo {
        var m = drmModeModeInfo()
        m.hdisplay = UInt16(w); m.vdisplay = UInt16(h)
        m.vrefresh = 60
        m.type = preferred ? UInt32(DRM_MODE_TYPE_PREFERRED) : 0
        return m
    }

    deinit {
        connectorIDs.deallocate(); crtcIDs.deallocate(); encoderIDs.deallocate(); modes.deallocate(); modes2.deallocate()
        if fd >= 0 { Glibc.close(fd) }
        if eventWriter >= 0 { Glibc.close(eventWriter) }
    }

    /// Makes the `nth` call of `call` (1-based) and the `times - 1` after it fail with `errno`.
    func fail(_ call: String, with errno: Int32, onCall nth: Int = 1, times: Int = 1) {
        failures[call] = (nth, nth + times - 1, errno)
    }

    /// The trace from the first entry that starts with `prefix`.
    func trace(from prefix: String) -> [String] {
        guard let i = trace.lastIndex(where: { $0.hasPrefix(prefix) }) else { return [] }
        return Array(trace[i...])
    }

    var outstanding: Int { live.values.reduce(0, +) }

    /// Records `entry`; the errno the call must fail with, if it must.
    private func enter(_ call: String, _ entry: String? = nil) -> Int32? {
        calls[call, default: 0] += 1
        if let f = failures[call], (f.from...f.through).contains(calls[call]!) {
            trace.append("\(entry ?? call) = \(Errno(rawValue: f.errno))")
            errno = f.errno
            return f.errno
        }
        trace.append(entry ?? call)
        return nil
    }

    private func acquired(_ kind: String) { live[kind, default: 0] += 1 }

    /// What a daemon killed while locked leaves on its descriptor: framebuffers (with their
    /// buffers, handle = id - 100), the first of them on the first CRTC.
    func leaveFramebuffers(_ ids: [UInt32]) {
        leftovers = ids
        for _ in ids { acquired("fb"); acquired("dumb") }
        scannedOutOn[crtcID] = ids[0]
        scannedOut = ids[0]
    }
    private func released(_ kind: String) {
        live[kind, default: 0] -= 1
        precondition(live[kind]! >= 0, "\(kind) freed twice")
    }

    // MARK: the tables

    var systemCalls: SystemCalls {
        var s = SystemCalls.real
        s.open = { @Sendable path, flags, mode in
            guard String(cString: path) == Self.path else { return Glibc.open(path, flags, mode) }
            if let e = self.enter("open") { errno = e; return -1 }
            self.opens += 1
            if let m = self.masterAtOpen { self.master = m }
            var pair: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0, &pair) == 0 else { return -1 }
            self.fd = pair[0]
            self.eventWriter = pair[1]
            return pair[0]
        }
        s.close = { fd in
            if fd == self.fd && fd >= 0 {
                _ = self.enter("close")
                self.fd = -1
            }
            return Glibc.close(fd)
        }
        s.mmap = { length, fd, offset in
            let handle = UInt32(offset >> 12)
            if let e = self.enter("mmap", "mmap(\(handle))") { errno = e; return MAP_FAILED }
            let p = Glibc.mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
            self.mappings[p] = (handle, length)
            self.acquired("mapping")
            return p
        }
        s.munmap = { p, length in
            let m = self.mappings.removeValue(forKey: p!)!
            precondition(m.length == length, "munmap of \(length) bytes, mapped \(m.length)")
            _ = self.enter("munmap", "munmap(\(m.handle))")
            self.released("mapping")
            return Glibc.munmap(p, length)
        }
        return s
    }

    var drmCalls: DrmCalls {
        var d = DrmCalls.real
        d.getCap = { _, _, value in
            if let e = self.enter("drmGetCap") { errno = e; return -1 }
            value.pointee = 1
            return 0
        }
        d.isMaster = { _ in self.master ? 1 : 0 }
        d.setMaster = { _ in
            if let e = self.enter("drmSetMaster") { errno = e; return -1 }
            self.master = true
            return 0
        }
        d.dropMaster = { _ in
            if let e = self.enter("drmDropMaster") { errno = e; return -1 }
            self.master = false
            return 0
        }
        d.getResources = { _ in
            if let e = self.enter("drmModeGetResources") { errno = e; return nil }
            var r = drmModeRes()
            r.count_crtcs = 2; r.crtcs = self.crtcIDs
            r.count_connectors = 2; r.connectors = self.connectorIDs
            r.count_encoders = 2; r.encoders = self.encoderIDs
            for (i, id) in self.leftovers.prefix(8).enumerated() { self.leftoverIDs[i] = id }
            r.count_fbs = Int32(min(8, self.leftovers.count)); r.fbs = self.leftoverIDs
            let p = UnsafeMutablePointer<drmModeRes>.allocate(capacity: 1)
            p.initialize(to: r)
            self.acquired("resources")
            return p
        }
        d.freeResources = { p in self.released("resources"); p.deallocate() }
        d.getConnector = { _, id in
            guard id == self.connectorID || id == self.connector2 else { errno = ENOENT; return nil }
            if let e = self.enter("drmModeGetConnector") { errno = e; return nil }
            var c = drmModeConnector()
            c.connector_id = id
            c.connector_type = UInt32(DRM_MODE_CONNECTOR_VIRTUAL)
            if id == self.connectorID {
                c.encoder_id = self.encoderID
                c.connector_type_id = 1
                c.connection = DRM_MODE_CONNECTED
                c.mmWidth = 100; c.mmHeight = 75
                c.count_modes = 1; c.modes = self.modes
                c.count_encoders = 1; c.encoders = self.encoderIDs
            } else {
                c.connector_type_id = 2
                c.connection = self.secondConnected ? DRM_MODE_CONNECTED : DRM_MODE_DISCONNECTED
                c.count_modes = self.secondConnected ? 2 : 0; c.modes = self.modes2
                c.count_encoders = 1; c.encoders = self.encoderIDs + 1
            }
            let p = UnsafeMutablePointer<drmModeConnector>.allocate(capacity: 1)
            p.initialize(to: c)
            self.acquired("connector")
            return p
        }
        d.freeConnector = { p in self.released("connector"); p.deallocate() }
        d.getEncoder = { _, id in
            guard id == self.encoderID || id == self.encoder2 else { errno = ENOENT; return nil }
            var e = drmModeEncoder()
            e.encoder_id = id
            // The first drives the first CRTC now; either can drive either.
            e.crtc_id = id == self.encoderID ? self.crtcID : 0
            e.possible_crtcs = 0b11
            let p = UnsafeMutablePointer<drmModeEncoder>.allocate(capacity: 1)
            p.initialize(to: e)
            self.acquired("encoder")
            return p
        }
        d.freeEncoder = { p in self.released("encoder"); p.deallocate() }
        d.getCrtc = { _, id in
            var c = drmModeCrtc()
            c.crtc_id = id
            c.buffer_id = self.leftovers.isEmpty ? 7 : self.scannedOutOn[id] ?? 0  // 7: the console's, restored at shutdown
            c.mode_valid = 1
            c.mode = self.modes.pointee
            let p = UnsafeMutablePointer<drmModeCrtc>.allocate(capacity: 1)
            p.initialize(to: c)
            self.acquired("crtc")
            return p
        }
        d.freeCrtc = { p in self.released("crtc"); p.deallocate() }
        d.createDumbBuffer = { _, width, height, bpp, handle, pitch, size in
            let h = self.nextHandle
            if let e = self.enter("drmModeCreateDumbBuffer", "drmModeCreateDumbBuffer(\(h))") { errno = e; return -e }
            self.nextHandle += 1
            handle.pointee = h
            pitch.pointee = width * bpp / 8
            size.pointee = UInt64(width * bpp / 8 * height)
            self.acquired("dumb")
            return 0
        }
        d.addFB = { _, _, _, depth, bpp, _, handle, fbID in
            precondition(depth == 24 && bpp == 32)
            if let e = self.enter("drmModeAddFB", "drmModeAddFB(\(handle))") { errno = e; return -e }
            fbID.pointee = 100 + handle
            self.acquired("fb")
            return 0
        }
        d.mapDumbBuffer = { _, handle, offset in
            if let e = self.enter("drmModeMapDumbBuffer", "drmModeMapDumbBuffer(\(handle))") { errno = e; return -e }
            offset.pointee = UInt64(handle) << 12
            return 0
        }
        d.framebufferHandle = { _, fbID in fbID > 100 ? fbID - 100 : 0 }
        d.rmFB = { _, fbID in
            self.leftovers.removeAll { $0 == fbID }
            _ = self.enter("drmModeRmFB", "drmModeRmFB(\(fbID - 100))")
            self.released("fb")
            return 0
        }
        d.destroyDumbBuffer = { _, handle in
            _ = self.enter("drmModeDestroyDumbBuffer", "drmModeDestroyDumbBuffer(\(handle))")
            self.released("dumb")
            return 0
        }
        d.setCrtc = { _, crtc, fbID, _, _, _, _, _ in
            precondition(crtc == self.crtcID || crtc == self.crtc2)
            let what = fbID > 100 ? "\(fbID - 100)" : "console"
            let on = crtc == self.crtcID ? "" : " on CRTC 2"
            if let e = self.enter("drmModeSetCrtc", "drmModeSetCrtc(\(what))\(on)") { errno = e; return -e }
            if crtc == self.crtcID { self.scannedOut = fbID }
            self.scannedOutOn[crtc] = fbID
            return 0
        }
        d.pageFlip = { fd, crtc, fbID, _, userData in
            if self.pendingFlips.contains(where: { $0.crtc == crtc }) { _ = self.enter("drmModePageFlip"); errno = EBUSY; return -EBUSY }
            if let e = self.enter("drmModePageFlip", "drmModePageFlip(\(fbID - 100))") { errno = e; return -e }
            self.pendingFlips.append((crtc, userData))
            if crtc == self.crtcID { self.scannedOut = fbID }
            self.scannedOutOn[crtc] = fbID
            if !self.holdFlips { self.deliverFlip() }
            return 0
        }
        d.handleEvent = { fd, context in
            var count: UInt64 = 0
            guard Glibc.read(fd, &count, 8) == 8 else { return -1 }
            if let e = self.failEvents { _ = self.enter("drmHandleEvent"); errno = e; return -1 }
            _ = self.enter("drmHandleEvent")
            if !self.pendingFlips.isEmpty {
                let (crtc, userData) = self.pendingFlips.removeFirst()
                if let handler2 = context.pointee.page_flip_handler2 {
                    handler2(fd, 1, 0, 0, crtc, userData)
                } else {
                    context.pointee.page_flip_handler?(fd, 1, 0, 0, userData)
                }
            }
            return 0
        }
        d.getObjectProperties = { _, id, _ in
            guard id == self.connectorID else { errno = ENOENT; return nil }
            if let e = self.enter("drmModeObjectGetProperties") { errno = e; return nil }
            let count = self.panelOrientation == nil ? 2 : 3
            let ids = UnsafeMutablePointer<UInt32>.allocate(capacity: 3)
            ids[0] = 60; ids[1] = 61; ids[2] = 62  // EDID, DPMS, panel orientation
            let values = UnsafeMutablePointer<UInt64>.allocate(capacity: 3)
            values[0] = 0; values[1] = UInt64(DRM_MODE_DPMS_ON); values[2] = self.panelOrientation ?? 0
            var o = drmModeObjectProperties()
            o.count_props = UInt32(count)
            o.props = ids
            o.prop_values = values
            let p = UnsafeMutablePointer<drmModeObjectProperties>.allocate(capacity: 1)
            p.initialize(to: o)
            self.acquired("properties")
            return p
        }
        d.freeObjectProperties = { p in
            self.released("properties")
            p.pointee.props.deallocate()
            p.pointee.prop_values.deallocate()
            p.deallocate()
        }
        d.getProperty = { _, id in
            var r = drmModePropertyRes()
            r.prop_id = id
            let name = Array((id == 61 ? "DPMS" : id == 62 ? "panel orientation" : "EDID").utf8)
            withUnsafeMutableBytes(of: &r.name) { $0.copyBytes(from: name) }
            if id == 62 {
                let names = ["Normal", "Upside Down", "Left Side Up", "Right Side Up"]
                let enums = UnsafeMutablePointer<drm_mode_property_enum>.allocate(capacity: names.count)
                for (i, n) in names.enumerated() {
                    var e = drm_mode_property_enum()
                    e.value = UInt64(i)
                    withUnsafeMutableBytes(of: &e.name) { $0.copyBytes(from: Array(n.utf8)) }
                    enums[i] = e
                }
                r.flags = UInt32(DRM_MODE_PROP_ENUM | DRM_MODE_PROP_IMMUTABLE)
                r.count_enums = Int32(names.count)
                r.enums = enums
            }
            let p = UnsafeMutablePointer<drmModePropertyRes>.allocate(capacity: 1)
            p.initialize(to: r)
            self.acquired("property")
            return p
        }
        d.freeProperty = { p in
            self.released("property")
            p.pointee.enums?.deallocate()
            p.deallocate()
        }
        d.connectorSetProperty = { _, connector, property, value in
            precondition(connector == self.connectorID || connector == self.connector2)
            let what = property == 61 ? (value == UInt64(DRM_MODE_DPMS_OFF) ? "DPMS off" : "DPMS on") : "property \(property)"
            if let e = self.enter("drmModeConnectorSetProperty", "drmModeConnectorSetProperty(\(what))") { errno = e; return -e }
            return 0
        }
        return d
    }

    /// The pixel at (x, y) of the buffer on screen (tests only: a display never reads it).
    func scannedOutPixel(x: Int, y: Int) -> UInt32? {
        guard scannedOut > 100, let m = mappings.first(where: { $0.value.handle == scannedOut - 100 }) else { return nil }
        let pitch = Self.size.width * 4
        return m.key.load(fromByteOffset: y * pitch + x * 4, as: UInt32.self)
    }

    /// The vblank arrives: the card turns readable with the pending flip's event.
    func deliverFlip() {
        var one: UInt64 = 1
        _ = Glibc.write(eventWriter, &one, 8)
    }

    /// Runs `body` with this device in place of the kernel's.
    func run<R>(_ body: () throws -> R) rethrows -> R {
        try SystemCalls.$current.withValue(systemCalls) {
            try DrmCalls.$current.withValue(drmCalls) { try body() }
        }
    }
}
