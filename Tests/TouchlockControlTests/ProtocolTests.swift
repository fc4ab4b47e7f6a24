import FoundationEssentials
import Testing
import TouchlockControl
import TouchlockCore

@Suite struct ProtocolTests {
    @Test func eventsFromSessionActions() throws {
        // What the lock screen tells is what is sent: one type, no conversion.
        let told: [LockEvent] = [.unlocked(method: .pattern, at: Instant(microseconds: 9)),
                                 .failed(method: .code, failures: 2, retryAfter: .milliseconds(500)), .locked]
        let sent: [Event] = told
        #expect(sent == [.unlocked(method: .pattern, at: Instant(microseconds: 9)),
                         .failed(method: .code, failures: 2, retryAfter: .milliseconds(500)), .locked])
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try e.encode(told[0]), as: UTF8.self) == #"{"at":9,"event":"unlocked","method":"pattern"}"#)
    }

    @Test func statusFromSession() {
        var s = Session(schedule: LockoutSchedule(seconds: [30]))
        let grid = PatternGrid.layout(rows: 4, columns: 3, on: Size(width: 600, height: 1000))
        let size = Size(width: 600, height: 1000)
        #expect(Status(session: s, screen: size, grid: grid).state == .locked)
        _ = s.submit(.pattern, at: Instant(microseconds: 0))
        #expect(Status(session: s, screen: size, grid: grid).state == .verifying)
        _ = s.verified(false, at: Instant(microseconds: 0))
        let status = Status(session: s, screen: size, grid: grid)
        #expect(status.state == .lockout && status.failures == 1 && status.method == nil)
        let timed = Status(session: s, screen: size, grid: grid, now: Instant(microseconds: 10_000_000))
        #expect(timed.lockoutUntil == 30_000_000 && timed.retryAfterMilliseconds == 20_000)
        #expect(status.pattern!.rows == 4 && status.pattern!.columns == 3 && status.pattern!.nodes.count == 12)
        for (i, xy) in status.pattern!.nodes.enumerated() {
            let c = grid.center(of: i)
            #expect(abs(xy[0] - c.x) <= 0.005 && abs(xy[1] - c.y) <= 0.005)
            // Aiming at the reported centre selects that node.
            #expect(grid.node(at: Point(x: xy[0], y: xy[1])) == i)
        }
        #expect(abs(status.pattern!.nodeRadius - grid.nodeRadius) <= 0.005)
        #expect(abs(status.pattern!.hitRadius - grid.hitRadius) <= 0.005)
    }

    @Test func requestWireFormat() throws {
        let data = try JSONEncoder().encode(Request(id: 3, request: .subscribe))
        let back = try JSONDecoder().decode(Request.self, from: data)
        #expect(back == Request(id: 3, request: .subscribe))
        #expect(String(decoding: data, as: UTF8.self).contains("\"request\":\"subscribe\""))
    }
}

@Suite struct CodeProtocolTests {
    @Test func progressEventsCarryCountsOnly() throws {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        let line = try e.encode(Event.progress(entered: 2, total: 4))
        #expect(String(decoding: line, as: UTF8.self) == "{\"entered\":2,\"event\":\"progress\",\"total\":4}")
        #expect(try JSONDecoder().decode(Event.self, from: line) == .progress(entered: 2, total: 4))
    }

    @Test func enrollmentEventsAndTheScreenRequest() throws {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        let ok = try e.encode(Event.enrolled(method: .pattern))
        #expect(String(decoding: ok, as: UTF8.self) == "{\"event\":\"enrolled\",\"method\":\"pattern\"}")
        #expect(try JSONDecoder().decode(Event.self, from: ok) == .enrolled(method: .pattern))
        let failed = try e.encode(Event.enrollFailed(method: .code, reason: "cancelled by a lock request"))
        #expect(String(decoding: failed, as: UTF8.self)
            == "{\"event\":\"enroll_failed\",\"method\":\"code\",\"reason\":\"cancelled by a lock request\"}")
        #expect(try JSONDecoder().decode(Event.self, from: failed) == .enrollFailed(method: .code, reason: "cancelled by a lock request"))
        var lock = LockScreen(pads: .pattern(PatternLock(grid: .layout(on: Size(width: 300, height: 300)))), session: Session(),
                              builder: SceneBuilder(theme: Theme(), size: Size(width: 300, height: 300)))
        #expect(Status(lock, screen: Size(width: 300, height: 300)).enrolling == nil)
        _ = try lock.beginEnrollment(.pattern, hasSecret: false, at: Instant(microseconds: 0))
        #expect(Status(lock, screen: Size(width: 300, height: 300)).enrolling == .pattern)
        let r = try e.encode(Request(id: 3, request: .enroll, method: .code, screen: true))
        #expect(String(decoding: r, as: UTF8.self) == "{\"id\":3,\"method\":\"code\",\"request\":\"enroll\",\"screen\":true}")
    }

    @Test func statusTellsWhereTheCodePadsKeysAre() throws {
        var c = Config()
        c.screens.methods = .both
        let size = Size(width: 480, height: 800)
        var lock = LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 0)
        _ = lock.key(.digit(1), at: Instant(microseconds: 5))
        let st = Status(lock, screen: size)
        #expect(st.showing == .code)
        #expect(st.code?.length == 4 && st.code?.entered == 1)
        #expect(Set(st.code!.keys.keys) == Set((0...9).map(String.init) + ["delete", "ok"]))
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        let text = String(decoding: try e.encode(st), as: UTF8.self)
        #expect(text.contains("\"showing\":\"code\"") && text.contains("\"toggle\":["))
    }

    @Test func enrollRequestsAreDecodedOnceIntoWhatToDo() throws {
        func enrollment(_ method: String?, hash: String? = nil, length: Int? = nil, screen: Bool? = nil) throws(ControlError) -> EnrollRequest {
            try EnrollRequest(method: method, hash: hash, length: length, screen: screen)
        }
        #expect(try enrollment("pattern", hash: "$y$p") == .store(.pattern, hash: "$y$p", length: nil))
        #expect(try enrollment("duress", hash: "$y$d", length: 6) == .store(.duress, hash: "$y$d", length: 6))
        #expect(try enrollment("code") == .remove(.code))
        #expect(try enrollment("code", screen: true) == .onScreen(.code))
        #expect(throws: ControlError(.badRequest, "missing \"method\"")) { try enrollment(nil, hash: "$y$p") }
        #expect(throws: ControlError(.badValue, "unknown method \"pin\" (pattern, code, duress)")) { try enrollment("pin") }
        #expect(throws: ControlError(.badValue, "the duress code is not enrolled on the screen (pattern, code)")) {
            try enrollment("duress", screen: true)
        }
        #expect(throws: ControlError(.badRequest, "\"screen\" takes no \"hash\" and no \"length\"")) {
            try enrollment("code", hash: "$y$c", screen: true)
        }
        // A code's hash comes with its length, which the rules allow.
        #expect(throws: ControlError(.badValue, "missing \"length\": a code comes with its number of digits, so that one the pad cannot take is refused")) {
            try enrollment("code", hash: "$y$c")
        }
        #expect(throws: ControlError(.badValue, "a code has at least 4 digits and at most 12; this one has 13")) {
            try enrollment("duress", hash: "$y$c", length: 13)
        }
        #expect(throws: ControlError(.badRequest, "\"length\" is a code's number of digits; a pattern has none")) {
            try enrollment("pattern", hash: "$y$p", length: 4)
        }
        // On the wire: the method as its name, the length beside the hash.
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = try e.encode(Request(id: 1, request: .enroll, method: .duress, hash: "$y$d", length: 4))
        #expect(String(decoding: line, as: UTF8.self)
                == #"{"hash":"$y$d","id":1,"length":4,"method":"duress","request":"enroll"}"#)
    }
}
