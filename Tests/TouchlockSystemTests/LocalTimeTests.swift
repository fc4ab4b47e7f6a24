import Glibc
import Testing
import TouchlockCore
@testable import TouchlockSystem

/// The local time as the clock shows it, from the C library's own zone handling.
@Suite(.serialized) struct LocalTimeTests {
    /// Runs `body` with TZ set to `zone` (a POSIX zone: no tzdata needed), then restores it.
    func inZone(_ zone: String, _ body: () throws -> Void) rethrows {
        let old = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", zone, 1)
        defer {
            if let old { setenv("TZ", old, 1) } else { unsetenv("TZ") }
            tzset()
        }
        try body()
    }

    /// 2023-11-14 22:13:20 UTC, a Tuesday.
    let t = 1_700_000_000

    @Test func theTimeAndTheDateAreThoseOfTheZoneIn12Or24Hours() {
        let p24 = ClockHours.patterns(twelve: false), p12 = ClockHours.patterns(twelve: true)
        inZone("UTC0") {
            #expect(LocalTime.format(p24.time, at: t) == "22:13")
            #expect(LocalTime.format(p12.time, at: t) == "10:13 PM")
            #expect(LocalTime.format(p24.date, at: t) == "Tue 14 Nov")
        }
        // Half an hour off UTC, across midnight.
        inZone("IST-5:30") {
            #expect(LocalTime.format(p24.time, at: t) == "03:43")
            #expect(LocalTime.format(p12.time, at: t) == "3:43 AM")
            #expect(LocalTime.format(p24.date, at: t) == "Wed 15 Nov")
        }
    }

    @Test func theNextMinuteIsTheNextWholeMinuteOfTheLocalTime() {
        inZone("UTC0") {
            #expect(LocalTime.nextMinute(after: t) == t + 40)
            #expect(LocalTime.nextMinute(after: t + 40) == t + 100)
        }
        inZone("IST-5:30") { #expect(LocalTime.nextMinute(after: t) == t + 40) }
    }

    /// The C locale counts 24 hours; a format with AM/PM counts 12.
    @Test func theLocalesHoursAreReadFromItsTimeFormat() {
        #expect(LocalTime.localeTimeFormat == "%H:%M:%S")
        #expect(!ClockHours.twelveHours(localeTimeFormat: LocalTime.localeTimeFormat))
        #expect(ClockHours.twelveHours(localeTimeFormat: "%r"))
        #expect(ClockHours.twelveHours(localeTimeFormat: "%I:%M:%S %p"))
        #expect(!ClockHours.twelveHours(localeTimeFormat: "%T"))
    }

    /// Armed, the timer fires at the next whole minute of the wall clock (a real timerfd
    /// on CLOCK_REALTIME); stopped, it is not armed at all.
    @Test func theMinuteTimerIsArmedForTheNextWholeMinuteAndStopsAltogether() throws {
        let loop = try EventLoop()
        try inZone("UTC0") {
            let timer = try MinuteTimer(loop: loop) { _ in }
            #expect(timer.timeLeft == nil)
            timer.start()
            let now = WallClock.now()
            let left = try #require(timer.timeLeft)
            #expect(left > 0 && left <= 60)
            let at = now + left
            #expect(abs(at - (at / 60).rounded() * 60) < 0.05, "fires at \(at), not at a whole minute")
            timer.stop()
            #expect(timer.timeLeft == nil)
        }
    }
}
