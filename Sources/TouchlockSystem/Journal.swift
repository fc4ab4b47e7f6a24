import CLinux
import Glibc
import TouchlockCore

/// journald's native protocol (systemd.journal-fields(7), "Native Journal Protocol")
/// written directly, as sd_journal_send does it but without libsystemd: one datagram per
/// line to /run/systemd/journal/socket, each field `NAME=value\n`, or for a value with a
/// newline `NAME\n`, its length as 64-bit little-endian, the value and `\n`. A line goes
/// with its priority, its MESSAGE_ID and its `TOUCHLOCK_*` fields, so that
/// `journalctl MESSAGE_ID=...` or `TOUCHLOCK_METHOD=code` finds it.
///
/// A datagram the socket does not take (journald gone or busy, a line too long for one
/// datagram) is not lost: `write` says so and the caller writes the line to standard
/// error, which journald reads too (with only its priority).
public final class Journal {
    /// Where journald listens (systemd's default).
    public static let defaultPath = "/run/systemd/journal/socket"
    public let path: String
    private let identifier: String
    private let fd: Int32
    private let address: UnixSocket.Address

    /// A datagram socket for `path`; nil if none can be made (the caller keeps to standard
    /// error).
    public init?(path: String = Journal.defaultPath, identifier: String) {
        guard let address = try? UnixSocket.Address(path, for: "sendto") else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        self.fd = fd
        self.path = path
        self.address = address
        self.identifier = identifier
    }

    deinit { UnixSocket.close(fd) }

    /// Whether standard error is the journal's stream for this process: systemd sets
    /// $JOURNAL_STREAM to "DEVICE:INODE" of the stream it connected (systemd.exec(5)); a
    /// standard error redirected elsewhere since (a shell, a test) does not match.
    public static func standardErrorIsJournal() -> Bool {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(STDERR_FILENO, &st) == 0 else { return false }
        return UInt64(st.st_dev) == device && UInt64(st.st_ino) == inode
    }

    /// Sends `record`; false if the journal did not take it.
    @discardableResult
    public func write(_ record: LogRecord) -> Bool {
        let bytes = Self.datagram(Self.fields(of: record, identifier: identifier))
        let sent = bytes.withUnsafeBytes { raw in
            address.withSockaddr { sendto(fd, raw.baseAddress, raw.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), $0, $1) }
        }
        return sent == bytes.count
    }

    /// The fields journald gets for `record`: the message (a `bug` says so), its
    /// priority, the identifier syslog would show, the event's id and its own fields.
    public static func fields(of record: LogRecord, identifier: String) -> [LogRecord.Field] {
        var out = [
            LogRecord.Field("MESSAGE", record.level == .bug ? "bug: " + record.message : record.message),
            LogRecord.Field("PRIORITY", "\(record.level.priority)"),
            LogRecord.Field("SYSLOG_FACILITY", "3"),
            LogRecord.Field("SYSLOG_IDENTIFIER", identifier),
        ]
        if let id = record.id { out.append(LogRecord.Field("MESSAGE_ID", id.rawValue)) }
        // Names journald would drop (lower case, a leading underscore: trusted fields) are
        // the caller's bug; they are left out rather than sent.
        out += record.fields.filter { isValidName($0.name) && $0.name != "MESSAGE" && $0.name != "PRIORITY" }
        return out
    }

    /// journald's rule for a field name: A-Z, 0-9 and _, not starting with _ or a digit,
    /// at most 64 characters.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 64, first != UInt8(ascii: "_"),
              !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return bytes.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") }
    }

    /// The datagram of `fields` in the native protocol.
    public static func datagram(_ fields: [LogRecord.Field]) -> [UInt8] {
        var out: [UInt8] = []
        for f in fields {
            out += Array(f.name.utf8)
            let value = Array(f.value.utf8)
            if value.contains(UInt8(ascii: "\n")) {
                out.append(UInt8(ascii: "\n"))
                var length = UInt64(value.count).littleEndian
                withUnsafeBytes(of: &length) { out += $0 }
            } else {
                out.append(UInt8(ascii: "="))
            }
            out += value
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }

    /// The fields of a datagram in the native protocol (what journald does with it), or
    /// nil if it is not one; for tests and tools that stand in for journald.
    public static func parse(_ bytes: [UInt8]) -> [LogRecord.Field]? {
        var out: [LogRecord.Field] = []
        var i = 0
        while i < bytes.count {
            guard let end = bytes[i...].firstIndex(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "=") }) else { return nil }
            let name = String(decoding: bytes[i..<end], as: UTF8.self)
            if bytes[end] == UInt8(ascii: "=") {
                guard let nl = bytes[end...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
                out.append(LogRecord.Field(name, String(decoding: bytes[(end + 1)..<nl], as: UTF8.self)))
                i = nl + 1
            } else {
                guard end + 9 <= bytes.count else { return nil }
                var length: UInt64 = 0
                for k in 0..<8 { length |= UInt64(bytes[end + 1 + k]) << (8 * UInt64(k)) }
                let start = end + 9
                guard length <= UInt64(bytes.count - start), start + Int(length) < bytes.count,
                      bytes[start + Int(length)] == UInt8(ascii: "\n") else { return nil }
                out.append(LogRecord.Field(name, String(decoding: bytes[start..<(start + Int(length))], as: UTF8.self)))
                i = start + Int(length) + 1
            }
        }
        return out
    }
}
