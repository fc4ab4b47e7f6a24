import FoundationEssentials
import Glibc
import Testing
@testable import TouchlockControl
import TouchlockCore
import TouchlockSystem

private func header(_ line: String) throws -> ReplyHeader {
    try JSONDecoder().decode(ReplyHeader.self, from: Data(line.utf8))
}

/// Broadcasts an event every 2 ms, as a stand-in for touch handling on the same loop,
/// and records the longest gap between two ticks.
private final class Ticker {
    var sent = 0
    var longestGap = Interval(microseconds: 0)
    private var last: Instant?
    private var stopped = false

    func start(_ h: Harness) {
        h.loop.schedule(at: EventLoop.now()) { [self] now in tick(h, now) }
    }

    func stop() { stopped = true }

    private func tick(_ h: Harness, _ now: Instant) {
        if stopped { return }
        if let last, now - last > longestGap { longestGap = now - last }
        last = now
        h.server.broadcast(.progress(entered: sent, total: 1_000_000))
        sent += 1
        h.loop.schedule(at: now + .milliseconds(2)) { [self] t in tick(h, t) }
        h.check()
    }
}

@Suite struct ControlLimitsTests {
    /// 200 clients at once, a 1 MiB line, random bytes and a client that leaves in the
    /// middle of a line: each costs only the client that did it, while the loop keeps
    /// its pace and a subscriber gets every event, in order.
    @Test func abusiveClientsLeaveTheLoopAndOtherSubscribersUnharmed() throws {
        let h = try Harness()
        let watcher = try h.connectWatched()
        try watcher.client.send(.subscribe)
        #expect(try h.run { watcher.lines.count == 1 })
        let ticker = Ticker()
        ticker.start(h)

        // 200 clients, each asking for its status.
        var crowd: [Harness.Watched] = []
        for _ in 0..<200 {
            let c = try h.connectWatched()
            try c.client.send(.status)
            crowd.append(c)
        }
        #expect(try h.run(timeout: .milliseconds(20_000)) { crowd.allSatisfy { $0.replies.count == 1 } })
        #expect(try crowd.allSatisfy { try header($0.replies[0]).ok })
        #expect(h.server.clientCount == 201)

        // A 1 MiB line: refused, that client dropped.
        let big = try h.connectWatched()
        var mib = Array("{\"id\":1,\"request\":\"".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        mib += Array("\"}\n".utf8)
        // Written from the loop as the socket takes it (the server runs on this thread);
        // the server closes after its refusal, so the rest may never be taken.
        let flags = fcntl(big.client.fd, F_GETFL)
        _ = fcntl(big.client.fd, F_SETFL, flags | O_NONBLOCK)
        var offset = 0
        func push(_ now: Instant) {
            while offset < mib.count && !big.closed {
                let n = mib.withUnsafeBytes { send(big.client.fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { break }
                offset += n
            }
            if offset < mib.count && !big.closed { h.loop.schedule(at: now + .milliseconds(1), push) }
        }
        h.loop.schedule(at: EventLoop.now(), push)
        #expect(try h.run { big.closed })
        #expect(try big.lines.map { try header($0).error?.code } == [.lineTooLong])

        // Random bytes, newlines included: error replies or a refusal, never a crash.
        var rng = SystemRandomNumberGenerator()
        let noise = try h.connectWatched()
        let bytes = (0..<3000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        try noise.client.send(bytes: bytes + Array("\n{\"id\": 77, \"request\": \"hello\"}\n".utf8))
        #expect(try h.run { noise.closed || noise.lines.contains { $0.contains("\"id\":77") } })
        #expect(!noise.closed)
        #expect(try noise.lines.dropLast().allSatisfy { !(try header($0).ok) })
        #expect(try header(noise.lines.last ?? "").ok)

        // Half a request, then gone.
        let countBefore = h.server.clientCount
        let quitter = try h.connect()
        try quitter.send(bytes: Array("{\"id\": 5, \"requ".utf8))
        #expect(try h.run { h.server.clientCount == countBefore + 1 })
        quitter.close()
        #expect(try h.run { h.server.clientCount == countBefore })

        // The others carry on.
        try crowd[199].client.send(.hello)
        #expect(try h.run { crowd[199].replies.count == 2 })
        ticker.stop()
        // The last tick's event may still be on its way to the watcher (the loop stopped on
        // the reply above before the watcher's socket was read): the loop runs until every
        // event sent has come, and an event lost still fails the count below.
        try h.run { watcher.events.count >= ticker.sent }
        let events = try watcher.events.map { try JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
        #expect(events.count == ticker.sent)
        #expect(events.enumerated().allSatisfy { $0.element == .progress(entered: $0.offset, total: 1_000_000) })
        #expect(!watcher.closed)
        // A timer due every 2 ms was never held up long: the loop did not stall. (A client
        // able to stall it would hold it for as long as it likes; a machine busy with other
        // work delays a turn by a few hundred ms at most, so the bound is a second.)
        #expect(ticker.longestGap < .milliseconds(1000), "the loop stalled for \(ticker.longestGap)")
    }

    @Test func requestsAreAuthorisedByPeerCredentials() throws {
        let h = try Harness()
        let server = h.server!
        server.group = 4242
        let root = ControlServer.Peer(pid: 1, uid: 0, gid: 0)
        let member = ControlServer.Peer(pid: 2, uid: 1000, gid: 1000, groups: [27, 4242])
        let primary = ControlServer.Peer(pid: 3, uid: 1001, gid: 4242)
        let stranger = ControlServer.Peer(pid: 4, uid: 1002, gid: 1002, groups: [27])
        for kind in RequestKind.allCases {
            let socketGroup = kind.access == .anyone || kind.access == .group
            #expect(server.allowed(kind.access, root))
            #expect(server.allowed(kind.access, member) == (socketGroup || geteuid() == 1000))
            #expect(server.allowed(kind.access, primary) == (socketGroup || geteuid() == 1001))
            #expect(server.allowed(kind.access, stranger) == (kind == .hello || geteuid() == 1002))
        }
        // The message is root's, unless a group is let in: then its members too (primary
        // or supplementary), and only they.
        #expect(RequestKind.message.access == .messageGroup)
        server.messageGroup = (27, "kiosk-admin")
        #expect(server.allowed(.messageGroup, member) && server.allowed(.messageGroup, stranger))
        #expect(!server.allowed(.messageGroup, primary) || geteuid() == 1001)
        server.group = nil
        #expect(!server.allowed(.group, member) || geteuid() == 1000)
    }

    @Test func requestsWithoutAHandlerSayUnsupported() throws {
        let h = try Harness()
        let c = try h.connectWatched()
        try c.client.send(.lock)
        try c.client.send(.metrics)
        #expect(try h.run { c.lines.count == 2 })
        #expect(try c.lines.map { try header($0).error?.code } == [.unsupported, .unsupported])
        h.server.lockHandler = { done in done(.failure(ControlError(.displayBusy, "another process holds DRM master"))) }
        try c.client.send(.lock)
        #expect(try h.run { c.lines.count == 3 })
        #expect(try header(c.lines[2]).error?.code == .displayBusy)
    }
}
