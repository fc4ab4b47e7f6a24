import Testing
@testable import TouchlockCore

/// The cover of a compositor's session lock, as the daemon runs it: the display is asked
/// for at start and granted or refused by the compositor (never ours from the start), and
/// a lock the compositor ends unasked is said, and taken again at the next `lock`.
@Suite struct SessionLockCoverTests {
    @Test func aStartLockedAsksTheCompositorAndIsShownOnlyOnceItLocked() {
        var c = Cover(hasTerminal: false, asksAtStart: true)
        #expect(!c.outputsHeld)
        #expect(c.start() == [.takeOutputs])
        #expect(c.display(outputLost: false) == .taking)
        #expect(c.outputsTaken().isEmpty)
        #expect(c.state == .covered && c.display(outputLost: false) == .shown)
        #expect(c.exit(handBackAsked: false) == .stayCovered)
    }

    @Test func aLockTheCompositorRefusesAtStartIsNotShownAndTriedAgainAtTheNextLock() {
        var c = Cover(hasTerminal: false, asksAtStart: true)
        _ = c.start()
        #expect(c.outputsRefused("another locker holds the session").isEmpty)
        #expect(c.state == .notCovered("another locker holds the session"))
        #expect(c.display(outputLost: false) == .notShown)
        #expect(c.lockRequested() == [.takeOutputs])
        #expect(c.display(outputLost: false) == .taking)
    }

    @Test func aLockTheCompositorEndsIsSaidAndTakenAgainAtTheNextLock() {
        var c = Cover(hasTerminal: false, asksAtStart: true)
        _ = c.start(); _ = c.outputsTaken()
        #expect(c.handle(.lost("the compositor ended the session lock")).isEmpty)
        #expect(c.display(outputLost: false) == .notShown)
        #expect(c.failure == "the compositor ended the session lock")
        // Still locked: a stop leaves the compositor as it is.
        #expect(c.exit(handBackAsked: false) == .stayCovered)
        #expect(c.lockRequested() == [.takeOutputs])
        // The request is answered once the compositor locked.
        #expect(c.outputsTaken() == [.answerLockRequests(refusal: nil)])
        #expect(c.display(outputLost: false) == .shown && c.failure == nil)
    }

    @Test func startedUnlockedItAsksForNothingUntilALock() {
        var c = Cover(hasTerminal: false, asksAtStart: true, uncovered: true)
        #expect(c.start() == [.letOutputsGo])
        #expect(c.display(outputLost: false) == .handedOver)
        #expect(c.coverAsked(for: .lock) == [.takeOutputs])
        _ = c.outputsTaken()
        #expect(c.uncoverAsked() == [.releaseOutputs])
        #expect(c.outputsReleased() == [.handedOver])
        #expect(c.state == .uncovered)
        // A lock ended after the unlock changes nothing.
        #expect(c.handle(.lost("gone")).isEmpty && c.state == .uncovered)
    }
}
