import Testing
import TouchlockCore
import TouchlockSystem
@testable import TouchlockDisplay

/// A VT that records the ioctls asked of it, and the kernel's answers, without a kernel.
final class RecordingTerminal: VirtualTerminalDevice {
    let number = 7
    var active = 1
    var calls: [String] = []
    var failActivate: Errno?
    var locked = false

    var inUse: Set<Int> = [1, 7]
    func activeTerminal() throws(SystemError) -> Int { active }
    func terminalsInUse() throws(SystemError) -> Set<Int> { inUse }
    func activate(_ n: Int) throws(SystemError) {
        calls.append("activate \(n)")
        if let failActivate { throw SystemError("ioctl(VT_ACTIVATE)", failActivate) }
    }
    func acknowledgeAcquire() throws(SystemError) { calls.append("ack acquire"); active = number }
    func answerRelease(allowed: Bool) throws(SystemError) {
        calls.append(allowed ? "allow release" : "refuse release")
    }
    func lockSwitching(_ on: Bool) throws(SystemError) { calls.append(on ? "lock" : "unlock"); locked = on }
    func restore(showing back: Int?) {
        calls.append(back.map { "restore, activate \($0)" } ?? "restore")
        locked = false
    }
    func leaveLocked() {
        calls.append("leave locked")
        locked = true
    }
    /// The VTs asked to be answered for (apart from the ioctls, which it does not record).
    var adoptions: [String] = []
    func adoptIfSwitchesIgnored(_ n: Int, ownerEnded: Bool) -> Bool {
        adoptions.append(ownerEnded ? "\(n), its owner ended" : "\(n)")
        return false
    }
}

@Suite struct TerminalHandoffTests {
    final class Clock {
        var now = Instant(microseconds: 1_000_000)
        var timers: [(Instant, (Instant) -> Void)] = []
        func fire(at t: Instant) {
            now = t
            let due = timers.filter { $0.0 <= t }
            timers.removeAll { $0.0 <= t }
            for (_, f) in due { f(t) }
        }
    }

    func make(_ vt: RecordingTerminal, _ clock: Clock) -> (TerminalHandoff, () -> [String]) {
        let h = TerminalHandoff(device: vt, timeout: .milliseconds(2000), now: { clock.now },
                                schedule: { t, f in clock.timers.append((t, f)) })
        var events: [String] = []
        h.onShown = { events.append("shown") }
        h.onFailed = { events.append("failed: \($0)") }
        h.onHandedBack = { events.append("handed back") }
        return (h, { events })
    }

    @Test func lockThenUnlockDoesTheIoctlsInTheKernelsOrder() {
        let vt = RecordingTerminal(), clock = Clock()
        let (h, events) = make(vt, clock)
        h.show()
        #expect(vt.calls == ["unlock", "activate 7"])
        #expect(events().isEmpty)  // nothing is drawn before the kernel says ours is shown
        h.acquireSignal()
        #expect(vt.calls == ["unlock", "activate 7", "ack acquire", "lock"])
        #expect(events() == ["shown"] && vt.locked)
        h.releaseSignal()  // chvt 1 while locked
        #expect(vt.calls.last == "refuse release")
        h.handBack()
        #expect(Array(vt.calls.suffix(2)) == ["unlock", "activate 1"])
        h.releaseSignal()
        #expect(vt.calls.last == "allow release")
        #expect(events() == ["shown", "handed back"] && !vt.locked)
        clock.fire(at: clock.now + .milliseconds(5000))  // the timeouts find nothing to fail
        #expect(events() == ["shown", "handed back"])
    }

    @Test func aKioskThatNeverReleasesItsVTFailsTheShowAfterTheTimeout() {
        let vt = RecordingTerminal(), clock = Clock()
        let (h, events) = make(vt, clock)
        h.show()
        clock.fire(at: clock.now + .milliseconds(2000))
        #expect(events().count == 1 && events()[0].hasPrefix("failed: the switch to VT 7 did not complete"))
        #expect(h.machine.state == .background)
    }

    /// plymouthd ends while our switch from its VT is pending: the kernel would go on
    /// waiting for its answer until it is reaped, so its VT is taken over before ours is
    /// asked for again.
    @Test func theEndOfTheActiveVTsOwnerTakesItsVTOverThenAsksAgain() {
        let vt = RecordingTerminal(), clock = Clock()
        let (h, events) = make(vt, clock)
        h.show()
        #expect(vt.adoptions == ["1"])
        h.activeOwnerEnded()
        #expect(vt.adoptions == ["1", "1, its owner ended"])
        #expect(vt.calls == ["unlock", "activate 7", "activate 7"])
        h.acquireSignal()
        #expect(events() == ["shown"])
        // Ours on screen: an owner's end later asks nothing and takes nothing over.
        h.activeOwnerEnded()
        #expect(vt.adoptions.count == 2 && vt.calls.filter { $0 == "activate 7" }.count == 2)
    }

    @Test func aRefusedActivateFailsAtOnce() {
        let vt = RecordingTerminal(), clock = Clock()
        vt.failActivate = .notPermitted
        let (h, events) = make(vt, clock)
        h.show()
        #expect(events().count == 1 && events()[0].contains("cannot switch to VT 7"))
        #expect(events()[0].contains("Operation not permitted"))
    }

    @Test func shutdownGivesTheKiosksVTBack() {
        let vt = RecordingTerminal(), clock = Clock()
        let (h, _) = make(vt, clock)
        h.show()
        h.acquireSignal()
        h.shutdown()
        // Back to VT_AUTO first, then the kiosk's VT: in VT_PROCESS the switch would wait for
        // a release answer that never comes.
        #expect(vt.calls.last == "restore, activate 1" && !vt.locked)
    }
}

@Suite struct TerminalHandoffRestartTests {
    @Test func theVTOfTheDaemonBeforeIsNotWhereTheScreenGoesBack() {
        // The daemon before this one died on VT 8 (nobody has it open now); this one got VT
        // 7; the kiosk is on VT 1.
        let vt = RecordingTerminal()
        vt.active = 8
        vt.inUse = [1, 7]
        let h = TerminalHandoff(device: vt, previousOwn: 8, now: { Instant(microseconds: 0) }, schedule: { _, _ in })
        h.show()
        #expect(h.machine.state == .switchingIn(returnTo: 1, since: Instant(microseconds: 0)))
    }

    @Test func atBootTheActiveVTIsTheKiosksEvenBeforeTheKioskOpensIt() {
        // The kiosk starts on VT 1 only after the first unlock: nobody has it open yet.
        let vt = RecordingTerminal()
        vt.active = 1
        vt.inUse = [6, 7]
        let h = TerminalHandoff(device: vt, now: { Instant(microseconds: 0) }, schedule: { _, _ in })
        h.show()
        #expect(h.machine.state == .switchingIn(returnTo: 1, since: Instant(microseconds: 0)))
    }

    @Test func aKeptVTWinsOverTheLowestInUse() {
        let vt = RecordingTerminal()
        vt.active = 7
        vt.inUse = [1, 3, 7]
        let h = TerminalHandoff(device: vt, remembered: 3, now: { Instant(microseconds: 0) }, schedule: { _, _ in })
        #expect(h.returnTarget == 3)
        // Kept while the kiosk has not opened it yet (locked since boot): still the one.
        let notYet = TerminalHandoff(device: vt, remembered: 5, now: { Instant(microseconds: 0) }, schedule: { _, _ in })
        #expect(notYet.returnTarget == 5)
        // Nothing kept: the lowest VT in use apart from ours.
        let none = TerminalHandoff(device: vt, now: { Instant(microseconds: 0) }, schedule: { _, _ in })
        #expect(none.returnTarget == 1)
    }
}
