import CCrypt
import Glibc
import TouchlockCore

/// Salted one-way hashes of secrets in the format of /etc/shadow (yescrypt by default),
/// through libxcrypt. The secret text is wiped from memory once hashed.
public enum SecretHash {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Hashes `secret` with a fresh random salt; `prefix` chooses the method ("$y$" is
    /// yescrypt), `cost` its work factor (0: libxcrypt's default).
    public static func make(_ secret: inout [UInt8], prefix: String = "$y$", cost: UInt = 0) throws(Failure) -> String {
        defer { wipe(&secret) }
        var salt = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        // A nil random source makes libxcrypt read the kernel's (getrandom).
        guard crypt_gensalt_rn(prefix, cost, nil, 0, &salt, Int32(salt.count)) != nil else {
            throw Failure(description: "crypt_gensalt_rn(\(prefix)): \(String(cString: strerror(errno)))")
        }
        return try run(secret, setting: salt)
    }

    /// True when `secret` hashes to `hash`. The comparison takes the same time wherever
    /// the hashes first differ.
    public static func verify(_ secret: inout [UInt8], against hash: String) -> Bool {
        defer { wipe(&secret) }
        guard let computed = try? run(secret, setting: Array(hash.utf8CString)) else { return false }
        return constantTimeEqual(Array(computed.utf8), Array(hash.utf8))
    }

    private static func run(_ secret: [UInt8], setting: [CChar]) throws(Failure) -> String {
        var data = crypt_data()
        defer { withUnsafeMutableBytes(of: &data) { if let p = $0.baseAddress { explicit_bzero(p, $0.count) } } }
        var phrase = secret.map { CChar(bitPattern: $0) } + [0]
        defer { phrase.withUnsafeMutableBytes { if let p = $0.baseAddress { explicit_bzero(p, $0.count) } } }
        guard let out = crypt_r(phrase, setting, &data) else {
            throw Failure(description: "crypt_r: \(String(cString: strerror(errno)))")
        }
        let s = String(cString: out)
        // libxcrypt signals failure with a hash starting with '*'.
        if s.hasPrefix("*") { throw Failure(description: "the hash setting is not valid") }
        return s
    }

    /// True if `hash` is a hash libxcrypt can check secrets against.
    public static func isUsable(_ hash: String) -> Bool {
        guard StoredState.isHash(hash) else { return false }
        return (try? run([], setting: Array(hash.utf8CString))) != nil
    }

    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for i in 0..<max(a.count, b.count) {
            let x = i < a.count ? a[i] : 0, y = i < b.count ? b[i] : 0
            diff |= x ^ y
        }
        return diff == 0
    }

    /// Overwrites a secret in place in a way the compiler may not drop.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let p = $0.baseAddress { explicit_bzero(p, $0.count) } }
        bytes.removeAll()
    }

    /// Overwrites the storage `bytes` shares with all its copies: for a secret handed
    /// over inside a value (an action) whose other copies cannot be reached to be wiped.
    /// Every copy reads zeros afterwards.
    public static func wipeShared(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { p in
            if let base = p.baseAddress { explicit_bzero(UnsafeMutableRawPointer(mutating: base), p.count) }
        }
    }
}

/// The bytes hashed for a code (PIN): its digits, tagged so a code and a pattern never
/// share a hash. `digits` is wiped.
public func codeSecretBytes(_ digits: inout [UInt8]) -> [UInt8] {
    defer { SecretHash.wipe(&digits) }
    return Array("code:".utf8) + digits
}
