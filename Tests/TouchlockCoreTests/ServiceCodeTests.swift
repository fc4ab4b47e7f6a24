import Testing
@testable import TouchlockCore

/// RFC 4226 Appendix D: the HMAC-SHA-1 values of counters 0 to 9 under the secret
/// "12345678901234567890", and the 6-digit codes they truncate to.
private let rfc4226: [(mac: String, code: String)] = [
    ("cc93cf18508d94934c64b65d8ba7667fb7cde4b0", "755224"),
    ("75a48a19d4cbe100644e8ac1397eea747a2d33ab", "287082"),
    ("0bacb7fa082fef30782211938bc1c5e70416ff44", "359152"),
    ("66c28227d03a2d5529262ff016a1e6ef76557ece", "969429"),
    ("a904c900a64b35909874b33e61c5938a8e15ed1c", "338314"),
    ("a37e783d7b7233c083d4f62926c7a25f238d0316", "254676"),
    ("bc9cd28561042c83f219324d3c607256c03272ae", "287922"),
    ("a4fb960c0bc06e1eabb804e5b397cdc4b45596fa", "162583"),
    ("1b3c89f65e6c9e883012052823443f048b4332db", "399871"),
    ("1637409809a679dc698207310c8c7fc07290d9e5", "520489"),
]

private func bytes(hex: String) -> [UInt8] {
    let s = Array(hex.utf8)
    return stride(from: 0, to: s.count, by: 2).map { UInt8(String(decoding: s[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}

/// The RFC's MACs by counter: the HMAC of the 8-byte counter, as the RFC computed it.
private func rfcMAC(_ message: [UInt8]) -> [UInt8] {
    let counter = message.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    return counter < 10 ? bytes(hex: rfc4226[Int(counter)].mac) : [UInt8](repeating: 0, count: 20)
}

private func settings(window: Int = 1) -> ServiceSettings {
    var s = ServiceSettings()
    s.window = window
    return s
}

@Suite struct ServiceCodeTests {
    @Test func truncationGivesRFC4226sCodes() {
        for (counter, row) in rfc4226.enumerated() {
            #expect(String(decoding: OneTimeCode.truncate(bytes(hex: row.mac), digits: 6), as: UTF8.self) == row.code,
                    "counter \(counter)")
        }
        // 8 digits keep the leading part of the same number (RFC 4226's 1284755224).
        #expect(String(decoding: OneTimeCode.truncate(bytes(hex: rfc4226[0].mac), digits: 8), as: UTF8.self) == "84755224")
    }

    @Test func theCounterIsRFC6238sStep() {
        #expect(OneTimeCode.counter(unixSeconds: 59, step: 30) == 1)
        #expect(OneTimeCode.counter(unixSeconds: 1_111_111_109, step: 30) == 0x23523EC)
        #expect(OneTimeCode.counter(unixSeconds: 20_000_000_000, step: 30) == 0x27BC86AA)
        #expect(OneTimeCode.counter(unixSeconds: -1, step: 30) == nil)
        #expect(OneTimeCode.message(0x23523EC) == [0, 0, 0, 0, 0x02, 0x35, 0x23, 0xEC])
    }

    @Test func aCodeIsTakenWithinTheWindowOnly() {
        // At 65 s the wall clock is in step 2: steps 1 to 3 are taken with a window of 1.
        let used = UsedServiceCodes()
        #expect(ServiceVerdict.check(Array("287082".utf8), at: 65, settings: settings(), used: used, mac: rfcMAC) == .match(counter: 1))
        #expect(ServiceVerdict.check(Array("969429".utf8), at: 65, settings: settings(), used: used, mac: rfcMAC) == .match(counter: 3))
        #expect(ServiceVerdict.check(Array("755224".utf8), at: 65, settings: settings(), used: used, mac: rfcMAC) == .wrong)
        #expect(ServiceVerdict.check(Array("338314".utf8), at: 65, settings: settings(), used: used, mac: rfcMAC) == .wrong)
        // Window 0: only the clock's own step.
        #expect(ServiceVerdict.check(Array("287082".utf8), at: 65, settings: settings(window: 0), used: used, mac: rfcMAC) == .wrong)
        #expect(ServiceVerdict.check(Array("359152".utf8), at: 65, settings: settings(window: 0), used: used, mac: rfcMAC) == .match(counter: 2))
        // A code of another length, or with a digit changed, is wrong.
        #expect(ServiceVerdict.check(Array("35915".utf8), at: 65, settings: settings(), used: used, mac: rfcMAC) == .wrong)
        #expect(ServiceVerdict.check(Array("359153".utf8), at: 65, settings: settings(), used: used, mac: rfcMAC) == .wrong)
    }

    @Test func aCodeAtOrBelowTheHighestUsedIsRefusedWhateverTheClockSays() {
        let used = UsedServiceCodes().using(2)
        // The code used, again.
        #expect(ServiceVerdict.check(Array("359152".utf8), at: 65, settings: settings(), used: used, mac: rfcMAC) == .used(counter: 2))
        // An older one still in the window.
        #expect(ServiceVerdict.check(Array("287082".utf8), at: 65, settings: settings(), used: used, mac: rfcMAC) == .used(counter: 1))
        // The clock set back a minute: the codes of then are in the window again, and refused.
        #expect(ServiceVerdict.check(Array("755224".utf8), at: 5, settings: settings(), used: used, mac: rfcMAC) == .used(counter: 0))
        #expect(ServiceVerdict.check(Array("287082".utf8), at: 5, settings: settings(), used: used, mac: rfcMAC) == .used(counter: 1))
        // A later one is taken.
        #expect(ServiceVerdict.check(Array("969429".utf8), at: 65, settings: settings(), used: used, mac: rfcMAC) == .match(counter: 3))
        #expect(used.using(1).highest == 2)
    }

    @Test func theUsedRecordIsReadBackAndADamagedOneIsRefused() throws {
        let record = UsedServiceCodes(highest: 59_034_217)
        #expect(try UsedServiceCodes.read(Array(record.text.utf8)).get() == record)
        #expect(try UsedServiceCodes.read(Array(UsedServiceCodes().text.utf8)).get() == UsedServiceCodes())
        // A digit of the counter changed (the 7s become 0s): the check no longer holds.
        var changed = String(record.text.map { $0 == "7" ? "0" : $0 })
        #expect((try? UsedServiceCodes.read(Array(changed.utf8)).get()) == nil)
        changed = String(record.text.dropLast(3))
        #expect((try? UsedServiceCodes.read(Array(changed.utf8)).get()) == nil)
        #expect(!record.text.contains("code ="))
    }

    @Test func theKeyFileIsOneLineOf64LowercaseHexDigits() throws {
        let key = (0..<32).map { UInt8($0 * 7 & 0xff) }
        let line = ServiceKey.line(key)
        #expect(line.utf8.count == 65 && line.hasSuffix("\n"))
        #expect(try ServiceKey.parse(Array(line.utf8)).get() == key)
        #expect(try ServiceKey.parse(Array(line.dropLast().utf8)).get() == key)
        #expect((try? ServiceKey.parse(Array(line.uppercased().utf8)).get()) == nil)
        #expect((try? ServiceKey.parse(Array(line.dropFirst().utf8)).get()) == nil)
        #expect((try? ServiceKey.parse(Array((line + "\n").utf8)).get()) == nil)
        #expect(ServiceKey.deviceID(fromFile: Array("5b0c6a4e9f0e4c3d8d6a2b1c0e9f8a7b\n".utf8)) == "5b0c6a4e9f0e4c3d8d6a2b1c0e9f8a7b")
    }

    @Test func base32AndTheURIAreWhatAuthenticatorsRead() {
        // RFC 4648's test vectors, without padding.
        let vectors = ["": "", "f": "MY", "fo": "MZXQ", "foo": "MZXW6", "foob": "MZXW6YQ", "fooba": "MZXW6YTB", "foobar": "MZXW6YTBOI"]
        for (text, want) in vectors { #expect(ServiceKey.base32(Array(text.utf8)) == want) }
        var s = ServiceSettings()
        s.digits = 8
        let uri = ServiceKey.uri(key: Array("12345678901234567890".utf8), deviceID: "kiosk 7", settings: s)
        #expect(uri == "otpauth://totp/touchlock:kiosk%207?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=touchlock&algorithm=SHA1&digits=8&period=30")
    }

    @Test func theServiceSectionIsValidatedLikeEveryOther() {
        var c = Config()
        #expect(throws: Config.BadValue.self) { try c.set(section: "service", key: "digits", value: "9") }
        #expect(throws: Config.BadValue.self) { try c.set(section: "service", key: "algorithm", value: "md5") }
        #expect(throws: Config.BadValue.self) { try c.set(section: "service", key: "key_file", value: "service.key") }
        #expect(throws: Never.self) { try c.set(section: "service", key: "digits", value: "8") }
        #expect(throws: Never.self) { try c.set(section: "service", key: "window", value: "2") }
        #expect(c.service.digits == 8 && c.service.window == 2 && c.service.keyFile == Paths.serviceKey)
        #expect(ServiceSettings.usedPath(statePath: "/var/lib/touchlock/state") == "/var/lib/touchlock/service-used")
    }

    /// The daemon's lock screen (a persistent session): a service code is an attempt of
    /// its own method, stored as a failure before it goes to be checked, in the same
    /// counter as the pattern's; a right one clears it and unlocks as `service`.
    @Test func aServiceCodeIsCountedBeforeItIsCheckedInTheSameCounter() throws {
        let size = Size(width: 480, height: 800)
        let s = LockScreen.make(config: Config(), size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 1)
        var lock = LockScreen(pads: s.pads, session: Session(failures: 2, schedule: .gatekeeper, persistent: true),
                              builder: s.builder)
        let t = Instant(microseconds: 1_000_000)
        let first = try lock.serviceCode(Array("123456".utf8), at: t)
        let stores = first.compactMap { if case .store(let r) = $0 { return r } else { return nil } }
        #expect(stores.map(\.failures) == [3])
        #expect(!first.contains { if case .verify = $0 { true } else { false } }, "checked before it was counted")
        #expect(throws: LockScreen.ServiceRefusal.busy("storing")) { try lock.serviceCode(Array("654321".utf8), at: t) }
        let next = lock.stored(error: nil, at: t)
        #expect(next.contains(.verify(.service(Array("123456".utf8)))))
        let right = lock.verified(.match(duress: false), at: t)
        #expect(right.compactMap { if case .store(let r) = $0 { return r.failures } else { return nil } } == [0])
        let unlocked = lock.stored(error: nil, at: t)
        #expect(unlocked.contains(.notify(.unlocked(method: .service, at: t))))
        #expect(throws: LockScreen.ServiceRefusal.unlocked) { try lock.serviceCode(Array("123456".utf8), at: t) }
    }

    /// A service code typed on the owner's code pad (of the same length) that is not the
    /// owner's code: one counted attempt, and the daemon's verdict `service` unlocks as
    /// `service`, the pad showing it accepted.
    @Test func aServiceCodeTypedOnThePadUnlocksAsService() {
        var c = Config()
        c.screens.methods = .code
        c.screens.codeLength = 6
        let size = Size(width: 480, height: 800)
        let s = LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 1)
        var lock = LockScreen(pads: s.pads, session: Session(failures: 1, schedule: .gatekeeper, persistent: true),
                              builder: s.builder)
        var out: [LockScreen.Action] = []
        var t: Int64 = 1_000_000
        for d in [2, 8, 7, 0, 8, 2] {
            out += lock.hardwareKey(.digit(d), at: Instant(microseconds: t))
            t += 50_000
        }
        out += lock.hardwareKey(.enter, at: Instant(microseconds: t))
        let counted = out.compactMap { if case .store(let r) = $0 { return r.failures } else { return nil } }
        #expect(counted == [2])
        let asked = lock.stored(error: nil, at: Instant(microseconds: t))
        #expect(asked.contains(.verify(.code(Code(digits: [2, 8, 7, 0, 8, 2])))))
        let cleared = lock.verified(.service, at: Instant(microseconds: t))
        #expect(cleared.compactMap { if case .store(let r) = $0 { return r.failures } else { return nil } } == [0])
        let now = Instant(microseconds: t)
        let unlocked = lock.stored(error: nil, at: now)
        #expect(unlocked.contains(.notify(.unlocked(method: .service, at: now))))
        #expect(lock.code?.state == .accepted)
        if case .unlocked(.service, _) = lock.session.state {} else { Issue.record("session: \(lock.session.state)") }
    }
}
