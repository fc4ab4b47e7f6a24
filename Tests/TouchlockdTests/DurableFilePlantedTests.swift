import Foundation
import Glibc
import Synchronization
import Testing
import TouchlockSystem

// What another user who can write a directory touchlockd writes a file in (the metrics
// textfile's, a collector's) can plant at the name of the old temporary file, PATH.new: a
// FIFO (an open for writing waits for a reader for ever: the daemon hangs) or a symbolic
// link to a file of theirs or of root's (followed, it is written or removed).

private final class Outcome: Sendable {
    let done = Atomic<Bool>(false)
    let error = Mutex<String?>(nil)
    let names = Mutex<[String]>([])
}

/// Runs `DurableFile.replace(path, with: bytes)` on a thread of its own and waits up to 5 s
/// for it. A write that is still waiting then is let go by `release` (a reader opens the
/// FIFO), so that a hang fails the test instead of stopping the suite. Returns whether the
/// write ended by itself, and its error.
private func replaceWithWatchdog(_ path: String, _ bytes: [UInt8], release: () -> Void) -> (ended: Bool, error: String?) {
    let outcome = Outcome()
    let thread = Thread {
        do { try DurableFile.replace(path, with: bytes, mode: 0o644) } catch {
            outcome.error.withLock { $0 = "\(error)" }
        }
        outcome.done.store(true, ordering: .sequentiallyConsistent)
    }
    thread.start()
    func wait(_ ms: Int) -> Bool {
        for _ in 0..<(ms / 10) {
            if outcome.done.load(ordering: .sequentiallyConsistent) { return true }
            usleep(10_000)
        }
        return outcome.done.load(ordering: .sequentiallyConsistent)
    }
    let ended = wait(5000)
    if !ended {
        release()
        _ = wait(10_000)
    }
    return (ended, outcome.error.withLock { $0 })
}

@Suite final class DurableFilePlantedTests {
    let dir: String
    init() throws {
        var template = Array("/tmp/touchlock-planted.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        dir = String(cString: made)
    }
    deinit { _ = system("rm -rf '\(dir)'") }

    private func text(_ path: String) -> String? {
        (try? DurableFile.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aFIFOAtTheOldTemporaryNameNeitherBlocksTheWriteNorIsTouched() throws {
        let path = dir + "/touchlock.prom"
        try DurableFile.replace(path, with: Array("old\n".utf8), mode: 0o644)
        #expect(mkfifo(path + ".new", 0o666) == 0)
        let (ended, error) = replaceWithWatchdog(path, Array("new\n".utf8)) {
            // A reader: the writer's open returns.
            let fd = open(path + ".new", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            if fd >= 0 { usleep(200_000); close(fd) }
        }
        #expect(ended, "the write waited on the FIFO planted at \(path).new")
        #expect(error == nil, "\(error ?? "")")
        #expect(text(path) == "new\n")
        var st = stat()
        #expect(lstat(path + ".new", &st) == 0 && st.st_mode & S_IFMT == S_IFIFO, "the planted FIFO was removed or replaced")
        // Nothing else is left beside the file.
        #expect(try DirectoryListing.names(dir) == ["touchlock.prom", "touchlock.prom.new"])
    }

    @Test func aSymbolicLinkAtTheOldTemporaryNameIsNotFollowedNorRemoved() throws {
        let path = dir + "/touchlock.prom"
        let victim = dir + "/victim"
        try DurableFile.replace(victim, with: Array("root's\n".utf8), mode: 0o600)
        try DurableFile.replace(path, with: Array("old\n".utf8), mode: 0o644)
        #expect(symlink(victim, path + ".new") == 0)
        let (ended, error) = replaceWithWatchdog(path, Array("new\n".utf8)) {}
        #expect(ended)
        #expect(error == nil, "\(error ?? "")")
        #expect(text(path) == "new\n")
        #expect(text(victim) == "root's\n", "the file the link names was written")
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink(path + ".new", &buf, buf.count - 1)
        #expect(n > 0 && String(cString: buf) == victim, "the planted link was removed or replaced")
        #expect(try DirectoryListing.names(dir) == ["touchlock.prom", "touchlock.prom.new", "victim"])
    }

    /// The name drawn is a new one each time: a name already taken is passed over.
    @Test(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
    func aTakenNameIsPassedOverForAnother() throws {
        let path = dir + "/state"
        let tried = Outcome()
        var calls = SystemCalls.real
        let open = calls.open
        calls.open = { @Sendable name, flags, mode in
            let n = String(cString: name)
            if n.hasPrefix(path + ".new") {
                let first = tried.names.withLock { t in t.append(n); return t.count < 3 }
                if first { errno = EEXIST; return -1 }
            }
            return open(name, flags, mode)
        }
        try SystemCalls.$current.withValue(calls) { try DurableFile.replace(path, with: Array("x\n".utf8)) }
        let names = tried.names.withLock { $0 }
        #expect(names.count == 3 && Set(names).count == 3, "\(names)")
        #expect(text(path) == "x\n")
        #expect(try DirectoryListing.names(dir) == ["state"])
    }
}
