/// Assembles multitouch protocol B events into frames at SYN_REPORT, as libinput does:
/// per-slot state persists between frames (a panel may send no X/Y for a new contact at
/// the slot's last position); a touch's phase advances only after its frame is emitted,
/// so each touch is reported `began` once and `ended` once.
public struct TouchFrameAssembler: Sendable {
    private struct Slot: Sendable {
        var trackingID: Int32 = -1
        var position = DevicePoint(x: 0, y: 0)
        var touchID: Int?          // our id for the contact now in this slot
        var endedTouchID: Int?     // a contact that ended in the current frame
        var endedPosition = DevicePoint(x: 0, y: 0)
        var endedUnseen = false    // the ended contact began in this same frame
        var began = false
        var moved = false
    }

    private var slots: [Slot]
    private var current = 0
    private var nextTouchID = 1
    private var dirty = false
    /// After SYN_DROPPED the kernel's events up to the next SYN_REPORT are incomplete.
    private var dropping = false

    public init(slotCount: Int) {
        slots = Array(repeating: Slot(), count: max(1, slotCount))
    }

    /// Feeds one event; returns a frame at a SYN_REPORT that changed something.
    public mutating func feed(_ e: InputEvent) -> TouchFrame? {
        switch e.type {
        case EventCode.EV_SYN:
            switch e.code {
            case EventCode.SYN_REPORT:
                if dropping { dropping = false; return nil }
                return emit(at: e.time)
            case EventCode.SYN_DROPPED:
                // The input layer resyncs through libevdev and feeds the synced deltas; events
                // up to the next SYN_REPORT belong to a frame the kernel cut short.
                dropping = true
                return nil
            default:
                return nil
            }
        case EventCode.EV_ABS:
            if dropping { return nil }
            absolute(e.code, e.value)
            return nil
        default:
            return nil
        }
    }

    private mutating func absolute(_ code: UInt16, _ value: Int32) {
        switch code {
        case EventCode.ABS_MT_SLOT:
            if value >= 0 && Int(value) < slots.count {
                current = Int(value)
            } else {
                Log.bug("kernel sent ABS_MT_SLOT \(value), device has \(slots.count) slots")
            }
        case EventCode.ABS_MT_TRACKING_ID:
            var s = slots[current]
            if value == -1 {
                if let id = s.touchID { endTouch(&s, id) }
            } else if value != s.trackingID {
                if let id = s.touchID { endTouch(&s, id) }  // new id on a busy slot: end the old
                s.touchID = nextTouchID
                nextTouchID += 1
                s.began = true
                s.moved = false
            }
            s.trackingID = value
            slots[current] = s
            dirty = true
        case EventCode.ABS_MT_POSITION_X:
            if slots[current].position.x != value {
                slots[current].position.x = value
                slots[current].moved = true
                dirty = true
            }
        case EventCode.ABS_MT_POSITION_Y:
            if slots[current].position.y != value {
                slots[current].position.y = value
                slots[current].moved = true
                dirty = true
            }
        default:
            break
        }
    }

    private mutating func endTouch(_ s: inout Slot, _ id: Int) {
        if s.endedTouchID != nil {
            Log.bug("slot \(current) ended two contacts in one frame; dropping the earlier end")
        }
        s.endedTouchID = id
        s.endedPosition = s.position
        s.endedUnseen = s.began
        s.touchID = nil
        s.began = false
    }

    private mutating func emit(at time: Instant) -> TouchFrame? {
        guard dirty else { return nil }
        dirty = false
        var touches: [Touch] = []
        for i in slots.indices {
            var s = slots[i]
            if let ended = s.endedTouchID {
                if s.endedUnseen {
                    touches.append(Touch(id: ended, slot: i, phase: .began, position: s.endedPosition))
                    s.endedUnseen = false
                }
                touches.append(Touch(id: ended, slot: i, phase: .ended, position: s.endedPosition))
                s.endedTouchID = nil
            }
            if let id = s.touchID {
                let phase: TouchPhase = s.began ? .began : (s.moved ? .moved : .stationary)
                touches.append(Touch(id: id, slot: i, phase: phase, position: s.position))
            }
            s.began = false
            s.moved = false
            slots[i] = s
        }
        return TouchFrame(time: time, touches: touches)
    }

    /// Ends every contact, as when the device goes away mid gesture.
    public mutating func releaseAll(at time: Instant) -> TouchFrame? {
        for i in slots.indices where slots[i].touchID != nil {
            current = i
            var s = slots[i]
            endTouch(&s, s.touchID!)
            s.trackingID = -1
            slots[i] = s
            dirty = true
        }
        return emit(at: time)
    }
}
