/// What touchlockd keeps across restarts, as the text of its root-only state file
/// (/var/lib/touchlock/state): the lockout record and the secrets' hashes. Secrets are
/// never in clear here, only salted hashes in the format of crypt(5).
///
///     # touchlock state: written by touchlockd; do not edit while it runs
///     version = 2
///     boot_id = 5b0c6a4e-...        the boot the deadline's clock belongs to
///     failures = 5
///     deadline_us = 812345678       CLOCK_MONOTONIC of that boot, microseconds
///     pattern_hash = $y$j9T$...
///     code_hash = $y$j9T$...
///     duress_hash = $y$j9T$...
///     check = 1c291ca3              CRC-32 of every byte before this line
///
/// A record is whole or it is refused: the version line, the `failures` line and the
/// `check` line are required, and the check, written last, covers every byte before it,
/// so a file cut at any byte, empty, or changed is recognised (`Reading.damaged`).
public struct StoredState: Hashable, Sendable {
    public var bootID: String?
    public var lockout = LockoutRecord()
    public var patternHash: String?
    public var codeHash: String?
    public var duressHash: String?

    public static let version = 2

    public init() {}

    public struct Error: Swift.Error, Hashable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { line > 0 ? "line \(line): \(message)" : message }
    }

    public func hash(for method: UnlockMethod) -> String? {
        switch method {
        case .pattern: patternHash
        case .code: codeHash
        case .service: nil  // no hash: the device key is a file of its own
        }
    }

    public mutating func setHash(_ hash: String?, for method: UnlockMethod) {
        switch method {
        case .pattern: patternHash = hash
        case .code: codeHash = hash
        case .service: Log.bug("state: a hash stored for service codes")
        }
    }

    /// The methods with a secret.
    public var enrolled: [UnlockMethod] {
        [UnlockMethod.pattern, .code].filter { hash(for: $0) != nil }
    }

    /// A hash as crypt(5) writes it: "$id$...", printable, no blanks.
    public static func isHash(_ s: String) -> Bool {
        s.hasPrefix("$") && s.utf8.count >= 20 && s.utf8.allSatisfy { $0 > 32 && $0 < 127 }
    }

    /// What the state file held.
    public enum Reading: Hashable, Sendable {
        /// No file: a first start, from zero failures.
        case missing
        /// A whole record.
        case whole(StoredState)
        /// Empty, cut off, of an unknown version, failing its check, or unreadable.
        /// `salvaged` holds what may still be used: the hashes only when the check holds
        /// (else none), and the highest failure count found on a complete line (else 0),
        /// which the reader takes as a lower bound only.
        case damaged(reason: String, salvaged: StoredState)
    }

    /// Reads the bytes of a state file (nil: there is none).
    public static func read(_ bytes: [UInt8]?) -> Reading {
        guard let bytes else { return .missing }
        do { return .whole(try StoredState(bytes: bytes)) } catch {
            return .damaged(reason: error.description, salvaged: salvage(bytes))
        }
    }

    /// The check line's key; its value is 8 hex digits of CRC-32.
    static let checkKey = "check"

    /// Splits off the check line: the bytes it covers, or why it does not hold.
    static func checkedContent(_ bytes: [UInt8]) throws(Error) -> ArraySlice<UInt8> {
        if bytes.isEmpty { throw Error(line: 0, message: "the file is empty") }
        guard bytes.last == UInt8(ascii: "\n") else { throw Error(line: 0, message: "cut off (no end of line at the end)") }
        let body = bytes.dropLast()
        let start = (body.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 }) ?? body.startIndex
        let last = String(decoding: body[start...], as: UTF8.self)
        let prefix = "\(checkKey) = "
        guard last.hasPrefix(prefix) else {
            let text = String(decoding: bytes, as: UTF8.self)
            if text.hasPrefix("version = 1\n") || text.contains("\nversion = 1\n") {
                throw Error(line: 0, message: "version 1 has no integrity check (an older touchlockd wrote it)")
            }
            throw Error(line: 0, message: "no integrity check at the end (cut off?)")
        }
        let hex = last.dropFirst(prefix.count)
        // Exactly as written: 8 lower-case hex digits.
        guard hex.utf8.count == 8, hex.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
              let want = UInt32(hex, radix: 16) else {
            throw Error(line: 0, message: "malformed integrity check '\(last)'")
        }
        let content = bytes[..<start]
        guard CRC32.checksum(content) == want else {
            throw Error(line: 0, message: "integrity check mismatch (the content changed)")
        }
        return content
    }

    /// A whole record from the bytes of a state file.
    public init(bytes: [UInt8]) throws(Error) {
        let content = try Self.checkedContent(bytes)
        try self.init(content: String(decoding: content, as: UTF8.self))
    }

    /// A whole record from the text of a state file.
    public init(parsing text: String) throws(Error) {
        try self.init(bytes: Array(text.utf8))
    }

    /// Reads the lines before the check: the version first, every key known, `failures`
    /// present.
    private init(content text: String) throws(Error) {
        var n = 0
        var version: String?
        var failures: Int?
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            n += 1
            let line = Substring(raw).trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let eq = line.firstIndex(of: "=") else { throw Error(line: n, message: "expected 'key = value'") }
            let key = Substring(line[..<eq]).trimmingSpaces
            let value = Substring(line[line.index(after: eq)...]).trimmingSpaces
            if version == nil && key != "version" { throw Error(line: n, message: "the version must come first") }
            func hash() throws(Error) -> String {
                guard Self.isHash(value) else { throw Error(line: n, message: "\(key): not a hash") }
                return value
            }
            switch key {
            case "version":
                guard version == nil else { throw Error(line: n, message: "a second version line") }
                guard value == String(Self.version) else { throw Error(line: n, message: "unknown version \(value)") }
                version = value
            case "boot_id": bootID = value
            case "failures":
                guard let v = LockoutRecord.count(value) else { throw Error(line: n, message: "failures: not a count") }
                failures = v
            case "deadline_us":
                guard let v = Int64(value) else { throw Error(line: n, message: "deadline_us: not a number") }
                lockout.deadline = Instant(microseconds: v)
            case "pattern_hash": patternHash = try hash()
            case "code_hash": codeHash = try hash()
            case "duress_hash": duressHash = try hash()
            default: throw Error(line: n, message: "unknown key '\(key)'")
            }
        }
        guard version != nil else { throw Error(line: 0, message: "no version line") }
        guard let failures else { throw Error(line: 0, message: "no failures line") }
        lockout.failures = failures
    }

    /// What a damaged record still gives: the highest `failures` on a complete line, and
    /// the hashes when the integrity check holds.
    static func salvage(_ bytes: [UInt8]) -> StoredState {
        var out = StoredState()
        let intact = (try? checkedContent(bytes)) != nil
        var text = String(decoding: bytes, as: UTF8.self)
        // Only complete lines: a count cut inside its digits ("1" of "19") is no count.
        if let end = text.lastIndex(of: "\n") { text = String(text[...end]) } else { text = "" }
        for raw in text.split(separator: "\n") {
            let line = Substring(raw).trimmingSpaces
            guard let eq = line.firstIndex(of: "=") else { continue }
            let key = Substring(line[..<eq]).trimmingSpaces
            let value = Substring(line[line.index(after: eq)...]).trimmingSpaces
            switch key {
            case "failures":
                if let v = LockoutRecord.count(value), v > out.lockout.failures { out.lockout.failures = v }
            case "pattern_hash" where intact && isHash(value): out.patternHash = value
            case "code_hash" where intact && isHash(value): out.codeHash = value
            case "duress_hash" where intact && isHash(value): out.duressHash = value
            default: continue
            }
        }
        return out
    }

    /// The record as written: the content, then its check.
    public var text: String {
        var s = "# touchlock state: written by touchlockd; do not edit while it runs\nversion = \(Self.version)\n"
        if let bootID { s += "boot_id = \(bootID)\n" }
        s += "failures = \(lockout.failures)\n"
        if let d = lockout.deadline { s += "deadline_us = \(d.microseconds)\n" }
        if let patternHash { s += "pattern_hash = \(patternHash)\n" }
        if let codeHash { s += "code_hash = \(codeHash)\n" }
        if let duressHash { s += "duress_hash = \(duressHash)\n" }
        return Self.sealed(s)
    }

    /// `content` (whole lines) followed by the check line that covers it.
    public static func sealed(_ content: String) -> String {
        let crc = String(CRC32.checksum(Array(content.utf8)), radix: 16)
        return content + "\(checkKey) = \(String(repeating: "0", count: 8 - crc.count))\(crc)\n"
    }
}

/// CRC-32 as zlib and PNG compute it (reflected polynomial 0xEDB88320).
public enum CRC32 {
    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    public static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 {
        // Over contiguous bytes (an array, a slice of one) in one loop over the buffer: the
        // generic iteration, called from another module, went through the collection's
        // witnesses for every byte (650 instructions a byte).
        if let c = bytes.withContiguousStorageIfAvailable({ checksum(buffer: UnsafeRawBufferPointer($0)) }) { return c }
        return Array(bytes).withUnsafeBytes { checksum(buffer: $0) }
    }

    /// The checksum of the bytes of `buffer`.
    public static func checksum(buffer: UnsafeRawBufferPointer) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { t in
            for b in buffer { c = t[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        }
        return c ^ 0xFFFF_FFFF
    }
}
