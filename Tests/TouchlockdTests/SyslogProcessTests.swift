import CLinux
import Glibc
import Testing
import TouchlockCore
import TouchlockSystem

private let mayMount = access("/usr/bin/unshare", X_OK) == 0 && system("/usr/bin/unshare -rm true 2>/dev/null") == 0

/// `touchlockd --syslog` (the OpenRC service's logging) as syslogd receives it: each line
/// at its own priority, facility daemon, the name once, nothing on standard error.
@Suite(.serialized) struct SyslogProcessTests {
    @Test(.enabled(if: mayMount, "needs a mount namespace: root, or unprivileged user namespaces"))
    func eachLineGoesToSyslogAtItsPriorityTaggedOnce() throws {
        let d = try DaemonProcess(config: "")
        // syslogd's socket: a datagram socket of the test's, on /dev/log in a mount
        // namespace of the daemon's own.
        let logPath = d.dir + "/log.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(logPath.utf8)) }
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try SystemCall.check("bind", logPath) { r }
        let script = "mount -t tmpfs tmpfs /dev && touch /dev/log && mount --bind \"$1\" /dev/log || exit 99; shift; exec \"$@\""
        try d.start(replay: nil, extra: ["--syslog"], prefix: ["/usr/bin/unshare", "-rm", "/bin/sh", "-c", script, "sh", logPath])

        let pid = d.pid
        var messages: [String] = []
        let deadline = EventLoop.now() + .milliseconds(5000)
        var buf = [UInt8](repeating: 0, count: 4096)
        while !messages.contains(where: { $0.contains("control: listening on") }), EventLoop.now() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let n = recv(fd, &buf, buf.count, 0)
            if n > 0 { messages.append(String(decoding: buf[0..<n], as: UTF8.self)) }
        }
        d.kill(SIGTERM)
        #expect(d.waitExit() == 0)
        // <30> is daemon.info, <28> daemon.warning; then the time, and the tag once.
        func line(_ text: String) -> String? { messages.first { $0.contains(text) } }
        let frame = try #require(line("first frame shown"), "\(messages)")
        #expect(frame.hasPrefix("<30>") && frame.hasSuffix(" touchlockd[\(pid)]: first frame shown"), "\(frame)")
        let warning = try #require(line("no pattern enrolled"), "\(messages)")
        #expect(warning.hasPrefix("<28>") && warning.contains(" touchlockd[\(pid)]: no pattern enrolled"), "\(warning)")
        #expect(!messages.contains { $0.contains("touchlockd: ") || $0.contains("warning: ") }, "\(messages)")
        // Nothing of it on standard error.
        #expect(!d.log.contains("first frame shown") && !d.log.contains("no pattern enrolled"), "\(d.log)")
    }
}
