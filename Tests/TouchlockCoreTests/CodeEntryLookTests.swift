import Testing
@testable import TouchlockCore

/// What the code screen shows around a submitted code: no digit in clear, the cursor of
/// a full pad, submit on OK, the disabled look.
@Suite struct CodeEntryLookTests {
    func screen(_ settings: String) throws -> LockScreen {
        var c = Config()
        try c.apply(settings: "unlock_method = code\n" + settings)
        let size = Size(width: 480, height: 800)
        return LockScreen.make(config: c, size: size, density: Density(dpi: 187), shuffleSeed: 0)
    }

    func digitsShown(_ s: LockScreen) -> [Int] {
        s.scene.boxes.compactMap { if case .digit(let d) = $0.content { d } else { nil } }
    }

    @Test func secureEntryShowsNoDigitInClearOnceSubmittedNorDuringTheErrorHold() throws {
        var s = try screen("code_secure = true\ncode_reveal_ms = 1300\nerror_hold_ms = 800\n")
        _ = s.key(.digit(3), at: at(0))
        #expect(digitsShown(s) == [3])  // the reveal while typing
        for (i, d) in [5, 7, 9].enumerated() { _ = s.key(.digit(d), at: at(Int64(i + 1) * 100_000)) }
        #expect(s.code!.state == .submitted)
        #expect(digitsShown(s) == [], "the last digit in clear while the code is checked")
        _ = s.verified(false, at: at(400_000))
        #expect(s.scene.boxes.allSatisfy { $0.error })
        #expect(digitsShown(s) == [], "a digit in clear during the error hold")
        #expect(s.scene.boxes.allSatisfy { $0.content == .dot })
    }

    @Test func aFullPadShowsTheCursorBesideTheLastDigitUntilTheVerdict() throws {
        var s = try screen("")
        for (i, d) in [1, 2, 3, 4].enumerated() { _ = s.key(.digit(d), at: at(Int64(i) * 100_000)) }
        #expect(s.code!.state == .submitted)
        let last = try #require(s.scene.boxes.last)
        let cursor = try #require(last.cursor, "no cursor in the last box while the code is checked")
        #expect(cursor.opacity == 1)
        #expect(cursor.x > Double(last.rect.x) + Double(last.rect.width) / 2, "the cursor is beside the digit, not on it")
        #expect(s.scene.boxes.dropLast().allSatisfy { $0.cursor == nil })
        _ = s.verified(false, at: at(500_000))
        #expect(s.scene.boxes.allSatisfy { $0.cursor == nil })
    }

    @Test func withSubmitOnOKTheFullPadWaitsForOKWithItsCursorBlinking() throws {
        var s = try screen("code_submit = ok\n")
        var out: [LockScreen.Action] = []
        for (i, d) in [1, 2, 3, 4].enumerated() { out += s.key(.digit(d), at: at(Int64(i) * 100_000)) }
        #expect(codeVerification(out) == nil)
        #expect(s.code!.state == .entering)
        #expect(s.scene.boxes.last?.cursor != nil)
        #expect(out.contains { if case .armTimer = $0 { true } else { false } }, "the cursor blinks on")
        // A fifth digit is not taken; OK submits the four.
        _ = s.key(.digit(5), at: at(500_000))
        let ok = s.key(.ok, at: at(600_000))
        #expect(codeVerification(ok)?.digits == [1, 2, 3, 4])
        #expect(s.code!.state == .submitted)
    }

    @Test func aBadSubmitSettingIsRefusedWithTheChoices() {
        var c = Config()
        #expect(throws: Config.BadValue(message: "code_submit: expected auto (at the last digit) or ok (on OK), found 'enter'")) {
            try c.apply(settings: "code_submit = enter\n")
        }
    }

    @Test func duringALockoutKeysNodesAndTheSwitchLookDisabledAndTheCountdownIsTheMessage() throws {
        var c = Config()
        try c.apply(settings: "unlock_method = both\n")
        let size = Size(width: 480, height: 800)
        for screen in [Preview.Screen.pattern, .code] {
            let s = try Preview.lockScreen(config: c, screen: screen, state: "lockout", size: size, density: Density(dpi: 187))
            let scene = s.scene
            #expect(scene.prompt.contains("Try again in"))
            #expect(scene.keys.allSatisfy { $0.disabled })
            #expect(scene.nodes.allSatisfy { $0.state == .disabled || $0.state == .error })
            #expect(scene.toggle?.disabled == true)
            let idle = try Preview.lockScreen(config: c, screen: screen, state: "idle", size: size, density: Density(dpi: 187)).scene
            #expect(idle.keys.allSatisfy { !$0.disabled } && idle.nodes.allSatisfy { $0.state == .normal })
            #expect(idle.toggle?.disabled == false)
        }
    }

    @Test func aBuiltInThemeIsOverriddenByTheColoursSetAfterItAndAnUnknownOneIsRefused() throws {
        var c = Config()
        try c.apply(settings: "font_size = 30\ntheme = high-contrast\nkey_pressed_color = #00ff00\n")
        #expect(c.theme.keyPressed == Color(hex: "#00ff00"))
        #expect(c.theme.background == Color(hex: "#000000") && c.theme.digitBold && c.theme.keyOutline != nil)
        #expect(c.theme.fontSize == 30, "a theme keeps the sizes set before it")
        #expect(throws: Config.BadValue(message: "theme: expected default or high-contrast, found 'neon'")) {
            try c.apply(settings: "theme = neon\n")
        }
    }
}
