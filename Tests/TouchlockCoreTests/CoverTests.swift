import Testing
@testable import TouchlockCore

/// The hand-off of the screen between the lock screen and the kiosk, as the daemon runs
/// it, without a kernel: each event a VT switch, DRM master or a client brings, and what
/// the daemon is asked to do next.
@Suite struct CoverTests {
    /// Started handed over (a restart while unlocked, nobody holding the card): the
    /// outputs are let go at once, so the daemon holds no DRM master while the kiosk's
    /// compositor may start and take the card; a lock takes them back.
    @Test func aStartHandedOverLetsTheOutputsGo() {
        var c = Cover(hasTerminal: true, uncovered: true)
        #expect(c.start() == [.letOutputsGo])
        #expect(c.state == .uncovered && !c.outputsHeld && c.display(outputLost: false) == .handedOver)
        #expect(c.coverAsked(for: .lock) == [.showTerminal])
        var noVT = Cover(hasTerminal: false, uncovered: true)
        #expect(noVT.start() == [.letOutputsGo])
    }

    /// Physlock's rule: locked, a stop leaves the screen covered (VT switching locked, the
    /// card kept in systemd's store), whether a restart follows or not; only an explicit
    /// hand-back (the package being removed) gives it back, and unlocked it always goes.
    @Test func aStopWhileLockedStaysCoveredUnlessAHandBackIsAsked() {
        var c = Cover(hasTerminal: true)
        _ = c.start(); _ = c.terminalShown(); _ = c.outputsTaken()
        #expect(c.exit(handBackAsked: false) == .stayCovered)
        #expect(c.exit(handBackAsked: true) == .giveBack)
        var failed = Cover(hasTerminal: true)
        _ = failed.start(); _ = failed.terminalFailed("busy")
        #expect(failed.exit(handBackAsked: false) == .stayCovered)
        let unlocked = Cover(hasTerminal: true, uncovered: true)
        #expect(unlocked.exit(handBackAsked: false) == .giveBack)
    }

    /// A system shutdown while locked lets the screen go (for the shutdown's splash)
    /// without handing it back; unlocked, it is handed back as at any stop.
    @Test func aSystemShutdownWhileLockedReleasesTheScreenWithoutHandingItBack() {
        var c = Cover(hasTerminal: true)
        _ = c.start(); _ = c.terminalShown(); _ = c.outputsTaken()
        #expect(c.exit(handBackAsked: false, systemStopping: true) == .release)
        #expect(c.exit(handBackAsked: true, systemStopping: true) == .giveBack)
        let unlocked = Cover(hasTerminal: true, uncovered: true)
        #expect(unlocked.exit(handBackAsked: false, systemStopping: true) == .giveBack)
        var t = TerminalSwitch(ours: 7)
        _ = t.show(active: 1, at: ms(0))
        _ = t.acquired(at: ms(50))
        #expect(t.exit(.release) == .restore(showing: nil))
        #expect(t.exit(.stayCovered) == .leaveLocked)
        #expect(t.exit(.giveBack) == .restore(showing: 1))
    }

    /// Locked from the start over a kiosk: our VT first, then the outputs.
    @Test func aStartOnAVTSwitchesThenTakesTheOutputs() {
        var c = Cover(hasTerminal: true)
        #expect(c.start() == [.showTerminal])
        #expect(c.display(outputLost: false) == .taking)
        #expect(c.terminalShown() == [.takeOutputs])
        #expect(c.outputsTaken().isEmpty)  // nobody to tell: the lock screen held it from the start
        #expect(c.state == .covered && c.display(outputLost: false) == .shown)
        #expect(c.display(outputLost: true) == .notShown)
        #expect(c.keepsCoveredAtExit)
    }

    /// A boot splash that let DRM master go: the lock screen is drawn on the VT on
    /// screen first, then ours is asked for; its switch failing (the splash's daemon
    /// died in the middle of it) leaves the lock screen where it is, and the late switch
    /// takes the outputs again on ours.
    @Test func aStartWithTheDisplayFreeDrawsBeforeTheSwitch() {
        var c = Cover(hasTerminal: true)
        #expect(c.start(inPlace: true) == [.takeOutputs])
        #expect(c.outputsTaken() == [.showTerminal])
        #expect(c.outputsHeld)
        #expect(c.state == .covering(.startup) && c.display(outputLost: false) == .taking)
        #expect(c.terminalFailed("timeout").isEmpty)
        #expect(c.state == .notCovered("timeout") && c.outputsHeld)
        #expect(c.keepsCoveredAtExit)
        #expect(c.terminalShown() == [.takeOutputs])
        #expect(c.outputsTaken().isEmpty)
        #expect(c.state == .covered)
    }

    /// The display taken meanwhile: the usual order, our VT first.
    @Test func aStartInPlaceThatIsRefusedSwitchesFirst() {
        var c = Cover(hasTerminal: true)
        #expect(c.start(inPlace: true) == [.takeOutputs])
        #expect(c.outputsRefused("EBUSY") == [.showTerminal])
        #expect(!c.outputsHeld && c.failure == nil)
        #expect(c.terminalShown() == [.takeOutputs])
        #expect(c.outputsTaken().isEmpty)
        #expect(c.state == .covered)
    }

    /// Unlocked before our VT was ever shown (its switch timed out): the outputs go, and
    /// the hand-back finds the kiosk's VT on screen already.
    @Test func anUnlockBeforeTheSwitchInPlaceHandsOver() {
        var c = Cover(hasTerminal: true)
        var t = TerminalSwitch(ours: 8, timeout: .milliseconds(500))
        _ = c.start(inPlace: true); _ = c.outputsTaken()
        _ = t.show(active: 1, at: Instant(microseconds: 0))
        _ = c.terminalFailed("timeout")
        _ = t.timerFired(at: Instant(microseconds: 500_000))
        #expect(c.uncoverAsked() == [.releaseOutputs])
        #expect(c.outputsReleased() == [.handBackTerminal])
        #expect(t.handBack(at: Instant(microseconds: 600_000)) == [.handedBack])
        #expect(c.terminalHandedBack() == [.handedOver])
        #expect(c.state == .uncovered && !t.showWanted)
    }

    @Test func withoutAVTTheDisplayIsOursFromTheStart() {
        var c = Cover(hasTerminal: false)
        #expect(c.start().isEmpty)
        #expect(c.state == .covered)
    }

    /// The unlock, then `lock`: uncovered through the hand-back, covered through our VT.
    @Test func anUnlockHandsBackAndALockCoversAgain() {
        var c = Cover(hasTerminal: true)
        _ = c.start(); _ = c.terminalShown(); _ = c.outputsTaken()
        #expect(c.uncoverAsked() == [.releaseOutputs])
        #expect(c.display(outputLost: false) == .handingOver)
        #expect(!c.keepsCoveredAtExit)
        #expect(c.outputsReleased() == [.handBackTerminal])
        #expect(c.display(outputLost: false) == .handingOver)  // the kiosk's VT is not shown yet
        #expect(c.terminalHandedBack() == [.handedOver])
        #expect(c.display(outputLost: false) == .handedOver)
        // `lock`: the request waits for the display.
        #expect(c.lockRequested().isEmpty)
        #expect(c.coverAsked(for: .lock) == [.showTerminal])
        #expect(c.settle().isEmpty)  // not answered while the switch is under way
        #expect(c.terminalShown() == [.takeOutputs])
        #expect(c.outputsTaken() == [.displayTaken, .answerLockRequests(refusal: nil)])
    }

    /// Without a VT the hand-back is DRM master alone.
    @Test func withoutAVTTheHandBackEndsWithTheOutputs() {
        var c = Cover(hasTerminal: false)
        _ = c.start()
        _ = c.uncoverAsked()
        #expect(c.outputsReleased() == [.handedOver])
        #expect(c.state == .uncovered)
        #expect(c.coverAsked(for: .lock) == [.takeOutputs])
    }

    /// The VT owner does not let its VT go: the lock is refused, said so to the client and
    /// kept pending; when the owner lets go after all, the lock is carried out.
    @Test func aRefusedLockIsKeptAndCarriedOutWhenOurVTIsShownLate() {
        var c = Cover(hasTerminal: true, uncovered: true)
        _ = c.lockRequested()
        _ = c.coverAsked(for: .lock)
        let why = "the switch to VT 8 did not complete within 2000 ms"
        #expect(c.terminalFailed(why) == [.displayRefused(why), .answerLockRequests(refusal: why)])
        #expect(c.state == .uncovered && c.lockPending && c.display(outputLost: false) == .handedOver)
        #expect(c.display(outputLost: true) == .notShown)  // another process holds master
        #expect(c.failure == why)
        // The owner resumes; the kernel completes the switch: the lock screen's lock.
        #expect(c.terminalShown() == [.lock])
        #expect(!c.lockPending)
        #expect(c.coverAsked(for: .lock) == [.showTerminal])
        #expect(c.terminalShown() == [.takeOutputs])
        #expect(c.outputsTaken() == [.displayTaken])
        #expect(c.failure == nil)
    }

    /// A late switch with nothing pending (an enrollment that timed out) goes straight back.
    @Test func aLateSwitchWithNothingPendingHandsStraightBack() {
        var c = Cover(hasTerminal: true, uncovered: true)
        _ = c.coverAsked(for: .enroll(.pattern))
        #expect(c.terminalFailed("busy") == [.displayRefused("busy")])
        #expect(!c.lockPending && c.refusal == "busy")
        #expect(c.terminalShown() == [.handBackTerminal])
        #expect(c.terminalHandedBack() == [.handedOver])
    }

    /// A new `lock` request drops the pending one and a refusal the last client was told.
    @Test func aNewLockRequestStartsAfresh() {
        var c = Cover(hasTerminal: true, uncovered: true)
        _ = c.lockRequested()
        _ = c.coverAsked(for: .lock)
        _ = c.terminalFailed("busy")
        #expect(c.lockPending)
        #expect(c.lockRequested().isEmpty)
        #expect(!c.lockPending && c.refusal == nil)
        _ = c.coverAsked(for: .lock)
        _ = c.terminalShown()
        #expect(c.outputsTaken() == [.displayTaken, .answerLockRequests(refusal: nil)])
    }

    /// Master refused on the outputs after our VT was shown: our VT goes back too.
    @Test func outputsRefusedAfterTheSwitchHandTheVTBack() {
        var c = Cover(hasTerminal: true, uncovered: true)
        _ = c.lockRequested()
        _ = c.coverAsked(for: .lock)
        _ = c.terminalShown()
        let why = "drmSetMaster: Permission denied"
        #expect(c.outputsRefused(why)
                == [.displayRefused(why), .handBackTerminal, .answerLockRequests(refusal: why)])
        #expect(c.lockPending)
    }

    /// A start whose VT switch fails: locked, not shown, and status says so; a `lock`
    /// request tries the switch again and is answered once it is done.
    @Test func aFailedStartIsNotCoveredUntilALockRequestTakesIt() {
        var c = Cover(hasTerminal: true)
        _ = c.start()
        #expect(c.terminalFailed("timed out").isEmpty)
        #expect(c.state == .notCovered("timed out") && c.display(outputLost: false) == .notShown)
        #expect(c.keepsCoveredAtExit)
        #expect(c.lockRequested() == [.showTerminal])
        #expect(c.settle().isEmpty)
        #expect(c.terminalShown() == [.takeOutputs])
        #expect(c.outputsTaken() == [.answerLockRequests(refusal: nil)])
        #expect(c.state == .covered)
    }

    /// A lock while already covered is answered at once.
    @Test func aLockWhileCoveredIsAnsweredAtOnce() {
        var c = Cover(hasTerminal: true)
        _ = c.start(); _ = c.terminalShown(); _ = c.outputsTaken()
        #expect(c.lockRequested().isEmpty)
        #expect(c.settle() == [.answerLockRequests(refusal: nil)])
        #expect(c.settle().isEmpty)  // once
    }

    /// Restarted while unlocked: the kiosk keeps the screen, nothing is taken at start (and
    /// whatever opening the card gave is let go).
    @Test func aDaemonStartedUnlockedTakesNothing() {
        var c = Cover(hasTerminal: true, uncovered: true)
        #expect(c.start() == [.letOutputsGo])
        #expect(c.display(outputLost: false) == .handedOver && !c.keepsCoveredAtExit)
    }

    /// Restarted while locked, on its own VT still shown: shown at once, the outputs taken.
    @Test func aDaemonStartedOnItsOwnShownVTCoversAtOnce() {
        var c = Cover(hasTerminal: true)
        var t = TerminalSwitch(ours: 8, returnTo: 1)
        #expect(c.start() == [.showTerminal])
        #expect(t.show(active: 8, at: Instant(microseconds: 0)) == [.lockSwitching, .shown])
        #expect(c.terminalShown() == [.takeOutputs])
        #expect(c.outputsTaken().isEmpty && c.state == .covered)
        // After the unlock it hands back to the VT kept from before.
        _ = c.uncoverAsked()
        #expect(c.outputsReleased() == [.handBackTerminal])
        #expect(t.handBack(at: Instant(microseconds: 1000)).contains(.activate(1)))
    }

    // What only the VM reached before: the hand-off, a refusal and its retry, a restart
    // on our own VT and the replies to `lock`, each as the sequence a device goes through.

    /// A `lock` while the hand-over after an unlock waits for its clearing frame: the
    /// outputs were never let go, so they are taken back with no VT switch, and the
    /// kiosk's VT is never shown in between.
    @Test func aLockDuringTheHandOverTakesTheOutputsBackWithoutASwitch() {
        var c = Cover(hasTerminal: true)
        _ = c.start(); _ = c.terminalShown(); _ = c.outputsTaken()
        #expect(c.uncoverAsked() == [.releaseOutputs])
        #expect(c.lockRequested().isEmpty)
        #expect(c.coverAsked(for: .lock) == [.takeOutputs])
        #expect(c.display(outputLost: false) == .taking)
        #expect(c.outputsTaken() == [.displayTaken, .answerLockRequests(refusal: nil)])
        // The release the Presenter called off never reports; a late one changes nothing.
        #expect(c.outputsReleased().isEmpty)
        #expect(c.terminalHandedBack().isEmpty)
        #expect(c.state == .covered && c.keepsCoveredAtExit)
    }

    /// A start while the kiosk's compositor holds DRM master: our VT is shown but master
    /// is refused, so the VT goes back, status says `not_shown` and why, and the machine
    /// stays locked; the kiosk's VT coming back does not count as a hand-over. The next
    /// `lock` switches again, and this time master is free.
    @Test func aStartRefusedForDRMMasterGivesTheVTBackAndALockRetries() {
        var c = Cover(hasTerminal: true)
        #expect(c.start() == [.showTerminal])
        #expect(c.terminalShown() == [.takeOutputs])
        let why = "drmSetMaster: Device or resource busy"
        #expect(c.outputsRefused(why) == [.handBackTerminal])
        #expect(c.state == .notCovered(why) && c.display(outputLost: false) == .notShown && c.failure == why)
        #expect(c.terminalHandedBack().isEmpty)  // no `handed_over`: still locked
        #expect(c.state == .notCovered(why) && c.keepsCoveredAtExit)
        #expect(c.lockRequested() == [.showTerminal])
        #expect(c.display(outputLost: false) == .taking)
        #expect(c.terminalShown() == [.takeOutputs])
        #expect(c.outputsTaken() == [.answerLockRequests(refusal: nil)])
        #expect(c.state == .covered && c.failure == nil && c.display(outputLost: false) == .shown)
    }

    /// A `lock` refused because master is held, tried again by the next `lock` (the
    /// compositor let go meanwhile): the first client is told why, the second is answered
    /// with the lock, and the refusal is not said twice.
    @Test func aLockRefusedForDRMMasterIsCarriedOutByTheNextLockRequest() {
        var c = Cover(hasTerminal: true, uncovered: true)
        _ = c.lockRequested()
        #expect(c.coverAsked(for: .lock) == [.showTerminal])
        #expect(c.terminalShown() == [.takeOutputs])
        let why = "drmSetMaster: Permission denied"
        #expect(c.outputsRefused(why)
                == [.displayRefused(why), .handBackTerminal, .answerLockRequests(refusal: why)])
        #expect(c.lockPending && c.state == .uncovered)
        // Our VT goes back to the kiosk: that is no new hand-over to announce.
        #expect(c.terminalHandedBack().isEmpty)
        #expect(c.lockRequested().isEmpty)
        #expect(!c.lockPending)
        #expect(c.coverAsked(for: .lock) == [.showTerminal])
        #expect(c.settle().isEmpty)
        #expect(c.terminalShown() == [.takeOutputs])
        #expect(c.outputsTaken() == [.displayTaken, .answerLockRequests(refusal: nil)])
        #expect(c.failure == nil && c.refusal == nil && c.state == .covered)
    }

    /// A retry after a failed start that is refused again: the waiting client is told the
    /// new reason, status keeps it, and the machine stays locked for the next try.
    @Test func aRetryRefusedAgainAnswersWithTheNewReason() {
        var c = Cover(hasTerminal: true)
        _ = c.start()
        _ = c.terminalFailed("the switch to VT 8 did not complete within 2000 ms")
        #expect(c.lockRequested() == [.showTerminal])
        #expect(c.terminalShown() == [.takeOutputs])
        let why = "drmSetMaster: Device or resource busy"
        #expect(c.outputsRefused(why) == [.handBackTerminal, .answerLockRequests(refusal: why)])
        #expect(c.state == .notCovered(why) && c.failure == why && c.keepsCoveredAtExit)
        #expect(c.lockRequested() == [.showTerminal])
    }

    /// Restarted while locked on its own VT, with a `lock` request that comes in before
    /// the outputs are taken: it waits for them and is answered once, with the lock.
    @Test func aLockDuringARestartOnOurOwnVTWaitsForTheOutputs() {
        var c = Cover(hasTerminal: true)
        var t = TerminalSwitch(ours: 8, returnTo: 1)
        #expect(c.start() == [.showTerminal])
        #expect(c.lockRequested().isEmpty)
        #expect(c.settle().isEmpty)  // under way: not answered yet
        #expect(t.show(active: 8, at: Instant(microseconds: 0)) == [.lockSwitching, .shown])
        #expect(c.terminalShown() == [.takeOutputs])
        #expect(c.outputsTaken() == [.answerLockRequests(refusal: nil)])
        #expect(c.settle().isEmpty)
    }

    /// Several `lock` requests waiting on one switch get one answer each, all at once:
    /// the refusal to every one of them, and nothing left over for a later settle.
    @Test func lockRequestsWaitingOnOneSwitchAreAnsweredTogether() {
        var c = Cover(hasTerminal: true, uncovered: true)
        _ = c.lockRequested()
        _ = c.coverAsked(for: .lock)
        #expect(c.lockRequested().isEmpty)  // a second client while the switch is under way
        #expect(c.settle().isEmpty)
        #expect(c.terminalFailed("busy") == [.displayRefused("busy"), .answerLockRequests(refusal: "busy")])
        #expect(c.settle().isEmpty)
    }

    /// An enrollment's refusal is its own: a `lock` after it is not told that refusal.
    @Test func anEnrollmentsRefusalIsNotALocksAnswer() {
        var c = Cover(hasTerminal: true, uncovered: true)
        c.enrollmentRequested()
        _ = c.coverAsked(for: .enroll(.code))
        _ = c.terminalFailed("busy")
        #expect(c.refusal == "busy" && !c.lockPending)
        _ = c.lockRequested()
        #expect(c.coverAsked(for: .lock) == [.showTerminal])
        #expect(c.terminalShown() == [.takeOutputs])
        #expect(c.outputsTaken() == [.displayTaken, .answerLockRequests(refusal: nil)])
    }

    /// Impossible events are logged and change nothing.
    @Test func impossibleEventsChangeNothing() {
        var c = Cover(hasTerminal: true, uncovered: true)
        #expect(c.outputsTaken().isEmpty && c.state == .uncovered)
        #expect(c.outputsRefused("x").isEmpty && c.state == .uncovered)
        #expect(c.uncoverAsked().isEmpty && c.state == .uncovered)
        #expect(c.terminalHandedBack().isEmpty)
        #expect(c.outputsReleased().isEmpty)
    }
}
