import Foundation
import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSystem

/// A client that connects the moment the socket file appears (as `scripts/run` and any
/// service waiting for the file do) is never refused: the file becomes visible only
/// once the server listens.
@Suite struct SocketReadinessTests {
    /// What the watcher saw: how the name appeared, and whether connecting then worked.
    struct Sighting {
        var byRename: Bool
        var connected: Bool
        var errno: Int32
    }

    /// Watches `dir` from another thread (one inotify instance: they are few per user);
    /// at each of the first `rounds` events naming `name`, connects to it at once. The
    /// results come back through a pipe, 12 bytes each (no shared memory).
    static func watch(_ dir: String, for name: String, rounds: Int) throws -> Int32 {
        let ino = inotify_init1(Int32(IN_CLOEXEC))
        try SystemCall.check("inotify_init1") { ino }
        try SystemCall.check("inotify_add_watch", dir) { inotify_add_watch(ino, dir, UInt32(IN_CREATE | IN_MOVED_TO)) }
        var fds: [Int32] = [0, 0]
        try SystemCall.check("pipe") { pipe(&fds) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let path = dir + "/" + name
        let thread = Thread {
            defer { close(ino); close(writeEnd) }
            var buffer = [UInt8](repeating: 0, count: 4096)
            var left = rounds
            while left > 0 {
                let n = read(ino, &buffer, buffer.count)
                if n <= 0 { return }
                var offset = 0
                while offset < n {
                    let (mask, length) = buffer.withUnsafeBytes { raw in
                        let e = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                        return (e.mask, Int(e.len))
                    }
                    let nameStart = offset + MemoryLayout<inotify_event>.size
                    let seen = String(decoding: buffer[nameStart..<nameStart + length].prefix { $0 != 0 }, as: UTF8.self)
                    offset = nameStart + length
                    guard seen == name else { continue }
                    // Connect now, before anything else.
                    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
                    var addr = sockaddr_un()
                    addr.sun_family = sa_family_t(AF_UNIX)
                    withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
                    let r = withUnsafePointer(to: &addr) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                        }
                    }
                    let err = r == 0 ? 0 : errno
                    close(fd)
                    var report: [Int32] = [mask & UInt32(IN_MOVED_TO) != 0 ? 1 : 0, r == 0 ? 1 : 0, err]
                    _ = write(writeEnd, &report, 12)
                    left -= 1
                }
            }
        }
        thread.start()
        return readEnd
    }

    static func sighting(from fd: Int32) -> Sighting? {
        var report: [Int32] = [0, 0, 0]
        guard read(fd, &report, 12) == 12 else { return nil }
        return Sighting(byRename: report[0] == 1, connected: report[1] == 1, errno: report[2])
    }

    @Test func aClientConnectingWhenTheFileAppearsIsNeverRefused() throws {
        let status = Status(session: Session(), screen: Size(width: 800, height: 480),
                            grid: PatternGrid.layout(on: Size(width: 800, height: 480)))
        var template = Array("/tmp/touchlock-ready-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        let dir = String(cString: made)
        defer { rmdir(dir) }
        let loop = try EventLoop(signals: [])
        // Many rounds: a file visible between bind and listen is refused only when the
        // watcher wins that race.
        let rounds = 200
        let result = try Self.watch(dir, for: "touchlock.sock", rounds: rounds)
        defer { close(result) }
        for round in 0..<rounds {
            let server = try ControlServer(path: dir + "/touchlock.sock", loop: loop) { status }
            let seen = Self.sighting(from: result)
            server.close()
            let s = try #require(seen, "round \(round): the watcher saw nothing")
            #expect(s.connected, "round \(round): connect refused (errno \(s.errno)) when the file appeared")
            #expect(s.byRename, "round \(round): the socket file appeared by bind, before listen")
            if !s.connected || !s.byRename { break }
        }
        // Nothing is left behind: no socket, no temporary name.
        let left = try FileManager.default.contentsOfDirectory(atPath: dir)
        #expect(left == [])
    }
}
