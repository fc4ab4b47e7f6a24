import Glibc
import TouchlockCore

/// The file of a listening AF_UNIX socket, through the syscall seam: bound under a
/// temporary name and renamed into place once listening, so it is never visible before a
/// connect to it can succeed; remembered by its device and inode, so that only our own is
/// ever removed.
public struct SocketFile: Sendable {
    public let path: String
    private let device: UInt64
    private let inode: UInt64

    /// Binds `fd` at `path` with `mode` and listens with `backlog`. The kernel keeps the
    /// name given to bind, so /proc/net/unix and ss show PATH.PID for this socket. On
    /// failure nothing is left at either name.
    public static func listen(_ fd: Int32, at path: String, mode: mode_t, backlog: Int32) throws(SystemError) -> SocketFile {
        let sys = SystemCalls.current
        let temporary = path + ".\(getpid())"
        // Left by a daemon killed between bind and rename.
        try removeIfPresent(temporary)
        do {
            try UnixSocket.bind(fd, to: temporary)
            try SystemCall.check("chmod", temporary) { sys.chmod(temporary, mode) }
            var st = stat()
            try SystemCall.check("stat", temporary) { sys.stat(temporary, &st) }
            try SystemCall.check("listen", path) { sys.listen(fd, backlog) }
            try SystemCall.check("rename", path) { sys.rename(temporary, path) }
            return SocketFile(path: path, device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
        } catch {
            try? removeIfPresent(temporary)
            throw error
        }
    }

    /// Gives the file to `gid`, its mode kept. A file born with the group (systemd's
    /// Group=) is left as it is.
    public func setGroup(_ gid: gid_t) throws(SystemError) {
        let sys = SystemCalls.current
        var st = stat()
        try SystemCall.check("stat", path) { sys.stat(path, &st) }
        if st.st_gid != gid {
            try SystemCall.check("chown", path) { sys.chown(path, geteuid(), gid) }
        }
    }

    /// Removes the file if it is still ours (another server may have replaced it since).
    public func remove() throws(SystemError) {
        var st = stat()
        do {
            try SystemCall.check("lstat", path) { SystemCalls.current.lstat(path, &st) }
        } catch where error.errno == .noEntry {
            return
        }
        guard UInt64(st.st_dev) == device, UInt64(st.st_ino) == inode else { return }
        try Self.removeIfPresent(path)
    }

    /// Makes the directory of `path` (0755, searchable by the socket's group) if missing.
    public static func makeParentDirectory(of path: String) throws(SystemError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let sys = SystemCalls.current
        let dir = String(path[..<slash])
        var st = stat()
        if sys.stat(dir, &st) == 0 { return }
        do {
            try SystemCall.check("mkdir", dir) { sys.mkdir(dir, 0o755) }
            // mkdir applies the umask; the directory must be searchable by the group.
            try SystemCall.check("chmod", dir) { sys.chmod(dir, 0o755) }
        } catch where error.errno == Errno(rawValue: EEXIST) {
            return
        }
    }

    /// Unlinks `path` if it is a socket nobody accepts on, and says if it did; nothing
    /// there is no error. Fails if it is something other than a socket, or another server
    /// listens on it.
    public static func removeStale(at path: String) throws(SystemError) -> Bool {
        var st = stat()
        do {
            try SystemCall.check("lstat", path) { SystemCalls.current.lstat(path, &st) }
        } catch where error.errno == .noEntry {
            return false
        }
        guard st.st_mode & S_IFMT == S_IFSOCK else {
            throw SystemError("bind", Errno(rawValue: EEXIST), "\(path) (not a socket)")
        }
        let probe = try UnixSocket.make(nonBlocking: true)
        defer { UnixSocket.close(probe) }
        do {
            try UnixSocket.connect(probe, to: path)
        } catch where error.errno == Errno(rawValue: ECONNREFUSED) {
            try removeIfPresent(path)
            return true
        } catch where error.errno == .wouldBlock {
            // A full backlog: someone is listening.
        }
        throw SystemError("bind", Errno(rawValue: EADDRINUSE), "\(path) (another server is listening)")
    }

    /// unlink(2); a file already gone is no error.
    private static func removeIfPresent(_ path: String) throws(SystemError) {
        do {
            try SystemCall.check("unlink", path) { SystemCalls.current.unlink(path) }
        } catch where error.errno == .noEntry {}
    }
}
