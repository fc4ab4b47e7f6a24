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

    /// A way of covering with no VT is asked only the contract's requests and answers only
    /// its reports: a lock, a refusal, a loss, an unlock and a start handed over go through
    /// `cover`, `uncover` and `letGo`, and never ask for a VT step.
    @Test func withoutAVTTheCoverSpeaksOnlyTheContract() {
        var c = Cover(hasTerminal: false, asksAtStart: true)
        var asked: [Cover.Action] = c.start()
        #expect(asked.compactMap(\.request) == [.cover])
        asked += c.handle(Cover.Event(.refused("another locker holds the session")))
        #expect(c.state == .notCovered("another locker holds the session"))
        let retried = c.lockRequested()
        asked += retried
        #expect(retried.compactMap(\.request) == [.cover])
        asked += c.handle(Cover.Event(.covered))
        #expect(c.state == .covered)
        asked += c.handle(Cover.Event(.lost("the compositor went away")))
        #expect(c.state == .notCovered("the compositor went away"))
        asked += c.lockRequested()
        asked += c.handle(Cover.Event(.covered))
        let uncover = c.uncoverAsked()
        asked += uncover
        #expect(uncover.compactMap(\.request) == [.uncover])
        let handedOver = c.handle(Cover.Event(.uncovered))
        asked += handedOver
        #expect(handedOver == [.handedOver] && c.state == .uncovered)
        var restarted = Cover(hasTerminal: false, asksAtStart: true, uncovered: true)
        let letGo = restarted.start()
        asked += letGo
        #expect(letGo.compactMap(\.request) == [.letGo])
        #expect(asked.allSatisfy { $0.terminalStep == nil })
    }

    /// With a VT, our VT's steps are asked between the requests: shown before the cover,
    /// handed back after the uncover, and what they report reaches the cover.
    @Test func withAVTTheStepsComeBetweenTheRequests() {
        var c = Cover(hasTerminal: true)
        #expect(c.start().compactMap(\.terminalStep) == [.show])
        #expect(c.handle(Cover.Event(.shown)).compactMap(\.request) == [.cover])
        _ = c.handle(Cover.Event(.covered))
        #expect(c.uncoverAsked().compactMap(\.request) == [.uncover])
        #expect(c.handle(Cover.Event(.uncovered)).compactMap(\.terminalStep) == [.handBack])
        #expect(c.handle(Cover.Event(.handedBack)) == [.handedOver] && c.state == .uncovered)
    }
}
