import Glibc

/// The names in a directory, through the one error wrapper.
public enum DirectoryListing {
    /// The entries of `dir` but `.` and `..`, sorted; an error if it cannot be read.
    public static func names(_ dir: String) throws(SystemError) -> [String] {
        let d = try SystemCall.checkPointer("opendir", dir) { opendir(dir) }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let n = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if n != "." && n != ".." { names.append(n) }
        }
        return names.sorted()
    }

    /// Writes `text` to `path`, which must exist (a sysfs attribute: one write, no
    /// temporary file, no fsync).
    public static func writeAttribute(_ path: String, _ text: String) throws(SystemError) {
        let file = try FileDescriptor.open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW)
        try Array(text.utf8).withUnsafeBytes { b in Result { () throws(SystemError) in try IO.writeAll(file.rawValue, b, path) } }.get()
    }
}
