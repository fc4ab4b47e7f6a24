import Testing
@testable import TouchlockCore

/// `[socket] group`: letters and digits of any script, `_`, `-` and `.`; ASCII is checked
/// without the Unicode tables, with the same answers.
@Suite struct ConfigGroupNameTests {
    func group(_ v: String) -> String? {
        var c = Config()
        do { try c.set(section: "socket", key: "group", value: v) } catch { return nil }
        return c.socketGroup
    }

    @Test func acceptsLettersDigitsAndTheThreeMarks() {
        for name in ["touchlock", "Kiosk_2", "a-b.c", "0", "grüppe", "日本語", "kiosk٣"] {
            #expect(group(name) == name, "\(name) refused")
        }
    }

    @Test func refusesEverythingElse() {
        for name in ["", "two words", "a/b", "a:b", "tab\there", "x+y", "a,b", "a\u{00A0}b",
                     String(repeating: "g", count: 33)] {
            #expect(group(name) == nil, "\(name) accepted")
        }
    }

    /// `[socket] message_group`: none by default (the message is root's); a group name as
    /// `group` takes, or nothing again.
    @Test func theMessageGroupIsNoneByDefaultAndTakesAGroupName() throws {
        var c = Config()
        #expect(c.messageGroup == nil)
        try c.set(section: "socket", key: "message_group", value: "kiosk-admin")
        #expect(c.messageGroup == "kiosk-admin")
        #expect(Config.keys.first { $0.name == "message_group" }?.show(c) == "kiosk-admin")
        try c.set(section: "socket", key: "message_group", value: "")
        #expect(c.messageGroup == nil)
        for bad in ["two words", "a:b", String(repeating: "g", count: 33)] {
            #expect(throws: Config.BadValue.self) { try c.set(section: "socket", key: "message_group", value: bad) }
        }
    }

    @Test func asciiAnswersAsTheUnicodePropertiesDo() {
        for a in UInt8(0)...UInt8(127) {
            let c = Character(Unicode.Scalar(a))
            let unicode = c.isLetter || c.isNumber || "_-.".contains(c)
            #expect(Config.isGroupNameCharacter(c) == unicode, "byte \(a)")
        }
    }
}
