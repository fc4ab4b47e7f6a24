import CUdev
import Glibc
import TouchlockCore
import TouchlockSystem

/// udev's record of devices, read through libudev: the properties its rules and hwdb gave
/// each device, kept by udevd in a database whose format is its own. Without udevd there is
/// no database: libudev then knows only what the kernel says (sysfs), and no device is
/// initialised.
public final class Udev {
    let context: OpaquePointer

    /// What libudev knows of one device.
    public struct Record: Equatable, Sendable {
        /// udevd has processed the device (its rules ran, its properties are recorded).
        public var initialized: Bool
        /// Every property libudev lists: the kernel's (uevent: DEVNAME, MAJOR, MINOR,
        /// SUBSYSTEM...) and, when initialised, udev's.
        public var properties: [String: String]

        /// udev's properties, or nil when udev has not initialised the device.
        public var udevProperties: UdevProperties? { initialized ? UdevProperties(properties) : nil }
    }

    public init() throws(SystemError) {
        context = try SystemCall.checkPointer("udev_new") { udev_new() }
    }

    deinit { udev_unref(context) }

    /// The record of the character device numbered `number` (a node's st_rdev). `label`
    /// names it in errors; ENOENT or ENODEV: the kernel has no such device (any more).
    public func record(ofCharacterDevice number: dev_t, _ label: String) throws(SystemError) -> Record {
        errno = 0
        let device = try SystemCall.checkPointer("udev_device_new_from_devnum", label) {
            udev_device_new_from_devnum(context, CChar(UInt8(ascii: "c")), number)
        }
        defer { udev_device_unref(device) }
        var properties: [String: String] = [:]
        var entry = udev_device_get_properties_list_entry(device)
        while let e = entry {
            if let name = udev_list_entry_get_name(e) {
                properties[String(cString: name)] = udev_list_entry_get_value(e).map { String(cString: $0) } ?? ""
            }
            entry = udev_list_entry_get_next(e)
        }
        return Record(initialized: udev_device_get_is_initialized(device) > 0, properties: properties)
    }
}

/// udevd's queue of events, through libudev: whether udevd runs, and a descriptor that
/// becomes readable when its queue may have emptied (libudev watches udevd's run directory
/// with inotify for the file that marks a queue; no polling).
public final class UdevQueue {
    private let queue: OpaquePointer
    private let udev: Udev
    /// The descriptor to wait on, libudev's; it closes with the queue.
    public let fd: Int32

    /// Fails when udevd does not run (its run directory is missing).
    public init(_ udev: Udev) throws(SystemError) {
        self.udev = udev
        errno = 0
        let queue = try SystemCall.checkPointer("udev_queue_new") { udev_queue_new(udev.context) }
        do {
            fd = try SystemCall.checkNegative("udev_queue_get_fd") { udev_queue_get_fd(queue) }
        } catch {
            udev_queue_unref(queue)
            throw error
        }
        self.queue = queue
    }

    deinit { udev_queue_unref(queue) }

    /// udevd runs (its control socket is there).
    public static func udevdIsActive(_ udev: Udev) -> Bool {
        guard let q = udev_queue_new(udev.context) else { return false }
        defer { udev_queue_unref(q) }
        return udev_queue_get_udev_is_active(q) > 0
    }

    /// No event is queued or being processed.
    public var isEmpty: Bool { udev_queue_get_queue_is_empty(queue) > 0 }

    /// Reads what made the descriptor readable.
    public func flush() { _ = udev_queue_flush(queue) }
}
