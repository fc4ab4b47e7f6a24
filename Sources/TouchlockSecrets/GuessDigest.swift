import CCrypt
import Glibc
import TouchlockCore
import TouchlockSystem

/// Salted one-way digests of wrong guesses, so a repeated wrong guess can be recognised
/// without keeping any guess in clear. The salt is random per instance (per process) and
/// never stored; the digests live in memory only.
public struct GuessDigester: Sendable {
    private let setting: [CChar]

    /// SHA-512 crypt with 1000 rounds: about a millisecond, and one-way.
    public init() throws(SecretHash.Failure) {
        var salt = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        guard crypt_gensalt_rn("$6$", 1000, nil, 0, &salt, Int32(salt.count)) != nil else {
            throw SecretHash.Failure(description: "crypt_gensalt_rn($6$): \(Errno.current)")
        }
        setting = salt
    }

    /// The digest of `secret`, which is wiped.
    public func digest(_ secret: inout [UInt8]) -> [UInt8] {
        guard let buffer = try? SecretHash.locked(&secret) else { return [] }
        return digest(buffer)
    }

    /// The digest of a secret in a locked buffer (left as it is).
    public func digest(_ secret: SecretBuffer) -> [UInt8] {
        guard let s = try? SecretHash.run(secret, setting: setting) else { return [] }
        let full = Array(s.utf8)
        // Only the part after the last '$': the salt is the same for every digest.
        if let i = full.lastIndex(of: UInt8(ascii: "$")) { return Array(full[(i + 1)...]) }
        return full
    }
}
