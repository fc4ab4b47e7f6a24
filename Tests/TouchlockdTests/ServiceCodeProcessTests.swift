import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

// One-time service codes through a real touchlockd: the device key in a file of its own,
// codes given over the control socket as the fleet's bridge gives them, the used codes
// and the failures in files that outlive the process.

private let fleetKey = Array("the fleet key of these tests....".utf8)
private let deviceKey = ServiceCrypto.deviceKey(fleetKey: fleetKey, deviceID: "kiosk-under-test")

/// A daemon with a pattern enrolled, the device key at `keyMode` and `extra` config.
private func daemon(keyMode: mode_t = 0o600, extra: String = "") throws -> DaemonProcess {
    let d = try DaemonProcess(config: "")
    let keyPath = d.dir + "/service.key"
    try DurableFile.replace(keyPath, with: Array(ServiceKey.line(deviceKey).utf8), mode: keyMode)
    let config = "[lockout]\nerror_hold_ms = 50\n\(extra)[service]\nkey_file = \(keyPath)\n"
    try DurableFile.replace(d.configPath, with: Array(config.utf8), mode: 0o644)
    try d.enrollPattern([0, 4, 8, 5])
    return d
}

private func now() -> Int64 { Int64(WallClock.now()) }

/// The code of `key` at `t` (6 digits, 30 s: the defaults).
private func code(_ key: [UInt8] = deviceKey, at t: Int64 = now()) -> String {
    ServiceCrypto.code(key: key, at: t, settings: ServiceSettings())!
}

/// Sends service_unlock with `code`: the state, or the error. Sent again while the lock
/// screen is busy (the last wrong attempt's error hold).
private func serviceUnlock(_ d: DaemonProcess, _ code: String) throws -> Result<Status.State, ControlError> {
    for _ in 0..<50 {
        let r = try serviceUnlockOnce(d, code)
        guard errorCode(r) == "busy" else { return r }
        usleep(100_000)
    }
    return try serviceUnlockOnce(d, code)
}

private func serviceUnlockOnce(_ d: DaemonProcess, _ code: String) throws -> Result<Status.State, ControlError> {
    let c = try d.client()
    let line = try c.request(Request(id: 0, request: .serviceUnlock, code: code), timeout: waited(10_000))
    let header = try c.decode(ReplyHeader.self, from: line)
    if let error = header.error { return .failure(error) }
    return .success(try c.decode(LockReply.self, from: line).state)
}

private func lockAgain(_ d: DaemonProcess) throws {
    let c = try d.client()
    _ = try c.request(Request(id: 0, request: .lock), timeout: waited(10_000))
}

private func errorCode(_ r: Result<Status.State, ControlError>) -> String? {
    if case .failure(let e) = r { return e.code.rawValue }
    return nil
}

@Suite(.serialized) struct ServiceCodeProcessTests {
    @Test func aCodeUnlocksOnceAndIsRefusedAgainAndAfterARestart() throws {
        let d = try daemon()
        try d.start(replay: nil)
        #expect(try d.status().serviceCodes == true, "log:\n\(d.log)")
        let given = code()
        #expect(try serviceUnlock(d, given) == .success(.unlocked), "log:\n\(d.log)")
        let unlocked = try d.status()
        #expect(unlocked.state == .unlocked && unlocked.method == .service)
        #expect(d.log.contains("unlocked by service"))
        let c = try d.client()
        let metrics = try c.decode(Metrics.self, from: try c.request(.metrics, timeout: waited(5000)))
        #expect(metrics.unlocks?["service"] == 1 && metrics.unlocks?["pattern"] == nil)
        // The code is nowhere in the log, nor in the record of used codes.
        #expect(!d.log.contains(given))
        let usedPath = DurableFile.directory(of: d.statePath) + "/service-used"
        let used = try DurableFile.read(usedPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(used.contains("highest_counter = ") && !used.contains(given))

        try lockAgain(d)
        #expect(try d.status().state == .locked)
        #expect(errorCode(try serviceUnlock(d, given)) == "wrong_code")
        #expect(try d.status().state != .unlocked)
        #expect(try d.status().failures == 1)

        d.kill(SIGTERM)
        d.waitExit()
        try d.start(replay: nil)
        #expect(errorCode(try serviceUnlock(d, given)) == "wrong_code", "log:\n\(d.log)")
        let after = try d.status()
        #expect(after.state != .unlocked && after.failures == 2)
        #expect(!d.log.contains(given))
    }

    @Test func wrongCodesCountSurviveKillNineAndLockOut() throws {
        // Two failures free, then a minute.
        let d = try daemon(extra: "schedule = 0,0,60\n")
        try d.start(replay: nil)
        // Another device's code, and this device's code of ten minutes ago.
        let otherDevice = ServiceCrypto.deviceKey(fleetKey: fleetKey, deviceID: "another-kiosk")
        let wrong = try serviceUnlock(d, code(otherDevice))
        #expect(errorCode(wrong) == "wrong_code", "log:\n\(d.log)")
        #expect(try d.status().failures == 1)
        #expect(d.stateText?.contains("failures = 1") == true)

        d.kill(SIGKILL)
        d.waitExit()
        try d.start(replay: nil)
        #expect(try d.status().failures == 1, "the failure did not survive kill -9")
        let old = code(at: now() - 600)
        if old != code() && old != code(at: now() - 30) && old != code(at: now() + 30) {
            #expect(errorCode(try serviceUnlock(d, old)) == "wrong_code")
        }
        // The third failure earns the minute: the next code, even the right one, waits.
        let third = try serviceUnlock(d, "000000" == code() ? "000001" : "000000")
        #expect(errorCode(third) == "wrong_code")
        if case .failure(let e) = third { #expect((50_000...60_000).contains(e.retryAfterMs ?? 0)) }
        let st = try d.status()
        #expect(st.state == .lockout && st.failures == 3)
        let refused = try serviceUnlock(d, code())
        #expect(errorCode(refused) == "locked_out")
        if case .failure(let e) = refused { #expect((1...60_000).contains(e.retryAfterMs ?? 0)) }
        #expect(try d.status().failures == 3)
    }

    @Test func aKeyFileOthersCanReadTurnsServiceCodesOffAndNothingElse() throws {
        let d = try daemon(keyMode: 0o644)
        try d.start(replay: nil)
        let keyPath = d.dir + "/service.key"
        #expect(d.log.contains("service codes are off: the device key \(keyPath) is refused"), "log:\n\(d.log)")
        #expect(d.log.contains("mode 644"))
        let st = try d.status()
        #expect(st.serviceCodes == false && st.state == .locked && st.failures == 0)
        #expect(errorCode(try serviceUnlock(d, code())) == "no_service_key")
        #expect(try d.status().failures == 0)
    }

    @Test func aMalformedCodeIsRefusedUncounted() throws {
        let d = try daemon()
        try d.start(replay: nil)
        #expect(errorCode(try serviceUnlock(d, "12345")) == "bad_value")
        #expect(errorCode(try serviceUnlock(d, "12345a")) == "bad_value")
        #expect(try d.status().failures == 0)
    }

    /// The fleet's way: touchlockctl derives the device's key file off the device from the
    /// fleet key and the machine id, and computes the code a technician types; the daemon
    /// takes it, and oathtool computes the same code from the key file.
    @Test func theKeyAndCodeTouchlockctlMakesUnlockAndOathtoolAgrees() throws {
        let d = try DaemonProcess(config: "")
        let fleetPath = d.dir + "/fleet.key", machineID = d.dir + "/machine-id", keyPath = d.dir + "/service.key"
        try DurableFile.replace(fleetPath, with: Array(ServiceKey.line(fleetKey).utf8))
        try DurableFile.replace(machineID, with: Array("kiosk-under-test\n".utf8), mode: 0o644)
        let derived = try runApart([DaemonProcess.ctl, "service-key", "--fleet-key-file", fleetPath, "--machine-id-file", machineID], in: d.dir)
        #expect(derived.status == 0 && derived.output == ServiceKey.line(deviceKey), "\(derived)")
        try DurableFile.replace(keyPath, with: Array(derived.output.utf8))
        try DurableFile.replace(d.configPath, with: Array("[service]\nkey_file = \(keyPath)\n".utf8), mode: 0o644)
        try d.enrollPattern([0, 4, 8, 5])
        try d.start(replay: nil)

        // Computed within one step by the three (tried again if a step began in between).
        var codes: [String] = []
        for _ in 0..<3 {
            let fromFleet = try runApart([DaemonProcess.ctl, "service-code", "--fleet-key-file", fleetPath, "--device-id", "kiosk-under-test"], in: d.dir)
            let fromKey = try runApart([DaemonProcess.ctl, "service-code", "--key-file", keyPath], in: d.dir)
            let hex = String(derived.output.dropLast())
            let oath = try runApart(["/usr/bin/oathtool", "--totp", hex], in: d.dir)
            #expect(fromFleet.status == 0 && fromKey.status == 0 && oath.status == 0, "\(fromFleet) \(fromKey) \(oath)")
            codes = [fromFleet.output, fromKey.output, oath.output]
            if Set(codes).count == 1 { break }
        }
        #expect(Set(codes).count == 1 && codes[0].utf8.count == 7, "\(codes)")
        #expect(try serviceUnlock(d, String(codes[0].dropLast())) == .success(.unlocked), "log:\n\(d.log)")

        let uri = try runApart([DaemonProcess.ctl, "service-code", "--key-file", keyPath, "--uri", "--machine-id-file", machineID], in: d.dir)
        #expect(uri.output == "otpauth://totp/touchlock:kiosk-under-test?secret=\(ServiceKey.base32(deviceKey))"
                + "&issuer=touchlock&algorithm=SHA1&digits=6&period=30\n")
        // oathtool reads the URI's secret as an authenticator app does: the same code.
        let at = "1700000000"
        let ours = try runApart([DaemonProcess.ctl, "service-code", "--key-file", keyPath, "--at", at], in: d.dir)
        let theirs = try runApart(["/usr/bin/oathtool", "--totp", "--base32", "--now=@\(at)", ServiceKey.base32(deviceKey)], in: d.dir)
        #expect(ours.output == theirs.output && ours.status == 0)
    }

    /// A technician types the service code on the owner's code pad (of the same length):
    /// the screen offers nothing else, and the code unlocks as `service`.
    @Test func aServiceCodeTypedOnTheCodePadUnlocksAsService() throws {
        let d = try DaemonProcess(config: "")
        let keyPath = d.dir + "/service.key"
        try DurableFile.replace(keyPath, with: Array(ServiceKey.line(deviceKey).utf8))
        let config = "[screen]\nunlock_method = code\n[code]\nlength = 6\n[service]\nkey_file = \(keyPath)\n"
        try DurableFile.replace(d.configPath, with: Array(config.utf8), mode: 0o644)
        var owner = Array("135790".utf8)
        var bytes = codeSecretBytes(&owner)
        var state = StoredState()
        state.codeHash = try SecretHash.make(&bytes)
        try DurableFile.makeDirectory(DurableFile.directory(of: d.statePath))
        try DurableFile.replace(d.statePath, with: Array(state.text.utf8))

        // Where the keys are: asked of the daemon, then typed in a recording it replays.
        try d.start(replay: nil)
        let keys = try #require(try d.status().code?.keys)
        d.kill(SIGTERM)
        d.waitExit()
        let given = code(at: now() + 2)
        let points = given.map { keys[String($0)]! }
        let replay = d.dir + "/taps.evemu"
        try DurableFile.replace(replay, with: Array(taps(points, on: Size(width: 640, height: 400)).utf8), mode: 0o644)
        try d.start(replay: replay)
        var st = try d.status()
        for _ in 0..<150 where st.state != .unlocked {
            usleep(100_000)
            st = try d.status()
        }
        #expect(st.state == .unlocked && st.failures == 0, "\(st); log:\n\(d.log)")
        #expect(try d.status().method == .service)
        #expect(d.log.contains("unlocked by service") && !d.log.contains(given))
    }
}

/// Polls status until `done` holds (10 s at most); the last status.
private func waitStatus(_ d: DaemonProcess, _ done: (Status) -> Bool) throws -> Status {
    var st = try d.status()
    for _ in 0..<100 where !done(st) {
        usleep(100_000)
        st = try d.status()
    }
    return st
}

@Suite(.serialized) struct ServiceEntryProcessTests {
    /// A pattern-only screen, which has no pad a code could be typed on: a long press on
    /// its prompt opens the service pad, the code typed there unlocks as `service`, and the
    /// same code typed there again (after a restart) is refused and counted.
    @Test func aServiceCodeTypedOnTheServicePadOfAPatternScreenUnlocksOnce() throws {
        let d = try daemon()
        let screen = Size(width: 640, height: 400)
        // The prompt, where the daemon's screen of the same size has it.
        let band = LockScreen.make(config: Config(), size: screen, density: Density(dpi: Density.defaultDpi), shuffleSeed: 0,
                                   serviceDigits: 6).serviceBand
        let press = try #require(band.last).centre
        let hold: Int64 = 3_500_000

        // Held: the service pad opens in place of the grid, and says where its keys are.
        let pressOnly = d.dir + "/press.evemu"
        try DurableFile.replace(pressOnly, with: Array(taps([[press.x, press.y]], on: screen, held: [hold]).utf8), mode: 0o644)
        try d.start(replay: pressOnly)
        let open = try waitStatus(d) { $0.showing == .service }
        #expect(open.showing == .service && open.state == .locked && open.failures == 0, "\(open); log:\n\(d.log)")
        let keys = try #require(open.code?.keys)
        #expect(open.code?.length == 6 && open.code?.boxes.count == 6)
        d.kill(SIGTERM)
        d.waitExit()

        // The press, then the code on the service pad's keys.
        let given = code(at: now() + 6)
        let typed = d.dir + "/service-pad.evemu"
        let points = [[press.x, press.y]] + given.map { keys[String($0)]! }
        try DurableFile.replace(typed, with: Array(taps(points, on: screen, held: [hold]).utf8), mode: 0o644)
        try d.start(replay: typed)
        let st = try waitStatus(d) { $0.state == .unlocked }
        #expect(st.state == .unlocked && st.method == .service && st.failures == 0, "\(st); log:\n\(d.log)")
        #expect(d.log.contains("unlocked by service") && !d.log.contains(given))
        #expect(d.log.contains("service code: accepted") && d.log.contains("a service code of 6 digits typed on the service pad"))

        // The same code, the same way, once more: refused as used, and counted.
        try lockAgain(d)
        d.kill(SIGTERM)
        d.waitExit()
        try d.start(replay: typed)
        let again = try waitStatus(d) { $0.failures > 0 || $0.state == .unlocked }
        #expect(again.state != .unlocked && again.failures == 1, "\(again); log:\n\(d.log)")
        #expect(d.log.contains("a code already used") && d.log.contains("wrong service"))
        #expect(!d.log.contains(given))
    }
}

/// An evemu recording of one finger tapping at `points` (screen pixels) of a screen of
/// `size`, 300 ms apart; the n-th tap is held `held[n]` µs (50 ms when not given).
private func taps(_ points: [[Double]], on size: Size, held: [Int64] = []) -> String {
    var lines = testPanelHeader
    var t: Int64 = 1_000_000
    func ev(_ type: Int, _ code: Int, _ value: Int) {
        let h = String(type, radix: 16), c = String(code, radix: 16)
        let us = String(t % 1_000_000)
        lines.append("E: \(t / 1_000_000).\(String(repeating: "0", count: 6 - us.count))\(us) \(String(repeating: "0", count: 4 - h.count))\(h) \(String(repeating: "0", count: 4 - c.count))\(c) \(value)")
    }
    for (k, p) in points.enumerated() {
        let x = Int(p[0] * 32768 / Double(size.width)), y = Int(p[1] * 32768 / Double(size.height))
        ev(3, 0x2f, 0); ev(3, 0x39, k + 1); ev(1, 0x14a, 1)
        ev(3, 0x35, x); ev(3, 0x36, y); ev(3, 0, x); ev(3, 1, y); ev(0, 0, 0)
        t += k < held.count ? held[k] : 50_000
        ev(3, 0x39, -1); ev(1, 0x14a, 0); ev(0, 0, 0)
        t += 300_000
    }
    return lines.joined(separator: "\n") + "\n"
}
