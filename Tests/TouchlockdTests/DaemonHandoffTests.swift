import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockDisplay
import TouchlockSecrets
import TouchlockSystem
@testable import touchlockd

// The daemon's hand-off of the screen, run by the Daemon itself on a real event loop, over
// the display tests' fake DRM card (DRM master refused on demand, frames scanned out) and
// VTs whose switches the test completes as the kernel would: what only the VM reached.

/// The kernel's VTs through the daemon's seam: ours is 8, the kiosk's 1. A switch the
/// daemon asks for (VT_ACTIVATE) completes when the test, standing for the kernel, sends
/// the signal that completes it (`TerminalHandoff.acquireSignal`, `releaseSignal`).
final class KioskTerminals: VirtualTerminalDevice {
    let number = 8
    /// The VT on screen.
    private(set) var active: Int
    var inUse: Set<Int> = [1, 8]
    /// The ioctls asked, in order.
    private(set) var calls: [String] = []
    private var asked: Int?

    init(active: Int) { self.active = active }

    func activeTerminal() throws(SystemError) -> Int { active }
    func terminalsInUse() throws(SystemError) -> Set<Int> { inUse }
    /// Told of each VT_ACTIVATE as it is asked (what holds at that moment).
    var onActivate: ((Int) -> Void)?

    func activate(_ n: Int) throws(SystemError) {
        calls.append("activate \(n)")
        asked = n
        onActivate?(n)
    }
    func acknowledgeAcquire() throws(SystemError) {
        calls.append("ack acquire")
        active = number
    }
    func answerRelease(allowed: Bool) throws(SystemError) {
        calls.append(allowed ? "allow release" : "refuse release")
        if allowed, let asked { active = asked }
    }
    func lockSwitching(_ on: Bool) throws(SystemError) { calls.append(on ? "lock switching" : "unlock switching") }
    func restore(showing back: Int?) {
        calls.append(back.map { "restore, activate \($0)" } ?? "restore")
        if let back { active = back }
    }
    func leaveLocked() { calls.append("leave locked") }

    /// VT_ACTIVATEs asked, in order.
    var activations: [String] { calls.filter { $0.hasPrefix("activate") } }
}

/// A daemon over the fake card and VTs, started, with what a user would look at.
final class HandoffRig {
    let card: FakeDrmDevice
    let vt: KioskTerminals
    let loop: EventLoop
    let handoff: TerminalHandoff
    let daemon: Daemon
    /// What subscribers were told.
    var events: [LockEvent] = []
    /// The runtime record beside the control socket (a real file).
    let runtime: RuntimeFile
    /// The VT switch's timeouts, fired by the test (`switchTimesOut`), never by the clock.
    var switchTimers: [(Instant, (Instant) -> Void)] = []

    init(card: FakeDrmDevice, vt: KioskTerminals, loop: EventLoop, handoff: TerminalHandoff, daemon: Daemon, runtime: RuntimeFile,
         switchTimers: [(Instant, (Instant) -> Void)]) {
        self.switchTimers = switchTimers
        self.card = card
        self.vt = vt
        self.loop = loop
        self.handoff = handoff
        self.daemon = daemon
        self.runtime = runtime
    }

    var status: Status { daemon.status }

    /// The daemon stops (SIGTERM: a restart, an upgrade).
    private(set) var stopped = false
    func stop() {
        stopped = true
        daemon.shutdown()
    }

    /// The kernel completes the switch to ours once the daemon has asked for it (with the
    /// display free at start, only after its first frame is shown on the VT on screen).
    func switchCompletes() throws {
        let asked = try turn { vt.activations.contains("activate \(vt.number)") }
        #expect(asked, "VT \(vt.number) was never asked for")
        handoff.acquireSignal()
    }

    /// The switch under way waits longer than its timeout: its timers fire.
    func switchTimesOut() {
        let due = switchTimers
        switchTimers = []
        for (t, f) in due { f(t) }
    }

    /// Turns the loop until `done` holds (what is ready is served; the loop never waits on
    /// a clock for it). False if it does not within 5 s, which is a failure.
    func turn(until done: () -> Bool) throws -> Bool {
        let giveUp = EventLoop.now() + .milliseconds(5000)
        while !done() && EventLoop.now() < giveUp {
            loop.schedule(at: EventLoop.now() + .milliseconds(1)) { [loop] _ in loop.stop() }
            try loop.run()
        }
        return done()
    }

    /// Turns the loop a few times: what was deferred or is ready now has run.
    func settle() throws {
        for _ in 0..<5 {
            loop.schedule(at: EventLoop.now() + .milliseconds(1)) { [loop] _ in loop.stop() }
            try loop.run()
        }
    }

    /// A `lock` request (`shown`: answered once its frame is on the screen, as logind's
    /// sleep asks); its answer once it comes.
    func lock(shown: Bool = false) -> () -> Result<Status.State, ControlError>? {
        var reply: Result<Status.State, ControlError>?
        daemon.lockRequested(shown: shown) { reply = $0 }
        return { reply }
    }

    /// Draws `nodes` with one finger through their centres, 8 ms a sample.
    func draw(_ nodes: [Int]) {
        guard let grid = daemon.lock.pattern?.grid else {
            Issue.record("no pattern on the screen")
            return
        }
        var t = EventLoop.now()
        for (i, n) in nodes.enumerated() {
            daemon.touched([ScreenTouch(id: 1, phase: i == 0 ? .began : .moved, point: grid.center(of: n))], at: t)
            t = t + .milliseconds(8)
        }
        daemon.touched([ScreenTouch(id: 1, phase: .ended, point: grid.center(of: nodes.last!))], at: t)
    }

    /// Whether the lock screen's frame is what the card scans out.
    var ourFrameShown: Bool { card.scannedOut > 100 }
}

/// The state a `lock` was answered with, nil if refused or not answered.
private func answered(_ reply: Result<Status.State, ControlError>?) -> Status.State? {
    if case .success(let s)? = reply { s } else { nil }
}

/// The pattern enrolled in every rig's state.
private let unlockPattern = [0, 1, 2, 5, 8]

private func makeDirectory() throws -> String {
    var template = Array("/tmp/touchlock-handoff-test.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
    return String(cString: made)
}

/// Starts a daemon on the fake card with VT `active` on screen; `compositorHoldsMaster`:
/// the kiosk's compositor is DRM master when the daemon opens the card. `record`: what the
/// daemon before this one kept; `twoOutputs`: Virtual-2 is plugged in too and shows the
/// lock screen beside Virtual-1. Runs `body`, then shuts the daemon down.
private func withDaemon(active: Int = 1, compositorHoldsMaster: Bool = true, record: RuntimeRecord = RuntimeRecord(),
                        twoOutputs: Bool = false, covering: (any Covering)? = nil,
                        card prepare: (FakeDrmDevice) -> Void = { _ in }, _ body: (HandoffRig) throws -> Void) throws {
    let card = FakeDrmDevice()
    card.master = !compositorHoldsMaster
    let pattern = Pattern(rows: 3, columns: 3, nodes: unlockPattern)
    var bytes = pattern.secretBytes
    var stored = StoredState()
    stored.patternHash = try SecretHash.make(&bytes)
    prepare(card)
    let dir = try makeDirectory()
    defer { _ = system("rm -rf '\(dir)'") }
    // The verifier checks secrets in the daemon: its process would be this test's runner.
    var calls = card.systemCalls
    let socketpair = calls.socketpair
    calls.socketpair = { domain, type, proto, pair in
        if type & 0xf == Int32(SOCK_SEQPACKET.rawValue) { errno = EMFILE; return -1 }
        return socketpair(domain, type, proto, pair)
    }
    try SystemCalls.$current.withValue(calls) { try DrmCalls.$current.withValue(card.drmCalls) {
        let loop = try EventLoop(signals: [])
        card.secondConnected = twoOutputs
        let drm = try DrmCard.open(path: FakeDrmDevice.path, loop: loop)
        var config = Config()
        config.statePath = dir + "/state"
        let store = StateStore(path: config.statePath, bootID: nil, stored: stored, config: config)
        let runtime = RuntimeFile(besideSocket: dir + "/socket")
        let vt = KioskTerminals(active: active)
        weak var rig: HandoffRig?
        var early: [(Instant, (Instant) -> Void)] = []
        let handoff = TerminalHandoff(device: vt, remembered: record.returnVT, previousOwn: record.ownVT,
                                      now: { EventLoop.now() },
                                      schedule: { t, f in if let rig { rig.switchTimers.append((t, f)) } else { early.append((t, f)) } })
        let daemon = Daemon(config: config, options: Options(), loop: loop, display: drm.outputs[0], store: store,
                            terminal: covering == nil ? handoff : nil, others: Array(drm.outputs.dropFirst()),
                            runtime: runtime, runtimeRecord: record, covering: covering)
        daemon.closeCard = { drm.close() }
        daemon.keepCovered = { drm.leaveOnScreen() }
        daemon.forgetScreen = { drm.restoresScreenAtShutdown = false }
        let made = HandoffRig(card: card, vt: vt, loop: loop, handoff: handoff, daemon: daemon, runtime: runtime,
                              switchTimers: early)
        rig = made
        daemon.onEvent = { [unowned made] in made.events.append($0) }
        daemon.start {}
        try body(made)
        if !made.stopped { daemon.shutdown() }
    } }
}

/// Another way of covering (what a Wayland ext-session-lock-v1 client would be): no VT,
/// the outputs and the input said taken or released when asked, each call recorded.
final class RecordedCovering: Covering {
    var report: ((Cover.Report) -> Void)?
    private(set) var calls: [String] = []
    /// Refuse the next `cover` with this reason.
    var refuse: String?

    func carryOut(_ request: Cover.Request) {
        switch request {
        case .cover:
            calls.append("take outputs")
            if let why = refuse {
                refuse = nil
                report?(.refused(why))
            } else {
                report?(.covered)
            }
        case .uncover:
            calls.append("release outputs")
            report?(.uncovered)
        case .letGo:
            calls.append("let outputs go")
        }
    }
    func holdInput(_ on: Bool) { calls.append(on ? "hold input" : "release input") }
    func shutdown(_ exit: Cover.Exit) { calls.append(exit == .stayCovered ? "exit covered" : "exit uncovered") }
}

@Suite(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
struct DaemonHandoffTests {
    /// The daemon covers through whatever `Covering` it is given: the same unlock, hand-over,
    /// refused and granted lock and exit go through another implementation with nothing
    /// else changed, and status reads the same words.
    @Test func anotherWayOfCoveringRunsTheSameDaemon() throws {
        let covering = RecordedCovering()
        try withDaemon(compositorHoldsMaster: false, covering: covering) { r in
            // Asked for at start, as a compositor's session lock is, and covered once the
            // report has come back through the loop.
            #expect(covering.calls == ["hold input", "take outputs"])
            try r.settle()
            #expect(r.status.display == .shown && r.status.vt == nil)
            r.draw(unlockPattern)
            let handedOver = try r.turn { r.events.last == .handedOver }
            #expect(handedOver)
            #expect(covering.calls == ["hold input", "take outputs", "release input", "release outputs"])
            #expect(r.status.display == .handedOver && r.status.state == .unlocked)
            covering.refuse = "the compositor refused the session lock"
            let refused = r.lock()
            try r.settle()
            #expect(refused().map { if case .failure(let e) = $0 { e.message } else { "answered" } }
                    == "cannot take the display: the compositor refused the session lock")
            #expect(r.status.state == .unlocked && r.status.lockPending == true)
            let granted = r.lock()
            try r.settle()
            #expect(answered(granted()) == .locked)
            #expect(covering.calls.suffix(3) == ["take outputs", "take outputs", "hold input"])
            #expect(r.status.display == .shown && r.status.state == .locked)
            r.stop()
            #expect(covering.calls.last == "exit covered")
        }
    }

    /// What a way of covering reports comes back through the loop, never inside the call
    /// that asked for it: a `lock` the covering grants at once is answered on a later loop
    /// turn, status saying `taking` until then, and a refusal the same way.
    @Test func aCoverGrantedAtOnceIsAnsweredFromTheLoopNotInsideTheRequest() throws {
        let covering = RecordedCovering()
        try withDaemon(compositorHoldsMaster: false, covering: covering) { r in
            r.draw(unlockPattern)
            let handedOver = try r.turn { r.events.last == .handedOver }
            #expect(handedOver)
            covering.refuse = "the compositor refused the session lock"
            let refused = r.lock()
            #expect(refused() == nil && r.status.display == .taking)
            try r.settle()
            #expect(refused().map { if case .failure(let e) = $0 { e.message } else { "answered" } }
                    == "cannot take the display: the compositor refused the session lock")
            let granted = r.lock()
            #expect(granted() == nil && r.status.display == .taking)
            try r.settle()
            #expect(answered(granted()) == .locked && r.status.display == .shown)
        }
    }

    /// Locked at boot over a kiosk whose compositor does not let DRM master go: our VT is
    /// shown, master is refused, our VT goes back to the kiosk, and status says the lock
    /// screen is not shown and why, with no hand-over announced. A `lock` switches again and,
    /// master free now, the lock screen is scanned out and the request answered.
    @Test func aStartRefusedDRMMasterIsNotShownUntilALockTakesIt() throws {
        try withDaemon(card: { $0.fail("drmSetMaster", with: EBUSY) }) { r in
            #expect(r.vt.activations == ["activate 8"])
            #expect(r.status.display == .taking)
            r.handoff.acquireSignal()  // the kiosk let its VT go: ours is on screen
            try r.settle()
            #expect(r.status.display == .notShown)
            #expect(r.status.displayReason?.contains("drmSetMaster") == true)
            #expect(r.vt.activations == ["activate 8", "activate 1"])  // our VT goes back
            r.handoff.releaseSignal()
            try r.settle()
            #expect(r.vt.active == 1 && !r.ourFrameShown)
            #expect(!r.events.contains(.handedOver))
            #expect(r.status.state == .locked && r.status.display == .notShown)

            let reply = r.lock()
            #expect(reply() == nil)  // waits for the display
            #expect(r.vt.activations.last == "activate 8")
            r.handoff.acquireSignal()
            let turned1 = try r.turn { reply() != nil && r.ourFrameShown }
            #expect(turned1)
            #expect(answered(reply()) == .locked)
            #expect(r.status.display == .shown && r.status.displayReason == nil && r.vt.active == 8)
        }
    }

    /// DRM master free at start (a boot splash that let it go): the lock screen is scanned
    /// out on the VT on screen before ours is asked for, and status says `taking` until
    /// ours is shown; a switch that never completes (the splash's daemon died in the middle
    /// of it) leaves the lock screen where it is, and it is asked for again.
    @Test func withTheDisplayFreeTheLockScreenIsShownBeforeTheVTSwitch() throws {
        try withDaemon(compositorHoldsMaster: false) { r in
            var frameAtSwitch: Bool?
            r.vt.onActivate = { n in if n == 8, frameAtSwitch == nil { frameAtSwitch = r.ourFrameShown } }
            let asked = try r.turn { r.vt.activations.contains("activate 8") }
            #expect(asked)
            #expect(frameAtSwitch == true)
            #expect(r.vt.active == 1 && r.status.display == .taking)
            // The switch times out: the lock screen stays on the screen.
            r.switchTimesOut()
            try r.settle()
            #expect(r.status.display == .notShown && r.ourFrameShown)
            r.switchTimesOut()
            try r.settle()
            #expect(r.vt.activations.filter { $0 == "activate 8" }.count == 2)
            // The kernel switches at last: ours is shown, the mode set again on it (whatever
            // the VT before did to the screen), nothing of the lock screen lost.
            let modesets = r.card.trace.filter { $0.hasPrefix("drmModeSetCrtc") }.count
            r.handoff.acquireSignal()
            let shown = try r.turn { r.status.display == .shown && r.card.trace.filter { $0.hasPrefix("drmModeSetCrtc") }.count > modesets }
            #expect(shown && r.ourFrameShown && r.card.master)
        }
    }

    /// The unlock hands the screen over in the kernel's order: the frame that clears the
    /// screen is scanned out, DRM master is dropped, then the kiosk's VT is asked for; once
    /// the kernel has switched (our release allowed), subscribers hear `handed_over` and
    /// status says so. Only then, not before, is the kiosk's VT on screen.
    @Test func anUnlockDropsMasterThenGivesTheVTBackThenSaysHandedOver() throws {
        try withDaemon(compositorHoldsMaster: false) { r in
            try r.switchCompletes()
            let shown = try r.turn { r.ourFrameShown && r.status.display == .shown }
            #expect(shown)
            // A node of the grid is drawn over the background while locked.
            let node = r.daemon.lock.pattern!.grid.center(of: 4)
            func nodeShown() -> Bool? {
                guard let n = r.card.scannedOutPixel(x: Int(node.x), y: Int(node.y)),
                      let bg = r.card.scannedOutPixel(x: 0, y: 0) else { return nil }
                return n != bg
            }
            #expect(nodeShown() == true)
            var masterAtHandBack: Bool?
            var nodeAtHandBack: Bool?
            r.vt.onActivate = { n in
                guard n == 1 else { return }
                masterAtHandBack = r.card.master
                nodeAtHandBack = nodeShown()
            }
            r.draw(unlockPattern)
            let unlocked = try r.turn { r.vt.activations.last == "activate 1" }
            #expect(unlocked)
            #expect(r.events.contains { if case .unlocked(.pattern, _) = $0 { true } else { false } })
            // Master went before the VT was asked for: the kiosk's compositor can take it.
            #expect(masterAtHandBack == false && r.card.trace.contains("drmDropMaster"))
            #expect(nodeAtHandBack == false)  // the screen was cleared before master went
            #expect(r.status.display == .handingOver && !r.events.contains(.handedOver))
            #expect(r.runtime.load().unlocked?.method == .pattern)
            r.handoff.releaseSignal()  // the kernel switches to the kiosk's VT
            try r.settle()
            #expect(r.vt.calls.last == "allow release" && r.vt.active == 1)
            #expect(r.events.last == .handedOver)
            #expect(r.status.display == .handedOver && r.status.state == .unlocked)
        }
    }

    /// With two outputs the kiosk's VT is asked for only once both have handed over: DRM
    /// master goes with the last one, and status says both are handed over.
    @Test func withTwoOutputsTheVTGoesBackOnceBothAreHandedOver() throws {
        try withDaemon(compositorHoldsMaster: false, twoOutputs: true) { r in
            try r.switchCompletes()
            let shown = try r.turn { r.status.outputs?.count == 2 && r.status.display == .shown && r.ourFrameShown }
            #expect(shown)
            var atHandBack: (master: Bool, outputs: [OutputState.Phase.Name])?
            r.vt.onActivate = { n in
                guard n == 1 else { return }
                atHandBack = (r.card.master, r.status.outputs?.map(\.state) ?? [])
            }
            r.draw(unlockPattern)
            let asked = try r.turn { r.vt.activations.last == "activate 1" }
            #expect(asked)
            #expect(atHandBack?.master == false && atHandBack?.outputs == [.handedOver, .handedOver])
            #expect(r.card.trace.filter { $0 == "drmDropMaster" }.count == 1)
            r.handoff.releaseSignal()
            try r.settle()
            #expect(r.events.last == .handedOver && r.status.display == .handedOver)
        }
    }

    /// Restarted while locked, on its own VT, which is still on screen: no switch at all,
    /// the outputs are taken at once, a `lock` is answered without waiting, and the VT to
    /// hand back to is the kiosk's kept from before, written for the daemon after this one.
    @Test func aRestartOnOurOwnShownVTCoversWithoutASwitch() throws {
        var before = RuntimeRecord()
        before.ownVT = 8
        before.returnVT = 1
        try withDaemon(active: 8, compositorHoldsMaster: false, record: before) { r in
            #expect(r.vt.activations.isEmpty)
            let turned2 = try r.turn { r.ourFrameShown }
            #expect(turned2)
            #expect(r.status.display == .shown && r.status.vt == 8)
            let reply = r.lock()
            #expect(answered(reply()) == .locked)
            #expect(r.handoff.returnTarget == 1)
            let kept = r.runtime.load()
            #expect(kept.ownVT == 8 && kept.returnVT == 1 && kept.unlocked == nil)
        }
    }

    /// Restarted between an unlock and the hand-back (the record says unlocked, but our VT
    /// is still on screen): it locks and covers rather than leave the screen to nobody, and
    /// the record says locked again before anything is taken.
    @Test func aRestartUnlockedButOnOurOwnVTLocks() throws {
        var before = RuntimeRecord()
        before.ownVT = 8
        before.returnVT = 1
        before.unlocked = (.pattern, EventLoop.now())
        try withDaemon(active: 8, compositorHoldsMaster: false, record: before) { r in
            let turned3 = try r.turn { r.ourFrameShown }
            #expect(turned3)
            #expect(r.status.state == .locked && r.status.display == .shown)
            #expect(r.vt.activations.isEmpty)
            #expect(r.runtime.load().unlocked == nil)
        }
    }

    /// Restarted while unlocked, the kiosk on screen: nothing is taken (no switch, no DRM
    /// master), status says handed over. A `lock` asks for our VT, waits for it and for
    /// master, and is answered once the lock screen is scanned out.
    @Test func aLockOverTheKioskWaitsForTheSwitchAndMaster() throws {
        var before = RuntimeRecord()
        before.ownVT = 8
        before.returnVT = 1
        before.unlocked = (.pattern, EventLoop.now())
        try withDaemon(record: before) { r in
            let turned4 = try r.turn { r.status.display == .handedOver }
            #expect(turned4)
            #expect(r.vt.activations.isEmpty && !r.card.trace.contains { $0.hasPrefix("drmSetMaster") })
            #expect(r.status.state == .unlocked)
            let reply = r.lock()
            #expect(r.vt.activations == ["activate 8"])
            #expect(reply() == nil && r.status.display == .taking)
            r.handoff.acquireSignal()
            let turned5 = try r.turn { reply() != nil && r.ourFrameShown }
            #expect(turned5)
            #expect(answered(reply()) == .locked)
            #expect(r.status.display == .shown && r.status.state == .locked)
            #expect(r.runtime.load().unlocked == nil)
        }
    }

    /// The lock before a sleep (logind) waits for more than the display: it is answered
    /// once the lock screen's frame has completed on the card, never while it is only
    /// submitted, so the system does not sleep with the kiosk's picture on the screen.
    @Test func theLockBeforeASleepIsAnsweredOnceItsFrameIsOnTheScreen() throws {
        var before = RuntimeRecord()
        before.ownVT = 8
        before.returnVT = 1
        before.unlocked = (.pattern, EventLoop.now())
        try withDaemon(record: before) { r in
            let turned = try r.turn { r.status.display == .handedOver }
            #expect(turned)
            let reply = r.lock(shown: true)
            r.handoff.acquireSignal()
            try r.settle()
            #expect(r.status.display == .shown)
            // The display is ours; not answered while its frame is not on the screen yet
            // (at emulated speed the frame may be on it already).
            #expect(reply() == nil || r.ourFrameShown)
            let done = try r.turn { reply() != nil }
            #expect(done)
            // Answered with the frame scanned out and completed, none still in flight.
            #expect(r.ourFrameShown && r.daemon.presenter.framesPresented >= 1 && !r.daemon.presenter.display.isBusy)
            #expect(answered(reply()) == .locked)
        }
    }

    /// A `lock` while the kiosk does not let its VT go: once the switch has waited its
    /// timeout the client is told why and the lock is kept pending, the screen the kiosk's;
    /// when the kiosk lets go late, the lock is carried out and the lock screen scanned out.
    @Test func aLockTheKioskHoldsItsVTAgainstIsRefusedThenCarriedOutWhenItLetsGo() throws {
        var before = RuntimeRecord()
        before.ownVT = 8
        before.returnVT = 1
        before.unlocked = (.pattern, EventLoop.now())
        try withDaemon(record: before) { r in
            let turned = try r.turn { r.status.display == .handedOver }
            #expect(turned)
            let reply = r.lock()
            #expect(r.vt.activations == ["activate 8"] && reply() == nil)
            r.switchTimesOut()
            try r.settle()
            guard case .failure(let refused)? = reply() else {
                Issue.record("the lock was answered \(String(describing: reply()))")
                return
            }
            #expect(refused.code == .displayBusy && refused.message.contains("did not complete"))
            #expect(r.status.lockPending == true && r.status.display == .handedOver && !r.ourFrameShown)
            #expect(!r.card.trace.contains { $0.hasPrefix("drmSetMaster") })
            r.handoff.acquireSignal()  // the kiosk resumed; the kernel completes the switch
            let shown = try r.turn { r.ourFrameShown }
            #expect(shown)
            #expect(r.status.display == .shown && r.status.state == .locked && r.status.lockPending == nil)
            #expect(r.vt.active == 8)
        }
    }

    /// Someone switches to our VT (chvt 8) while the kiosk has the screen: the switch is
    /// acknowledged and the kiosk's VT asked for at once; nothing is taken or drawn there.
    @Test func aSwitchToOurVTWhileUnlockedGoesStraightBack() throws {
        var before = RuntimeRecord()
        before.ownVT = 8
        before.returnVT = 1
        before.unlocked = (.pattern, EventLoop.now())
        try withDaemon(record: before) { r in
            let turned = try r.turn { r.status.display == .handedOver }
            #expect(turned)
            r.handoff.acquireSignal()
            try r.settle()
            #expect(r.vt.calls.suffix(2) == ["ack acquire", "activate 1"])
            r.handoff.releaseSignal()
            try r.settle()
            #expect(r.vt.active == 1)
            try r.settle()
            #expect(!r.ourFrameShown && !r.card.trace.contains { $0.hasPrefix("drmSetMaster") })
            #expect(r.status.display == .handedOver && r.status.state == .unlocked)
        }
    }

    /// A switch away while locked (chvt 1, a VT hotkey) is refused: the lock screen stays
    /// on the screen, DRM master stays ours.
    @Test func aSwitchAwayWhileLockedIsRefused() throws {
        try withDaemon(compositorHoldsMaster: false) { r in
            try r.switchCompletes()
            let shown = try r.turn { r.ourFrameShown }
            #expect(shown)
            r.handoff.releaseSignal()
            try r.settle()
            #expect(r.vt.calls.last == "refuse release" && r.vt.active == 8)
            #expect(r.card.master && !r.card.trace.contains("drmDropMaster"))
            #expect(r.status.display == .shown && !r.events.contains(.handedOver))
        }
    }

    /// Stopped while locked (a restart, an upgrade): our VT is let go without showing the
    /// kiosk's, so nothing of the kiosk's screen shows until the daemon after this one
    /// covers it again.
    /// The card is not closed either: its descriptor stays in systemd's store with DRM
    /// master and the lock screen's framebuffer (none removed), and switching stays locked,
    /// so neither Ctrl+Alt+F1 nor the kiosk's compositor gets the screen before the daemon
    /// after this one takes both over.
    @Test func aStopWhileLockedLeavesOurVTOnTheScreen() throws {
        try withDaemon(compositorHoldsMaster: false) { r in
            try r.switchCompletes()
            let shown = try r.turn { r.ourFrameShown }
            #expect(shown)
            let before = r.vt.calls.count
            r.stop()
            #expect(r.vt.calls.dropFirst(before) == ["leave locked"] && r.vt.active == 8)
            #expect(r.card.master && !r.card.trace.contains("close") && !r.card.trace.contains { $0.hasPrefix("drmModeRmFB") })
        }
    }

    /// A removal of the package (its prerm leaves the hand-back marker) gives the screen
    /// back even while locked: no lock screen is to come, and a machine left with switching
    /// locked would be unusable. The marker counts for that stop only.
    @Test func aStopForARemovalGivesTheScreenBackWhileLocked() throws {
        try withDaemon(compositorHoldsMaster: false) { r in
            try r.switchCompletes()
            let shown = try r.turn { r.ourFrameShown }
            #expect(shown)
            try DurableFile.replace(r.runtime.handBackPath, with: [])
            r.stop()
            #expect(r.vt.calls.last == "restore, activate 1" && r.card.trace.last == "close")
            #expect(access(r.runtime.handBackPath, F_OK) != 0)
        }
    }

    /// A system shutdown while locked (touchlock-shutdown.service leaves its marker just
    /// before touchlockd stops): the screen is let go for the shutdown's splash, VT
    /// switching unlocked and the card closed, but the kiosk's VT is not shown and the
    /// kiosk's last frame is not put back on the CRTC.
    @Test func aStopForASystemShutdownWhileLockedLetsTheScreenGoWithoutHandingItBack() throws {
        try withDaemon(compositorHoldsMaster: false) { r in
            try r.switchCompletes()
            let shown = try r.turn { r.ourFrameShown }
            #expect(shown)
            try DurableFile.replace(r.runtime.shutdownPath, with: [])
            let before = r.vt.calls.count
            let crtcsBefore = r.card.trace.filter { $0.hasPrefix("drmModeSetCrtc") }.count
            r.stop()
            #expect(Array(r.vt.calls.dropFirst(before)) == ["restore"], "\(r.vt.calls)")
            #expect(r.card.trace.last == "close")
            #expect(r.card.trace.filter { $0.hasPrefix("drmModeSetCrtc") }.count == crtcsBefore, "\(r.card.trace.suffix(12))")
            #expect(access(r.runtime.shutdownPath, F_OK) != 0)
        }
    }

    /// Restarted while unlocked with nobody holding the card (the kiosk stopped for
    /// maintenance): opening the card made the daemon DRM master; it drops it at once, so
    /// the kiosk's compositor can take the card when it starts. A lock takes it back.
    @Test func aRestartWhileUnlockedWithTheCardFreeKeepsNoMaster() throws {
        var before = RuntimeRecord()
        before.ownVT = 8
        before.returnVT = 1
        before.unlocked = (.pattern, EventLoop.now())
        try withDaemon(compositorHoldsMaster: false, record: before) { r in
            let handedOver = try r.turn { r.status.display == .handedOver }
            #expect(handedOver)
            #expect(!r.card.master && r.vt.activations.isEmpty)
            #expect(r.status.state == .unlocked)
            let reply = r.lock()
            r.handoff.acquireSignal()
            let locked = try r.turn { reply() != nil && r.ourFrameShown }
            #expect(locked)
            #expect(answered(reply()) == .locked && r.card.master && r.status.display == .shown)
        }
    }

    /// A `lock` over the kiosk while its compositor keeps DRM master: the client is told
    /// why, our VT goes back, status says a lock is pending; the next `lock`, master free
    /// by then, covers and is answered with the lock.
    @Test func aLockRefusedForDRMMasterIsToldAndTheNextLockCovers() throws {
        var before = RuntimeRecord()
        before.ownVT = 8
        before.returnVT = 1
        before.unlocked = (.pattern, EventLoop.now())
        try withDaemon(record: before) { r in
            let turned6 = try r.turn { r.status.display == .handedOver }
            #expect(turned6)
            r.card.fail("drmSetMaster", with: EBUSY)
            let first = r.lock()
            r.handoff.acquireSignal()
            let turned7 = try r.turn { first() != nil }
            #expect(turned7)
            guard case .failure(let refused)? = first() else {
                Issue.record("the refused lock was answered \(String(describing: first()))")
                return
            }
            #expect(refused.code == .displayBusy && refused.message.contains("drmSetMaster"))
            #expect(r.vt.activations == ["activate 8", "activate 1"])
            r.handoff.releaseSignal()
            try r.settle()
            #expect(r.vt.active == 1 && !r.ourFrameShown)
            #expect(r.status.lockPending == true)

            let second = r.lock()
            #expect(r.vt.activations.last == "activate 8")
            r.handoff.acquireSignal()
            let turned8 = try r.turn { second() != nil && r.ourFrameShown }
            #expect(turned8)
            #expect(answered(second()) == .locked)
            #expect(r.status.display == .shown && r.status.lockPending == nil && r.status.state == .locked)
        }
    }
}
