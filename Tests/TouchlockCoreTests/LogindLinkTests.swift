import Testing
@testable import TouchlockCore

/// logind's Lock, PrepareForSleep and the idle hint, as the daemon's logind side sees them.
@Suite struct LogindLinkTests {
    private func watching() -> LogindLink {
        var link = LogindLink(seat: "seat0")
        #expect(link.watching() == [.takeSleepDelay])
        #expect(link.sleepDelayTaken() == [])
        #expect(link.delay == .held)
        return link
    }

    @Test func aLockOfASessionOnOurSeatLocks() {
        var link = watching()
        let s = "/org/freedesktop/login1/session/_31"
        #expect(link.sessionLockAsked(s) == [.askSeat(session: s)])
        // lock-sessions sends Lock once per session; a second one before the answer asks nothing more.
        #expect(link.sessionLockAsked(s) == [])
        #expect(link.seatOf(s, is: "seat0") == [.lock(reason: "logind: Lock for \(s)")])
        #expect(link.locksAsked.isEmpty)
    }

    @Test func sessionsOnAnotherSeatOrNoneDoNotLock() {
        var link = watching()
        #expect(link.sessionLockAsked("/s/ssh") == [.askSeat(session: "/s/ssh")])
        #expect(link.seatOf("/s/ssh", is: nil) == [])
        #expect(link.sessionLockAsked("/s/other") == [.askSeat(session: "/s/other")])
        #expect(link.seatOf("/s/other", is: "seat1") == [])
    }

    @Test func aSeatNobodyAskedForIsABugAndLocksNothing() {
        var link = watching()
        #expect(link.seatOf("/s/x", is: "seat0") == [])
    }

    @Test func aSleepWaitsForTheLockScreenThenTheDelayIsTakenAgainAfterTheWakeUp() {
        var link = watching()
        #expect(link.prepareForSleep(before: true) == [.lock(reason: "logind: going to sleep")])
        #expect(link.delay == .held)
        #expect(link.lockShown() == [.releaseSleepDelay])
        #expect(link.delay == .none)
        // A second lock shown during the sleep lets go of nothing more.
        #expect(link.lockShown() == [])
        #expect(link.prepareForSleep(before: false) == [.takeSleepDelay])
        #expect(link.sleepDelayTaken() == [])
        #expect(link.delay == .held)
    }

    /// A second PrepareForSleep(true) with no wake-up between (logind restarted mid-sleep,
    /// its PrepareForSleep(false) never came) is a sleep all the same: it locks again, and
    /// is never ignored as one already locked for.
    @Test func aPrepareForSleepWhileAlreadySleepingLocksAgain() {
        var link = watching()
        #expect(link.prepareForSleep(before: true) == [.lock(reason: "logind: going to sleep")])
        #expect(link.lockShown() == [.releaseSleepDelay])
        #expect(link.prepareForSleep(before: true) == [.lock(reason: "logind: going to sleep")])
        #expect(link.sleepPending)
        // No delay is held: nothing to let go once this lock is shown.
        #expect(link.lockShown() == [])
        #expect(!link.sleepPending)
        #expect(link.prepareForSleep(before: false) == [.takeSleepDelay])
        #expect(link.sleepDelayTaken() == [])
        #expect(link.delay == .held)
    }

    /// A flood of signals from others (any local user can send them): the first count is
    /// said at once, then at most once a minute, never one line a signal.
    @Test func signalsNotFromLogindAreSaidAtMostOnceAMinute() throws {
        var link = watching()
        let t = Instant(microseconds: 5_000_000)
        let said = link.signalsIgnored(total: 64, at: t)
        let first = try #require(said)
        #expect(first.hasPrefix("logind: 64 signals from another connection than logind's dropped"), "\(first)")
        #expect(link.signalsIgnored(total: 64, at: t + .milliseconds(1)) == nil)
        #expect(link.signalsIgnored(total: 9_000, at: t + .milliseconds(59_999)) == nil)
        #expect(link.signalsIgnored(total: 10_000, at: t + .milliseconds(60_000))
                == "logind: 9936 signals from another connection than logind's dropped")
        #expect(link.signalsIgnored(total: 10_001, at: t + .milliseconds(60_001)) == nil)
        // A new connection counts from 0.
        link.disconnected()
        #expect(link.signalsIgnored(total: 1, at: t + .milliseconds(120_001))
                == "logind: 1 signal from another connection than logind's dropped")
    }

    @Test func aLockThatCannotBeShownDoesNotHoldTheSleep() {
        var link = watching()
        _ = link.prepareForSleep(before: true)
        #expect(link.lockRefused("display busy") == [.releaseSleepDelay])
    }

    @Test func aLockShownForAnotherReasonKeepsTheDelay() {
        var link = watching()
        #expect(link.lockShown() == [])
        #expect(link.delay == .held)
    }

    @Test func aWakeUpBeforeTheLockScreenLetsTheDelayGoAndTakesANewOne() {
        var link = watching()
        _ = link.prepareForSleep(before: true)
        #expect(link.prepareForSleep(before: false) == [.releaseSleepDelay, .takeSleepDelay])
        #expect(link.delay == .asked)
    }

    @Test func aDelayThatComesOnceTheLockIsShownForTheSleepIsLetGo() {
        var link = LogindLink(seat: "seat0")
        _ = link.watching()
        _ = link.prepareForSleep(before: true)
        #expect(link.lockShown() == [])
        #expect(link.sleepDelayTaken() == [.releaseSleepDelay])
        #expect(link.delay == .none)
        #expect(link.prepareForSleep(before: false) == [.takeSleepDelay])
    }

    @Test func aDelayThatComesBeforeTheLockIsShownIsHeldUntilItIs() {
        var link = LogindLink(seat: "seat0")
        _ = link.watching()
        _ = link.prepareForSleep(before: true)
        #expect(link.sleepDelayTaken() == [])
        #expect(link.lockShown() == [.releaseSleepDelay])
    }

    @Test func aRefusedDelayIsAskedForAgainAfterAReconnect() {
        var link = LogindLink(seat: "seat0")
        _ = link.watching()
        link.sleepDelayRefused("access denied")
        #expect(link.delay == .none)
        link.disconnected()
        #expect(link.watching() == [.takeSleepDelay])
    }

    @Test func aHeldDelaySurvivesALostConnection() {
        var link = watching()
        link.disconnected()
        #expect(link.delay == .held)
        #expect(link.watching() == [])
    }

    @Test func anUnaskedDelayIsABugAndLetGo() {
        var link = watching()
        #expect(link.sleepDelayTaken() == [.releaseSleepDelay])
        #expect(link.delay == .none)
    }

    @Test func theIdleHintIsSetWhenItChangesAndActiveSaidAgainAMinuteOnWhileTouched() {
        var link = watching()
        let t = Instant(microseconds: 1_000_000)
        #expect(link.activity(at: t) == [.setIdleHint(false)])
        #expect(link.activity(at: t + .milliseconds(59_999)) == [])
        #expect(link.activity(at: t + .milliseconds(60_000)) == [.setIdleHint(false)])
        #expect(link.idle() == [.setIdleHint(true)])
        #expect(link.idle() == [])
        #expect(link.activity(at: t + .milliseconds(60_001)) == [.setIdleHint(false)])
    }
}
