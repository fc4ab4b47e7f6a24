import Glibc

/// Whether nobody but root and this process's user could have written a file, or put
/// another file in its place: the one check for every file and directory touchlock
/// trusts (the state file, the runtime record, the control socket's directory).
public enum FileTrust {
    /// Why the file at `path` cannot be trusted, or nil. The file (`file`, as read; nil
    /// if there is none yet) and its directory must belong to root or to this process's
    /// user and be writable by neither their group nor others; so must every directory
    /// above it (`distrust(directoryOf:)`). Another owner, or a group or others allowed
    /// to write, could replace it with one of their own (a CRC finds damage, not forgery).
    public static func distrust(_ path: String, file: FileContents.Info?) -> String? {
        if let file, let why = check(path, owner: file.owner, mode: file.mode, sticky: false) { return why }
        return distrust(directoryOf: path)
    }

    /// Why the directory of `path` and the directories above it cannot be trusted, or
    /// nil. The directory must belong to root or to this process's user and be writable
    /// by neither its group nor others; each one above, up to /, must belong to root or
    /// to this user and be writable by others only with the sticky bit (/tmp: others can
    /// add names there, not rename or remove ours). The path as written and the one its
    /// symbolic links lead to are both checked. A directory that does not exist yet is
    /// passed over (made 0700 or 0755 when it is).
    public static func distrust(directoryOf path: String) -> String? {
        let dir = DurableFile.directory(of: path)
        var starts = [dir]
        if let resolved = realpath(dir, nil) {
            let real = String(cString: resolved)
            free(resolved)
            if real != dir { starts.append(real) }
        }
        for start in starts {
            var d = start
            var first = true
            while true {
                var st = stat()
                if SystemCalls.current.stat(d, &st) == 0,
                   let why = check(d, owner: st.st_uid, mode: st.st_mode & 0o7777, sticky: !first) {
                    return why
                }
                let up = DurableFile.directory(of: d)
                if up == d { break }
                d = up
                first = false
            }
        }
        return nil
    }

    /// Why a file of `owner` and `mode` cannot be trusted: another owner, or written by
    /// its group or others (unless `sticky` allows that with the sticky bit).
    private static func check(_ what: String, owner: uid_t, mode: mode_t, sticky: Bool) -> String? {
        let me = geteuid()
        if owner != 0 && owner != me {
            return "\(what) is owned by uid \(owner), not root\(me == 0 ? "" : " or uid \(me)")"
        }
        if mode & 0o022 != 0 && !(sticky && mode & 0o1000 != 0) {  // 0o1000: S_ISVTX, sticky
            return "\(what) is writable by \(mode & 0o002 != 0 ? "others" : "its group") (mode \(String(mode & 0o7777, radix: 8)))"
        }
        return nil
    }
}
