import CEvdev
import Glibc
import TouchlockCore
import TouchlockSystem

/// One /dev/input/event* node read through libevdev, with CLOCK_MONOTONIC timestamps.
public final class EvdevDevice {
    public let path: String
    public let name: String
    public let fd: Int32
    public let slotCount: Int
    public let xRange: AxisRange
    public let yRange: AxisRange
    private let dev: OpaquePointer
    public private(set) var grabbed = false

    public enum Kind: Equatable, Sendable {
        case touchscreen
        /// Not a direct multitouch device, with the reason.
        case other(String)
    }

    public enum ReadResult: Equatable {
        /// Read until EAGAIN.
        case drained
        /// The node went away (ENODEV) or failed; the device must be closed.
        case gone(String)
    }

    /// Opens `path` O_RDWR|O_NONBLOCK|O_CLOEXEC (read-only if writing is refused).
    public init(path: String) throws(SystemError) {
        self.path = path
        var fd = Glibc.open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 && (errno == EACCES || errno == EROFS) {
            fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        }
        if fd < 0 { throw SystemError("open", .current, path) }
        var dev: OpaquePointer? = nil
        do {
            try SystemCall.checkNegative("libevdev_new_from_fd", path) { libevdev_new_from_fd(fd, &dev) }
        } catch {
            close(fd)
            throw error
        }
        self.fd = fd
        self.dev = dev!
        libevdev_set_clock_id(self.dev, CLOCK_MONOTONIC)
        name = String(cString: libevdev_get_name(self.dev))
        let slots = libevdev_get_num_slots(self.dev)
        slotCount = slots > 0 ? Int(slots) : 1
        xRange = Self.axis(self.dev, ABS_MT_POSITION_X) ?? Self.axis(self.dev, ABS_X) ?? AxisRange(minimum: 0, maximum: 1)
        yRange = Self.axis(self.dev, ABS_MT_POSITION_Y) ?? Self.axis(self.dev, ABS_Y) ?? AxisRange(minimum: 0, maximum: 1)
    }

    deinit {
        if grabbed { libevdev_grab(dev, LIBEVDEV_UNGRAB) }
        libevdev_free(dev)
        close(fd)
    }

    private static func axis(_ dev: OpaquePointer, _ code: Int32) -> AxisRange? {
        guard libevdev_has_event_code(dev, UInt32(EV_ABS), UInt32(code)) != 0,
              let info = libevdev_get_abs_info(dev, UInt32(code)) else { return nil }
        return AxisRange(minimum: info.pointee.minimum, maximum: info.pointee.maximum,
                         resolution: info.pointee.resolution)
    }

    /// A direct-touch multitouch device (protocol B): INPUT_PROP_DIRECT, or multitouch
    /// axes without pointer buttons (as libinput and the kernel's hid-multitouch see it).
    public var kind: Kind {
        let hasMT = libevdev_has_event_code(dev, UInt32(EV_ABS), UInt32(ABS_MT_POSITION_X)) != 0
            && libevdev_has_event_code(dev, UInt32(EV_ABS), UInt32(ABS_MT_POSITION_Y)) != 0
        if !hasMT { return .other("no multitouch axes") }
        if libevdev_has_event_code(dev, UInt32(EV_ABS), UInt32(ABS_MT_SLOT)) == 0 {
            return .other("multitouch protocol A is not supported yet")
        }
        let direct = libevdev_has_property(dev, UInt32(INPUT_PROP_DIRECT)) != 0
        let pointerButtons = libevdev_has_event_code(dev, UInt32(EV_KEY), UInt32(BTN_LEFT)) != 0
            || libevdev_has_property(dev, UInt32(INPUT_PROP_POINTER)) != 0
        if direct || !pointerButtons { return .touchscreen }
        return .other("an indirect device (touchpad or tablet)")
    }

    /// Reads every pending event. On SYN_DROPPED, libevdev's sync brings the state back
    /// to the device's: the deltas it returns are passed on like ordinary events, so no
    /// touch stays down that the finger has lifted.
    public func read(_ sink: (InputEvent) -> Void) -> ReadResult {
        var ev = input_event()
        var flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
        while true {
            let rc = libevdev_next_event(dev, flags, &ev)
            if rc == -EAGAIN {
                if flags == LIBEVDEV_READ_FLAG_SYNC.rawValue {
                    flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue  // sync finished
                    continue
                }
                return .drained
            }
            if rc == -EINTR { continue }
            if rc < 0 {
                let e = Errno(rawValue: -rc)
                return .gone(e == .noDevice ? "device removed" : "read failed: \(e)")
            }
            if rc == LIBEVDEV_READ_STATUS_SYNC.rawValue {
                if flags == LIBEVDEV_READ_FLAG_NORMAL.rawValue {
                    // This is the SYN_DROPPED itself; the deltas follow with the SYNC flag.
                    Log.warning("\(path): SYN_DROPPED, the kernel's buffer overflowed; resyncing")
                    flags = LIBEVDEV_READ_FLAG_SYNC.rawValue
                    continue
                }
            }
            sink(InputEvent(type: ev.type, code: ev.code, value: ev.value,
                            time: Instant(seconds: Int(ev.time.tv_sec), microseconds: Int(ev.time.tv_usec))))
        }
    }

    /// EVIOCGRAB: while locked, no touch reaches other readers (the kiosk app).
    public func grab(_ on: Bool) {
        if on == grabbed { return }
        let rc = libevdev_grab(dev, on ? LIBEVDEV_GRAB : LIBEVDEV_UNGRAB)
        if rc < 0 {
            Log.warning("\(path): \(on ? "grab" : "ungrab") failed: \(Errno(rawValue: -rc))")
        } else {
            grabbed = on
        }
    }

    /// The event nodes under /dev/input, sorted by number.
    public static func nodes(in dir: String = "/dev/input") -> [String] {
        guard let d = opendir(dir) else { return [] }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let n = withUnsafePointer(to: e.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if n.hasPrefix("event") { names.append(n) }
        }
        return names.sorted { (Int($0.dropFirst(5)) ?? 0) < (Int($1.dropFirst(5)) ?? 0) }.map { "\(dir)/\($0)" }
    }
}
