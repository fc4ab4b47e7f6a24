import FoundationEssentials
import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSystem

/// A kernel whose socket calls are interrupted (EINTR), say "try again" (EAGAIN) while
/// data is there, and move only a few bytes at a time (short reads and writes), on the
/// server's side (the descriptors it accepted) and the client's alike.
private final class UnreliableSockets: @unchecked Sendable {
    struct Counts { var calls = 0, interrupted = 0, wouldBlock = 0, short = 0 }
    var serverSends = Counts(), serverReceives = Counts(), clientSends = Counts(), clientReceives = Counts()
    let chunk: Int
    /// The server's ends of its connections.
    var accepted: Set<Int32> = []

    init(chunk: Int) { self.chunk = chunk }

    /// Every third call EINTR, every third EAGAIN, the rest at most `chunk` bytes.
    private func step(_ counts: inout Counts, _ count: Int, _ real: (Int) -> Int) -> Int {
        counts.calls += 1
        switch counts.calls % 3 {
        case 1: counts.interrupted += 1; errno = EINTR; return -1
        case 2: counts.wouldBlock += 1; errno = EAGAIN; return -1
        default:
            let n = real(min(count, chunk))
            if n > 0 && n < count { counts.short += 1 }
            return n
        }
    }

    var table: SystemCalls {
        var s = SystemCalls.real
        s.accept = { listener in
            let fd = Glibc.accept(listener, nil, nil)
            if fd >= 0 { self.accepted.insert(fd) }
            return fd
        }
        s.send = { fd, buffer, count, flags in
            let server = self.accepted.contains(fd)
            return server
                ? self.step(&self.serverSends, count) { Glibc.send(fd, buffer, $0, flags) }
                : self.step(&self.clientSends, count) { Glibc.send(fd, buffer, $0, flags) }
        }
        s.recv = { fd, buffer, count, flags in
            let server = self.accepted.contains(fd)
            return server
                ? self.step(&self.serverReceives, count) { Glibc.recv(fd, buffer, $0, flags) }
                : self.step(&self.clientReceives, count) { Glibc.recv(fd, buffer, $0, flags) }
        }
        return s
    }
}

@Suite(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
struct SocketSeamTests {
    @Test func repliesArriveWholeOverInterruptedShortAndRefusedReadsAndWrites() throws {
        let kernel = UnreliableSockets(chunk: 7)
        var lines: [String] = []
        var expected: Status?
        try SystemCalls.$current.withValue(kernel.table) {
            let h = try Harness()
            expected = h.status
            let c = try h.connectWatched()
            try c.client.send(.hello)
            try c.client.send(.status)
            try c.client.send(.status)
            #expect(try h.run { c.lines.count >= 3 })
            lines = c.lines
            #expect(c.error == nil && !c.closed)
        }
        #expect(lines.count == 3)
        guard lines.count == 3 else { return }
        #expect(try JSONDecoder().decode(Hello.self, from: Data(lines[0].utf8)).protocol == 1)
        for line in lines.dropFirst() {
            #expect(try JSONDecoder().decode(Status.self, from: Data(line.utf8)) == expected)
        }
        // Every kind of trouble was met on both sides.
        for (side, counts) in [("server send", kernel.serverSends), ("server recv", kernel.serverReceives),
                               ("client send", kernel.clientSends), ("client recv", kernel.clientReceives)] {
            #expect(counts.interrupted > 0 && counts.wouldBlock > 0 && counts.short > 0, "\(side): \(counts)")
        }
    }

    @Test func aPeerThatResetsIsAnEndOfStreamNotAnError() throws {
        var s = SystemCalls.real
        s.recv = { _, _, _, _ in errno = ECONNRESET; return -1 }
        try SystemCalls.$current.withValue(s) {
            let h = try Harness()
            let c = try h.connectWatched()
            try c.client.send(line: #"{"id":1,"method":"hello"}"#)
            #expect(try h.run { c.closed })
            #expect(c.error == nil)
            #expect(h.server.peers.isEmpty)
        }
    }
}
