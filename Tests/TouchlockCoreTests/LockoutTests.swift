import Testing
@testable import TouchlockCore

private let minute: Int64 = 60_000_000

/// A lock screen whose session stores its record, as the daemon's does.
private func persistentScreen(schedule: LockoutSchedule = .gatekeeper) -> LockScreen {
    LockScreen(pads: .pattern(PatternLock(grid: grid3, minimumLength: 3)),
               session: Session(schedule: schedule, persistent: true),
               builder: SceneBuilder(theme: Theme(), size: Size(width: 300, height: 300)))
}

private func events(_ actions: [LockScreen.Action]) -> [LockEvent] {
    actions.compactMap { if case .notify(let e) = $0 { return e } else { return nil } }
}

private func stores(_ actions: [LockScreen.Action]) -> [LockoutRecord] {
    actions.compactMap { if case .store(let r) = $0 { return r } else { return nil } }
}

extension LockScreen {
    /// Draws a wrong pattern; its count is stored (`storeError` nil) or not; it is
    /// checked and rejected with `digest`, and any record that asks for is stored.
    /// `counted`: the actions of the drawing (the count asked to be stored), `checked`:
    /// those once it is stored (the check asked for), `verdict`: the verdict's and its
    /// store's.
    mutating func fail(_ nodes: [Int], digest: [UInt8]?, at t: Int64, storeError: String? = nil)
        -> (counted: [Action], checked: [Action], verdict: [Action]) {
        let (drawn, end) = draw(nodes, id: Int(t / 1000), from: t)
        guard !stores(drawn).isEmpty else { return (drawn, [], []) }
        let checked = stored(error: storeError, at: at(end))
        guard verification(checked) != nil else { return (drawn, checked, []) }
        var v = verified(.wrong(digest: digest), at: at(end))
        if !stores(v).isEmpty { v += stored(error: nil, at: at(end)) }
        return (drawn, checked, v)
    }
}

@Suite struct LockoutTests {
    @Test func theDefaultScheduleIsGatekeepers() {
        let g = LockoutSchedule.gatekeeper
        let minutes = (1...10).map { g.wait(after: $0).microseconds / minute }
        #expect(minutes == [0, 0, 0, 0, 1, 5, 15, 30, 90, 243])
        #expect(g.wait(after: 11).microseconds == 43_740 * 1_000_000)
        #expect(g.wait(after: 19).microseconds == 286_978_140 * 1_000_000)  // 9.09 years
        #expect(g.wait(after: 20).microseconds == Int64(Int32.max) * 1_000_000)
        #expect(g.wait(after: 500) == g.wait(after: 20))
        #expect(LockoutSchedule(parsing: "gatekeeper") == g)
        #expect(LockoutSchedule(parsing: "0, 0, 5")?.wait(after: 7) == .milliseconds(5000))
        #expect(LockoutSchedule(parsing: "1,x") == nil)
        #expect(LockoutSchedule(parsing: "-1") == nil)
    }

    @Test func eachAttemptIsCountedOnDiskBeforeItIsCheckedAndTheFifthLocksOut() {
        var s = persistentScreen()
        var t: Int64 = 0
        for n in 1...4 {
            let (counted, checked, verdict) = s.fail([0, 1, 2, n + 3], digest: [UInt8(n)], at: t)
            // The count with this attempt is asked for first; nothing is checked, shown
            // or told before it is stored.
            #expect(stores(counted) == [LockoutRecord(failures: n)])
            #expect(verification(counted) == nil && events(counted).isEmpty)
            // The attempt is shown being checked (a redraw) before the store is asked for.
            #expect((counted.firstIndex(of: .redraw) ?? .max) < (counted.firstIndex(of: .store(LockoutRecord(failures: n))) ?? -1))
            #expect(verification(checked) == Pattern(rows: 3, columns: 3, nodes: [0, 1, 2, n + 3]).drawn(on: grid3))
            #expect(events(checked).isEmpty)
            // The verdict needs no store: the failure is on disk already.
            #expect(stores(verdict).isEmpty)
            #expect(events(verdict) == [.failed(method: .pattern, failures: n, retryAfter: .milliseconds(500))])
            t += 10_000_000
            _ = s.timer(at: at(t - 1))
        }
        let (counted, _, verdict) = s.fail([8, 7, 6, 3], digest: [5], at: t)
        let stored = stores(counted)
        #expect(stored.count == 1 && stored[0].failures == 5 && stored[0].deadline != nil)
        let until = stored[0].deadline!
        #expect(events(verdict).contains(.lockout(until: until)))
        #expect(s.session.state == .lockout(until: until))
        #expect(s.scene.prompt == "Too many attempts. Try again in 1:00")
        // A finger during the lockout does nothing, and the countdown ticks.
        let mid = until + Interval(microseconds: -30_500_000)
        #expect(s.touches([ScreenTouch(id: 99, phase: .began, point: grid3.center(of: 0))], at: mid).isEmpty)
        let tick = s.timer(at: mid)
        #expect(tick.contains(.redraw) && tick.contains(.armTimer(until + Interval(microseconds: -30_000_000))))
        #expect(s.scene.prompt == "Too many attempts. Try again in 0:31")
        _ = s.touches([ScreenTouch(id: 99, phase: .ended, point: grid3.center(of: 0))], at: mid)
        _ = s.timer(at: until)
        #expect(s.session.state == .locked && s.session.failures == 5)
    }

    @Test func repeatingARecentWrongGuessIsCountedThenTakenBack() {
        var s = persistentScreen()
        _ = s.fail([0, 1, 2, 5], digest: [1, 1], at: 0)
        _ = s.timer(at: at(5_000_000))
        // The same guess: counted first like any, then the count goes back on disk
        // before it is shown wrong.
        let (counted, _, v) = s.fail([0, 1, 2, 5], digest: [1, 1], at: 6_000_000)
        #expect(stores(counted).map(\.failures) == [2])
        #expect(stores(v).map(\.failures) == [1])
        #expect(events(v) == [.failed(method: .pattern, failures: 1, retryAfter: .milliseconds(500))])
        #expect(s.session.failures == 1)
        _ = s.timer(at: at(7_000_000))
        // Five minutes later it counts again.
        _ = s.fail([0, 1, 2, 5], digest: [1, 1], at: 6 * minute)
        #expect(s.session.failures == 2)
    }

    @Test func aRepeatWhoseTakingBackCannotBeStoredStaysCounted() {
        var s = persistentScreen()
        _ = s.fail([0, 1, 2, 5], digest: [1, 1], at: 0)
        _ = s.timer(at: at(5_000_000))
        let (_, end) = s.draw([0, 1, 2, 5], id: 3, from: 6_000_000)
        _ = s.stored(error: nil, at: at(end))
        _ = s.verified(.wrong(digest: [1, 1]), at: at(end))
        let v = s.stored(error: "Input/output error", at: at(end))
        // The disk holds 2: so does the screen, and subscribers hear 2.
        #expect(events(v) == [.failed(method: .pattern, failures: 2, retryAfter: .milliseconds(500))])
        #expect(s.session.failures == 2)
    }

    @Test func onlyTheLastFiveDistinctWrongGuessesAreRemembered() {
        var memory = RecentWrongGuesses()
        for i in 0..<6 { memory.record([UInt8(i)], at: at(Int64(i))) }
        let has0 = memory.contains([0], at: at(10))
        let has1 = memory.contains([1], at: at(10)), has5 = memory.contains([5], at: at(10))
        #expect(!has0 && has1 && has5)
        let later = memory.contains([5], at: at(5 * minute + 5))
        #expect(!later)
    }

    @Test func anAttemptWhoseCountCannotBeStoredIsNeverCheckedAndTheScreenSaysWhy() {
        var s = persistentScreen()
        let (_, checked, _) = s.fail([0, 1, 2, 5], digest: [1], at: 0, storeError: "No space left on device")
        #expect(verification(checked) == nil, "checked without its count on disk")
        #expect(s.session.state.name == "store_failed")
        #expect(s.session.failures == 0)
        #expect(s.scene.prompt.contains("No space left on device"))
        // Subscribers are told the attempt was not stored, never that it failed.
        #expect(events(checked) == [.storeFailed(method: .pattern, reason: "No space left on device")])
        // Input stays refused; a touch retries a store, which fails again.
        let retry = s.touches([ScreenTouch(id: 5, phase: .began, point: grid3.center(of: 0))], at: at(60_000_000))
        #expect(stores(retry) == [LockoutRecord(failures: 0)])
        #expect(!s.session.acceptsInput)
        #expect(events(s.stored(error: "No space left on device", at: at(60_000_001))).isEmpty)
        #expect(s.session.state.name == "store_failed")
        _ = s.touches([ScreenTouch(id: 5, phase: .ended, point: grid3.center(of: 0))], at: at(60_000_002))
        // The next retry stores: attempts are taken again, the retrying finger draws nothing.
        let again = s.touches([ScreenTouch(id: 6, phase: .began, point: grid3.center(of: 0))], at: at(61_000_000))
        #expect(stores(again).count == 1)
        _ = s.stored(error: nil, at: at(61_000_001))
        _ = s.timer(at: at(61_000_002))
        _ = s.touches([ScreenTouch(id: 6, phase: .moved, point: grid3.center(of: 4))], at: at(61_100_000))
        #expect(s.session.state == .locked)
        #expect(s.pattern!.path.isEmpty)
        _ = s.touches([ScreenTouch(id: 6, phase: .ended, point: grid3.center(of: 4))], at: at(61_200_000))
        let (counted, _, verdict) = s.fail([0, 1, 2, 5], digest: [1], at: 62_000_000)
        #expect(stores(counted) == [LockoutRecord(failures: 1)])
        #expect(events(verdict) == [.failed(method: .pattern, failures: 1, retryAfter: .milliseconds(500))])
    }

    @Test func aRightAnswerIsCountedThenClearedBeforeItUnlocks() {
        var s = persistentScreen()
        _ = s.fail([0, 1, 2, 5], digest: [1], at: 0)
        _ = s.timer(at: at(1_000_000))
        let (drawn, end) = s.draw([0, 4, 8], id: 7, from: 2_000_000)
        #expect(stores(drawn) == [LockoutRecord(failures: 2)])
        #expect(verification(s.stored(error: nil, at: at(end))) != nil)
        let v = s.verified(.match(duress: false), at: at(end))
        #expect(v == [.store(LockoutRecord())])
        #expect(s.session.state.name == "storing")
        let after = s.stored(error: nil, at: at(end))
        #expect(events(after) == [.unlocked(method: .pattern, at: at(end))])
        #expect(s.session.failures == 0)
    }

    @Test func aCountAtTheLargestAllowedSaturatesAtAWrongAttempt() {
        var s = LockScreen(pads: .pattern(PatternLock(grid: grid3, minimumLength: 3)),
                           session: Session(restoring: LockoutRecord(failures: Int.max), at: at(0),
                                            schedule: LockoutSchedule(seconds: [0])),
                           builder: SceneBuilder(theme: Theme(), size: Size(width: 300, height: 300)))
        let (counted, _, verdict) = s.fail([0, 1, 2, 5], digest: [1], at: 1_000_000)
        #expect(stores(counted) == [LockoutRecord(failures: Int.max)])
        #expect(events(verdict) == [.failed(method: .pattern, failures: Int.max, retryAfter: .milliseconds(500))])
        // In memory, without a store, too.
        var m = Session(failures: Int.max)
        _ = m.submit(.code, at: at(0))
        _ = m.verified(.wrong(digest: nil), at: at(0))
        #expect(m.failures == Int.max)
    }

    @Test func theDuressCodeUnlocksAndTellsSubscribersFirst() {
        var s = persistentScreen()
        let (_, end) = s.draw([0, 4, 8], id: 7, from: 0)
        _ = s.stored(error: nil, at: at(end))
        #expect(s.verified(.match(duress: true), at: at(end)) == [.store(LockoutRecord())])
        let v = s.stored(error: nil, at: at(end))
        #expect(events(v) == [.duress(method: .pattern, at: at(end)), .unlocked(method: .pattern, at: at(end))])
    }

    @Test func aRestartHonoursTheWaitAndARebootArmsItAgain() {
        let record = LockoutRecord(failures: 6, deadline: at(10 * minute))
        let g = LockoutSchedule.gatekeeper
        #expect(record.restored(sameBoot: true, now: at(8 * minute), schedule: g) == record)
        #expect(record.restored(sameBoot: true, now: at(11 * minute), schedule: g) == LockoutRecord(failures: 6))
        // After a reboot the clock starts again: the full 5 minutes from now.
        #expect(record.restored(sameBoot: false, now: at(1_000_000), schedule: g)
                == LockoutRecord(failures: 6, deadline: at(1_000_000 + 5 * minute)))
        #expect(LockoutRecord(failures: 3).restored(sameBoot: false, now: at(0), schedule: g) == LockoutRecord(failures: 3))

        var s = LockScreen(pads: .pattern(PatternLock(grid: grid3, minimumLength: 3)),
                           session: Session(restoring: record, at: at(8 * minute), schedule: g),
                           builder: SceneBuilder(theme: Theme(), size: Size(width: 300, height: 300)))
        let resumed = s.resume(at: at(8 * minute))
        #expect(resumed.contains(.armTimer(at(10 * minute))))
        #expect(s.scene.prompt == "Too many attempts. Try again in 2:00")
        #expect(s.session.record == record)
    }

    @Test func theStateFileRoundTripsAndRefusesWhatItDoesNotKnow() throws {
        var st = StoredState()
        st.bootID = "5b0c6a4e-1111-2222-3333-444455556666"
        st.lockout = LockoutRecord(failures: 5, deadline: at(123_456))
        st.patternHash = "$y$j9T$abcdefghijklmnop$qrstuvwxyz0123456789"
        let back = try StoredState(parsing: st.text)
        #expect(back == st)
        #expect(back.enrolled == [.pattern])
        #expect(throws: StoredState.Error(line: 3, message: "unknown key 'fail'")) {
            try StoredState(parsing: StoredState.sealed("version = 2\n\nfail = 3\n"))
        }
        #expect(throws: StoredState.Error.self) { try StoredState(parsing: "pattern_hash = 0-1-2-3\n") }
    }

    @Test func theCountdownReadsAsAClock() {
        #expect(Interval(microseconds: 59_000_001).countdown == "1:00")
        #expect(Interval(microseconds: 5_400_000_000).countdown == "1:30:00")
        #expect(Interval(microseconds: 393_660_000_000).countdown == "4 d 13 h")
    }
}

@Suite struct LatencyEstimatorTests {
    @Test func quantilesAreWithinABucketOfTheTruth() {
        var e = LatencyEstimator()
        #expect(e.quantile(0.5) == nil)
        // 1..1000 ms: p50 is 500 ms, p99 990 ms.
        for ms in 1...1000 { e.record(.milliseconds(Int64(ms))) }
        let p50 = Double(e.quantile(0.5)!.microseconds), p99 = Double(e.quantile(0.99)!.microseconds)
        #expect(abs(p50 - 500_000) / 500_000 <= 0.04)
        #expect(abs(p99 - 990_000) / 990_000 <= 0.04)
        #expect(e.quantile(1) == .milliseconds(1000) && e.count == 1000)
        var tiny = LatencyEstimator()
        tiny.record(Interval(microseconds: 3))
        #expect(tiny.quantile(0.5) == Interval(microseconds: 3))
    }
}
