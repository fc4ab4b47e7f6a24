import Testing
@testable import TouchlockCore

func padLayout(_ n: Int = 4, _ size: Size = Size(width: 480, height: 800)) -> CodePadLayout {
    CodePadLayout.layout(length: n, on: size)
}

func ms(_ v: Int64) -> Instant { Instant(microseconds: v * 1000) }

func progress(_ actions: [CodePad.Action]) -> [Int] {
    actions.compactMap { if case .progress(let e, _) = $0 { e } else { nil } }
}

func submittedCode(_ actions: [CodePad.Action]) -> [UInt8]? {
    for case .submit(let c) in actions { return c.digits }
    return nil
}

extension CodePad {
    mutating func type(_ digits: [Int], at t: Int64) -> [Action] {
        digits.flatMap { key(.digit($0), at: ms(t)) }
    }
    /// Taps keypad slot `slot` with finger `id`: down and up at its centre.
    mutating func tap(slot: Int, id: Int = 1, at t: Int64) -> [Action] {
        let r = layout.keys[slot]
        let c = Point(x: Double(r.x) + Double(r.width) / 2, y: Double(r.y) + Double(r.height) / 2)
        return handle([ScreenTouch(id: id, phase: .began, point: c)], at: ms(t))
            + handle([ScreenTouch(id: id, phase: .ended, point: c)], at: ms(t + 50))
    }
}

@Suite struct CodePadTests {
    @Test func aCountBelowOneMeansFourBoxes() {
        #expect(CodePad(length: 0, layout: padLayout(4)).length == 4)
        #expect(CodePad(length: -3, layout: padLayout(4)).length == 4)
        #expect(CodePad(length: 6, layout: padLayout(6)).length == 6)
    }

    @Test func boxesAreEvenWithAGapOfHalfABox() {
        for n in [1, 4, 6, 8] {
            let l = padLayout(n)
            #expect(l.boxes.count == n)
            for i in 1..<max(1, n) where n > 1 {
                let gap = l.boxes[i].x - l.boxes[i - 1].maxX
                #expect(abs(Double(gap) - Double(l.boxes[i].width) / 2) <= 1, "n=\(n) box \(i)")
            }
            // Centred on the screen.
            let left = l.boxes[0].x, right = 480 - l.boxes[n - 1].maxX
            #expect(abs(left - right) <= 1)
        }
    }

    @Test func digitsFillTheBoxesAndTheNthDigitSubmits() {
        var pad = CodePad(length: 4, layout: padLayout())
        let a = pad.type([1, 2, 3], at: 0)
        #expect(progress(a) == [1, 2, 3])
        #expect(submittedCode(a) == nil)
        #expect(pad.entered == 3 && pad.state == .entering)
        let b = pad.key(.digit(4), at: ms(10))
        #expect(submittedCode(b) == [1, 2, 3, 4])
        #expect(progress(b) == [4])
        #expect(pad.state == .submitted)
        // At most N: more digits are not taken while the code is checked.
        #expect(pad.key(.digit(5), at: ms(20)).isEmpty)
        #expect(pad.entered == 4)
    }

    @Test func deleteRemovesTheLastDigitAndDoesNothingOnEmpty() {
        var pad = CodePad(length: 4, layout: padLayout())
        #expect(pad.key(.delete, at: ms(0)).isEmpty)
        #expect(pad.entered == 0)
        _ = pad.type([7, 8], at: 10)
        let a = pad.key(.delete, at: ms(20))
        #expect(progress(a) == [1])
        #expect(pad.shownDigit(0, at: ms(20)) == 7 && pad.shownDigit(1, at: ms(20)) == nil)
    }

    @Test func okWithFewerThanNDigitsIsNotAnAttempt() {
        var pad = CodePad(length: 4, layout: padLayout())
        _ = pad.type([1, 2], at: 0)
        #expect(pad.key(.ok, at: ms(5)) == [.incomplete(entered: 2, of: 4)])
        #expect(pad.state == .entering)
    }

    @Test func theCursorIsInTheNextEmptyBoxAndInTheLastWhenFull() {
        var pad = CodePad(length: 4, layout: padLayout())
        #expect(pad.cursorBox == 0)
        _ = pad.type([1], at: 0)
        #expect(pad.cursorBox == 1)
        _ = pad.type([2, 3], at: 0)
        #expect(pad.cursorBox == 3)
        _ = pad.type([4], at: 0)
        #expect(pad.cursorBox == 3)
    }

    @Test func theCursorSitsCentredInAnEmptyBoxAndBesideTheDigitInAFilledOne() {
        let builder = SceneBuilder(theme: Theme(), size: Size(width: 480, height: 800))
        var pad = CodePad(length: 4, layout: padLayout())
        let empty = builder.code(pad, session: Session(), prompt: "", at: ms(0))
        let b0 = empty.boxes[0]
        #expect(b0.cursor?.x == Double(b0.rect.x) + Double(b0.rect.width) / 2)
        #expect(b0.cursor?.width == 2)
        #expect(empty.boxes[1...].allSatisfy { $0.cursor == nil })
        // Full: the code is being checked, so no cursor blinks; a 3-digit code with 2 in
        // has it in box 2, centred.
        _ = pad.type([1, 2], at: 0)
        let s = builder.code(pad, session: Session(), prompt: "", at: ms(0))
        #expect(s.boxes[2].cursor?.x == Double(s.boxes[2].rect.x) + Double(s.boxes[2].rect.width) / 2)
        // A one-box pad, full with the code rejected and the hold over, shows it beside.
        var one = CodePad(length: 1, layout: padLayout(1))
        #expect(one.cursorBox == 0)
        _ = one.type([5], at: 0)
        #expect(one.cursorBox == 0)
        _ = one.verdict(accepted: false, at: ms(1), errorHold: .milliseconds(0))
        _ = one.timerFired(at: ms(1))
        #expect(one.entered == 0)
    }

    @Test func theCursorBlinksThroughItsKeyframes() {
        // 1.5 s period; opacity 1 until 0.6 s, down to 0 at 0.675 s, 0 until 1.5 s.
        #expect(CursorBlink.opacity(after: .milliseconds(0)) == 1)
        #expect(CursorBlink.opacity(after: .milliseconds(599)) == 1)
        #expect(abs(CursorBlink.opacity(after: Interval(microseconds: 637_500)) - 0.5) < 1e-9)
        #expect(CursorBlink.opacity(after: .milliseconds(675)) == 0)
        #expect(CursorBlink.opacity(after: .milliseconds(1499)) == 0)
        #expect(CursorBlink.opacity(after: .milliseconds(1500)) == 1)
        #expect(CursorBlink.opacity(after: .milliseconds(3000 + 700)) == 0)
        // Wake-ups: halfway through the fade, its end, the period's end: 2 a second.
        var t = Interval.milliseconds(0)
        var wakes: [Int64] = []
        while t.microseconds < 3_000_000 {
            t = CursorBlink.nextChange(after: t)
            wakes.append(t.microseconds / 1000)
        }
        #expect(wakes == [637, 675, 1500, 2137, 2175, 3000])
    }

    @Test func theBlinkRestartsAtEachKeySoTheCursorShowsWhereItMoved() {
        var pad = CodePad(length: 4, layout: padLayout())
        #expect(pad.cursorOpacity(at: ms(1000)) == 0)
        let a = pad.key(.digit(3), at: ms(1000))
        #expect(pad.cursorOpacity(at: ms(1000)) == 1)
        #expect(a.contains(.armTimer(Instant(microseconds: 1_637_500))))
    }

    @Test func aBlurredPadHasNoCursorAndAsksForNoWakeUps() {
        var pad = CodePad(length: 4, layout: padLayout())
        // A tap away from the boxes and the keypad blurs.
        let a = pad.handle([ScreenTouch(id: 1, phase: .began, point: Point(x: 2, y: 2))], at: ms(10))
        #expect(a == [.redraw])
        _ = pad.handle([ScreenTouch(id: 1, phase: .ended, point: Point(x: 2, y: 2))], at: ms(20))
        #expect(pad.cursorOpacity(at: ms(30)) == nil)
        #expect(pad.nextWake(after: ms(30)) == nil)
        #expect(pad.timerFired(at: ms(600)).isEmpty)
        // Tapping the boxes focuses them again, the cursor visible at once.
        let b = pad.layout.boxes[1]
        let f = pad.handle([ScreenTouch(id: 2, phase: .began, point: Point(x: Double(b.x + 2), y: Double(b.y + 2)))], at: ms(40))
        #expect(f == [.redraw, .armTimer(Instant(microseconds: 677_500))])
        #expect(pad.cursorOpacity(at: ms(40)) == 1)
    }

    @Test func keypadKeysShowPressedAndActOnReleaseOverTheKey() {
        var pad = CodePad(length: 4, layout: padLayout())
        let r = pad.layout.keys[4]  // "5"
        let c = Point(x: Double(r.x + r.width / 2), y: Double(r.y + r.height / 2))
        _ = pad.handle([ScreenTouch(id: 1, phase: .began, point: c)], at: ms(0))
        #expect(pad.press == CodePad.Press(touch: 1, slot: 4, inside: true))
        #expect(pad.entered == 0)
        // Slid off the key: not pressed, and lifting there types nothing.
        _ = pad.handle([ScreenTouch(id: 1, phase: .moved, point: Point(x: c.x, y: Double(r.maxY + 30)))], at: ms(10))
        #expect(pad.press?.inside == false)
        _ = pad.handle([ScreenTouch(id: 1, phase: .ended, point: Point(x: c.x, y: Double(r.maxY + 30)))], at: ms(20))
        #expect(pad.press == nil && pad.entered == 0)
        // A tap types the key's digit; delete and OK are slots 9 and 11, 0 is slot 10.
        _ = pad.tap(slot: 4, at: 100)
        _ = pad.tap(slot: 10, at: 200)
        #expect(pad.shownDigit(0, at: ms(300)) == 5 && pad.shownDigit(1, at: ms(300)) == 0)
        _ = pad.tap(slot: 9, at: 300)
        #expect(pad.entered == 1)
        #expect(pad.tap(slot: 11, at: 400).contains(.incomplete(entered: 1, of: 4)))
    }

    @Test func aSecondFingerPressesNothing() {
        var pad = CodePad(length: 4, layout: padLayout())
        let r1 = pad.layout.keys[0], r2 = pad.layout.keys[1]
        _ = pad.handle([ScreenTouch(id: 1, phase: .began, point: Point(x: Double(r1.x + 5), y: Double(r1.y + 5)))], at: ms(0))
        _ = pad.handle([ScreenTouch(id: 2, phase: .began, point: Point(x: Double(r2.x + 5), y: Double(r2.y + 5)))], at: ms(1))
        _ = pad.handle([ScreenTouch(id: 2, phase: .ended, point: Point(x: Double(r2.x + 5), y: Double(r2.y + 5)))], at: ms(2))
        _ = pad.handle([ScreenTouch(id: 1, phase: .ended, point: Point(x: Double(r1.x + 5), y: Double(r1.y + 5)))], at: ms(3))
        #expect(pad.entered == 1 && pad.shownDigit(0, at: ms(3)) == 1)
    }

    @Test func secureEntryShowsDotsAndOptionallyTheLastDigitFor1300ms() {
        var pad = CodePad(length: 4, layout: padLayout(), secure: true, reveal: .milliseconds(1300))
        let a = pad.type([4, 2], at: 1000)
        #expect(a.contains(.armTimer(Instant(microseconds: 1_637_500))))
        #expect(pad.shownDigit(0, at: ms(1000)) == nil)
        #expect(pad.shownDigit(1, at: ms(1000)) == 2)
        #expect(pad.shownDigit(1, at: ms(2299)) == 2)
        #expect(pad.shownDigit(1, at: ms(2300)) == nil)
        // The reveal's end is one of the wake-ups.
        #expect(pad.nextWake(after: ms(2200)) == ms(2300))
        let builder = SceneBuilder(theme: Theme(), size: Size(width: 480, height: 800))
        let s = builder.code(pad, session: Session(), prompt: "", at: ms(2300))
        #expect(s.boxes.map(\.content) == [.dot, .dot, .empty, .empty])
        var plain = CodePad(length: 4, layout: padLayout(), secure: true)
        _ = plain.type([9], at: 0)
        #expect(plain.shownDigit(0, at: ms(0)) == nil)
    }

    @Test func underlinesFollowTheSeeds() {
        var theme = Theme()
        theme.underline = Color(hex: "#f0f0f0")!
        theme.underlineFilled = Color(hex: "#999999")!
        theme.accent = Color(hex: "#0000ff")!
        let builder = SceneBuilder(theme: theme, size: Size(width: 480, height: 800))
        var pad = CodePad(length: 4, layout: padLayout())
        _ = pad.type([1, 2], at: 0)
        let s = builder.code(pad, session: Session(), prompt: "", at: ms(0))
        // Filled boxes, the focused box in the accent, empty boxes.
        #expect(s.boxes.map(\.underline) == [theme.underlineFilled, theme.underlineFilled, theme.accent, theme.underline])
        _ = pad.type([3, 4], at: 10)
        _ = pad.verdict(accepted: false, at: ms(20), errorHold: .milliseconds(500))
        let e = builder.code(pad, session: Session(), prompt: "", at: ms(30))
        #expect(e.boxes.allSatisfy { $0.underline == theme.error && $0.error })
    }

    @Test func aWrongCodeBlocksInputForTheHoldThenANewPromptStarts() {
        var pad = CodePad(length: 4, layout: padLayout(), shuffleSeed: 42)
        let first = pad.keyOrder
        #expect(Set(first) == Set(0...9))
        _ = pad.type([1, 2, 3, 4], at: 0)
        #expect(pad.verdict(accepted: false, at: ms(100), errorHold: .milliseconds(500)) == [.redraw, .armTimer(ms(600))])
        #expect(pad.key(.digit(1), at: ms(200)).isEmpty)
        #expect(pad.tap(slot: 0, at: 300).isEmpty)
        #expect(pad.timerFired(at: ms(599)) == [.armTimer(ms(600))])
        let a = pad.timerFired(at: ms(600))
        #expect(progress(a) == [0])
        #expect(pad.state == .entering && pad.entered == 0)
        // Shuffled once per prompt: a new prompt, a new order.
        #expect(pad.keyOrder != first && Set(pad.keyOrder) == Set(0...9))
        #expect(CodePad(length: 4, layout: padLayout()).keyOrder == [1, 2, 3, 4, 5, 6, 7, 8, 9, 0])
    }

    @Test func theShuffledKeypadTypesTheDigitShownOnTheKey() {
        var pad = CodePad(length: 4, layout: padLayout(), shuffleSeed: 7)
        let slot = pad.keyOrder.firstIndex(of: 8)!
        _ = pad.tap(slot: slot < 9 ? slot : 10, at: 0)
        #expect(pad.shownDigit(0, at: ms(100)) == 8)
    }

    @Test func aFingerDownWhenAHardwareKeyCompletesTheCodeDoesNotBlockTheNextPrompt() {
        var pad = CodePad(length: 2, layout: padLayout(2))
        let r = pad.layout.keys[0]
        _ = pad.handle([ScreenTouch(id: 1, phase: .began, point: r.centre)], at: ms(0))
        _ = pad.type([4, 2], at: 10)
        #expect(pad.state == .submitted)
        _ = pad.handle([ScreenTouch(id: 1, phase: .ended, point: r.centre)], at: ms(20))
        #expect(pad.press == nil)
        _ = pad.verdict(accepted: false, at: ms(30), errorHold: .milliseconds(100))
        _ = pad.timerFired(at: ms(130))
        _ = pad.tap(slot: 2, id: 2, at: 200)
        #expect(pad.entered == 1 && pad.shownDigit(0, at: ms(300)) == 3)
    }

    @Test func aVerdictWithoutASubmittedCodeIsABugNotACrash() {
        var pad = CodePad(length: 4, layout: padLayout())
        #expect(pad.verdict(accepted: true, at: ms(0), errorHold: .milliseconds(500)).isEmpty)
        #expect(pad.state == .entering)
    }

    @Test func landscapePutsTheKeypadBesideTheBoxes() {
        let l = CodePadLayout.layout(length: 6, on: Size(width: 1280, height: 800))
        #expect(l.boxes.allSatisfy { $0.maxX <= 640 })
        #expect(l.keys.allSatisfy { $0.x >= 640 && $0.maxY <= 800 })
        let p = CodePadLayout.layout(length: 6, on: Size(width: 800, height: 1280))
        #expect(p.keys.allSatisfy { $0.y > p.boxes[0].maxY })
        // Keys never overlap.
        for i in 0..<12 { for j in 0..<12 where i < j { #expect(!l.keys[i].intersects(l.keys[j])) } }
    }
}
