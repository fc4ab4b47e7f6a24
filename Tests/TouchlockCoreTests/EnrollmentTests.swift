import Testing
@testable import TouchlockCore

func enrolled(_ actions: [LockScreen.Action]) -> (UnlockMethod, [UInt8])? {
    for case .enroll(let m, let b) in actions { return (m, b) }
    return nil
}

extension LockScreen {
    /// Begins an enrollment on a screen handed over after an unlock: the display is asked
    /// back first, and the enrollment starts once it is taken.
    mutating func enrollAfterHandOver(_ method: UnlockMethod, at t: Instant) throws -> [Action] {
        let ask = try beginEnrollment(method, hasSecret: true, at: t)
        #expect(ask == [.cover(.ask(.cover))])
        #expect(enrollment == nil)
        return cover(.reported(.covered), at: t)
    }
}

@Suite struct EnrollmentTests {
    /// A screen unlocked by the pattern [0, 1, 2], its accepted path already gone.
    func unlockedScreen() -> LockScreen {
        var s = makeScreen()
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 0)
        _ = s.verified(true, at: at(end))
        _ = s.timer(at: at(end + 500_000))
        return s
    }

    @Test func aPatternDrawnTwiceAlikeIsHandedOverAndNothingCountsAsAFailure() throws {
        var s = unlockedScreen()
        let begin = try s.enrollAfterHandOver(.pattern, at: at(1_000_000))
        #expect(begin.contains(.redraw) && begin.contains(.grabInput))
        #expect(s.scene.prompt == "Draw your new pattern")
        #expect(!s.scene.nodes.isEmpty)
        let (first, t1) = s.draw([6, 3, 0, 1], id: 2, from: 1_100_000)
        #expect(verification(first) == nil && enrolled(first) == nil)
        #expect(s.enrollment?.stage == .confirm)
        #expect(s.scene.prompt == "Draw it again to confirm")
        #expect(s.pattern!.state == .idle)
        let (second, _) = s.draw([6, 3, 0, 1], id: 3, from: t1 + 100_000)
        let expected = Pattern(rows: 3, columns: 3, nodes: [6, 3, 0, 1]).secretBytes
        #expect(enrolled(second)?.0 == .pattern)
        #expect(enrolled(second)?.1 == expected)
        #expect(verification(second) == nil)
        #expect(s.enrollment == nil)
        // Stored first, then the display and the input are handed over again.
        #expect(second.firstIndex(of: .cover(.ask(.uncover)))! > second.firstIndex { if case .enroll = $0 { true } else { false } }!)
        #expect(second.contains(.releaseInput) && s.hold == .released)
        #expect(s.session.failures == 0)
        // Back to the unlocked screen: nothing of the pattern on it.
        #expect(s.scene.nodes.isEmpty && s.scene.prompt == "Unlocked")
        if case .unlocked = s.session.state {} else { Issue.record("the session left unlocked: \(s.session.state)") }
    }

    @Test func twoDifferentPatternsStartAgainWithAMessage() throws {
        var s = unlockedScreen()
        _ = try s.enrollAfterHandOver(.pattern, at: at(1_000_000))
        let (_, t1) = s.draw([0, 1, 2, 5], id: 2, from: 1_100_000)
        let (second, t2) = s.draw([0, 1, 2, 4], id: 3, from: t1 + 100_000)
        #expect(enrolled(second) == nil)
        #expect(s.enrollment?.stage == .first)
        #expect(s.scene.prompt == "They did not match, start again")
        #expect(second.contains(.armTimer(at(t2 + 500_000))))
        _ = s.timer(at: at(t2 + 500_000))
        #expect(s.pattern!.state == .idle)
        #expect(s.session.failures == 0)
        // The next attempt is a first one again; the message goes when a finger lands.
        let (third, t3) = s.draw([3, 4, 5, 8], id: 4, from: t2 + 600_000)
        #expect(enrolled(third) == nil)
        #expect(s.enrollment?.stage == .confirm)
        #expect(s.scene.prompt == "Draw it again to confirm")
        let (fourth, _) = s.draw([3, 4, 5, 8], id: 5, from: t3 + 100_000)
        #expect(enrolled(fourth)?.1 == Pattern(rows: 3, columns: 3, nodes: [3, 4, 5, 8]).secretBytes)
    }

    @Test func aPatternTooShortIsNeitherKeptNorCounted() throws {
        var s = unlockedScreen()
        _ = try s.enrollAfterHandOver(.pattern, at: at(1_000_000))
        let (a, _) = s.draw([0, 1], id: 2, from: 1_100_000)
        #expect(enrolled(a) == nil)
        #expect(s.enrollment?.stage == .first)
        #expect(s.scene.prompt == "Connect at least 3 dots (2 drawn)")
        #expect(s.session.failures == 0)
    }

    @Test func refusedWhileLockedWithASecretAllowedWithout() throws {
        var s = makeScreen()
        #expect(throws: EnrollRefusal.locked) { _ = try s.beginEnrollment(.pattern, hasSecret: true, at: at(0)) }
        #expect(s.enrollment == nil)
        #expect(throws: EnrollRefusal.noPad(.code)) { _ = try s.beginEnrollment(.code, hasSecret: false, at: at(0)) }
        _ = try s.beginEnrollment(.pattern, hasSecret: false, at: at(0))
        #expect(throws: EnrollRefusal.enrolling) { _ = try s.beginEnrollment(.pattern, hasSecret: false, at: at(0)) }
        let (a, t) = s.draw([0, 1, 2], id: 1, from: 10)
        let (b, _) = s.draw([0, 1, 2], id: 2, from: t + 10)
        #expect(verification(a) == nil && verification(b) == nil)
        #expect(enrolled(b)?.0 == .pattern)
        #expect(s.session.state == .locked)
        #expect(s.scene.prompt == "Draw your pattern to unlock")
    }

    @Test func refusedWhileAnAttemptIsShownAsWrong() throws {
        var s = makeScreen()
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 0)
        _ = s.verified(false, at: at(end))
        #expect(throws: EnrollRefusal.busy("wrong")) { _ = try s.beginEnrollment(.pattern, hasSecret: false, at: at(end)) }
    }

    @Test func aLockRequestCancelsTheEnrollment() throws {
        var s = unlockedScreen()
        _ = try s.enrollAfterHandOver(.pattern, at: at(1_000_000))
        _ = s.draw([0, 1, 2, 5], id: 2, from: 1_100_000)
        let a = s.lock(at: at(2_000_000))
        #expect(a.contains(.notify(.enrollFailed(method: .pattern, reason: "cancelled by a lock request"))))
        #expect(a.contains(.notify(.locked)))
        // The enrollment held the display and the input: the lock keeps them.
        #expect(!a.contains(.cover(.ask(.uncover))) && !a.contains(.releaseInput) && s.hold == .held)
        #expect(s.enrollment == nil)
        #expect(s.scene.prompt == "Draw your pattern to unlock")
    }

    @Test func aCodeTypedTwiceOnThePadIsHandedOverWithoutProgressEvents() throws {
        var s = codeScreen()
        #expect(throws: EnrollRefusal.locked) { _ = try s.beginEnrollment(.code, hasSecret: true, at: at(0)) }
        _ = try s.beginEnrollment(.code, hasSecret: false, at: at(0))
        #expect(s.scene.prompt == "Enter your new code")
        let a = s.tapCode([4, 0, 7, 1], from: 100_000)
        #expect(codeVerification(a) == nil && enrolled(a) == nil)
        #expect(!a.contains { if case .notify = $0 { true } else { false } })
        #expect(s.scene.prompt == "Enter it again")
        #expect(s.code?.entered == 0)
        let b = s.tapCode([4, 0, 7, 1], from: 600_000)
        #expect(enrolled(b)?.0 == .code)
        #expect(enrolled(b)?.1 == Array("code:4071".utf8))
        #expect(s.session.failures == 0 && s.session.state == .locked)
        #expect(s.scene.prompt == "Enter your code")
    }

    @Test func twoDifferentCodesStartAgain() throws {
        var s = codeScreen()
        _ = try s.beginEnrollment(.code, hasSecret: false, at: at(0))
        _ = s.tapCode([1, 2, 3, 4], from: 100_000)
        let b = s.tapCode([1, 2, 3, 5], from: 600_000)
        #expect(enrolled(b) == nil)
        #expect(s.scene.prompt == "They did not match, start again")
        #expect(s.enrollment?.stage == .first)
        _ = s.timer(at: at(2_000_000))
        #expect(s.code?.state == .entering)
        #expect(s.session.failures == 0)
    }
}

@Suite struct PreviewStatesTests {
    @Test(arguments: Preview.Screen.allCases)
    func everyNamedStateCanBeShown(screen: Preview.Screen) throws {
        let size = Size(width: 480, height: 800)
        for state in Preview.states(of: screen) {
            let name = state.hasSuffix(":K") ? String(state.dropLast()) + "2" : state
            let s = try Preview.lockScreen(config: Config(), screen: screen, state: name, size: size,
                                           density: Density(screen: size, physicalMillimetres: nil))
            #expect(!s.scene.prompt.isEmpty, "\(screen) \(state)")
        }
    }

    @Test func theEnrollmentPreviewsShowTheirStage() throws {
        let size = Size(width: 1280, height: 800)
        func prompt(_ screen: Preview.Screen, _ state: String) throws -> String {
            try Preview.lockScreen(config: Config(), screen: screen, state: state, size: size,
                                   density: Density(screen: size, physicalMillimetres: nil)).scene.prompt
        }
        let m = Messages()
        #expect(try prompt(.pattern, "enroll") == m.enrollPattern)
        #expect(try prompt(.pattern, "enroll-again") == m.enrollPatternAgain)
        #expect(try prompt(.pattern, "enroll-mismatch") == m.enrollMismatch)
        #expect(try prompt(.code, "enroll-again") == m.enrollCodeAgain)
    }
}

/// The enrollment machine alone: the first attempt kept, the second confirming it or not.
@Suite struct EnrollmentOutcomeTests {
    @Test func theSameSecretTwiceIsTheNewSecretAndADifferentOneStartsAgain() {
        var e = Enrollment(method: .pattern, returnTo: .pattern)
        var first: [UInt8] = [1, 2, 3, 4]
        #expect(e.attempt(&first) == .kept && first.isEmpty && e.stage == .confirm)
        var other: [UInt8] = [1, 2, 3, 5]
        #expect(e.attempt(&other) == .differ && other.isEmpty && e.stage == .first)
        var again: [UInt8] = [4, 3, 2, 1]
        _ = e.attempt(&again)
        var same: [UInt8] = [4, 3, 2, 1]
        #expect(e.attempt(&same) == .confirmed([4, 3, 2, 1]) && same.isEmpty)
    }

    @Test func anEnrollmentIsRefusedWhileLockedWithASecretBusyOrWithoutThePad() {
        #expect(Enrollment.refusal(.code, offered: true, session: .unlocked(.pattern, at: at(0)), hasSecret: true) == nil)
        #expect(Enrollment.refusal(.code, offered: true, session: .locked, hasSecret: false) == nil)
        #expect(Enrollment.refusal(.code, offered: true, session: .locked, hasSecret: true) == .locked)
        #expect(Enrollment.refusal(.code, offered: false, session: .locked, hasSecret: false) == .noPad(.code))
        #expect(Enrollment.refusal(.pattern, offered: true, session: .verifying(.pattern), hasSecret: false)
                == .busy(Session.State.verifying(.pattern).name))
    }
}
