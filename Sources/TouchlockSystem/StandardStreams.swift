import Glibc

/// Writes to the standard streams through their file descriptors, unbuffered: a line
/// written is on its way before the call returns (systemd's journal, a serial console).
public enum StandardStreams {
    public static func error(_ line: String) { write(2, line + "\n") }
    public static func output(_ line: String) { write(1, line + "\n") }

    private static func write(_ fd: Int32, _ s: String) {
        var bytes = Array(s.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 { if errno == EINTR { continue }; return }
            off += n
        }
    }
}
