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
