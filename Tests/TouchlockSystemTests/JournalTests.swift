import Glibc
import Testing
import TouchlockCore
import TouchlockSystem

/// journald's native protocol, sent to a real datagram socket standing for journald's.
@Suite struct JournalTests {
    private func server() throws -> (dir: String, path: String, fd: Int32) {
        var template = Array("/tmp/touchlock-journal.XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        let path = dir + "/socket"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        try UnixSocket.bind(fd, to: path)
        return (dir, path, fd)
    }

    private func receive(_ fd: Int32) -> [UInt8]? {
        var buf = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &buf, buf.count, Int32(MSG_DONTWAIT))
        return n > 0 ? Array(buf[0..<n]) : nil
    }

    @Test func anEventArrivesWithItsPriorityMessageIDAndFieldsAndAMultiLineMessageWhole() throws {
        let s = try server()
        defer { close(s.fd); unlink(s.path); rmdir(s.dir) }
        let journal = try #require(Journal(path: s.path, identifier: "touchlockd"))
        let record = LogRecord(level: .warning, message: "locked out for 1:00\nsecond line", id: .lockoutStarted,
                               fields: [.init("TOUCHLOCK_ATTEMPTS", "5"), .init("lower_case", "dropped"),
                                        .init("_PID", "1"), .init("TOUCHLOCK_REASON", "a = b")])
        #expect(journal.write(record))
        let bytes = try #require(receive(s.fd))
        // The newline in the message is sent in the binary form: name, \n, 64-bit LE length.
        let binary = Array("MESSAGE\n".utf8) + [31, 0, 0, 0, 0, 0, 0, 0] + Array("locked out for 1:00\nsecond line\n".utf8)
        #expect(bytes.starts(with: binary))
        let fields = try #require(Journal.parse(bytes))
        let names = fields.map(\.name)
        #expect(names == ["MESSAGE", "PRIORITY", "SYSLOG_FACILITY", "SYSLOG_IDENTIFIER", "MESSAGE_ID",
                          "TOUCHLOCK_ATTEMPTS", "TOUCHLOCK_REASON"])
        var by: [String: String] = [:]
        for f in fields { by[f.name] = f.value }
        #expect(by["MESSAGE"] == "locked out for 1:00\nsecond line")
        #expect(by["PRIORITY"] == "4")
        #expect(by["MESSAGE_ID"] == "b61429c546ea47629a2bab3e34269668")
        #expect(by["TOUCHLOCK_REASON"] == "a = b")
    }

    @Test func priorityIsSyslogsForEveryLevelAndABugSaysSo() throws {
        let s = try server()
        defer { close(s.fd); unlink(s.path); rmdir(s.dir) }
        let journal = try #require(Journal(path: s.path, identifier: "touchlockd"))
        let levels: [(LogLevel, String)] = [(.debug, "7"), (.info, "6"), (.notice, "5"), (.warning, "4"), (.error, "3"), (.bug, "2")]
        for (level, _) in levels { #expect(journal.write(LogRecord(level: level, message: "m"))) }
        for (level, priority) in levels {
            let bytes = try #require(receive(s.fd))
            let fields = try #require(Journal.parse(bytes))
            #expect(fields.first { $0.name == "PRIORITY" }?.value == priority, "\(level)")
            #expect(fields.first { $0.name == "MESSAGE" }?.value == (level == .bug ? "bug: m" : "m"))
            #expect(!fields.contains { $0.name == "MESSAGE_ID" })
        }
    }

    @Test func aJournalThatIsNotThereRefusesTheLineSoTheCallerKeepsIt() throws {
        let journal = try #require(Journal(path: "/tmp/touchlock-no-such-journal/socket", identifier: "touchlockd"))
        #expect(!journal.write(LogRecord(level: .notice, message: "unlocked by code", id: .unlocked)))
    }

    @Test func everyMessageIDIs128BitsAndTheyDiffer() {
        let ids = LogMessageID.allCases.map(\.rawValue)
        #expect(Set(ids).count == ids.count)
        for id in ids { #expect(id.count == 32 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase }, "\(id)") }
    }
}
