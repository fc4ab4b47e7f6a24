import Testing
@testable import TouchlockCore

/// The lock screen's cover is its one record of who has the display and the input: `hold`
/// and `holdsInput` are read off it, and what the way of covering reports comes back
/// through the lock screen.
@Suite struct LockScreenCoverTests {
    /// A screen asked for at start (a VT of its own, or a compositor's lock), covered,
    /// unlocked by [0, 1, 2] and handed over.
    func handedOverAfterACover() -> (LockScreen, Int64) {
        var s = makeScreen()
        s.covers(coveredAtStart: false)
        _ = s.begin(at: at(0))
        #expect(s.cover(.start, at: at(0)) == [.cover(.ask(.cover))])
        #expect(s.hold == .held && s.holdsInput && s.cover.display(outputLost: false) == .taking)
        #expect(s.cover(.reported(.covered), at: at(2)).isEmpty)
        #expect(s.hold == .held && s.holdsInput && s.cover.state == .covered)
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 10)
        _ = s.verified(true, at: at(end))
        #expect(!s.holdsInput)
        #expect(s.timer(at: at(end + 500_000)).contains(.cover(.ask(.uncover))))
        #expect(s.hold == .released && s.cover.state == .uncovering)
        #expect(s.cover(.reported(.uncovered), at: at(end + 520_000)) == [.cover(.handedOver)])
        #expect(s.cover.state == .uncovered && !s.cover.keepsCoveredAtExit)
        return (s, end + 520_000)
    }

    /// After the hand-over, a lock asks for the display and is carried out only once it
    /// is covered; status reads `taking` meanwhile.
    @Test func aLockAfterTheHandOverAsksForTheDisplayThenLocks() {
        var (s, t) = handedOverAfterACover()
        #expect(s.lock(at: at(t + 1)) == [.cover(.ask(.cover))])
        #expect(s.hold == .taking(.lock) && s.cover.display(outputLost: false) == .taking)
        let taken = s.cover(.reported(.covered), at: at(t + 3))
        #expect(taken.contains(.grabInput) && taken.contains(.notify(.locked)))
        #expect(s.hold == .held && s.holdsInput && s.session.state == .locked)
        #expect(s.cover.state == .covered && s.cover.keepsCoveredAtExit)
    }

    /// A lock during the accept hold's hand-over (the clearing frame not shown yet): the
    /// cover is asked at once (the way of covering calls the hand-over off).
    @Test func aLockDuringTheHandOverAsksForTheDisplayAtOnce() {
        var s = makeScreen()
        s.covers(coveredAtStart: false)
        _ = s.begin(at: at(0))
        _ = s.cover(.start, at: at(0))
        _ = s.cover(.reported(.covered), at: at(2))
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 10)
        _ = s.verified(true, at: at(end))
        _ = s.timer(at: at(end + 500_000))
        #expect(s.lock(at: at(end + 500_001)) == [.cover(.ask(.cover))])
        #expect(s.cover(.reported(.covered), at: at(end + 500_002)).contains(.notify(.locked)))
    }

    /// An enrollment waiting for the display gives way to a lock: the display, once taken,
    /// locks (the enrollment does not start).
    @Test func aLockOvertakesAnEnrollmentWaitingForTheDisplay() throws {
        var (s, t) = handedOverAfterACover()
        #expect(try s.beginEnrollment(.pattern, hasSecret: true, at: at(t + 1)) == [.cover(.ask(.cover))])
        #expect(s.hold == .taking(.enroll(.pattern)))
        let cancelled = s.lock(at: at(t + 2))
        #expect(cancelled == [.notify(.enrollFailed(method: .pattern, reason: "cancelled by a lock request"))])
        #expect(s.hold == .taking(.lock))
        let taken = s.cover(.reported(.covered), at: at(t + 4))
        #expect(taken.contains(.notify(.locked)) && s.enrollment == nil && s.session.state == .locked)
    }

    /// A refused lock keeps the device handed over and the lock pending; the display
    /// available late (our VT's owner let go) carries the lock out through the lock screen.
    @Test func aRefusedLockIsCarriedOutWhenTheDisplayIsAvailableLate() {
        var (s, t) = handedOverAfterACover()
        _ = s.cover(.lockRequested, at: at(t))
        #expect(s.lock(at: at(t + 1)) == [.cover(.ask(.cover))])
        let why = "the switch to VT 8 did not complete within 2000 ms"
        #expect(s.cover(.reported(.refused(why)), at: at(t + 2)) == [.cover(.answerLockRequests(refusal: why))])
        #expect(s.hold == .released && s.cover.lockPending && !s.holdsInput)
        // Late: the lock screen asks for the display again.
        #expect(s.cover(.reported(.available), at: at(t + 3)) == [.cover(.ask(.cover))])
        #expect(s.cover(.reported(.covered), at: at(t + 5)).contains(.notify(.locked)))
        #expect(s.hold == .held && !s.cover.lockPending)
    }

    /// Started handed over (the daemon before was unlocked): nothing is held, and the
    /// cover is uncovered from the start.
    @Test func aStartHandedOverHoldsNothing() {
        var s = makeScreen()
        s.covers(coveredAtStart: false)
        #expect(s.beginHandedOver(unlockedBy: .pattern, since: at(0), at: at(1)) != nil)
        #expect(s.hold == .released && !s.holdsInput && s.cover.state == .uncovered)
        #expect(s.lock(at: at(2)) == [.cover(.ask(.cover))])
    }

    /// Taking the display or the input is what must wait for "locked" on record.
    @Test func whatTakesTheDisplayOrTheInput() {
        #expect(LockScreen.Action.grabInput.takesDisplayOrInput)
        #expect(LockScreen.Action.cover(.ask(.cover)).takesDisplayOrInput)
        #expect(!LockScreen.Action.cover(.ask(.uncover)).takesDisplayOrInput)
        #expect(!LockScreen.Action.cover(.ask(.letGo)).takesDisplayOrInput)
        #expect(!LockScreen.Action.releaseInput.takesDisplayOrInput)
        #expect(!LockScreen.Action.redraw.takesDisplayOrInput)
    }
}
