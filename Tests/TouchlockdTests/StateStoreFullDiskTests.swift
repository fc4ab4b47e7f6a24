import Glibc
import Testing
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem
@testable import touchlockd

// A state write on a full disk (ENOSPC): StateStore says so with its WriteError, and
// nothing is lost: the file on disk is the record as it was, with its secret, no
// temporary file is left to eat what space there is, what the store holds is what is on
// disk, and once there is room the record is written whole.

private let pattern = Pattern(rows: 3, columns: 3, nodes: [0, 4, 8, 5])

private func makeDirectory() throws -> String {
    var template = Array("/tmp/touchlock-store-test.XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
    return String(cString: made)
}

/// A store over `path`, holding a record with two failures and the pattern, on disk too.
private func storeWithRecord(at path: String) throws -> StateStore {
    var bytes = pattern.secretBytes
    var s = StoredState()
    s.patternHash = try SecretHash.make(&bytes)
    s.lockout = LockoutRecord(failures: 2)
    try DurableFile.replace(path, with: Array(s.text.utf8))
    return StateStore(path: path, bootID: nil, stored: s, config: Config())
}

private func fileText(_ path: String) -> String? {
    (try? DurableFile.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
}

/// What the user of the store checks after a write refused for want of space.
private func expectNothingLost(_ store: StateStore, path: String, before: String?, _ write: () throws(StateStore.WriteError) -> Void) {
    do {
        try write()
        Issue.record("a write on a full disk succeeded")
    } catch {
        #expect(error == .failed(.noSpace))
        #expect("\(error)" == "No space left on device")
    }
    #expect(fileText(path) == before)
    let name = path.split(separator: "/").last.map(String.init) ?? path
    let left = ((try? DirectoryListing.names(DurableFile.directory(of: path))) ?? []).filter { $0.hasPrefix(name + ".new") }
    #expect(left.isEmpty, "the temporary file was left behind: \(left)")
    #expect(store.stored.lockout.failures == 2)
    #expect(store.stored.patternHash != nil && store.secretHash(for: .pattern) == store.stored.patternHash)
    if let before, case .whole(let onDisk) = StoredState.read(Array(before.utf8)) {
        #expect(onDisk.lockout == store.stored.lockout && onDisk.patternHash == store.stored.patternHash)
    }
}

@Suite struct StateStoreFullDiskTests {
    /// A real full file system: a tmpfs of 16 kB filled up.
    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aFullFileSystemRefusesTheWriteAndKeepsTheRecord() throws {
        let dir = try makeDirectory()
        try #require(system("mount -t tmpfs -o size=16k,mode=0700 tmpfs '\(dir)'") == 0, "cannot mount a tmpfs")
        defer {
            _ = system("umount '\(dir)'")
            rmdir(dir)
        }
        let path = dir + "/state"
        let store = try storeWithRecord(at: path)
        let before = fileText(path)
        let filler = dir + "/filler"
        let fd = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        let block = [UInt8](repeating: 0xAA, count: 1024)
        while write(fd, block, block.count) > 0 {}
        #expect(errno == ENOSPC)
        close(fd)

        expectNothingLost(store, path: path, before: before) { () throws(StateStore.WriteError) in
            try store.store(LockoutRecord(failures: 3))
        }
        expectNothingLost(store, path: path, before: before) { () throws(StateStore.WriteError) in
            try store.setSecret(.code, hash: "$y$j9T$not$checked")
        }

        // Room again: the record is written whole, the secret with it.
        unlink(filler)
        try store.store(LockoutRecord(failures: 3))
        guard let text = fileText(path), case .whole(let onDisk) = StoredState.read(Array(text.utf8)) else {
            Issue.record("the record is not on disk whole")
            return
        }
        #expect(onDisk.lockout.failures == 3 && store.stored.lockout.failures == 3)
        #expect(onDisk.patternHash == store.stored.patternHash)
    }

    /// The same without root: the seam makes every write of a file fail with ENOSPC (the
    /// test's own standard streams excepted).
    @Test(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
    func aWriteThatFindsNoSpaceIsRefusedAndTheRecordKept() throws {
        let dir = try makeDirectory()
        defer { _ = system("rm -rf '\(dir)'") }
        let path = dir + "/state"
        let store = try storeWithRecord(at: path)
        let before = fileText(path)
        var full = SystemCalls.real
        let write = full.write
        full.write = { fd, buffer, count in
            if fd > STDERR_FILENO { errno = ENOSPC; return -1 }
            return write(fd, buffer, count)
        }
        SystemCalls.$current.withValue(full) {
            expectNothingLost(store, path: path, before: before) { () throws(StateStore.WriteError) in
                try store.store(LockoutRecord(failures: 3))
            }
        }
        try store.store(LockoutRecord(failures: 3))
        #expect(store.stored.lockout.failures == 3)
        guard let text = fileText(path), case .whole(let onDisk) = StoredState.read(Array(text.utf8)) else {
            Issue.record("the record is not on disk whole")
            return
        }
        #expect(onDisk.lockout.failures == 3 && onDisk.patternHash == store.stored.patternHash)
    }
}
