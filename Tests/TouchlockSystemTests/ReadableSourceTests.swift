import Glibc
import Testing
import TouchlockCore
import TouchlockSystem

/// A connected pair of non-blocking stream sockets: [the source's end, the peer's end].
private func makeSocketPair() throws -> [Int32] {
    var fds: [Int32] = [0, 0]
    try SystemCall.check("socketpair") {
        socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
    }
    return fds
}

private func send(_ bytes: [UInt8], to fd: Int32) throws {
    #expect(try bytes.withUnsafeBytes { try IO.send(fd, from: $0) } == .bytes(bytes.count))
}

private func plainRead(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult {
    try IO.read(fd, into: buffer)
}

@Suite struct ReadableSourceTests {
    @Test func severalWritesBeforeOneWakeUpAreAllReadInThatWakeUp() throws {
        let fds = try makeSocketPair()
        let peer = FileDescriptor(adopting: fds[1])
        let loop = try EventLoop(signals: [])
        var reads: [[UInt8]] = []
        // A buffer smaller than what is waiting: one read cannot take it all.
        let source = try ReadableSource(FileDescriptor(adopting: fds[0]), loop: loop, bufferSize: 4,
                                        read: plainRead, onError: { _ in .stop }) { bytes in
            reads.append(Array(bytes))
            loop.deferred { loop.stop() }  // after this wake-up's handler, whatever it read
        }
        try send([1, 2, 3], to: peer.rawValue)
        try send([4, 5, 6], to: peer.rawValue)
        try send([7, 8, 9], to: peer.rawValue)
        loop.schedule(at: EventLoop.now() + .milliseconds(2000)) { _ in loop.stop() }
        try loop.run()
        #expect(reads.flatMap { $0 } == [1, 2, 3, 4, 5, 6, 7, 8, 9])
        #expect(reads.count > 1)  // the premise: one read could not take it all
        #expect(loop.wakeups == 1)
        _ = source
    }

    @Test func anErrorTheOwnerReadsOnAfterDoesNotEndTheDrainAndOneItStopsAtLeavesTheRestForLater() throws {
        for after in [ReadableSource.AfterError.keepReading, .stop] {
            let fds = try makeSocketPair()
            let peer = FileDescriptor(adopting: fds[1])
            let loop = try EventLoop(signals: [])
            var calls = 0
            var errors: [Errno] = []
            var received: [UInt8] = []
            // The kernel cannot be made to fail one read on demand: the first read here fails
            // as a netlink socket that lost events does, and the next ones read for real.
            // Each run of the loop below is one wake-up.
            let failingFirst: ReadableSource.Read = { fd, buffer throws(SystemError) in
                loop.deferred { loop.stop() }
                calls += 1
                if calls == 1 { throw SystemError("recv", Errno(rawValue: ENOBUFS)) }
                return try IO.read(fd, into: buffer)
            }
            let source = try ReadableSource(FileDescriptor(adopting: fds[0]), loop: loop, bufferSize: 16,
                                            read: failingFirst, onError: { errors.append($0.errno); return after }) {
                received += $0
            }
            try send([1, 2, 3], to: peer.rawValue)
            loop.schedule(at: EventLoop.now() + .milliseconds(2000)) { _ in loop.stop() }
            try loop.run()
            #expect(errors == [Errno(rawValue: ENOBUFS)])
            #expect(received == (after == .keepReading ? [1, 2, 3] : []), "\(after)")
            if after == .stop { try loop.run() }  // the next wake-up
            #expect(received == [1, 2, 3], "\(after): nothing lost")
            #expect(errors.count == 1)
            _ = source
        }
    }

    @Test func theDescriptorIsClosedWhenTheSourceGoesAway() throws {
        let fds = try makeSocketPair()
        let peer = FileDescriptor(adopting: fds[1])
        let loop = try EventLoop(signals: [])
        var source: ReadableSource? = try ReadableSource(FileDescriptor(adopting: fds[0]), loop: loop, bufferSize: 16,
                                                         read: plainRead, onError: { _ in .stop }) { _ in }
        var byte: UInt8 = 0
        #expect(try withUnsafeMutableBytes(of: &byte) { try IO.receive(peer.rawValue, into: $0) } == .wouldBlock)
        _ = source
        source = nil
        // The peer sees its other end gone (the descriptor's number may already be reused
        // by another test running alongside, so it is not what is checked).
        #expect(try withUnsafeMutableBytes(of: &byte) { try IO.receive(peer.rawValue, into: $0) } == .endOfFile)
    }
}
