// libFuzzer target: the frame assembler on any event stream, with its contract as
// assertions. Built by scripts/fuzz with the sources of TouchlockCore.
//
// Input: one byte for the mode, then events of 4 bytes (kind, code, value as a signed
// little-endian 16-bit number, shifted into the high half when the kind's bit 3 is set:
// devices send 32-bit values). Mode byte: bits 0-1 protocol (B, A, single, single);
// for B, bits 2-7 + 1 slots; for single, bit 2 BTN_LEFT instead of BTN_TOUCH and bit 3
// the axes ABS_Z/ABS_RX (a quirk's) instead of ABS_X/ABS_Y. Event kinds: 0 SYN_REPORT,
// 1 another EV_SYN code, 2-3 EV_ABS, 4-5 EV_KEY (code + 0x100), 6 another event type,
// 7 the device goes away (releaseAll).
//
// After a SYN_DROPPED the harness resyncs the assembler from a model of the device, as
// the daemon does from libevdev's state. The contract checked after every frame:
// - a touch begins once, ends once, never shows after its end, keeps its slot, and no
//   two touches down share a slot;
// - the touches down are exactly those that began and did not end (so every began
//   touch is owed an end the assembler still knows of);
// - the touches down are the device's: its slots with a tracking id (B), its contacts
//   of the last frame (A: none after a frame with no contact values), its button (single:
//   1 presses, 0 releases, anything else changes nothing);
// - when the device goes away nothing is down and every touch that began has ended.
import TouchlockCore

func contract(_ ok: Bool, _ message: @autoclosure () -> String) {
    if !ok { fatalError("contract: \(message())") }
}

struct Ledger {
    var began: Set<Int> = []
    var ended: Set<Int> = []
    var slotOf: [Int: Int?] = [:]

    mutating func record(_ frame: TouchFrame?) {
        guard let frame else { return }
        var slotsDown: [Int: Int] = [:]
        var endedHere: Set<Int> = []
        for t in frame.touches {
            contract(!ended.contains(t.id), "touch \(t.id) shows after its end")
            if let s = slotOf[t.id] { contract(s == t.slot, "touch \(t.id) changed slot") }
            slotOf[t.id] = t.slot
            switch t.phase {
            case .began: contract(began.insert(t.id).inserted, "touch \(t.id) began twice")
            case .moved, .stationary: contract(began.contains(t.id), "touch \(t.id) moved before it began")
            case .ended:
                contract(began.contains(t.id), "touch \(t.id) ended before it began")
                contract(endedHere.insert(t.id).inserted, "touch \(t.id) ended twice in a frame")
            }
        }
        ended.formUnion(endedHere)
        for t in frame.touches where t.phase != .ended && !endedHere.contains(t.id) {
            if let slot = t.slot { contract(slotsDown.updateValue(t.id, forKey: slot) == nil, "two touches on slot \(slot)") }
        }
    }

    var unended: Set<Int> { began.subtracting(ended) }
}

/// What the device holds, whatever the assembler made of it.
struct DeviceModel {
    var mode: TouchMode
    var slots: [Int32]
    var current = 0
    var button: Int32 = 0
    var keys: [UInt16: Int32] = [:]
    var axes: [UInt16: Int32] = [:]
    /// Protocol A: contact values since the last SYN_REPORT, and contacts then.
    var contactValues = false
    var contacts = false

    init(mode: TouchMode) {
        self.mode = mode
        if case .multitouchB(let n) = mode { slots = Array(repeating: -1, count: max(1, n)) } else { slots = [] }
    }

    mutating func apply(_ e: InputEvent) {
        switch e.type {
        case EventCode.EV_ABS:
            axes[e.code] = e.value
            if e.code == EventCode.ABS_MT_SLOT, e.value >= 0, Int(e.value) < slots.count { current = Int(e.value) }
            if e.code == EventCode.ABS_MT_TRACKING_ID, !slots.isEmpty { slots[current] = e.value < 0 ? -1 : e.value }
            if (0x30...0x3e).contains(e.code) { contactValues = true }
        case EventCode.EV_KEY:
            if e.value == 0 || e.value == 1 { keys[e.code] = e.value }
        case EventCode.EV_SYN where e.code == EventCode.SYN_REPORT:
            contacts = contactValues
            contactValues = false
        default:
            break
        }
    }

    var snapshot: DeviceSnapshot {
        DeviceSnapshot(slots: slots.map { DeviceSnapshot.Slot(trackingID: $0) }, currentSlot: current, keys: keys, axes: axes)
    }

    func check(_ a: TouchFrameAssembler) {
        let down = a.touchesDown
        switch mode {
        case .multitouchB:
            let want = slots.indices.filter { slots[$0] >= 0 }
            contract(down.compactMap(\.slot) == want, "slots down \(down.compactMap(\.slot)), device \(want)")
        case .multitouchA:
            if !contacts { contract(down.isEmpty, "\(down.count) touches down after a frame with no contact") }
        case .single(let button, _, _):
            let want = keys[button] == 1 ? 1 : 0
            contract(down.count == want, "\(down.count) touches down, button \(keys[button] ?? 0)")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAssembler(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 1 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let m = bytes[0]
    let mode: TouchMode
    switch m & 3 {
    case 0: mode = .multitouchB(slots: Int(m >> 2) + 1)
    case 1: mode = .multitouchA
    default:
        let button = m & 4 != 0 ? EventCode.BTN_LEFT : EventCode.BTN_TOUCH
        mode = m & 8 != 0 ? .single(button: button, x: EventCode.ABS_Z, y: EventCode.ABS_RX)
                          : .single(button: button, x: EventCode.ABS_X, y: EventCode.ABS_Y)
    }
    var a = TouchFrameAssembler(mode: mode)
    var device = DeviceModel(mode: mode)
    var ledger = Ledger()
    var dropped = false
    var time: Int64 = 0
    var i = 1
    func settle() {
        contract(Set(a.touchesDown.map(\.id)) == ledger.unended,
                 "down \(a.touchesDown.map(\.id).sorted()), owed an end \(ledger.unended.sorted())")
    }
    while i + 4 <= size {
        let kind = bytes[i] & 7, code = bytes[i + 1], wide = bytes[i] & 8 != 0
        let short = Int32(Int16(bitPattern: UInt16(bytes[i + 2]) | UInt16(bytes[i + 3]) << 8))
        let value = wide ? short << 16 | (short & 0xff) : short
        i += 4
        time += 1000
        let at = Instant(microseconds: time)
        let e: InputEvent
        switch kind {
        case 0: e = InputEvent(type: EventCode.EV_SYN, code: EventCode.SYN_REPORT, value: 0, time: at)
        case 1: e = InputEvent(type: EventCode.EV_SYN, code: UInt16(code & 3), value: value, time: at)
        case 2, 3: e = InputEvent(type: EventCode.EV_ABS, code: UInt16(code & 0x3f), value: value, time: at)
        case 4, 5: e = InputEvent(type: EventCode.EV_KEY, code: 0x100 + UInt16(code), value: value, time: at)
        case 6: e = InputEvent(type: UInt16(code & 0x1f), code: UInt16(value & 0x3ff), value: value, time: at)
        default:
            ledger.record(a.releaseAll(at: at))
            contract(a.touchesDown.isEmpty, "touches down after the device went away")
            contract(ledger.unended.isEmpty, "touches \(ledger.unended.sorted()) never ended when the device went away")
            device = DeviceModel(mode: mode)
            a = TouchFrameAssembler(mode: mode)   // a device that comes back is a new assembler
            ledger = Ledger()
            continue
        }
        if e.type == EventCode.EV_SYN && e.code == EventCode.SYN_DROPPED { dropped = true }
        device.apply(e)
        ledger.record(a.feed(e))
        if e.type == EventCode.EV_SYN && e.code == EventCode.SYN_REPORT {
            var resynced = false
            if dropped {
                // The daemon reads libevdev's state after the cut frame.
                dropped = false
                resynced = true
                ledger.record(a.resync(to: device.snapshot, at: at))
            }
            settle()
            // Protocol A has no contact state to read back: with the button down the
            // contacts stay until the next whole frame lists them.
            if case .multitouchA = mode, resynced, device.keys[EventCode.BTN_TOUCH] == 1 { continue }
            device.check(a)
        }
    }
    ledger.record(a.releaseAll(at: Instant(microseconds: time + 1000)))
    contract(a.touchesDown.isEmpty, "touches down after the device went away")
    contract(ledger.unended.isEmpty, "touches \(ledger.unended.sorted()) never ended when the device went away")
    return 0
}
