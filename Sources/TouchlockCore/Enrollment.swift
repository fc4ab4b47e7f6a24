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

    /// What an attempt made while enrolling leads to.
    public enum Outcome: Hashable, Sendable {
        /// The first attempt is kept: it is asked for again.
        case kept
        /// Given twice alike: these bytes are the new secret, to be stored and wiped.
        case confirmed([UInt8])
        /// The second differs from the first: both are wiped, and it starts again.
        case differ
    }

    /// Whether an enrollment of `method` may begin: nil if it may, else why not. It may
    /// while unlocked, or while locked when no secret exists for `method`.
    static func refusal(_ method: UnlockMethod, offered: Bool, session: Session.State,
                        hasSecret: Bool) -> EnrollRefusal? {
        if !offered { return .noPad(method) }
        switch session {
        case .unlocked: return nil
        case .locked: return hasSecret ? .locked : nil
        case .verifying, .storing, .wrong, .lockout, .storeFailed: return .busy(session.name)
        }
    }

    /// An attempt (`secret` is wiped, or handed over in `confirmed`): the first is kept,
    /// the second compared with it.
    mutating func attempt(_ secret: inout [UInt8]) -> Outcome {
        switch stage {
        case .first:
            keep(&secret)
            Log.debug("enrollment: first \(method.rawValue) kept; asking again")
            return .kept
        case .confirm:
            if matches(secret) {
                Log.info("enrollment: the \(method.rawValue) was given twice alike")
                let bytes = secret
                secret = []
                return .confirmed(bytes)
            }
            Enrollment.wipe(&secret)
            restart()
            Log.info("enrollment: the two \(method.rawValue)s differ; starting again")
            return .differ
        }
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
