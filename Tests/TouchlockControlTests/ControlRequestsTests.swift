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

    /// One `Request` type is read and refused in the order the protocol gives: the id,
    /// the request's name, who may ask, and only then the fields it reads.
    @Test func aRequestLineIsRefusedIdFirstThenNameThenWhoMayAskThenItsFields() throws {
        let r = ControlRequests(status: { Status(session: Session(), screen: Size(width: 800, height: 480), grid: nil) })
        var enrolled: [SecretKind] = []
        r.enrollHandler = { kind, _ in enrolled.append(kind); return nil }
        var stranger = ControlRequests.Sender(peer: ControlServer.Peer(pid: 4, uid: 4_000_002, gid: 100), serial: 1)
        var root = ControlRequests.Sender(peer: ControlServer.Peer(pid: 1, uid: 0, gid: 0), serial: 2)
        func error(_ line: String, _ sender: inout ControlRequests.Sender) throws -> (Int?, ControlError?) {
            let h = try #require(try reply(r, line, as: &sender))
            return (h.id, h.error)
        }
        #expect(try error(#"{"request":"status"}"#, &root) == (nil, ControlError(.badRequest, "missing \"id\"")))
        #expect(try error(#"{"id":1}"#, &root) == (1, ControlError(.badRequest, "missing \"request\"")))
        #expect(try error(#"{"id":2,"request":"pin","method":"nope"}"#, &root).1?.code == .unknownRequest)
        #expect(try error(#"{"id":3,"request":"enroll","method":"pin"}"#, &stranger).1?.code == .forbidden)
        #expect(try error(#"{"id":4,"request":"enroll","method":"pin"}"#, &root)
                == (4, ControlError(.badValue, "unknown method \"pin\" (pattern, code, duress)")))
        #expect(try error(#"{"id":5,"request":"status","method":"pin"}"#, &root) == (5, nil))
        #expect(try error(#"{"id":6,"request":"enroll","method":"pattern"}"#, &root) == (6, nil))
        #expect(enrolled == [.pattern])
        #expect(try error(#"{"id":"7","request":"status"}"#, &root) == (nil, ControlError(.badRequest, "\"id\" has the wrong type")))
    }
}
