import Testing
@testable import TouchlockCore

/// The cover and the VT hand-off's steps together, as the daemon and `TerminalCovering`
/// run them: the cover's requests go to the steps, the steps' reports back to the cover;
/// what is left is what the device is asked to do (`vt`) and the cover's answers (`cover`).
struct CoverOnVT {
    enum Out: Hashable { case vt(TerminalCover.Action), cover(Cover.Action) }
    var cover: Cover
    var steps: TerminalCover
    /// What `TerminalCovering` reads at each request: DRM master free, another VT shown.
    var displayFree = false

    init(uncovered: Bool = false, coveredAtStart: Bool = false) {
        cover = Cover(coveredAtStart: coveredAtStart, uncovered: uncovered)
        steps = TerminalCover(outputsHeld: coveredAtStart && !uncovered)
    }

    private mutating func run(_ actions: [Cover.Action]) -> [Out] {
        var out: [Out] = []
        for a in actions {
            if case .ask(let r) = a {
                out += run(steps.handle(.asked(r, displayFree: displayFree)))
            } else {
                out.append(.cover(a))
            }
        }
        return out
    }

    private mutating func run(_ actions: [TerminalCover.Action]) -> [Out] {
        var out: [Out] = []
        for a in actions {
            if case .report(let r) = a { out += run(cover.handle(.reported(r))) } else { out.append(.vt(a)) }
        }
        return out
    }

    mutating func start(displayFree: Bool = false) -> [Out] {
        self.displayFree = displayFree
        defer { self.displayFree = false }
        return run(cover.start())
    }
    mutating func coverAsked(for purpose: LockScreen.Purpose) -> [Out] { run(cover.coverAsked(for: purpose)) }
    mutating func uncoverAsked() -> [Out] { run(cover.uncoverAsked()) }
    mutating func lockRequested() -> [Out] { run(cover.lockRequested()) }
    mutating func enrollmentRequested() { cover.enrollmentRequested() }
    mutating func settle() -> [Out] { run(cover.settle()) }
    mutating func shown() -> [Out] { run(steps.handle(.shown)) }
    mutating func showFailed(_ why: String) -> [Out] { run(steps.handle(.showFailed(why))) }
    mutating func outputsTaken() -> [Out] { run(steps.handle(.outputsTaken)) }
    mutating func outputsRefused(_ why: String) -> [Out] { run(steps.handle(.outputsRefused(why))) }
    mutating func outputsReleased() -> [Out] { run(steps.handle(.outputsReleased)) }
    mutating func handedBack() -> [Out] { run(steps.handle(.handedBack)) }
}

/// The hand-off of the screen between the lock screen and the kiosk, as the daemon runs
/// it, without a kernel: each event a VT switch, DRM master or a client brings, and what
/// the daemon is asked to do next.
@Suite struct CoverTests {
    /// Started handed over (a restart while unlocked, nobody holding the card): the
    /// outputs are let go at once, so the daemon holds no DRM master while the kiosk's
    /// compositor may start and take the card; a lock takes them back.
    @Test func aStartHandedOverLetsTheOutputsGo() {
        var c = CoverOnVT(uncovered: true)
        #expect(c.start() == [.vt(.letOutputsGo)])
        #expect(c.cover.state == .uncovered && !c.steps.outputsHeld && c.cover.display(outputLost: false) == .handedOver)
        #expect(c.coverAsked(for: .lock) == [.vt(.show)])
        var noVT = CoverOnVT(uncovered: true, coveredAtStart: true)
        #expect(noVT.start() == [.vt(.letOutputsGo)])
    }

    /// Physlock's rule: locked, a stop leaves the screen covered (VT switching locked, the
    /// card kept in systemd's store), whether a restart follows or not; only an explicit
    /// hand-back (the package being removed) gives it back, and unlocked it always goes.
    @Test func aStopWhileLockedStaysCoveredUnlessAHandBackIsAsked() {
        var c = CoverOnVT()
        _ = c.start(); _ = c.shown(); _ = c.outputsTaken()
        #expect(c.cover.exit(handBackAsked: false) == .stayCovered)
        #expect(c.cover.exit(handBackAsked: true) == .giveBack)
        var failed = CoverOnVT()
        _ = failed.start(); _ = failed.showFailed("busy")
        #expect(failed.cover.exit(handBackAsked: false) == .stayCovered)
        let unlocked = CoverOnVT(uncovered: true)
        #expect(unlocked.cover.exit(handBackAsked: false) == .giveBack)
    }

    /// A system shutdown while locked lets the screen go (for the shutdown's splash)
    /// without handing it back; unlocked, it is handed back as at any stop.
    @Test func aSystemShutdownWhileLockedReleasesTheScreenWithoutHandingItBack() {
        var c = CoverOnVT()
        _ = c.start(); _ = c.shown(); _ = c.outputsTaken()
        #expect(c.cover.exit(handBackAsked: false, systemStopping: true) == .release)
        #expect(c.cover.exit(handBackAsked: true, systemStopping: true) == .giveBack)
        let unlocked = CoverOnVT(uncovered: true)
        #expect(unlocked.cover.exit(handBackAsked: false, systemStopping: true) == .giveBack)
        var t = TerminalSwitch(ours: 7)
        _ = t.show(active: 1, at: ms(0))
        _ = t.acquired(at: ms(50))
        #expect(t.exit(.release) == .restore(showing: nil))
        #expect(t.exit(.stayCovered) == .leaveLocked)
        #expect(t.exit(.giveBack) == .restore(showing: 1))
    }

    /// Locked from the start over a kiosk: our VT first, then the outputs.
    @Test func aStartOnAVTSwitchesThenTakesTheOutputs() {
        var c = CoverOnVT()
        #expect(c.start() == [.vt(.show)])
        #expect(c.cover.display(outputLost: false) == .taking)
        #expect(c.shown() == [.vt(.takeOutputs)])
        #expect(c.outputsTaken().isEmpty)  // nobody to tell: the lock screen held it from the start
        #expect(c.cover.state == .covered && c.cover.display(outputLost: false) == .shown)
        #expect(c.cover.display(outputLost: true) == .notShown)
        #expect(c.cover.keepsCoveredAtExit)
    }

    /// A boot splash that let DRM master go: the lock screen is drawn on the VT on
    /// screen first, then ours is asked for; its switch failing (the splash's daemon
    /// died in the middle of it) leaves the lock screen where it is, and the late switch
    /// takes the outputs again on ours.
    @Test func aStartWithTheDisplayFreeDrawsBeforeTheSwitch() {
        var c = CoverOnVT()
        #expect(c.start(displayFree: true) == [.vt(.takeOutputs)])
        #expect(c.outputsTaken() == [.vt(.show)])
        #expect(c.steps.outputsHeld)
        #expect(c.cover.state == .covering(.startup) && c.cover.display(outputLost: false) == .taking)
        #expect(c.showFailed("timeout").isEmpty)
        #expect(c.cover.state == .notCovered("timeout") && c.steps.outputsHeld)
        #expect(c.cover.keepsCoveredAtExit)
        // Our VT shown late: the cover tries again (the switch asked again finds it shown).
        #expect(c.shown() == [.vt(.show)])
        #expect(c.cover.state == .covering(.retry))
        #expect(c.shown() == [.vt(.takeOutputs)])
        #expect(c.outputsTaken().isEmpty)
        #expect(c.cover.state == .covered)
    }

    /// The display taken meanwhile: the usual order, our VT first.
    @Test func aStartInPlaceThatIsRefusedSwitchesFirst() {
        var c = CoverOnVT()
        #expect(c.start(displayFree: true) == [.vt(.takeOutputs)])
        #expect(c.outputsRefused("EBUSY") == [.vt(.show)])
        #expect(!c.steps.outputsHeld && c.cover.failure == nil)
        #expect(c.shown() == [.vt(.takeOutputs)])
        #expect(c.outputsTaken().isEmpty)
        #expect(c.cover.state == .covered)
    }

    /// Unlocked before our VT was ever shown (its switch timed out): the outputs go, and
    /// the hand-back finds the kiosk's VT on screen already.
    @Test func anUnlockBeforeTheSwitchInPlaceHandsOver() {
        var c = CoverOnVT()
        var t = TerminalSwitch(ours: 8, timeout: .milliseconds(500))
        _ = c.start(displayFree: true); _ = c.outputsTaken()
        _ = t.show(active: 1, at: Instant(microseconds: 0))
        _ = c.showFailed("timeout")
        _ = t.timerFired(at: Instant(microseconds: 500_000))
        #expect(c.uncoverAsked() == [.vt(.releaseOutputs)])
        #expect(c.outputsReleased() == [.vt(.handBack)])
        #expect(t.handBack(at: Instant(microseconds: 600_000)) == [.handedBack])
        #expect(c.handedBack() == [.cover(.handedOver)])
        #expect(c.cover.state == .uncovered && !t.showWanted)
    }

    @Test func withoutAVTTheDisplayIsOursFromTheStart() {
        var c = CoverOnVT(coveredAtStart: true)
        #expect(c.start().isEmpty)
        #expect(c.cover.state == .covered && c.steps.outputsHeld)
    }

    /// The unlock, then `lock`: uncovered through the hand-back, covered through our VT.
    @Test func anUnlockHandsBackAndALockCoversAgain() {
        var c = CoverOnVT()
        _ = c.start(); _ = c.shown(); _ = c.outputsTaken()
        #expect(c.uncoverAsked() == [.vt(.releaseOutputs)])
        #expect(c.cover.display(outputLost: false) == .handingOver)
        #expect(!c.cover.keepsCoveredAtExit)
        #expect(c.outputsReleased() == [.vt(.handBack)])
        #expect(c.cover.display(outputLost: false) == .handingOver)  // the kiosk's VT is not shown yet
        #expect(c.handedBack() == [.cover(.handedOver)])
        #expect(c.cover.display(outputLost: false) == .handedOver)
        // `lock`: the request waits for the display.
        #expect(c.lockRequested().isEmpty)
        #expect(c.coverAsked(for: .lock) == [.vt(.show)])
        #expect(c.settle().isEmpty)  // not answered while the switch is under way
        #expect(c.shown() == [.vt(.takeOutputs)])
        #expect(c.outputsTaken() == [.cover(.displayTaken), .cover(.answerLockRequests(refusal: nil))])
    }

    /// Without a VT the hand-back is DRM master alone: the executor answers the VT's
    /// steps at once (`shown`, `handedBack`).
    @Test func withoutAVTTheHandBackEndsWithTheOutputs() {
        var c = CoverOnVT(coveredAtStart: true)
        _ = c.start()
        #expect(c.uncoverAsked() == [.vt(.releaseOutputs)])
        #expect(c.outputsReleased() == [.vt(.handBack)])
        #expect(c.handedBack() == [.cover(.handedOver)])
        #expect(c.cover.state == .uncovered && !c.steps.outputsHeld)
        #expect(c.coverAsked(for: .lock) == [.vt(.show)])
        #expect(c.shown() == [.vt(.takeOutputs)])
    }

    /// The VT owner does not let its VT go: the lock is refused, said so to the client and
    /// kept pending; when the owner lets go after all, the lock is carried out.
    @Test func aRefusedLockIsKeptAndCarriedOutWhenOurVTIsShownLate() {
        var c = CoverOnVT(uncovered: true)
        _ = c.lockRequested()
        _ = c.coverAsked(for: .lock)
        let why = "the switch to VT 8 did not complete within 2000 ms"
        #expect(c.showFailed(why) == [.cover(.displayRefused(why)), .cover(.answerLockRequests(refusal: why))])
        #expect(c.cover.state == .uncovered && c.cover.lockPending && c.cover.display(outputLost: false) == .handedOver)
        #expect(c.cover.display(outputLost: true) == .notShown)  // another process holds master
        #expect(c.cover.failure == why)
        // The owner resumes; the kernel completes the switch: the lock screen's lock.
        #expect(c.shown() == [.cover(.lock)])
        #expect(!c.cover.lockPending)
        #expect(c.coverAsked(for: .lock) == [.vt(.show)])
        #expect(c.shown() == [.vt(.takeOutputs)])
        #expect(c.outputsTaken() == [.cover(.displayTaken)])
        #expect(c.cover.failure == nil)
    }

    /// A late switch with nothing pending (an enrollment that timed out) goes straight back.
    @Test func aLateSwitchWithNothingPendingHandsStraightBack() {
        var c = CoverOnVT(uncovered: true)
        _ = c.coverAsked(for: .enroll(.pattern))
        #expect(c.showFailed("busy") == [.cover(.displayRefused("busy"))])
        #expect(!c.cover.lockPending && c.cover.refusal == "busy")
        #expect(c.shown() == [.vt(.handBack)])
        #expect(c.handedBack() == [.cover(.handedOver)])
    }

    /// A new `lock` request drops the pending one and a refusal the last client was told.
    @Test func aNewLockRequestStartsAfresh() {
        var c = CoverOnVT(uncovered: true)
        _ = c.lockRequested()
        _ = c.coverAsked(for: .lock)
        _ = c.showFailed("busy")
        #expect(c.cover.lockPending)
        #expect(c.lockRequested().isEmpty)
        #expect(!c.cover.lockPending && c.cover.refusal == nil)
        _ = c.coverAsked(for: .lock)
        _ = c.shown()
        #expect(c.outputsTaken() == [.cover(.displayTaken), .cover(.answerLockRequests(refusal: nil))])
    }

    /// Master refused on the outputs after our VT was shown: our VT goes back too.
    @Test func outputsRefusedAfterTheSwitchHandTheVTBack() {
        var c = CoverOnVT(uncovered: true)
        _ = c.lockRequested()
        _ = c.coverAsked(for: .lock)
        _ = c.shown()
        let why = "drmSetMaster: Permission denied"
        #expect(c.outputsRefused(why)
                == [.vt(.handBack), .cover(.displayRefused(why)), .cover(.answerLockRequests(refusal: why))])
        #expect(c.cover.lockPending)
    }

    /// A start whose VT switch fails: locked, not shown, and status says so; a `lock`
    /// request tries the switch again and is answered once it is done.
    @Test func aFailedStartIsNotCoveredUntilALockRequestTakesIt() {
        var c = CoverOnVT()
        _ = c.start()
        #expect(c.showFailed("timed out").isEmpty)
        #expect(c.cover.state == .notCovered("timed out") && c.cover.display(outputLost: false) == .notShown)
        #expect(c.cover.keepsCoveredAtExit)
        #expect(c.lockRequested() == [.vt(.show)])
        #expect(c.settle().isEmpty)
        #expect(c.shown() == [.vt(.takeOutputs)])
        #expect(c.outputsTaken() == [.cover(.answerLockRequests(refusal: nil))])
        #expect(c.cover.state == .covered)
    }

    /// A lock while already covered is answered at once.
    @Test func aLockWhileCoveredIsAnsweredAtOnce() {
        var c = CoverOnVT()
        _ = c.start(); _ = c.shown(); _ = c.outputsTaken()
        #expect(c.lockRequested().isEmpty)
        #expect(c.settle() == [.cover(.answerLockRequests(refusal: nil))])
        #expect(c.settle().isEmpty)  // once
    }

    /// Restarted while unlocked: the kiosk keeps the screen, nothing is taken at start (and
    /// whatever opening the card gave is let go).
    @Test func aDaemonStartedUnlockedTakesNothing() {
        var c = CoverOnVT(uncovered: true)
        #expect(c.start() == [.vt(.letOutputsGo)])
        #expect(c.cover.display(outputLost: false) == .handedOver && !c.cover.keepsCoveredAtExit)
    }

    /// Restarted while locked, on its own VT still shown: shown at once, the outputs taken.
    @Test func aDaemonStartedOnItsOwnShownVTCoversAtOnce() {
        var c = CoverOnVT()
        var t = TerminalSwitch(ours: 8, returnTo: 1)
        #expect(c.start() == [.vt(.show)])
        #expect(t.show(active: 8, at: Instant(microseconds: 0)) == [.lockSwitching, .shown])
        #expect(c.shown() == [.vt(.takeOutputs)])
        #expect(c.outputsTaken().isEmpty && c.cover.state == .covered)
        // After the unlock it hands back to the VT kept from before.
        _ = c.uncoverAsked()
        #expect(c.outputsReleased() == [.vt(.handBack)])
        #expect(t.handBack(at: Instant(microseconds: 1000)).contains(.activate(1)))
    }

    // What only the VM reached before: the hand-off, a refusal and its retry, a restart
    // on our own VT and the replies to `lock`, each as the sequence a device goes through.

    /// A `lock` while the hand-over after an unlock waits for its clearing frame: the
    /// outputs were never let go, so they are taken back with no VT switch, and the
    /// kiosk's VT is never shown in between.
    @Test func aLockDuringTheHandOverTakesTheOutputsBackWithoutASwitch() {
        var c = CoverOnVT()
        _ = c.start(); _ = c.shown(); _ = c.outputsTaken()
        #expect(c.uncoverAsked() == [.vt(.releaseOutputs)])
        #expect(c.lockRequested().isEmpty)
        #expect(c.coverAsked(for: .lock) == [.vt(.takeOutputs)])
        #expect(c.cover.display(outputLost: false) == .taking)
        #expect(c.outputsTaken() == [.cover(.displayTaken), .cover(.answerLockRequests(refusal: nil))])
        // The release the Presenter called off never reports; a late one changes nothing.
        #expect(c.outputsReleased().isEmpty)
        #expect(c.handedBack().isEmpty)
        #expect(c.cover.state == .covered && c.cover.keepsCoveredAtExit)
    }

    /// A start while the kiosk's compositor holds DRM master: our VT is shown but master
    /// is refused, so the VT goes back, status says `not_shown` and why, and the machine
    /// stays locked; the kiosk's VT coming back does not count as a hand-over. The next
    /// `lock` switches again, and this time master is free.
    @Test func aStartRefusedForDRMMasterGivesTheVTBackAndALockRetries() {
        var c = CoverOnVT()
        #expect(c.start() == [.vt(.show)])
        #expect(c.shown() == [.vt(.takeOutputs)])
        let why = "drmSetMaster: Device or resource busy"
        #expect(c.outputsRefused(why) == [.vt(.handBack)])
        #expect(c.cover.state == .notCovered(why) && c.cover.display(outputLost: false) == .notShown && c.cover.failure == why)
        #expect(c.handedBack().isEmpty)  // no `handed_over`: still locked
        #expect(c.cover.state == .notCovered(why) && c.cover.keepsCoveredAtExit)
        #expect(c.lockRequested() == [.vt(.show)])
        #expect(c.cover.display(outputLost: false) == .taking)
        #expect(c.shown() == [.vt(.takeOutputs)])
        #expect(c.outputsTaken() == [.cover(.answerLockRequests(refusal: nil))])
        #expect(c.cover.state == .covered && c.cover.failure == nil && c.cover.display(outputLost: false) == .shown)
    }

    /// A `lock` refused because master is held, tried again by the next `lock` (the
    /// compositor let go meanwhile): the first client is told why, the second is answered
    /// with the lock, and the refusal is not said twice.
    @Test func aLockRefusedForDRMMasterIsCarriedOutByTheNextLockRequest() {
        var c = CoverOnVT(uncovered: true)
        _ = c.lockRequested()
        #expect(c.coverAsked(for: .lock) == [.vt(.show)])
        #expect(c.shown() == [.vt(.takeOutputs)])
        let why = "drmSetMaster: Permission denied"
        #expect(c.outputsRefused(why)
                == [.vt(.handBack), .cover(.displayRefused(why)), .cover(.answerLockRequests(refusal: why))])
        #expect(c.cover.lockPending && c.cover.state == .uncovered)
        // Our VT goes back to the kiosk: that is no new hand-over to announce.
        #expect(c.handedBack().isEmpty)
        #expect(c.lockRequested().isEmpty)
        #expect(!c.cover.lockPending)
        #expect(c.coverAsked(for: .lock) == [.vt(.show)])
        #expect(c.settle().isEmpty)
        #expect(c.shown() == [.vt(.takeOutputs)])
        #expect(c.outputsTaken() == [.cover(.displayTaken), .cover(.answerLockRequests(refusal: nil))])
        #expect(c.cover.failure == nil && c.cover.refusal == nil && c.cover.state == .covered)
    }

    /// A retry after a failed start that is refused again: the waiting client is told the
    /// new reason, status keeps it, and the machine stays locked for the next try.
    @Test func aRetryRefusedAgainAnswersWithTheNewReason() {
        var c = CoverOnVT()
        _ = c.start()
        _ = c.showFailed("the switch to VT 8 did not complete within 2000 ms")
        #expect(c.lockRequested() == [.vt(.show)])
        #expect(c.shown() == [.vt(.takeOutputs)])
        let why = "drmSetMaster: Device or resource busy"
        #expect(c.outputsRefused(why) == [.vt(.handBack), .cover(.answerLockRequests(refusal: why))])
        #expect(c.cover.state == .notCovered(why) && c.cover.failure == why && c.cover.keepsCoveredAtExit)
        #expect(c.lockRequested() == [.vt(.show)])
    }

    /// Restarted while locked on its own VT, with a `lock` request that comes in before
    /// the outputs are taken: it waits for them and is answered once, with the lock.
    @Test func aLockDuringARestartOnOurOwnVTWaitsForTheOutputs() {
        var c = CoverOnVT()
        var t = TerminalSwitch(ours: 8, returnTo: 1)
        #expect(c.start() == [.vt(.show)])
        #expect(c.lockRequested().isEmpty)
        #expect(c.settle().isEmpty)  // under way: not answered yet
        #expect(t.show(active: 8, at: Instant(microseconds: 0)) == [.lockSwitching, .shown])
        #expect(c.shown() == [.vt(.takeOutputs)])
        #expect(c.outputsTaken() == [.cover(.answerLockRequests(refusal: nil))])
        #expect(c.settle().isEmpty)
    }

    /// Several `lock` requests waiting on one switch get one answer each, all at once:
    /// the refusal to every one of them, and nothing left over for a later settle.
    @Test func lockRequestsWaitingOnOneSwitchAreAnsweredTogether() {
        var c = CoverOnVT(uncovered: true)
        _ = c.lockRequested()
        _ = c.coverAsked(for: .lock)
        #expect(c.lockRequested().isEmpty)  // a second client while the switch is under way
        #expect(c.settle().isEmpty)
        #expect(c.showFailed("busy") == [.cover(.displayRefused("busy")), .cover(.answerLockRequests(refusal: "busy"))])
        #expect(c.settle().isEmpty)
    }

    /// An enrollment's refusal is its own: a `lock` after it is not told that refusal.
    @Test func anEnrollmentsRefusalIsNotALocksAnswer() {
        var c = CoverOnVT(uncovered: true)
        c.enrollmentRequested()
        _ = c.coverAsked(for: .enroll(.code))
        _ = c.showFailed("busy")
        #expect(c.cover.refusal == "busy" && !c.cover.lockPending)
        _ = c.lockRequested()
        #expect(c.coverAsked(for: .lock) == [.vt(.show)])
        #expect(c.shown() == [.vt(.takeOutputs)])
        #expect(c.outputsTaken() == [.cover(.displayTaken), .cover(.answerLockRequests(refusal: nil))])
    }

    /// Impossible events are logged and change nothing.
    @Test func impossibleEventsChangeNothing() {
        var c = CoverOnVT(uncovered: true)
        #expect(c.outputsTaken().isEmpty && c.cover.state == .uncovered)
        #expect(c.outputsRefused("x").isEmpty && c.cover.state == .uncovered)
        #expect(c.uncoverAsked().isEmpty && c.cover.state == .uncovered)
        #expect(c.handedBack().isEmpty)
        #expect(c.outputsReleased().isEmpty)
    }

    /// The cover alone speaks neither VT nor DRM: whatever covers the screen is asked to
    /// cover, uncover or let go, and its reports move the cover.
    @Test func theCoverAsksAndIsToldInWordsOfNeitherVTNorDRM() {
        var c = Cover()
        #expect(c.start() == [.ask(.cover)])
        #expect(c.handle(.reported(.covered)).isEmpty && c.state == .covered)
        #expect(c.uncoverAsked() == [.ask(.uncover)])
        #expect(c.handle(.reported(.uncovered)) == [.handedOver])
        #expect(c.lockRequested().isEmpty)
        #expect(c.coverAsked(for: .lock) == [.ask(.cover)])
        #expect(c.handle(.reported(.refused("held"))) == [.displayRefused("held"), .answerLockRequests(refusal: "held")])
        #expect(c.lockPending && c.state == .uncovered)
        // Available late: the lock kept pending is carried out.
        #expect(c.handle(.reported(.available)) == [.lock])
        // Impossible reports are said and change nothing.
        var u = Cover(uncovered: true)
        #expect(u.covered().isEmpty && u.uncovered().isEmpty && u.state == .uncovered)
    }

    /// Uncovered while the outputs are being taken: they are released all the same, and the
    /// take's late report does not stop the hand-back.
    @Test func anUncoverDuringATakeReleasesTheOutputs() {
        var t = TerminalCover()
        #expect(t.handle(.asked(.cover, displayFree: false)) == [.show])
        #expect(t.handle(.shown) == [.takeOutputs])
        #expect(t.handle(.asked(.uncover, displayFree: false)) == [.releaseOutputs])
        #expect(t.handle(.outputsTaken).isEmpty && t.outputsHeld)
        #expect(t.handle(.outputsReleased) == [.handBack] && !t.outputsHeld)
        #expect(t.handle(.handedBack) == [.report(.uncovered)])
        // Only the first cover may start in place; a cover with the display free later
        // goes through our VT.
        #expect(t.handle(.asked(.cover, displayFree: true)) == [.show])
    }

    /// An unlock before anything was taken (our VT never shown): only the VT goes back.
    @Test func anUncoverWithNothingTakenHandsTheVTBackOnly() {
        var t = TerminalCover()
        _ = t.handle(.asked(.cover, displayFree: false))
        #expect(t.handle(.showFailed("timeout")) == [.report(.refused("timeout"))])
        #expect(t.handle(.asked(.uncover, displayFree: false)) == [.handBack])
        #expect(t.handle(.shown).isEmpty)  // a late switch, overtaken by the hand-back
        #expect(t.handle(.handedBack) == [.report(.uncovered)])
    }
}
