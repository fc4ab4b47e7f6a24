import Testing
import TouchlockCore

@Suite struct CodeRulesTests {
    @Test func aCodeIsFourToTwelveDigits() throws {
        for n in [4, 6, 12] { try CodeRules.check(length: n) }
        for n in [0, 1, 3, 13, 16] {
            #expect(throws: CodeRules.Problem("a code has at least 4 digits and at most 12; this one has \(n)")) {
                try CodeRules.check(length: n)
            }
        }
        #expect(try CodeRules.digits(Array("0459".utf8)) == [0, 4, 5, 9])
        #expect(throws: CodeRules.Problem("a code is made of digits only (0-9)")) { try CodeRules.digits(Array("12a4".utf8)) }
        #expect(throws: CodeRules.Problem("a code is made of digits only (0-9)")) { try CodeRules.digits(Array("１２３４".utf8)) }
        #expect(throws: CodeRules.Problem("a code has at least 4 digits and at most 12; this one has 0")) {
            try CodeRules.digits([])
        }
    }

    @Test func aCodeIsAsLongAsThePadHasBoxes() throws {
        try CodeRules.fits(6, pad: 6)
        #expect(throws: CodeRules.Problem(
            "a 6-digit code cannot be typed on the pad, which has 4 boxes ([code] length = 4); give a 4-digit code, or set length = 6 first")) {
            try CodeRules.fits(6, pad: 4)
        }
    }

    @Test func theConfigTakesTheSameLengths() throws {
        var c = Config()
        try c.apply(settings: "code_length = 12")
        #expect(c.screens.codeLength == 12)
        try c.apply(settings: "code_length = -1")
        #expect(c.screens.codeLength == CodeRules.defaultLength)
        for bad in ["3", "13", "four"] {
            #expect(throws: Config.BadValue.self) { try c.apply(settings: "code_length = \(bad)") }
        }
        let e = thrown(Config.BadValue.self) { try c.apply(settings: "code_length = 2") }
        #expect(e?.message == "code_length: expected 4 to 12 digits (0 for the default, 4), found '2'")
        #expect(c.screens.codeLength == CodeRules.defaultLength)
    }

    @Test func theDuressCodeIsTypedOnTheCodePad() {
        #expect(SecretKind.allCases.map(\.method) == [.pattern, .code, .code])
        #expect(SecretKind(.pattern) == .pattern && SecretKind(.code) == .code)
        #expect(SecretKind.duress.isCode && !SecretKind.pattern.isCode)
    }
}
