import Testing
import TouchlockCore
@testable import TouchlockInput

@Suite struct TouchInputTests {
    final class Sink {
        var touches: [ScreenTouch] = []
    }

    func input(_ sink: Sink) -> TouchInput {
        let axis = AxisRange(minimum: 0, maximum: 999)
        return TouchInput(label: "test", mode: .multitouchB(slots: 4),
                          transform: TouchTransform(x: axis, y: axis, screen: Size(width: 1000, height: 1000)),
                          deliver: { t, _ in sink.touches += t })
    }

    func feed(_ i: TouchInput, _ s: EventScriptB) { for e in s.events { i.feed(e) } }

    @Test func aPalmIsNeverPassedOnAndAFingerBesideItIs() {
        let sink = Sink(), i = input(sink)
        var s = EventScriptB()
        s.down(slot: 0, id: 1, x: 100, y: 100); s.syn()
        s.down(slot: 1, id: 2, x: 800, y: 800); s.abs(EventCode.ABS_MT_TOOL_TYPE, EventCode.MT_TOOL_PALM); s.syn()
        s.move(slot: 0, x: 200); s.syn()
        s.up(slot: 1); s.syn()
        s.up(slot: 0); s.syn()
        feed(i, s)
        #expect(Set(sink.touches.map(\.id)).count == 1)  // the finger only
        #expect(sink.touches.map(\.phase).filter { $0 != .stationary } == [.began, .moved, .ended])
    }

    @Test func aFingerThatTurnsIntoAPalmIsLiftedWhereItWas() {
        let sink = Sink(), i = input(sink)
        var s = EventScriptB()
        s.down(slot: 0, id: 1, x: 100, y: 100); s.syn()
        s.move(slot: 0, x: 300); s.abs(EventCode.ABS_MT_TOOL_TYPE, EventCode.MT_TOOL_PALM); s.syn()
        s.move(slot: 0, x: 600); s.syn()
        s.up(slot: 0); s.syn()
        feed(i, s)
        #expect(sink.touches.map(\.phase) == [.began, .ended])
        #expect(sink.touches.last?.point.x ?? 0 < 150)  // where the finger was, not the palm
    }
}

/// Protocol B events as a kernel driver writes them.
struct EventScriptB {
    var events: [InputEvent] = []
    var time: Int64 = 1_000
    mutating func abs(_ code: UInt16, _ value: Int32) {
        events.append(InputEvent(type: EventCode.EV_ABS, code: code, value: value, time: Instant(microseconds: time)))
    }
    mutating func syn() {
        events.append(InputEvent(type: EventCode.EV_SYN, code: EventCode.SYN_REPORT, value: 0, time: Instant(microseconds: time)))
        time += 8_000
    }
    mutating func down(slot: Int32, id: Int32, x: Int32, y: Int32) {
        abs(EventCode.ABS_MT_SLOT, slot); abs(EventCode.ABS_MT_TRACKING_ID, id)
        abs(EventCode.ABS_MT_POSITION_X, x); abs(EventCode.ABS_MT_POSITION_Y, y)
    }
    mutating func move(slot: Int32, x: Int32) { abs(EventCode.ABS_MT_SLOT, slot); abs(EventCode.ABS_MT_POSITION_X, x) }
    mutating func up(slot: Int32) { abs(EventCode.ABS_MT_SLOT, slot); abs(EventCode.ABS_MT_TRACKING_ID, -1) }
}
