import Glibc
import TouchlockCore

/// Files that must survive a crash or a power cut the moment a call returns.
public enum DurableFile {
    /// Replaces `path` with `bytes`: writes a temporary file beside it, fsyncs it, renames
    /// it over `path` and fsyncs the directory, so the file is either the old or the new
    /// one, never a mix, and the new one is on disk when this returns. The file is
    /// created with `mode`. On failure the temporary file is removed and `path` is untouched.
    /// The temporary file is made new (`createTemporary`): nothing planted beside `path`
    /// (a FIFO, a symbolic link) is opened, followed or removed.
    /// The fsyncs and the rename go through `SystemCalls.current` (tests slow them down or
    /// make them fail).
    public static func replace(_ path: String, with bytes: [UInt8], mode: mode_t = 0o600) throws(SystemError) {
        let sys = SystemCalls.current
        let dir = directory(of: path)
        let (fd, temp) = try createTemporary(beside: path, mode: mode)
        do throws(SystemError) {
            try SystemCall.check("fchmod", temp) { fchmod(fd, mode) }
            try bytes.withUnsafeBytes { b in Result { () throws(SystemError) in try IO.writeAll(fd, b, temp) } }.get()
            try SystemCall.check("fsync", temp) { sys.fsync(fd) }
            let r = close(fd)
            if r != 0 { throw SystemError("close", .current, temp) }
        } catch {
            close(fd)
            unlink(temp)
            throw error
        }
        do {
            try SystemCall.check("rename", path) { sys.rename(temp, path) }
        } catch {
            unlink(temp)
            throw error
        }
        let dfd = try SystemCall.check("open", dir) { open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(dfd) }
        try SystemCall.check("fsync", dir) { sys.fsync(dfd) }
    }

    /// A new file beside `path`, open for writing: PATH.new.XXXXXXXXXXXXXXXX, 16 random hex
    /// digits, created with O_EXCL and O_NOFOLLOW so that whatever is found at the name
    /// (a FIFO whose open would wait for ever, a symbolic link to another file) is never
    /// opened; another name is drawn then. Anyone who can write the directory can plant
    /// a name, never guess the next one.
    static func createTemporary(beside path: String, mode: mode_t) throws(SystemError) -> (fd: Int32, path: String) {
        let sys = SystemCalls.current
        var generator = SystemRandomNumberGenerator()
        var tries = 0
        while true {
            let suffix = String(generator.next() as UInt64, radix: 16)
            let temp = path + ".new." + String(repeating: "0", count: 16 - suffix.count) + suffix
            do {
                let fd = try SystemCall.check("open", temp) {
                    sys.open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
                }
                return (fd, temp)
            } catch where error.errno == Errno(rawValue: EEXIST) && tries < 100 {
                tries += 1
            }
        }
    }

    /// The whole file, or nil if it does not exist.
    public static func read(_ path: String) throws(SystemError) -> [UInt8]? {
        try readWithOwner(path)?.bytes
    }

    /// The whole file with its owner and mode (read from the descriptor it was read
    /// through), or nil if it does not exist. At most 1 MiB, a regular file.
    public static func readWithOwner(_ path: String) throws(SystemError) -> (bytes: [UInt8], info: FileContents.Info)? {
        do {
            return try FileContents.read(path, limit: 1 << 20)
        } catch where error.errno == .noEntry {
            return nil
        }
    }

    /// Removes `path`; one that does not exist is no error.
    public static func remove(_ path: String) throws(SystemError) {
        do {
            _ = try SystemCall.check("unlink", path) { unlink(path) }
        } catch where error.errno == .noEntry {
        }
    }

    /// Makes `dir` with `mode`, and any missing parent with 0755 (from an initramfs even
    /// /var/lib may not exist yet).
    public static func makeDirectory(_ dir: String, mode: mode_t = 0o700) throws(SystemError) {
        var st = stat()
        if stat(dir, &st) == 0 { return }
        let parent = directory(of: dir)
        if parent != dir && parent != "/" && parent != "." { try makeDirectory(parent, mode: 0o755) }
        do {
            try SystemCall.check("mkdir", dir) { mkdir(dir, mode) }
        } catch where error.errno == Errno(rawValue: EEXIST) {}
    }

    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }
}

/// The kernel's random id of the running boot: a new one at every boot.
public enum BootID {
    /// When the running boot began, in seconds of the wall clock (`btime` in /proc/stat).
    public static func startedAt(path: String = "/proc/stat") -> Int? {
        guard let bytes = try? FileContents.read(path, limit: 1 << 20).bytes else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("btime ") {
            return Int(line.dropFirst(6).filter { $0 != " " })
        }
        return nil
    }

    public static func current(path: String = "/proc/sys/kernel/random/boot_id") -> String? {
        guard let bytes = try? DurableFile.read(path) else { return nil }
        let s = String(decoding: bytes.filter { $0 > 32 && $0 < 127 }, as: UTF8.self)
        return s.isEmpty ? nil : s
    }
}
