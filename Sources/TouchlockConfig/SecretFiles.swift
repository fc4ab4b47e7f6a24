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

    /// The text of a secrets file with `settings` (flat keys: `pattern_hash`, `code_hash`,
    /// `code_length`) set: the lines that set the same keys go, every other line stays.
    public static func updated(_ existing: String?, setting settings: [(key: String, value: String)]) -> String {
        var lines: [Substring] = []
        let keys = Set(settings.map(\.key))
        if let existing {
            for line in existing.split(separator: "\n", omittingEmptySubsequences: false) {
                if let eq = line.firstIndex(of: "="), keys.contains(String(line[..<eq].filter { $0 != " " && $0 != "\t" })) { continue }
                lines.append(line)
            }
            while lines.last?.isEmpty == true { lines.removeLast() }
        } else {
            lines = ["# touchlock: the hashes of the secrets (touchlockctl set-secret). Root only: keep it 0600."]
        }
        return (lines.map(String.init) + settings.map { "\($0.key) = \($0.value)" }).joined(separator: "\n") + "\n"
    }
}
