import Testing
@testable import TouchlockCore

func makeScreen(errorHold: Int64 = 500) -> LockScreen {
    LockScreen(pads: .pattern(PatternLock(grid: grid3, minimumLength: 3)),
               session: Session(errorHold: .milliseconds(errorHold)),
               builder: SceneBuilder(theme: Theme(), size: Size(width: 300, height: 300)))
}

extension LockScreen {
    /// Draws `nodes` with one finger, sample by sample through the node centres.
    mutating func draw(_ nodes: [Int], id: Int, from t0: Int64) -> (actions: [Action], end: Int64) {
        var t = t0
        var out: [Action] = []
        for (i, n) in nodes.enumerated() {
            let p = grid3.center(of: n)
            out += touches([ScreenTouch(id: id, phase: i == 0 ? .began : .moved, point: p)], at: at(t))
            t += 8_000
        }
        out += touches([ScreenTouch(id: id, phase: .ended, point: grid3.center(of: nodes.last!))], at: at(t))
        return (out, t)
    }
}

func verification(_ actions: [LockScreen.Action]) -> Pattern? {
    for case .verify(.pattern(let p)) in actions { return p }
    return nil
}

@Suite struct LockScreenTests {
    @Test func theRightPatternUnlocksAndTellsSubscribersAtOnce() {
        var s = makeScreen()
        let (actions, end) = s.draw([0, 1, 2, 5], id: 1, from: 0)
        #expect(verification(actions)?.nodes == [0, 1, 2, 5])
        #expect(s.session.state == .verifying(.pattern))
        let after = s.verified(true, at: at(end + 1))
        #expect(after.contains(.notify(.unlocked(method: .pattern, at: at(end + 1)))))
        #expect(s.session.state == .unlocked(.pattern, at: at(end + 1)))
        // The accepted path shows for a moment, then nothing of it stays on screen.
        #expect(s.scene.path.count == 4)
        _ = s.timer(at: at(end + 1 + 500_000))
        #expect(s.scene.path.isEmpty && s.scene.nodes.isEmpty)
        #expect(s.scene.prompt == "Unlocked")
    }

    @Test func aWrongPatternFailsShowsTheErrorColourAndResetsAfterTheHold() {
        var s = makeScreen()
        let (actions, end) = s.draw([6, 3, 0, 1], id: 1, from: 0)
        #expect(verification(actions) != nil)
        let after = s.verified(false, at: at(end))
        #expect(after.contains(.notify(.failed(method: .pattern, failures: 1, retryAfter: .milliseconds(500)))))
        #expect(s.session.state == .wrong(.pattern, until: at(end + 500_000)))
        let scene = s.scene
        #expect(scene.pathColor == Theme().error.with(alpha: Theme().path.alpha))
        #expect(scene.nodes.enumerated().filter { $0.element.state == .error }.map(\.offset) == [0, 1, 3, 6])
        #expect(scene.prompt == "Wrong pattern, try again")
        // A finger during the hold does nothing.
        let blocked = s.touches([ScreenTouch(id: 2, phase: .began, point: grid3.center(of: 4))], at: at(end + 100_000))
        #expect(blocked.isEmpty)
        _ = s.timer(at: at(end + 500_000))
        #expect(s.session.state == .locked)
        #expect(s.scene.nodes.allSatisfy { $0.state == .normal })
        #expect(s.scene.path.isEmpty)
        // The finger that landed during the hold still draws nothing until it lifts.
        _ = s.touches([ScreenTouch(id: 2, phase: .moved, point: grid3.center(of: 5))], at: at(end + 600_000))
        #expect(s.pattern!.path.isEmpty)
        #expect(s.session.failures == 1)
    }

    @Test func aLockRequestAfterUnlockLocksAgain() {
        var s = makeScreen()
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 0)
        _ = s.verified(true, at: at(end))
        let a = s.lock(at: at(end + 10))
        #expect(a.contains(.notify(.locked)))
        #expect(s.session.state == .locked)
        #expect(s.lock(at: at(end + 20)).isEmpty)
    }

    @Test func anUnlockHandsTheInputOverAtOnceAndTheDisplayOnceTheScreenIsCleared() {
        var s = makeScreen()
        let (drawn, end) = s.draw([0, 1, 2], id: 1, from: 0)
        #expect(!drawn.contains(.releaseInput) && s.hold == .held)
        let unlocked = s.verified(true, at: at(end))
        // Told first, then the kiosk app gets the touches; the accepted path stays 0.5 s.
        let told = unlocked.firstIndex(of: .notify(.unlocked(method: .pattern, at: at(end))))!
        #expect(unlocked.firstIndex(of: .releaseInput)! > told)
        #expect(!unlocked.contains(.cover(.ask(.uncover))))
        #expect(s.timer(at: at(end + 100_000)).contains(.cover(.ask(.uncover))) == false)
        let cleared = s.timer(at: at(end + 500_000))
        #expect(cleared.contains(.redraw) && cleared.contains(.cover(.ask(.uncover))))
        #expect(s.scene.nodes.allSatisfy { $0.state == .normal } && s.scene.path.isEmpty)
        #expect(s.hold == .released)
        // Handed over once only.
        #expect(!s.timer(at: at(end + 900_000)).contains(.cover(.ask(.uncover))))
    }

    @Test func aLockAfterTheHandOverTakesTheDisplayBackFirst() {
        var s = makeScreen()
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 0)
        _ = s.verified(true, at: at(end))
        _ = s.timer(at: at(end + 500_000))
        let ask = s.lock(at: at(end + 600_000))
        #expect(ask == [.cover(.ask(.cover))])
        if case .unlocked = s.session.state {} else { Issue.record("locked before the display was taken: \(s.session.state)") }
        #expect(s.lock(at: at(end + 600_001)).isEmpty)  // asked once
        let taken = s.cover(.reported(.covered), at: at(end + 610_000))
        #expect(taken.contains(.grabInput) && taken.contains(.redraw))
        #expect(taken.contains(.notify(.locked)))
        #expect(s.session.state == .locked && s.hold == .held)
    }

    @Test func aLockRefusedTheDisplayStaysUnlockedAndHandedOver() {
        var s = makeScreen()
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 0)
        _ = s.verified(true, at: at(end))
        _ = s.timer(at: at(end + 500_000))
        #expect(s.lock(at: at(end + 600_000)) == [.cover(.ask(.cover))])
        let refused = s.cover(.reported(.refused("drmSetMaster: Device or resource busy")), at: at(end + 610_000))
        #expect(refused.isEmpty)  // nothing told: the device was never locked
        if case .unlocked = s.session.state {} else { Issue.record("the session changed: \(s.session.state)") }
        #expect(s.hold == .released)
        // Asked again later, it can still lock.
        #expect(s.lock(at: at(end + 700_000)) == [.cover(.ask(.cover))])
        #expect(s.cover(.reported(.covered), at: at(end + 710_000)).contains(.notify(.locked)))
    }

    @Test func idleLockFiresAfterTheIdleTimeWithNothingTouchedAndNotBefore() {
        var s = makeScreen()
        s.idleLock = .milliseconds(60_000)
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 0)
        _ = s.verified(true, at: at(end))
        let handedOver = s.timer(at: at(end + 500_000))
        // One timer, armed from the hand-over.
        #expect(handedOver.contains(.armTimer(at(end + 60_500_000))))
        // A touch on the kiosk app at +30 s pushes it back; the timer finds it early.
        _ = s.touches([ScreenTouch(id: 9, phase: .began, point: Point(x: 5, y: 5))], at: at(end + 30_000_000))
        _ = s.touches([ScreenTouch(id: 9, phase: .ended, point: Point(x: 5, y: 5))], at: at(end + 30_100_000))
        #expect(s.timer(at: at(end + 60_500_000)) == [.armTimer(at(end + 90_100_000))])
        if case .unlocked = s.session.state {} else { Issue.record("locked early: \(s.session.state)") }
        // Nothing since: it locks (the display is asked back first), and says at once that
        // the device went idle: "locked" comes only once the display is taken.
        #expect(s.timer(at: at(end + 90_100_000)) == [.wentIdle, .cover(.ask(.cover))])
        let taken = s.cover(.reported(.covered), at: at(end + 90_200_000))
        #expect(taken.contains(.notify(.locked)) && !taken.contains(.wentIdle))
    }

    @Test func withoutIdleLockNothingWakesWhileUnlocked() {
        var s = makeScreen()
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 0)
        _ = s.verified(true, at: at(end))
        let handedOver = s.timer(at: at(end + 500_000))
        #expect(!handedOver.contains { if case .armTimer = $0 { true } else { false } })
    }

    @Test func untouchedWhileLockedTheScreenBlanksAndTheWakingTouchSelectsNothing() {
        var s = makeScreen()
        s.blankAfter = .milliseconds(30_000)
        #expect(s.begin(at: at(0)).contains(.armTimer(at(30_000_000))))
        // A touch at +10 s moves the deadline; the timer finds it early and re-arms.
        _ = s.draw([0, 1], id: 1, from: 10_000_000)
        let early = s.timer(at: at(30_000_000))
        #expect(!early.contains(.blankDisplay))
        guard case .armTimer(let next)? = early.last else { Issue.record("no timer re-armed: \(early)"); return }
        let off = s.timer(at: next)
        #expect(off.contains(.blankDisplay) && s.blanked)
        #expect(off.firstIndex(of: .wentIdle)! < off.firstIndex(of: .blankDisplay)!)
        // Blank: no timer is left for the screen (no wake-ups while off).
        #expect(!off.contains { if case .armTimer = $0 { true } else { false } })
        // The touch that wakes it is not input: it lands on node 0 and drags to 1 and 2.
        let woken = s.touches([ScreenTouch(id: 5, phase: .began, point: grid3.center(of: 0))], at: next + .milliseconds(1000))
        #expect(woken.first == .wakeDisplay && !s.blanked)
        _ = s.touches([ScreenTouch(id: 5, phase: .moved, point: grid3.center(of: 2))], at: next + .milliseconds(1100))
        let lifted = s.touches([ScreenTouch(id: 5, phase: .ended, point: grid3.center(of: 2))], at: next + .milliseconds(1200))
        #expect(s.pattern!.path.isEmpty && verification(lifted) == nil)
        // The next touch draws as usual.
        let (again, _) = s.draw([0, 1, 2], id: 6, from: (next + .milliseconds(2000)).microseconds)
        #expect(verification(again)?.nodes == [0, 1, 2])
    }

    @Test func aLockoutCountdownStopsWhileBlankAndGoesOnWhenWoken() {
        var s = LockScreen(pads: .pattern(PatternLock(grid: grid3, minimumLength: 3)),
                           session: Session(schedule: LockoutSchedule(seconds: [0, 120])),
                           builder: SceneBuilder(theme: Theme(), size: Size(width: 300, height: 300)))
        s.blankAfter = .milliseconds(5_000)
        _ = s.begin(at: at(0))
        let (_, e1) = s.draw([0, 1, 2], id: 1, from: 0)
        _ = s.verified(false, at: at(e1))
        _ = s.timer(at: at(e1 + 600_000))
        let (_, e2) = s.draw([0, 1, 2, 5], id: 2, from: e1 + 700_000)
        _ = s.verified(false, at: at(e2))
        #expect(s.session.lockedOutUntil != nil)
        let off = s.timer(at: at(e2 + 5_000_000))
        #expect(off.contains(.blankDisplay))
        // Only the lockout's own deadline stays armed.
        let timers = off.compactMap { if case .armTimer(let t) = $0 { t } else { nil } }
        #expect(timers.allSatisfy { $0 == s.session.lockedOutUntil })
        let woken = s.hardwareKey(.digit(1), at: at(e2 + 9_000_000))
        #expect(woken.first == .wakeDisplay)
        #expect(woken.contains(.armTimer(at(e2 + 10_000_000))))  // the countdown's next second
    }

    @Test func aContactRestingOnAnotherPanelGivesWayToAFingerOnThisOne() {
        var s = makeScreen()
        let palm = 1 << 24 | 3  // panel 1, resting away from every node
        _ = s.touches([ScreenTouch(id: palm, phase: .began, point: Point(x: 2, y: 2))], at: at(0))
        // A finger on panel 0 draws and unlocks while the contact stays down.
        let (drawn, _) = s.draw([0, 1, 2], id: 1, from: 100_000)
        #expect(verification(drawn)?.nodes == [0, 1, 2])
    }

    @Test func aSecondFingerOnTheSamePanelDoesNotTakeOver() {
        var s = makeScreen()
        _ = s.touches([ScreenTouch(id: 7, phase: .began, point: Point(x: 2, y: 2))], at: at(0))
        let (drawn, _) = s.draw([0, 1, 2], id: 1, from: 100_000)
        #expect(verification(drawn) == nil)  // only the first finger on a panel draws
    }

    @Test func aFingerDrawingOnOnePanelIsNotInterruptedByAnotherPanel() {
        var s = makeScreen()
        _ = s.touches([ScreenTouch(id: 1, phase: .began, point: grid3.center(of: 0))], at: at(0))
        _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: grid3.center(of: 1))], at: at(10_000))
        let other = 1 << 24 | 1
        _ = s.touches([ScreenTouch(id: other, phase: .began, point: grid3.center(of: 8))], at: at(20_000))
        _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: grid3.center(of: 2))], at: at(30_000))
        let end = s.touches([ScreenTouch(id: 1, phase: .ended, point: grid3.center(of: 2))], at: at(40_000))
        #expect(verification(end)?.nodes == [0, 1, 2])
    }

    @Test func theFirstFrameTakesTheInput() {
        var s = makeScreen()
        #expect(s.begin(at: at(0)).first == .grabInput)
    }
}

@Suite struct SceneDamageTests {
    let builder = SceneBuilder(theme: Theme(), size: Size(width: 1280, height: 800))

    @Test func theFirstSceneDamagesTheWholeScreen() {
        var s = LockScreen(pads: .pattern(PatternLock(grid: .layout(on: Size(width: 1280, height: 800)))),
                           session: Session(), builder: builder)
        _ = s.touches([], at: at(0))
        #expect(s.scene.damage(from: nil).rects == [PixelRect(x: 0, y: 0, width: 1280, height: 800)])
    }

    @Test func draggingTheTailDamagesOnlyAroundTheTail() {
        let grid = PatternGrid.layout(on: Size(width: 1280, height: 800))
        var s = LockScreen(pads: .pattern(PatternLock(grid: grid)), session: Session(), builder: builder)
        _ = s.touches([ScreenTouch(id: 1, phase: .began, point: grid.center(of: 0))], at: at(0))
        var p = grid.center(of: 0)
        p.x += 40
        _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: p)], at: at(8_000))
        let before = s.scene
        p.x += 10
        _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: p)], at: at(16_000))
        let d = s.scene.damage(from: before)
        #expect(!d.isEmpty)
        // Only the tail, from node 0 to the finger, 10 px wide, changed.
        #expect(d.area < 80 * 20)
        #expect(d.rects.allSatisfy { $0.x >= Int(grid.center(of: 0).x) - 8 && $0.maxX <= Int(p.x) + 8 })
    }

    @Test func anUnchangedSceneHasNoDamage() {
        let s = LockScreen(pads: .pattern(PatternLock(grid: .layout(on: Size(width: 1280, height: 800)))),
                           session: Session(), builder: builder)
        #expect(s.scene.damage(from: s.scene).isEmpty)
    }

    @Test func damageRectanglesAreClippedAndMerged() {
        var d = Damage(bounds: Size(width: 100, height: 100))
        d.add(PixelRect(x: -10, y: -10, width: 20, height: 20))
        #expect(d.rects == [PixelRect(x: 0, y: 0, width: 10, height: 10)])
        d.add(PixelRect(x: 5, y: 5, width: 10, height: 10))
        #expect(d.rects == [PixelRect(x: 0, y: 0, width: 15, height: 15)])
        d.add(PixelRect(x: 80, y: 80, width: 5, height: 5))
        #expect(d.rects.count == 2)
    }
}

@Suite struct SegmentDamageTests {
    @Test func aLongDiagonalDamagesAChainOfBoxesNotItsSquare() {
        var d = Damage(bounds: Size(width: 1000, height: 1000))
        d.addSegment(Point(x: 100, y: 100), Point(x: 700, y: 700), width: 10)
        let square = 620 * 620
        #expect(d.area < square / 5)
        // Every point along the stroke is covered.
        for k in 0...60 {
            let p = Point(x: 100 + 10 * Double(k), y: 100 + 10 * Double(k))
            for (dx, dy) in [(0.0, 0.0), (4.0, -4.0), (-4.0, 4.0)] {
                let x = Int(p.x + dx), y = Int(p.y + dy)
                #expect(d.rects.contains { $0.intersects(PixelRect(x: x, y: y, width: 1, height: 1)) })
            }
        }
        #expect(d.rects.count <= Damage.maximumRects)
    }
}
