/// One-time service codes: time-based codes (RFC 6238) from a key of the device's own, for
/// technicians. The key is derived off the device from a fleet key (HKDF-SHA256 over the
/// device's id, RFC 5869), so one device's key gives away no other's; the device holds only
/// its own, in a root-only file (`[service] key_file`). A code is accepted within `window`
/// steps of the wall clock, and once: the highest time counter accepted is recorded
/// durably, and no counter at or below it is accepted again, whatever the clock says
/// later. The MAC is computed by the caller (nettle, in TouchlockSecrets): nothing here
/// reads a clock or a file. docs/service-codes.md describes the scheme.

/// The MAC of a code (RFC 6238 allows the three; authenticator apps all take SHA-1).
public enum ServiceAlgorithm: String, Hashable, Sendable, CaseIterable {
    case sha1, sha256, sha512

    /// As an otpauth URI names it.
    public var uriName: String {
        switch self {
        case .sha1: "SHA1"
        case .sha256: "SHA256"
        case .sha512: "SHA512"
        }
    }
}

/// The `[service]` settings.
public struct ServiceSettings: Hashable, Sendable {
    /// The device key's file: one line of 64 lowercase hex digits, root's, mode 0600.
    public var keyFile = Paths.serviceKey
    /// Digits of a code, 6 to 8.
    public var digits = 6
    /// Seconds of one time step.
    public var step = 30
    /// Steps before and after the wall clock's that are accepted too.
    public var window = 1
    public var algorithm = ServiceAlgorithm.sha1

    public init() {}

    public static let digitRange = 6...8

    /// The file of used codes' counters, beside the state file at `statePath`.
    public static func usedPath(statePath: String) -> String {
        let dir: String
        if let slash = statePath.lastIndex(of: "/") {
            dir = slash == statePath.startIndex ? "/" : String(statePath[..<slash])
        } else {
            dir = "."
        }
        return (dir == "/" ? "" : dir) + "/service-used"
    }
}

/// The device key and its file's one line.
public enum ServiceKey {
    /// Bytes of a device key (one SHA-256 output).
    public static let length = 32
    /// HKDF's salt: names the scheme and its version, so a fleet key used elsewhere too
    /// derives other keys here.
    public static let salt = "touchlock service key v1"

    /// The key file's text: the key as 64 lowercase hex digits and a newline.
    public static func line(_ key: [UInt8]) -> String {
        hex(key) + "\n"
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The key a key file holds: exactly 64 lowercase hex digits, then at most one
    /// newline; or why the file is not one.
    public static func parse(_ bytes: [UInt8]) -> Result<[UInt8], BadKey> {
        var body = bytes[...]
        if body.last == UInt8(ascii: "\n") { body = body.dropLast() }
        guard body.count == length * 2 else {
            return .failure(BadKey(message: "expected one line of \(length * 2) lowercase hex digits, found \(body.count) characters"))
        }
        var key: [UInt8] = []
        key.reserveCapacity(length)
        var high: UInt8 = 0
        for (i, c) in body.enumerated() {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            default: return .failure(BadKey(message: "expected lowercase hex digits only (character \(i + 1) is not one)"))
            }
            if i % 2 == 0 { high = v } else { key.append(high << 4 | v) }
        }
        return .success(key)
    }

    public struct BadKey: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The device's id as its file has it (/etc/machine-id): the text without blanks
    /// and line ends around it.
    public static func deviceID(fromFile bytes: [UInt8]) -> String {
        let first = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).first ?? []
        return String(decoding: first, as: UTF8.self).trimmingSpaces
    }

    /// RFC 4648 base32 without padding, as otpauth URIs carry the secret.
    public static func base32(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for b in bytes {
            buffer = buffer << 8 | UInt32(b)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The otpauth URI of the device's codes (Google Authenticator's Key Uri Format), for
    /// an authenticator app: issuer touchlock, the device's id in the label.
    public static func uri(key: [UInt8], deviceID: String, settings: ServiceSettings) -> String {
        let label = percentEncoded("touchlock:" + deviceID)
        return "otpauth://totp/\(label)?secret=\(base32(key))&issuer=touchlock&algorithm=\(settings.algorithm.uriName)"
            + "&digits=\(settings.digits)&period=\(settings.step)"
    }

    /// Every byte but RFC 3986's unreserved characters (and the label's ':') escaped.
    static func percentEncoded(_ s: String) -> String {
        let hexDigits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"):
                out.append(b)
            default:
                out += [UInt8(ascii: "%"), hexDigits[Int(b >> 4)], hexDigits[Int(b & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// RFC 6238's arithmetic: the time counter, the message the MAC is computed over, and
/// RFC 4226's dynamic truncation to digits.
public enum OneTimeCode {
    /// The counter of the step holding `unixSeconds` (T0 = 0); nil before 1970.
    public static func counter(unixSeconds: Int64, step: Int) -> UInt64? {
        guard unixSeconds >= 0, step > 0 else { return nil }
        return UInt64(unixSeconds / Int64(step))
    }

    /// The 8 bytes of `counter`, most significant first: what the MAC is computed over.
    public static func message(_ counter: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64($0))) }
    }

    /// The code of a MAC: 31 bits at the offset its last byte's low nibble gives, modulo
    /// 10^digits, with leading zeros, as ASCII digits.
    public static func truncate(_ mac: [UInt8], digits: Int) -> [UInt8] {
        guard let last = mac.last, mac.count >= 20 else { return [] }
        let offset = Int(last & 0x0f)
        let binary = UInt32(mac[offset] & 0x7f) << 24 | UInt32(mac[offset + 1]) << 16
            | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        var v = binary % modulus
        var out = [UInt8](repeating: UInt8(ascii: "0"), count: digits)
        for i in stride(from: digits - 1, through: 0, by: -1) {
            out[i] = UInt8(ascii: "0") + UInt8(v % 10)
            v /= 10
        }
        return out
    }

    /// The code for `counter`; `mac` computes the MAC of a message with the key.
    public static func code(counter: UInt64, digits: Int, mac: ([UInt8]) -> [UInt8]) -> String {
        String(decoding: truncate(mac(message(counter)), digits: digits), as: UTF8.self)
    }
}

/// The highest time counter of the codes accepted: kept durably, so that no code is
/// accepted twice, across restarts and whatever the clock is set to. The codes themselves
/// are never kept. Its file (beside the state file) is sealed as the state file is:
///
///     # touchlock used service codes: written by touchlockd
///     version = 1
///     highest_counter = 59034217
///     check = 8e1a4f20
public struct UsedServiceCodes: Hashable, Sendable {
    /// nil: none used yet.
    public var highest: UInt64?

    public init(highest: UInt64? = nil) { self.highest = highest }

    /// Whether a code of `counter` may still be accepted.
    public func allows(_ counter: UInt64) -> Bool {
        guard let highest else { return true }
        return counter > highest
    }

    /// The record after a code of `counter` was accepted.
    public func using(_ counter: UInt64) -> UsedServiceCodes {
        UsedServiceCodes(highest: max(highest ?? 0, counter))
    }

    public var text: String {
        var s = "# touchlock used service codes: written by touchlockd\nversion = 1\n"
        if let highest { s += "highest_counter = \(highest)\n" }
        return StoredState.sealed(s)
    }

    /// The record a file holds, or why it is not one (cut off, changed, unknown keys).
    public static func read(_ bytes: [UInt8]) -> Result<UsedServiceCodes, StoredState.Error> {
        let content: ArraySlice<UInt8>
        do { content = try StoredState.checkedContent(bytes) } catch { return .failure(error) }
        var out = UsedServiceCodes()
        var version = false
        var n = 0
        for raw in String(decoding: content, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            n += 1
            let line = Substring(raw).trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let eq = line.firstIndex(of: "=") else { return .failure(.init(line: n, message: "expected 'key = value'")) }
            let key = Substring(line[..<eq]).trimmingSpaces
            let value = Substring(line[line.index(after: eq)...]).trimmingSpaces
            switch key {
            case "version":
                guard value == "1" else { return .failure(.init(line: n, message: "unknown version \(value)")) }
                version = true
            case "highest_counter":
                guard let v = UInt64(value) else { return .failure(.init(line: n, message: "highest_counter: not a counter")) }
                out.highest = v
            default:
                return .failure(.init(line: n, message: "unknown key '\(key)'"))
            }
        }
        guard version else { return .failure(.init(line: 0, message: "no version line")) }
        return .success(out)
    }
}

/// What a service code given at a time is.
public enum ServiceVerdict: Hashable, Sendable {
    /// The code of `counter`, within the window and above every counter used.
    case match(counter: UInt64)
    /// The code of a counter already used (or below one): refused.
    case used(counter: UInt64)
    /// No code of the window (or the clock reads before 1970).
    case wrong

    /// Checks `code` (ASCII digits) at `unixSeconds` on the wall clock against the codes
    /// of the window's counters, each compared in full (no early exit on a digit).
    /// `mac` computes the MAC of a message with the device key.
    public static func check(_ code: [UInt8], at unixSeconds: Int64, settings: ServiceSettings,
                             used: UsedServiceCodes, mac: ([UInt8]) -> [UInt8]) -> ServiceVerdict {
        guard code.count == settings.digits,
              let now = OneTimeCode.counter(unixSeconds: unixSeconds, step: settings.step) else { return .wrong }
        let window = UInt64(max(0, settings.window))
        let first = now >= window ? now - window : 0
        var allowed: UInt64?
        var refused: UInt64?
        for counter in first...(now &+ window) {
            let expected = OneTimeCode.truncate(mac(OneTimeCode.message(counter)), digits: settings.digits)
            var diff: UInt8 = expected.count == code.count ? 0 : 1
            for i in 0..<min(expected.count, code.count) { diff |= expected[i] ^ code[i] }
            guard diff == 0 else { continue }
            if used.allows(counter) { allowed = max(allowed ?? 0, counter) } else { refused = counter }
        }
        if let allowed { return .match(counter: allowed) }
        if let refused { return .used(counter: refused) }
        return .wrong
    }
}

extension Config {
    /// `[service]`: one-time service codes (docs/service-codes.md).
    static let serviceKeys: [Key] = [
        Key(section: "service", name: "key_file", flatName: nil,
            set: { c, v throws(BadValue) in c.service.keyFile = try path(v) }, show: { $0.service.keyFile }),
        Key(section: "service", name: "digits", flatName: nil,
            set: { c, v throws(BadValue) in c.service.digits = try int(v, ServiceSettings.digitRange) },
            show: { "\($0.service.digits)" }),
        Key(section: "service", name: "step_s", flatName: nil,
            set: { c, v throws(BadValue) in c.service.step = try int(v, 10...300) }, show: { "\($0.service.step)" }),
        Key(section: "service", name: "window", flatName: nil,
            set: { c, v throws(BadValue) in c.service.window = try int(v, 0...10) }, show: { "\($0.service.window)" }),
        Key(section: "service", name: "algorithm", flatName: nil,
            set: { c, v throws(BadValue) in
                guard let a = ServiceAlgorithm(rawValue: v) else {
                    throw BadValue(message: "expected sha1, sha256 or sha512, found '\(v)'")
                }
                c.service.algorithm = a
            }, show: { $0.service.algorithm.rawValue }),
    ]
}
