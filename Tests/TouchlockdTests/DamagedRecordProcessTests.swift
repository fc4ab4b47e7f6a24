import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

private let rightPattern = Pattern(rows: 3, columns: 3, nodes: [0, 4, 8, 5])

private func writeFile(_ path: String, _ text: String) throws {
    try DurableFile.makeDirectory(DurableFile.directory(of: path))
    try DurableFile.replace(path, with: Array(text.utf8))
}

@Suite(.serialized) struct DamagedRecordProcessTests {
    @Test func aCutRecordStartsLockedOutAsAfterTheDamagedCountAndRootClearsIt() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n[lockout]\ndamaged_count = 9\n")
        var bytes = rightPattern.secretBytes
        var s = StoredState()
        s.patternHash = try SecretHash.make(&bytes)
        s.lockout = LockoutRecord(failures: 2)
        let whole = s.text
        // Cut inside the pattern's hash: every line before it reads, the check is gone.
        try writeFile(d.statePath, String(whole.prefix(whole.count - 40)))
        try d.start(replay: nil)

        let st = try d.status()
        #expect(st.state == .lockout && st.failures == 9, "\(st)")
        #expect(st.record == .damaged)
        #expect(st.reason?.contains("cut off") == true, "\(st.reason ?? "no reason")")
        // Gatekeeper's ninth failure: 90 minutes.
        #expect((5_395_000...5_400_000).contains(st.retryAfterMilliseconds ?? 0))
        // The hash of a record that fails its check is not used.
        #expect(st.enrolled == [])
        #expect(d.log.contains("damaged record"), "\(d.log)")
        // A locked screen after a damaged record takes no new secret.
        let enroll = try d.ctl(["enroll", "pattern", "--screen", "--timeout", "2"])
        #expect(enroll.status == 1 && enroll.output.contains("busy"), "\(enroll.output)")

        // Only root clears it.
        if getuid() == 0, access("/usr/bin/setpriv", X_OK) == 0 {
            chmod(d.dir, 0o755)
            let other = try d.ctl(["lockout", "--reset"], as: ["--reuid=65534", "--regid=0", "--clear-groups"])
            #expect(other.status == 1 && (other.output.contains("forbidden") || other.output.contains("Permission denied")), "\(other.output)")
            #expect(try d.status().failures == 9)
        }
        let reset = try d.ctl(["lockout", "--reset"])
        #expect(reset.status == 0 && reset.output.contains("\"state\":\"locked\""), "\(reset.output)")
        let after = try d.status()
        #expect(after.state == .locked && after.failures == 0 && after.record == nil && after.reason == nil, "\(after)")
        #expect(d.log.contains("lockout reset by pid"))
        // The file is whole again.
        guard case .whole(let back) = StoredState.read(d.stateText.map { Array($0.utf8) }) else {
            Issue.record("the reset did not write a whole record: \(d.stateText ?? "none")")
            return
        }
        #expect(back.lockout.failures == 0)
    }

    @Test func anEmptyRecordIsDamageNotAFirstStart() throws {
        let d = try DaemonProcess(config: "")
        try writeFile(d.statePath, "")
        try d.start(replay: nil)
        let st = try d.status()
        #expect(st.state == .lockout && st.failures == 10 && st.record == .damaged, "\(st)")
        #expect((14_575_000...14_580_000).contains(st.retryAfterMilliseconds ?? 0))
    }

    @Test func aFailureCountWithoutItsDeadlineOnTheSameBootWaitsInFull() throws {
        let d = try DaemonProcess(config: "")
        var s = StoredState()
        s.bootID = BootID.current()
        s.lockout = LockoutRecord(failures: 5)
        try writeFile(d.statePath, s.text)
        try d.start(replay: nil)
        let st = try d.status()
        #expect(st.state == .lockout && st.failures == 5 && st.record == nil, "\(st)")
        #expect((55_000...60_000).contains(st.retryAfterMilliseconds ?? 0))
    }
}

@Suite struct HostileInputProcessTests {
    @Test func aHugeEvemuTimeIsAnErrorInTouchlockctlReplayAndTouchlockd() throws {
        let d = try DaemonProcess(config: "")
        let path = d.dir + "/huge.evemu"
        try writeFile(path, "# EVEMU 1.3\nN: panel\nI: 0003 0eef 0001 0100\nE: 99999999999999.000000 0000 0000 0\n")
        let ctl = try run([DaemonProcess.ctl, "replay", path, "--json"], in: d.dir)
        #expect(ctl.status == 1 && ctl.output.contains("line 4") && ctl.output.contains("out of range"), "\(ctl)")
        let daemon = try run([DaemonProcess.binary, "--config-root", d.dir, "--display", "headless", "--size", "64x64",
                              "--socket", d.socketPath, "--state", d.statePath, "--replay", path], in: d.dir)
        #expect(daemon.status == 1 && daemon.output.contains("\(path):4"), "\(daemon)")
    }

    @Test func aQuirkOptionStartingWithEqualsNamesFileAndLine() throws {
        let d = try DaemonProcess(config: "[lockout]\nschedule = none\n\n[input]\nquirk = \"panel\"=\n")
        let r = try run([DaemonProcess.binary, "--config-root", d.dir, "-C", d.configPath, "--check-config"], in: d.dir)
        #expect(r.status == 1 && r.output.contains("\(d.configPath):5:") && r.output.contains("unknown option '='"), "\(r)")
    }
}

@Suite struct SecretBufferProcessTests {
    /// Without CAP_IPC_LOCK and with no locked memory allowed, the daemon still checks
    /// attempts, and says once that its secret buffers may reach swap.
    @Test(.enabled(if: getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 && access("/usr/bin/prlimit", X_OK) == 0,
                   "needs root, setpriv and prlimit"))
    func aRefusedMlockIsLoggedOnceAndAttemptsStillWork() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        var bytes = rightPattern.secretBytes
        var s = StoredState()
        s.patternHash = try SecretHash.make(&bytes)
        try writeFile(d.statePath, s.text)
        let replay = d.dir + "/attempts.evemu"
        try writeFile(replay, recording(of: [[0, 1, 2, 5], [6, 3, 0, 1], rightPattern.nodes], on: Size(width: 640, height: 400)))
        try d.start(replay: replay, prefix: ["/usr/bin/prlimit", "--memlock=0:0", "--",
                                             "/usr/bin/setpriv", "--bounding-set=-ipc_lock", "--inh-caps=-ipc_lock", "--"])
        let sub = try d.client()
        _ = try sub.request(.subscribe, timeout: waited(5000))
        var failed = 0
        var unlocked = false
        let deadline = EventLoop.now() + waited(15_000)
        while !unlocked, EventLoop.now() < deadline {
            guard let (event, _) = try sub.nextEvent(timeout: deadline - EventLoop.now()) else { break }
            if case .failed = event { failed += 1 }
            if case .unlocked = event { unlocked = true }
        }
        #expect(failed == 2 && unlocked, "log:\n\(d.log)")
        let warnings = d.log.split(separator: "\n").filter { $0.contains("cannot lock secret buffers in memory") }
        #expect(warnings.count == 1, "log:\n\(d.log)")
        #expect(warnings.first?.contains("Operation not permitted") == true || warnings.first?.contains("Cannot allocate memory") == true)
    }
}
