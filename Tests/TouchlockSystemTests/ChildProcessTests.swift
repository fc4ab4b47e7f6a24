import Glibc
import Testing
import TouchlockSystem

/// A pipe with both ends close-on-exec: a child sees only what it is given.
private func makePipe() throws -> [Int32] {
    var fds: [Int32] = [0, 0]
    try SystemCall.check("pipe") { pipe(&fds) }
    for fd in fds { try SystemCall.check("fcntl(F_SETFD)") { fcntl(fd, F_SETFD, FD_CLOEXEC) } }
    return fds
}

/// Real processes (/bin/sh), started, signalled and reaped through ChildProcess.
@Suite struct ChildProcessTests {
    @Test func anExitStatusIsDecoded() throws {
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["sh", "-c", "exit 3"])
        #expect(try child.wait() == .exited(3))
        #expect(child.termination == .exited(3))
    }

    @Test func aSignalThatEndsTheChildIsDecoded() throws {
        let stdin = try makePipe()
        defer { close(stdin[1]) }
        // Waits on its standard input, which stays open: only the signal ends it.
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["sh", "-c", "read line"],
                                           descriptors: [.duplicate(stdin[0], as: 0)])
        close(stdin[0])
        #expect(try child.reap() == nil)
        try child.signal(SIGTERM)
        let ended = try child.wait()
        #expect(ended == .signalled(SIGTERM, coreDumped: false))
        #expect("\(ended)" == "killed by signal 15")
        // Reaped: its number is not signalled again (it may be another process's now).
        try child.signal(SIGKILL)
        #expect(try child.reap() == ended)
    }

    @Test func reapingWithoutWaitingSeesTheEndOnlyOnceItCame() throws {
        let stdin = try makePipe()
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["sh", "-c", "read line; exit 7"],
                                           descriptors: [.duplicate(stdin[0], as: 0)])
        close(stdin[0])
        #expect(try child.reap() == nil)
        close(stdin[1])  // end of its input: it exits
        #expect(try child.wait() == .exited(7))
    }

    @Test func theChildHasTheDescriptorsItIsGivenUnderItsOwnNumbers() throws {
        let out = try makePipe()
        // fd 3 is the write end; fd 0 is /dev/null, so `cat` copies nothing and ends.
        let child = try ChildProcess.spawn("/bin/sh", arguments: ["sh", "-c", "echo $0 >&3; cat; echo end >&3", "three"],
                                           environment: ["PATH=/usr/bin:/bin"],
                                           descriptors: [.duplicate(out[1], as: 3), .open("/dev/null", O_RDONLY, as: 0)])
        close(out[1])
        #expect(try child.wait() == .exited(0))
        var bytes = [UInt8](repeating: 0, count: 64)
        let n = read(out[0], &bytes, bytes.count)
        close(out[0])
        #expect(n > 0 && String(decoding: bytes[0..<max(n, 0)], as: UTF8.self) == "three\nend\n")
    }

    @Test func aProgramThatCannotBeStartedIsAnError() throws {
        #expect(throws: SystemError.self) {
            _ = try ChildProcess.spawn("/nonexistent/touchlock-test", arguments: ["x"])
        }
    }

    @Test(.enabled(if: SystemCalls.isReplaceable, "the syscall table is replaceable in debug builds only"))
    func aRefusedSpawnSaysWhyAndStartsNothing() throws {
        var s = SystemCalls.real
        s.spawn = { _, _, _, _, _, _ in EAGAIN }
        do {
            try SystemCalls.$current.withValue(s) {
                _ = try ChildProcess.spawn("/bin/true", arguments: ["true"])
            }
            Issue.record("a refused spawn gave a process")
        } catch let error as SystemError {
            #expect(error.call == "posix_spawn" && error.errno == .wouldBlock)
        }
    }
}
