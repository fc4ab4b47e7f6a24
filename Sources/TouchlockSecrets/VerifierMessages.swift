import Glibc
import TouchlockCore

/// What touchlockd asks of its verifier process, one message per packet of a
/// SOCK_SEQPACKET pair. A secret crosses only to be checked or hashed; every buffer that
/// held one is wiped on both sides.
///
///     verify: 1, id (4, little-endian), hash count (1), each hash: length (2) + bytes
///             (length 0: none), secret length (2) + secret
///     hash:   2, id (4), secret length (2) + secret
public enum VerifierRequest: Equatable {
    /// Check `secret` against each hash (all of them, always, so the time taken does not
    /// tell which matched).
    case verify(id: UInt32, hashes: [String?], secret: [UInt8])
    /// Make a new hash of `secret`.
    case hash(id: UInt32, secret: [UInt8])

    public var id: UInt32 {
        switch self {
        case .verify(let id, _, _), .hash(let id, _): id
        }
    }

    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        switch self {
        case .verify(let id, let hashes, let secret):
            out.append(1)
            out.appendLittleEndian(id)
            out.append(UInt8(min(hashes.count, 255)))
            for h in hashes.prefix(255) { out.appendField(h.map { Array($0.utf8) } ?? []) }
            out.appendField(secret)
        case .hash(let id, let secret):
            out.append(2)
            out.appendLittleEndian(id)
            out.appendField(secret)
        }
        return out
    }

    /// The request in `bytes`, or nil when they are not one.
    public static func decode(_ bytes: [UInt8]) -> VerifierRequest? {
        var r = ByteReader(bytes)
        guard let kind = r.byte(), let id = r.uint32() else { return nil }
        switch kind {
        case 1:
            guard let n = r.byte() else { return nil }
            var hashes: [String?] = []
            for _ in 0..<n {
                guard let h = r.field() else { return nil }
                hashes.append(h.isEmpty ? nil : String(decoding: h, as: UTF8.self))
            }
            guard let secret = r.field(), r.atEnd else { return nil }
            return .verify(id: id, hashes: hashes, secret: secret)
        case 2:
            guard let secret = r.field(), r.atEnd else { return nil }
            return .hash(id: id, secret: secret)
        default:
            return nil
        }
    }

    /// Overwrites the secret this request carries, everywhere its storage is shared.
    public func wipe() {
        switch self {
        case .verify(_, _, let s), .hash(_, let s): SecretHash.wipeShared(s)
        }
    }
}

/// The verifier's answer.
///
///     verified: 1, id (4), matched index + 1 (1; 0: none), digest of a wrong guess (rest)
///     hashed:   2, id (4), 0 + hash | 1 + why not
public enum VerifierReply: Equatable {
    /// `matched`: the index of the hash the secret matched; else `digest` is a salted
    /// digest of the wrong guess (empty when none could be made).
    case verified(id: UInt32, matched: Int?, digest: [UInt8])
    case hashed(id: UInt32, Result<String, HashFailure>)

    public struct HashFailure: Error, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ d: String) { description = d }
    }

    public var id: UInt32 {
        switch self {
        case .verified(let id, _, _), .hashed(let id, _): id
        }
    }

    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        switch self {
        case .verified(let id, let matched, let digest):
            out.append(1)
            out.appendLittleEndian(id)
            out.append(matched.map { UInt8(min($0, 254) + 1) } ?? 0)
            out += digest
        case .hashed(let id, let result):
            out.append(2)
            out.appendLittleEndian(id)
            switch result {
            case .success(let h): out.append(0); out += Array(h.utf8)
            case .failure(let e): out.append(1); out += Array(e.description.utf8)
            }
        }
        return out
    }

    public static func decode(_ bytes: [UInt8]) -> VerifierReply? {
        var r = ByteReader(bytes)
        guard let kind = r.byte(), let id = r.uint32(), let flag = r.byte() else { return nil }
        let rest = r.rest()
        switch kind {
        case 1: return .verified(id: id, matched: flag == 0 ? nil : Int(flag) - 1, digest: rest)
        case 2:
            let text = String(decoding: rest, as: UTF8.self)
            return .hashed(id: id, flag == 0 ? .success(text) : .failure(HashFailure(text)))
        default: return nil
        }
    }
}

/// Carries out one request, in the verifier process (or in the daemon when there is
/// none). The secret is wiped.
public func serve(_ request: VerifierRequest, digester: GuessDigester?) -> VerifierReply {
    defer { request.wipe() }
    switch request {
    case .verify(let id, let hashes, let secret):
        // Checked from one locked buffer (never swapped), whichever hash it is held against.
        var copy = secret
        guard let locked = try? SecretHash.locked(&copy) else { return .verified(id: id, matched: nil, digest: []) }
        var matched: Int?
        for (i, h) in hashes.enumerated() {
            let ok = h.map { SecretHash.verify(locked, against: $0) } ?? false
            if ok && matched == nil { matched = i }
        }
        var digest: [UInt8] = []
        if matched == nil, let digester { digest = digester.digest(locked) }
        return .verified(id: id, matched: matched, digest: digest)
    case .hash(let id, let secret):
        var copy = secret
        do throws(SecretHash.Failure) {
            return .hashed(id: id, .success(try SecretHash.make(&copy)))
        } catch {
            return .hashed(id: id, .failure(.init(error.description)))
        }
    }
}

private extension Array where Element == UInt8 {
    mutating func appendLittleEndian(_ v: UInt32) {
        for i in 0..<4 { append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) }
    }

    mutating func appendField(_ bytes: [UInt8]) {
        let n = Swift.min(bytes.count, 0xFFFF)
        append(UInt8(n & 0xFF))
        append(UInt8(n >> 8))
        append(contentsOf: bytes.prefix(n))
    }
}

private struct ByteReader {
    private let bytes: [UInt8]
    private var at = 0
    init(_ b: [UInt8]) { bytes = b }

    var atEnd: Bool { at == bytes.count }

    mutating func byte() -> UInt8? {
        guard at < bytes.count else { return nil }
        defer { at += 1 }
        return bytes[at]
    }

    mutating func uint32() -> UInt32? {
        guard bytes.count - at >= 4 else { return nil }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[at + i]) << (8 * UInt32(i)) }
        at += 4
        return v
    }

    mutating func field() -> [UInt8]? {
        guard bytes.count - at >= 2 else { return nil }
        let n = Int(bytes[at]) | Int(bytes[at + 1]) << 8
        guard bytes.count - at - 2 >= n else { return nil }
        defer { at += 2 + n }
        return Array(bytes[(at + 2)..<(at + 2 + n)])
    }

    mutating func rest() -> [UInt8] {
        defer { at = bytes.count }
        return Array(bytes[at...])
    }
}
