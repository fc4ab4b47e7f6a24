import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

private let screen = Size(width: 640, height: 400)
private let rightPattern = Pattern(rows: 3, columns: 3, nodes: [0, 4, 8, 5])
private let fiveWrong = [[0, 1, 2, 5], [6, 3, 0, 1], [2, 4, 6, 7], [8, 7, 6, 3], [1, 4, 7, 8]]

private func enrolledState() throws -> String {
    var bytes = rightPattern.secretBytes
    var s = StoredState()
    s.patternHash = try SecretHash.make(&bytes)
    return s.text
}

private func writeFile(_ path: String, _ text: String) throws {
    try DurableFile.makeDirectory(DurableFile.directory(of: path))
    try DurableFile.replace(path, with: Array(text.utf8))
}

/// Waits for the first event matching `want` on a subscribed client.
private func waitEvent(_ c: ControlClient, timeout: Int64 = 15_000, _ want: (Event) -> Bool) throws -> Event? {
    let deadline = EventLoop.now() + .milliseconds(timeout)
    while true {
        let left = deadline - EventLoop.now()
        if left.microseconds <= 0 { return nil }
        let next: (event: Event, line: String)?
        do { next = try c.nextEvent(timeout: left) } catch {
            if case .timedOut = error { return nil }
            throw error
        }
        guard let next else { return nil }
        if want(next.event) { return next.event }
    }
}

@Suite(.serialized) struct LockoutProcessTests {
    @Test func aLockoutSurvivesSigkillAndTheRestartHonoursTheRemainingWait() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        try writeFile(d.statePath, try enrolledState())
        let replay = d.dir + "/wrong.evemu"
        // The replay runs on the wall clock: strokes 1.5 s apart leave room for a check and
        // the 100 ms error hold even on a loaded machine, so no stroke falls into the hold.
        try writeFile(replay, recording(of: fiveWrong, on: screen, gap: 1_500_000))

        try d.start(replay: replay)
        let sub = try d.client()
        _ = try sub.request(.subscribe, timeout: waited(5000))
        let lockout = try waitEvent(sub, timeout: 30_000) { if case .lockout = $0 { true } else { false } }
        #expect(lockout != nil, "no lockout event; log:\n\(d.log)")
        let before = try d.status()
        #expect(before.state == .lockout && before.failures == 5)
        // Gatekeeper's fifth failure: one minute.
        #expect((55_000...60_000).contains(before.retryAfterMilliseconds ?? 0))
        #expect(d.stateText?.contains("failures = 5") == true)

        d.kill(SIGKILL)
        d.waitExit()
        let killedAt = EventLoop.now()

        // Restarted with the same wrong patterns replayed: they are ignored.
        try d.start(replay: replay)
        // The wait left is read no earlier than this: measured from here, the bound holds
        // however long the reply takes to come back (an emulated arm64 took 170 ms).
        let asked = EventLoop.now()
        let after = try d.status()
        #expect(after.state == .lockout && after.failures == 5)
        #expect(after.lockoutUntil == before.lockoutUntil)
        let elapsed = (asked - killedAt).milliseconds
        #expect((after.retryAfterMilliseconds ?? 0) <= (before.retryAfterMilliseconds ?? 0) - elapsed + 50)
        #expect((after.retryAfterMilliseconds ?? 0) > 40_000)
        let sub2 = try d.client()
        _ = try sub2.request(.subscribe, timeout: waited(5000))
        let failed = try waitEvent(sub2, timeout: 4000) { if case .failed = $0 { true } else { false } }
        #expect(failed == nil, "input was not ignored during the lockout")
        #expect(try d.status().failures == 5)
        #expect(d.log.contains("restored 5 failure(s) in a row"))
    }

    @Test func aRebootArmsTheFullWaitAgain() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        // Stored on another boot, its deadline long past on that boot's clock.
        var s = try StoredState(parsing: try enrolledState())
        s.bootID = "00000000-0000-0000-0000-000000000000"
        s.lockout = LockoutRecord(failures: 6, deadline: Instant(microseconds: 1))
        try writeFile(d.statePath, s.text)
        try d.start(replay: nil)
        let st = try d.status()
        #expect(st.state == .lockout && st.failures == 6)
        #expect((295_000...300_000).contains(st.retryAfterMilliseconds ?? 0))  // 5 minutes again
        #expect(d.log.contains("after a reboot"))
    }

    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aFullDiskLeavesTheScreenLockedAndSaysWhy() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        let mnt = d.dir + "/small"
        try DurableFile.makeDirectory(mnt)
        // Root without CAP_SYS_ADMIN (a container) cannot mount: that is a failure here,
        // as the test is enabled for root.
        try #require(system("mount -t tmpfs -o size=16k,mode=0700 tmpfs '\(mnt)'") == 0, "cannot mount a tmpfs")
        defer {
            d.kill(SIGKILL)
            d.waitExit()
            _ = system("umount '\(mnt)'")
        }
        d.statePath = mnt + "/state"
        try writeFile(d.statePath, try enrolledState())
        let original = d.stateText
        // Fill the rest of the file system.
        let fd = open(mnt + "/filler", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        let block = [UInt8](repeating: 0xAA, count: 1024)
        while write(fd, block, block.count) > 0 {}
        #expect(errno == ENOSPC)
        close(fd)

        let replay = d.dir + "/wrong.evemu"
        try writeFile(replay, recording(of: [fiveWrong[0], fiveWrong[1]], on: screen))
        try d.start(replay: replay)
        let sub = try d.client()
        _ = try sub.request(.subscribe, timeout: waited(5000))
        // Subscribers hear that the attempt was not stored, never `failed` as if it were.
        let notStored = try waitEvent(sub) { if case .storeFailed = $0 { true } else { false } }
        #expect(notStored == .storeFailed(method: .pattern, reason: "No space left on device"), "no store_failed event; log:\n\(d.log)")
        let st = try d.status()
        #expect(st.state == .storeFailed)
        #expect(st.reason?.contains("No space left on device") == true)
        #expect(d.log.contains("No space left on device"))
        // The second wrong pattern was not taken: input stays blocked.
        let second = try waitEvent(sub, timeout: 1500) {
            switch $0 {
            case .failed, .storeFailed: true
            default: false
            }
        }
        #expect(second == nil)
        // Its count could not be stored, so it was never checked, and counts nothing.
        #expect(try d.status().failures == 0)
        #expect(d.stateText == original)
    }
}
