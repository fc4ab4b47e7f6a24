import Glibc
import TouchlockCore

/// A non-blocking descriptor on the event loop, read until it would block each time epoll
/// says it is readable (so several writes before one wake-up are all seen), and
/// unregistered and closed once when the source goes away. The owner says how one read is
/// made (read, recv...), what each read's bytes mean, and whether an error ends the drain.
public final class ReadableSource {
    /// One read of at most the buffer's size; EAGAIN is `.wouldBlock` (as `IO` returns it).
    public typealias Read = (_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> IOResult

    /// What a failed read leaves to do.
    public enum AfterError: Sendable {
        /// Read again: the descriptor still has data (a lost-events warning, say).
        case keepReading
        /// Leave the rest for the next wake-up.
        case stop
    }

    private let descriptor: FileDescriptor
    private let loop: EventLoop
    private var buffer: [UInt8]
    private let read: Read
    private let onError: (SystemError) -> AfterError
    private let onBytes: (ArraySlice<UInt8>) -> Void

    /// Takes ownership of `descriptor` (already non-blocking) and registers it on `loop`.
    /// `onBytes` gets each read's bytes, valid during the call. If registering fails, the
    /// descriptor is closed and the error thrown.
    public init(_ descriptor: consuming FileDescriptor, loop: EventLoop, bufferSize: Int,
                read: @escaping Read, onError: @escaping (SystemError) -> AfterError,
                onBytes: @escaping (ArraySlice<UInt8>) -> Void) throws(SystemError) {
        self.descriptor = descriptor
        self.loop = loop
        buffer = [UInt8](repeating: 0, count: bufferSize)
        self.read = read
        self.onError = onError
        self.onBytes = onBytes
        try loop.register(self.descriptor.rawValue, .readable) { [weak self] _ in self?.drain() }
    }

    deinit {
        loop.unregister(descriptor.rawValue)
        // `descriptor` closes itself right after, as the stored properties go.
    }

    private func drain() {
        let fd = descriptor.rawValue
        while true {
            let result = buffer.withUnsafeMutableBytes { b in
                Result { () throws(SystemError) in try read(fd, b) }
            }
            switch result {
            case .success(.bytes(let n)):
                onBytes(buffer[..<n])
            case .success(.wouldBlock), .success(.endOfFile):
                return
            case .failure(let error):
                switch onError(error) {
                case .keepReading: continue
                case .stop: return
                }
            }
        }
    }
}
