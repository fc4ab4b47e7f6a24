import FoundationEssentials
import Testing
@testable import TouchlockControl
import TouchlockCore

/// The answers to request lines without a socket, as the control fuzz target drives them.
@Suite struct ControlRequestsTests {
    static let grid = PatternGrid.layout(rows: 3, columns: 3, on: Size(width: 800, height: 480))

    func reply(_ r: ControlRequests, _ line: String, as sender: inout ControlRequests.Sender) throws -> ReplyHeader? {
        var replies: [[UInt8]] = []
        r.answer(ArraySlice(line.utf8), from: &sender) { replies.append($0) }
        #expect(replies.count <= 1)
        guard let bytes = replies.first else { return nil }
        #expect(bytes.last == UInt8(ascii: "\n") && bytes.filter { $0 == UInt8(ascii: "\n") }.count == 1)
        return try JSONDecoder().decode(ReplyHeader.self, from: Data(bytes))
    }

    @Test func linesAreAnsweredByWhoMayAskWithoutASocket() throws {
        let status = Status(session: Session(), screen: Size(width: 800, height: 480), grid: Self.grid)
        let r = ControlRequests(status: { status })
        r.group = 4242
        var locks = 0
        r.lockHandler = { done in locks += 1; done(.success(.locked)) }
        var stranger = ControlRequests.Sender(peer: ControlServer.Peer(pid: 4, uid: 4_000_002, gid: 100), serial: 1)
        var root = ControlRequests.Sender(peer: ControlServer.Peer(pid: 1, uid: 0, gid: 0), serial: 2)

        let refused = try reply(r, #"{"id":7,"request":"lock"}"#, as: &stranger)
        #expect(refused?.ok == false && refused?.id == 7 && refused?.error?.code == .forbidden && locks == 0)
        let locked = try reply(r, #"{"id":8,"request":"lock"}  "#, as: &root)
        #expect(locked?.ok == true && locked?.id == 8 && locks == 1)

        #expect(try reply(r, " \t\r", as: &root) == nil)
        let malformed = try reply(r, #"{"id":9,"request":"#, as: &root)
        #expect(malformed?.ok == false && malformed?.id == nil && malformed?.error?.code == .badRequest)

        #expect(!root.subscribed)
        #expect(try reply(r, #"{"id":10,"request":"subscribe"}"#, as: &root)?.ok == true)
        #expect(root.subscribed && !stranger.subscribed)
    }
}
