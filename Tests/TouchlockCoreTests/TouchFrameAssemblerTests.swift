import Testing
@testable import TouchlockCore

/// Builds protocol B event streams the way a kernel driver writes them.
struct EventScript {
    var events: [InputEvent] = []
    var time: Int64 = 1_000
    mutating func abs(_ code: UInt16, _ value: Int32) {
        events.append(InputEvent(type: EventCode.EV_ABS, code: code, value: value, time: Instant(microseconds: time)))
    }
    mutating func key(_ code: UInt16, _ value: Int32) {
        events.append(InputEvent(type: EventCode.EV_KEY, code: code, value: value, time: Instant(microseconds: time)))
    }
    mutating func syn(_ code: UInt16 = EventCode.SYN_REPORT) {
        guard code != EventCode.SYN_MT_REPORT else { return syn(code, advance: false) }
        events.append(InputEvent(type: EventCode.EV_SYN, code: code, value: 0, time: Instant(microseconds: time)))
        time += 8_000
    }
    mutating func down(slot: Int32, id: Int32, x: Int32, y: Int32) {
        abs(EventCode.ABS_MT_SLOT, slot); abs(EventCode.ABS_MT_TRACKING_ID, id)
        abs(EventCode.ABS_MT_POSITION_X, x); abs(EventCode.ABS_MT_POSITION_Y, y)
    }
    mutating func move(slot: Int32, x: Int32? = nil, y: Int32? = nil) {
        abs(EventCode.ABS_MT_SLOT, slot)
        if let x { abs(EventCode.ABS_MT_POSITION_X, x) }
        if let y { abs(EventCode.ABS_MT_POSITION_Y, y) }
    }
    mutating func up(slot: Int32) { abs(EventCode.ABS_MT_SLOT, slot); abs(EventCode.ABS_MT_TRACKING_ID, -1) }
}

func frames(_ events: [InputEvent], slots: Int = 10) -> [TouchFrame] {
    var a = TouchFrameAssembler(slotCount: slots)
    return events.compactMap { a.feed($0) }
}

@Suite struct TouchFrameAssemblerTests {
    @Test func oneFingerBeginsMovesAndEndsOnce() {
        var s = EventScript()
        s.down(slot: 0, id: 7, x: 100, y: 200); s.key(EventCode.BTN_TOUCH, 1); s.syn()
        s.move(slot: 0, x: 110); s.syn()
        s.move(slot: 0, y: 230); s.syn()
        s.up(slot: 0); s.key(EventCode.BTN_TOUCH, 0); s.syn()
        let f = frames(s.events)
        #expect(f.count == 4)
        #expect(f.map { $0.touches.map(\.phase) } == [[.began], [.moved], [.moved], [.ended]])
        #expect(f[2].touches[0].position == DevicePoint(x: 110, y: 230))
        #expect(f[3].touches[0].position == DevicePoint(x: 110, y: 230))
        #expect(Set(f.flatMap { $0.touches.map(\.id) }).count == 1)
        #expect(f[1].time == Instant(microseconds: 9_000))
    }

    @Test func aContactThePanelCallsAPalmIsMarkedAndAFingerBesideItIsNot() {
        var s = EventScript()
        s.down(slot: 0, id: 1, x: 100, y: 100); s.syn()
        s.down(slot: 1, id: 2, x: 900, y: 900); s.abs(EventCode.ABS_MT_TOOL_TYPE, EventCode.MT_TOOL_PALM); s.syn()
        s.move(slot: 0, x: 150); s.syn()
        s.up(slot: 1); s.syn()
        // The slot's next contact is a finger again.
        s.down(slot: 1, id: 3, x: 500, y: 500); s.syn()
        let f = frames(s.events)
        #expect(f[1].touches.map(\.palm) == [false, true])
        #expect(f[2].touches.first { $0.slot == 0 }?.palm == false)
        #expect(f[3].touches.first { $0.phase == .ended }?.palm == true)
        #expect(f[4].touches.first { $0.slot == 1 }?.palm == false)
    }

    @Test func twoFingersAreTrackedApartAndTheStillOneIsStationary() {
        var s = EventScript()
        s.down(slot: 0, id: 1, x: 10, y: 10); s.syn()
        s.down(slot: 1, id: 2, x: 500, y: 500); s.syn()
        s.move(slot: 1, x: 520); s.syn()
        s.up(slot: 0); s.syn()
        s.up(slot: 1); s.syn()
        let f = frames(s.events)
        #expect(f[1].touches.map(\.phase) == [.stationary, .began])
        #expect(f[2].touches.map(\.phase) == [.stationary, .moved])
        #expect(f[3].touches.map(\.phase) == [.ended, .stationary])
        #expect(f[4].touches.map(\.phase) == [.ended])
        #expect(f[1].touches[0].id != f[1].touches[1].id)
    }

    @Test func aNewTrackingIDOnABusySlotEndsTheOldTouchAndBeginsANewOne() {
        var s = EventScript()
        s.down(slot: 0, id: 1, x: 10, y: 10); s.syn()
        s.abs(EventCode.ABS_MT_TRACKING_ID, 2); s.abs(EventCode.ABS_MT_POSITION_X, 40); s.syn()
        let f = frames(s.events)
        #expect(f[1].touches.map(\.phase) == [.ended, .began])
        #expect(f[1].touches[0].position == DevicePoint(x: 10, y: 10))
        #expect(f[1].touches[1].position == DevicePoint(x: 40, y: 10))
        #expect(f[1].touches[0].id != f[1].touches[1].id)
    }

    @Test func aNewContactWithoutCoordinatesKeepsTheSlotsLastPosition() {
        // An Atmel panel sends no X/Y for a new touch at the slot's last position.
        var s = EventScript()
        s.down(slot: 0, id: 1, x: 300, y: 400); s.syn()
        s.up(slot: 0); s.syn()
        s.abs(EventCode.ABS_MT_SLOT, 0); s.abs(EventCode.ABS_MT_TRACKING_ID, 2); s.syn()
        let f = frames(s.events)
        #expect(f[2].touches.map(\.phase) == [.began])
        #expect(f[2].touches[0].position == DevicePoint(x: 300, y: 400))
    }

    @Test func aContactThatBeginsAndEndsInOneFrameIsStillReportedBegunAndEnded() {
        var s = EventScript()
        s.down(slot: 0, id: 1, x: 5, y: 6); s.up(slot: 0); s.syn()
        let f = frames(s.events)
        #expect(f.count == 1)
        #expect(f[0].touches.map(\.phase) == [.began, .ended])
    }

    @Test func framesThatChangeNothingAreNotEmitted() {
        var s = EventScript()
        s.down(slot: 0, id: 1, x: 5, y: 6); s.syn()
        s.syn()
        s.move(slot: 0, x: 5); s.syn()
        #expect(frames(s.events).count == 1)
    }

    @Test func afterSynDroppedTheCutFrameIsDiscardedUpToTheNextReport() {
        var s = EventScript()
        s.down(slot: 0, id: 1, x: 5, y: 6); s.syn()
        s.syn(EventCode.SYN_DROPPED)
        s.move(slot: 0, x: 999); s.syn()      // belongs to the cut frame
        s.move(slot: 0, x: 50); s.syn()
        let f = frames(s.events)
        #expect(f.count == 2)
        #expect(f[1].touches[0].position?.x == 50)
    }

    @Test func releaseAllEndsEveryContact() {
        var s = EventScript()
        s.down(slot: 0, id: 1, x: 5, y: 6); s.down(slot: 3, id: 2, x: 50, y: 60); s.syn()
        var a = TouchFrameAssembler(slotCount: 5)
        for e in s.events { _ = a.feed(e) }
        let f = a.releaseAll(at: Instant(microseconds: 99))
        #expect(f?.touches.map(\.phase) == [.ended, .ended])
        #expect(a.releaseAll(at: Instant(microseconds: 100)) == nil)
    }

    @Test func deviceUnitsMapToScreenPixelsFromTheAxisRanges() {
        let m = ScreenMapping(x: AxisRange(minimum: 0, maximum: 4095), y: AxisRange(minimum: 100, maximum: 1123),
                              screen: Size(width: 1280, height: 800))
        #expect(m.map(DevicePoint(x: 0, y: 100)) == Point(x: 0, y: 0))
        #expect(m.map(DevicePoint(x: 2048, y: 612)) == Point(x: 640, y: 400))
    }
}
