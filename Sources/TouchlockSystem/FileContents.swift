import Glibc

/// Whole-file reads (settings, recordings, /proc files), through the one error wrapper.
public enum FileContents {
    /// The bytes of `path`, at most `limit` of them (a larger file is an error: EFBIG).
    public static func bytes(_ path: String, limit: Int = 64 << 20) throws(SystemError) -> [UInt8] {
        let file = try FileDescriptor.open(path, O_RDONLY)
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let r = try buf.withUnsafeMutableBytes { b in Result { () throws(SystemError) in try file.read(into: b, path) } }.get()
            guard case .bytes(let n) = r else { return out }  // end of file (a regular file never blocks)
            out.append(contentsOf: buf[0..<n])
            if out.count > limit { throw SystemError("read", Errno(rawValue: EFBIG), path) }
        }
    }

    /// What tells one version of `path` from another without reading it: its size and
    /// modification time; nil when it cannot be looked at.
    public static func stamp(_ path: String) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return "\(st.st_size)|\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
    }

    /// Writes `path` back and drops its pages from the page cache: the next process to map
    /// it reads it from disk, as one started at boot does.
    public static func dropFromPageCache(_ path: String) throws(SystemError) {
        let file = try FileDescriptor.open(path, O_RDONLY)
        try SystemCall.check("fdatasync", path) { fdatasync(file.rawValue) }
        let e = posix_fadvise(file.rawValue, 0, 0, POSIX_FADV_DONTNEED)
        if e != 0 { throw SystemError("posix_fadvise", Errno(rawValue: e), path) }
    }

    /// The text of `path` as UTF-8; invalid bytes are an error (EILSEQ).
    public static func text(_ path: String, limit: Int = 64 << 20) throws(SystemError) -> String {
        let b = try bytes(path, limit: limit)
        guard let s = String(validating: b, as: UTF8.self) else {
            throw SystemError("read", Errno(rawValue: EILSEQ), "\(path): not UTF-8 text")
        }
        return s
    }
}
