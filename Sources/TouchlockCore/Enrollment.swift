extension Pattern {
    /// The bytes that are hashed for a pattern: its canonical text, which names the grid.
    public var secretBytes: [UInt8] { Array("pattern:\(canonical)".utf8) }
}

extension Code {
    /// The bytes that are hashed for a code: its digits after a prefix that keeps a code
    /// from matching a pattern's hash.
    public var secretBytes: [UInt8] { Array("code:".utf8) + digits.map { UInt8(ascii: "0") + $0 } }
}

/// Enrolling a new secret on the lock screen: drawn (or typed) once, then again to
/// confirm. The first attempt's bytes are held in memory only, and overwritten with
/// zeros when the enrollment ends, whichever way.
///
///     first --attempt--> confirm --same again--> (done: the secret is handed over)
///       ^                   |
///       +----different------+
public struct Enrollment: Sendable {
    public enum Stage: Hashable, Sendable {
        case first, confirm
    }

    public let method: UnlockMethod
    public private(set) var stage: Stage = .first
    /// The method shown before the enrollment began, shown again after it.
    let returnTo: UnlockMethod
    private var kept: [UInt8] = []

    init(method: UnlockMethod, returnTo: UnlockMethod) {
        self.method = method
        self.returnTo = returnTo
    }

    /// Keeps the first attempt (the caller's copy is wiped) and asks for it again.
    mutating func keep(_ secret: inout [UInt8]) {
        Enrollment.wipe(&kept)
        kept = secret
        secret = []
        stage = .confirm
    }

    /// Whether `secret` is the kept attempt, compared in constant time for equal lengths.
    func matches(_ secret: [UInt8]) -> Bool {
        Enrollment.constantTimeEqual(kept, secret)
    }

    /// Forgets the kept attempt and starts from the first stage.
    mutating func restart() {
        Enrollment.wipe(&kept)
        stage = .first
    }

    /// Compares without stopping at the first difference.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff = UInt8(a.count == b.count ? 0 : 1)
        for i in 0..<max(a.count, b.count) {
            let x = i < a.count ? a[i] : 0, y = i < b.count ? b[i] : 0
            diff |= x ^ y
        }
        return diff == 0
    }

    /// Overwrites `bytes` with zeros in place, then empties it.
    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBufferPointer { p in
            for i in p.indices { p[i] = 0 }
        }
        bytes.removeAll()
    }
}
