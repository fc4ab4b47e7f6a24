import Glibc
import CLinux
import TouchlockCore

/// systemd's notify protocol (sd_notify) without libsystemd: one datagram to the socket
/// named by $NOTIFY_SOCKET. Does nothing when not started by systemd.
public enum ServiceNotify {
    public static func send(_ state: String) {
        _ = send(state, descriptor: nil)
    }

    /// Puts a duplicate of `fd` in the unit's file descriptor store under `name`
    /// (FileDescriptorStoreMax=): systemd keeps it open while the daemon is restarted by
    /// Restart= (a crash, the watchdog's kill) and hands it to the next one
    /// (`takeStored`). Whether systemd was told (it says in its own log if it refused).
    @discardableResult
    public static func store(_ fd: Int32, name: String) -> Bool {
        send("FDSTORE=1\nFDNAME=\(name)", descriptor: fd)
    }

    /// Takes the descriptors stored under `name` out of the store (systemd closes them).
    public static func removeStored(name: String) {
        send("FDSTOREREMOVE=1\nFDNAME=\(name)")
    }

    /// Waits until systemd has dealt with every message sent before (BARRIER=1, as
    /// sd_notify_barrier does): it closes the descriptor sent with it once it has, seen
    /// here as the pipe's end. Blocks for at most `timeout`; whether systemd answered. For
    /// what must not go on before systemd has
    /// acted: a stored descriptor it must have closed. True at once when not started by
    /// systemd: there is nothing to wait for.
    @discardableResult
    public static func barrier(timeout: Interval) -> Bool {
        guard let socket = getenv("NOTIFY_SOCKET"), socket.pointee != 0 else { return true }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return false }
        let reading = FileDescriptor(adopting: ends[0])
        for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let sent = send("BARRIER=1", descriptor: ends[1])
        close(ends[1])
        guard sent else { return false }
        var p = pollfd(fd: reading.rawValue, events: Int16(POLLIN), revents: 0)
        let deadline = EventLoop.now() + timeout
        while true {
            let left = max(0, (deadline - EventLoop.now()).milliseconds)
            let n = poll(&p, 1, Int32(min(left, Int64(Int32.max))))
            if n > 0 { return p.revents & Int16(POLLHUP) != 0 }
            if n == 0 || Errno.current != .interrupted { return false }
        }
    }

    /// The descriptors systemd passed to this process ($LISTEN_FDS from 3, named by
    /// $LISTEN_FDNAMES), close-on-exec from now on; the variables are removed, so that
    /// a child never takes them for its own.
    public static func takeStored() -> [(name: String, fd: Int32)] {
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pid = getenv("LISTEN_PID").flatMap({ Int32(String(cString: $0)) }), pid == getpid(),
              let count = getenv("LISTEN_FDS").flatMap({ Int(String(cString: $0)) }), count > 0, count < 1024
        else { return [] }
        let names = getenv("LISTEN_FDNAMES").map { String(cString: $0).split(separator: ":", omittingEmptySubsequences: false).map(String.init) } ?? []
        return (0..<count).map { i in
            let fd = Int32(3 + i)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            return (i < names.count ? names[i] : "unknown", fd)
        }
    }

    @discardableResult
    private static func send(_ state: String, descriptor: Int32?) -> Bool {
        guard let path = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }), !path.isEmpty else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { return false }
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }  // abstract namespace
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else { return false }
        withUnsafeMutableBytes(of: &addr.sun_path) { p in
            for (i, b) in bytes.enumerated() { p[i] = b }
        }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        var text = Array(state.utf8)
        // One descriptor as SCM_RIGHTS: a cmsghdr and an Int32, aligned as CMSG_SPACE says.
        let header = MemoryLayout<cmsghdr>.size
        let space = (header + MemoryLayout<Int32>.size + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1)
        var control = [UInt8](repeating: 0, count: descriptor == nil ? 0 : space)
        let sent = withUnsafeMutablePointer(to: &addr) { a in
            text.withUnsafeMutableBytes { t in
                control.withUnsafeMutableBytes { c in
                    var iov = iovec(iov_base: t.baseAddress, iov_len: t.count)
                    return withUnsafeMutablePointer(to: &iov) { iovp in
                        var msg = msghdr()
                        msg.msg_name = UnsafeMutableRawPointer(a)
                        msg.msg_namelen = len
                        msg.msg_iov = iovp
                        msg.msg_iovlen = 1
                        if let descriptor, let base = c.baseAddress {
                            let h = base.assumingMemoryBound(to: cmsghdr.self)
                            h.pointee.cmsg_len = header + MemoryLayout<Int32>.size
                            h.pointee.cmsg_level = SOL_SOCKET
                            h.pointee.cmsg_type = Int32(SCM_RIGHTS)
                            (base + header).storeBytes(of: descriptor, as: Int32.self)
                            msg.msg_control = base
                            msg.msg_controllen = c.count
                        }
                        return sendmsg(fd, &msg, Int32(MSG_NOSIGNAL))
                    }
                }
            }
        }
        return sent >= 0
    }
}
