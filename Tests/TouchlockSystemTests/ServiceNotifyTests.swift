import Foundation
import Glibc
import Synchronization
import Testing
import TouchlockSystem

/// systemd's side of the notify socket: a datagram socket bound where $NOTIFY_SOCKET says.
@Suite(.serialized) struct ServiceNotifyTests {
    /// A datagram socket bound in a new directory, named by $NOTIFY_SOCKET: systemd's end.
    private func notifyServer() throws -> (dir: String, fd: Int32) {
        var template = Array("/tmp/touchlock-notify.XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        let path = dir + "/notify"
        let server = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        setenv("NOTIFY_SOCKET", path, 1)
        return (dir, server)
    }

    @Test func aStoredDescriptorReachesTheNotifySocketAsTheSameOpenFile() throws {
        let (dir, server) = try notifyServer()
        defer { _ = system("rm -rf '\(dir)'") }
        defer { close(server) }
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

    /// BARRIER=1 comes with a pipe's end: the barrier holds until systemd's side has
    /// closed it, and gives up after its timeout when nobody does.
    @Test func aBarrierHoldsUntilSystemdClosesWhatCameWithIt() throws {
        let (dir, server) = try notifyServer()
        defer { _ = system("rm -rf '\(dir)'") }
        defer { close(server) }
        defer { unsetenv("NOTIFY_SOCKET") }
        // Nobody reads: no answer within the timeout.
        #expect(!ServiceNotify.barrier(timeout: .milliseconds(50)))
        var buffer = [UInt8](repeating: 0, count: 64)
        while recv(server, &buffer, buffer.count, Int32(MSG_DONTWAIT)) > 0 {}  // its datagram, and its descriptor, gone
        // systemd's side on a thread: the datagram taken, then what came with it closed,
        // and only then is the barrier passed.
        final class Flag: Sendable { let value = Atomic<Bool>(false) }
        let closed = Flag()
        let systemd = Thread {
            var buffer = [UInt8](repeating: 0, count: 64)
            var space = [UInt8](repeating: 0, count: 64)
            let n = buffer.withUnsafeMutableBytes { b in
                space.withUnsafeMutableBytes { c in
                    var iov = iovec(iov_base: b.baseAddress, iov_len: b.count)
                    return withUnsafeMutablePointer(to: &iov) { iovp in
                        var msg = msghdr()
                        msg.msg_iov = iovp
                        msg.msg_iovlen = 1
                        msg.msg_control = c.baseAddress
                        msg.msg_controllen = c.count
                        return recvmsg(server, &msg, Int32(MSG_CMSG_CLOEXEC))
                    }
                }
            }
            guard n > 0, String(decoding: buffer.prefix(n), as: UTF8.self) == "BARRIER=1" else { return }
            usleep(100_000)
            closed.value.store(true, ordering: .sequentiallyConsistent)
            space.withUnsafeBytes { raw in close(raw.load(fromByteOffset: MemoryLayout<cmsghdr>.size, as: Int32.self)) }
        }
        systemd.start()
        #expect(ServiceNotify.barrier(timeout: .milliseconds(10_000)))
        let closedFirst = closed.value.load(ordering: .sequentiallyConsistent)
        #expect(closedFirst)
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
