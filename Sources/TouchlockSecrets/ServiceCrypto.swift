import CNettle
import TouchlockCore

/// HMAC and HKDF from Debian's nettle (Modules/CNettle): the MACs of one-time service
/// codes and the derivation of a device's key from the fleet key. nettle's calls cannot
/// fail; their contexts are wiped in the shim.
public enum ServiceCrypto {
    /// The MAC of `message` with `key` by `algorithm`.
    public static func hmac(_ algorithm: ServiceAlgorithm, key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        switch algorithm {
        case .sha1:
            var out = [UInt8](repeating: 0, count: Int(SHA1_DIGEST_SIZE))
            tl_hmac_sha1(key, key.count, message, message.count, &out)
            return out
        case .sha256:
            var out = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_SIZE))
            tl_hmac_sha256(key, key.count, message, message.count, &out)
            return out
        case .sha512:
            var out = [UInt8](repeating: 0, count: Int(SHA512_DIGEST_SIZE))
            tl_hmac_sha512(key, key.count, message, message.count, &out)
            return out
        }
    }

    /// RFC 5869 HKDF-SHA256: `length` bytes (at most 8160) from the input keying material
    /// `ikm`, `salt` and `info`.
    public static func hkdfSHA256(ikm: [UInt8], salt: [UInt8], info: [UInt8], length: Int) -> [UInt8] {
        precondition(length > 0 && length <= 255 * Int(SHA256_DIGEST_SIZE), "HKDF-SHA256 gives 1 to 8160 bytes")
        var out = [UInt8](repeating: 0, count: length)
        tl_hkdf_sha256(ikm, ikm.count, salt, salt.count, info, info.count, &out, length)
        return out
    }

    /// A device's key: HKDF-SHA256 of the fleet key, the scheme's salt and the device's id.
    public static func deviceKey(fleetKey: [UInt8], deviceID: String) -> [UInt8] {
        hkdfSHA256(ikm: fleetKey, salt: Array(ServiceKey.salt.utf8), info: Array(deviceID.utf8), length: ServiceKey.length)
    }

    /// The code of `key` at `unixSeconds`, by `settings`.
    public static func code(key: [UInt8], at unixSeconds: Int64, settings: ServiceSettings) -> String? {
        guard let counter = OneTimeCode.counter(unixSeconds: unixSeconds, step: settings.step) else { return nil }
        return OneTimeCode.code(counter: counter, digits: settings.digits) { hmac(settings.algorithm, key: key, $0) }
    }

    /// `ServiceVerdict.check` with the MAC of `key`.
    public static func check(_ code: [UInt8], key: [UInt8], at unixSeconds: Int64, settings: ServiceSettings,
                             used: UsedServiceCodes) -> ServiceVerdict {
        ServiceVerdict.check(code, at: unixSeconds, settings: settings, used: used) { hmac(settings.algorithm, key: key, $0) }
    }
}
