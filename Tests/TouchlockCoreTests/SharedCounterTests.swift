import Testing
@testable import TouchlockCore

/// Both methods on one screen, a persistent session on Gatekeeper's schedule: the
/// daemon's lock screen.
private func bothScreen() -> LockScreen {
    var c = Config()
    c.screens.methods = .both
    c.screens.codeLength = 4
    let size = Size(width: 480, height: 800)
    let s = LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 1)
    return LockScreen(pads: s.pads, session: Session(schedule: .gatekeeper, persistent: true), builder: s.builder,
                      toggle: s.toggleRect)
}

private func emittedEvents(_ actions: [LockScreen.Action]) -> [LockEvent] {
    actions.compactMap { if case .notify(let e) = $0 { return e } else { return nil } }
}

private func storedRecords(_ actions: [LockScreen.Action]) -> [LockoutRecord] {
    actions.compactMap { if case .store(let r) = $0 { return r } else { return nil } }
}

private extension LockScreen {
    /// Types `digits` and enter on a hardware keypad (it brings the code pad up); the
    /// attempt's count is stored, so it goes to the verifier.
    mutating func typeCode(_ digits: [Int], at t: inout Int64) -> [Action] {
        var out: [Action] = []
        for d in digits + [-1] {
            out += hardwareKey(d < 0 ? .enter : .digit(d), at: at(t))
            t += 50_000
        }
        return counted(out, at: t)
    }

    /// `out` and, when it asks to store the attempt's count, what follows the store.
    mutating func counted(_ out: [Action], at t: Int64) -> [Action] {
        storedRecords(out).isEmpty ? out : out + stored(error: nil, at: at(t))
    }

    /// Draws `nodes` on the screen's own grid, switching to the pattern first if needed.
    mutating func drawPattern(_ nodes: [Int], at t: inout Int64) -> [Action] {
        var out: [Action] = []
        if active == .code, let r = toggleRect {
            out += touches([ScreenTouch(id: 999, phase: .began, point: r.centre)], at: at(t))
            out += touches([ScreenTouch(id: 999, phase: .ended, point: r.centre)], at: at(t + 10_000))
            t += 20_000
        }
        let g = pattern!.grid
        let finger = Int(t)
        for (i, n) in nodes.enumerated() {
            out += touches([ScreenTouch(id: finger, phase: i == 0 ? .began : .moved, point: g.center(of: n))], at: at(t))
            t += 10_000
        }
        out += touches([ScreenTouch(id: finger, phase: .ended, point: g.center(of: nodes.last!))], at: at(t))
        t += 10_000
        return counted(out, at: t)
    }

    /// The verdict on the attempt under way, its record stored; then the error hold
    /// waited out. The actions of verdict and store.
    mutating func conclude(_ verdict: Session.Verdict, at t: inout Int64) -> [Action] {
        var out = verified(verdict, at: at(t))
        if !storedRecords(out).isEmpty { out += stored(error: nil, at: at(t)) }
        t += 1_000_000
        if case .wrong(_, let until) = session.state { _ = timer(at: until); t = max(t, until.microseconds) }
        return out
    }
}

private func submitted(_ actions: [LockScreen.Action]) -> UnlockMethod? {
    for case .verify(let attempt) in actions { return attempt.method }
    return nil
}

@Suite struct SharedCounterTests {
    /// Pattern, code, pattern, code, pattern: five failures on one counter, and the
    /// fifth locks both methods out.
    @Test func alternatingPatternAndCodeAttemptsShareOneCounter() {
        var s = bothScreen()
        var t: Int64 = 1_000_000
        var records: [LockoutRecord] = []
        var told: [LockEvent] = []
        for i in 0..<5 {
            let attempt = i % 2 == 0 ? s.drawPattern([0, 1, 2, 5], at: &t) : s.typeCode([1, 2, 3, 4], at: &t)
            #expect(submitted(attempt) == (i % 2 == 0 ? .pattern : .code), "attempt \(i)")
            // Counted before it is checked.
            records += storedRecords(attempt)
            let out = s.conclude(.wrong(digest: [UInt8(i)]), at: &t)
            records += storedRecords(out)
            told += emittedEvents(out).filter { if case .failed = $0 { true } else { false } }
        }
        #expect(records.map(\.failures) == [1, 2, 3, 4, 5])
        #expect(told.map { if case .failed(let m, let n, _) = $0 { "\(m.rawValue) \(n)" } else { "" } }
                == ["pattern 1", "code 2", "pattern 3", "code 4", "pattern 5"])
        guard case .lockout(let until) = s.session.state else {
            Issue.record("not locked out: \(s.session.state)")
            return
        }
        #expect(records.last?.deadline == until)
        // Neither method takes an attempt while locked out.
        #expect(submitted(s.typeCode([1, 2, 3, 4], at: &t)) == nil)
        #expect(submitted(s.drawPattern([0, 1, 2, 5], at: &t)) == nil)
        #expect(s.session.failures == 5)
    }

    /// The duress code is a match like the real code: after failures the reset is stored
    /// before the unlock, and the only difference is the duress event before `unlocked`.
    @Test func theDuressPathCountsFailuresAndLockoutAsTheNormalPathDoes() {
        func run(_ duress: Bool) -> (records: [LockoutRecord], events: [LockEvent], failuresAfter: Int) {
            var s = bothScreen()
            var t: Int64 = 1_000_000
            var records: [LockoutRecord] = []
            var events: [LockEvent] = []
            for i in 0..<4 {
                records += storedRecords(s.typeCode([5, 5, 5, i], at: &t))
                let out = s.conclude(.wrong(digest: [UInt8(i)]), at: &t)
                records += storedRecords(out)
            }
            let attempt = s.typeCode([2, 4, 6, 8], at: &t)
            #expect(submitted(attempt) == .code)
            records += storedRecords(attempt)
            let out = s.conclude(.match(duress: duress), at: &t)
            records += storedRecords(out)
            events += emittedEvents(out).filter {
                switch $0 {
                case .duress, .unlocked, .failed, .lockout: true
                default: false
                }
            }
            return (records, events, s.session.failures)
        }
        let normal = run(false), duress = run(true)
        #expect(normal.records == duress.records)
        // Each attempt counted before it is checked, the right one too; then cleared.
        #expect(normal.records.map(\.failures) == [1, 2, 3, 4, 5, 0])
        #expect(normal.failuresAfter == 0 && duress.failuresAfter == 0)
        #expect(duress.events.count == normal.events.count + 1)
        if case .duress(.code, _)? = duress.events.first {} else { Issue.record("no duress event first: \(duress.events)") }
        #expect(Array(duress.events.dropFirst()) == normal.events)

        // A wrong code counts once whether or not a duress code exists (the owner checks
        // both and returns one verdict), and the fifth locks out the duress code too.
        var s = bothScreen()
        var t: Int64 = 1_000_000
        for i in 0..<5 {
            _ = s.typeCode([9, 9, 9, i], at: &t)
            _ = s.conclude(.wrong(digest: [UInt8(i)]), at: &t)
        }
        #expect(s.session.failures == 5)
        #expect(s.session.lockedOutUntil != nil)
        #expect(submitted(s.typeCode([1, 3, 5, 7], at: &t)) == nil)  // the duress code is not even checked
    }

    /// Root's reset: no failures, no wait, attempts taken again; refused while one is
    /// being checked.
    @Test func aResetClearsTheCountAndTheWait() throws {
        var s = bothScreen()
        var t: Int64 = 1_000_000
        for i in 0..<5 {
            _ = s.typeCode([9, 9, 9, i], at: &t)
            _ = s.conclude(.wrong(digest: [UInt8(i)]), at: &t)
        }
        #expect(s.session.lockedOutUntil != nil)
        s.recordFault = .damaged
        #expect(s.prompt.hasPrefix("Lock record damaged"))
        _ = try s.resetLockout(at: at(t))
        #expect(s.session.state == .locked && s.session.failures == 0 && s.recordFault == nil)
        #expect(submitted(s.typeCode([1, 2, 3, 4], at: &t)) == .code)
        #expect(throws: EnrollRefusal.self) { try s.resetLockout(at: at(t)) }
        #expect(s.session.state == .verifying(.code))
    }
}
