import Glibc
import Testing
import TouchlockCore
import TouchlockSecrets

private func bytes(hex: String) -> [UInt8] {
    let s = Array(hex.utf8)
    return stride(from: 0, to: s.count, by: 2).map { UInt8(String(decoding: s[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
}

private func settings(_ algorithm: ServiceAlgorithm = .sha1, digits: Int = 6, step: Int = 30) -> ServiceSettings {
    var s = ServiceSettings()
    s.algorithm = algorithm
    s.digits = digits
    s.step = step
    return s
}

/// Runs `oathtool` (Debian's, an independent RFC 6238 implementation) and returns its
/// first line.
private func oathtool(_ arguments: [String]) throws -> String {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { throw Failure("pipe") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    posix_spawn_file_actions_addclose(&actions, fds[0])
    let args = ["/usr/bin/oathtool"] + arguments
    let cargs = args.map { strdup($0) } + [nil]
    defer { cargs.forEach { free($0) } }
    var pid: pid_t = 0
    let r = posix_spawn(&pid, args[0], &actions, nil, cargs, environ)
    close(fds[1])
    guard r == 0 else { close(fds[0]); throw Failure("oathtool: spawn failed (\(r)); scripts/setup installs it") }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 256)
    while true {
        let n = read(fds[0], &buf, buf.count)
        if n <= 0 { break }
        out += buf[0..<n]
    }
    close(fds[0])
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    guard status == 0 else { throw Failure("oathtool \(arguments) failed (\(status))") }
    return String(decoding: out, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
}

private struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

@Suite struct ServiceCryptoTests {
    /// RFC 6238 Appendix B, every row: 8 digits, 30 s steps, T0 = 0, each algorithm with
    /// its seed.
    @Test func rfc6238sTestVectors() {
        let seeds: [ServiceAlgorithm: String] = [
            .sha1: "12345678901234567890",
            .sha256: "12345678901234567890123456789012",
            .sha512: "1234567890123456789012345678901234567890123456789012345678901234",
        ]
        let rows: [(time: Int64, sha1: String, sha256: String, sha512: String)] = [
            (59, "94287082", "46119246", "90693936"),
            (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"),
            (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"),
            (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
        for row in rows {
            for (algorithm, want) in [(ServiceAlgorithm.sha1, row.sha1), (.sha256, row.sha256), (.sha512, row.sha512)] {
                let key = Array(seeds[algorithm]!.utf8)
                #expect(ServiceCrypto.code(key: key, at: row.time, settings: settings(algorithm, digits: 8)) == want,
                        "\(algorithm) at \(row.time)")
            }
        }
    }

    /// RFC 5869 Appendix A, test cases 1 to 3 (SHA-256).
    @Test func rfc5869sTestVectors() {
        #expect(ServiceKey.hex(ServiceCrypto.hkdfSHA256(ikm: [UInt8](repeating: 0x0b, count: 22), salt: Array(0...0x0c),
                                                         info: Array(0xf0...0xf9), length: 42))
                == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
        #expect(ServiceKey.hex(ServiceCrypto.hkdfSHA256(ikm: Array(0...0x4f), salt: Array(0x60...0xaf),
                                                         info: Array(0xb0...0xff), length: 82))
                == "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87")
        #expect(ServiceKey.hex(ServiceCrypto.hkdfSHA256(ikm: [UInt8](repeating: 0x0b, count: 22), salt: [], info: [], length: 42))
                == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    @Test func eachDeviceHasAKeyOfItsOwn() {
        let fleet = Array("fleet key of the tests, 32 bytes".utf8)
        let a = ServiceCrypto.deviceKey(fleetKey: fleet, deviceID: "5b0c6a4e9f0e4c3d8d6a2b1c0e9f8a7b")
        let b = ServiceCrypto.deviceKey(fleetKey: fleet, deviceID: "5b0c6a4e9f0e4c3d8d6a2b1c0e9f8a7c")
        #expect(a.count == 32 && b.count == 32 && a != b)
        #expect(a == ServiceCrypto.hkdfSHA256(ikm: fleet, salt: Array("touchlock service key v1".utf8),
                                              info: Array("5b0c6a4e9f0e4c3d8d6a2b1c0e9f8a7b".utf8), length: 32))
        #expect(ServiceCrypto.deviceKey(fleetKey: Array("another fleet".utf8), deviceID: "5b0c6a4e9f0e4c3d8d6a2b1c0e9f8a7b") != a)
    }

    /// The codes of a device key, as oathtool computes them from the same key: several
    /// times, digits, steps and algorithms.
    @Test func oathtoolComputesTheSameCodes() throws {
        let key = ServiceCrypto.deviceKey(fleetKey: Array("fleet key of the tests, 32 bytes".utf8), deviceID: "kiosk-7")
        let times: [Int64] = [0, 59, 1_111_111_109, 1_700_000_000, 1_800_000_015, 2_000_000_000, 4_000_000_000]
        let cases: [(ServiceAlgorithm, Int, Int)] = [(.sha1, 6, 30), (.sha1, 8, 30), (.sha1, 7, 60), (.sha256, 6, 30), (.sha512, 8, 30)]
        for t in times {
            for (algorithm, digits, step) in cases {
                let ours = ServiceCrypto.code(key: key, at: t, settings: settings(algorithm, digits: digits, step: step))
                let theirs = try oathtool(["--totp=\(algorithm.rawValue)", "--digits=\(digits)", "--time-step-size=\(step)s",
                                           "--now=@\(t)", ServiceKey.hex(key)])
                #expect(ours == theirs, "\(algorithm), \(digits) digits, \(step) s, at \(t)")
            }
        }
        // And through the base32 secret of the otpauth URI, as an authenticator app reads it.
        let secret = ServiceKey.base32(key)
        let theirs = try oathtool(["--totp", "--base32", "--now=@1700000000", secret])
        #expect(ServiceCrypto.code(key: key, at: 1_700_000_000, settings: settings()) == theirs)
    }

    @Test func aCodeIsCheckedWithTheKeysMAC() {
        let key = Array("12345678901234567890".utf8)
        var s = settings(digits: 8)
        s.window = 1
        #expect(ServiceCrypto.check(Array("07081804".utf8), key: key, at: 1_111_111_109, settings: s, used: UsedServiceCodes())
                == .match(counter: 0x23523EC))
        #expect(ServiceCrypto.check(Array("07081804".utf8), key: Array("12345678901234567891".utf8), at: 1_111_111_109,
                                    settings: s, used: UsedServiceCodes()) == .wrong)
    }
}
