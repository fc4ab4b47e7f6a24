import Glibc
import TouchlockCommandLine
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// `touchlockctl service-key` and `service-code` (docs/service-codes.md): a device's key
/// derived from the fleet key, off the device; its code at a time, from the fleet key or
/// from the device key file; the otpauth URI an authenticator app takes.
enum ServiceCommands {
    static let fleetKeyFile = OptionSpec("fleet-key-file", value: "FILE", values: .file(extensions: []),
                                         help: "the fleet key: one line of 64 lowercase hex digits")
    static let deviceID = OptionSpec("device-id", value: "ID", help: "the device's id (its /etc/machine-id)")
    static let machineIDFile = OptionSpec("machine-id-file", value: "FILE", values: .file(extensions: []),
                                          help: "read the device's id from FILE (default /etc/machine-id)")
    static let keyFile = OptionSpec("key-file", value: "FILE", values: .file(extensions: ["key"]),
                                    help: "the device key file (default \(Paths.serviceKey))")
    static let settings: [OptionSpec] = [
        OptionSpec("digits", value: "N", values: .choices(ServiceSettings.digitRange.map(String.init)),
                   help: "digits of a code, 6 to 8 (default 6): as the device's [service] digits"),
        OptionSpec("step", value: "SEC", help: "seconds of a step, 10 to 300 (default 30): as [service] step_s"),
        OptionSpec("algorithm", value: "MAC", values: .choices(ServiceAlgorithm.allCases.map(\.rawValue)),
                   help: "sha1 (default), sha256 or sha512: as [service] algorithm"),
    ]

    static let keyCommand = CommandSpec(
        "service-key", summary: "print a device's service key, derived from the fleet key",
        usage: ["--fleet-key-file FILE [--device-id ID | --machine-id-file FILE]"],
        about: """
            Derives the device's key from the fleet key (HKDF-SHA256 over the device's
            id) and prints the line of its key file (\(Paths.serviceKey), root's, mode
            0600). Run it off the device: the fleet key never goes there.
            """,
        options: [fleetKeyFile, deviceID, machineIDFile],
        footer: Commands.exitStatus)

    static let codeCommand = CommandSpec(
        "service-code", summary: "print a device's one-time service code, or its otpauth URI",
        usage: [
            "--fleet-key-file FILE (--device-id ID | --machine-id-file FILE) [--at TIME] [--uri]",
            "[--key-file FILE] [--at TIME] [--uri]",
        ],
        about: """
            Prints the device's code now (or at TIME, seconds since 1970), from the
            fleet key and the device's id, or from the device key file (root on the
            device). With --uri, prints the otpauth:// URI instead, for an
            authenticator app. The settings must be the device's [service] ones.
            """,
        options: [fleetKeyFile, deviceID, machineIDFile, keyFile,
                  OptionSpec("at", value: "TIME", help: "the time of the code, in seconds since 1970 (default now)"),
                  .flag("uri", help: "print the otpauth:// URI of the device's codes")] + settings,
        footer: Commands.exitStatus)

    /// A key file's key (the fleet key's or a device key's), or a failure said.
    static func readKey(_ path: String, what: String, command: String) -> [UInt8] {
        let read: (bytes: [UInt8], info: FileContents.Info)?
        do { read = try DurableFile.readWithOwner(path) } catch { fail("\(command): \(what) \(path): \(error)") }
        guard let read else { fail("\(command): \(what) \(path): no such file") }
        var bytes = read.bytes
        defer { SecretHash.wipe(&bytes) }
        if read.info.mode & 0o077 != 0 {
            writeError("touchlockctl: \(command): warning: \(path) can be read by others than its owner (mode \(String(read.info.mode & 0o7777, radix: 8)))\n")
        }
        switch ServiceKey.parse(bytes) {
        case .success(let k): return k
        case .failure(let e): fail("\(command): \(what) \(path): \(e)")
        }
    }

    /// The device's id: --device-id, else the text of --machine-id-file (default
    /// /etc/machine-id) when `fallback`.
    static func deviceID(_ invocation: Invocation, command: String, fallback: Bool) throws(EarlyExit) -> String? {
        let p = invocation.parsed
        if p.value("device-id") != nil && p.value("machine-id-file") != nil {
            throw invocation.usageError("give --device-id or --machine-id-file, not both")
        }
        if let id = p.value("device-id") {
            guard !id.isEmpty, !id.utf8.contains(where: { $0 < 32 || $0 == 127 }) else {
                throw invocation.usageError("--device-id: expected printable text")
            }
            return id
        }
        guard fallback || p.value("machine-id-file") != nil else { return nil }
        let path = p.value("machine-id-file") ?? "/etc/machine-id"
        let bytes: [UInt8]?
        do { bytes = try DurableFile.read(path) } catch { fail("\(command): \(path): \(error)") }
        guard let bytes else { fail("\(command): \(path): no such file") }
        let id = ServiceKey.deviceID(fromFile: bytes)
        guard !id.isEmpty else { fail("\(command): \(path) holds no id") }
        return id
    }

    static func number(_ v: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let n = Int(v), range.contains(n) else {
            throw UsageError("expected a whole number from \(range.lowerBound) to \(range.upperBound), found '\(v)'")
        }
        return n
    }

    static func keyCommand(_ invocation: Invocation) throws(EarlyExit) -> Int32 {
        guard let path = invocation.parsed.value("fleet-key-file") else { throw invocation.usageError("--fleet-key-file is required") }
        guard let id = try deviceID(invocation, command: "service-key", fallback: true) else { return Exit.failure }
        var fleet = readKey(path, what: "fleet key", command: "service-key")
        defer { SecretHash.wipe(&fleet) }
        var key = ServiceCrypto.deviceKey(fleetKey: fleet, deviceID: id)
        defer { SecretHash.wipe(&key) }
        StandardStreams.output(ServiceKey.hex(key))
        return Exit.ok
    }

    static func codeCommand(_ invocation: Invocation) throws(EarlyExit) -> Int32 {
        let p = invocation.parsed
        var s = ServiceSettings()
        if let d = try invocation.value("digits", { v throws(UsageError) in try number(v, in: ServiceSettings.digitRange) }) {
            s.digits = d
        }
        if let step = try invocation.value("step", { v throws(UsageError) in try number(v, in: 10...300) }) {
            s.step = step
        }
        if let a = p.value("algorithm") {
            guard let algorithm = ServiceAlgorithm(rawValue: a) else { throw invocation.usageError("--algorithm: expected sha1, sha256 or sha512") }
            s.algorithm = algorithm
        }
        let at: Int64
        if let t = p.value("at") {
            guard let v = Int64(t), v >= 0 else { throw invocation.usageError("--at: expected seconds since 1970, found '\(t)'") }
            at = v
        } else {
            at = Int64(WallClock.now())
        }
        var key: [UInt8]
        let id: String?
        if let fleetPath = p.value("fleet-key-file") {
            guard p.value("key-file") == nil else { throw invocation.usageError("give --fleet-key-file or --key-file, not both") }
            guard let device = try deviceID(invocation, command: "service-code", fallback: false) else {
                throw invocation.usageError("--fleet-key-file needs --device-id or --machine-id-file")
            }
            var fleet = readKey(fleetPath, what: "fleet key", command: "service-code")
            key = ServiceCrypto.deviceKey(fleetKey: fleet, deviceID: device)
            SecretHash.wipe(&fleet)
            id = device
        } else {
            key = readKey(p.value("key-file") ?? Paths.serviceKey, what: "device key", command: "service-code")
            id = try deviceID(invocation, command: "service-code", fallback: p.flag("uri"))
        }
        defer { SecretHash.wipe(&key) }
        if p.flag("uri") {
            StandardStreams.output(ServiceKey.uri(key: key, deviceID: id ?? "device", settings: s))
        } else {
            guard let code = ServiceCrypto.code(key: key, at: at, settings: s) else { fail("service-code: no code before 1970") }
            StandardStreams.output(code)
        }
        return Exit.ok
    }
}
