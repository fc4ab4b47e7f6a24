import CInih
import Glibc
import TouchlockCore
import TouchlockSystem

/// Reads the daemon's settings with libinih, in this order, later files overriding
/// earlier ones key by key (the directories are `Paths.data` and `Paths.config`, by
/// default):
///
///     /usr/share/touchlock/touchlock.conf      (the package's defaults)
///     /usr/share/touchlock/touchlock.conf.d/*.conf   (sorted by name)
///     /etc/touchlock/touchlock.conf            (the administrator's)
///     /etc/touchlock/touchlock.conf.d/*.conf
///     /etc/touchlock/secrets.conf              (the hashes: root only, 0600; SecretFiles)
///     each -C FILE, in the order given
///
/// Files under the two directories that do not exist are skipped; a -C file must exist.
public enum ConfigFiles {
    public static let directories = [Paths.data, Paths.config]

    /// The files read, in order. `root` prefixes the two directories (for tests and
    /// images built elsewhere).
    public static func paths(root: String = "", extra: [String]) -> [String] {
        var out: [String] = []
        for dir in directories {
            let base = root + dir
            let main = base + "/touchlock.conf"
            if access(main, F_OK) == 0 { out.append(main) }
            out += confFiles(in: base + "/touchlock.conf.d")
        }
        let secrets = root + SecretFiles.defaultPath
        if access(secrets, F_OK) == 0 { out.append(secrets) }
        return out + extra
    }

    static func confFiles(in dir: String) -> [String] {
        let names = ((try? DirectoryListing.names(dir)) ?? []).filter { $0.hasSuffix(".conf") && !$0.hasPrefix(".") }
        return names.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }).map { dir + "/" + $0 }
    }

    /// Applies every file in `paths` to `config`.
    public static func load(_ paths: [String], into config: inout Config) throws(Config.Error) {
        for p in paths { try apply(file: p, to: &config) }
    }

    /// What libinih's handler reaches: the settings being read, whatever their type.
    private class Reading {
        var firstError: String?
        func set(section: String, key: String, value: String) throws(Config.BadValue) {}
    }

    private final class Context<S: SettingsFile>: Reading {
        var config: S
        init(_ c: S) { config = c }
        override func set(section: String, key: String, value: String) throws(Config.BadValue) {
            try config.set(section: section, key: key, value: value)
        }
    }

    /// A settings file is at most this long (a FIFO, a device or a longer file is refused
    /// before it is read).
    public static let maxFileBytes = 1 << 20

    /// Applies the settings of one file. The first problem in it is reported with its
    /// line (libinih gives the line of the first error).
    public static func apply<S: SettingsFile>(file: String, to config: inout S) throws(Config.Error) {
        let contents: [UInt8]
        do { contents = try FileContents.bytes(file, limit: maxFileBytes) } catch {
            throw Config.Error(file: file, line: 0, message: "cannot read: \(error.reason(reading: file))")
        }
        try apply(contents: contents, named: file, to: &config)
    }

    /// Gives each `key = value` libinih reads to the settings; the first refusal stops it.
    private static let handler: ini_handler = { user, section, name, value in
        let context = Unmanaged<Reading>.fromOpaque(user!).takeUnretainedValue()
        let s = section.map { String(cString: $0) } ?? ""
        let k = name.map { String(cString: $0) } ?? ""
        let v = value.map { String(cString: $0) } ?? ""
        do throws(Config.BadValue) {
            try context.set(section: s, key: k, value: v)
            return 1
        } catch {
            if context.firstError == nil { context.firstError = error.message }
            return 0
        }
    }

    /// libinih reads a line into a buffer of 200 bytes: the rest of a longer line would
    /// be read as a line of its own.
    public static let maxLineBytes = 199

    /// Applies the settings in the bytes of a file; `file` names it in errors. Lines
    /// must be UTF-8 text without NUL bytes, of at most `maxLineBytes` bytes, so that
    /// nothing is read other than as written.
    public static func apply<S: SettingsFile>(contents: [UInt8], named file: String, to config: inout S) throws(Config.Error) {
        var n = 0
        for line in contents.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            n += 1
            func refuse(_ why: String) -> Config.Error { Config.Error(file: file, line: n, message: why) }
            if line.count > maxLineBytes { throw refuse("line longer than \(maxLineBytes) bytes") }
            if line.contains(0) { throw refuse("a NUL byte in the line") }
            if String(validating: line, as: UTF8.self) == nil { throw refuse("not UTF-8 text") }
        }
        let context = Context(config)
        let user = Unmanaged.passUnretained(context as Reading).toOpaque()
        let line = (contents + [0]).withUnsafeBufferPointer { text in
            ini_parse_string(UnsafeRawPointer(text.baseAddress!).assumingMemoryBound(to: CChar.self), handler, user)
        }
        if line > 0 {
            throw Config.Error(file: file, line: Int(line),
                               message: context.firstError ?? "expected 'key = value' or '[section]'")
        }
        if line < 0 {
            throw Config.Error(file: file, line: 0, message: "cannot read: out of memory")
        }
        config = context.config
    }
}

/// Settings read from a file by `ConfigFiles`: touchlock.conf's (`Config`) and
/// touchlock-mqtt's (`BridgeConfig`).
public protocol SettingsFile {
    mutating func set(section: String, key: String, value: String) throws(Config.BadValue)
}

extension Config: SettingsFile {}
extension BridgeConfig: SettingsFile {}
