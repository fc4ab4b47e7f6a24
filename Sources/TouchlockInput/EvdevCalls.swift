import CEvdev
import Glibc
import TouchlockSystem

/// The libevdev calls that reach the kernel (reads, ioctls), as one table of functions:
/// the input half of the syscall seam (`SystemCalls` opens and closes the node). Tests
/// replace it to force EINTR, EAGAIN, ENODEV and reads cut mid-frame; in release builds
/// `current` is `real`, inlined.
public struct EvdevCalls: Sendable {
    public var newFromFD: @Sendable (_ fd: Int32, _ device: UnsafeMutablePointer<OpaquePointer?>) -> Int32
    public var free: @Sendable (_ device: OpaquePointer) -> Void
    public var setClockID: @Sendable (_ device: OpaquePointer, _ clock: clockid_t) -> Int32
    public var nextEvent: @Sendable (_ device: OpaquePointer, _ flags: UInt32, _ event: UnsafeMutablePointer<input_event>) -> Int32
    public var grab: @Sendable (_ device: OpaquePointer, _ on: Bool) -> Int32

    @usableFromInline init(
        newFromFD: @escaping @Sendable (Int32, UnsafeMutablePointer<OpaquePointer?>) -> Int32,
        free: @escaping @Sendable (OpaquePointer) -> Void,
        setClockID: @escaping @Sendable (OpaquePointer, clockid_t) -> Int32,
        nextEvent: @escaping @Sendable (OpaquePointer, UInt32, UnsafeMutablePointer<input_event>) -> Int32,
        grab: @escaping @Sendable (OpaquePointer, Bool) -> Int32
    ) {
        self.newFromFD = newFromFD
        self.free = free
        self.setClockID = setClockID
        self.nextEvent = nextEvent
        self.grab = grab
    }

    /// libevdev.
    @inlinable public static var real: EvdevCalls {
        EvdevCalls(
            newFromFD: { libevdev_new_from_fd($0, $1) },
            free: { libevdev_free($0) },
            setClockID: { libevdev_set_clock_id($0, $1) },
            nextEvent: { libevdev_next_event($0, $1, $2) },
            grab: { libevdev_grab($0, $1 ? LIBEVDEV_GRAB : LIBEVDEV_UNGRAB) })
    }

    #if ENABLE_MOCKING
    @TaskLocal public static var current: EvdevCalls = .real
    #else
    @inlinable public static var current: EvdevCalls { .real }
    #endif
}
