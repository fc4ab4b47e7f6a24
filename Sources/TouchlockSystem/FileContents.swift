import Glibc

/// Whole-file reads (settings, recordings, the state file, fonts, images, /proc files),
/// through the one error wrapper. Only a regular file is read: a FIFO, a device or a
/// socket is refused before a byte is read (a FIFO with no writer would block the reader
/// for ever, /dev/zero would fill its memory). The file is looked at with stat(2) before
/// it is opened, so that opening a device does nothing, then opened with O_NONBLOCK
/// (opening a FIFO cannot wait for a writer) and checked again on the descriptor with
/// fstat(2), which is what decides. Every read has a size limit: a larger file is refused
/// (EFBIG) before it is read.
public enum FileContents {
    /// Who owns the file read and its permissions, from the descriptor it was read through.
    public struct Info: Sendable, Hashable {
        public var owner: uid_t
        public var mode: mode_t
        public var size: Int
        /// When its inode last changed (st_ctime, seconds of the wall clock).
        public var changed: Int = 0
    }

    /// What a file that is not regular is, in an error.
    static func kind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    /// Opens `path` for reading if it is a regular file of at most `limit` bytes.
    static func openRegular(_ path: String, limit: Int, info: inout Info) throws(SystemError) -> FileDescriptor {
        func refuse(_ st: stat) throws(SystemError) {
            if let kind = kind(st.st_mode) {
                let e = st.st_mode & S_IFMT == S_IFDIR ? EISDIR : EINVAL
                throw SystemError("open", Errno(rawValue: e), "\(path): \(kind), not a regular file")
            }
            if Int(st.st_size) > limit {
                throw SystemError("read", Errno(rawValue: EFBIG), "\(path): \(st.st_size) bytes, more than the \(limit) allowed")
            }
        }
        var st = stat()
        if stat(path, &st) == 0 { try refuse(st) }
        let file = try FileDescriptor.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY)
        try SystemCall.check("fstat", path) { fstat(file.rawValue, &st) }
        try refuse(st)
        info = Info(owner: st.st_uid, mode: st.st_mode & 0o7777, size: Int(st.st_size), changed: Int(st.st_ctim.tv_sec))
        return file
    }

    /// The bytes of `path` and who owns it; at most `limit` bytes (a larger file is an
    /// error: EFBIG).
    public static func read(_ path: String, limit: Int) throws(SystemError) -> (bytes: [UInt8], info: Info) {
        var info = Info(owner: 0, mode: 0, size: 0)
        let file = try openRegular(path, limit: limit, info: &info)
        var out: [UInt8] = []
        out.reserveCapacity(min(info.size, limit))
        // /proc files say 0 bytes: read until the end, the limit still applies.
        var buf = [UInt8](repeating: 0, count: min(65536, max(info.size + 1, 4096)))
        while true {
            let r = try buf.withUnsafeMutableBytes { b in Result { () throws(SystemError) in try file.read(into: b, path) } }.get()
            switch r {
            case .endOfFile: return (out, info)
            case .bytes(let n): out.append(contentsOf: buf[0..<n])
            case .wouldBlock:
                // A regular file never blocks; a file that does is not one to wait on.
                throw SystemError("read", .wouldBlock, path)
            }
            if out.count > limit {
                throw SystemError("read", Errno(rawValue: EFBIG), "\(path): more than the \(limit) bytes allowed")
            }
        }
    }

    /// The bytes of `path`, at most `limit` of them (a larger file is an error: EFBIG).
    public static func bytes(_ path: String, limit: Int = 64 << 20) throws(SystemError) -> [UInt8] {
        try read(path, limit: limit).bytes
    }

    /// A regular file of at most `limit` bytes mapped read-only (a font: FreeType reads
    /// it in place, and only the pages it touches are read).
    public final class Mapping: @unchecked Sendable {
        public let base: UnsafeRawPointer
        public let count: Int
        init(base: UnsafeRawPointer, count: Int) { self.base = base; self.count = count }
        deinit { munmap(UnsafeMutableRawPointer(mutating: base), count) }
    }

    public static func mapped(_ path: String, limit: Int = 64 << 20) throws(SystemError) -> Mapping {
        var info = Info(owner: 0, mode: 0, size: 0)
        let file = try openRegular(path, limit: limit, info: &info)
        guard info.size > 0 else { throw SystemError("mmap", Errno(rawValue: EINVAL), "\(path): empty") }
        guard let p = mmap(nil, info.size, PROT_READ, MAP_PRIVATE, file.rawValue, 0), p != MAP_FAILED else {
            throw SystemError("mmap", .current, path)
        }
        return Mapping(base: UnsafeRawPointer(p), count: info.size)
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

extension SystemError {
    /// Why reading `path` failed, without its name, for a message that names it already:
    /// "a FIFO, not a regular file", "No such file or directory".
    public func reason(reading path: String) -> String {
        if let d = detail, d.hasPrefix(path + ": ") { return String(d.dropFirst(path.count + 2)) }
        return errno.description
    }
}
