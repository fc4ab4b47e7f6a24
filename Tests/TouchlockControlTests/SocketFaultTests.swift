import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSystem

/// A process with no descriptor left: accept fails with EMFILE while `exhausted`, and
/// is the real accept4 otherwise. The connections stay queued in the kernel meanwhile,
/// as they do when the real table is full.
private final class DescriptorTable: @unchecked Sendable {
    var exhausted = false
    /// The accepts refused with EMFILE.
    var refused = 0

    func table() -> SystemCalls {
        var s = SystemCalls.real
        let real = s.accept
        s.accept = { listener in
            if self.exhausted {
                self.refused += 1
                errno = EMFILE
                return -1
            }
            return real(listener)
        }
        return s
    }
}

private func isSocket(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFSOCK
}

@Suite(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
struct SocketFaultTests {
    /// EMFILE on accept for 300 ms: the server stops trying for a while instead of
    /// spinning, the rest of the loop (a touch device's descriptor, here a pipe written
    /// every 10 ms) is served all along, the client that waited is answered once a
    /// descriptor is free, and the socket still takes new clients.
    /// A bound on the product at the machine's own speed: not run under emulation
    /// (TOUCHLOCK_TEST_TIME_SCALE set), where a 10 ms period is a few emulated instructions.
    @Test(.enabled(if: Harness.timeScale == 1, "a bound on the product, at the machine's own speed only"))
    func withNoDescriptorLeftTheServerWaitsAndThenAnswersEveryClient() throws {
        let descriptors = DescriptorTable()
        try SystemCalls.$current.withValue(descriptors.table()) {
            let h = try Harness()
            var touch: [Int32] = [0, 0]
            try SystemCall.check("pipe") { pipe(&touch) }
            defer { close(touch[0]); close(touch[1]) }
            var delays: [Int64] = []
            var written: Instant?
            try h.loop.register(touch[0], .readable) { _ in
                var byte: UInt8 = 0
                _ = read(touch[0], &byte, 1)
                if let w = written { delays.append((EventLoop.now() - w).microseconds) }
                written = nil
            }
            let start = EventLoop.now()
            for i in 1...30 {
                h.loop.schedule(at: start + .milliseconds(Int64(i * 10))) { _ in
                    written = EventLoop.now()
                    var byte: UInt8 = 1
                    _ = write(touch[1], &byte, 1)
                }
            }
            var refusedWhileFull = 0
            h.loop.schedule(at: start + .milliseconds(300)) { _ in
                refusedWhileFull = descriptors.refused
                descriptors.exhausted = false
            }

            descriptors.exhausted = true
            let waiting = try h.connectWatched()
            try waiting.client.send(.hello)
            #expect(try h.run(timeout: .milliseconds(3000)) { waiting.lines.count == 1 })
            let answeredAfter = (EventLoop.now() - start).milliseconds
            #expect(answeredAfter >= 300, "answered after \(answeredAfter) ms, while no descriptor was left")
            // Tried again about every 100 ms, not in a loop that would spin on the
            // readable socket.
            #expect((1...5).contains(refusedWhileFull), "\(refusedWhileFull) accepts refused in 300 ms")
            #expect(delays.count == 30)
            #expect(delays.allSatisfy { $0 < 50_000 }, "touches waited up to \(delays.max() ?? 0) µs")

            // The listening socket stayed, and a later client is answered.
            #expect(isSocket(h.path))
            let later = try h.connectWatched()
            try later.client.send(.hello)
            #expect(try h.run { later.lines.count == 1 })
            #expect(h.server.clientCount == 2)
        }
    }

    /// A socket that cannot listen leaves no file behind, under either of its names.
    @Test func aFailedListenLeavesNoSocketFile() throws {
        var s = SystemCalls.real
        s.listen = { _, _ in errno = ENOBUFS; return -1 }
        var template = Array("/tmp/touchlock-ctl-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        let dir = String(cString: made)
        defer { rmdir(dir) }
        let path = dir + "/touchlock.sock"
        let loop = try EventLoop(signals: [])
        do {
            _ = try SystemCalls.$current.withValue(s) {
                try ControlServer(path: path, loop: loop) {
                    Status(session: Session(), screen: Size(width: 800, height: 480),
                           grid: PatternGrid.layout(on: Size(width: 800, height: 480)))
                }
            }
            Issue.record("a server that cannot listen was made")
        } catch let error as SystemError {
            #expect(error.call == "listen" && error.errno == Errno(rawValue: ENOBUFS))
        }
        #expect(!isSocket(path) && !isSocket(path + ".\(getpid())"))
        var st = stat()
        #expect(lstat(path, &st) != 0 && lstat(path + ".\(getpid())", &st) != 0)
    }
}
