import CLinux
import Glibc
import TouchlockCore
import TouchlockSystem

/// Helpers shared by the server and the client for AF_UNIX stream sockets.
enum UnixSocket {
    /// A new AF_UNIX stream socket, close-on-exec, non-blocking if asked.
    static func make(nonBlocking: Bool) throws(SystemError) -> Int32 {
        var type = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return try SystemCall.check("socket(AF_UNIX)") { socket(AF_UNIX, type, 0) }
    }

    /// `path` as a sockaddr_un. Paths that do not fit sun_path fail with ENAMETOOLONG.
    struct Address {
        private var storage = sockaddr_un()
        private(set) var length: socklen_t = 0

        init(_ path: String, for call: String) throws(SystemError) {
            storage.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            let capacity = MemoryLayout.size(ofValue: storage.sun_path)
            guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
                throw SystemError(call, Errno(rawValue: bytes.isEmpty ? ENOENT : ENAMETOOLONG), path)
            }
            withUnsafeMutableBytes(of: &storage.sun_path) { raw in
                raw.copyBytes(from: bytes)
                raw[bytes.count] = 0
            }
            length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + 1)
        }

        func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
            withUnsafePointer(to: storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
            }
        }
    }

    /// Connects `fd` to `path`.
    static func connect(_ fd: Int32, to path: String) throws(SystemError) {
        let address = try Address(path, for: "connect")
        try SystemCall.check("connect", path) { address.withSockaddr { Glibc.connect(fd, $0, $1) } }
    }

    /// Accepts a connection on `listener` as a non-blocking, close-on-exec descriptor.
    /// Glibc declares accept4 only under _GNU_SOURCE, so the flags are set after accept;
    /// the loop is single-threaded, so nothing can exec in between.
    static func accept(_ listener: Int32) throws(SystemError) -> Int32 {
        let fd = try SystemCall.check("accept") { SystemCalls.current.accept(listener) }
        do {
            let flags = try SystemCall.check("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
            try SystemCall.check("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
            try SystemCall.check("fcntl(F_SETFD)") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    /// Closes `fd` once, through the syscall seam; an error is logged (nothing is lost:
    /// the descriptor is gone either way).
    static func close(_ fd: Int32) {
        do { try FileDescriptor(adopting: fd).close() } catch { Log.warning("control: \(error)") }
    }

    /// Sends as much of `bytes[offset...]` as the socket takes, without SIGPIPE; returns
    /// the count. A non-blocking send that the socket cannot take gives 0.
    static func send(_ fd: Int32, _ bytes: [UInt8], from offset: Int = 0, blocking: Bool) throws(SystemError) -> Int {
        guard offset < bytes.count else { return 0 }
        let flags = blocking ? 0 : Int32(MSG_DONTWAIT)
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SystemError) in
                try IO.send(fd, from: UnsafeRawBufferPointer(rebasing: raw[offset...]), flags: flags)
            }
        }
        switch try result.get() {
        case .bytes(let n): return n
        case .wouldBlock, .endOfFile: return 0
        }
    }

    /// Reads what is there into `buffer`: the count, 0 at end of stream, nil if a
    /// non-blocking read would block. A reset connection reads as end of stream.
    static func receive(_ fd: Int32, into buffer: inout [UInt8], blocking: Bool) throws(SystemError) -> Int? {
        let flags = blocking ? Int32(0) : Int32(MSG_DONTWAIT)
        let result = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try IO.receive(fd, into: raw, flags: flags) }
        }
        switch try result.get() {
        case .bytes(let n): return n
        case .endOfFile: return 0
        case .wouldBlock: return nil
        }
    }

    /// The credentials of the peer of a connected socket (SO_PEERCRED).
    static func peerCredentials(_ fd: Int32) throws(SystemError) -> ControlServer.Peer {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: Glibc only declares it
        // under _GNU_SOURCE, so read it as three 32-bit words.
        var words: [Int32] = [0, 0, 0]
        var length = socklen_t(MemoryLayout<Int32>.size * 3)
        let r = words.withUnsafeMutableBytes { raw in
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, raw.baseAddress, &length)
        }
        try SystemCall.check("getsockopt(SO_PEERCRED)") { r }
        // Supplementary groups (SO_PEERGROUPS, Linux 4.13); none if unavailable.
        var groups = [UInt32](repeating: 0, count: 64)
        var glen = socklen_t(groups.count * 4)
        let g = groups.withUnsafeMutableBytes { raw in getsockopt(fd, SOL_SOCKET, 59 /* SO_PEERGROUPS */, raw.baseAddress, &glen) }
        let supplementary = g == 0 ? Array(groups.prefix(Int(glen) / 4)) : []
        return ControlServer.Peer(pid: words[0], uid: UInt32(bitPattern: words[1]), gid: UInt32(bitPattern: words[2]),
                                  groups: supplementary)
    }
}
