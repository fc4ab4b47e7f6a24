import Testing
@testable import TouchlockCore

func codeScreen(_ methods: ScreenSettings.Methods = .code, size: Size = Size(width: 480, height: 800),
                lockout: LockoutSchedule? = nil) -> LockScreen {
    var c = Config()
    c.screens.methods = methods
    var s = LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 1)
    if let lockout {
        s = LockScreen(pads: s.pads, session: Session(schedule: lockout), builder: s.builder, toggle: s.toggleRect)
    }
    return s
}

func centre(_ r: PixelRect) -> Point { Point(x: Double(r.x) + Double(r.width) / 2, y: Double(r.y) + Double(r.height) / 2) }

extension LockScreen {
    /// Taps the keypad's keys for `digits` with one finger each.
    mutating func tapCode(_ digits: [Int], from t0: Int64) -> [Action] {
        var out: [Action] = []
        var t = t0
        for d in digits {
            let pad = code!
            let slot = pad.keyOrder.firstIndex(of: d)!
            let r = pad.layout.keys[slot == 9 ? 10 : slot]
            out += touches([ScreenTouch(id: Int(t), phase: .began, point: centre(r))], at: at(t))
            out += touches([ScreenTouch(id: Int(t), phase: .ended, point: centre(r))], at: at(t + 40_000))
            t += 100_000
        }
        return out
    }
}

func codeVerification(_ actions: [LockScreen.Action]) -> Code? {
    for case .verify(.code(let c)) in actions { return c }
    return nil
}

@Suite struct CodeScreenTests {
    @Test func theRightCodeOnTheKeypadUnlocksAndProgressNeverCarriesDigits() {
        var s = codeScreen()
        let a = s.tapCode([2, 0, 2, 6], from: 0)
        #expect(codeVerification(a)?.digits == [2, 0, 2, 6])
        let events = a.compactMap { if case .notify(let e) = $0 { e } else { nil } }
        #expect(events == [.progress(entered: 1, total: 4), .progress(entered: 2, total: 4),
                           .progress(entered: 3, total: 4), .progress(entered: 4, total: 4)])
        #expect(s.session.state == .verifying(.code))
        let v = s.verified(true, at: at(400_000))
        #expect(v.contains(.notify(.unlocked(method: .code, at: at(400_000)))))
        let after = s.timer(at: at(900_000))
        #expect(after.allSatisfy { if case .notify = $0 { false } else { true } })
        #expect(s.scene.boxes.isEmpty && s.scene.keys.isEmpty)
        #expect(s.scene.prompt == "Unlocked")
    }

    @Test func aWrongCodeShowsTheMessageAndANewPromptAfterTheHold() {
        var s = codeScreen()
        _ = s.tapCode([1, 1, 1, 1], from: 0)
        let v = s.verified(false, at: at(400_000))
        #expect(v.contains(.notify(.failed(method: .code, failures: 1, retryAfter: .milliseconds(500)))))
        #expect(s.scene.prompt == "Wrong code, try again")
        #expect(s.scene.boxes.allSatisfy { $0.error })
        let t = s.timer(at: at(900_000))
        #expect(t.contains(.notify(.progress(entered: 0, total: 4))))
        #expect(s.scene.prompt == "Enter your code")
        #expect(s.scene.boxes.allSatisfy { $0.content == .empty && !$0.error })
    }

    @Test func aHardwareKeypadTypesToo() {
        var s = codeScreen()
        var out: [LockScreen.Action] = []
        for d in [9, 8, 7] { out += s.key(.digit(d), at: at(Int64(d))) }
        out += s.key(.delete, at: at(20))
        out += s.key(.digit(1), at: at(30))
        out += s.key(.digit(2), at: at(40))
        #expect(codeVerification(out)?.digits == [9, 8, 1, 2])
    }

    @Test func okTooEarlySaysHowManyDigitsAndCountsNoFailure() {
        var s = codeScreen()
        _ = s.tapCode([5], from: 0)
        let ok = s.code!.layout.keys[11]
        _ = s.touches([ScreenTouch(id: 99, phase: .began, point: centre(ok))], at: at(200_000))
        _ = s.touches([ScreenTouch(id: 99, phase: .ended, point: centre(ok))], at: at(240_000))
        #expect(s.scene.prompt == "Enter all 4 digits")
        #expect(s.session.failures == 0 && s.session.state == .locked)
    }

    @Test func withBothMethodsTheControlSwitchesBetweenPatternAndCode() {
        var s = codeScreen(.both)
        #expect(s.active == .pattern)
        let toggle = s.toggleRect!
        #expect(s.scene.toggle?.label == .text("Use code"))
        #expect(!s.scene.nodes.isEmpty && s.scene.boxes.isEmpty)
        _ = s.touches([ScreenTouch(id: 1, phase: .began, point: centre(toggle))], at: at(0))
        // Pressed while the finger is on it; it switches when the finger lifts there.
        #expect(s.scene.toggle?.pressed == true && s.active == .pattern)
        _ = s.touches([ScreenTouch(id: 1, phase: .ended, point: centre(toggle))], at: at(10))
        #expect(s.active == .code && s.scene.toggle?.pressed == false)
        #expect(s.scene.nodes.isEmpty && s.scene.boxes.count == 4 && s.scene.keys.count == 12)
        #expect(s.scene.toggle?.label == .text("Use pattern"))
        #expect(s.scene.prompt == "Enter your code")
        // Nothing of either screen overlaps the control.
        #expect(s.scene.keys.allSatisfy { !$0.rect.intersects(toggle) })
        // A finger that slides off before it lifts switches nothing.
        _ = s.touches([ScreenTouch(id: 3, phase: .began, point: centre(toggle))], at: at(12))
        _ = s.touches([ScreenTouch(id: 3, phase: .moved, point: Point(x: 2, y: 2))], at: at(14))
        #expect(s.scene.toggle?.pressed == false)
        _ = s.touches([ScreenTouch(id: 3, phase: .ended, point: Point(x: 2, y: 2))], at: at(16))
        #expect(s.active == .code)
        _ = s.touches([ScreenTouch(id: 2, phase: .began, point: centre(toggle))], at: at(20))
        _ = s.touches([ScreenTouch(id: 2, phase: .ended, point: centre(toggle))], at: at(21))
        #expect(s.active == .pattern)
        #expect(s.pattern!.grid.center(of: 8).y + s.pattern!.grid.cell / 2 <= Double(toggle.y))
        // A hardware key brings the code pad up.
        _ = s.key(.digit(3), at: at(30))
        #expect(s.active == .code && s.code!.entered == 1)
    }

    @Test func theLockoutCountsDownEverySecond() {
        var s = codeScreen(lockout: LockoutSchedule(seconds: [30]))
        _ = s.tapCode([1, 2, 3, 4], from: 0)
        let v = s.verified(false, at: at(1_000_000))
        #expect(s.scene.prompt == "Too many attempts. Try again in 0:30")
        #expect(v.contains(.armTimer(at(2_000_000))))
        let t = s.timer(at: at(2_000_000))
        #expect(s.scene.prompt == "Too many attempts. Try again in 0:29")
        #expect(t.contains(.armTimer(at(3_000_000))))
        _ = s.timer(at: at(30_500_000))
        #expect(s.scene.prompt == "Too many attempts. Try again in 0:01")
        _ = s.timer(at: at(31_000_000))
        #expect(s.session.state == .locked)
        #expect(s.scene.prompt == "Enter your code")
    }

    @Test func anIdlePatternScreenAsksForNoWakeUps() {
        var s = codeScreen(.pattern)
        #expect(s.timer(at: at(1_000_000)).filter { if case .armTimer = $0 { true } else { false } }.isEmpty)
        // A blurred code pad neither.
        var c = codeScreen()
        _ = c.touches([ScreenTouch(id: 1, phase: .began, point: Point(x: 1, y: 1))], at: at(0))
        #expect(c.timer(at: at(1_000_000)).filter { if case .armTimer = $0 { true } else { false } }.isEmpty)
    }

    @Test func messagesComeFromTheConfigInAnyLanguage() throws {
        var c = Config()
        try c.apply(settings: "unlock_method = code\nmessage_code_prompt = 请输入验证码\nmessage_wrong_code = 验证码错误\n")
        let size = Size(width: 480, height: 800)
        var s = LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 0)
        #expect(s.scene.prompt == "请输入验证码")
        for d in [1, 2, 3, 4] { _ = s.key(.digit(d), at: at(Int64(d))) }
        _ = s.verified(false, at: at(10))
        #expect(s.scene.prompt == "验证码错误")
    }

    @Test func densityComesFromThePhysicalSizeUnlessOverriddenOrImplausible() {
        let size = Size(width: 1280, height: 800)
        #expect(Density(screen: size, physicalMillimetres: (217, 136)).dpi.rounded() == 150)
        #expect(Density(screen: size, physicalMillimetres: nil).dpi == 160)
        #expect(Density(screen: size, physicalMillimetres: (160, 90)).dpi == 160)
        #expect(Density(screen: size, physicalMillimetres: (217, 136), override: 120).dpi == 120)
        #expect(Density(screen: size, physicalMillimetres: (217, 136), override: 320).px == 2)
    }

    @Test func codeSettingsAreReadFromTheConfig() throws {
        var c = Config()
        try c.apply(settings: """
            unlock_method = both
            code_length = 0
            code_secure = yes
            code_reveal_ms = 1300
            keypad_shuffle = true
            stealth = on
            dpi = 160
            """)
        #expect(c.screens.methods == .both && c.screens.codeLength == 4)
        #expect(c.screens.codeSecure && c.screens.codeReveal == .milliseconds(1300) && c.screens.keypadShuffle)
        #expect(c.screens.stealth && c.screens.dpi == 160)
        #expect(throws: Config.BadValue(message: "unlock_method: expected pattern, code or both, found 'pin'")) {
            try c.apply(settings: "unlock_method = pin")
        }
        // The same keys in their sections.
        try c.set(section: "code", key: "length", value: "6")
        try c.set(section: "messages", key: "unlocked", value: "已解锁")
        #expect(c.screens.codeLength == 6 && c.screens.messages.unlocked == "已解锁")
    }
}

@Suite struct HardwareKeyTests {
    @Test func aHardwareKeypadTypesDeletesAndClearsTheCode() {
        var s = codeScreen()
        var t: Int64 = 0
        func press(_ k: KeyInput) -> [LockScreen.Action] { t += 50_000; return s.hardwareKey(k, at: at(t)) }
        _ = press(.digit(9)); _ = press(.digit(9))
        #expect(s.code?.entered == 2)
        _ = press(.backspace)
        #expect(s.code?.entered == 1)
        _ = press(.escape)
        #expect(s.code?.entered == 0)
        var out: [LockScreen.Action] = []
        for d in [4, 0, 4, 2] { out += press(.digit(d)) }
        #expect(codeVerification(out)?.digits == [4, 0, 4, 2])
    }

    @Test func keyCodesOfTopRowKeypadAndPhonePadsAreDigits() {
        #expect(KeyInput(code: 2) == .digit(1))
        #expect(KeyInput(code: 11) == .digit(0))
        #expect(KeyInput(code: 82) == .digit(0))
        #expect(KeyInput(code: 73) == .digit(9))
        #expect(KeyInput(code: 0x205) == .digit(5))
        #expect(KeyInput(code: 96) == .enter)
        #expect(KeyInput(code: 30) == nil)   // KEY_A
        // A held digit types once; a held backspace repeats.
        #expect(KeyInput(InputEvent(type: EventCode.EV_KEY, code: 3, value: 2, time: at(0))) == nil)
        #expect(KeyInput(InputEvent(type: EventCode.EV_KEY, code: 14, value: 2, time: at(0))) == .backspace)
    }
}

@Suite struct CodeScreenStartTests {
    @Test func theCursorBlinksFromTheMomentTheScreenIsShown() {
        var s = codeScreen()
        let a = s.begin(at: at(5_000_000))
        #expect(a.contains(.armTimer(Instant(microseconds: 5_637_500))))
        var p = codeScreen(.pattern)
        #expect(p.begin(at: at(5_000_000)).allSatisfy { if case .armTimer = $0 { false } else { true } })
    }
}


@Suite struct CodeLockoutTests {
    @Test func duringALockoutTheCursorIsHiddenAndNothingBlinksThenItBlinksAgain() {
        var s = codeScreen(lockout: LockoutSchedule(seconds: [30]))
        _ = s.begin(at: at(0))
        _ = s.tapCode([1, 1, 1, 1], from: 100_000)
        _ = s.verified(false, at: at(1_000_000))
        guard case .lockout(let until) = s.session.state else { Issue.record("no lockout: \(s.session.state)"); return }
        #expect(s.scene.boxes.allSatisfy { $0.cursor == nil })
        // The countdown wakes once a second; the cursor's blink does not.
        let a = s.timer(at: at(1_637_500))
        let wakes = a.compactMap { if case .armTimer(let t) = $0 { t } else { nil } }
        #expect(wakes.allSatisfy { ($0.microseconds - until.microseconds) % 1_000_000 == 0 || $0 == until })
        let after = s.timer(at: until)
        #expect(s.session.state == .locked)
        #expect(after.contains(.armTimer(until + CursorBlink.nextChange(after: Interval(microseconds: 0)))))
        #expect(s.scene.boxes.contains { $0.cursor != nil })
    }
}
