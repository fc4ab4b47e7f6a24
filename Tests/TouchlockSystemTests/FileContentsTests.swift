import Glibc
import Testing
import TouchlockSystem

/// Only regular files are read, each within its limit, and never by waiting.
@Suite final class FileContentsTests {
    let dir: String
    init() throws {
        var template = Array("/tmp/touchlock-files-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        dir = String(cString: made)
    }
    deinit { _ = system("rm -rf '\(dir)'") }

    func refusal(_ path: String, limit: Int = 1 << 20) -> SystemError? {
        do { _ = try FileContents.bytes(path, limit: limit); return nil } catch { return error }
    }

    @Test func aFIFOADeviceAndADirectoryAreRefusedNamingTheFile() throws {
        let fifo = dir + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        // No writer: an open without O_NONBLOCK would wait here for ever.
        #expect(refusal(fifo)?.description == "open \(fifo): a FIFO, not a regular file: Invalid argument (errno 22)")
        #expect(refusal("/dev/zero")?.reason(reading: "/dev/zero") == "a character device, not a regular file")
        #expect(refusal(dir)?.reason(reading: dir) == "a directory, not a regular file")
        // Through a symbolic link, the file it names is what is looked at.
        symlink("/dev/zero", dir + "/zero.png")
        #expect(refusal(dir + "/zero.png")?.reason(reading: dir + "/zero.png") == "a character device, not a regular file")
        #expect((try? FileContents.mapped(fifo)) == nil)
        #expect(refusal(dir + "/none")?.errno == .noEntry)
    }

    @Test func aFileOverItsLimitIsRefusedBeforeItIsReadAndOneWithinIsReadWhole() throws {
        let path = dir + "/big"
        try DurableFile.replace(path, with: [UInt8](repeating: 7, count: 100_001))
        #expect(refusal(path, limit: 100_000)?.reason(reading: path) == "100001 bytes, more than the 100000 allowed")
        #expect(refusal(path, limit: 100_000)?.errno.rawValue == EFBIG)
        let (bytes, info) = try FileContents.read(path, limit: 100_001)
        #expect(bytes.count == 100_001 && bytes.allSatisfy { $0 == 7 })
        #expect(info.owner == geteuid() && info.mode == 0o600 && info.size == 100_001)
        let m = try FileContents.mapped(path)
        #expect(m.count == 100_001 && m.base.load(fromByteOffset: 100_000, as: UInt8.self) == 7)
    }

    @Test func procFilesThatSayNoSizeAreReadToTheirEndWithinTheLimit() throws {
        let text = try FileContents.text("/proc/self/status")
        #expect(text.hasPrefix("Name:"))
        #expect(refusal("/proc/self/status", limit: 16)?.errno.rawValue == EFBIG)
    }
}
