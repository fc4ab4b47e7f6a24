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
        p.recordFault = .damaged
        #expect(p.text(screen(s, now: at(10_000_000)), m) == m.lockout(left: .milliseconds(20_000), damagedRecord: true))
        #expect(p.text(screen(s, now: at(10_000_000)), m) != m.lockout(left: .milliseconds(20_000)))
    }

    /// A state file others could have written: no attempt is accepted until root puts it
    /// right, so the screen says that, with no wait to count down (the lockout standing
    /// for it is the longest there is: "24855 d 3 h").
    @Test func anUntrustedRecordSaysWhyWithNoCountdown() {
        let forever = Interval(microseconds: LockoutSchedule.forever * 1_000_000)
        var s = LockScreen(pads: .pattern(PatternLock(grid: grid3, minimumLength: 3)),
                           session: Session(restoring: LockoutRecord(failures: 10, deadline: at(0) + forever), at: at(0),
                                            schedule: .gatekeeper),
                           builder: SceneBuilder(theme: Theme(), size: Size(width: 300, height: 300)))
        s.recordFault = .untrusted
        #expect(s.scene.prompt == m.recordUntrusted)
        #expect(m.recordUntrusted == "Lock record not trusted. Locked until an administrator puts it right")
        #expect(!s.scene.prompt.contains("damaged") && !s.scene.prompt.contains(" d "), "\(s.scene.prompt)")
        // Nothing changes from second to second: no timer before the lockout's own end.
        for t in [Int64(1_000_000), 2_500_000, 60_000_000] {
            let early = s.timer(at: at(t)).filter { if case .armTimer(let when) = $0 { when < at(0) + forever } else { false } }
            #expect(early.isEmpty, "at \(t) µs: \(early)")
            #expect(s.scene.prompt == m.recordUntrusted)
        }
        // A damaged record's lockout still counts down.
        s.recordFault = .damaged
        #expect(s.scene.prompt.hasPrefix("Lock record damaged. Try again in "))
    }
}
