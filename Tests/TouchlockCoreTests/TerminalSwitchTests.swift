import Testing
@testable import TouchlockCore



@Suite struct TerminalSwitchTests {
    @Test func showingOursSwitchesAndLocksSwitchingOnceAcquired() {
        var t = TerminalSwitch(ours: 7)
        #expect(t.show(active: 1, at: ms(0)) == [.unlockSwitching, .activate(7), .armTimer(ms(2000))])
        #expect(t.state == .switchingIn(returnTo: 1, since: ms(0)))
        #expect(t.show(active: 1, at: ms(10)).isEmpty)  // asked once
        #expect(t.acquired(at: ms(50)) == [.acknowledgeAcquire, .lockSwitching, .shown])
        #expect(t.state == .foreground(returnTo: 1))
        #expect(t.timerFired(at: ms(2000)).isEmpty)  // the switch completed: no failure
    }

    @Test func aReleaseIsRefusedWhileLocked() {
        var t = TerminalSwitch(ours: 7)
        _ = t.show(active: 1, at: ms(0))
        _ = t.acquired(at: ms(50))
        // chvt 1 (or Ctrl+Alt+F1) while locked: the kernel asks, the answer is no.
        #expect(t.releaseRequested(at: ms(100)) == [.refuseRelease])
        #expect(t.state == .foreground(returnTo: 1))
    }

    /// A stop while locked (a restart, an upgrade, an operator's stop) leaves ours shown
    /// with switching locked, for the daemon after this one: Ctrl+Alt+F1 or chvt in between
    /// shows nothing else. Unlocked, or with ours not on screen, everything goes back.
    @Test func aStopWhileLockedLeavesSwitchingLocked() {
        var t = TerminalSwitch(ours: 7)
        #expect(t.exit(locked: true) == .restore(showing: nil))  // ours never shown
        _ = t.show(active: 1, at: ms(0))
        #expect(t.exit(locked: true) == .restore(showing: nil))  // not shown yet
        _ = t.acquired(at: ms(50))
        #expect(t.exit(locked: true) == .leaveLocked)
        #expect(t.exit(locked: false) == .restore(showing: 1))
        _ = t.handBack(at: ms(1000))
        _ = t.releaseRequested(at: ms(1050))
        #expect(t.exit(locked: true) == .restore(showing: nil))  // the kiosk's VT is shown
        // Restarted over ours still shown (nothing known to return to): kept locked too.
        var restarted = TerminalSwitch(ours: 7)
        _ = restarted.show(active: 7, at: ms(0))
        #expect(restarted.exit(locked: true) == .leaveLocked)
    }

    @Test func theHandBackUnlocksSwitchingThenActivatesTheKiosksVTAndAllowsOurRelease() {
        var t = TerminalSwitch(ours: 7)
        _ = t.show(active: 1, at: ms(0))
        _ = t.acquired(at: ms(50))
        let back = t.handBack(at: ms(1000))
        // Unlocked first: VT_LOCKSWITCH would ignore our own VT_ACTIVATE too.
        #expect(back == [.unlockSwitching, .activate(1), .armTimer(ms(3000))])
        #expect(t.releaseRequested(at: ms(1050)) == [.allowRelease, .handedBack])
        #expect(t.state == .background)
        #expect(t.timerFired(at: ms(3000)).isEmpty)
        // Locking again switches to ours from the kiosk's VT.
        #expect(t.show(active: 1, at: ms(5000)) == [.unlockSwitching, .activate(7), .armTimer(ms(7000))])
    }

    @Test func aSwitchThatNeverCompletesFailsAfterTheTimeout() {
        var t = TerminalSwitch(ours: 7, timeout: .milliseconds(500))
        _ = t.show(active: 1, at: ms(0))
        #expect(t.timerFired(at: ms(499)) == [.armTimer(ms(500))])
        let failed = t.timerFired(at: ms(500))
        #expect(failed.count == 2)
        if case .failed(let why) = failed.first { #expect(why.contains("VT 7")) } else { Issue.record("\(failed)") }
        #expect(failed.last == .armTimer(ms(1000)))  // asked for again, see below
        #expect(t.state == .background)
    }

    /// An owner that died before answering (plymouthd aborting as the switch began) leaves
    /// the kernel's switch pending for good: only another VT_ACTIVATE completes it.
    @Test func aShowThatTimedOutIsAskedForAgainAtDoublingIntervalsUntilShown() {
        var t = TerminalSwitch(ours: 7, timeout: .milliseconds(500))
        _ = t.show(active: 1, at: ms(0))
        _ = t.timerFired(at: ms(500))
        #expect(t.timerFired(at: ms(999)) == [.armTimer(ms(1000))])
        var at: Int64 = 1000
        var asks: [Int64] = []
        while at < 200_000 {
            let a = t.timerFired(at: ms(at))
            guard a.count == 2, a.first == .activate(7), case .armTimer(let next) = a.last else {
                Issue.record("at \(at) ms: \(a)")
                return
            }
            asks.append(at)
            at = next.microseconds / 1000
        }
        // 0.5 s after the timeout, then 1, 2, 4, 8, 16 s apart, then every 30 s at most.
        #expect(Array(asks.prefix(8)) == [1000, 2000, 4000, 8000, 16000, 32000, 62000, 92000])
        #expect(t.state == .background)
        // The owner gone, the kernel switches at the next ask: shown late, and no more asks.
        #expect(t.acquired(at: ms(at + 10)) == [.acknowledgeAcquire, .lockSwitching, .shown])
        #expect(t.state == .foreground(returnTo: 1))
        #expect(t.retryAt == nil)
        #expect(t.timerFired(at: ms(at + 30_000)).isEmpty)
    }

    @Test func aHandBackCallsOffTheAsksOfAShowThatTimedOut() {
        var t = TerminalSwitch(ours: 7, timeout: .milliseconds(500))
        _ = t.show(active: 1, at: ms(0))
        _ = t.timerFired(at: ms(500))
        // Unlocked meanwhile (the kiosk kept the screen): ours is no longer wanted, and
        // the screen is the kiosk's already.
        #expect(t.handBack(at: ms(700)) == [.handedBack])
        #expect(!t.showWanted && t.retryAt == nil)
        #expect(t.timerFired(at: ms(1000)).isEmpty)
    }

    /// plymouthd, the active VT's owner, ends during the switch (it aborts before its
    /// answer): ours is asked for again at once, not after the timeout; once shown, its end
    /// asks nothing.
    @Test func theActiveOwnersEndAsksAgainAtOnce() {
        var t = TerminalSwitch(ours: 7, timeout: .milliseconds(2000))
        _ = t.show(active: 1, at: ms(0))
        #expect(t.activeOwnerEnded(at: ms(300)) == [.activate(7)])
        #expect(t.acquired(at: ms(310)) == [.acknowledgeAcquire, .lockSwitching, .shown])
        #expect(t.activeOwnerEnded(at: ms(400)).isEmpty)
        // After a timeout, while the show is still wanted, too.
        var u = TerminalSwitch(ours: 7, timeout: .milliseconds(500))
        _ = u.show(active: 1, at: ms(0))
        _ = u.timerFired(at: ms(500))
        #expect(u.activeOwnerEnded(at: ms(700)) == [.activate(7)])
    }

    @Test func anAskAgainThatFailsIsAskedAgainLater() {
        var t = TerminalSwitch(ours: 7, timeout: .milliseconds(500))
        _ = t.show(active: 1, at: ms(0))
        _ = t.timerFired(at: ms(500))
        #expect(t.timerFired(at: ms(1000)) == [.activate(7), .armTimer(ms(2000))])
        #expect(t.activateFailed("Invalid argument", at: ms(1000)).isEmpty)
        #expect(t.state == .background && t.showWanted)
        #expect(t.timerFired(at: ms(2000)) == [.activate(7), .armTimer(ms(4000))])
    }

    @Test func aLockDuringTheHandBackKeepsOursShown() {
        var t = TerminalSwitch(ours: 7)
        _ = t.show(active: 1, at: ms(0))
        _ = t.acquired(at: ms(50))
        _ = t.handBack(at: ms(1000))
        #expect(t.show(active: 7, at: ms(1010)).isEmpty)
        #expect(t.releaseRequested(at: ms(1050)) == [.refuseRelease, .lockSwitching, .shown])
        #expect(t.state == .foreground(returnTo: 1))
    }

    @Test func oursAlreadyActiveIsShownAtOnceAndHasNothingToReturnTo() {
        var t = TerminalSwitch(ours: 3)
        #expect(t.show(active: 3, at: ms(0)) == [.lockSwitching, .shown])
        #expect(t.handBack(at: ms(10)) == [.unlockSwitching, .handedBack])
    }

    @Test func aSwitchToOursByHandWhileHandedOverGoesBack() {
        var t = TerminalSwitch(ours: 7)
        _ = t.show(active: 1, at: ms(0))
        _ = t.acquired(at: ms(50))
        _ = t.handBack(at: ms(100))
        _ = t.releaseRequested(at: ms(150))
        // Someone runs chvt 7 while the kiosk app has the screen.
        #expect(t.acquired(at: ms(200)) == [.acknowledgeAcquire, .activate(1), .armTimer(ms(2200))])
        #expect(t.releaseRequested(at: ms(250)) == [.allowRelease, .handedBack])
    }

    @Test func aFailedActivateEndsTheSwitch() {
        var t = TerminalSwitch(ours: 7)
        _ = t.show(active: 1, at: ms(0))
        let a = t.activateFailed("Operation not permitted", at: ms(1))
        #expect(a == [.failed("cannot switch to VT 7: Operation not permitted")])
        #expect(t.state == .background)
    }
}
