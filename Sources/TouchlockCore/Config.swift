/// The daemon's settings. Files hold `key = value` lines; `#` starts a comment.
/// A later file overrides an earlier one key by key. Any unknown key or bad value is
/// an error naming the file and line, and the daemon refuses to start.
public struct Config: Sendable {
    public var patternHash: String?
    public var rows = 3
    public var columns = 3
    public var minimumLength = 4
    public var hitFactor = 0.6
    public var errorHold = Interval.milliseconds(500)
    public var socketPath = "/run/touchlock/touchlock.sock"
    /// Members of this group may use the control socket (status, subscribe, lock).
    public var socketGroup = "touchlock"
    /// The root-only file holding the lockout record and the secrets' hashes.
    public var statePath = "/var/lib/touchlock/state"
    public var lockoutSchedule = LockoutSchedule.gatekeeper
    public var theme = Theme()

    public init() {}

    public struct Error: Swift.Error, Equatable, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var message: String
        public var description: String { "\(file):\(line): \(message)" }
    }

    /// Applies the settings in `text`, read from `file`.
    public mutating func apply(_ text: String, file: String) throws(Error) {
        var n = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            n += 1
            let trimmed = Self.stripComment(Substring(raw)).trimmingSpaces
            if trimmed.isEmpty { continue }
            guard let eq = trimmed.firstIndex(of: "=") else {
                throw Error(file: file, line: n, message: "expected 'key = value', found '\(trimmed)'")
            }
            let key = trimmed[..<eq].trimmingSpaces
            let value = trimmed[trimmed.index(after: eq)...].trimmingSpaces
            func bad(_ why: String) -> Error { Error(file: file, line: n, message: "\(key): \(why)") }
            func int(_ range: ClosedRange<Int>) throws(Error) -> Int {
                guard let v = Int(value), range.contains(v) else {
                    throw bad("expected a whole number from \(range.lowerBound) to \(range.upperBound), found '\(value)'")
                }
                return v
            }
            func number(_ range: ClosedRange<Double>) throws(Error) -> Double {
                guard let v = Double(value), range.contains(v) else {
                    throw bad("expected a number from \(range.lowerBound) to \(range.upperBound), found '\(value)'")
                }
                return v
            }
            func color() throws(Error) -> Color {
                guard let c = Color(hex: value) else { throw bad("expected a colour like #00aaff or #00aaff80, found '\(value)'") }
                return c
            }
            switch key {
            case "pattern_hash":
                // A hash in the format of crypt(5): "$id$...". Never a pattern in clear.
                guard value.hasPrefix("$"), value.count >= 20, !value.contains(" ") else {
                    throw bad("expected a hash made by 'touchlockctl hash-pattern' (it starts with '$')")
                }
                patternHash = value
            case "grid":
                let parts = value.split(separator: "x")
                guard parts.count == 2, let r = Int(parts[0]), let c = Int(parts[1]),
                      (2...9).contains(r), (2...9).contains(c) else {
                    throw bad("expected ROWSxCOLUMNS from 2x2 to 9x9, found '\(value)'")
                }
                rows = r; columns = c
            case "min_length": minimumLength = try int(1...81)
            case "hit_factor": hitFactor = try number(0.1...1.0)
            case "error_hold_ms": errorHold = .milliseconds(Int64(try int(0...60_000)))
            case "socket":
                guard value.hasPrefix("/") else { throw bad("expected an absolute path, found '\(value)'") }
                socketPath = value
            case "socket_group":
                guard !value.isEmpty, !value.contains(" ") else { throw bad("expected a group name, found '\(value)'") }
                socketGroup = value
            case "state_file":
                guard value.hasPrefix("/") else { throw bad("expected an absolute path, found '\(value)'") }
                statePath = value
            case "lockout_schedule":
                guard let v = LockoutSchedule(parsing: value) else {
                    throw bad("expected 'gatekeeper', 'none' or seconds per failure like 0,0,0,0,60,300; found '\(value)'")
                }
                lockoutSchedule = v
            case "background": theme.background = try color()
            case "text_color": theme.text = try color()
            case "node_color": theme.node = try color()
            case "node_selected_color": theme.nodeSelected = try color()
            case "error_color": theme.error = try color()
            case "path_color": theme.path = try color()
            case "line_width": theme.lineWidth = try number(1...100)
            case "font_family":
                guard !value.isEmpty else { throw bad("expected a font family name") }
                theme.fontFamily = value
            case "font_size": theme.fontSize = try number(4...200)
            default:
                throw Error(file: file, line: n, message: "unknown key '\(key)'")
            }
        }
    }
}

extension Config {
    /// A comment is a line starting with '#' or ';', or a '#' or ';' after a blank and
    /// before a blank or the end of the line; so `#00aaff` is a colour, not a comment.
    static func stripComment(_ line: Substring) -> Substring {
        let chars = Array(line)
        for i in chars.indices where chars[i] == "#" || chars[i] == ";" {
            let before = i == 0 || chars[i - 1] == " " || chars[i - 1] == "\t"
            let after = i + 1 == chars.count || chars[i + 1] == " " || chars[i + 1] == "\t"
            let leading = chars[..<i].allSatisfy { $0 == " " || $0 == "\t" }
            if leading || (before && after) { return line.prefix(i) }
        }
        return line
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed()
            .drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed())
    }
}
extension String {
    var trimmingSpaces: String { Substring(self).trimmingSpaces }
}
