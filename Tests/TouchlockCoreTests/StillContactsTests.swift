import Testing
@testable import TouchlockCore

private func timers(_ actions: [LockScreen.Action]) -> [Instant] {
    actions.compactMap { if case .armTimer(let t) = $0 { t } else { nil } }
}

/// A contact that never lifts (debris, a drop, a blocked IR beam) stops holding the panel
/// after resting 4 s within the jitter; a finger landing beside it draws or types.
@Suite struct StillContactsTests {
    @Test func aFingerBesideAContactRestingFourSecondsDrawsAndUnlocks() {
        var s = makeScreen()
        // A drop lands on node 4 (it selects it) and jitters within the allowance.
        _ = s.touches([ScreenTouch(id: 1, phase: .began, point: grid3.center(of: 4))], at: at(0))
        #expect(s.pattern!.path == [4])
        for k in 1...30 {
            let c = grid3.center(of: 4)
            _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: Point(x: c.x + Double(k % 3) * 3, y: c.y - Double(k % 2) * 4))],
                          at: at(Int64(k) * 100_000))
        }
        // Before 4 s it still holds the panel: a second finger draws nothing.
        let early = s.draw([0, 1, 2], id: 2, from: 3_500_000)
        #expect(verification(early.actions) == nil)
        // After 4 s a finger landing beside it draws, and the drop's node is not part of it.
        let (drawn, end) = s.draw([0, 1, 2, 5], id: 3, from: 4_100_000)
        #expect(verification(drawn)?.nodes == [0, 1, 2, 5])
        let unlocked = s.verified(true, at: at(end + 1))
        #expect(unlocked.contains(.notify(.unlocked(method: .pattern, at: at(end + 1)))))
        // The drop never counted: no attempt was made of it.
        #expect(s.session.failures == 0)
    }

    @Test func theTimerFreesThePanelWithoutSubmittingWhatTheContactDrew() {
        var s = makeScreen()
        // A finger draws three nodes, then rests on the last one.
        let t0: Int64 = 0
        var out: [LockScreen.Action] = []
        for (i, n) in [0, 1, 2].enumerated() {
            out += s.touches([ScreenTouch(id: 1, phase: i == 0 ? .began : .moved, point: grid3.center(of: n))], at: at(t0 + Int64(i) * 8_000))
        }
        // One timer for the three samples, 4 s after it landed: a timer per sample would
        // wake the loop at every one.
        #expect(timers(out) == [at(0) + StillContacts.defaultAfter])
        // Then it is 4 s after it last moved, when it would become stale.
        let first = s.timer(at: at(0) + StillContacts.defaultAfter)
        #expect(timers(first) == [at(16_000) + StillContacts.defaultAfter] && s.pattern!.path == [0, 1, 2])
        let fired = s.timer(at: at(16_000) + StillContacts.defaultAfter)
        // The pattern is dropped, not submitted: no attempt, no failure, no "too short".
        #expect(verification(fired) == nil && s.pattern!.state == .idle && s.pattern!.path.isEmpty)
        #expect(s.session.state == .locked && s.session.failures == 0)
        #expect(fired.contains(.redraw))
        // Ignored until it lifts: moving now draws nothing, lifting submits nothing.
        let t1: Int64 = 4_100_000
        var later = s.touches([ScreenTouch(id: 1, phase: .moved, point: grid3.center(of: 5))], at: at(t1))
        later += s.touches([ScreenTouch(id: 1, phase: .ended, point: grid3.center(of: 8))], at: at(t1 + 8_000))
        #expect(verification(later) == nil && s.pattern!.path.isEmpty && later.isEmpty)
        // With nothing down no timer is asked for.
        #expect(timers(s.timer(at: at(t1 + 10_000_000))).isEmpty)
        // The same id, down again later, is a new contact that draws.
        let (again, _) = s.draw([0, 1, 2], id: 1, from: 20_000_000)
        #expect(verification(again)?.nodes == [0, 1, 2])
    }

    @Test func movingBeyondTheJitterKeepsAContactLive() {
        var s = makeScreen()
        _ = s.touches([ScreenTouch(id: 1, phase: .began, point: Point(x: 5, y: 5))], at: at(0))
        // A slow finger: 13 px every 3 s (beyond the 12 dp jitter at 160 dpi) is moving.
        var t: Int64 = 0
        var x = 5.0
        while t < 11_000_000 {
            t += 3_000_000; x += 13
            _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: Point(x: x, y: 5))], at: at(t))
            _ = s.timer(at: at(t + 100))
        }
        // It still holds the panel: a second finger does not draw.
        let (other, _) = s.draw([0, 1, 2], id: 2, from: t + 100_000)
        #expect(verification(other) == nil)
        // The jitter is 12 dp at the screen's density: 24 px at 320 dpi.
        var c = Config()
        c.minimumLength = 3
        let dense = LockScreen.make(config: c, size: Size(width: 600, height: 600), density: Density(dpi: 320), shuffleSeed: 0)
        #expect(dense.stillContacts.jitter == 24)
    }

    @Test func aContactRestingOnAKeyGivesWayWithoutTypingIt() {
        var s = codeScreen()
        _ = s.begin(at: at(0))
        let pad = s.code!
        let five = pad.layout.keys[pad.keyOrder.firstIndex(of: 5)!]
        _ = s.touches([ScreenTouch(id: 1, phase: .began, point: centre(five))], at: at(0))
        #expect(s.code!.press != nil)
        let fired = s.timer(at: at(0) + StillContacts.defaultAfter)
        #expect(s.code!.press == nil && fired.contains(.redraw))
        // A finger beside it types the code; the resting contact's lift types nothing.
        let typed = s.tapCode([2, 4, 6, 8], from: 4_500_000)
        #expect(codeVerification(typed) != nil)
        let lifted = s.touches([ScreenTouch(id: 1, phase: .ended, point: centre(five))], at: at(6_000_000))
        #expect(lifted.isEmpty)
        #expect(s.session.failures == 0)
    }

    @Test func aStaleContactKeepsNoScreenAwake() {
        var s = makeScreen()
        s.blankAfter = .milliseconds(30_000)
        _ = s.begin(at: at(0))
        _ = s.touches([ScreenTouch(id: 1, phase: .began, point: Point(x: 5, y: 5))], at: at(1_000_000))
        _ = s.timer(at: at(5_000_000))
        // Its jitter goes on for a minute: the screen still blanks 30 s after the last real touch.
        var blanked = false
        for k in 0..<600 {
            let t = at(5_000_000 + Int64(k) * 100_000)
            _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: Point(x: 5 + Double(k % 2), y: 5))], at: t)
            if t >= at(31_000_000), !blanked { blanked = s.timer(at: t).contains(.blankDisplay) }
        }
        #expect(blanked && s.blanked)
    }

    @Test func theTrackerAsksForOneTimerWhileContactsAreDown() {
        var c = StillContacts(jitter: 10)
        #expect(c.timer(at: at(0)) == nil)
        c.track(ScreenTouch(id: 1, phase: .began, point: Point(x: 0, y: 0)), at: at(0))
        #expect(c.timer(at: at(0)) == at(4_000_000))
        c.track(ScreenTouch(id: 1, phase: .moved, point: Point(x: 50, y: 0)), at: at(1_000_000))
        // Armed for 4 s already: that one fires first and asks again.
        #expect(c.timer(at: at(1_000_000)) == nil)
        #expect(c.stale(at: at(4_000_000)).isEmpty)
        #expect(c.timer(at: at(4_000_000)) == at(5_000_000))
        #expect(c.stale(at: at(5_000_000)) == [1])
        #expect(c.isEmpty && c.timer(at: at(5_000_000)) == nil)
    }
}
