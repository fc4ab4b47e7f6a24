import Glibc
import TouchlockCore

/// Where the hashes of the secrets may be kept, and who may read them. A hash is as good
/// as the secret to whoever can read it: one yescrypt hash takes about 0.1 s, so every
/// 4-digit code falls in minutes and every 3x3 pattern in hours on one core. Hashes live
/// only in files root alone can read:
///
/// - the daemon's state file (`touchlockctl enroll`, enrollment on the screen), 0600 in a
///   0700 directory;
/// - /etc/touchlock/secrets.conf (`touchlockctl set-secret`), 0600, for a secret given
///   before the daemon runs (an image, a first boot); read after the other config files.
///
/// A hash in a file others can read (touchlock.conf is 0644) still works, but
/// `--check-config` fails naming the file and its mode, and the daemon warns at every
/// start (status `secrets_readable`, metric `touchlock_secret_files_readable`).
public enum SecretFiles {
    /// The administrator's file of hashes.
    public static var defaultPath: String { Paths.config + "/secrets.conf" }

    /// A config file holding a hash that others than root can read.
    public struct Exposure: Hashable, Sendable, CustomStringConvertible {
        public var path: String
        public var mode: UInt32
        public var owner: UInt32

        public var modeText: String {
            let o = String(mode & 0o7777, radix: 8)
            return String(repeating: "0", count: max(0, 4 - o.count)) + o
        }

        public var description: String {
            "\(path) holds a secret's hash and others can read it (mode \(modeText)\(owner != 0 ? ", owner uid \(owner)" : ""))"
        }
    }

    /// Whether a file of `mode`, owned by `owner`, can be read by someone other than root
    /// (or than `reader`, the user reading it, when that is not root: for tests).
    public static func readableByOthers(mode: UInt32, owner: UInt32, reader: UInt32) -> Bool {
        if mode & 0o044 != 0 { return true }
        return owner != 0 && owner != reader
    }

    /// The files of `paths` that set a hash (`[pattern] hash`, `[code] hash`) and that
    /// others can read. A file that cannot be read is left to the loader to report.
    public static func exposures(in paths: [String]) -> [Exposure] {
        var out: [Exposure] = []
        for path in paths {
            var st = stat()
            guard stat(path, &st) == 0 else { continue }
            guard readableByOthers(mode: st.st_mode, owner: st.st_uid, reader: geteuid()) else { continue }
            var alone = Config()
            guard (try? ConfigFiles.apply(file: path, to: &alone)) != nil else { continue }
            if alone.patternHash != nil || alone.screens.codeHash != nil {
                out.append(Exposure(path: path, mode: st.st_mode, owner: st.st_uid))
            }
        }
        return out
    }

    /// The text of a secrets file with `settings` (named by their flat keys:
    /// `pattern_hash`, `code_hash`, `code_length`) set, in the form the file already has:
    /// a key found in its section (`[pattern]` / `hash = ...`) is replaced there, one found
    /// flat is replaced flat; a key not found goes into its section if the file has that
    /// section, into a new section at the end if the file has any, and flat otherwise. Every
    /// other line that sets the same key (a flat key left inside a section included) goes;
    /// every other line stays. Lines are read as libinih reads them.
    public static func updated(_ existing: String?, setting settings: [(key: String, value: String)]) -> String {
        var lines: [String]
        if let existing {
            lines = existing.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            while lines.last?.isEmpty == true { lines.removeLast() }
        } else {
            lines = ["# touchlock: the hashes of the secrets (touchlockctl set-secret). Root only: keep it 0600."]
        }
        for (flat, value) in settings {
            guard let key = Config.keys.first(where: { $0.flatName == flat }) else {
                preconditionFailure("set-secret sets only keys with a flat name: \(flat)")
            }
            lines = setting(flat: flat, section: key.section, name: key.name, to: value, in: lines)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// What libinih makes of one line: a section header, a `name = value` (or `name: value`)
    /// line with its name, or neither (blank, comment, anything else).
    enum LineKind: Equatable {
        case section(String)
        case setting(String)
        case other
    }

    static func kind(of line: String) -> LineKind {
        let t = line.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = t.first, first != ";", first != "#" else { return .other }
        if first == "[" {
            guard let end = t.firstIndex(of: "]") else { return .other }
            return .section(String(t[t.index(after: t.startIndex)..<end]))
        }
        guard let delimiter = t.firstIndex(where: { $0 == "=" || $0 == ":" }) else { return .other }
        var name = t[..<delimiter]
        while let last = name.last, last == " " || last == "\t" { name.removeLast() }
        return .setting(String(name))
    }

    private static func setting(flat: String, section: String, name: String, to value: String, in lines: [String]) -> [String] {
        // Which lines set this key, in which form, and where the section's first block ends
        // (its last setting, or its header).
        var current = ""
        var sectioned: [Int] = [], flatOnes: [Int] = [], misplaced: [Int] = []
        var header: Int?, blockEnd: Int?, anySection = false
        for (i, line) in lines.enumerated() {
            switch kind(of: line) {
            case .section(let s):
                current = s
                anySection = true
                if s == section, header == nil { header = i; blockEnd = i }
            case .setting(let k):
                if current == section && k == name { sectioned.append(i) }
                else if current.isEmpty && k == flat { flatOnes.append(i) }
                else if !current.isEmpty && k == flat { misplaced.append(i) }
                if let h = header, current == section, !lines[(h + 1)..<i].contains(where: { isHeader($0) }) {
                    blockEnd = i
                }
            case .other:
                break
            }
        }
        var out = lines
        var drop = misplaced
        if let at = sectioned.first {
            out[at] = "\(name) = \(value)"
            drop += sectioned.dropFirst() + flatOnes
        } else if let at = flatOnes.first {
            out[at] = "\(flat) = \(value)"
            drop += flatOnes.dropFirst()
        } else if let end = blockEnd {
            out[end] += "\n\(name) = \(value)"
        } else if anySection {
            out += (out.last?.isEmpty == false ? [""] : []) + ["[\(section)]", "\(name) = \(value)"]
        } else {
            out.append("\(flat) = \(value)")
        }
        for i in drop.sorted(by: >) { out.remove(at: i) }
        return out.joined(separator: "\n").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    private static func isHeader(_ line: String) -> Bool {
        if case .section = kind(of: line) { return true }
        return false
    }

    /// Why a rewritten secrets file is not written.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads `text`, the new contents of the secrets file `file`, with the daemon's own
    /// parser, and checks that it sets `settings` as given: a file the daemon would refuse,
    /// or one where another line overrides them, is refused.
    public static func check(_ text: String, named file: String, setting settings: [(key: String, value: String)]) throws(Refusal) {
        var config = Config()
        do { try ConfigFiles.apply(contents: Array(text.utf8), named: file, to: &config) } catch {
            throw Refusal(description: "touchlockd would not start with the result (\(error))")
        }
        for (flat, value) in settings {
            let found: String? = switch flat {
            case "pattern_hash": config.patternHash
            case "code_hash": config.screens.codeHash
            case "code_length": String(config.screens.codeLength)
            default: preconditionFailure("set-secret sets no \(flat)")
            }
            guard found == value else {
                throw Refusal(description: "in the result, another line of \(file) sets \(flat) (read back: \(found == nil ? "nothing" : flat.hasSuffix("_hash") ? "another hash" : found!))")
            }
        }
    }
}
