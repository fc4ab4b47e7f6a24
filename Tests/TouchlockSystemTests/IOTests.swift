import Glibc
import Testing
import TouchlockSystem

/// A pipe's read and write ends, for the caller to adopt.
private func makePipe(nonBlocking: Bool = false) throws -> [Int32] {
    var fds: [Int32] = [0, 0]
    try SystemCall.check("pipe") { pipe(&fds) }
    if nonBlocking { for fd in fds { _ = fcntl(fd, F_SETFL, O_NONBLOCK) } }
    return fds
}

/// Counts the calls of a faked entry, and fails the first `count` of them with `errno`.
private final class Script: @unchecked Sendable {
    var calls = 0
    var closed: [Int32] = []
    let failures: [Int32]
    init(_ failures: [Int32]) { self.failures = failures }
    /// The errno this call must fail with, if any.
    func next() -> Int32? {
        calls += 1
        return calls <= failures.count ? failures[calls - 1] : nil
    }
}

@Suite struct IOTests {
    @Test func readTellsEndOfFileFromAShortReadAndFromWouldBlock() throws {
        let fds = try makePipe(nonBlocking: true)
        let r = FileDescriptor(adopting: fds[0]), w = FileDescriptor(adopting: fds[1])
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(try buffer.withUnsafeMutableBytes { try r.read(into: $0) } == .wouldBlock)
        _ = try [UInt8]([1, 2, 3]).withUnsafeBytes { try w.write(from: $0) }
        #expect(try buffer.withUnsafeMutableBytes { try r.read(into: $0) } == .bytes(3))
        #expect(Array(buffer.prefix(3)) == [1, 2, 3])
        try w.close()
        #expect(try buffer.withUnsafeMutableBytes { try r.read(into: $0) } == .endOfFile)
    }

    @Test func readFullTellsACleanEndFromACutRecord() throws {
        var buffer = [UInt8](repeating: 0, count: 8)
        do {
            let fds = try makePipe()
        let r = FileDescriptor(adopting: fds[0]), w = FileDescriptor(adopting: fds[1])
            let fd = r.rawValue
            try [UInt8]([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]).withUnsafeBytes { try IO.writeAll(w.rawValue, $0) }
            try w.close()
            #expect(try buffer.withUnsafeMutableBytes { try IO.readFull(fd, into: $0) } == .complete)
            #expect(try buffer.withUnsafeMutableBytes { try IO.readFull(fd, into: $0) } == .short(3))
            #expect(Array(buffer.prefix(3)) == [9, 10, 11])
        }
        let fds = try makePipe()
        let r = FileDescriptor(adopting: fds[0]), w = FileDescriptor(adopting: fds[1])
        let fd = r.rawValue
        try w.close()
        #expect(try buffer.withUnsafeMutableBytes { try IO.readFull(fd, into: $0) } == .endOfFile)
    }

    @Test(.enabled(if: SystemCalls.isReplaceable))
    func interruptedReadsAndWritesAreRetriedAndShortWritesCompleted() throws {
        let reads = Script([EINTR, EINTR])
        let writes = Script([EINTR])
        var fake = SystemCalls.real
        fake.read = { fd, buffer, count in
            if let e = reads.next() { errno = e; return -1 }
            return Glibc.read(fd, buffer, count)
        }
        // One byte per call after an EINTR: every write is short.
        fake.write = { fd, buffer, count in
            if let e = writes.next() { errno = e; return -1 }
            return Glibc.write(fd, buffer, min(count, 1))
        }
        let fds = try makePipe()
        let r = FileDescriptor(adopting: fds[0]), w = FileDescriptor(adopting: fds[1])
        let (rfd, wfd) = (r.rawValue, w.rawValue)
        var got = [UInt8](repeating: 0, count: 5)
        let result = try SystemCalls.$current.withValue(fake) {
            try [UInt8]([5, 4, 3, 2, 1]).withUnsafeBytes { try IO.writeAll(wfd, $0) }
            return try got.withUnsafeMutableBytes { try IO.readFull(rfd, into: $0) }
        }
        #expect(result == .complete && got == [5, 4, 3, 2, 1])
        #expect(writes.calls == 6)  // one EINTR, then five one-byte writes
        #expect(reads.calls >= 3)   // two EINTR, then the data
    }

    @Test(.enabled(if: SystemCalls.isReplaceable))
    func otherErrorsNameTheCallAndWhatItWasOn() throws {
        var fake = SystemCalls.real
        fake.read = { _, _, _ in errno = ENODEV; return -1 }
        let fds = try makePipe()
        let r = FileDescriptor(adopting: fds[0]), w = FileDescriptor(adopting: fds[1])
        let fd = r.rawValue
        var buffer = [UInt8](repeating: 0, count: 4)
        let e = thrown(SystemError.self) {
            try SystemCalls.$current.withValue(fake) {
                try buffer.withUnsafeMutableBytes { try IO.read(fd, into: $0, "/dev/input/event3") }
            }
        }
        #expect(e?.call == "read" && e?.errno == .noDevice)
        #expect(e.map { "\($0)" } == "read /dev/input/event3: No such device (errno 19)")
    }

    @Test(.enabled(if: SystemCalls.isReplaceable))
    func aDescriptorClosesExactlyOnce() throws {
        let closes = Script([])
        var fake = SystemCalls.real
        fake.close = { fd in
            closes.closed.append(fd)
            return Glibc.close(fd)
        }
        var number: Int32 = -1
        try SystemCalls.$current.withValue(fake) {
            let fds = try makePipe()
        let r = FileDescriptor(adopting: fds[0]), w = FileDescriptor(adopting: fds[1])
            number = r.rawValue
            let wfd = w.rawValue
            try w.close()                // explicitly: once
            #expect(closes.closed == [wfd])
            _ = consume r                // and the read end as its owner goes
        }
        #expect(closes.closed.count == 2 && closes.closed.last == number)
        #expect(fcntl(number, F_GETFD) == -1 || number < 0)
    }
}
