import Testing
@testable import TouchlockCore

// The hidden service entry on the screen: a long press on the prompt opens a pad of the
// service codes' digits in place of the owner's grid or pad.

private let size = Size(width: 480, height: 800)

/// A lock screen of `methods` whose device has service codes of `digits` (nil: none);
/// `persistent`: attempts counted on disk first, as the daemon's.
private func screen(_ methods: ScreenSettings.Methods = .pattern, digits: Int? = 6, codeLength: Int = 4,
                    persistent: Bool = false, schedule: LockoutSchedule = .none) -> LockScreen {
    var c = Config()
    c.screens.methods = methods
    c.screens.codeLength = codeLength
    return LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 1,
                           session: Session(errorHold: .milliseconds(500), schedule: schedule, persistent: persistent),
                           serviceDigits: digits)
}

/// Where the prompt is drawn on the owner's screen.
private func promptPoint(_ s: LockScreen) -> Point {
    let l = s.builder.layout!
    return centre(s.active == .pattern ? l.patternPrompt : l.pad!.promptBox)
}

extension LockScreen {
    /// One finger held on the prompt from `t0` for `held` µs (the timer fires then), not lifted.
    fileprivate mutating func longPress(at p: Point, from t0: Int64, held: Int64 = 3_000_000, id: Int = 77) -> [Action] {
        var out = touches([ScreenTouch(id: id, phase: .began, point: p)], at: at(t0))
        out += timer(at: at(t0 + held))
        return out
    }

    /// Taps `digits` on the pad on screen (the service pad while it is open).
    fileprivate mutating func tapShown(_ digits: [Int], from t0: Int64) -> [Action] {
        var out: [Action] = []
        var t = t0
        for d in digits {
            guard let pad = shownCode else {
                Issue.record("no code pad on screen to tap \(d) on")
                return out
            }
            let slot = pad.keyOrder.firstIndex(of: d)!
            let r = pad.layout.keys[slot == 9 ? 10 : slot]
            out += touches([ScreenTouch(id: Int(t), phase: .began, point: centre(r))], at: at(t))
            out += touches([ScreenTouch(id: Int(t), phase: .ended, point: centre(r))], at: at(t + 40_000))
            t += 100_000
        }
        return out
    }
}

private func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

@Suite struct ServiceEntryTests {
    @Test func aLongPressOnThePromptOpensTheServicePadInPlaceOfTheGrid() {
        var s = screen()
        #expect(s.scene.nodes.count == 9 && s.scene.boxes.isEmpty)
        let a = s.longPress(at: promptPoint(s), from: 1_000_000)
        #expect(s.showing == .service && a.contains(.redraw))
        let scene = s.scene
        #expect(scene.nodes.isEmpty, "the grid is replaced")
        #expect(scene.boxes.count == 6 && scene.keys.count == 12)
        #expect(scene.prompt == "Service code")
        if case .text(let label)? = scene.toggle?.label { #expect(label == "Cancel") } else { Issue.record("no Cancel") }
        // Nothing is told to subscribers: the entry is not an attempt.
        #expect(!a.contains { if case .notify = $0 { true } else { false } })
    }

    @Test func aShorterPressOrAScreenWithoutServiceCodesOpensNothing() {
        var s = screen()
        let p = promptPoint(s)
        _ = s.touches([ScreenTouch(id: 1, phase: .began, point: p)], at: at(1_000_000))
        _ = s.touches([ScreenTouch(id: 1, phase: .ended, point: p)], at: at(3_900_000))
        _ = s.timer(at: at(4_000_000))
        #expect(s.showing == .pattern && s.scene.nodes.count == 9)
        // Held the full 3 s, it opens.
        _ = s.longPress(at: p, from: 5_000_000, id: 2)
        #expect(s.showing == .service)

        var none = screen(digits: nil)
        _ = none.longPress(at: promptPoint(none), from: 1_000_000, held: 3_500_000)
        #expect(none.serviceEntry == nil && none.showing == .pattern && none.scene.nodes.count == 9)
        var code = screen(.code, digits: nil)
        _ = code.longPress(at: promptPoint(code), from: 1_000_000, held: 3_500_000)
        #expect(code.showing == .code && code.scene.boxes.count == 4)
    }

    @Test func aStrokeThroughThePromptAMoveOrASecondFingerOpensNothing() {
        // A stroke from the grid up into the prompt, held there.
        var s = screen()
        let g = s.pattern!.grid
        let p = promptPoint(s)
        _ = s.touches([ScreenTouch(id: 1, phase: .began, point: g.center(of: 6))], at: at(1_000_000))
        _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: g.center(of: 3))], at: at(1_100_000))
        _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: p)], at: at(1_200_000))
        _ = s.timer(at: at(4_500_000))
        #expect(s.showing == .pattern)

        // A press that wanders beyond a finger's jitter.
        var m = screen()
        _ = m.touches([ScreenTouch(id: 2, phase: .began, point: p)], at: at(1_000_000))
        _ = m.touches([ScreenTouch(id: 2, phase: .moved, point: Point(x: p.x + 30, y: p.y))], at: at(1_500_000))
        _ = m.timer(at: at(4_100_000))
        #expect(m.showing == .pattern)

        // A second finger during the press.
        var two = screen()
        _ = two.touches([ScreenTouch(id: 3, phase: .began, point: p)], at: at(1_000_000))
        _ = two.touches([ScreenTouch(id: 4, phase: .began, point: g.center(of: 4))], at: at(1_500_000))
        _ = two.timer(at: at(4_100_000))
        #expect(two.showing == .pattern)

        // Each of them, lifted, then one finger held still on the prompt: it opens.
        for var t in [s, m, two] {
            for id in 1...4 { _ = t.touches([ScreenTouch(id: id, phase: .ended, point: p)], at: at(4_600_000)) }
            _ = t.longPress(at: p, from: 5_000_000, id: 5)
            #expect(t.showing == .service && t.scene.nodes.isEmpty)
        }
    }

    @Test func cancelEscapeAndThirtySecondsUntouchedGiveTheOwnersScreenBack() throws {
        var s = screen()
        _ = s.longPress(at: promptPoint(s), from: 1_000_000)
        #expect(s.showing == .service)
        let cancel = try #require(s.serviceEntry).cancelRect
        _ = s.touches([ScreenTouch(id: 77, phase: .ended, point: promptPoint(s))], at: at(4_100_000))
        _ = s.tapShown([1, 2], from: 4_200_000)
        #expect(s.shownCode?.entered == 2)
        _ = s.touches([ScreenTouch(id: 8, phase: .began, point: centre(cancel))], at: at(5_000_000))
        _ = s.touches([ScreenTouch(id: 8, phase: .ended, point: centre(cancel))], at: at(5_050_000))
        #expect(s.showing == .pattern && s.scene.nodes.count == 9 && s.scene.prompt == "Draw your pattern to unlock")
        #expect(s.session.failures == 0)

        _ = s.longPress(at: promptPoint(s), from: 6_000_000, id: 9)
        #expect(s.showing == .service)
        _ = s.hardwareKey(.escape, at: at(9_100_000))
        #expect(s.showing == .pattern)
        _ = s.touches([ScreenTouch(id: 9, phase: .ended, point: promptPoint(s))], at: at(9_200_000))

        // Untouched for 30 s; a key at 20 s pushes the end to 50 s.
        _ = s.longPress(at: promptPoint(s), from: 10_000_000, id: 10)
        let opened: Int64 = 13_000_000
        _ = s.touches([ScreenTouch(id: 10, phase: .ended, point: promptPoint(s))], at: at(opened + 100_000))
        _ = s.hardwareKey(.digit(4), at: at(opened + 20_000_000))
        _ = s.timer(at: at(opened + 30_000_000))
        #expect(s.showing == .service && s.shownCode?.entered == 1)
        let back = s.timer(at: at(opened + 50_000_000))
        #expect(s.showing == .pattern && back.contains(.redraw))
        #expect(s.session.failures == 0 && s.session.state == .locked)
    }

    @Test func theScreenGoingOffWakesOnTheOwnersScreen() {
        var s = screen()
        s.blankAfter = .milliseconds(10_000)
        _ = s.begin(at: at(0))
        _ = s.longPress(at: promptPoint(s), from: 1_000_000)
        _ = s.touches([ScreenTouch(id: 77, phase: .ended, point: promptPoint(s))], at: at(4_100_000))
        _ = s.tapShown([5], from: 4_200_000)
        #expect(s.showing == .service && s.shownCode?.entered == 1)
        let off = s.timer(at: at(14_240_000))
        #expect(off.contains(.blankDisplay) && !off.contains(.redraw))
        _ = s.touches([ScreenTouch(id: 30, phase: .began, point: Point(x: 5, y: 5))], at: at(20_000_000))
        #expect(s.showing == .pattern && s.scene.nodes.count == 9 && s.serviceEntry?.pad == nil)
    }

    @Test func theOwnersCodeThereIsCountedFirstAndCheckedOnlyAsAServiceCode() {
        // The owner's 6-digit code pad: the service pad has 6 boxes too.
        var s = screen(.code, codeLength: 6, persistent: true)
        _ = s.longPress(at: promptPoint(s), from: 1_000_000)
        #expect(s.showing == .service)
        _ = s.touches([ScreenTouch(id: 77, phase: .ended, point: promptPoint(s))], at: at(4_100_000))
        let typed = s.tapShown([1, 3, 5, 7, 9, 0], from: 4_200_000)
        // Counted before it is checked.
        #expect(typed.contains(.store(LockoutRecord(failures: 1))))
        #expect(!typed.contains { if case .verify = $0 { true } else { false } })
        let checked = s.stored(error: nil, at: at(5_000_000))
        #expect(checked.contains(.verify(.service(ascii("135790")))))
        #expect(!checked.contains { if case .verify(.code) = $0 { true } else { false } })
        let wrong = s.verified(.wrong(digest: nil), at: at(5_100_000))
        #expect(wrong.contains(.notify(.failed(method: .service, failures: 1, retryAfter: .milliseconds(500)))))
        #expect(s.scene.prompt == "Wrong code, try again" && s.scene.boxes.allSatisfy { $0.error })
        #expect(s.showing == .service, "the service pad stays for another try")
        _ = s.timer(at: at(5_700_000))
        #expect(s.shownCode?.state == .entering && s.scene.prompt == "Service code")
    }

    @Test func aServiceCodeUnlocksAsServiceAndTheOwnersScreenComesBackCleared() {
        var s = screen(persistent: true)
        _ = s.longPress(at: promptPoint(s), from: 1_000_000)
        _ = s.touches([ScreenTouch(id: 77, phase: .ended, point: promptPoint(s))], at: at(4_100_000))
        _ = s.tapShown([2, 4, 6, 8, 0, 2], from: 4_200_000)
        _ = s.stored(error: nil, at: at(5_000_000))
        _ = s.verified(.match(duress: false), at: at(5_100_000))
        let unlocked = s.stored(error: nil, at: at(5_200_000))
        #expect(unlocked.contains(.notify(.unlocked(method: .service, at: at(5_100_000)))))
        #expect(unlocked.contains(.releaseInput))
        #expect(s.session.state == .unlocked(.service, at: at(5_100_000)) && s.session.failures == 0)
        #expect(s.shownCode?.state == .accepted)
        _ = s.timer(at: at(5_800_000))
        #expect(s.showing == .pattern && s.serviceEntry?.isOpen == false)
        #expect(s.scene.boxes.isEmpty && s.scene.keys.isEmpty && s.scene.nodes.isEmpty)
    }

    @Test func aHardwareKeypadTypesIntoTheServicePad() {
        var s = screen(.pattern)
        _ = s.longPress(at: promptPoint(s), from: 1_000_000)
        var out: [LockScreen.Action] = []
        for (i, d) in [9, 8, 7, 6, 5].enumerated() { out += s.hardwareKey(.digit(d), at: at(4_200_000 + Int64(i) * 10_000)) }
        out += s.hardwareKey(.backspace, at: at(4_300_000))
        out += s.hardwareKey(.digit(1), at: at(4_310_000))
        out += s.hardwareKey(.digit(2), at: at(4_320_000))
        #expect(out.contains(.verify(.service(ascii("987612")))))
        #expect(out.contains(.notify(.progress(entered: 6, total: 6))))
    }

    @Test func wrongServiceCodesLockOutAndNoEntryOpensDuringTheWait() {
        var s = screen(schedule: LockoutSchedule(seconds: [0, 60]))
        _ = s.longPress(at: promptPoint(s), from: 1_000_000)
        _ = s.touches([ScreenTouch(id: 77, phase: .ended, point: promptPoint(s))], at: at(4_100_000))
        _ = s.tapShown([1, 1, 1, 1, 1, 1], from: 4_200_000)
        _ = s.verified(.wrong(digest: nil), at: at(5_000_000))
        _ = s.timer(at: at(5_600_000))
        _ = s.tapShown([2, 2, 2, 2, 2, 2], from: 5_700_000)
        let second = s.verified(.wrong(digest: nil), at: at(6_500_000))
        #expect(second.contains { if case .notify(.lockout) = $0 { true } else { false } })
        #expect(s.scene.keys.allSatisfy { $0.disabled })
        // Typing does nothing during the wait.
        #expect(s.tapShown([3], from: 7_000_000).isEmpty || s.shownCode?.entered == 0)
        _ = s.timer(at: at(36_600_000))  // 30 s untouched
        #expect(s.showing == .pattern)
        _ = s.longPress(at: promptPoint(s), from: 37_000_000, id: 12)
        #expect(s.showing == .pattern, "no entry while locked out")
    }
}
