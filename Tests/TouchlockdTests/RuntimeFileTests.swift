import Glibc
import Testing
import TouchlockCore
import TouchlockSystem
@testable import touchlockd

// The runtime record tells the daemon after this one whether the device was unlocked. A
// record that cannot say locked must not stay on disk saying unlocked; one of another
// boot (on a /run that is not a tmpfs) must not unlock this one.

private func makeDirectory() throws -> String {
    var template = Array("/tmp/touchlock-runtime-test.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
    return String(cString: made)
}

/// Every file in `dir` that says `locked = no`.
private func unlockedRecords(in dir: String) -> [String] {
    ((try? DirectoryListing.names(dir)) ?? []).filter { name in
        guard let bytes = (try? DurableFile.read(dir + "/" + name)).flatMap({ $0 }) else { return false }
        return String(decoding: bytes, as: UTF8.self).contains("locked = no")
    }
}

private let unlockedRecord = RuntimeRecord(unlocked: (.pattern, Instant(microseconds: 5_000_000)), returnVT: 1, ownVT: 8)

@Suite(.serialized) struct RuntimeFileTests {
    /// A real full file system: a tmpfs of 16 kB filled up, as a full /run.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aRecordThatCannotBeWrittenOnAFullRunLeavesNoUnlockedOne() throws {
        let dir = try makeDirectory()
        try #require(system("mount -t tmpfs -o size=16k,mode=0700 tmpfs '\(dir)'") == 0, "cannot mount a tmpfs")
        defer {
            _ = system("umount '\(dir)'")
            rmdir(dir)
        }
        let file = RuntimeFile(besideSocket: dir + "/touchlock.sock")
        #expect(file.save(unlockedRecord) == nil)
        #expect(file.load().unlocked?.method == .pattern)
        let fd = open(dir + "/filler", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        let block = [UInt8](repeating: 0xAA, count: 1024)
        while write(fd, block, block.count) > 0 {}
        #expect(errno == ENOSPC)
        close(fd)

        // The device is locked again: the record saying so cannot be written.
        let error = file.save(RuntimeRecord(returnVT: 1, ownVT: 8))
        #expect(error?.contains("No space left on device") == true, "\(error ?? "written")")
        #expect(error?.contains("a restart will start locked") == true, "\(error ?? "written")")
        #expect(unlockedRecords(in: dir) == [], "a record still says unlocked")
        #expect(RuntimeFile(besideSocket: dir + "/touchlock.sock").load().unlocked == nil)
    }

    /// The same without root: the seam makes every write of a file fail with ENOSPC.
    @Test(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
    func aRecordThatCannotBeWrittenLeavesNoUnlockedOne() throws {
        let dir = try makeDirectory()
        defer { _ = system("rm -rf '\(dir)'") }
        let file = RuntimeFile(besideSocket: dir + "/touchlock.sock")
        #expect(file.save(unlockedRecord) == nil)
        var full = SystemCalls.real
        let write = full.write
        full.write = { fd, buffer, count in
            if fd > STDERR_FILENO { errno = ENOSPC; return -1 }
            return write(fd, buffer, count)
        }
        let error = SystemCalls.$current.withValue(full) { file.save(RuntimeRecord(returnVT: 1, ownVT: 8)) }
        #expect(error != nil)
        #expect(unlockedRecords(in: dir) == [], "a record still says unlocked")
        #expect(file.load().unlocked == nil)
    }

    /// A record left on a /run that outlived the boot: an older daemon's, with no boot id,
    /// or one of another boot, reads as none; one of this boot is read.
    @Test func aRecordOfAnotherBootReadsAsLocked() throws {
        let dir = try makeDirectory()
        defer { _ = system("rm -rf '\(dir)'") }
        let socket = dir + "/touchlock.sock"
        let path = dir + "/touchlock.runtime"
        // An older daemon's record (no boot id) written in this boot: an upgrade while
        // unlocked stays unlocked.
        try DurableFile.replace(path, with: Array("locked = no\nunlocked_by = pattern\nunlocked_at_us = 5\nreturn_vt = 1\n".utf8))
        let older = RuntimeFile(besideSocket: socket).load()
        #expect(older.unlocked?.method == .pattern && older.returnVT == 1, "\(older)")

        #expect(RuntimeFile(besideSocket: socket, bootID: "boot-a").save(unlockedRecord) == nil)
        #expect(RuntimeFile(besideSocket: socket, bootID: "boot-a").load().unlocked?.method == .pattern)
        let next = RuntimeFile(besideSocket: socket, bootID: "boot-b").load()
        #expect(next.unlocked == nil && next.returnVT == nil && next.ownVT == nil, "\(next)")
        #expect(RuntimeFile(besideSocket: socket, bootID: nil).load().unlocked == nil)
    }
}
