import TouchlockCore

extension Status {
    /// The status as a person reads it (`touchlockctl status`): a few lines of
    /// `label: words`, the state first. Scripts read the JSON (`status --json`).
    public var text: String {
        var lines: [(String, String)] = []
        lines.append(("state", stateWords))
        lines.append(("attempts", failures == 1 ? "1 failed" : "\(failures) failed"))
        var methods = (enrolled ?? []).map(\.rawValue).joined(separator: " and ")
        if methods.isEmpty { methods = "no secret set" }
        if let showing { methods += ", \(showing.rawValue) on screen" }
        if let enrolling { methods += ", enrolling \(enrolling.rawValue) on screen" }
        lines.append(("methods", methods))
        if let sources = secretSource, !sources.isEmpty {
            let words = sources.keys.sorted().map { method -> String in
                switch sources[method]! {
                case .config: return "\(method) from the config files"
                case .enrolled: return "\(method) enrolled (state file)"
                }
            }
            lines.append(("secrets", words.joined(separator: ", ")))
        }
        if let shadowed = secretsShadowed, !shadowed.isEmpty {
            lines.append(("shadowed", shadowed.map(\.rawValue).joined(separator: ", ")
                                      + ": enrolled, but the config files' secret counts"))
        }
        for file in secretsReadable ?? [] {
            lines.append(("warning", "a secret's hash is readable by others in \(file)"))
        }
        if let record { lines.append(("record", record.rawValue)) }
        lines.append(("cover", coverWords))
        for output in outputs ?? [] {
            var words = "\(output.card.map { "\($0) " } ?? "")\(output.name) \(output.state.rawValue), \(output.screen.width)x\(output.screen.height)"
            if let detail = output.detail { words += " (\(detail))" }
            if let retry = output.retryError { words += ", last retry: \(retry)" }
            lines.append(("output", words))
        }
        if let message { lines.append(("message", message)) }
        let width = lines.map { $0.0.count }.max() ?? 0
        return lines.map { label, words in
            label + ":" + String(repeating: " ", count: width - label.count + 1) + words
        }.joined(separator: "\n") + "\n"
    }

    private var stateWords: String {
        switch state {
        case .locked: return "locked"
        case .verifying: return "locked, checking an attempt"
        case .wrong: return "locked, a wrong attempt shown"
        case .lockout:
            guard let ms = retryAfterMilliseconds else { return "locked out" }
            return "locked out, next attempt in \((ms + 999) / 1000) s"
        case .storeFailed: return "locked, input refused: \(reason ?? "a failure could not be stored")"
        case .unlocked: return method.map { "unlocked by \($0.rawValue)" } ?? "unlocked"
        }
    }

    private var coverWords: String {
        var words: String
        switch display {
        case .shown?: words = "lock screen shown"
        case .taking?: words = "taking the display"
        case .handingOver?: words = "handing the display back"
        case .handedOver?: words = "display handed back"
        case .notShown?: words = "lock screen not shown" + (displayReason.map { ": \($0)" } ?? "")
        case nil: words = "lock screen \(screen.width)x\(screen.height)"
        }
        if let vt { words += ", VT \(vt)" }
        if power == .blank { words += ", screen blanked" }
        if lockPending == true { words += ", lock pending" }
        return words
    }
}
