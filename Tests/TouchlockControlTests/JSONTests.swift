import Foundation
import Testing
@testable import TouchlockControl
import TouchlockCore

/// The protocol's own JSON against Foundation's, which the daemon used before: the same
/// bytes out, the same values in, and hostile lines refused.
@Suite struct JSONTests {
    /// What the daemon wrote with Foundation: keys sorted, slashes as they are.
    func foundation<T: Encodable>(_ value: T) throws -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try e.encode(value), as: UTF8.self) + "\n"
    }

    func ours<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try LineCodec().line(value), as: UTF8.self)
    }

    static let awkward: String = {
        var s = ""
        for i in 0..<0x20 { s.unicodeScalars.append(Unicode.Scalar(UInt8(i))) }
        return s + "\u{7f} / \\ \" é \u{2028} 😀 日本 $y$j9T$abc/def"
    }()

    static func fullStatus() -> Status {
        var c = Config()
        c.screens.methods = .both
        let size = Size(width: 1280, height: 800)
        var lock = LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 3)
        _ = lock.key(.digit(4), at: Instant(microseconds: 9))
        var st = Status(lock, screen: size, now: Instant(microseconds: 1), enrolled: [.pattern, .code])
        st.method = .code
        st.unlockedAt = 812_345_678
        st.lockoutUntil = Int64.max
        st.retryAfterMilliseconds = 59_998
        st.reason = awkward
        st.record = .damaged
        st.enrolling = .pattern
        st.display = .notShown
        st.displayReason = "another process holds DRM master (/dev/dri/card0)"
        st.vt = 2
        st.vtReason = ""
        st.power = .blank
        st.pattern?.nodes.append([-0.0, 1e20, 1e-5, 0.1, 1e16, 1e15, 5e-324, 1.7976931348623157e308, 172.79999999999998])
        return st
    }

    static func fullMetrics() -> Metrics {
        var e = LatencyEstimator()
        for us in [150, 900, 4_000, 17_000, 2_000_000] as [Int64] { e.record(Interval(microseconds: us)) }
        var m = Metrics(eventToSubmit: .init(e), eventToShown: .init(count: 0, p50: nil, p99: nil, max: nil), frames: 70)
        m.unlocks = ["pattern": 2, "code": 0]
        m.failuresTotal = 5
        m.lockoutsTotal = 1
        m.lockedSeconds = 12.25
        m.inputDevices = 2
        m.outputs = 1
        return m
    }

    static let events: [Event] = [
        .unlocked(method: .pattern, at: Instant(microseconds: 123_456_789)),
        .duress(method: .code, at: Instant(microseconds: -1)),
        .failed(method: .pattern, failures: 5, retryAfter: .milliseconds(59_998)),
        .storeFailed(method: .code, reason: "No space left on device"),
        .lockout(until: Instant(microseconds: 812_345_678)),
        .locked,
        .progress(entered: 2, total: 4),
        .enrolled(method: .pattern),
        .enrollFailed(method: .code, reason: awkward),
    ]

    @Test func everyLineIsWrittenByteForByteAsFoundationWroteIt() throws {
        let codec = LineCodec()
        #expect(try ours(Self.fullStatus()) == foundation(Self.fullStatus()))
        #expect(try ours(Status(session: Session(), screen: Size(width: 800, height: 480), grid: nil))
                == foundation(Status(session: Session(), screen: Size(width: 800, height: 480), grid: nil)))
        #expect(try ours(Self.fullMetrics()) == foundation(Self.fullMetrics()))
        for e in Self.events { #expect(try ours(e) == foundation(e)) }
        #expect(try ours(Request(id: -7, request: .enroll, method: .duress, hash: "$y$j9T$a/b", length: 4, screen: false))
                == foundation(Request(id: -7, request: .enroll, method: .duress, hash: "$y$j9T$a/b", length: 4, screen: false)))
        #expect(try ours(["z": 1, "a_b": 2, "a": 3, "ab": 4, "B": 5, "é": 6, "a10": 7, "a9": 8])
                == foundation(["z": 1, "a_b": 2, "a": 3, "ab": 4, "B": 5, "é": 6, "a10": 7, "a9": 8]))
        // A reply: id, ok and the body's keys in one object; an error's id may be null.
        #expect(String(decoding: try codec.reply(id: 4, Hello()), as: UTF8.self) == "{\"id\":4,\"ok\":true,\"protocol\":1}\n")
        #expect(String(decoding: try codec.reply(id: 5, Empty()), as: UTF8.self) == "{\"id\":5,\"ok\":true}\n")
        #expect(String(decoding: codec.reply(id: nil, ControlError(.badRequest, "malformed JSON")), as: UTF8.self)
                == "{\"error\":{\"code\":\"bad_request\",\"message\":\"malformed JSON\"},\"id\":null,\"ok\":false}\n")
        let status = String(decoding: try codec.reply(id: 1, Self.fullStatus()), as: UTF8.self)
        #expect(status.hasPrefix("{\"code\":{\"boxes\":[[") && status.contains(",\"id\":1,") && status.contains(",\"ok\":true,"))
        #expect(status.contains("[-0,1e+20,1e-05,0.1,1e+16,1000000000000000,5e-324,1.7976931348623157e+308,172.79999999999998]"))
    }

    @Test func linesFoundationWroteReadBackAsTheSameValues() throws {
        let codec = LineCodec()
        func back<T: Codable & Equatable>(_ value: T) throws -> T {
            try codec.decode(T.self, from: Array(try foundation(value).dropLast().utf8))
        }
        #expect(try back(Self.fullStatus()) == Self.fullStatus())
        #expect(try back(Self.fullMetrics()) == Self.fullMetrics())
        for e in Self.events { #expect(try back(e) == e) }
        let r = Request(id: Int.min, request: .resetLockout, method: .code, hash: Self.awkward, length: 12, screen: true)
        #expect(try back(r) == r)
        // Fields a newer server adds are skipped; a reply line reads as its header.
        let header = try codec.decode(ReplyHeader.self, from: Array(#"{"id":3,"ok":false,"later":[{"x":[]}],"error":{"code":"new_code","message":"m"}}"#.utf8))
        #expect(header == ReplyHeader(id: 3, ok: false, error: ControlError(ErrorCode(rawValue: "new_code"), "m")))
    }

    @Test func escapesAndNumbersAreReadAsJSONMeansThem() throws {
        func string(_ text: String) throws -> String { try LineCodec().decode(String.self, from: Array(text.utf8)) }
        #expect(try string(#""\u00e9\u65E5\ud83d\ude00\u0000\/\b\f\n\r\t\"\\""#) == "é日😀\u{0}/\u{8}\u{c}\n\r\t\"\\")
        #expect(try string(" \"é 😀\"\r\n") == "é 😀")
        func int(_ text: String) throws -> Int { try LineCodec().decode(Int.self, from: Array(text.utf8)) }
        #expect(try int("-0") == 0 && int("3.0") == 3 && int("1e2") == 100 && int("-1E+2") == -100)
        #expect(try int("9223372036854775807") == Int.max && int("-9223372036854775808") == Int.min)
        for bad in ["1.5", "9223372036854775808", "1e400", "1e19"] {
            #expect(throws: DecodingError.self, "\(bad)") { try int(bad) }
        }
        #expect(try LineCodec().decode(Double.self, from: Array("-1.25e-3".utf8)) == -0.00125)
        #expect(throws: DecodingError.self) { try LineCodec().decode(Double.self, from: Array("1e999".utf8)) }
    }

    @Test func hostileTextIsRefusedWithWhereItWentWrong() {
        let refused: [(String, String)] = [
            ("", "unexpected end"), ("  ", "unexpected end"), ("nul", "not a JSON value"), ("{\"id\":1,}", "expected a key"),
            ("[1,]", "not a JSON value"), ("{\"id\":1} {}", "text after the value"), ("{\"id\":01}", "expected ',' or '}'"),
            ("{\"id\":-}", "expected a digit"), ("{\"id\":1.}", "expected a digit"), ("{\"id\":1e}", "expected a digit"),
            ("{\"id\":+1}", "not a JSON value"), ("{\"id\":.5}", "not a JSON value"), ("{id:1}", "expected a key"),
            ("{\"a\":1,\"a\":1}", "key \"a\" given twice"), ("\"\\ud800\"", "a lone surrogate"),
            ("\"\\udc00\\ud800\"", "a lone surrogate"), ("\"\\ud800\\u0041\"", "a lone surrogate"), ("\"\\u12zz\"", "expected a hex digit"),
            ("\"\\x41\"", "unknown escape"), ("\"a\tb\"", "a control character in a string"), ("\"abc", "unterminated string"),
            ("\"\\", "unterminated string"), ("[1 2]", "expected ',' or ']'"), ("// comment\n{}", "not a JSON value"),
            ("NaN", "not a JSON value"), ("\u{FEFF}{}", "not a JSON value"),
        ]
        for (text, why) in refused {
            #expect(throws: JSON.SyntaxError.self, "\(text.debugDescription)") { try JSON.parse(Array(text.utf8)) }
            do { _ = try JSON.parse(Array(text.utf8)) } catch { #expect(error.message == why, "\(text.debugDescription): \(error)") }
        }
        // Bytes that are not UTF-8 inside a string: an overlong "/", a lone continuation
        // byte, an encoded surrogate, a cut sequence.
        for bytes: [UInt8] in [[0x22, 0xC0, 0xAF, 0x22], [0x22, 0x80, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xE6, 0x97, 0x22]] {
            #expect(throws: JSON.SyntaxError(offset: 0, message: "a string that is not UTF-8")) { try JSON.parse(bytes) }
        }
    }

    @Test func nestingStopsAtItsLimitWithoutTheStack() throws {
        let limit = JSON.maximumDepth
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(try JSON.parse(Array(deepest.utf8)) != .null)
        let objects = String(repeating: "{\"a\":", count: limit - 1) + "{}" + String(repeating: "}", count: limit - 1)
        #expect(try JSON.parse(Array(objects.utf8)) != .null)
        #expect(throws: JSON.SyntaxError(offset: limit, message: "nested deeper than \(limit)")) {
            try JSON.parse(Array((String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)).utf8))
        }
        // A whole line of openings, and far more than a line: refused at the limit.
        #expect(throws: JSON.SyntaxError(offset: limit, message: "nested deeper than \(limit)")) {
            try JSON.parse([UInt8](repeating: UInt8(ascii: "["), count: 1 << 20))
        }
        #expect(throws: JSON.SyntaxError(offset: 5 * limit, message: "nested deeper than \(limit)")) {
            try JSON.parse(Array(String(repeating: "{\"a\":", count: 10_000).utf8))
        }
    }

    @Test func theServerNamesWhatIsWrongWithARequest() throws {
        let r = ControlRequests(status: { Status(session: Session(), screen: Size(width: 8, height: 8), grid: nil) })
        var root = ControlRequests.Sender(peer: ControlServer.Peer(pid: 1, uid: 0, gid: 0), serial: 1)
        func reply(_ line: String) throws -> ReplyHeader {
            var replies: [[UInt8]] = []
            r.answer(ArraySlice(line.utf8), from: &root) { replies.append($0) }
            #expect(replies.count == 1)
            return try JSONDecoder().decode(ReplyHeader.self, from: Data(replies[0]))
        }
        #expect(try reply(#"{"id":1,"request":"status","request":"enroll"}"#)
                == ReplyHeader(id: nil, ok: false, error: ControlError(.badRequest, "malformed JSON")))
        #expect(try reply(#"{"id":"1","request":"hello"}"#).error == ControlError(.badRequest, "\"id\" has the wrong type"))
        #expect(try reply(#"{"id":1,"request":"enroll","length":4.5}"#).error?.message == "malformed JSON")
        #expect(try reply(#"{"id":1,"request":"enroll","screen":1}"#).error == ControlError(.badRequest, "\"screen\" has the wrong type"))
        #expect(try reply(#"["id",1]"#).error == ControlError(.badRequest, "a request is a JSON object"))
        #expect(try reply(#""\ud800""#).error?.message == "malformed JSON")
        #expect(try reply(#"{"id":2.0,"request":"hello","later":{"x":null}}"#) == ReplyHeader(id: 2, ok: true, error: nil))
        #expect(try reply(#"{"id":3,"request":"hello","method":null}"#).ok)
    }
}
