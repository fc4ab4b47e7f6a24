import Testing
@testable import TouchlockCore

private func both() -> LockScreen.Pads {
    .both(PatternLock(grid: grid3, minimumLength: 3), CodePad(length: 4, layout: padLayout()), showing: .pattern)
}
private func timers(_ actions: [LockScreen.Pads.Action]) -> [Instant] {
    actions.compactMap { if case .code(.armTimer(let t)) = $0 { t } else { nil } }
}

/// The method shown and the switch between them; a hidden code pad asks for no timer.
@Suite struct PadsTests {
    @Test func switchingShowsTheOtherPadAndTheOneLeftBehindStartsOver() {
        var pads = both()
        _ = pads.handle([ScreenTouch(id: 1, phase: .began, point: grid3.center(of: 0))], at: at(0))
        #expect(pads.pattern?.path == [0] && pads.drawn && !pads.idle)
        // To the code pad: the pattern is dropped, the cursor blinks from now.
        let toCode = pads.switchMethod(at: at(100_000))
        #expect(pads.showing == .code && pads.pattern?.state == .idle && pads.idle && !pads.drawn)
        #expect(!timers(toCode).isEmpty)
        // Back to the pattern: the code pad left hidden asks for no wake-up.
        let toPattern = pads.switchMethod(at: at(200_000))
        #expect(pads.showing == .pattern && timers(toPattern).isEmpty)
        #expect(timers(pads.timerFired(at: at(300_000), codeWakes: false)).isEmpty)
    }

    @Test func touchesReachOnlyThePadShown() {
        var pads = both()
        _ = pads.switchMethod(at: at(0))
        _ = pads.handle([ScreenTouch(id: 1, phase: .began, point: grid3.center(of: 0))], at: at(10_000))
        #expect(pads.pattern?.state == .idle)
    }

    @Test func oneMethodShowsItsPadWhateverIsAsked() {
        var pads = LockScreen.Pads.pattern(PatternLock(grid: grid3))
        pads.show(.code)
        #expect(pads.showing == .pattern && !pads.offers(.code) && pads.code == nil)
        let asked = pads.onCode { $0.reset(at: at(0)) }
        #expect(asked.isEmpty)
    }

    @Test func aCodePadClearedAfterAnUnlockAnnouncesNothingAndArmsNothing() {
        var pad = CodePad(length: 4, layout: padLayout())
        _ = pad.type([1, 2, 3, 4], at: 0)
        _ = pad.verdict(accepted: true, at: ms(10), errorHold: .milliseconds(500))
        #expect(pad.clear(at: ms(600)) == [.redraw])
        #expect(pad.state == .entering && pad.entered == 0)
        // A plain reset announces the empty pad and blinks; one left hidden does not blink.
        _ = pad.type([5], at: 700)
        #expect(pad.reset(at: ms(800), wakes: false) == [.redraw, .progress(entered: 0, of: 4)])
        #expect(pad.timerFired(at: ms(900), wakes: false).allSatisfy { $0 == .redraw })
        #expect(pad.reset(at: ms(1000)).contains { if case .armTimer = $0 { true } else { false } })
    }
}
