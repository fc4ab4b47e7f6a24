import CEvdev
import Glibc
import TouchlockCore
import TouchlockSystem

/// One /dev/input/event* node read through libevdev, with CLOCK_MONOTONIC timestamps.
public final class EvdevDevice {
    public let path: String
    public let name: String
    /// The node's descriptor number, for the event loop; the device owns and closes it.
    public var fd: Int32 { descriptor.rawValue }
    private let descriptor: FileDescriptor
    /// What the device says about itself; decides how its touches are read.
    public let description: DeviceDescription
    private let dev: OpaquePointer
    public private(set) var grabbed = false

    public enum ReadResult: Equatable {
        /// Read until EAGAIN.
        case drained
        /// The node went away (ENODEV) or failed; the device must be closed.
        case gone(String)
    }

    /// Opens `path` O_RDWR|O_NONBLOCK|O_CLOEXEC (read-only if writing is refused).
    public init(path: String) throws(SystemError) {
        self.path = path
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, O_RDWR | O_NONBLOCK)
        } catch where error.errno == .permissionDenied || error.errno == Errno(rawValue: EROFS) {
            descriptor = try FileDescriptor.open(path, O_RDONLY | O_NONBLOCK)
        }
        let evdev = EvdevCalls.current
        var dev: OpaquePointer? = nil
        let fd = descriptor.rawValue
        try SystemCall.checkNegative("libevdev_new_from_fd", path) { evdev.newFromFD(fd, &dev) }
        self.descriptor = descriptor
        self.dev = dev!
        if evdev.setClockID(self.dev, CLOCK_MONOTONIC) < 0 {
            Log.warning("\(path): cannot use CLOCK_MONOTONIC timestamps")
        }
        name = String(cString: libevdev_get_name(self.dev))
        description = Self.describe(self.dev, name: name)
    }

    /// The same description an evemu file gives: ids, properties, codes and axes.
    private static func describe(_ dev: OpaquePointer, name: String) -> DeviceDescription {
        var d = DeviceDescription(name: name, id: DeviceID(
            bus: UInt16(truncatingIfNeeded: libevdev_get_id_bustype(dev)),
            vendor: UInt16(truncatingIfNeeded: libevdev_get_id_vendor(dev)),
            product: UInt16(truncatingIfNeeded: libevdev_get_id_product(dev)),
            version: UInt16(truncatingIfNeeded: libevdev_get_id_version(dev))))
        for p in 0...Int(INPUT_PROP_MAX) where libevdev_has_property(dev, UInt32(p)) != 0 { d.properties.insert(p) }
        for (type, maxCode) in [(EV_KEY, KEY_MAX), (EV_REL, REL_MAX), (EV_ABS, ABS_MAX)] {
            for code in 0...Int(maxCode) where libevdev_has_event_code(dev, UInt32(type), UInt32(code)) != 0 {
                d.codes[UInt16(type), default: []].insert(UInt16(code))
            }
        }
        for code in d.codes[UInt16(EV_ABS)] ?? [] {
            if let a = axis(dev, Int32(code)) { d.axes[code] = a }
        }
        return d
    }

    /// The device's state as libevdev holds it (after a sync, the kernel's).
    public func snapshot() -> DeviceSnapshot {
        var s = DeviceSnapshot()
        let slots = libevdev_get_num_slots(dev)
        if slots > 0 {
            for i in 0..<slots {
                func value(_ code: Int32) -> Int32? {
                    var v: Int32 = 0
                    return libevdev_fetch_slot_value(dev, UInt32(i), UInt32(code), &v) != 0 ? v : nil
                }
                s.slots.append(DeviceSnapshot.Slot(trackingID: value(ABS_MT_TRACKING_ID) ?? -1,
                                                   x: value(ABS_MT_POSITION_X), y: value(ABS_MT_POSITION_Y)))
            }
            s.currentSlot = Int(libevdev_get_current_slot(dev))
        }
        for code in description.codes[UInt16(EV_KEY)] ?? [] where code == EventCode.BTN_TOUCH || code == EventCode.BTN_LEFT {
            s.keys[code] = libevdev_get_event_value(dev, UInt32(EV_KEY), UInt32(code))
        }
        for code in description.axes.keys where code < EventCode.ABS_MT_SLOT {
            s.axes[code] = libevdev_get_event_value(dev, UInt32(EV_ABS), UInt32(code))
        }
        return s
    }

    /// Ungrabs and frees libevdev's state; the descriptor closes after, as it goes.
    deinit {
        let evdev = EvdevCalls.current
        if grabbed { _ = evdev.grab(dev, false) }
        evdev.free(dev)
    }

    private static func axis(_ dev: OpaquePointer, _ code: Int32) -> AxisRange? {
        guard libevdev_has_event_code(dev, UInt32(EV_ABS), UInt32(code)) != 0,
              let info = libevdev_get_abs_info(dev, UInt32(code)) else { return nil }
        return AxisRange(minimum: info.pointee.minimum, maximum: info.pointee.maximum,
                         resolution: info.pointee.resolution)
    }

    /// Reads every pending event. On SYN_DROPPED, libevdev drops the kernel's cut frame
    /// and syncs its state with the device; the sync's events bring libevdev up to date,
    /// then `resync` gets the synced state (and the time of the sync), so that no touch
    /// stays down that the finger has lifted.
    public func read(_ sink: (InputEvent) -> Void, resync: (DeviceSnapshot, Instant) -> Void) -> ReadResult {
        var ev = input_event()
        var flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
        var syncTime: Instant?
        let evdev = EvdevCalls.current
        while true {
            // EINTR is retried; EAGAIN (nil) means everything pending has been read.
            let status: Int32?
            do {
                status = try SystemCall.checkNegativeIO("libevdev_next_event", path) { evdev.nextEvent(dev, flags, &ev) }
            } catch {
                return .gone(error.errno == .noDevice ? "device removed" : "read failed: \(error.errno)")
            }
            guard let rc = status else {
                if flags == LIBEVDEV_READ_FLAG_SYNC.rawValue {
                    flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue  // sync finished
                    resync(snapshot(), syncTime ?? EventLoop.now())
                    syncTime = nil
                    continue
                }
                return .drained
            }
            if rc == LIBEVDEV_READ_STATUS_SYNC.rawValue {
                if flags == LIBEVDEV_READ_FLAG_NORMAL.rawValue {
                    // This is the SYN_DROPPED itself; the deltas follow with the SYNC flag.
                    Log.warning("\(path): SYN_DROPPED, the kernel's buffer overflowed; resyncing")
                    flags = LIBEVDEV_READ_FLAG_SYNC.rawValue
                    continue
                }
            }
            let time = Instant(seconds: Int(ev.time.tv_sec), microseconds: Int(ev.time.tv_usec))
            if flags == LIBEVDEV_READ_FLAG_SYNC.rawValue {
                syncTime = time  // a sync delta: libevdev's state is what counts
                continue
            }
            sink(InputEvent(type: ev.type, code: ev.code, value: ev.value, time: time))
        }
    }

    /// The node's device number (st_rdev), by which udev knows it; nil if fstat fails.
    public var deviceNumber: dev_t? {
        var st = stat()
        do { try SystemCall.check("fstat", path) { fstat(fd, &st) } } catch { return nil }
        return st.st_rdev
    }

    /// The device number of the character device node at `path`, before it is opened; nil
    /// if it is none (or is gone).
    public static func deviceNumber(of path: String) -> dev_t? {
        var st = stat()
        do { try SystemCall.check("stat", path) { stat(path, &st) } } catch { return nil }
        return st.st_mode & S_IFMT == S_IFCHR ? st.st_rdev : nil
    }

    /// EVIOCGRAB: while locked, no touch reaches other readers (the kiosk app).
    public func grab(_ on: Bool) {
        if on == grabbed { return }
        let rc = EvdevCalls.current.grab(dev, on)
        if rc < 0 {
            Log.warning("\(path): \(on ? "grab" : "ungrab") failed: \(Errno(rawValue: -rc))")
        } else {
            grabbed = on
        }
    }

    /// The event nodes under /dev/input, sorted by number.
    public static func nodes(in dir: String = "/dev/input") -> [String] {
        let names = ((try? DirectoryListing.names(dir)) ?? []).filter { $0.hasPrefix("event") }
        return names.sorted { (Int($0.dropFirst(5)) ?? 0) < (Int($1.dropFirst(5)) ?? 0) }.map { "\(dir)/\($0)" }
    }
}
