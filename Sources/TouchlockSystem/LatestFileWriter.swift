import Glibc
import Synchronization
import TouchlockCore

/// Keeps one file durably replaced with the latest contents asked for, off the event
/// loop: each write (`DurableFile.replace`: a new file, fsync, rename, fsync of the
/// directory, tens of ms on flash) runs on a thread of its own, at most one at a time, and
/// the loop never waits for it. Contents asked for while a write is under way wait, each
/// replacing the one before (the latest wins), and go in the next write, so a flood of
/// requests costs a few writes, not one each.
///
/// The thread only writes the bytes it was given: it tells the loop it is done through a
/// pipe, and every `done` is called on the loop, in the order asked, once a write of
/// its contents or of later ones has ended (nil), or failed (the error). The thread sees
/// the seam of the loop that started it (`SystemCalls.current`), so a test's slow or
/// failing fsync reaches it.
public final class LatestFileWriter {
    public let path: String
    private let mode: mode_t
    private let loop: EventLoop
    /// The pipe's read end, readable once the thread has written, and its write end.
    private let wake: Int32
    private let wakeWriter: Int32
    /// The write under way: its thread, its job, and those waiting for it.
    private var running: (thread: pthread_t, job: Job, done: [(SystemError?, [UInt8]) -> Void])?
    /// The contents to write next, and those waiting for them.
    private var next: (bytes: [UInt8], done: [(SystemError?, [UInt8]) -> Void])?
    /// Writes started since the writer was made.
    public private(set) var writes = 0

    public init(path: String, mode: mode_t = 0o600, loop: EventLoop) throws(SystemError) {
        self.path = path
        self.mode = mode
        self.loop = loop
        var ends: [Int32] = [-1, -1]
        _ = try SystemCall.check("pipe", path) { pipe(&ends) }
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wake = ends[0]
        wakeWriter = ends[1]
        do {
            try loop.register(wake, .readable) { [unowned self] _ in self.written() }
        } catch {
            Glibc.close(ends[0])
            Glibc.close(ends[1])
            throw error
        }
    }

    deinit {
        finish()
        loop.unregister(wake)
        Glibc.close(wake)
        Glibc.close(wakeWriter)
    }

    /// Whether a write is under way or waiting.
    public var isBusy: Bool { running != nil || next != nil }

    /// Writes `bytes` as soon as no write is under way; `done` is called on the loop with
    /// nil once they, or contents asked for after them, are on disk, or with the error of
    /// the write that failed; and with the bytes that write wrote.
    public func write(_ bytes: [UInt8], done: @escaping (SystemError?, [UInt8]) -> Void) {
        if running == nil {
            start(bytes, [done])
        } else {
            next = (bytes, (next?.done ?? []) + [done])
        }
    }

    /// Waits for the write under way and writes the waiting contents on this thread
    /// (at shutdown: nothing asked for is lost); nobody is told.
    public func finish() {
        if let r = running {
            pthread_join(r.thread, nil)
            running = nil
            drain()
        }
        if let n = next {
            next = nil
            if let error = Job.write(n.bytes, to: path, mode: mode) { Log.warning("\(path): \(error)") }
        }
    }

    private func start(_ bytes: [UInt8], _ done: [(SystemError?, [UInt8]) -> Void]) {
        let job = Job(path: path, bytes: bytes, mode: mode, calls: SystemCalls.current, wake: wakeWriter)
        writes += 1
        var thread = pthread_t()
        let box = Unmanaged.passRetained(job).toOpaque()
        let r = pthread_create(&thread, nil, { arg in
            Unmanaged<Job>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, box)
        guard r == 0 else {
            Unmanaged<Job>.fromOpaque(box).release()
            // No thread to be had: written here, as before there was one, and told on a
            // later turn all the same.
            Log.warning("\(path): pthread_create: \(Errno(rawValue: r)); written on the event loop")
            let error = Job.write(bytes, to: path, mode: mode)
            loop.deferred { [unowned self] in
                for d in done { d(error, bytes) }
                self.startNext()
            }
            return
        }
        running = (thread, job, done)
    }

    /// The thread has written: those waiting for it are told, the next contents go.
    private func written() {
        drain()
        guard let r = running, let outcome = r.job.outcome else { return }
        pthread_join(r.thread, nil)
        running = nil
        for d in r.done { d(outcome.error, r.job.bytes) }
        startNext()
    }

    private func startNext() {
        guard running == nil, let n = next else { return }
        next = nil
        start(n.bytes, n.done)
    }

    private func drain() {
        var bytes: (UInt64, UInt64) = (0, 0)
        _ = Glibc.read(wake, &bytes, MemoryLayout<(UInt64, UInt64)>.size)
    }

    /// One write, handed to its thread: what it writes and, once written, how it went.
    private final class Job: Sendable {
        let path: String
        let bytes: [UInt8]
        let mode: mode_t
        let calls: SystemCalls
        let wake: Int32
        private let result = Mutex<Outcome?>(nil)

        struct Outcome: Sendable { var error: SystemError? }

        init(path: String, bytes: [UInt8], mode: mode_t, calls: SystemCalls, wake: Int32) {
            self.path = path; self.bytes = bytes; self.mode = mode; self.calls = calls; self.wake = wake
        }

        var outcome: Outcome? { result.withLock { $0 } }

        /// On the job's thread: the write, its outcome kept, the loop woken.
        func run() {
            var error: SystemError?
            #if ENABLE_MOCKING
            SystemCalls.$current.withValue(calls) { error = Self.write(bytes, to: path, mode: mode) }
            #else
            error = Self.write(bytes, to: path, mode: mode)
            #endif
            result.withLock { $0 = Outcome(error: error) }
            var one: UInt8 = 1
            _ = Glibc.write(wake, &one, 1)
        }

        static func write(_ bytes: [UInt8], to path: String, mode: mode_t) -> SystemError? {
            do {
                try DurableFile.makeDirectory(DurableFile.directory(of: path))
                try DurableFile.replace(path, with: bytes, mode: mode)
                return nil
            } catch {
                return error
            }
        }
    }
}
