import Glibc
import TouchlockCore

/// An open file descriptor that closes itself exactly once: when its owner goes away, or
/// earlier through `close()`. It cannot be copied, so no two owners can close it; code
/// that must hand the number to C borrows it through `rawValue`.
public struct FileDescriptor: ~Copyable {
    /// The descriptor's number, for C calls and epoll; valid while this value lives.
    public let rawValue: Int32

    /// Takes ownership of `fd` (from socket, accept, open...).
    public init(adopting fd: Int32) {
        precondition(fd >= 0, "adopting an invalid file descriptor \(fd)")
        rawValue = fd
    }

    /// Opens `path` (O_CLOEXEC is added); EINTR is retried.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(SystemError) -> FileDescriptor {
        let fd = try SystemCall.check("open", path) { SystemCalls.current.open(path, flags | O_CLOEXEC, mode) }
        return FileDescriptor(adopting: fd)
    }

    deinit { Self.close(rawValue, reporting: nil) }

    /// Closes now, and says if the kernel reported an error (EIO from a delayed write).
    public consuming func close() throws(SystemError) {
        let fd = rawValue
        discard self
        var failure: SystemError?
        Self.close(fd, reporting: &failure)
        if let failure { throw failure }
    }

    /// Gives the number up without closing it: the caller owns it now.
    public consuming func relinquish() -> Int32 {
        let fd = rawValue
        discard self
        return fd
    }

    /// close(2) once. EINTR is not retried: on Linux the descriptor is gone either way,
    /// and a retry could close a descriptor another owner just got. EBADF is our bug.
    private static func close(_ fd: Int32, reporting failure: UnsafeMutablePointer<SystemError?>?) {
        if SystemCalls.current.close(fd) == 0 { return }
        let e = Errno.current
        SystemCall.preconditionValid(e, "close")
        if e == .interrupted { return }
        if let failure { failure.pointee = SystemError("close", e, "fd \(fd)") } else {
            Log.warning("close fd \(fd): \(e)")
        }
    }
}
