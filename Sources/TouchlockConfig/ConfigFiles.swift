import CInih
import Glibc
import TouchlockCore

/// Reads the daemon's settings with libinih, in this order, later files overriding
/// earlier ones key by key:
///
///     /usr/share/touchlock/touchlock.conf      (the package's defaults)
///     /usr/share/touchlock/touchlock.conf.d/*.conf   (sorted by name)
///     /etc/touchlock/touchlock.conf            (the administrator's)
///     /etc/touchlock/touchlock.conf.d/*.conf
///     each -C FILE, in the order given
///
/// Files under the two directories that do not exist are skipped; a -C file must exist.
public enum ConfigFiles {
    public static let directories = ["/usr/share/touchlock", "/etc/touchlock"]

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
        return out + extra
    }

    static func confFiles(in dir: String) -> [String] {
        guard let d = opendir(dir) else { return [] }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasSuffix(".conf") && !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }).map { dir + "/" + $0 }
    }

    /// Applies every file in `paths` to `config`.
    public static func load(_ paths: [String], into config: inout Config) throws(Config.Error) {
        for p in paths { try apply(file: p, to: &config) }
    }

    private final class Context {
        var config: Config
        var firstError: String?
        init(_ c: Config) { config = c }
    }

    /// Applies the settings of one file. The first problem in it is reported with its
    /// line (libinih gives the line of the first error).
    public static func apply(file: String, to config: inout Config) throws(Config.Error) {
        guard let f = fopen(file, "re") else {
            throw Config.Error(file: file, line: 0, message: "cannot read: \(String(cString: strerror(errno)))")
        }
        defer { fclose(f) }
        var st = stat()
        if fstat(fileno(f), &st) == 0, st.st_mode & S_IFMT == S_IFDIR {
            throw Config.Error(file: file, line: 0, message: "cannot read: is a directory")
        }
        try apply(stream: f, named: file, to: &config)
    }

    /// Applies the settings read from an open stream; `file` names it in errors.
    public static func apply(stream f: UnsafeMutablePointer<FILE>, named file: String,
                             to config: inout Config) throws(Config.Error) {
        let context = Context(config)
        let user = Unmanaged.passUnretained(context).toOpaque()
        let line = ini_parse_file(f, { user, section, name, value in
            let context = Unmanaged<Context>.fromOpaque(user!).takeUnretainedValue()
            let s = section.map { String(cString: $0) } ?? ""
            let k = name.map { String(cString: $0) } ?? ""
            let v = value.map { String(cString: $0) } ?? ""
            do throws(Config.BadValue) {
                try context.config.set(section: s, key: k, value: v)
                return 1
            } catch {
                if context.firstError == nil { context.firstError = error.message }
                return 0
            }
        }, user)
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
