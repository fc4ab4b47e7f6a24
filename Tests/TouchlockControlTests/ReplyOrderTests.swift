import Testing
import TouchlockControl
import TouchlockCore

/// What docs/protocol.md says of the order of lines on one connection: events may come
/// between a request and its reply; replies come in the order of the requests, but the
/// reply to `lock` waits for the display, so one to a later request may come first.
@Suite struct ReplyOrderTests {
    @Test func eventsAndLaterRepliesMayComeBeforeTheReplyToLock() throws {
        let h = try Harness()
        var pending: ((Result<Status.State, ControlError>) -> Void)?
        h.server.lockHandler = { done in pending = done }
        let c = try h.connectWatched()
        try c.client.send(line: #"{"id":1,"request":"subscribe"}"#)
        #expect(try h.run { c.lines.count == 1 })

        // Sent together: lock (waits for the display), then status (answered at once).
        try c.client.send(line: #"{"id":2,"request":"lock"}"# + "\n" + #"{"id":3,"request":"status"}"#)
        #expect(try h.run { c.lines.count == 2 })
        #expect(try c.client.decode(ReplyHeader.self, from: c.lines[1]).id == 3)
        // While the lock screen is being shown, an event.
        h.server.broadcast(.locked)
        #expect(try h.run { c.lines.count == 3 })
        #expect(c.lines[2] == #"{"event":"locked"}"#)
        pending?(.success(.locked))
        #expect(try h.run { c.lines.count == 4 })
        #expect(c.lines[3] == #"{"id":2,"ok":true,"state":"locked"}"#)
    }
}
