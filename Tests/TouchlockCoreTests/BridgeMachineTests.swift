import Testing
@testable import TouchlockCore

/// touchlock-mqtt's machine: what reaches the daemon from a flooded command topic, what
/// the bus is told, and that a code is never shown.
@Suite struct BridgeMachineTests {
    func machine(_ edit: (inout BridgeConfig) -> Void = { _ in }) -> BridgeMachine {
        var c = BridgeConfig()
        edit(&c)
        return BridgeMachine(config: c, deviceID: "dev1", version: "0.1.0")
    }

    func connected(_ m: inout BridgeMachine, at t: Instant) {
        _ = m.handle(.brokerConnected, at: t)
        _ = m.handle(.daemonConnected, at: t)
        _ = m.handle(.daemonState(.unlocked), at: t)
    }

    func requests(_ a: [BridgeAction]) -> [BridgeCommand] {
        a.compactMap { if case .request(.command(let c)) = $0 { c } else { nil } }
    }

    @Test func aFloodOfLocksReachesTheDaemonAtTheRateOnly() {
        var m = machine { $0.ratePerSecond = 1; $0.burst = 3 }
        var t = Instant(microseconds: 1_000_000)
        connected(&m, at: t)
        var sent = 0
        // 10,000 LOCKs over 2 s, each answered at once.
        for i in 0..<10_000 {
            t = Instant(microseconds: 1_000_000 + Int64(i) * 200)
            let out = m.handle(.command(.lock), at: t)
            for _ in requests(out) {
                sent += 1
                _ = m.handle(.commandReply(error: nil), at: t)
            }
            if let r = m.nextRelease, r <= t { sent += requests(m.handle(.tick, at: t)).count }
        }
        // 3 at once, then one a second over the 2 s, and the last one held back.
        #expect(sent >= 3 && sent <= 6, "\(sent)")
        #expect(m.pending == .lock)
        #expect(m.dropped >= 10_000 - 7)
        // It goes when the rate lets it.
        let release = m.nextRelease!
        #expect(requests(m.handle(.tick, at: release)) == [.lock])
    }

    @Test func oneCommandInFlightAtATime() {
        var m = machine { $0.burst = 10 }
        let t = Instant(microseconds: 1_000_000)
        connected(&m, at: t)
        #expect(requests(m.handle(.command(.lock), at: t)) == [.lock])
        #expect(requests(m.handle(.command(.lock), at: t)).isEmpty)
        #expect(requests(m.handle(.commandReply(error: nil), at: t)) == [.lock])
    }

    @Test func unlockIsRefusedUnlessEnabledAndNeedsACodeOfTheRightDigits() {
        var off = machine()
        let t = Instant(microseconds: 1_000_000)
        connected(&off, at: t)
        let refused = off.handle(.command(.unlock(code: "123456")), at: t)
        #expect(requests(refused).isEmpty)
        #expect(refused.contains(.publish(topic: "touchlock/dev1/event",
                                          payload: #"{"error":"unlock_disabled","event":"command_failed"}"#, retain: false)))

        var on = machine { $0.unlock = true; $0.codeDigits = 6 }
        connected(&on, at: t)
        #expect(requests(on.handle(.command(.unlock(code: nil)), at: t)).isEmpty)
        #expect(requests(on.handle(.command(.unlock(code: "12345")), at: t + .milliseconds(2000))).isEmpty)
        #expect(requests(on.handle(.command(.unlock(code: "12345a")), at: t + .milliseconds(4000))).isEmpty)
        let sent = requests(on.handle(.command(.unlock(code: "654321")), at: t + .milliseconds(6000)))
        #expect(sent == [.serviceUnlock(code: "654321")])
        #expect(!"\(sent)".contains("654321"))
        let failed = on.handle(.commandReply(error: "unknown_request"), at: t + .milliseconds(6000))
        #expect(failed.contains(.publish(topic: "touchlock/dev1/event",
                                         payload: #"{"command":"unlock","error":"unknown_request","event":"command_failed"}"#, retain: false)))
    }

    @Test func theStateIsRetainedAndOfflineWhileTheDaemonIsAway() {
        var m = machine()
        let t = Instant(microseconds: 1_000_000)
        let up = m.handle(.brokerConnected, at: t)
        #expect(up.contains(.publish(topic: "touchlock/dev1/availability", payload: "offline", retain: true)))
        #expect(up.contains(.subscribe(topic: "touchlock/dev1/set")))
        _ = m.handle(.daemonConnected, at: t)
        let known = m.handle(.daemonState(.locked), at: t)
        #expect(known == [.publish(topic: "touchlock/dev1/state", payload: "locked", retain: true),
                          .publish(topic: "touchlock/dev1/availability", payload: "online", retain: true)])
        let unlocked = m.handle(.daemonEvent(.unlocked(method: .pattern, at: t)), at: t)
        #expect(unlocked.contains(.publish(topic: "touchlock/dev1/state", payload: "unlocked", retain: true)))
        let jammed = m.handle(.daemonEvent(.storeFailed(method: .code, reason: "disk full")), at: t)
        #expect(jammed.contains(.publish(topic: "touchlock/dev1/state", payload: "jammed", retain: true)))
        let gone = m.handle(.daemonDisconnected, at: t)
        #expect(gone == [.publish(topic: "touchlock/dev1/availability", payload: "offline", retain: true)])
        // Reconnected to the broker: everything retained is published again.
        _ = m.handle(.brokerDisconnected, at: t)
        _ = m.handle(.daemonConnected, at: t)
        _ = m.handle(.daemonState(.locked), at: t)
        let again = m.handle(.brokerConnected, at: t)
        #expect(again.contains { if case .publish(let topic, _, true) = $0 { topic == "homeassistant/lock/touchlock_dev1/config" } else { false } })
        #expect(again.contains(.publish(topic: "touchlock/dev1/state", payload: "locked", retain: true)))
        #expect(again.contains(.publish(topic: "touchlock/dev1/availability", payload: "online", retain: true)))
    }

    @Test func settingsAreCheckedAndTLSIsOnForAnyBrokerButALocalOne() throws {
        var c = BridgeConfig()
        #expect(!c.usesTLS && c.effectivePort == 1883)
        try c.set(section: "broker", key: "host", value: "mqtt.example.net")
        #expect(c.usesTLS && c.effectivePort == 8883)
        #expect(c.problems() == ["[broker] TLS needs ca_file (the CA that signed the broker's certificate)"])
        #expect(throws: Config.BadValue.self) { try c.set(section: "broker", key: "password", value: "x") }
        #expect(throws: Config.BadValue.self) { try c.set(section: "topics", key: "prefix", value: "a/#") }
        #expect(throws: Config.BadValue.self) { try c.set(section: "commands", key: "unlock", value: "maybe") }
        try c.set(section: "topics", key: "discovery", value: "off")
        #expect(c.topics(deviceID: "x").discovery == nil)
    }

    @Test func theDeviceIDIsAHashOfTheMachineID() {
        // FIPS 180-4's example "abc".
        let digest: [UInt8] = SHA256.hash(Array("abc".utf8))
        let hex: [String] = digest.map { (b: UInt8) -> String in b < 16 ? "0" + String(b, radix: 16) : String(b, radix: 16) }
        #expect(hex.joined() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let id = BridgeConfig.deviceID(machineID: "0123456789abcdef0123456789abcdef\n")
        #expect(id.count == 12 && !"0123456789abcdef".contains(id))
    }
}
