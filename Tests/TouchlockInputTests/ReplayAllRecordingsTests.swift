import Foundation
import Testing
import TouchlockCore

/// One row of Fixtures/MANIFEST.tsv: a recording, the description of its device, and
/// the protocol the device speaks.
struct ManifestRow: Sendable, CustomTestStringConvertible {
    var recording: String
    var description: String
    var protocolName: String
    var testDescription: String { recording }

    static let all: [ManifestRow] = {
        guard let text = try? fixture("MANIFEST.tsv") else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: "\t").map(String.init)
            guard f.count == 3, !line.hasPrefix("#") else { return nil }
            return ManifestRow(recording: f[0], description: f[1], protocolName: f[2])
        }
    }()
}

/// Quirks a recording needs: the eGalax 0eef:0001 reports its position on ABS_Z/ABS_RX.
let recordingQuirks = ["egalax-0eef-0001-singletouch-resistive.desc": "0eef:0001 x=ABS_Z y=ABS_RX"]

/// What a person finds reading the E: lines by hand, without the assembler: per touch
/// when it began and ended (SYN_REPORT times) and where it last was while down; per
/// frame the positions of the contacts down at its SYN_REPORT.
struct HandReading {
    struct HandTouch { var began: Int64; var ended: Int64?; var end: [Int32?]; var samples = 0 }
    var frames = 0
    var touches: [HandTouch] = []
    /// Contacts down at each SYN_REPORT, with their time.
    var contacts: [(time: Int64, positions: [[Int32?]])] = []

    var maxContacts: Int { contacts.map(\.positions.count).max() ?? 0 }
    var sessions: Int {
        var n = 0, before = 0
        for c in contacts { if before == 0 && c.positions.count > 0 { n += 1 }; before = c.positions.count }
        return n
    }

    /// (time, type, code, value) of every E: line.
    static func events(_ text: String) -> [(Int64, Int, Int, Int32)] {
        text.split(separator: "\n").filter { $0.hasPrefix("E:") }.map { line in
            let f = line.prefix(while: { $0 != "#" }).split(whereSeparator: { $0 == " " || $0 == "\t" })
            let t = f[1].split(separator: ".")
            return (Int64(t[0])! * 1_000_000 + Int64(t[1])!, Int(f[2], radix: 16)!, Int(f[3], radix: 16)!, Int32(f[4])!)
        }
    }

    /// Protocol B: slots hold a tracking id and the last X and Y sent to them.
    init(slotsIn text: String) {
        var slot = 0
        var ids: [Int: Int32] = [:], xs: [Int: Int32] = [:], ys: [Int: Int32] = [:]
        var touchOfSlot: [Int: Int] = [:]
        for (time, type, code, value) in Self.events(text) {
            switch (type, code) {
            case (3, 0x2f): slot = Int(value)
            case (3, 0x39):
                if value < 0 {
                    ids[slot] = nil
                } else if ids[slot] != value {
                    ids[slot] = value
                    touchOfSlot[slot] = touches.count
                    touches.append(HandTouch(began: -1, ended: nil, end: []))
                }
            case (3, 0x35): xs[slot] = value
            case (3, 0x36): ys[slot] = value
            case (0, 0):
                frames += 1
                var down: [[Int32?]] = []
                for (s, i) in touchOfSlot {
                    if ids[s] == nil {
                        touches[i].ended = time
                        touchOfSlot[s] = nil
                        continue
                    }
                    if touches[i].began < 0 { touches[i].began = time }
                    touches[i].end = [xs[s], ys[s]]
                    touches[i].samples += 1
                    down.append([xs[s], ys[s]])
                }
                // A tracking id replaced within one frame ended the touch before it.
                for i in touches.indices where touches[i].ended == nil && !touchOfSlot.values.contains(i) {
                    touches[i].ended = time
                }
                contacts.append((time, down))
            default: break
            }
        }
    }

    /// Protocol A: each SYN_MT_REPORT after some ABS_MT_* values is one contact.
    init(contactsIn text: String) {
        var current: [Int32?] = [nil, nil], hasData = false
        var frame: [[Int32?]] = []
        for (time, type, code, value) in Self.events(text) {
            switch (type, code) {
            case (3, 0x35): current[0] = value; hasData = true
            case (3, 0x36): current[1] = value; hasData = true
            case (3, 0x30...0x3e): hasData = true
            case (0, 2):
                if hasData { frame.append(current) }
                current = [nil, nil]; hasData = false
            case (0, 0):
                frames += 1
                contacts.append((time, frame))
                frame = []
            default: break
            }
        }
    }

    /// Single touch: a button and two axes.
    init(buttonIn text: String, button: Int, x: Int, y: Int) {
        var down = false
        var pos: [Int32?] = [nil, nil]
        var open: Int?
        for (time, type, code, value) in Self.events(text) {
            switch (type, code) {
            case (1, button): down = value != 0
            case (3, x): pos[0] = value
            case (3, y): pos[1] = value
            case (0, 0):
                frames += 1
                if down {
                    if open == nil { open = touches.count; touches.append(HandTouch(began: time, ended: nil, end: pos)) }
                    touches[open!].end = pos
                    touches[open!].samples += 1
                    contacts.append((time, [pos]))
                } else {
                    if let o = open { touches[o].ended = time; open = nil }
                    contacts.append((time, []))
                }
            default: break
            }
        }
    }
}

func point(_ p: DevicePoint?) -> [Int32?] { p.map { [$0.x, $0.y] } ?? [nil, nil] }

@Suite struct ReplayAllRecordingsTests {
    @Test func theManifestListsEveryRecordingInTheFixtures() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasSuffix(".evemu") || $0.hasSuffix(".events") }
        #expect(!files.isEmpty)
        #expect(Set(files) == Set(ManifestRow.all.map(\.recording)))
    }

    @Test(arguments: ManifestRow.all)
    func replayMatchesAHandReadingOfTheEvents(_ row: ManifestRow) throws {
        let text = try fixture(row.recording)
        let desc = row.description == row.recording ? nil : try fixture(row.description)
        let quirks = try recordingQuirks[row.description].map { [try InputQuirk.parse($0)] } ?? []
        let summary = try ReplaySummary.replay(recording: text, description: desc, quirks: quirks)
        #expect(summary.mode.protocolName == row.protocolName)

        let hand: HandReading
        switch summary.mode {
        case .multitouchB: hand = HandReading(slotsIn: text)
        case .multitouchA: hand = HandReading(contactsIn: text)
        case .single(let button, let x, let y): hand = HandReading(buttonIn: text, button: Int(button), x: Int(x), y: Int(y))
        }
        #expect(summary.frames == hand.frames)
        #expect(summary.maxContacts == hand.maxContacts)
        #expect(summary.sessions == hand.sessions)
        #expect(summary.maxContacts > 0)

        switch summary.mode {
        case .multitouchB, .single:
            // Touch by touch, in the order they began.
            #expect(summary.touches.count == hand.touches.count)
            for (t, h) in zip(summary.touches, hand.touches) {
                #expect(t.began.microseconds == h.began)
                #expect(t.ended?.microseconds == h.ended)
                #expect(point(t.end) == h.end)
                #expect(t.samples == h.samples)
            }
        case .multitouchA:
            // Contacts have no identity: every increase in the count is a new touch, and
            // each touch ends where one of the contacts of the frame before its end was;
            // at the end of a session, the touches ending are the last frame's contacts.
            var began = 0, before = 0
            for c in hand.contacts { began += max(0, c.positions.count - before); before = c.positions.count }
            #expect(summary.touches.count == began)
            for (i, c) in hand.contacts.enumerated() where i > 0 {
                let ending = summary.touches.filter { $0.ended?.microseconds == c.time }.map { point($0.end) }
                let previous = hand.contacts[i - 1].positions
                #expect(ending.allSatisfy { previous.contains($0) })
                if c.positions.isEmpty && !previous.isEmpty {
                    #expect(ending.count == previous.count)
                    #expect(Set(ending.map { "\($0)" }) == Set(previous.map { "\($0)" }))
                }
            }
        }
    }

    @Test func theJSONHasTheFieldsTheIssueNames() throws {
        let s = try ReplaySummary.replay(recording: try fixture("ntrig-dell-xt2-protocol-a-one-finger-tap.events"),
                                         description: try fixture("ntrig-dell-xt2-protocol-a-tests.desc"))
        let object = try JSONSerialization.jsonObject(with: Data(s.json.utf8)) as! [String: Any]
        #expect(object["protocol"] as? String == "A")
        #expect(object["frames"] as? Int == s.frames)
        #expect(object["sessions"] as? Int == 1)
        let touches = object["touches"] as! [[String: Any]]
        #expect(touches.count == 1)
        #expect(Set(touches[0].keys) == ["id", "slot", "began_us", "ended_us", "start", "end", "samples"])
        #expect(touches[0]["slot"] is NSNull)
        #expect((touches[0]["end"] as? [Int])?.count == 2)
    }

    @Test func withoutItsQuirkTheEGalaxPanelHasTouchesButNoPositions() throws {
        let s = try ReplaySummary.replay(recording: try fixture("egalax-0eef-0001-singletouch-resistive-press-and-drag.events"),
                                         description: try fixture("egalax-0eef-0001-singletouch-resistive.desc"))
        #expect(!s.touches.isEmpty)
        #expect(s.touches.allSatisfy { $0.start == nil && $0.end == nil })
    }

    @Test func anEventsFileAloneNeedsItsDescription() throws {
        #expect(throws: ReplaySummary.Failure.self) {
            try ReplaySummary.replay(recording: try fixture("wacom-isdv4-e6-finger-one-finger-tap.events"))
        }
    }
}
