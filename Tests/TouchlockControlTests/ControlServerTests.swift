import FoundationEssentials
import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSystem

private func header(_ line: String) throws -> ReplyHeader {
    try JSONDecoder().decode(ReplyHeader.self, from: Data(line.utf8))
}

private func decode<T: Decodable>(_ type: T.Type, _ line: String) throws -> T {
    try JSONDecoder().decode(type, from: Data(line.utf8))
}

/// The index of the first event that is not `failed` with failures equal to its index.
private func firstGap(_ events: [Event]) -> Int? {
    events.indices.first { events[$0] != .failed(method: .pattern, failures: $0, retryAfter: .milliseconds(500)) }
}

@Suite struct ControlServerTests {
    @Test func statusRoundTrip() throws {
        let h = try Harness()
        let c = try h.connectWatched()
        let helloID = try c.client.send(.hello)
        let statusID = try c.client.send(.status)
        #expect(try h.run { c.lines.count >= 2 })

        let hello = try header(c.lines[0])
        #expect(hello.id == helloID && hello.ok && hello.error == nil)
        #expect(try decode(Hello.self, c.lines[0]).protocol == 1)

        let reply = try header(c.lines[1])
        #expect(reply.id == statusID && reply.ok)
        let status = try decode(Status.self, c.lines[1])
        #expect(status == h.status)
        #expect(status.state == .locked && status.method == nil)
        #expect(status.screen == Status.Screen(width: 800, height: 480))
        #expect(status.pattern!.nodes.count == 9)
        // The wire names a client relies on.
        for key in ["\"state\":\"locked\"", "\"failures\":0", "\"node_radius\":", "\"nodes\":[[", "\"width\":800"] {
            #expect(c.lines[1].contains(key), "missing \(key) in \(c.lines[1])")
        }
        #expect(!c.lines[1].contains("\"method\""))

        // The daemon's status is asked at each request.
        var s = Session()
        _ = s.submit(.pattern, at: Instant(microseconds: 0))
        _ = s.verified(true, at: Instant(microseconds: 42))
        h.status = Status(session: s, screen: Size(width: 800, height: 480),
                          grid: PatternGrid.layout(on: Size(width: 800, height: 480)))
        try c.client.send(.status)
        #expect(try h.run { c.lines.count >= 3 })
        let unlocked = try decode(Status.self, c.lines[2])
        #expect(unlocked.state == .unlocked && unlocked.method == .pattern)
        #expect(c.lines[2].contains("\"method\":\"pattern\""))

        // The server knows who is connected.
        #expect(h.server.peers.contains { $0.pid == getpid() && $0.uid == getuid() && $0.gid == getgid() })
    }

    @Test func partialLinesAreBuffered() throws {
        let h = try Harness()
        let c = try h.connectWatched()
        let request = Array("{\"id\": 7, \"request\": \"hello\"}\n".utf8)
        try c.client.send(bytes: Array(request[..<10]))
        // Half a line gets no answer: a hello sent on a second connection gets its reply
        // while the first still has none.
        let other = try h.connectWatched()
        try other.client.send(.hello)
        #expect(try h.run { other.lines.count == 1 })
        #expect(c.lines.isEmpty)

        try c.client.send(bytes: Array(request[10...]))
        #expect(try h.run { c.lines.count == 1 })
        #expect(try header(c.lines[0]).id == 7)
    }

    @Test func subscribeThenBroadcast() throws {
        let h = try Harness()
        let sub = try h.connectWatched()
        let bystander = try h.connectWatched()
        try sub.client.send(.subscribe)
        try bystander.client.send(.hello)
        #expect(try h.run { sub.lines.count == 1 && bystander.lines.count == 1 })
        #expect(try header(sub.lines[0]).ok)

        let events: [Event] = [
            .unlocked(method: .pattern, at: Instant(microseconds: 123_456)),
            .failed(method: .pattern, failures: 3, retryAfter: .milliseconds(30_000)),
            .locked,
        ]
        for e in events { h.server.broadcast(e) }
        #expect(try h.run { sub.lines.count == 4 })
        #expect(sub.events == [
            #"{"at":123456,"event":"unlocked","method":"pattern"}"#,
            #"{"event":"failed","failures":3,"method":"pattern","retry_after_ms":30000}"#,
            #"{"event":"locked"}"#,
        ])
        #expect(try sub.events.map { try decode(Event.self, $0) } == events)

        // A client that did not subscribe gets no events: its next reply comes with
        // nothing before it.
        try bystander.client.send(.hello)
        #expect(try h.run { bystander.lines.count == 2 })
        #expect(bystander.events.isEmpty)
    }

    @Test func malformedRequestsGetErrorsAndKeepTheConnection() throws {
        let h = try Harness()
        let c = try h.connectWatched()
        try c.client.send(line: "{\"id\": 1, \"request\": ")
        try c.client.send(line: "[1, 2]")
        try c.client.send(line: "{\"request\": \"status\"}")
        try c.client.send(line: "{\"id\": \"x\", \"request\": \"status\"}")
        try c.client.send(line: "{\"id\": 5}")
        try c.client.send(line: "{\"id\": 6, \"request\": \"reboot\"}")
        try c.client.send(line: "")
        try c.client.send(line: "{\"id\": 8, \"request\": \"hello\"}\r")
        #expect(try h.run { c.lines.count == 7 })

        let replies = try c.lines.map(header)
        #expect(replies.map(\.ok) == [false, false, false, false, false, false, true])
        #expect(replies.map(\.id) == [nil, nil, nil, nil, 5, 6, 8])
        #expect(replies.prefix(5).allSatisfy { $0.error?.code == .badRequest })
        #expect(replies[0].error?.message == "malformed JSON")
        #expect(replies[5].error?.code == .unknownRequest)
        #expect(replies[5].error?.message.contains("reboot") == true)
        #expect(!c.closed)
    }

    @Test func overlongLineIsRefusedAndTheClientDropped() throws {
        let h = try Harness()
        let c = try h.connectWatched()
        let survivor = try h.connectWatched()
        let long = "{\"id\": 1, \"request\": \"" + String(repeating: "x", count: 5 * 1024) + "\"}"
        try c.client.send(line: long)
        #expect(try h.run { c.closed })
        #expect(c.lines.count == 1)
        let reply = try header(c.lines[0])
        #expect(!reply.ok && reply.error?.code == .lineTooLong)
        #expect(c.error == nil)

        try survivor.client.send(.hello)
        #expect(try h.run { survivor.lines.count == 1 })
        #expect(try header(survivor.lines[0]).ok)
    }

    @Test func overlongLineWithoutNewlineIsRefused() throws {
        let h = try Harness()
        let c = try h.connectWatched()
        try c.client.send(bytes: Array(repeating: UInt8(ascii: "{"), count: 4097))
        #expect(try h.run { c.closed })
        #expect(try c.lines.map { try header($0).error?.code } == [.lineTooLong])
    }

    /// A subscriber that never reads fills its socket and then its queue on the server;
    /// it is dropped, while an attentive subscriber receives every event and the loop
    /// keeps running.
    @Test func stalledSubscriberIsDroppedWithoutBlockingTheLoop() throws {
        let h = try Harness()
        let stalled = try h.connectWatched()
        let attentive = try h.connectWatched()
        try stalled.client.send(.subscribe)
        try attentive.client.send(.subscribe)
        #expect(try h.run { stalled.lines.count == 1 && attentive.lines.count == 1 })
        h.unwatch(stalled)  // from here on nobody reads it

        let total = 8000, batch = 50
        var sent = 0
        func produce(_: Instant) {
            for _ in 0..<batch where sent < total {
                h.server.broadcast(.failed(method: .pattern, failures: sent, retryAfter: .milliseconds(500)))
                sent += 1
            }
            if sent < total { h.loop.schedule(at: EventLoop.now(), produce) }
            h.check()
        }
        h.loop.schedule(at: EventLoop.now(), produce)
        let finished = try h.run(timeout: .milliseconds(20_000)) { sent == total && attentive.events.count == total }
        #expect(finished, "the loop ended on its timeout: \(sent) sent, \(attentive.events.count) received")

        // The attentive subscriber got everything, in order.
        let got = try attentive.events.map { try decode(Event.self, $0) }
        #expect(got.count == total)
        #expect(firstGap(got) == nil)
        #expect(!attentive.closed)

        // The stalled one, reading at last, finds a gapless prefix and then the end.
        var lines: [String] = []
        var closed = false
        while !closed {
            let (more, end) = try stalled.client.readAvailableLines()
            lines += more
            closed = end
            if more.isEmpty && !end { break }
        }
        #expect(closed, "the stalled subscriber was not disconnected")
        // (Its subscribe reply was read before it stalled.)
        let events = try lines.map { try decode(Event.self, $0) }
        #expect(events.count > 0 && events.count < total)
        #expect(firstGap(events) == nil)

        // And the server still answers.
        try attentive.client.send(.hello)
        #expect(try h.run { attentive.replies.count == 2 })
    }

    /// Events the kernel cannot take wait in the server's queue and reach a subscriber
    /// that catches up in time, all of them, in order.
    @Test func lateReaderWithinBudgetGetsEverything() throws {
        let h = try Harness()
        let sub = try h.connectWatched()
        try sub.client.send(.subscribe)
        #expect(try h.run { sub.lines.count == 1 })
        h.unwatch(sub)
        // Many more than the socket takes (~300 small writes), well under 64 KiB queued.
        let total = 600
        for i in 0..<total { h.server.broadcast(.failed(method: .pattern, failures: i, retryAfter: .milliseconds(500))) }
        let again = try h.watch(sub.client)
        #expect(try h.run { again.events.count == total })
        #expect(firstGap(try again.events.map { try decode(Event.self, $0) }) == nil)
        #expect(!again.closed)
    }

    /// A client that pipelines requests without reading the replies is not dropped: the
    /// server stops reading it until it catches up.
    @Test func pipelinedRequestsWaitForTheReader() throws {
        let h = try Harness()
        let c = try h.connect()
        let count = 3000
        var batch: [UInt8] = []
        for id in 1...count { batch += Array("{\"id\":\(id),\"request\":\"hello\"}\n".utf8) }
        try c.send(bytes: batch)
        // Let the server answer until it has to wait for the reader.
        let probe = try h.connectWatched()
        try probe.client.send(.hello)
        #expect(try h.run { probe.lines.count == 1 })
        let w = try h.watch(c)
        #expect(try h.run { w.lines.count == count })
        #expect(try w.lines.map { try header($0).id } == (1...count).map { $0 })
        #expect(!w.closed)
    }

    @Test func clientLimit() throws {
        let h = try Harness(limits: ControlServer.Limits(maxClients: 32))
        var clients: [Harness.Watched] = []
        for _ in 0..<h.server.limits.maxClients {
            let c = try h.connectWatched()
            try c.client.send(.hello)
            clients.append(c)
        }
        #expect(try h.run { clients.allSatisfy { $0.lines.count == 1 } })
        #expect(try clients.allSatisfy { try header($0.lines[0]).ok })

        let extra = try h.connectWatched()
        #expect(try h.run { extra.closed })
        #expect(extra.lines.count == 1)
        let refusal = try header(extra.lines[0])
        #expect(!refusal.ok && refusal.id == nil && refusal.error?.code == .tooManyClients)

        // A client leaving frees its place. The server reads the departure no later than
        // the request another client sends after it.
        h.unwatch(clients[0])
        clients[0].client.close()
        try clients[1].client.send(.hello)
        #expect(try h.run { clients[1].lines.count == 2 })
        let late = try h.connectWatched()
        try late.client.send(.hello)
        #expect(try h.run { late.lines.count == 1 || late.closed })
        #expect(try header(late.lines[0]).ok)
    }

    @Test func socketFile() throws {
        let h = try Harness()
        var st = stat()
        #expect(lstat(h.path, &st) == 0)
        #expect(st.st_mode & S_IFMT == S_IFSOCK)
        #expect(st.st_mode & 0o777 == 0o660)
        #expect(stat(h.dir + "/run", &st) == 0)
        #expect(st.st_mode & 0o777 == 0o755)

        // A second server on a live socket refuses and leaves it alone.
        #expect(throws: SystemError.self) {
            _ = try ControlServer(path: h.path, loop: h.loop) { h.status }
        }
        #expect(lstat(h.path, &st) == 0)

        // Closing unlinks it; a stale socket file left behind is replaced.
        h.server.close()
        #expect(lstat(h.path, &st) != 0)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            let bytes = Array(h.path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        close(fd)
        #expect(lstat(h.path, &st) == 0)
        let again = try ControlServer(path: h.path, loop: h.loop) { h.status }
        let c = try h.connectWatched()
        try c.client.send(.hello)
        #expect(try h.run { c.lines.count == 1 })
        again.close()
        #expect(lstat(h.path, &st) != 0)
    }

    @Test func connectingToNothingSaysWhy() throws {
        do {
            _ = try ControlClient.connect(path: "/nonexistent/touchlock.sock")
            Issue.record("connected to nothing")
        } catch {
            guard case .system(let e) = error else { Issue.record("\(error)"); return }
            #expect(e.errno == .noEntry)
        }
    }
}
