import Glibc

/// What one read or write did. Would-block is an answer, not an error: a non-blocking
/// descriptor has nothing to give (or no room) right now.
public enum IOResult: Equatable, Sendable {
    /// This many bytes moved (> 0; fewer than asked is a short read or write).
    case bytes(Int)
    /// EAGAIN/EWOULDBLOCK: try again when epoll says so.
    case wouldBlock
    /// A read returned 0: the peer closed, or the file ended.
    case endOfFile
}

/// What reading a whole record gave, for `IO.readFull`.
public enum ReadFullResult: Equatable, Sendable {
    /// Every byte asked for.
    case complete
    /// End of file before the first byte: a clean end.
    case endOfFile
    /// End of file after `count` bytes: a cut record.
    case short(Int)
}

/// The one read and the one write of touchlock, through `SystemCalls` (the seam tests
/// fake). EINTR is retried; EAGAIN is `.wouldBlock`; EBADF and EFAULT stop the process
/// (a descriptor or buffer we got wrong is a bug, as swift-nio treats it); every other
/// errno is a `SystemError` naming the call and `what`.
public enum IO {
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer,
                            _ what: @autoclosure () -> String? = nil) throws(SystemError) -> IOResult {
        let n = try SystemCall.checkIO("read", what()) { SystemCalls.current.read(fd, buffer.baseAddress, buffer.count) }
        return n.map { $0 == 0 ? .endOfFile : .bytes($0) } ?? .wouldBlock
    }

    public static func write(_ fd: Int32, from buffer: UnsafeRawBufferPointer,
                             _ what: @autoclosure () -> String? = nil) throws(SystemError) -> IOResult {
        guard buffer.count > 0 else { return .bytes(0) }
        let n = try SystemCall.checkIO("write", what()) { SystemCalls.current.write(fd, buffer.baseAddress, buffer.count) }
        return n.map { .bytes($0) } ?? .wouldBlock
    }

    /// recv(2) on a socket with `flags` (MSG_DONTWAIT...). ECONNRESET reads as end of stream.
    public static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, flags: Int32 = 0,
                               _ what: @autoclosure () -> String? = nil) throws(SystemError) -> IOResult {
        do {
            let n = try SystemCall.checkIO("recv", what()) {
                SystemCalls.current.recv(fd, buffer.baseAddress, buffer.count, flags)
            }
            return n.map { $0 == 0 ? .endOfFile : .bytes($0) } ?? .wouldBlock
        } catch where error.errno == .connectionReset {
            return .endOfFile
        }
    }

    /// send(2) on a socket, always with MSG_NOSIGNAL (a gone peer is EPIPE, not SIGPIPE).
    public static func send(_ fd: Int32, from buffer: UnsafeRawBufferPointer, flags: Int32 = 0,
                            _ what: @autoclosure () -> String? = nil) throws(SystemError) -> IOResult {
        guard buffer.count > 0 else { return .bytes(0) }
        let n = try SystemCall.checkIO("send", what()) {
            SystemCalls.current.send(fd, buffer.baseAddress, buffer.count, flags | Int32(MSG_NOSIGNAL))
        }
        return n.map { .bytes($0) } ?? .wouldBlock
    }

    /// Writes every byte to a blocking descriptor, over short writes. A descriptor that
    /// would block is waited for with poll (standard streams may be non-blocking).
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer,
                                _ what: @autoclosure () -> String? = nil) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            switch try write(fd, from: UnsafeRawBufferPointer(rebasing: bytes[offset...]), what()) {
            case .bytes(let n): offset += n
            case .endOfFile: return
            case .wouldBlock:
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                try SystemCall.check("poll", what()) { SystemCalls.current.poll(&p, 1, -1) }
            }
        }
    }

    /// Fills `buffer` from a blocking descriptor, over short reads, telling a clean end
    /// (nothing read) from a record cut by the end of file.
    public static func readFull(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer,
                                _ what: @autoclosure () -> String? = nil) throws(SystemError) -> ReadFullResult {
        var offset = 0
        while offset < buffer.count {
            switch try read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[offset...]), what()) {
            case .bytes(let n): offset += n
            case .endOfFile: return offset == 0 ? .endOfFile : .short(offset)
            case .wouldBlock:
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                try SystemCall.check("poll", what()) { SystemCalls.current.poll(&p, 1, -1) }
            }
        }
        return .complete
    }
}

extension FileDescriptor {
    public borrowing func read(into buffer: UnsafeMutableRawBufferPointer,
                               _ what: @autoclosure () -> String? = nil) throws(SystemError) -> IOResult {
        try IO.read(rawValue, into: buffer, what())
    }

    public borrowing func write(from buffer: UnsafeRawBufferPointer,
                                _ what: @autoclosure () -> String? = nil) throws(SystemError) -> IOResult {
        try IO.write(rawValue, from: buffer, what())
    }
}
