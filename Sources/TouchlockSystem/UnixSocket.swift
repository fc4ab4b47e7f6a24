import CLinux
import Glibc
import TouchlockCore

/// AF_UNIX stream sockets, for the control socket's server and its clients, through the
/// syscall seam (`SystemCalls.current`) and its one error wrapper.
public enum UnixSocket {
    /// A new AF_UNIX stream socket, close-on-exec, non-blocking if asked.
    public static func make(nonBlocking: Bool) throws(SystemError) -> Int32 {
        var type = Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return try SystemCall.check("socket(AF_UNIX)") { SystemCalls.current.socket(AF_UNIX, type, 0) }
    }

    /// `path` as a sockaddr_un. Paths that do not fit sun_path fail with ENAMETOOLONG.
    public struct Address {
        private var storage = sockaddr_un()
        public private(set) var length: socklen_t = 0

        public init(_ path: String, for call: String) throws(SystemError) {
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
            // sun_path's offset: sa_family_t comes first.
            length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        }

        public func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
            withUnsafePointer(to: storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
            }
        }
    }

    /// Connects `fd` to `path`.
    public static func connect(_ fd: Int32, to path: String) throws(SystemError) {
        let address = try Address(path, for: "connect")
        try SystemCall.check("connect", path) { address.withSockaddr { SystemCalls.current.connect(fd, $0, $1) } }
    }

    /// Binds `fd` to `path` (the socket file is made there).
    public static func bind(_ fd: Int32, to path: String) throws(SystemError) {
        let address = try Address(path, for: "bind")
        try SystemCall.check("bind", path) { address.withSockaddr { SystemCalls.current.bind(fd, $0, $1) } }
    }

    /// Accepts a connection on `listener` as a non-blocking, close-on-exec descriptor
    /// (accept4): EMFILE and the like are errors for the caller to weather.
    public static func accept(_ listener: Int32) throws(SystemError) -> Int32 {
        try SystemCall.check("accept") { SystemCalls.current.accept(listener) }
    }

    /// Closes `fd` once, through the syscall seam; an error is logged (nothing is lost:
    /// the descriptor is gone either way).
    public static func close(_ fd: Int32) {
        _ = FileDescriptor(adopting: fd)
    }

    /// Sends as much of `bytes[offset...]` as the socket takes, without SIGPIPE; returns
    /// the count. A non-blocking send that the socket cannot take gives 0.
    public static func send(_ fd: Int32, _ bytes: [UInt8], from offset: Int = 0, blocking: Bool) throws(SystemError) -> Int {
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
    public static func receive(_ fd: Int32, into buffer: inout [UInt8], blocking: Bool) throws(SystemError) -> Int? {
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

    /// Who is on the other end of a connected socket.
    public struct PeerCredentials: Hashable, Sendable {
        public var pid: Int32
        public var uid: UInt32
        public var gid: UInt32
        /// Supplementary groups.
        public var groups: [UInt32]
    }

    /// The credentials of the peer of a connected socket (SO_PEERCRED, SO_PEERGROUPS).
    public static func peerCredentials(_ fd: Int32) throws(SystemError) -> PeerCredentials {
        let sys = SystemCalls.current
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: Glibc only declares it
        // under _GNU_SOURCE, so read it as three 32-bit words.
        var words: [Int32] = [0, 0, 0]
        var length = socklen_t(MemoryLayout<Int32>.size * 3)
        try SystemCall.check("getsockopt(SO_PEERCRED)") {
            words.withUnsafeMutableBytes { raw in sys.getsockopt(fd, SOL_SOCKET, SO_PEERCRED, raw.baseAddress, &length) }
        }
        // Supplementary groups (SO_PEERGROUPS, Linux 4.13); none if unavailable.
        var groups = [UInt32](repeating: 0, count: 64)
        var glen = socklen_t(groups.count * 4)
        let supplementary: [UInt32]
        do {
            try SystemCall.check("getsockopt(SO_PEERGROUPS)") {
                groups.withUnsafeMutableBytes { raw in sys.getsockopt(fd, SOL_SOCKET, 59 /* SO_PEERGROUPS */, raw.baseAddress, &glen) }
            }
            supplementary = Array(groups.prefix(Int(glen) / 4))
        } catch {
            supplementary = []
        }
        return PeerCredentials(pid: words[0], uid: UInt32(bitPattern: words[1]), gid: UInt32(bitPattern: words[2]),
                               groups: supplementary)
    }
}
