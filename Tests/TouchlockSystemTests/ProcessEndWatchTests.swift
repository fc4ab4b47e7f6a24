import Glibc
import Testing
import TouchlockCore
import TouchlockSystem

/// Another process's end seen from the loop (a pidfd), with real processes (/bin/sh).
@Suite struct ProcessEndWatchTests {
    /// A shell that waits on its standard input: it ends when the returned write end is closed.
    private func waitingChild() throws -> (ChildProcess, Int32) {
        var fds: [Int32] = [0, 0]
        try SystemCall.check("pipe") { pipe(&fds) }
        for fd in fds { try SystemCall.check("fcntl(F_SETFD)") { fcntl(fd, F_SETFD, FD_CLOEXEC) } }
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["sh", "-c", "read line; exit 0"],
                                           descriptors: [.duplicate(fds[0], as: 0)])
        close(fds[0])
        return (child, fds[1])
    }

    @Test func theEndOfAProcessIsToldOnceFromTheLoop() throws {
        let (child, input) = try waitingChild()
        let loop = try EventLoop(signals: [])
        var ends = 0
        let watch = try ProcessEndWatch(pid: child.pid, loop: loop) {
            ends += 1
            loop.deferred { loop.stop() }
        }
        // Still running: nothing told yet. Then its input ends, and so does it.
        #expect(ends == 0)
        close(input)
        // Stopped by the end, or failed by this much later.
        _ = loop.schedule(at: EventLoop.now() + .milliseconds(10_000)) { _ in loop.stop() }
        try loop.run()
        #expect(ends == 1)
        #expect(watch.pid == child.pid)
        // Told once: the descriptor is off the loop, so a later wake-up tells nothing more.
        _ = loop.schedule(at: EventLoop.now()) { _ in loop.stop() }
        try loop.run()
        #expect(ends == 1)
        #expect(try child.wait() == .exited(0))
    }

    @Test func aProcessThatIsNotThereCannotBeWatched() throws {
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["sh", "-c", "exit 0"])
        _ = try child.wait()  // reaped: its number names no process now
        let loop = try EventLoop(signals: [])
        #expect(throws: SystemError.self) { _ = try ProcessEndWatch(pid: child.pid, loop: loop) {} }
    }

    @Test func aWatchGivenUpBeforeTheEndTellsNothing() throws {
        let (child, input) = try waitingChild()
        let loop = try EventLoop(signals: [])
        var ends = 0
        var watch: ProcessEndWatch? = try ProcessEndWatch(pid: child.pid, loop: loop) { ends += 1 }
        _ = watch
        watch = nil
        close(input)
        #expect(try child.wait() == .exited(0))
        _ = loop.schedule(at: EventLoop.now()) { _ in loop.stop() }
        try loop.run()
        #expect(ends == 0)
    }
}
