import Testing
@testable import TouchlockCore

/// The lock screen's cover is its one record of who has the display and the input: `hold`
/// and `holdsInput` are read off it, and what the VT and the outputs report comes back
/// through the lock screen.
@Suite struct LockScreenCoverTests {
    /// A screen with a VT of its own, shown, unlocked by [0, 1, 2] and handed over.
    func handedOverWithATerminal() -> (LockScreen, Int64) {
        var s = makeScreen()
        s.covers(withTerminal: true)
        _ = s.begin(at: at(0))
        #expect(s.cover(.start(inPlace: false), at: at(0)) == [.cover(.showTerminal)])
        #expect(s.cover(.terminalShown, at: at(1)) == [.cover(.takeOutputs)])
        #expect(s.cover(.outputsTaken, at: at(2)).isEmpty)
        #expect(s.hold == .held && s.holdsInput && s.cover.outputsHeld)
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 10)
        _ = s.verified(true, at: at(end))
        #expect(!s.holdsInput)
        #expect(s.timer(at: at(end + 500_000)).contains(.cover(.releaseOutputs)))
        #expect(s.hold == .released && s.cover.state == .uncovering)
        #expect(s.cover(.outputsReleased, at: at(end + 510_000)) == [.cover(.handBackTerminal)])
        #expect(s.cover(.terminalHandedBack, at: at(end + 520_000)) == [.cover(.handedOver)])
        #expect(s.cover.state == .uncovered && !s.cover.outputsHeld && !s.cover.keepsCoveredAtExit)
        return (s, end + 520_000)
    }

    /// After the hand-over, a lock asks for our VT first and is carried out only once the
    /// outputs are taken; status reads `taking` meanwhile.
    @Test func aLockAfterTheHandOverSwitchesToOurVTThenLocks() {
        var (s, t) = handedOverWithATerminal()
        #expect(s.lock(at: at(t + 1)) == [.cover(.showTerminal)])
        #expect(s.hold == .taking(.lock) && s.cover.display(outputLost: false) == .taking)
        #expect(s.cover(.terminalShown, at: at(t + 2)) == [.cover(.takeOutputs)])
        let taken = s.cover(.outputsTaken, at: at(t + 3))
        #expect(taken.contains(.grabInput) && taken.contains(.notify(.locked)))
        #expect(s.hold == .held && s.holdsInput && s.session.state == .locked)
        #expect(s.cover.state == .covered && s.cover.keepsCoveredAtExit)
    }

    /// A lock during the accept hold's hand-over (the clearing frame not shown yet): the
    /// outputs were never let go, so they are taken back with no VT switch.
    @Test func aLockDuringTheHandOverTakesTheOutputsWithoutASwitch() {
        var s = makeScreen()
        s.covers(withTerminal: true)
        _ = s.begin(at: at(0))
        _ = s.cover(.start(inPlace: false), at: at(0))
        _ = s.cover(.terminalShown, at: at(1))
        _ = s.cover(.outputsTaken, at: at(2))
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 10)
        _ = s.verified(true, at: at(end))
        _ = s.timer(at: at(end + 500_000))
        #expect(s.lock(at: at(end + 500_001)) == [.cover(.takeOutputs)])
        #expect(s.cover(.outputsTaken, at: at(end + 500_002)).contains(.notify(.locked)))
    }

    /// An enrollment waiting for the display gives way to a lock: the display, once taken,
    /// locks (the enrollment does not start).
    @Test func aLockOvertakesAnEnrollmentWaitingForTheDisplay() throws {
        var (s, t) = handedOverWithATerminal()
        #expect(try s.beginEnrollment(.pattern, hasSecret: true, at: at(t + 1)) == [.cover(.showTerminal)])
        #expect(s.hold == .taking(.enroll(.pattern)))
        let cancelled = s.lock(at: at(t + 2))
        #expect(cancelled == [.notify(.enrollFailed(method: .pattern, reason: "cancelled by a lock request"))])
        #expect(s.hold == .taking(.lock))
        _ = s.cover(.terminalShown, at: at(t + 3))
        let taken = s.cover(.outputsTaken, at: at(t + 4))
        #expect(taken.contains(.notify(.locked)) && s.enrollment == nil && s.session.state == .locked)
    }

    /// A refused lock keeps the device handed over and the lock pending; our VT shown late
    /// (its owner let go) carries the lock out through the lock screen.
    @Test func aRefusedLockIsCarriedOutWhenOurVTIsShownLate() {
        var (s, t) = handedOverWithATerminal()
        _ = s.cover(.lockRequested, at: at(t))
        #expect(s.lock(at: at(t + 1)) == [.cover(.showTerminal)])
        let why = "the switch to VT 8 did not complete within 2000 ms"
        #expect(s.cover(.terminalFailed(why), at: at(t + 2)) == [.cover(.answerLockRequests(refusal: why))])
        #expect(s.hold == .released && s.cover.lockPending && !s.holdsInput)
        // Late: the lock screen asks for the display again, and our VT is already shown.
        #expect(s.cover(.terminalShown, at: at(t + 3)) == [.cover(.showTerminal)])
        #expect(s.cover(.terminalShown, at: at(t + 4)) == [.cover(.takeOutputs)])
        #expect(s.cover(.outputsTaken, at: at(t + 5)).contains(.notify(.locked)))
        #expect(s.hold == .held && !s.cover.lockPending)
    }

    /// Started handed over (the daemon before was unlocked): nothing is held, and the
    /// cover is uncovered from the start.
    @Test func aStartHandedOverHoldsNothing() {
        var s = makeScreen()
        s.covers(withTerminal: true)
        #expect(s.beginHandedOver(unlockedBy: .pattern, since: at(0), at: at(1)) != nil)
        #expect(s.hold == .released && !s.holdsInput && s.cover.state == .uncovered)
        #expect(s.lock(at: at(2)) == [.cover(.showTerminal)])
    }

    /// Taking the display or the input is what must wait for "locked" on record.
    @Test func whatTakesTheDisplayOrTheInput() {
        #expect(LockScreen.Action.grabInput.takesDisplayOrInput)
        #expect(LockScreen.Action.cover(.showTerminal).takesDisplayOrInput)
        #expect(LockScreen.Action.cover(.takeOutputs).takesDisplayOrInput)
        #expect(!LockScreen.Action.cover(.releaseOutputs).takesDisplayOrInput)
        #expect(!LockScreen.Action.releaseInput.takesDisplayOrInput)
        #expect(!LockScreen.Action.redraw.takesDisplayOrInput)
    }
}
