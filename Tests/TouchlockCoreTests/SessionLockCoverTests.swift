import Testing
@testable import TouchlockCore

/// The cover of a compositor's session lock, as the daemon runs it: the display is asked
/// for at start and granted or refused by the compositor (never ours from the start), and
/// a lock the compositor ends unasked is said, and taken again at the next `lock`.
@Suite struct SessionLockCoverTests {
    @Test func aStartLockedAsksTheCompositorAndIsShownOnlyOnceItLocked() {
        var c = Cover()
        #expect(c.start() == [.ask(.cover)])
        #expect(c.display(outputLost: false) == .taking)
        #expect(c.covered().isEmpty)
        #expect(c.state == .covered && c.display(outputLost: false) == .shown)
        #expect(c.exit(handBackAsked: false) == .stayCovered)
    }

    @Test func aLockTheCompositorRefusesAtStartIsNotShownAndTriedAgainAtTheNextLock() {
        var c = Cover()
        _ = c.start()
        #expect(c.refused("another locker holds the session").isEmpty)
        #expect(c.state == .notCovered("another locker holds the session"))
        #expect(c.display(outputLost: false) == .notShown)
        #expect(c.lockRequested() == [.ask(.cover)])
        #expect(c.display(outputLost: false) == .taking)
    }

    @Test func aLockTheCompositorEndsIsSaidAndTakenAgainAtTheNextLock() {
        var c = Cover()
        _ = c.start(); _ = c.covered()
        #expect(c.handle(.reported(.lost("the compositor ended the session lock"))).isEmpty)
        #expect(c.display(outputLost: false) == .notShown)
        #expect(c.failure == "the compositor ended the session lock")
        // Still locked: a stop leaves the compositor as it is.
        #expect(c.exit(handBackAsked: false) == .stayCovered)
        #expect(c.lockRequested() == [.ask(.cover)])
        // The request is answered once the compositor locked.
        #expect(c.covered() == [.answerLockRequests(refusal: nil)])
        #expect(c.display(outputLost: false) == .shown && c.failure == nil)
    }

    @Test func startedUnlockedItAsksForNothingUntilALock() {
        var c = Cover(uncovered: true)
        #expect(c.start() == [.ask(.letGo)])
        #expect(c.display(outputLost: false) == .handedOver)
        #expect(c.coverAsked(for: .lock) == [.ask(.cover)])
        _ = c.covered()
        #expect(c.uncoverAsked() == [.ask(.uncover)])
        #expect(c.uncovered() == [.handedOver])
        #expect(c.state == .uncovered)
        // A lock ended after the unlock changes nothing.
        #expect(c.handle(.reported(.lost("gone"))).isEmpty && c.state == .uncovered)
    }

    /// Whatever the way of covering, the cover asks only the contract's requests and
    /// answers only its reports: a lock, a refusal, a loss, an unlock and a start handed
    /// over go through `cover`, `uncover` and `letGo`.
    @Test func theCoverSpeaksOnlyTheContract() {
        func requests(_ actions: [Cover.Action]) -> [Cover.Request] {
            actions.compactMap { if case .ask(let r) = $0 { r } else { nil } }
        }
        var c = Cover()
        #expect(requests(c.start()) == [.cover])
        _ = c.handle(.reported(.refused("another locker holds the session")))
        #expect(c.state == .notCovered("another locker holds the session"))
        #expect(requests(c.lockRequested()) == [.cover])
        _ = c.handle(.reported(.covered))
        #expect(c.state == .covered)
        _ = c.handle(.reported(.lost("the compositor went away")))
        #expect(c.state == .notCovered("the compositor went away"))
        _ = c.lockRequested()
        _ = c.handle(.reported(.covered))
        #expect(requests(c.uncoverAsked()) == [.uncover])
        #expect(c.handle(.reported(.uncovered)) == [.handedOver] && c.state == .uncovered)
        var restarted = Cover(uncovered: true)
        #expect(requests(restarted.start()) == [.letGo])
    }
}
