import FoundationEssentials
import Testing
import TouchlockControl
import TouchlockCore

@Suite struct ProtocolTests {
    @Test func eventsFromSessionActions() {
        #expect(Event(.unlocked(.pattern, at: Instant(microseconds: 9))) == .unlocked(method: .pattern, at: Instant(microseconds: 9)))
        #expect(Event(.failed(.code, failures: 2, retryAfter: .milliseconds(500)))
                == .failed(method: .code, failures: 2, retryAfter: .milliseconds(500)))
        #expect(Event(.stateChanged) == nil)
        #expect(Event(.verify(.pattern)) == nil)
        #expect(Event(.armTimer(Instant(microseconds: 1))) == nil)
    }

    @Test func statusFromSession() {
        var s = Session(lockoutAfter: { $0 >= 1 ? .milliseconds(30_000) : nil })
        let grid = PatternGrid.layout(rows: 4, columns: 3, on: Size(width: 600, height: 1000))
        let size = Size(width: 600, height: 1000)
        #expect(Status(session: s, screen: size, grid: grid).state == .locked)
        _ = s.submit(.pattern, at: Instant(microseconds: 0))
        #expect(Status(session: s, screen: size, grid: grid).state == .verifying)
        _ = s.verified(false, at: Instant(microseconds: 0))
        let status = Status(session: s, screen: size, grid: grid)
        #expect(status.state == .lockout && status.failures == 1 && status.method == nil)
        #expect(status.pattern.rows == 4 && status.pattern.columns == 3 && status.pattern.nodes.count == 12)
        let c5 = grid.center(of: 5)
        #expect(status.pattern.nodes[5] == [c5.x, c5.y])
        #expect(status.pattern.nodeRadius == grid.nodeRadius && status.pattern.hitRadius == grid.hitRadius)
    }

    @Test func requestWireFormat() throws {
        let data = try JSONEncoder().encode(Request(id: 3, request: .subscribe))
        let back = try JSONDecoder().decode(Request.self, from: data)
        #expect(back == Request(id: 3, request: .subscribe))
        #expect(String(decoding: data, as: UTF8.self).contains("\"request\":\"subscribe\""))
    }
}
