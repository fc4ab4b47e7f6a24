import Glibc

extension DurableFile {
    /// The whole of `path` if it is a regular file of this process's user that nobody else
    /// may write (nor may anybody else write its directory); nil if it does not exist. One
    /// that someone else could have written is an error (EPERM), naming what is wrong: its
    /// contents cannot be trusted.
    public static func readOwned(_ path: String, limit: Int = 64 << 10) throws(SystemError) -> [UInt8]? {
        let fd: Int32
        do {
            fd = try SystemCall.check("open", path) { open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        } catch where error.errno == .noEntry {
            return nil
        }
        let file = FileDescriptor(adopting: fd)
        var st = stat()
        try SystemCall.check("fstat", path) { fstat(file.rawValue, &st) }
        let me = geteuid()
        func untrusted(_ why: String) -> SystemError { SystemError("open", .notPermitted, "\(path): \(why)") }
        guard st.st_mode & S_IFMT == S_IFREG else { throw untrusted("not a regular file") }
        guard st.st_uid == me else { throw untrusted("owned by uid \(st.st_uid), not \(me)") }
        guard st.st_mode & 0o022 == 0 else { throw untrusted("writable by others (mode \(String(st.st_mode & 0o777, radix: 8)))") }
        let dir = directory(of: path)
        var dst = stat()
        try SystemCall.check("stat", dir) { stat(dir, &dst) }
        guard dst.st_uid == me || dst.st_uid == 0, dst.st_mode & 0o022 == 0 || dst.st_mode & S_ISVTX != 0 else {
            throw untrusted("its directory \(dir) may be written by others")
        }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let r = try buf.withUnsafeMutableBytes { b in Result { () throws(SystemError) in try file.read(into: b, path) } }.get()
            guard case .bytes(let n) = r else { return out }
            out.append(contentsOf: buf[0..<n])
            if out.count > limit { throw SystemError("read", Errno(rawValue: EFBIG), path) }
        }
    }
}
