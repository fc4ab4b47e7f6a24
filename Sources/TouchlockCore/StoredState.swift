/// What touchlockd keeps across restarts, as the text of its root-only state file
/// (/var/lib/touchlock/state): the lockout record and the secrets' hashes. Secrets are
/// never in clear here, only salted hashes in the format of crypt(5).
///
///     # touchlock state: written by touchlockd; do not edit while it runs
///     version = 1
///     boot_id = 5b0c6a4e-...        the boot the deadline's clock belongs to
///     failures = 5
///     deadline_us = 812345678       CLOCK_MONOTONIC of that boot, microseconds
///     pattern_hash = $y$j9T$...
///     code_hash = $y$j9T$...
///     duress_hash = $y$j9T$...
public struct StoredState: Hashable, Sendable {
    public var bootID: String?
    public var lockout = LockoutRecord()
    public var patternHash: String?
    public var codeHash: String?
    public var duressHash: String?

    public init() {}

    public struct Error: Swift.Error, Hashable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    public func hash(for method: UnlockMethod) -> String? {
        switch method {
        case .pattern: patternHash
        case .code: codeHash
        }
    }

    public mutating func setHash(_ hash: String?, for method: UnlockMethod) {
        switch method {
        case .pattern: patternHash = hash
        case .code: codeHash = hash
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

    public init(parsing text: String) throws(Error) {
        var n = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            n += 1
            let line = Substring(raw).trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let eq = line.firstIndex(of: "=") else { throw Error(line: n, message: "expected 'key = value'") }
            let key = Substring(line[..<eq]).trimmingSpaces
            let value = Substring(line[line.index(after: eq)...]).trimmingSpaces
            func hash() throws(Error) -> String {
                guard Self.isHash(value) else { throw Error(line: n, message: "\(key): not a hash") }
                return value
            }
            switch key {
            case "version":
                guard value == "1" else { throw Error(line: n, message: "unknown version \(value)") }
            case "boot_id": bootID = value
            case "failures":
                guard let v = Int(value), v >= 0 else { throw Error(line: n, message: "failures: not a count") }
                lockout.failures = v
            case "deadline_us":
                guard let v = Int64(value) else { throw Error(line: n, message: "deadline_us: not a number") }
                lockout.deadline = Instant(microseconds: v)
            case "pattern_hash": patternHash = try hash()
            case "code_hash": codeHash = try hash()
            case "duress_hash": duressHash = try hash()
            default: throw Error(line: n, message: "unknown key '\(key)'")
            }
        }
    }

    public var text: String {
        var s = "# touchlock state: written by touchlockd; do not edit while it runs\nversion = 1\n"
        if let bootID { s += "boot_id = \(bootID)\n" }
        s += "failures = \(lockout.failures)\n"
        if let d = lockout.deadline { s += "deadline_us = \(d.microseconds)\n" }
        if let patternHash { s += "pattern_hash = \(patternHash)\n" }
        if let codeHash { s += "code_hash = \(codeHash)\n" }
        if let duressHash { s += "duress_hash = \(duressHash)\n" }
        return s
    }
}
