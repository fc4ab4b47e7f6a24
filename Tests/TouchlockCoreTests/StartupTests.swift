import Testing
@testable import TouchlockCore

/// The daemon's start as the service manager sees it: when the input and the control
/// socket open, and when READY=1 goes out and with which status.
@Suite struct StartupTests {
    let covered = Cover.State.covered
    let starting = Cover.State.covering(.startup)

    /// The usual start: the rest opens once the first frame is submitted (the grace timer
    /// called off), and READY=1 says locked once that frame is on the screen and the
    /// rest is open, in whichever order they come.
    @Test func readyFollowsTheFirstFrameShownAndTheRestOpen() {
        var s = Startup()
        #expect(s.handle(.began(handedOver: false, at: at(0)), cover: starting, holdsDisplay: true) == [.armGrace(at(1_000_000))])
        #expect(s.handle(.firstFrameSubmitted, cover: covered, holdsDisplay: true) == [.cancelGrace, .openRest])
        // A second submission, or the grace firing late, changes nothing.
        #expect(s.handle(.firstFrameSubmitted, cover: covered, holdsDisplay: true).isEmpty)
        #expect(s.handle(.graceEnded, cover: covered, holdsDisplay: true).isEmpty)
        #expect(s.handle(.firstFrameShown, cover: covered, holdsDisplay: true).isEmpty)  // the rest is not open yet
        #expect(s.handle(.restOpened, cover: covered, holdsDisplay: true) == [.ready(unlocked: false)])
        #expect(s.phase == .ready)
        // Once only.
        #expect(s.handle(.coverMoved, cover: covered, holdsDisplay: true).isEmpty)
        #expect(s.handle(.firstFrameShown, cover: covered, holdsDisplay: true).isEmpty)

        var shownLast = Startup()
        _ = shownLast.handle(.began(handedOver: false, at: at(0)), cover: starting, holdsDisplay: true)
        _ = shownLast.handle(.firstFrameSubmitted, cover: covered, holdsDisplay: true)
        #expect(shownLast.handle(.restOpened, cover: covered, holdsDisplay: true).isEmpty)
        #expect(shownLast.handle(.firstFrameShown, cover: covered, holdsDisplay: true) == [.ready(unlocked: false)])
    }

    /// No frame within the grace (a VT switch that never completes, a display that
    /// refuses frames): the rest opens anyway, so the control socket answers; READY=1
    /// waits for a frame on the screen or for the cover to give up (not covered).
    @Test func withoutAFrameTheRestOpensAfterTheGraceAndReadyWaitsForTheCover() {
        var s = Startup()
        _ = s.handle(.began(handedOver: false, at: at(5_000_000)), cover: starting, holdsDisplay: true)
        #expect(s.handle(.graceEnded, cover: starting, holdsDisplay: true) == [.openRest])
        #expect(s.handle(.firstFrameSubmitted, cover: starting, holdsDisplay: true).isEmpty)
        #expect(s.handle(.restOpened, cover: starting, holdsDisplay: true).isEmpty)
        #expect(s.handle(.coverMoved, cover: .notCovered("busy"), holdsDisplay: true).isEmpty)  // no frame shown yet
        #expect(s.handle(.firstFrameShown, cover: .notCovered("busy"), holdsDisplay: true) == [.ready(unlocked: false)])
    }

    /// A first frame drawn on a boot splash's VT before the switch to ours: not the end
    /// of the start while the cover is still at its start (plymouth quits at READY=1);
    /// READY=1 follows the switch.
    @Test func aFrameShownBeforeOurVTIsNotReadyUntilTheCoverMovesOn() {
        var s = Startup()
        _ = s.handle(.began(handedOver: false, at: at(0)), cover: starting, holdsDisplay: true)
        _ = s.handle(.firstFrameSubmitted, cover: starting, holdsDisplay: true)
        #expect(s.handle(.restOpened, cover: starting, holdsDisplay: true).isEmpty)
        #expect(s.handle(.firstFrameShown, cover: starting, holdsDisplay: true).isEmpty)
        #expect(s.handle(.coverMoved, cover: starting, holdsDisplay: true).isEmpty)
        #expect(s.phase == .open)
        #expect(s.handle(.coverMoved, cover: covered, holdsDisplay: true) == [.ready(unlocked: false)])
    }

    /// Unlocked before this start: nothing is drawn, the rest opens at once, and READY=1
    /// says unlocked (or locked, if a lock came meanwhile and holds the display).
    @Test func aStartHandedOverIsReadyOnceTheRestIsOpen() {
        var s = Startup()
        #expect(s.handle(.began(handedOver: true, at: at(0)), cover: .uncovered, holdsDisplay: false) == [.openRest])
        #expect(s.handle(.firstFrameSubmitted, cover: .uncovered, holdsDisplay: false).isEmpty)
        #expect(s.handle(.restOpened, cover: .uncovered, holdsDisplay: false) == [.ready(unlocked: true)])

        var lockedMeanwhile = Startup()
        _ = lockedMeanwhile.handle(.began(handedOver: true, at: at(0)), cover: .uncovered, holdsDisplay: false)
        #expect(lockedMeanwhile.handle(.restOpened, cover: covered, holdsDisplay: true) == [.ready(unlocked: false)])
    }

    /// Events out of order are refused and said, never acted on.
    @Test func eventsOutOfOrderDoNothing() {
        var s = Startup()
        #expect(s.handle(.restOpened, cover: starting, holdsDisplay: true).isEmpty)
        #expect(s.handle(.graceEnded, cover: starting, holdsDisplay: true).isEmpty)
        #expect(s.phase == .idle)
        _ = s.handle(.began(handedOver: false, at: at(0)), cover: starting, holdsDisplay: true)
        #expect(s.handle(.began(handedOver: true, at: at(1)), cover: starting, holdsDisplay: true).isEmpty)
        #expect(s.phase == .drawing && !s.handedOver)
    }
}
