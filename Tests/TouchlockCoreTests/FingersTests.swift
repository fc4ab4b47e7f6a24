import Testing
@testable import TouchlockCore

private let open = Fingers.Screen(takesInput: true, toggle: PixelRect(x: 0, y: 500, width: 100, height: 50),
                                  switchable: true, driverHasDrawn: false)
private func touch(_ id: Int, _ phase: TouchPhase, _ x: Double = 50, _ y: Double = 50) -> ScreenTouch {
    ScreenTouch(id: id, phase: phase, point: Point(x: x, y: y))
}
private func passed(_ actions: [Fingers.Action]) -> [ScreenTouch] {
    var out: [ScreenTouch] = []
    for case .pass(let t) in actions { out += t }
    return out
}

/// Which contacts reach the pad: the first finger drives it, blocked and waking fingers
/// wait to lift, the switch acts on release, palms and resting contacts give way.
@Suite struct FingersTests {
    @Test func theFirstFingerDownDrivesThePadAndTheSecondDoesNotTakeOver() {
        var f = Fingers(stillContacts: StillContacts(jitter: 12))
        #expect(passed(f.touches([touch(1, .began)], on: open, at: at(0))) == [touch(1, .began)])
        _ = f.touches([touch(2, .began, 60, 60)], on: open, at: at(10_000))
        #expect(f.driver == 1 && f.downCount == 2)
        _ = f.touches([touch(1, .ended)], on: open, at: at(20_000))
        #expect(f.driver == nil && f.downCount == 1)
    }

    @Test func aFingerLandingWhileInputIsBlockedIsIgnoredUntilItLifts() {
        var f = Fingers(stillContacts: StillContacts(jitter: 12))
        var blocked = open
        blocked.takesInput = false
        #expect(f.touches([touch(1, .began)], on: blocked, at: at(0)).isEmpty)
        // Input is taken again while it is down: its moves and its lift still reach nothing.
        #expect(f.touches([touch(1, .moved, 70, 70)], on: open, at: at(10_000)).isEmpty)
        #expect(f.touches([touch(1, .ended, 70, 70)], on: open, at: at(20_000)).isEmpty)
        #expect(passed(f.touches([touch(3, .began)], on: open, at: at(30_000))) == [touch(3, .began)])
    }

    @Test func theSwitchActsWhenTheFingerLiftsOnIt() {
        var f = Fingers(stillContacts: StillContacts(jitter: 12))
        #expect(f.touches([touch(1, .began, 50, 520)], on: open, at: at(0)) == [.redrawSwitch])
        #expect(f.switchPressed)
        // Slid off: drawn released; lifted there, nothing switches.
        #expect(f.touches([touch(1, .moved, 300, 300)], on: open, at: at(10_000)) == [.redrawSwitch])
        #expect(!f.switchPressed)
        #expect(f.touches([touch(1, .ended, 300, 300)], on: open, at: at(20_000)) == [.redrawSwitch])
        // Pressed and lifted on it: the switch.
        _ = f.touches([touch(2, .began, 50, 520)], on: open, at: at(30_000))
        #expect(f.touches([touch(2, .ended, 50, 520)], on: open, at: at(40_000)) == [.redrawSwitch, .switchReleased])
        #expect(f.downCount == 0)
    }

    @Test func theSwitchCannotBePressedWhileThePadIsBusy() {
        var f = Fingers(stillContacts: StillContacts(jitter: 12))
        var busy = open
        busy.switchable = false
        #expect(passed(f.touches([touch(1, .began, 50, 520)], on: busy, at: at(0))) == [touch(1, .began, 50, 520)])
        #expect(!f.switchPressed)
    }

    @Test func aContactOnAnotherPanelGivesWayUnlessItHasDrawn() {
        let palm = 7, finger = ScreenTouch.panelStride + 1
        var f = Fingers(stillContacts: StillContacts(jitter: 12))
        _ = f.touches([touch(palm, .began, 10, 10)], on: open, at: at(0))
        let out = f.touches([touch(finger, .began)], on: open, at: at(10_000))
        #expect(out == [.gaveWay(id: palm, lastPoint: Point(x: 10, y: 10)), .pass([touch(finger, .began)])])
        #expect(f.driver == finger)
        // The palm is ignored until it lifts.
        #expect(passed(f.touches([touch(palm, .moved, 12, 12)], on: open, at: at(20_000))).isEmpty)

        // A finger that has chosen a node keeps the pad.
        var g = Fingers(stillContacts: StillContacts(jitter: 12))
        var drawn = open
        drawn.driverHasDrawn = true
        _ = g.touches([touch(palm, .began, 10, 10)], on: open, at: at(0))
        #expect(g.touches([touch(finger, .began)], on: drawn, at: at(10_000)) == [.pass([touch(finger, .began)])])
        #expect(g.driver == palm)
    }

    @Test func aContactRestingFourSecondsIsLiftedForThePadAndIgnoredUntilItLifts() {
        var f = Fingers(stillContacts: StillContacts(jitter: 12))
        _ = f.touches([touch(1, .began)], on: open, at: at(0))
        #expect(f.timer(at: at(0)) == [.armTimer(at(4_000_000))])
        #expect(f.rested(at: at(3_999_999)).isEmpty)
        #expect(f.rested(at: at(4_000_000)) == [.rested(id: 1)])
        #expect(f.driver == nil && f.downCount == 0)
        // Its jitter and its lift are dropped; the lift is the last of it.
        #expect(f.admit([touch(1, .moved, 51, 50), touch(2, .began)]) == [touch(2, .began)])
        #expect(f.admit([touch(1, .ended)]).isEmpty)
        #expect(f.admit([touch(1, .began)]) == [touch(1, .began)])
    }

    @Test func fingersThatWakeTheScreenAreIgnoredUntilTheyLift() {
        var f = Fingers(stillContacts: StillContacts(jitter: 12))
        f.woke(by: [touch(1, .began)])
        #expect(f.touches([touch(1, .moved, 90, 90)], on: open, at: at(10_000)).isEmpty)
        #expect(f.touches([touch(1, .ended, 90, 90)], on: open, at: at(20_000)).isEmpty)
        #expect(passed(f.touches([touch(1, .began)], on: open, at: at(30_000))) == [touch(1, .began)])
    }
}
