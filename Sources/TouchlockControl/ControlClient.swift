import CLinux
import Glibc
import TouchlockCore
import TouchlockSystem

public enum ControlClientError: Error, CustomStringConvertible {
    /// A system call failed (connect: ENOENT when no daemon runs, EACCES...).
    case system(SystemError)
    /// Nothing arrived before the deadline.
    case timedOut
    /// The server closed the connection.
    case disconnected
    /// The server sent a line over `ControlClient.maxLineBytes`.
    case lineTooLong
    /// The socket's directory, or one above it, is not trusted (`FileTrust`): why. Its
    /// owner could have put a server of theirs there, answering in the daemon's place.
    case untrusted(String)

    public var description: String {
        switch self {
        case .system(let e): "\(e)"
        case .timedOut: "timed out"
        case .disconnected: "the daemon closed the connection"
        case .lineTooLong: "the daemon sent an overlong line"
        case .untrusted(let why): "not trusted (\(why)): a server there may not be touchlockd"
        }
    }
}

extension ErrorCode {
    /// The refusals that say "not now" rather than "no": the server was full
    /// (`too_many_clients`), busy, could not build the reply, or closed an idle client.
    /// The same request on a new connection later may succeed.
    public var isTransient: Bool {
        self == .tooManyClients || self == .busy || self == .internal || self == .idleTimeout
    }
}

/// A blocking client of the control socket, for touchlockctl and tests.
///
/// `request` sends a request and returns its reply line; event lines that arrive first
/// are kept and returned by `readLine`/`nextEvent` in order. For use inside an event
/// loop, register `fd` for readability and call `readAvailableLines()`.
public final class ControlClient {
    /// Longest line the client accepts from the server.
    public static let maxLineBytes = 1 << 20

    public let path: String
    /// The connected socket (blocking).
    public private(set) var fd: Int32
    private var buffer: [UInt8] = []
    private var queued: [String] = []
    private var nextID = 1
    private var atEnd = false
    private let codec = LineCodec()

    /// Connects to the server at `path`, if its directory is trusted.
    public static func connect(path: String) throws(ControlClientError) -> ControlClient {
        try ControlClient(path: path)
    }

    public init(path: String) throws(ControlClientError) {
        self.path = path
        fd = -1
        if let why = FileTrust.distrust(directoryOf: path) { throw .untrusted(why) }
        do {
            fd = try UnixSocket.make(nonBlocking: false)
        } catch { throw .system(error) }
        do {
            try UnixSocket.connect(fd, to: path)
        } catch {
            close()  // once: deinit, which runs for this failed init too, finds it closed
            throw .system(error)
        }
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { UnixSocket.close(fd) }
        fd = -1
    }

    /// Sends one request; returns the id it carries.
    @discardableResult
    public func send(_ kind: RequestKind) throws(ControlClientError) -> Int {
        let id = nextID
        nextID += 1
        let line: [UInt8]
        do { line = try codec.line(Request(id: id, request: kind)) } catch {
            preconditionFailure("a request always encodes: \(error)")
        }
        try send(bytes: line)
        return id
    }

    /// Sends `request` with the next id in place of its own; returns the reply line.
    public func request(_ request: Request, timeout: Interval? = nil) throws(ControlClientError) -> String {
        var r = request
        r.id = nextID
        nextID += 1
        let line: [UInt8]
        do { line = try codec.line(r) } catch { preconditionFailure("a request always encodes: \(error)") }
        try send(bytes: line)
        return try awaitReply(r.id, deadline: timeout.map { EventLoop.now() + $0 })
    }

    /// Sends `line` as it is, a newline added: for tests and debugging.
    public func send(line: String) throws(ControlClientError) {
        try send(bytes: Array(line.utf8) + [UInt8(ascii: "\n")])
    }

    /// Sends raw bytes, all of them.
    public func send(bytes: [UInt8]) throws(ControlClientError) {
        var offset = 0
        while offset < bytes.count {
            do {
                offset += try UnixSocket.send(fd, bytes, from: offset, blocking: true)
            } catch {
                if error.errno == .brokenPipe || error.errno == Errno(rawValue: ECONNRESET) { throw .disconnected }
                throw .system(error)
            }
        }
    }

    /// Sends `kind` and returns the line that answers it: the reply with its id, or an
    /// error reply the server could not attribute (id null). Event lines read meanwhile
    /// are kept for `readLine`.
    public func request(_ kind: RequestKind, timeout: Interval? = nil) throws(ControlClientError) -> String {
        let id = try send(kind)
        return try awaitReply(id, deadline: timeout.map { EventLoop.now() + $0 })
    }

    private func awaitReply(_ id: Int, deadline: Instant?) throws(ControlClientError) -> String {
        while true {
            guard let line = try readRawLine(deadline: deadline) else { throw .disconnected }
            if let header = try? codec.decode(ReplyHeader.self, from: Array(line.utf8)),
               header.id == id || header.id == nil {
                return line
            }
            queued.append(line)
        }
    }

    /// The next line from the server (events, or replies to `send`); nil once the
    /// server has closed the connection. Waits at most `timeout` if one is given.
    public func readLine(timeout: Interval? = nil) throws(ControlClientError) -> String? {
        if !queued.isEmpty { return queued.removeFirst() }
        return try readRawLine(deadline: timeout.map { EventLoop.now() + $0 })
    }

    /// The next event line, decoded along with its text; nil once the server has closed
    /// the connection. Reply lines are skipped.
    public func nextEvent(timeout: Interval? = nil) throws(ControlClientError) -> (event: Event, line: String)? {
        let deadline = timeout.map { EventLoop.now() + $0 }
        while true {
            let line: String?
            if !queued.isEmpty { line = queued.removeFirst() } else { line = try readRawLine(deadline: deadline) }
            guard let line else { return nil }
            if let event = try? codec.decode(Event.self, from: Array(line.utf8)) { return (event, line) }
        }
    }

    /// The complete lines available now, without waiting, and whether the server has
    /// closed the connection. For clients driven by an event loop.
    public func readAvailableLines() throws(ControlClientError) -> (lines: [String], closed: Bool) {
        var lines = queued
        queued.removeAll()
        while let line = try takeLine() { lines.append(line) }
        while !atEnd {
            guard try fill(blocking: false) else { break }
            while let line = try takeLine() { lines.append(line) }
        }
        return (lines, atEnd)
    }

    /// Decodes a reply line's body, e.g. `decode(Status.self, from: line)`.
    public func decode<T: Decodable>(_ type: T.Type, from line: String) throws -> T {
        try codec.decode(type, from: Array(line.utf8))
    }

    /// `value` as the server would write it, without the newline.
    public func line<T: Encodable>(of value: T) -> String {
        guard let bytes = try? codec.line(value) else { return "" }
        return String(decoding: bytes.dropLast(), as: UTF8.self)
    }

    // MARK: -

    private func readRawLine(deadline: Instant?) throws(ControlClientError) -> String? {
        while true {
            if let line = try takeLine() { return line }
            if atEnd { return nil }
            if let deadline {
                let left = (deadline - EventLoop.now()).milliseconds
                if left <= 0 { throw .timedOut }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let n: Int32
                do {
                    n = try SystemCall.check("poll") { SystemCalls.current.poll(&p, 1, Int32(clamping: left)) }
                } catch { throw .system(error) }
                if n == 0 { continue }  // the deadline check above ends the wait
            }
            _ = try fill(blocking: true)
        }
    }

    /// One read into the buffer; false if a non-blocking read found nothing.
    private func fill(blocking: Bool) throws(ControlClientError) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16384)
        let n: Int?
        do {
            n = try UnixSocket.receive(fd, into: &chunk, blocking: blocking)
        } catch { throw .system(error) }
        guard let n else { return false }
        if n == 0 { atEnd = true } else { buffer.append(contentsOf: chunk[0..<n]) }
        return true
    }

    private func takeLine() throws(ControlClientError) -> String? {
        guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.count > Self.maxLineBytes { throw .lineTooLong }
            return nil
        }
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeFirst(newline + 1)
        return line
    }
}
