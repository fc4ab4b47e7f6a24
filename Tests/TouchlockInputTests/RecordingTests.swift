import Foundation
import Testing
import TouchlockCore
@testable import TouchlockInput

func fixture(_ name: String) throws -> String {
    let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    return try String(contentsOf: dir.appendingPathComponent("Fixtures/\(name)"), encoding: .utf8)
}

func repositoryFile(_ path: String) throws -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
}

/// What a person reading the E: lines by hand finds: per tracking id its last position,
/// counted with nothing but the raw lines (no assembler).
struct HandCount {
    var reports = 0
    var contacts = 0
    var lastPosition: [Int32: (Int32, Int32)] = [:]

    init(_ text: String) {
        var slot: Int32 = 0
        var ids: [Int32: Int32] = [:]       // slot -> tracking id
        var pos: [Int32: (Int32, Int32)] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("E:") {
            let f = line.prefix(while: { $0 != "#" }).split(whereSeparator: { $0 == " " || $0 == "\t" })
            let type = Int(f[2], radix: 16)!, code = Int(f[3], radix: 16)!, value = Int32(f[4])!
            if type == 0 && code == 0 { reports += 1 }
            guard type == 3 else { continue }
            switch code {
            case 0x2f: slot = value
            case 0x39:
                if value >= 0 { contacts += 1; ids[slot] = value } else { ids[slot] = nil }
            case 0x35: pos[slot, default: (0, 0)].0 = value; if let id = ids[slot] { lastPosition[id] = pos[slot] }
            case 0x36: pos[slot, default: (0, 0)].1 = value; if let id = ids[slot] { lastPosition[id] = pos[slot] }
            default: break
            }
        }
    }
}

func assemble(_ rec: EvemuRecording) -> [TouchFrame] {
    var a = TouchFrameAssembler(slotCount: rec.slotCount)
    return rec.events.compactMap { a.feed($0) }
}

@Suite struct RecordingTests {
    @Test func theEDTPanelDescribesItselfAsADirectFiveSlotTouchscreen() throws {
        let rec = try EvemuRecording(parsing: try fixture("edt-ep0430m09-one-finger-drag-up-down.evemu"))
        #expect(rec.name == "EP0430M09")
        #expect(rec.isDirect)
        #expect(rec.slotCount == 5)
        #expect(rec.xRange == AxisRange(minimum: 0, maximum: 1279))
        #expect(rec.yRange == AxisRange(minimum: 0, maximum: 767))
        #expect(rec.codes[EventCode.EV_KEY]?.contains(EventCode.BTN_TOUCH) == true)
    }

    @Test func aOneFingerDragOnTheEDTPanelIsOneTouchEndingWhereTheFingerLifted() throws {
        let text = try fixture("edt-ep0430m09-one-finger-drag-up-down.evemu")
        let rec = try EvemuRecording(parsing: text)
        let hand = HandCount(text)
        let frames = assemble(rec)
        let touches = frames.flatMap(\.touches)
        #expect(hand.contacts == 1)
        #expect(Set(touches.map(\.id)).count == 1)
        #expect(touches.filter { $0.phase == .began }.count == 1)
        #expect(touches.filter { $0.phase == .ended }.count == 1)
        let end = touches.last!
        #expect(end.phase == .ended)
        let (x, y) = hand.lastPosition.values.first!
        #expect(end.position == DevicePoint(x: x, y: y))
        #expect(frames.count <= hand.reports)
    }

    @Test func fastTapsOnTheAtmelPanelKeepTheSlotsPositionForContactsThatSendNone() throws {
        let text = try fixture("atmel-maxtouch-i2c-one-finger-fast-taps.evemu")
        let rec = try EvemuRecording(parsing: text)
        let hand = HandCount(text)
        let touches = assemble(rec).flatMap(\.touches)
        let began = touches.filter { $0.phase == .began }
        #expect(began.count == hand.contacts)
        #expect(touches.filter { $0.phase == .ended }.count == hand.contacts)
        // No contact appears at (0, 0): a position missing from a new contact is the slot's last.
        #expect(began.allSatisfy { $0.position != DevicePoint(x: 0, y: 0) })
    }

    @Test func theBundledDemoDrawsAWrongPatternThenTheDemoPatternOnTheDefaultLayout() throws {
        let rec = try EvemuRecording(parsing: try repositoryFile("data/demo-pattern.evemu"))
        let screen = Size(width: 1280, height: 800)
        let mapping = ScreenMapping(x: rec.xRange!, y: rec.yRange!, screen: screen)
        var lock = LockScreen(pads: .pattern(PatternLock(grid: .layout(on: screen))), session: Session(),
                              builder: SceneBuilder(theme: Theme(), size: screen))
        var attempts: [[Int]] = []
        for frame in assemble(rec) {
            let touches = frame.touches.map { ScreenTouch(id: $0.id, phase: $0.phase, point: mapping.map($0.position!)) }
            for case .verify(.pattern(let p)) in lock.touches(touches, at: frame.time) {
                attempts.append(p.nodes)
                // The first attempt is wrong; the hold runs out before the second.
                _ = lock.verified(attempts.count == 2, at: frame.time)
                _ = lock.timer(at: frame.time + .milliseconds(500))
            }
        }
        #expect(attempts == [[0, 3, 6, 7], [0, 1, 2, 4, 6, 7, 8]])
        #expect(lock.session.state.name == "unlocked")
    }

    @Test func aMalformedRecordingNamesTheLine() {
        #expect(throws: EvemuRecording.ParseError(line: 3, message: "malformed event 'E: 0.000001 0003 zz 12'")) {
            try EvemuRecording(parsing: "# EVEMU 1.3\nN: x\nE: 0.000001 0003 zz 12\n")
        }
        #expect(throws: EvemuRecording.ParseError(line: 4, message: "unknown line 'Q:'")) {
            try EvemuRecording(parsing: "# EVEMU 1.3\r\nN: x\r\nE: 0.000001 0003 0035 12\r\nQ: 1\r\n")
        }
    }

    /// A recording saved with CR LF line ends, tabs between fields and comments after them
    /// reads as the same device and events as evemu-record's own output.
    @Test func lineEndsTabsAndCommentsDoNotChangeWhatIsRead() throws {
        let text = try fixture("edt-ep0430m09-one-finger-drag-up-down.evemu")
        let plain = try EvemuRecording(parsing: text)
        var reworked = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("E:") {
                reworked += line.replacingOccurrences(of: " ", with: "\t ") + "\t# comment\r\n"
            } else {
                reworked += line + "\r\n"
            }
        }
        let other = try EvemuRecording(parsing: reworked)
        #expect(other.name == plain.name)
        #expect(other.id == plain.id)
        #expect(other.properties == plain.properties)
        #expect(other.codes == plain.codes)
        #expect(other.axes == plain.axes)
        #expect(other.events == plain.events)
        #expect(plain.events.count > 500)
    }
}
