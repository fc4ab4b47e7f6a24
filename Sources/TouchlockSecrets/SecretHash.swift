import CCrypt
import Glibc
import TouchlockCore
import TouchlockSystem

/// Salted one-way hashes of secrets in the format of /etc/shadow (yescrypt by default),
/// through libxcrypt. The secret text is wiped from memory once hashed.
public enum SecretHash {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Hashes `secret` with a fresh random salt; `prefix` chooses the method ("$y$" is
    /// yescrypt), `cost` its work factor (0: libxcrypt's default).
    public static func make(_ secret: inout [UInt8], prefix: String = "$y$", cost: UInt = 0) throws(Failure) -> String {
        try make(locked(&secret), prefix: prefix, cost: cost)
    }

    /// The same from a locked buffer (left as it is).
    public static func make(_ secret: SecretBuffer, prefix: String = "$y$", cost: UInt = 0) throws(Failure) -> String {
        var salt = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        // A nil random source makes libxcrypt read the kernel's (getrandom).
        guard crypt_gensalt_rn(prefix, cost, nil, 0, &salt, Int32(salt.count)) != nil else {
            throw Failure(description: "crypt_gensalt_rn(\(prefix)): \(Errno.current)")
        }
        return try run(secret, setting: salt)
    }

    /// True when `secret` hashes to `hash`. The comparison takes the same time wherever
    /// the hashes first differ.
    public static func verify(_ secret: inout [UInt8], against hash: String) -> Bool {
        guard let buffer = try? locked(&secret) else { return false }
        return verify(buffer, against: hash)
    }

    /// The same from a locked buffer (left as it is).
    public static func verify(_ secret: SecretBuffer, against hash: String) -> Bool {
        guard let computed = try? run(secret, setting: Array(hash.utf8CString)) else { return false }
        return constantTimeEqual(Array(computed.utf8), Array(hash.utf8))
    }

    /// `secret` moved into a locked buffer; the array is wiped.
    static func locked(_ secret: inout [UInt8]) throws(Failure) -> SecretBuffer {
        do { return try SecretBuffer(taking: &secret) } catch {
            SecretHash.wipe(&secret)
            throw Failure(description: "\(error)")
        }
    }

    /// crypt_r on `secret` with the setting (a salt, or a whole hash). The phrase and
    /// crypt_r's work area live in one more locked buffer, zeroed when it goes.
    static func run(_ secret: SecretBuffer, setting: [CChar]) throws(Failure) -> String {
        let dataSize = MemoryLayout<crypt_data>.stride
        let work: SecretBuffer
        do { work = try SecretBuffer(capacity: dataSize + secret.count + 1) } catch { throw Failure(description: "\(error)") }
        return try work.withUnsafeMutableRaw { raw throws(Failure) -> String in
            // Fresh pages are zero: crypt_data starts as libxcrypt wants it, the phrase ends in NUL.
            secret.withUnsafeBytes { bytes in
                if let from = bytes.baseAddress, bytes.count > 0 { (raw + dataSize).copyMemory(from: from, byteCount: bytes.count) }
            }
            let data = raw.bindMemory(to: crypt_data.self, capacity: 1)
            let phrase = (raw + dataSize).bindMemory(to: CChar.self, capacity: secret.count + 1)
            guard let out = crypt_r(phrase, setting, data) else {
                throw Failure(description: "crypt_r: \(Errno.current)")
            }
            let s = String(cString: out)
            // libxcrypt signals failure with a hash starting with '*'.
            if s.hasPrefix("*") { throw Failure(description: "the hash setting is not valid") }
            return s
        }
    }

    /// True if `hash` is a hash libxcrypt can check secrets against.
    public static func isUsable(_ hash: String) -> Bool {
        guard StoredState.isHash(hash) else { return false }
        guard let empty = try? SecretBuffer(capacity: 1) else { return false }
        return (try? run(empty, setting: Array(hash.utf8CString))) != nil
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
