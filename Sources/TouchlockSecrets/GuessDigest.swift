import CCrypt
import Glibc
import TouchlockCore

/// Salted one-way digests of wrong guesses, so a repeated wrong guess can be recognised
/// without keeping any guess in clear. The salt is random per instance (per process) and
/// never stored; the digests live in memory only.
public struct GuessDigester: Sendable {
    private let setting: [CChar]

    /// SHA-512 crypt with 1000 rounds: about a millisecond, and one-way.
    public init() throws(SecretHash.Failure) {
        var salt = [CChar](repeating: 0, count: Int(CRYPT_GENSALT_OUTPUT_SIZE))
        guard crypt_gensalt_rn("$6$", 1000, nil, 0, &salt, Int32(salt.count)) != nil else {
            throw SecretHash.Failure(description: "crypt_gensalt_rn($6$): \(String(cString: strerror(errno)))")
        }
        setting = salt
    }

    /// The digest of `secret`, which is wiped.
    public func digest(_ secret: inout [UInt8]) -> [UInt8] {
        defer { SecretHash.wipe(&secret) }
        var data = crypt_data()
        defer { withUnsafeMutableBytes(of: &data) { if let p = $0.baseAddress { explicit_bzero(p, $0.count) } } }
        var phrase = secret.map { CChar(bitPattern: $0) } + [0]
        defer { phrase.withUnsafeMutableBytes { if let p = $0.baseAddress { explicit_bzero(p, $0.count) } } }
        guard let out = crypt_r(phrase, setting, &data) else { return [] }
        let full = Array(String(cString: out).utf8)
        // Only the part after the last '$': the salt is the same for every digest.
        if let i = full.lastIndex(of: UInt8(ascii: "$")) { return Array(full[(i + 1)...]) }
        return full
    }
}
