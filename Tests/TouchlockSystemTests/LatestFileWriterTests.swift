import Glibc
import Synchronization
import Testing
import TouchlockCore
import TouchlockSystem

/// The fsyncs the writer's thread makes: each takes `delayMicroseconds` longer (flash),
/// and fails with EIO while `failing` is set; counted, with the thread they ran on.
private final class SlowDisk: Sendable {
    let delayMicroseconds: UInt32
    private let state = Mutex<(fsyncs: Int, failing: Bool, threads: Set<UInt>)>((0, false, []))
    init(delayMicroseconds: UInt32) { self.delayMicroseconds = delayMicroseconds }

    var fsyncs: Int { state.withLock { $0.fsyncs } }
    var threads: Set<UInt> { state.withLock { $0.threads } }
    func fail(_ on: Bool) { state.withLock { $0.failing = on } }

    func table() -> SystemCalls {
        var s = SystemCalls.real
        s.fsync = { [self] fd in
            usleep(delayMicroseconds)
            let failing = state.withLock { st -> Bool in
                st.fsyncs += 1
                st.threads.insert(UInt(pthread_self()))
                return st.failing
            }
            if failing { errno = EIO; return -1 }
            return Glibc.fsync(fd)
        }
        return s
    }
}

@Suite(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
struct LatestFileWriterTests {
    func directory() throws -> String {
        var template = Array("/tmp/latest-writer.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        return String(cString: made)
    }

    func text(_ path: String) -> String? {
        (try? DurableFile.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// Runs `loop` until `done()` holds (checked every 5 ms), at most 20 s.
    func run(_ loop: EventLoop, until done: @escaping () -> Bool) throws {
        let end = EventLoop.now() + .milliseconds(20_000)
        func check(_ now: Instant) {
            if done() || now >= end { return loop.stop() }
            _ = loop.schedule(at: now + .milliseconds(5), check)
        }
        _ = loop.schedule(at: EventLoop.now(), check)
        try loop.run()
    }

    /// A hundred contents asked for while the first is being written with 20 ms fsyncs:
    /// two writes (the first, then the last), off the loop's thread; every request is
    /// answered on the loop, in order, after it was asked; the file holds the last.
    @Test func contentsAskedForDuringAWriteAreWrittenOnceTheLatestWinning() throws {
        let dir = try directory()
        defer { _ = system("rm -rf '\(dir)'") }
        let disk = SlowDisk(delayMicroseconds: 20_000)
        try SystemCalls.$current.withValue(disk.table()) {
            let loop = try EventLoop(signals: [])
            let writer = try LatestFileWriter(path: dir + "/message", loop: loop)
            var answered: [(index: Int, error: SystemError?, written: String)] = []
            for i in 0..<100 {
                writer.write(Array("message \(i)".utf8)) { error, written in
                    answered.append((i, error, String(decoding: written, as: UTF8.self)))
                }
            }
            // Nothing is answered before the loop runs: the writes are under way elsewhere.
            #expect(answered.isEmpty && writer.isBusy)
            try run(loop) { answered.count == 100 && !writer.isBusy }
            #expect(answered.map(\.index) == Array(0..<100))
            #expect(answered.allSatisfy { $0.error == nil })
            #expect(answered[0].written == "message 0" && answered[1...].allSatisfy { $0.written == "message 99" })
            #expect(writer.writes == 2)
            #expect(disk.fsyncs == 4)
            #expect(!disk.threads.contains(UInt(pthread_self())), "an fsync ran on the loop's thread")
            #expect(text(dir + "/message") == "message 99")
        }
    }

    /// A write that fails tells everyone waiting for it, and the file keeps what it had;
    /// the next write is made all the same.
    @Test func aFailedWriteIsToldToEveryoneWaitingAndTheFileIsUntouched() throws {
        let dir = try directory()
        defer { _ = system("rm -rf '\(dir)'") }
        let disk = SlowDisk(delayMicroseconds: 5_000)
        try SystemCalls.$current.withValue(disk.table()) {
            let loop = try EventLoop(signals: [])
            let writer = try LatestFileWriter(path: dir + "/message", loop: loop)
            var errors: [SystemError?] = []
            writer.write(Array("kept".utf8)) { error, _ in errors.append(error) }
            try run(loop) { errors.count == 1 }
            #expect(errors.count == 1 && errors[0] == nil)
            disk.fail(true)
            for i in 0..<3 { writer.write(Array("lost \(i)".utf8)) { error, _ in errors.append(error) } }
            try run(loop) { errors.count == 4 }
            #expect(errors.count == 4 && errors[1...].allSatisfy { $0?.errno == Errno(rawValue: EIO) })
            #expect(text(dir + "/message") == "kept")
            disk.fail(false)
            writer.write(Array("again".utf8)) { error, _ in errors.append(error) }
            try run(loop) { errors.count == 5 }
            #expect(errors.count == 5 && errors[4] == nil)
            #expect(text(dir + "/message") == "again")
        }
    }

    /// At shutdown the write under way is waited for and the waiting contents written.
    @Test func finishingWritesWhatIsWaiting() throws {
        let dir = try directory()
        defer { _ = system("rm -rf '\(dir)'") }
        let disk = SlowDisk(delayMicroseconds: 20_000)
        try SystemCalls.$current.withValue(disk.table()) {
            let loop = try EventLoop(signals: [])
            let writer = try LatestFileWriter(path: dir + "/message", loop: loop)
            writer.write(Array("first".utf8)) { _, _ in }
            writer.write(Array("last".utf8)) { _, _ in }
            writer.finish()
            #expect(!writer.isBusy)
            #expect(text(dir + "/message") == "last")
        }
    }
}
