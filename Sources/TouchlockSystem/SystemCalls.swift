import CLinux
import Glibc

/// The libc calls touchlock makes on file descriptors, files, sockets and processes, as
/// one table of functions: the seam under every syscall of the display, input and control
/// layers, the event loop, the control socket's file and the verifier's process (DRM and libevdev have
/// their own tables, `DrmCalls` and `EvdevCalls`, in the targets that link them).
///
/// Code calls `SystemCalls.current.read(...)`. `real` is the C library. Tests replace
/// entries to force what a real kernel will not produce on demand (EINTR, EAGAIN, ENODEV,
/// a short read or write) and to record the order of calls: a fake sets `errno` and
/// returns -1, exactly as the C function would.
///
/// In debug builds (ENABLE_MOCKING) `current` is a task-local value, so a test's fake
/// reaches only the code that test runs (`SystemCalls.$current.withValue(fake) { ... }`);
/// in release builds it is `real`, inlined, and each call is a direct call into libc.
public struct SystemCalls: Sendable {
    public var open: @Sendable (_ path: UnsafePointer<CChar>, _ flags: Int32, _ mode: mode_t) -> Int32
    public var close: @Sendable (_ fd: Int32) -> Int32
    public var read: @Sendable (_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int
    public var write: @Sendable (_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int
    public var recv: @Sendable (_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ flags: Int32) -> Int
    public var send: @Sendable (_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int
    /// A connection on a listening socket, as a non-blocking, close-on-exec descriptor (accept4).
    public var accept: @Sendable (_ fd: Int32) -> Int32
    public var poll: @Sendable (_ fds: UnsafeMutablePointer<pollfd>?, _ count: nfds_t, _ timeout: Int32) -> Int32
    /// A shared read-write mapping of `length` bytes of `fd` at `offset` (MAP_FAILED on error).
    public var mmap: @Sendable (_ length: Int, _ fd: Int32, _ offset: off_t) -> UnsafeMutableRawPointer?
    public var munmap: @Sendable (_ address: UnsafeMutableRawPointer?, _ length: Int) -> Int32
    /// Flushes a file (or a directory's entries) to the disk: the step a power cut tests.
    public var fsync: @Sendable (_ fd: Int32) -> Int32
    public var rename: @Sendable (_ from: UnsafePointer<CChar>, _ to: UnsafePointer<CChar>) -> Int32

    // Processes: the verifier's (ChildProcess).
    /// posix_spawn(3): 0, or the error number as the result.
    public var spawn: @Sendable (_ pid: UnsafeMutablePointer<pid_t>, _ path: UnsafePointer<CChar>,
                                 _ actions: UnsafePointer<posix_spawn_file_actions_t>?,
                                 _ attributes: UnsafePointer<posix_spawnattr_t>?,
                                 _ arguments: UnsafePointer<UnsafeMutablePointer<CChar>?>,
                                 _ environment: UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Int32
        = { Glibc.posix_spawn($0, $1, $2, $3, $4, $5) }
    public var waitpid: @Sendable (_ pid: pid_t, _ status: UnsafeMutablePointer<Int32>?, _ options: Int32) -> pid_t
        = { Glibc.waitpid($0, $1, $2) }
    public var kill: @Sendable (_ pid: pid_t, _ signal: Int32) -> Int32 = { Glibc.kill($0, $1) }
    /// The pair the verifier talks over.
    public var socketpair: @Sendable (_ domain: Int32, _ type: Int32, _ protocol: Int32, _ pair: UnsafeMutablePointer<Int32>) -> Int32
        = { Glibc.socketpair($0, $1, $2, $3) }

    // Sockets and the socket file: the control socket's.
    public var socket: @Sendable (_ domain: Int32, _ type: Int32, _ protocol: Int32) -> Int32 = { Glibc.socket($0, $1, $2) }
    public var bind: @Sendable (_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32
        = { Glibc.bind($0, $1, $2) }
    public var listen: @Sendable (_ fd: Int32, _ backlog: Int32) -> Int32 = { Glibc.listen($0, $1) }
    public var connect: @Sendable (_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32
        = { Glibc.connect($0, $1, $2) }
    public var getsockopt: @Sendable (_ fd: Int32, _ level: Int32, _ name: Int32, _ value: UnsafeMutableRawPointer?,
                                      _ length: UnsafeMutablePointer<socklen_t>) -> Int32
        = { Glibc.getsockopt($0, $1, $2, $3, $4) }
    public var stat: @Sendable (_ path: UnsafePointer<CChar>, _ info: UnsafeMutablePointer<Glibc.stat>) -> Int32
        = { statFile($0, $1) }
    /// stat(2) of a symbolic link itself.
    public var lstat: @Sendable (_ path: UnsafePointer<CChar>, _ info: UnsafeMutablePointer<Glibc.stat>) -> Int32
        = { lstatFile($0, $1) }
    public var mkdir: @Sendable (_ path: UnsafePointer<CChar>, _ mode: mode_t) -> Int32 = { Glibc.mkdir($0, $1) }
    public var chmod: @Sendable (_ path: UnsafePointer<CChar>, _ mode: mode_t) -> Int32 = { Glibc.chmod($0, $1) }
    public var chown: @Sendable (_ path: UnsafePointer<CChar>, _ owner: uid_t, _ group: gid_t) -> Int32
        = { Glibc.chown($0, $1, $2) }
    public var unlink: @Sendable (_ path: UnsafePointer<CChar>) -> Int32 = { Glibc.unlink($0) }

    // The event loop's descriptors.
    public var epollCreate: @Sendable (_ flags: Int32) -> Int32 = { epoll_create1($0) }
    public var timerfdCreate: @Sendable (_ clock: clockid_t, _ flags: Int32) -> Int32 = { timerfd_create($0, $1) }
    /// signalfd(2): a new descriptor with `fd` -1, or `fd` with the new mask.
    public var signalfd: @Sendable (_ fd: Int32, _ mask: UnsafePointer<sigset_t>, _ flags: Int32) -> Int32
        = { CLinux.signalfd($0, $1, $2) }

    public init(open: @escaping @Sendable (UnsafePointer<CChar>, Int32, mode_t) -> Int32,
                close: @escaping @Sendable (Int32) -> Int32,
                read: @escaping @Sendable (Int32, UnsafeMutableRawPointer?, Int) -> Int,
                write: @escaping @Sendable (Int32, UnsafeRawPointer?, Int) -> Int,
                recv: @escaping @Sendable (Int32, UnsafeMutableRawPointer?, Int, Int32) -> Int,
                send: @escaping @Sendable (Int32, UnsafeRawPointer?, Int, Int32) -> Int,
                accept: @escaping @Sendable (Int32) -> Int32,
                poll: @escaping @Sendable (UnsafeMutablePointer<pollfd>?, nfds_t, Int32) -> Int32,
                mmap: @escaping @Sendable (Int, Int32, off_t) -> UnsafeMutableRawPointer?,
                munmap: @escaping @Sendable (UnsafeMutableRawPointer?, Int) -> Int32,
                fsync: @escaping @Sendable (Int32) -> Int32 = { Glibc.fsync($0) },
                rename: @escaping @Sendable (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32 = { Glibc.rename($0, $1) }) {
        self.open = open; self.close = close; self.read = read; self.write = write
        self.recv = recv; self.send = send; self.accept = accept; self.poll = poll
        self.mmap = mmap; self.munmap = munmap; self.fsync = fsync; self.rename = rename
    }

    /// The C library (the entries not named here are the C library by default too).
    @inlinable public static var real: SystemCalls {
        SystemCalls(
            open: { Glibc.open($0, $1, $2) },
            close: { Glibc.close($0) },
            read: { Glibc.read($0, $1, $2) },
            write: { Glibc.write($0, $1, $2) },
            recv: { Glibc.recv($0, $1, $2, $3) },
            send: { Glibc.send($0, $1, $2, $3) },
            accept: { clinux_accept4($0, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)) },
            poll: { Glibc.poll($0, $1, $2) },
            mmap: { Glibc.mmap(nil, $0, PROT_READ | PROT_WRITE, MAP_SHARED, $1, $2) },
            munmap: { Glibc.munmap($0, $1) },
            fsync: { Glibc.fsync($0) },
            rename: { Glibc.rename($0, $1) })
    }

    #if ENABLE_MOCKING
    /// The table in effect for the running task (debug builds: tests may replace it).
    @TaskLocal public static var current: SystemCalls = .real
    /// True when this build lets tests replace the table.
    public static let isReplaceable = true
    #else
    @inlinable public static var current: SystemCalls { .real }
    public static let isReplaceable = false
    #endif
}

// stat(2) and lstat(2), named apart from `struct stat` and the table's own entries.
private func statFile(_ path: UnsafePointer<CChar>, _ info: UnsafeMutablePointer<Glibc.stat>) -> Int32 { stat(path, info) }
private func lstatFile(_ path: UnsafePointer<CChar>, _ info: UnsafeMutablePointer<Glibc.stat>) -> Int32 { lstat(path, info) }

extension SystemCalls {
    /// `open` with a Swift string.
    @inlinable public func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        path.withCString { open($0, flags, mode) }
    }

    /// `stat` with a Swift string.
    @inlinable public func stat(_ path: String, _ info: inout Glibc.stat) -> Int32 {
        path.withCString { stat($0, &info) }
    }

    /// `lstat` with a Swift string.
    @inlinable public func lstat(_ path: String, _ info: inout Glibc.stat) -> Int32 {
        path.withCString { lstat($0, &info) }
    }
}
