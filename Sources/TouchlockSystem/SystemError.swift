import Glibc

/// An errno value. Every C error in touchlock is wrapped once, here, into this type.
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    public static var current: Errno { Errno(rawValue: errno) }

    public static let interrupted = Errno(rawValue: EINTR)
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    public static let noDevice = Errno(rawValue: ENODEV)
    public static let noEntry = Errno(rawValue: ENOENT)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let notPermitted = Errno(rawValue: EPERM)
    public static let busy = Errno(rawValue: EBUSY)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let connectionReset = Errno(rawValue: ECONNRESET)
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    public static let badAddress = Errno(rawValue: EFAULT)
    public static let ioError = Errno(rawValue: EIO)
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    public static let noSpace = Errno(rawValue: ENOSPC)
    public static let noChild = Errno(rawValue: ECHILD)
    public static let noProcess = Errno(rawValue: ESRCH)

    public var description: String { String(cString: strerror(rawValue)) }

    public static func ~= (e: Errno, error: any Error) -> Bool { (error as? Errno) == e }
}

/// A failed call: which call, on what, and the errno it gave.
public struct SystemError: Error, CustomStringConvertible, Sendable {
    public var call: String
    public var errno: Errno
    public var detail: String?

    public init(_ call: String, _ errno: Errno, _ detail: String? = nil) {
        self.call = call; self.errno = errno; self.detail = detail
    }

    public var description: String {
        "\(call)\(detail.map { " \($0)" } ?? ""): \(errno) (errno \(errno.rawValue))"
    }
}

/// The four ways C libraries report errors, each adapted once. EINTR is retried; EBADF
/// and EFAULT stop the process: a descriptor or a buffer we got wrong is a bug in
/// touchlock, not a condition to handle (swift-nio's policy).
public enum SystemCall {
    /// `-1` with errno set (open, ioctl, read, drmIoctl...).
    @discardableResult
    public static func check<T: BinaryInteger>(_ call: String, _ detail: String? = nil, _ body: () -> T) throws(SystemError) -> T {
        while true {
            let r = body()
            if r != -1 { return r }
            let e = Errno.current
            if e == .interrupted { continue }
            preconditionValid(e, call)
            throw SystemError(call, e, detail)
        }
    }

    /// Like `check`, for reads and writes: EAGAIN (would block) is nil, not an error.
    public static func checkIO(_ call: String, _ detail: @autoclosure () -> String?, _ body: () -> Int) throws(SystemError) -> Int? {
        while true {
            let r = body()
            if r >= 0 { return r }
            let e = Errno.current
            if e == .interrupted { continue }
            if e == .wouldBlock || e.rawValue == EWOULDBLOCK { return nil }
            preconditionValid(e, call)
            throw SystemError(call, e, detail())
        }
    }

    /// Stops on EBADF and EFAULT, which only a bug in touchlock can cause.
    public static func preconditionValid(_ e: Errno, _ call: String) {
        precondition(e != .badFileDescriptor && e != .badAddress,
                     "\(call) failed with \(e) (errno \(e.rawValue)): a bug in touchlock")
    }

    /// A negative errno as the result (libevdev, drmMode*).
    @discardableResult
    public static func checkNegative<T: BinaryInteger>(_ call: String, _ detail: String? = nil, _ body: () -> T) throws(SystemError) -> T {
        while true {
            let r = body()
            if r >= 0 { return r }
            let e = Errno(rawValue: -Int32(truncatingIfNeeded: r))
            if e == .interrupted { continue }
            preconditionValid(e, call)
            throw SystemError(call, e, detail)
        }
    }

    /// A negative errno as the result, for reads (libevdev_next_event): -EAGAIN (nothing
    /// more to read now) is nil, not an error.
    public static func checkNegativeIO<T: BinaryInteger>(_ call: String, _ detail: @autoclosure () -> String?, _ body: () -> T) throws(SystemError) -> T? {
        while true {
            let r = body()
            if r >= 0 { return r }
            let e = Errno(rawValue: -Int32(truncatingIfNeeded: r))
            if e == .interrupted { continue }
            if e == .wouldBlock { return nil }
            preconditionValid(e, call)
            throw SystemError(call, e, detail())
        }
    }

    /// The error number as the result, 0 on success (posix_spawn and its file actions).
    public static func checkCode(_ call: String, _ detail: String? = nil, _ body: () -> Int32) throws(SystemError) {
        while true {
            let r = body()
            if r == 0 { return }
            let e = Errno(rawValue: r)
            if e == .interrupted { continue }
            preconditionValid(e, call)
            throw SystemError(call, e, detail)
        }
    }

    /// NULL with errno set (drmModeGet*, fopen...).
    public static func checkPointer<T>(_ call: String, _ detail: String? = nil, _ body: () -> T?) throws(SystemError) -> T {
        if let p = body() { return p }
        let e = Errno.current
        throw SystemError(call, e.rawValue == 0 ? Errno(rawValue: EIO) : e, detail)
    }
}
