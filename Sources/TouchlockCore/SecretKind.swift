/// Which secret an enrollment stores: the pattern, the code, or the duress code (a code
/// that unlocks and tells subscribers it was given under duress).
public enum SecretKind: String, Hashable, Sendable, CaseIterable, Codable {
    case pattern, code, duress

    /// The secret of an unlock method (never the duress code); nil for service codes,
    /// which have no secret enrolled (their key is a file of its own).
    public init?(_ method: UnlockMethod) {
        switch method {
        case .pattern: self = .pattern
        case .code: self = .code
        case .service: return nil
        }
    }

    /// How the secret is given: the duress code is typed on the code pad.
    public var method: UnlockMethod {
        switch self {
        case .pattern: .pattern
        case .code, .duress: .code
        }
    }

    /// A code (plain or duress): it follows `CodeRules`.
    public var isCode: Bool { method == .code }
}
