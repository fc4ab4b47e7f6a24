import Glibc

/// Writes to the standard streams through their file descriptors, unbuffered: a line
/// written is on its way before the call returns (systemd's journal, a serial console).
/// Reads lines from standard input one byte at a time, so nothing after the line is
/// taken from a pipe that another reader (or the next call) continues.
public enum StandardStreams {
    public static func error(_ line: String) { write(STDERR_FILENO, line + "\n") }
    public static func output(_ line: String) { write(STDOUT_FILENO, line + "\n") }

    /// Writes `text` to standard error as it is (no newline added), all of it.
    public static func errorText(_ text: String) { write(STDERR_FILENO, text) }

    /// The next line of standard input without its newline (and without a carriage
    /// return), or nil at end of input with nothing read. A line over `limit` bytes is
    /// wiped and gives nil, like a read error: a secret may have been typed into it.
    public static func readLine(limit: Int = 1024) -> [UInt8]? {
        var line = [UInt8]()
        var byte: UInt8 = 0
        while true {
            let r: IOResult
            do { r = try withUnsafeMutableBytes(of: &byte) { b throws(SystemError) in try IO.read(STDIN_FILENO, into: b, "standard input") } }
            catch { return line.isEmpty ? nil : line }
            switch r {
            case .endOfFile, .wouldBlock: return line.isEmpty ? nil : line
            case .bytes:
                if byte == UInt8(ascii: "\n") { return line }
                if byte != UInt8(ascii: "\r") { line.append(byte) }
                if line.count > limit {
                    line.withUnsafeMutableBytes { if let p = $0.baseAddress { explicit_bzero(p, $0.count) } }
                    return nil
                }
            }
        }
    }

    /// Errors are dropped: there is nowhere left to report them.
    private static func write(_ fd: Int32, _ s: String) {
        let bytes = Array(s.utf8)
        bytes.withUnsafeBytes { b in try? IO.writeAll(fd, b) }
    }
}
