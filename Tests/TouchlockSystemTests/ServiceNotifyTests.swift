import Glibc
import Testing
import TouchlockSystem

/// systemd's side of the notify socket: a datagram socket bound where $NOTIFY_SOCKET says.
@Suite(.serialized) struct ServiceNotifyTests {
    @Test func aStoredDescriptorReachesTheNotifySocketAsTheSameOpenFile() throws {
        var template = Array("/tmp/touchlock-notify.XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        defer { _ = system("rm -rf '\(dir)'") }
        let path = dir + "/notify"
        let server = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(server) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        setenv("NOTIFY_SOCKET", path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }

        let file = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(file) }
        #expect(ServiceNotify.store(file, name: "card"))
        ServiceNotify.removeStored(name: "card")

        func receive() -> (text: String, fds: [Int32]) {
            var buffer = [UInt8](repeating: 0, count: 256)
            var space = [UInt8](repeating: 0, count: 64)
            var control: [UInt8] = []
            let n = buffer.withUnsafeMutableBytes { b in
                space.withUnsafeMutableBytes { c in
                    var iov = iovec(iov_base: b.baseAddress, iov_len: b.count)
                    return withUnsafeMutablePointer(to: &iov) { iovp in
                        var msg = msghdr()
                        msg.msg_iov = iovp
                        msg.msg_iovlen = 1
                        msg.msg_control = c.baseAddress
                        msg.msg_controllen = c.count
                        let n = recvmsg(server, &msg, Int32(MSG_DONTWAIT) | Int32(MSG_CMSG_CLOEXEC))
                        control = Array(c.prefix(Int(msg.msg_controllen)))
                        return n
                    }
                }
            }
            var fds: [Int32] = []
            if control.count >= MemoryLayout<cmsghdr>.size {
                control.withUnsafeBytes { raw in
                    let h = raw.load(as: cmsghdr.self)
                    if h.cmsg_level == SOL_SOCKET && h.cmsg_type == Int32(SCM_RIGHTS) {
                        let count = (Int(h.cmsg_len) - MemoryLayout<cmsghdr>.size) / MemoryLayout<Int32>.size
                        for i in 0..<count {
                            fds.append(raw.load(fromByteOffset: MemoryLayout<cmsghdr>.size + 4 * i, as: Int32.self))
                        }
                    }
                }
            }
            return (String(decoding: buffer.prefix(max(0, n)), as: UTF8.self), fds)
        }
        let stored = receive()
        #expect(stored.text == "FDSTORE=1\nFDNAME=card")
        try #require(stored.fds.count == 1)
        var a = stat(), b = stat()
        #expect(fstat(stored.fds[0], &a) == 0 && fstat(file, &b) == 0)
        #expect(a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        close(stored.fds[0])
        let removed = receive()
        #expect(removed.text == "FDSTOREREMOVE=1\nFDNAME=card" && removed.fds.isEmpty)
    }

    @Test func descriptorsPassedToAnotherProcessAreNotTakenAndTheVariablesGo() {
        setenv("LISTEN_PID", String(getpid() + 1), 1)
        setenv("LISTEN_FDS", "1", 1)
        setenv("LISTEN_FDNAMES", "card", 1)
        #expect(ServiceNotify.takeStored().isEmpty)
        #expect(getenv("LISTEN_PID") == nil && getenv("LISTEN_FDS") == nil && getenv("LISTEN_FDNAMES") == nil)
    }

    @Test func withoutANotifySocketNothingIsSent() {
        unsetenv("NOTIFY_SOCKET")
        #expect(!ServiceNotify.store(0, name: "card"))
    }
}
