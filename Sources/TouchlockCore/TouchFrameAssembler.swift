/// Assembles a touch device's events into frames at SYN_REPORT, as libinput does, for
/// the three ways panels report contacts (`TouchMode`):
///
/// - protocol B: per-slot state persists between frames (a panel may send no X/Y for a
///   new contact at the slot's last position); tracking id -1 ends a touch, a new id on a
///   busy slot ends the old touch and begins a new one;
/// - protocol A: the contacts of each frame (separated by SYN_MT_REPORT) are matched to
///   the previous frame's by nearest distance, as the kernel's slot assignment does;
/// - single touch: a button (BTN_TOUCH or BTN_LEFT) and two absolute axes; value 1
///   presses, 0 releases, and 2 (the kernel's autorepeat) changes nothing.
///
/// A touch's phase advances only after its frame is emitted, so each touch is reported
/// `began` once and `ended` once; a touch that begins and ends within one frame is
/// reported both in that frame.
public struct TouchFrameAssembler: Sendable {
    /// One engine per protocol, each with only the state its protocol has. It is held as
    /// an existential and changed through it, in place: a value taken out of an enum case
    /// and written back would leave its arrays two owners while it runs, and every event
    /// would pay for that (retains and releases, a copy of the slots).
    private var engine: any TouchEngine
    /// After SYN_DROPPED the kernel's events up to the next SYN_REPORT are incomplete.
    private var dropping = false

    public init(mode: TouchMode) {
        switch mode {
        case .multitouchB(let n): engine = SlotEngine(slotCount: n)
        case .multitouchA: engine = ContactEngine()
        case .single(let button, let x, let y): engine = SingleEngine(button: button, xCode: x, yCode: y)
        }
    }

    /// A protocol B assembler with `slotCount` slots.
    public init(slotCount: Int) { self.init(mode: .multitouchB(slots: slotCount)) }

    /// How the device's events are read (for protocol B, with the slots kept).
    public var mode: TouchMode { engine.mode }

    /// Feeds one event; returns a frame at a SYN_REPORT that changed something.
    public mutating func feed(_ e: InputEvent) -> TouchFrame? {
        switch e.type {
        case EventCode.EV_SYN:
            switch e.code {
            case EventCode.SYN_REPORT:
                if dropping { dropping = false; return nil }
                return engine.report(at: e.time)
            case EventCode.SYN_MT_REPORT:
                if dropping { return nil }
                if !engine.mtReport() { Log.bug("SYN_MT_REPORT from a device read as \(mode.protocolName)") }
                return nil
            case EventCode.SYN_DROPPED:
                // The events up to the next SYN_REPORT belong to a frame the kernel cut
                // short. A live device is then resynced (`resync`) from libevdev's state.
                dropping = true
                return nil
            default:
                return nil
            }
        case EventCode.EV_ABS:
            if dropping { return nil }
            engine.absolute(e.code, e.value)
            return nil
        case EventCode.EV_KEY:
            if dropping { return nil }
            engine.key(e.code, e.value)
            return nil
        default:
            return nil
        }
    }

    /// Brings the touch state to the device's after SYN_DROPPED: every touch whose slot
    /// the device reports empty (or whose finger is up) ends; a slot with a new tracking
    /// id ends its old touch and begins a new one. Returns the frame of those changes.
    public mutating func resync(to snapshot: DeviceSnapshot, at time: Instant) -> TouchFrame? {
        dropping = false
        return engine.resync(snapshot, at: time)
    }

    /// Ends every contact, as when the device goes away mid gesture.
    public mutating func releaseAll(at time: Instant) -> TouchFrame? {
        dropping = false
        return engine.releaseAll(at: time)
    }

    /// The touches down after the last frame, as (id, slot).
    public var touchesDown: [(id: Int, slot: Int?)] { engine.touchesDown }
}

/// What the assembler asks of the engine of each protocol.
private protocol TouchEngine: Sendable {
    /// How the device's events are read.
    var mode: TouchMode { get }
    /// The touches down after the last frame, as (id, slot).
    var touchesDown: [(id: Int, slot: Int?)] { get }
    mutating func absolute(_ code: UInt16, _ value: Int32)
    /// A key or button (only single touch reads one: BTN_TOUCH follows the contacts).
    mutating func key(_ code: UInt16, _ value: Int32)
    /// SYN_MT_REPORT; false from an engine whose protocol has none.
    mutating func mtReport() -> Bool
    mutating func report(at time: Instant) -> TouchFrame?
    mutating func resync(_ snap: DeviceSnapshot, at time: Instant) -> TouchFrame?
    mutating func releaseAll(at time: Instant) -> TouchFrame?
}

private func point(_ x: Int32?, _ y: Int32?) -> DevicePoint? {
    guard let x, let y else { return nil }
    return DevicePoint(x: x, y: y)
}

// MARK: protocol B

private struct SlotEngine: TouchEngine {
    /// Plain values only, so that reading a slot copies no reference.
    struct Slot: Sendable {
        var trackingID: Int32 = -1
        var x: Int32?
        var y: Int32?
        var touchID: Int?          // our id for the contact now in this slot
        var began = false
        var moved = false
        /// ABS_MT_TOOL_TYPE says palm.
        var palm = false
        var position: DevicePoint? { point(x, y) }
    }
    /// A contact that ended in the current frame. A slot may end more than one when a
    /// frame, or a frame and a resync, replace its contact twice; `unseen`: it began in
    /// this same frame too.
    struct Ended: Sendable {
        var slot: Int
        var id: Int
        var position: DevicePoint?
        var unseen: Bool
        var palm: Bool
    }

    var slots: [Slot]
    var ended: [Ended] = []
    var current = 0
    var dirty = false
    var nextID = 1
    /// The frame's touches, reused from frame to frame: no allocation once the consumer
    /// has let go of the previous frame.
    var frame: [Touch] = []

    init(slotCount: Int) { slots = Array(repeating: Slot(), count: max(1, slotCount)) }

    var mode: TouchMode { .multitouchB(slots: slots.count) }
    var touchesDown: [(id: Int, slot: Int?)] { slots.enumerated().compactMap { i, s in s.touchID.map { ($0, i) } } }
    mutating func key(_ code: UInt16, _ value: Int32) {}
    mutating func mtReport() -> Bool { false }

    mutating func absolute(_ code: UInt16, _ value: Int32) {
        switch code {
        case EventCode.ABS_MT_SLOT:
            if value >= 0 && Int(value) < slots.count {
                current = Int(value)
            } else {
                Log.bug("kernel sent ABS_MT_SLOT \(value), device has \(slots.count) slots")
            }
        case EventCode.ABS_MT_TRACKING_ID:
            var s = slots[current]
            if value < 0 {
                if s.touchID != nil { endTouch(&s) }
            } else if value != s.trackingID || s.touchID == nil {
                if s.touchID != nil { endTouch(&s) }  // new id on a busy slot: end the old
                s.touchID = nextID
                nextID += 1
                s.began = true
                s.moved = false
                s.palm = false  // a new contact is a finger until the panel says otherwise
            }
            s.trackingID = value < 0 ? -1 : value
            slots[current] = s
            dirty = true
        case EventCode.ABS_MT_POSITION_X:
            if slots[current].x != value {
                slots[current].x = value
                slots[current].moved = true
                dirty = true
            }
        case EventCode.ABS_MT_POSITION_Y:
            if slots[current].y != value {
                slots[current].y = value
                slots[current].moved = true
                dirty = true
            }
        case EventCode.ABS_MT_TOOL_TYPE:
            let palm = value == EventCode.MT_TOOL_PALM
            if slots[current].palm != palm {
                slots[current].palm = palm
                dirty = true
            }
        default:
            break
        }
    }

    mutating func endTouch(_ s: inout Slot) {
        guard let id = s.touchID else { return }
        ended.append(Ended(slot: current, id: id, position: s.position, unseen: s.began, palm: s.palm))
        s.touchID = nil
        s.began = false
    }

    mutating func report(at time: Instant) -> TouchFrame? {
        guard dirty else { return nil }
        dirty = false
        frame.removeAll(keepingCapacity: true)
        // Ended contacts come first within their slot, slots in order.
        if ended.count > 1 { ended.sort { $0.slot < $1.slot } }
        var next = 0
        for i in slots.indices {
            while next < ended.count && ended[next].slot == i {
                let e = ended[next]
                if e.unseen { frame.append(Touch(id: e.id, slot: i, phase: .began, position: e.position, palm: e.palm)) }
                frame.append(Touch(id: e.id, slot: i, phase: .ended, position: e.position, palm: e.palm))
                next += 1
            }
            guard let id = slots[i].touchID else { continue }
            let phase: TouchPhase = slots[i].began ? .began : (slots[i].moved ? .moved : .stationary)
            frame.append(Touch(id: id, slot: i, phase: phase, position: slots[i].position, palm: slots[i].palm))
            slots[i].began = false
            slots[i].moved = false
        }
        ended.removeAll(keepingCapacity: true)
        return TouchFrame(time: time, touches: frame)
    }

    mutating func resync(_ snap: DeviceSnapshot, at time: Instant) -> TouchFrame? {
        for i in slots.indices {
            current = i
            let d = i < snap.slots.count ? snap.slots[i] : DeviceSnapshot.Slot(trackingID: -1)
            absolute(EventCode.ABS_MT_TRACKING_ID, d.trackingID)
            if let x = d.x { absolute(EventCode.ABS_MT_POSITION_X, x) }
            if let y = d.y { absolute(EventCode.ABS_MT_POSITION_Y, y) }
        }
        current = min(max(0, snap.currentSlot), slots.count - 1)
        return report(at: time)
    }

    mutating func releaseAll(at time: Instant) -> TouchFrame? {
        let was = current
        for i in slots.indices where slots[i].touchID != nil {
            current = i
            absolute(EventCode.ABS_MT_TRACKING_ID, -1)
        }
        current = was
        return report(at: time)
    }
}

// MARK: protocol A

private struct ContactEngine: TouchEngine {
    struct Active: Sendable {
        var id: Int
        var position: DevicePoint?
    }
    var active: [Active] = []
    /// Contacts reported in the frame being read.
    var contacts: [DevicePoint?] = []
    var x: Int32?
    var y: Int32?
    var hasData = false
    var nextID = 1

    mutating func absolute(_ code: UInt16, _ value: Int32) {
        switch code {
        case EventCode.ABS_MT_POSITION_X: x = value; hasData = true
        case EventCode.ABS_MT_POSITION_Y: y = value; hasData = true
        case 0x30...0x3e: hasData = true   // other ABS_MT_* values describe the same contact
        default: break
        }
    }

    var mode: TouchMode { .multitouchA }
    var touchesDown: [(id: Int, slot: Int?)] { active.map { ($0.id, nil) } }
    mutating func key(_ code: UInt16, _ value: Int32) {}

    @discardableResult
    mutating func mtReport() -> Bool {
        // An empty SYN_MT_REPORT (no values since the last one) means "no contact".
        if hasData { contacts.append(point(x, y)) }
        x = nil; y = nil; hasData = false
        return true
    }

    mutating func report(at time: Instant) -> TouchFrame? {
        if hasData { mtReport() }  // a driver that left out the last SYN_MT_REPORT
        let now = contacts
        contacts = []
        return apply(now, at: time)
    }

    /// Matches `now` to the active touches, nearest pairs first; the rest begin or end.
    mutating func apply(_ now: [DevicePoint?], at time: Instant) -> TouchFrame? {
        var pairs: [(d: Int64, old: Int, new: Int)] = []
        for (i, a) in active.enumerated() {
            for (j, p) in now.enumerated() { pairs.append((Self.distance(a.position, p), i, j)) }
        }
        pairs.sort { ($0.d, $0.old, $0.new) < ($1.d, $1.old, $1.new) }
        var oldTaken = Array(repeating: false, count: active.count)
        var newOwner = Array(repeating: -1, count: now.count)
        for p in pairs where !oldTaken[p.old] && newOwner[p.new] < 0 {
            oldTaken[p.old] = true
            newOwner[p.new] = p.old
        }
        var touches: [Touch] = []
        var next: [Active] = []
        var changed = false
        for (i, a) in active.enumerated() where !oldTaken[i] {
            touches.append(Touch(id: a.id, slot: nil, phase: .ended, position: a.position))
            changed = true
        }
        for (j, p) in now.enumerated() {
            if newOwner[j] >= 0 {
                let a = active[newOwner[j]]
                let moved = a.position != p
                if moved { changed = true }
                touches.append(Touch(id: a.id, slot: nil, phase: moved ? .moved : .stationary, position: p))
                next.append(Active(id: a.id, position: p))
            } else {
                touches.append(Touch(id: nextID, slot: nil, phase: .began, position: p))
                next.append(Active(id: nextID, position: p))
                nextID += 1
                changed = true
            }
        }
        active = next.sorted { $0.id < $1.id }
        guard changed else { return nil }
        touches.sort { ($0.id, $0.phase == .ended ? 1 : 0) < ($1.id, $1.phase == .ended ? 1 : 0) }
        return TouchFrame(time: time, touches: touches)
    }

    static func distance(_ a: DevicePoint?, _ b: DevicePoint?) -> Int64 {
        guard let a, let b else { return a == nil && b == nil ? 0 : Int64.max / 4 }
        let dx = Int64(a.x) - Int64(b.x), dy = Int64(a.y) - Int64(b.y)
        // Axis values span 32 bits: the squares can exceed Int64.
        return (dx.saturatingMultiplied(by: dx)).saturatingAdding(dy.saturatingMultiplied(by: dy))
    }

    mutating func resync(_ snap: DeviceSnapshot, at time: Instant) -> TouchFrame? {
        // Protocol A has no contact state to read back. With the touch button up (or no
        // button to ask), every touch ends; with it down, the next frame lists the contacts.
        contacts = []; x = nil; y = nil; hasData = false
        if snap.keys[EventCode.BTN_TOUCH] == 1 { return nil }
        return apply([], at: time)
    }

    mutating func releaseAll(at time: Instant) -> TouchFrame? {
        contacts = []; x = nil; y = nil; hasData = false
        return apply([], at: time)
    }
}

// MARK: single touch

private struct SingleEngine: TouchEngine {
    /// A touch that ended in the current frame. A frame may end more than one: a release,
    /// a press and a release again before one SYN_REPORT. `unseen`: it began in this same
    /// frame too.
    struct Ended: Sendable {
        var id: Int
        var position: DevicePoint?
        var unseen: Bool
    }

    let button: UInt16
    let xCode: UInt16
    let yCode: UInt16
    var x: Int32?
    var y: Int32?
    var touchID: Int?
    var began = false
    var moved = false
    var ended: [Ended] = []
    var dirty = false
    var nextID = 1

    init(button: UInt16, xCode: UInt16, yCode: UInt16) {
        self.button = button; self.xCode = xCode; self.yCode = yCode
    }

    var mode: TouchMode { .single(button: button, x: xCode, y: yCode) }
    var touchesDown: [(id: Int, slot: Int?)] { touchID.map { [($0, nil)] } ?? [] }
    mutating func mtReport() -> Bool { false }

    mutating func absolute(_ code: UInt16, _ value: Int32) {
        if code == xCode, x != value { x = value; moved = true; dirty = true }
        if code == yCode, y != value { y = value; moved = true; dirty = true }
    }

    /// 1 presses, 0 releases; 2 is the kernel's autorepeat of a button held down and
    /// changes nothing.
    mutating func key(_ code: UInt16, _ value: Int32) {
        guard code == button else { return }
        switch value {
        case 0: release()
        case 1: press()
        case 2: if touchID == nil { Log.bug("button \(code) repeated (value 2) while up") }
        default: Log.bug("button \(code) with value \(value)")
        }
    }

    mutating func press() {
        guard touchID == nil else { return }
        touchID = nextID
        nextID += 1
        began = true
        moved = false
        dirty = true
    }

    mutating func release() {
        guard let id = touchID else { return }
        ended.append(Ended(id: id, position: point(x, y), unseen: began))
        touchID = nil
        began = false
        dirty = true
    }

    mutating func report(at time: Instant) -> TouchFrame? {
        guard dirty else { return nil }
        dirty = false
        var touches: [Touch] = []
        // By id: the ended touches are older than the one down.
        for e in ended {
            if e.unseen { touches.append(Touch(id: e.id, slot: nil, phase: .began, position: e.position)) }
            touches.append(Touch(id: e.id, slot: nil, phase: .ended, position: e.position))
        }
        ended.removeAll(keepingCapacity: true)
        if let id = touchID {
            let phase: TouchPhase = began ? .began : (moved ? .moved : .stationary)
            touches.append(Touch(id: id, slot: nil, phase: phase, position: point(x, y)))
        }
        began = false
        moved = false
        return touches.isEmpty ? nil : TouchFrame(time: time, touches: touches)
    }

    mutating func resync(_ snap: DeviceSnapshot, at time: Instant) -> TouchFrame? {
        if let v = snap.axes[xCode] { absolute(xCode, v) }
        if let v = snap.axes[yCode] { absolute(yCode, v) }
        if snap.keys[button] ?? 0 != 0 { press() } else { release() }
        return report(at: time)
    }

    mutating func releaseAll(at time: Instant) -> TouchFrame? {
        release()
        return report(at: time)
    }
}
