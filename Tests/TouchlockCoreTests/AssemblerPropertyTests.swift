import Testing
@testable import TouchlockCore

/// SplitMix64: a small seeded generator, so that a failing stream can be replayed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    mutating func int(_ r: ClosedRange<Int32>) -> Int32 { Int32.random(in: r, using: &self) }
}

/// Checks what every stream must keep: a touch begins once and ends at most once, never
/// comes back after its end, keeps its slot, and no two touches down share a slot.
struct TouchLedger {
    var began: Set<Int> = []
    var ended: Set<Int> = []
    var slotOf: [Int: Int?] = [:]
    var problems: [String] = []

    mutating func record(_ frame: TouchFrame?) {
        guard let frame else { return }
        var slotsDown: [Int: Int] = [:]
        var endedHere: Set<Int> = []
        for t in frame.touches {
            if ended.contains(t.id) { problems.append("touch \(t.id) appears after its end") }
            if let s = slotOf[t.id], s != t.slot { problems.append("touch \(t.id) changed slot") }
            slotOf[t.id] = t.slot
            switch t.phase {
            case .began:
                if !began.insert(t.id).inserted { problems.append("touch \(t.id) began twice") }
            case .moved, .stationary:
                if !began.contains(t.id) { problems.append("touch \(t.id) moved before it began") }
            case .ended:
                if !began.contains(t.id) { problems.append("touch \(t.id) ended before it began") }
                endedHere.insert(t.id)
            }
        }
        ended.formUnion(endedHere)
        for t in frame.touches where t.phase != .ended && !endedHere.contains(t.id) {
            if let slot = t.slot, let other = slotsDown.updateValue(t.id, forKey: slot) {
                problems.append("touches \(other) and \(t.id) both down on slot \(slot)")
            }
        }
    }

    var unended: Set<Int> { began.subtracting(ended) }
}

/// A protocol B device: what its slots hold, and the events a driver sends for changes.
struct SimulatedPanel {
    var slots: [DeviceSnapshot.Slot]
    var current: Int32 = 0
    var nextTrackingID: Int32 = 1
    var script = EventScript()

    init(slots: Int) { self.slots = Array(repeating: DeviceSnapshot.Slot(trackingID: -1), count: slots) }

    var snapshot: DeviceSnapshot { DeviceSnapshot(slots: slots, currentSlot: Int(current)) }
    var downSlots: [Int] { slots.indices.filter { slots[$0].trackingID >= 0 } }

    /// Changes the panel at random; with `send` false the kernel loses the events.
    mutating func step(_ r: inout SeededRandom, send: Bool) {
        let s = Int(r.int(0...Int32(slots.count - 1)))
        func emit(_ code: UInt16, _ v: Int32) {
            guard send else { return }
            if code != EventCode.ABS_MT_SLOT && current != Int32(s) {
                script.abs(EventCode.ABS_MT_SLOT, Int32(s)); current = Int32(s)
            }
            script.abs(code, v)
        }
        if slots[s].trackingID < 0 {
            guard r.chance(0.5) else { return }
            slots[s].trackingID = nextTrackingID; nextTrackingID += 1
            emit(EventCode.ABS_MT_TRACKING_ID, slots[s].trackingID)
            // Sometimes no X or Y: the slot's last value stands.
            if r.chance(0.8) || slots[s].x == nil { slots[s].x = r.int(0...4095); emit(EventCode.ABS_MT_POSITION_X, slots[s].x!) }
            if r.chance(0.8) || slots[s].y == nil { slots[s].y = r.int(0...4095); emit(EventCode.ABS_MT_POSITION_Y, slots[s].y!) }
        } else if r.chance(0.25) {
            slots[s].trackingID = -1
            emit(EventCode.ABS_MT_TRACKING_ID, -1)
        } else if r.chance(0.1) {
            slots[s].trackingID = nextTrackingID; nextTrackingID += 1   // a new id on a busy slot
            emit(EventCode.ABS_MT_TRACKING_ID, slots[s].trackingID)
        } else {
            slots[s].x = r.int(0...4095); emit(EventCode.ABS_MT_POSITION_X, slots[s].x!)
        }
    }
}

@Suite struct AssemblerPropertyTests {
    static let seeds: [UInt64] = Array(1...40)

    @Test(arguments: seeds)
    func protocolBTouchesFollowTheSlotsAndSurviveDroppedEvents(seed: UInt64) {
        var r = SeededRandom(seed: seed)
        let slotCount = [2, 5, 10, 60][Int(seed % 4)]
        var panel = SimulatedPanel(slots: slotCount)
        var a = TouchFrameAssembler(slotCount: slotCount)
        var ledger = TouchLedger()
        for _ in 0..<400 {
            if r.chance(0.05) {
                // The kernel's buffer overflows: a cut frame, lost changes, then the sync.
                panel.step(&r, send: true)
                panel.script.syn(EventCode.SYN_DROPPED)
                for _ in 0..<Int(r.int(0...4)) { panel.step(&r, send: false) }
                panel.step(&r, send: true)             // the tail of a cut frame
                if r.chance(0.5) { panel.script.syn() }
                for e in panel.script.events { ledger.record(a.feed(e)) }
                panel.script.events.removeAll()
                ledger.record(a.resync(to: panel.snapshot, at: Instant(microseconds: panel.script.time)))
            } else {
                for _ in 0..<Int(r.int(1...3)) { panel.step(&r, send: true) }
                panel.script.syn()
                for e in panel.script.events { ledger.record(a.feed(e)) }
                panel.script.events.removeAll()
            }
            // After every report and every sync, the touches down are the panel's contacts.
            let down = a.touchesDown
            #expect(down.compactMap(\.slot) == panel.downSlots, "seed \(seed)")
            #expect(Set(down.map(\.id)) == ledger.unended, "seed \(seed)")
        }
        ledger.record(a.releaseAll(at: Instant(microseconds: panel.script.time)))
        #expect(ledger.problems.isEmpty, "seed \(seed): \(ledger.problems.prefix(3))")
        #expect(ledger.unended.isEmpty, "seed \(seed)")
        #expect(!ledger.began.isEmpty)
    }

    @Test(arguments: seeds)
    func protocolAContactsBeginAndEndOnceWhateverTheirOrder(seed: UInt64) {
        var r = SeededRandom(seed: seed)
        var a = TouchFrameAssembler(mode: .multitouchA)
        var ledger = TouchLedger()
        var s = EventScript()
        var fingers: [(Int32, Int32)] = []
        for _ in 0..<300 {
            if fingers.count < 10 && r.chance(0.2) { fingers.append((r.int(0...9600), r.int(0...7200))) }
            if !fingers.isEmpty && r.chance(0.15) { fingers.remove(at: Int(r.int(0...Int32(fingers.count - 1)))) }
            fingers = fingers.map { ($0.0 + r.int(-40...40), $0.1 + r.int(-40...40)) }
            let dropped = r.chance(0.03)
            if dropped { s.syn(EventCode.SYN_DROPPED) }
            for f in fingers.shuffled(using: &r) { s.contact(x: f.0, y: f.1) }
            if fingers.isEmpty && r.chance(0.5) { s.syn(EventCode.SYN_MT_REPORT) }
            s.syn()
            for e in s.events { ledger.record(a.feed(e)) }
            s.events.removeAll()
            if !dropped { #expect(a.touchesDown.count == fingers.count, "seed \(seed)") }
        }
        ledger.record(a.releaseAll(at: Instant(microseconds: s.time)))
        #expect(ledger.problems.isEmpty, "seed \(seed): \(ledger.problems.prefix(3))")
        #expect(ledger.unended.isEmpty, "seed \(seed)")
    }

    @Test(arguments: seeds)
    func singleTouchPressesBeginAndEndOnceAndASyncLiftsAFingerThatIsUp(seed: UInt64) {
        var r = SeededRandom(seed: seed)
        let mode = TouchMode.single(button: EventCode.BTN_TOUCH, x: EventCode.ABS_X, y: EventCode.ABS_Y)
        var a = TouchFrameAssembler(mode: mode)
        var ledger = TouchLedger()
        var s = EventScript()
        var down = false
        for _ in 0..<300 {
            if r.chance(0.05) {
                s.syn(EventCode.SYN_DROPPED)
                if r.chance(0.5) { down.toggle() }       // lost with the dropped events
                for e in s.events { ledger.record(a.feed(e)) }
                s.events.removeAll()
                ledger.record(a.resync(to: DeviceSnapshot(keys: [EventCode.BTN_TOUCH: down ? 1 : 0]),
                                       at: Instant(microseconds: s.time)))
            } else {
                if r.chance(0.2) { down.toggle(); s.key(EventCode.BTN_TOUCH, down ? 1 : 0) }
                if r.chance(0.7) { s.abs(EventCode.ABS_X, r.int(0...4095)) }
                s.syn()
                for e in s.events { ledger.record(a.feed(e)) }
                s.events.removeAll()
            }
            #expect(a.touchesDown.count == (down ? 1 : 0), "seed \(seed)")
        }
        ledger.record(a.releaseAll(at: Instant(microseconds: s.time)))
        #expect(ledger.problems.isEmpty, "seed \(seed): \(ledger.problems.prefix(3))")
        #expect(ledger.unended.isEmpty, "seed \(seed)")
    }
}

/// Streams as real panels and broken drivers send them: button values of 2 (the kernel's
/// autorepeat), several presses in one frame, the other protocols' markers (SYN_MT_REPORT,
/// ABS_MT_* and single-touch axes) mixed in. Whatever the noise, every touch that began
/// ends exactly once, and after a full lift-off nothing is down and nothing is owed an end.
@Suite struct AssemblerNoisyStreamTests {
    static let seeds: [UInt64] = Array(1...40)

    /// Events a device of another protocol would send; none of them moves a contact here.
    /// `button`: the single-touch device's own button, left out.
    static func foreignMarker(_ s: inout EventScript, _ r: inout SeededRandom, protocol p: String, button: UInt16? = nil) {
        let key = button == EventCode.BTN_TOUCH ? EventCode.BTN_LEFT : EventCode.BTN_TOUCH
        switch r.int(0...5) {
        case 0: if p != "A" { s.syn(EventCode.SYN_MT_REPORT) } else { s.key(EventCode.BTN_LEFT, r.int(0...2)) }
        case 1: s.key(key, r.int(0...2))
        case 2: s.key(EventCode.BTN_TOOL_PEN, r.int(0...2))
        case 3: if p != "single" { s.abs(EventCode.ABS_X, r.int(0...4095)) } else { s.abs(EventCode.ABS_MT_POSITION_X, r.int(0...4095)) }
        case 4: if p == "single" { s.abs(EventCode.ABS_MT_TRACKING_ID, r.int(-1...9)) } else { s.abs(EventCode.ABS_Y, r.int(0...4095)) }
        default: if p != "B" { s.abs(EventCode.ABS_MT_SLOT, r.int(0...3)) } else { s.key(key, 2) }
        }
    }

    @Test(arguments: seeds)
    func singleTouchEndsEveryTouchWhateverTheButtonValuesAndMarkers(seed: UInt64) {
        var r = SeededRandom(seed: seed)
        let button = seed % 2 == 0 ? EventCode.BTN_TOUCH : EventCode.BTN_LEFT
        var a = TouchFrameAssembler(mode: .single(button: button, x: EventCode.ABS_X, y: EventCode.ABS_Y))
        var ledger = TouchLedger()
        var s = EventScript()
        var down = false
        for _ in 0..<300 {
            for _ in 0..<Int(r.int(0...8)) {
                switch r.int(0...6) {
                case 0, 1: down.toggle(); s.key(button, down ? 1 : 0)   // several presses may share a frame
                case 2: s.key(button, 2)                                 // a repeat changes nothing, down or up
                case 3: s.key(button, down ? 1 : 0)                      // the state again
                case 4: s.abs(r.chance(0.5) ? EventCode.ABS_X : EventCode.ABS_Y, r.int(0...4095))
                default: Self.foreignMarker(&s, &r, protocol: "single", button: button)
                }
            }
            s.syn()
            for e in s.events { ledger.record(a.feed(e)) }
            s.events.removeAll()
            #expect(a.touchesDown.count == (down ? 1 : 0), "seed \(seed)")
            if !down { #expect(ledger.unended.isEmpty, "seed \(seed): touches \(ledger.unended.sorted()) never ended after a lift-off") }
        }
        ledger.record(a.releaseAll(at: Instant(microseconds: s.time)))
        #expect(ledger.problems.isEmpty, "seed \(seed): \(ledger.problems.prefix(3))")
        #expect(ledger.unended.isEmpty, "seed \(seed)")
        #expect(!ledger.began.isEmpty)
    }

    @Test(arguments: seeds)
    func protocolBEndsEveryTouchWhateverTheMarkersMixedIn(seed: UInt64) {
        var r = SeededRandom(seed: seed)
        let slotCount = [2, 5, 10][Int(seed % 3)]
        var panel = SimulatedPanel(slots: slotCount)
        var a = TouchFrameAssembler(slotCount: slotCount)
        var ledger = TouchLedger()
        for _ in 0..<300 {
            if r.chance(0.1) {
                // A full lift-off: every slot emptied in one frame.
                for i in panel.downSlots {
                    panel.script.abs(EventCode.ABS_MT_SLOT, Int32(i)); panel.current = Int32(i)
                    panel.script.abs(EventCode.ABS_MT_TRACKING_ID, -1)
                    panel.slots[i].trackingID = -1
                    if r.chance(0.3) { Self.foreignMarker(&panel.script, &r, protocol: "B") }
                }
                panel.script.key(EventCode.BTN_TOUCH, r.chance(0.8) ? 0 : 2)
            } else {
                for _ in 0..<Int(r.int(1...4)) {
                    if r.chance(0.4) { Self.foreignMarker(&panel.script, &r, protocol: "B") } else { panel.step(&r, send: true) }
                }
            }
            panel.script.syn()
            for e in panel.script.events { ledger.record(a.feed(e)) }
            panel.script.events.removeAll()
            let down = a.touchesDown
            #expect(down.compactMap(\.slot) == panel.downSlots, "seed \(seed)")
            #expect(Set(down.map(\.id)) == ledger.unended, "seed \(seed)")
        }
        ledger.record(a.releaseAll(at: Instant(microseconds: panel.script.time)))
        #expect(ledger.problems.isEmpty, "seed \(seed): \(ledger.problems.prefix(3))")
        #expect(ledger.unended.isEmpty, "seed \(seed)")
    }

    @Test(arguments: seeds)
    func protocolAEndsEveryTouchWhateverTheMarkersMixedIn(seed: UInt64) {
        var r = SeededRandom(seed: seed)
        var a = TouchFrameAssembler(mode: .multitouchA)
        var ledger = TouchLedger()
        var s = EventScript()
        var fingers: [(Int32, Int32)] = []
        for _ in 0..<300 {
            if r.chance(0.1) { fingers.removeAll() }   // a full lift-off
            if fingers.count < 10 && r.chance(0.3) { fingers.append((r.int(0...9600), r.int(0...7200))) }
            if !fingers.isEmpty && r.chance(0.15) { fingers.remove(at: Int(r.int(0...Int32(fingers.count - 1)))) }
            fingers = fingers.map { ($0.0 + r.int(-40...40), $0.1 + r.int(-40...40)) }
            for f in fingers.shuffled(using: &r) {
                if r.chance(0.3) { Self.foreignMarker(&s, &r, protocol: "A") }
                s.contact(x: f.0, y: f.1)
            }
            if r.chance(0.3) { Self.foreignMarker(&s, &r, protocol: "A") }
            if fingers.isEmpty && r.chance(0.5) { s.syn(EventCode.SYN_MT_REPORT) }
            s.syn()
            for e in s.events { ledger.record(a.feed(e)) }
            s.events.removeAll()
            #expect(a.touchesDown.count == fingers.count, "seed \(seed)")
            if fingers.isEmpty { #expect(ledger.unended.isEmpty, "seed \(seed): touches \(ledger.unended.sorted()) never ended after a lift-off") }
        }
        ledger.record(a.releaseAll(at: Instant(microseconds: s.time)))
        #expect(ledger.problems.isEmpty, "seed \(seed): \(ledger.problems.prefix(3))")
        #expect(ledger.unended.isEmpty, "seed \(seed)")
    }

    /// The shortest stream of the stuck touch: a touch already reported, then a release,
    /// a press and a release within one frame. Both touches must end.
    @Test func twoReleasesInOneFrameEndBothTouches() {
        for button in [EventCode.BTN_TOUCH, EventCode.BTN_LEFT] {
            var s = EventScript()
            s.abs(EventCode.ABS_X, 10); s.abs(EventCode.ABS_Y, 20); s.key(button, 1); s.syn()
            s.key(button, 0); s.key(button, 1); s.abs(EventCode.ABS_X, 30); s.key(button, 0); s.syn()
            let f = frames(s.events, mode: .single(button: button, x: EventCode.ABS_X, y: EventCode.ABS_Y))
            let phases = f.map { $0.touches.map { "\($0.id) \($0.phase)" } }
            #expect(phases == [["1 began"], ["1 ended", "2 began", "2 ended"]])
        }
    }

    /// A repeat (value 2) of a button that is up begins nothing; one of a button held down
    /// changes nothing.
    @Test func aButtonRepeatChangesNothing() {
        var s = EventScript()
        s.abs(EventCode.ABS_X, 10); s.abs(EventCode.ABS_Y, 20); s.key(EventCode.BTN_TOUCH, 2); s.syn()
        s.key(EventCode.BTN_TOUCH, 1); s.syn()
        s.key(EventCode.BTN_TOUCH, 2); s.syn()
        s.key(EventCode.BTN_TOUCH, 0); s.syn()
        s.key(EventCode.BTN_TOUCH, 2); s.syn()
        let f = frames(s.events, mode: .single(button: EventCode.BTN_TOUCH, x: EventCode.ABS_X, y: EventCode.ABS_Y))
        #expect(f.map { $0.touches.map { "\($0.id) \($0.phase)" } } == [["1 began"], ["1 ended"]])
    }
}
