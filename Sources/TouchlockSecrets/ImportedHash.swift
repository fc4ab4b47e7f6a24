import TouchlockCore

extension SecretHash {
    /// The crypt(5) prefix of the only method a hash made elsewhere may use: yescrypt,
    /// what touchlockctl's own hashes (`hash-code`, `hash-pattern`, `set-secret`,
    /// `enroll`) and the daemon's use. Every other method libxcrypt knows is weaker
    /// against a guesser who has the hash (none is memory-hard but scrypt, which is not
    /// what this project makes or tests).
    public static let importedPrefix = "$y$"

    /// The name of the crypt(5) method `hash` is written in, as crypt(5) names it.
    public static func methodName(of hash: String) -> String {
        let prefixes: [(String, String)] = [
            ("$y$", "yescrypt"), ("$gy$", "gost-yescrypt"), ("$7$", "scrypt"), ("$2b$", "bcrypt"),
            ("$2a$", "bcrypt"), ("$2y$", "bcrypt"), ("$2x$", "bcrypt"), ("$6$", "SHA-512 crypt"),
            ("$5$", "SHA-256 crypt"), ("$sha1$", "SHA-1 crypt"), ("$md5", "Sun MD5 crypt"),
            ("$1$", "MD5 crypt"), ("$3$", "NT hash"),
        ]
        if let found = prefixes.first(where: { hash.hasPrefix($0.0) }) { return found.1 }
        if hash.hasPrefix("_") { return "BSDi extended DES crypt" }
        if !hash.hasPrefix("$") && hash.utf8.count == 13 { return "traditional DES crypt" }
        return "no crypt(5) method"
    }

    /// Checks a hash made elsewhere (configuration management, another machine) before
    /// anything is written with it: a whole yescrypt hash, which libxcrypt takes as it is
    /// as the setting to check secrets against. Throws saying what is wrong with it.
    public static func checkImported(_ hash: String) throws(Failure) {
        guard hash.hasPrefix(importedPrefix) else {
            let name = methodName(of: hash)
            throw Failure(description: name == "no crypt(5) method"
                ? "not a crypt(5) hash; give a yescrypt hash ($y$...), as touchlockctl hash-code or hash-pattern prints it"
                : "\(name), which touchlock does not take (weaker than yescrypt against a guesser with the hash); "
                    + "give a yescrypt hash ($y$...), as touchlockctl hash-code or hash-pattern prints it")
        }
        guard StoredState.isHash(hash) else {
            throw Failure(description: "not a whole yescrypt hash (too short, or with spaces or control characters)")
        }
        // libxcrypt hashes an empty secret with it as the setting: a hash it refuses fails
        // ('*'), and one it reads otherwise than written (a setting with no hash, a hash
        // cut off or run on) comes back with another setting or another length.
        let empty: SecretBuffer
        do { empty = try SecretBuffer(capacity: 1) } catch { throw Failure(description: "\(error)") }
        let computed: String
        do { computed = try run(empty, setting: Array(hash.utf8CString)) } catch {
            throw Failure(description: "libxcrypt does not take it as a yescrypt hash (\(error.description))")
        }
        func setting(_ s: String) -> Substring { s[..<(s.lastIndex(of: "$") ?? s.endIndex)] }
        guard setting(computed) == setting(hash), computed.utf8.count == hash.utf8.count else {
            throw Failure(description: "not a whole yescrypt hash as libxcrypt writes one (cut off, or only a setting)")
        }
    }
}
