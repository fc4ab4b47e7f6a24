import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSystem

private let screen = Size(width: 640, height: 400)

/// The order docs/protocol.md gives for `lock`, from the daemon: the `locked` event
/// comes before the reply, and a `lock` while locked sends no event.
@Suite(.serialized) struct LockOrderProcessTests {
    /// Lines on `client` until the reply with `id`, that reply included.
    func lines(_ client: ControlClient, until id: Int) throws -> [String] {
        var out: [String] = []
        while let line = try client.readLine(timeout: waited(5000)) {
            out.append(line)
            if (try? client.decode(ReplyHeader.self, from: line))?.id == id { return out }
        }
        return out
    }

    @Test func lockedComesBeforeTheReplyAndLockingWhileLockedSendsNoEvent() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        try d.start(replay: nil)
        #expect(try d.ctl(["enroll", "pattern"], input: "0-4-8-5\n0-4-8-5\n").status == 0)
        d.kill(SIGTERM)
        #expect(d.waitExit() == 0)
        let replay = d.dir + "/right.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [[0, 4, 8, 5]], on: screen).utf8))
        try d.start(replay: replay)
        #expect(try d.ctl(["wait-unlock", "--timeout", "15"]).status == 0)

        let c = try d.client()
        _ = try c.request(.subscribe, timeout: waited(5000))
        // Unlocked: lock, then status, on one connection. The status may be answered
        // first (docs/protocol.md: a request after `lock` may be), the lock once the
        // display is taken, on a later turn of the loop.
        try c.send(line: #"{"id":10,"request":"lock"}"#)
        try c.send(line: #"{"id":11,"request":"status"}"#)
        var got = try lines(c, until: 11)
        if !got.contains(#"{"id":10,"ok":true,"state":"locked"}"#) { got += try lines(c, until: 10) }
        let lockLines = got.filter { !$0.contains("\"id\":11") }
        #expect(got.count == 3, "\(got)")
        #expect(lockLines.first == #"{"event":"locked"}"#, "\(got)")
        #expect(lockLines.dropFirst().first == #"{"id":10,"ok":true,"state":"locked"}"#, "\(got)")

        // Locked already: the reply, and no event before the next reply.
        try c.send(line: #"{"id":12,"request":"lock"}"#)
        try c.send(line: #"{"id":13,"request":"status"}"#)
        got = try lines(c, until: 13)
        #expect(got.count == 2 && got.first == #"{"id":12,"ok":true,"state":"locked"}"#, "\(got)")
        #expect(!got.contains { $0.contains("\"event\"") }, "\(got)")
    }
}
