import Testing
@testable import TouchlockCore

@Suite struct ScreenInfoTests {
    @Test func aMessageIsPlainTextOfAtMost200Characters() throws {
        #expect(try ScreenMessage.check("Ward 3 · bed 12 — call 555 0100") == "Ward 3 · bed 12 — call 555 0100")
        #expect(try ScreenMessage.check(String(repeating: "é", count: 200)).unicodeScalars.count == 200)
        for bad in ["a\nb", "a\tb", "\u{7}", "\u{85}", "\u{2028}", "\u{202E}abc", "\u{2066}x", "   ", "",
                    String(repeating: "x", count: 201)] {
            #expect(throws: ScreenMessage.Refusal.self, "\(bad.unicodeScalars.map(\.value))") { try ScreenMessage.check(bad) }
        }
    }

    @Test func theScreenKeysTakeTheirValuesAndNameWhatIsWrong() throws {
        var c = Config()
        try c.set(section: "screen", key: "clock", value: "date-time")
        try c.set(section: "screen", key: "clock_hours", value: "12")
        try c.set(section: "screen", key: "message", value: "Hello")
        try c.set(section: "screen", key: "logo", value: "/etc/touchlock/logo.png")
        #expect(c.screens.clock == .dateTime && c.screens.clockHours == .twelve)
        #expect(c.screens.message == "Hello" && c.screens.logo == "/etc/touchlock/logo.png")
        #expect(c.text.contains("clock = date-time\nclock_hours = 12\nmessage = Hello\nlogo = /etc/touchlock/logo.png\n"))
        #expect(throws: Config.BadValue(message: "[screen] clock: expected off, time or date-time, found 'on'")) {
            try c.set(section: "screen", key: "clock", value: "on")
        }
        #expect(throws: Config.BadValue(message: "[screen] clock_hours: expected auto (the locale's), 12 or 24, found '13'")) {
            try c.set(section: "screen", key: "clock_hours", value: "13")
        }
        #expect(throws: Config.BadValue.self) { try c.set(section: "screen", key: "logo", value: "logo.png") }
        #expect(throws: Config.BadValue(message: "[screen] message: a message is plain text on one line: it has the control character U+0007")) {
            try c.set(section: "screen", key: "message", value: "\u{7}")
        }
    }

    /// New text is drawn at once, but not while the screen is off: waking draws it.
    @Test func newTextIsRedrawnUnlessTheScreenIsOff() throws {
        var config = Config()
        config.screens.clock = .time
        config.blankAfter = .milliseconds(1000)
        var lock = LockScreen.make(config: config, size: Size(width: 480, height: 800), density: Density(dpi: 187), shuffleSeed: 0)
        let t0 = Instant(microseconds: 1_000_000)
        _ = lock.begin(at: t0)
        #expect(lock.setInfo(InfoText(time: "10:09")) == [.redraw])
        #expect(lock.scene.info?.text.time == "10:09")
        #expect(lock.timer(at: t0 + .milliseconds(1000)).contains(.blankDisplay))
        #expect(lock.setInfo(InfoText(time: "10:10")) == [])
        let woke = lock.touches([ScreenTouch(id: 1, phase: .began, point: Point(x: 5, y: 5))], at: t0 + .milliseconds(2000))
        #expect(woke.contains(.redraw) && woke.contains(.wakeDisplay))
        #expect(lock.scene.info?.text.time == "10:10")
    }

    /// Laid out again for a message while a pattern is being drawn, the path and the finger
    /// stay on the same nodes of the moved grid.
    @Test func layingOutAgainKeepsThePathOnItsNodes() throws {
        let size = Size(width: 480, height: 800), density = Density(dpi: 187)
        var lock = LockScreen.make(config: Config(), size: size, density: density, shuffleSeed: 0)
        let g = try #require(lock.pattern?.grid)
        var t = Instant(microseconds: 1_000_000)
        _ = lock.begin(at: t)
        for (i, n) in [0, 1, 2].enumerated() {
            t = t + .milliseconds(40)
            _ = lock.touches([ScreenTouch(id: 1, phase: i == 0 ? .began : .moved, point: g.center(of: n))], at: t)
        }
        #expect(lock.pattern?.path == [0, 1, 2])
        let view = LockScreen.make(config: Config(), size: size, density: density, shuffleSeed: 0, message: true)
        let moved = try #require(lock.relaid(as: view))
        let h = try #require(moved.pattern?.grid)
        #expect(h.origin.y > g.origin.y)
        #expect(moved.pattern?.path == [0, 1, 2])
        #expect(moved.builder.layout?.info?.message != nil)
        #expect(moved.session.state == lock.session.state)
    }
}
