import Testing
@testable import TouchlockCore

private let m = Messages()
private func screen(_ session: Session = Session(), enrolling: Enrollment? = nil, showing: UnlockMethod = .pattern,
                    padIdle: Bool = true, now: Instant = at(0)) -> Prompt.Screen {
    Prompt.Screen(session: session, enrollment: enrolling, showing: showing, padIdle: padIdle, now: now)
}

/// What the prompt says: the state's instruction, or a notice until it is cleared.
@Suite struct PromptTests {
    @Test func theInstructionFollowsTheMethodShown() {
        let p = Prompt()
        #expect(p.text(screen(showing: .pattern), m) == m.patternPrompt)
        #expect(p.text(screen(showing: .code), m) == m.codePrompt)
    }

    @Test func aNoticeShowsWhileThePadIsAtRestUntilCleared() {
        var p = Prompt()
        p.show("Connect at least 4 dots (2 drawn)")
        #expect(p.text(screen(), m) == "Connect at least 4 dots (2 drawn)")
        // A finger is drawing again: the instruction.
        #expect(p.text(screen(padIdle: false), m) == m.patternPrompt)
        let cleared = p.clear(), again = p.clear()
        #expect(cleared && !again)
        #expect(p.text(screen(), m) == m.patternPrompt)
    }

    @Test func anEnrollmentAsksForTheSecretThenForItAgain() {
        var e = Enrollment(method: .code, returnTo: .pattern)
        let p = Prompt()
        #expect(p.text(screen(enrolling: e), m) == m.enrollCode)
        var bytes: [UInt8] = [1, 2, 3]
        _ = e.attempt(&bytes)
        #expect(p.text(screen(enrolling: e), m) == m.enrollCodeAgain)
    }

    @Test func aLockoutSaysWhenAndWhetherTheRecordWasDamaged() {
        let s = Session(restoring: LockoutRecord(failures: 5, deadline: at(30_000_000)), at: at(0),
                        schedule: LockoutSchedule(seconds: [0, 30]))
        var p = Prompt()
        #expect(p.text(screen(s), m) == m.lockout(left: .milliseconds(30_000)))
        p.damagedRecord = true
        #expect(p.text(screen(s, now: at(10_000_000)), m) == m.lockout(left: .milliseconds(20_000), damagedRecord: true))
        #expect(p.text(screen(s, now: at(10_000_000)), m) != m.lockout(left: .milliseconds(20_000)))
    }
}
