import CLinux
import Glibc
import TouchlockCore
import TouchlockSystem

/// The control socket: a listening AF_UNIX stream socket on the daemon's event loop.
///
/// Every descriptor is non-blocking and nothing here waits: reads take what is there,
/// partial lines wait in a per-client buffer, and writes the kernel does not take wait
/// in a bounded per-client buffer with EPOLLOUT interest. A client that lets that buffer
/// fill while subscribed is dropped; one that pipelines requests without reading the
/// replies is simply not read from until it does. Any protocol violation costs that
/// client only.
public final class ControlServer {
    /// Bounds on what one server holds.
    public struct Limits: Hashable, Sendable {
        /// Longest request line, newline excluded.
        public var maxLineBytes: Int
        /// Connected clients; one more is told `too_many_clients` and closed.
        public var maxClients: Int
        /// Bytes queued for one client that the kernel has not taken yet.
        public var maxOutputBytes: Int
        /// Connections of one user (uid); root and the server's own user are exempt.
        public var maxClientsPerUser: Int
        /// Of `maxClients`, the slots only root and the server's own user may take.
        public var reservedForRoot: Int
        /// A client neither subscribed nor owed a reply is closed after this long without
        /// a request (it is told `idle_timeout`).
        public var idleTimeout: Interval

        public init(maxLineBytes: Int = 4096, maxClients: Int = 256, maxOutputBytes: Int = 65536,
                    maxClientsPerUser: Int = 32, reservedForRoot: Int = 4,
                    idleTimeout: Interval = .milliseconds(30_000)) {
            self.maxLineBytes = maxLineBytes
            self.maxClients = maxClients
            self.maxOutputBytes = maxOutputBytes
            self.maxClientsPerUser = maxClientsPerUser
            self.reservedForRoot = reservedForRoot
            self.idleTimeout = idleTimeout
        }
    }

    /// Who is on the other end of a connection (SO_PEERCRED and SO_PEERGROUPS at accept).
    public struct Peer: Hashable, Sendable, CustomStringConvertible {
        public var pid: Int32
        public var uid: UInt32
        public var gid: UInt32
        /// Supplementary groups.
        public var groups: [UInt32]
        public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
            self.pid = pid; self.uid = uid; self.gid = gid; self.groups = groups
        }
        init(_ c: UnixSocket.PeerCredentials) { self.init(pid: c.pid, uid: c.uid, gid: c.gid, groups: c.groups) }
        public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }

        public func isMember(of group: UInt32) -> Bool { gid == group || groups.contains(group) }
    }

    /// What the server answers, apart from the socket: the handlers and the group.
    public let requests: ControlRequests
    /// The group whose members may make `group` requests (nil: root only).
    public var group: UInt32? {
        get { requests.group }
        set { requests.group = newValue }
    }
    /// The group whose members may set the message (`messageGroup` requests), with its
    /// name for the refusal (nil: root only).
    public var messageGroup: (id: UInt32, name: String)? {
        get { requests.messageGroup }
        set { requests.messageGroup = newValue }
    }
    /// Carries out `lock` (see `ControlRequests.lockHandler`).
    public var lockHandler: ((@escaping (Result<Status.State, ControlError>) -> Void) -> Void)? {
        get { requests.lockHandler }
        set { requests.lockHandler = newValue }
    }
    /// Answers `metrics`.
    public var metricsHandler: (() -> Metrics)? {
        get { requests.metricsHandler }
        set { requests.metricsHandler = newValue }
    }
    /// Carries out `enroll` (which secret, its hash or nil to remove); nil on success.
    public var enrollHandler: ((SecretKind, String?) -> ControlError?)? {
        get { requests.enrollHandler }
        set { requests.enrollHandler = newValue }
    }
    /// Starts an enrollment on the screen (see `ControlRequests.enrollScreenHandler`).
    public var enrollScreenHandler: ((UnlockMethod, Int) -> ControlError?)? {
        get { requests.enrollScreenHandler }
        set { requests.enrollScreenHandler = newValue }
    }
    /// Carries out `reset_lockout` (see `ControlRequests.resetLockoutHandler`).
    public var resetLockoutHandler: ((Peer) -> Result<Status.State, ControlError>)? {
        get { requests.resetLockoutHandler }
        set { requests.resetLockoutHandler = newValue }
    }
    /// Carries out `message` (see `ControlRequests.messageHandler`).
    public var messageHandler: ((String?, Peer, @escaping (ControlError?) -> Void) -> Void)? {
        get { requests.messageHandler }
        set { requests.messageHandler = newValue }
    }
    /// Carries out `service_unlock` (see `ControlRequests.serviceUnlockHandler`).
    public var serviceUnlockHandler: ((String, Peer, @escaping (Result<Status.State, ControlError>) -> Void) -> Void)? {
        get { requests.serviceUnlockHandler }
        set { requests.serviceUnlockHandler = newValue }
    }
    /// A client went away (closed, dropped); its serial number.
    public var clientGone: ((Int) -> Void)?
    private var nextSerial = 1

    /// Gives the socket file to `gid` (mode 0660 stays) and lets its members make
    /// `group` requests.
    public func setGroup(_ gid: UInt32) throws(SystemError) {
        try socketFile.setGroup(gid)
        group = gid
    }

    func allowed(_ access: RequestKind.Access, _ peer: Peer) -> Bool { requests.allowed(access, peer) }

    private final class Client {
        let fd: Int32
        let peer: Peer
        /// Unique for the server's life (a descriptor number is reused).
        let serial: Int
        var input: [UInt8] = []
        /// Queued output; bytes before `written` have been sent.
        var output: [UInt8] = []
        var written = 0
        var subscribed = false
        /// Set after end of stream or a fatal protocol error: no more reading, close once
        /// the queued output is sent.
        var closing = false
        var interest: IOInterest = .readable
        /// Closed and forgotten by the server.
        var dropped = false
        /// When the client last sent a request line, or connected.
        var lastActive: Instant
        /// The timer that closes the client if it stays idle.
        var idleTimer: EventLoop.TimerID?
        /// Replies that will be sent later (`lock` waits for the display).
        var owed = 0

        init(fd: Int32, peer: Peer, serial: Int, at now: Instant) {
            self.fd = fd; self.peer = peer; self.serial = serial; lastActive = now
        }
        var pending: Int { output.count - written }
    }

    public let path: String
    public let limits: Limits
    private let loop: EventLoop
    private var listener: Int32
    /// The socket file we bound, so `close` unlinks only our own.
    private let socketFile: SocketFile
    private var clients: [Int32: Client] = [:]
    /// Connected clients per uid.
    private var perUser: [UInt32: Int] = [:]
    private var acceptResume: EventLoop.TimerID?
    private let codec = LineCodec()
    private var scratch = [UInt8](repeating: 0, count: 16384)

    /// Connected clients.
    public var clientCount: Int { clients.count }
    /// Connected clients that asked for events.
    public var subscriberCount: Int { clients.values.filter { $0.subscribed && !$0.closing }.count }
    /// The peers of the connected clients.
    public var peers: [Peer] { clients.values.map(\.peer) }

    /// Listens on `path`: creates its directory (0755) if missing, replaces a stale socket
    /// file nobody listens on, makes the socket 0660. Fails if another server listens
    /// there, the path is something other than a socket, or its directory is not trusted
    /// (`FileTrust`: whoever could change it could put a socket of theirs in our place and
    /// answer our clients). `status` is asked for each `status` request.
    public init(path: String, loop: EventLoop, limits: Limits = Limits(),
                status: @escaping () -> Status) throws(SystemError) {
        self.path = path
        self.limits = limits
        self.loop = loop
        self.requests = ControlRequests(status: status)

        try SocketFile.makeParentDirectory(of: path)
        if let why = FileTrust.distrust(directoryOf: path) {
            throw SystemError("listen", .notPermitted, "\(path) (not trusted: \(why))")
        }
        if try SocketFile.removeStale(at: path) { Log.info("control: removed a stale socket at \(path)") }

        let fd = try UnixSocket.make(nonBlocking: true)
        do {
            socketFile = try SocketFile.listen(fd, at: path, mode: 0o660, backlog: Int32(clamping: limits.maxClients))
        } catch {
            UnixSocket.close(fd)
            throw error
        }
        listener = fd
        do {
            try loop.register(fd, .readable) { [unowned self] _ in self.acceptClients() }
        } catch {
            UnixSocket.close(fd)
            try? socketFile.remove()
            throw error
        }
        Log.info("control: listening on \(path)")
    }

    deinit { close() }

    /// Stops listening: closes every client, unlinks the socket file.
    public func close() {
        guard listener >= 0 else { return }
        loop.unregister(listener)
        UnixSocket.close(listener)
        listener = -1
        if let t = acceptResume { loop.cancel(t) }
        acceptResume = nil
        for client in Array(clients.values) { drop(client, "server closing") }
        do { try socketFile.remove() } catch { Log.warning("control: \(error)") }
        Log.debug("control: closed \(path)")
    }

    /// Sends `event` to every subscriber. A subscriber that cannot take it without its
    /// queue exceeding `limits.maxOutputBytes` is dropped.
    public func broadcast(_ event: Event) {
        let line: [UInt8]
        do { line = try codec.line(event) } catch {
            Log.bug("control: cannot encode event \(event.name): \(error)")
            return
        }
        for client in Array(clients.values) where client.subscribed && !client.closing {
            if !enqueue(line, to: client) {
                Log.warning("control: dropping subscriber (\(client.peer)): \(client.pending) bytes unread")
                drop(client, "subscriber too slow")
            }
        }
    }

    // MARK: - Accepting

    private func acceptClients() {
        // A bounded batch, so a connect storm cannot starve the rest of the loop.
        for _ in 0..<16 {
            let fd: Int32
            do {
                fd = try UnixSocket.accept(listener)
            } catch {
                switch error.errno.rawValue {
                case EAGAIN:
                    return
                case ECONNABORTED:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // The connection stays queued and the socket stays readable: pause
                    // accepting rather than spin.
                    Log.warning("control: \(error); not accepting for 100 ms")
                    pauseAccepting()
                    return
                default:
                    Log.error("control: \(error)")
                    pauseAccepting()
                    return
                }
            }
            admit(fd)
        }
    }

    private func pauseAccepting() {
        guard acceptResume == nil else { return }
        do { try loop.modify(listener, []) } catch { Log.error("control: \(error)") }
        acceptResume = loop.schedule(at: EventLoop.now() + .milliseconds(100)) { [unowned self] _ in
            self.acceptResume = nil
            guard self.listener >= 0 else { return }
            do { try self.loop.modify(self.listener, .readable) } catch { Log.error("control: \(error)") }
        }
    }

    private func admit(_ fd: Int32) {
        let peer: Peer
        do { peer = Peer(try UnixSocket.peerCredentials(fd)) } catch {
            Log.warning("control: \(error); closing the connection")
            UnixSocket.close(fd)
            return
        }
        if let refusal = admission(peer) {
            Log.warning("control: refusing client (\(peer)): \(refusal)")
            let line = codec.reply(id: nil, ControlError(.tooManyClients, refusal))
            _ = try? UnixSocket.send(fd, line, blocking: false)
            UnixSocket.close(fd)
            return
        }
        let client = Client(fd: fd, peer: peer, serial: nextSerial, at: EventLoop.now())
        nextSerial += 1
        do {
            try loop.register(fd, .readable) { [unowned self] readiness in self.handle(fd, readiness) }
        } catch {
            Log.error("control: \(error); closing the connection")
            UnixSocket.close(fd)
            return
        }
        clients[fd] = client
        perUser[peer.uid, default: 0] += 1
        armIdleTimer(client)
        Log.debug("control: client fd \(fd) connected (\(peer))")
    }

    /// Why `peer` may not connect now, or nil. One user cannot hold more than its share,
    /// and the last slots are kept for root (and the server's own user).
    private func admission(_ peer: Peer) -> String? {
        let privileged = peer.uid == 0 || peer.uid == geteuid()
        if clients.count >= limits.maxClients {
            return "the server has \(limits.maxClients) clients already"
        }
        if privileged { return nil }
        if clients.count >= limits.maxClients - limits.reservedForRoot {
            return "the server's last \(limits.reservedForRoot) client slots are kept for root"
        }
        if perUser[peer.uid, default: 0] >= limits.maxClientsPerUser {
            return "uid \(peer.uid) has \(limits.maxClientsPerUser) connections already"
        }
        return nil
    }

    // MARK: - Idle clients

    /// A client is idle when it is not subscribed and is owed no reply, neither one still
    /// to come nor output queued.
    private func isIdle(_ client: Client) -> Bool {
        !client.subscribed && !client.closing && client.pending == 0 && client.owed == 0
    }

    /// Arms the client's timer for the end of its idle time; when it fires, a client
    /// that was active since is given a new deadline instead.
    private func armIdleTimer(_ client: Client) {
        client.idleTimer = loop.schedule(at: client.lastActive + limits.idleTimeout) { [unowned self, unowned client] now in
            client.idleTimer = nil
            guard !client.dropped, !client.subscribed else { return }
            if now < client.lastActive + limits.idleTimeout || !self.isIdle(client) {
                if !self.isIdle(client) { client.lastActive = now }
                return self.armIdleTimer(client)
            }
            Log.debug("control: client fd \(client.fd) (\(client.peer)) idle for \(limits.idleTimeout.milliseconds) ms")
            self.reply(self.codec.reply(id: nil, ControlError(.idleTimeout,
                "no request for \(limits.idleTimeout.milliseconds) ms; subscribe to stay connected")), to: client)
            guard !client.dropped else { return }
            client.closing = true
            client.input.removeAll()
            if client.pending == 0 { return self.drop(client, "idle") }
            self.updateInterest(client)
        }
    }

    private func drop(_ client: Client, _ reason: String) {
        guard !client.dropped else { return }
        client.dropped = true
        if let t = client.idleTimer { loop.cancel(t) }
        client.idleTimer = nil
        if let n = perUser[client.peer.uid] { perUser[client.peer.uid] = n > 1 ? n - 1 : nil }
        clients.removeValue(forKey: client.fd)
        loop.unregister(client.fd)
        UnixSocket.close(client.fd)
        Log.debug("control: client fd \(client.fd) (\(client.peer)) gone: \(reason)")
        clientGone?(client.serial)
    }

    // MARK: - Client I/O

    private func handle(_ fd: Int32, _ readiness: IOReadiness) {
        guard let client = clients[fd] else { return }
        if readiness.writable || readiness.hangup {
            flush(client)
            guard !client.dropped else { return }
            if client.pending == 0 {
                if client.closing { return drop(client, "closed") }
                service(client)  // lines held back while the output was full
                guard !client.dropped else { return }
            }
        }
        if readiness.readable && !client.closing {
            read(client)
        } else if readiness.hangup && client.pending == 0 {
            drop(client, "hung up")
        }
    }

    /// One read per wake-up; epoll is level-triggered and will report the rest.
    private func read(_ client: Client) {
        let n: Int?
        do {
            n = try UnixSocket.receive(client.fd, into: &scratch, blocking: false)
        } catch {
            return drop(client, "\(error)")
        }
        guard let n else { return }
        if n == 0 {
            // The peer shut down its side; send what it is owed, then close.
            client.closing = true
            client.input.removeAll()
            if client.pending == 0 { return drop(client, "closed") }
            return updateInterest(client)
        }
        client.input.append(contentsOf: scratch[0..<n])
        service(client)
    }

    /// Answers the complete lines in the input buffer while the output has room.
    private func service(_ client: Client) {
        var start = 0
        defer {
            if client.closing || client.dropped { client.input.removeAll() } else { client.input.removeFirst(start) }
        }
        while !client.closing, client.pending < limits.maxOutputBytes / 2,
              let newline = client.input[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = client.input[start..<newline]
            start = newline + 1
            // Only whole lines count as activity: a trickle of bytes does not keep a
            // client that never completes a request.
            client.lastActive = EventLoop.now()
            guard line.count <= limits.maxLineBytes else { return tooLong(client) }
            answer(line, from: client)
            guard !client.dropped else { return }
        }
        if !client.closing, client.input.count - start > limits.maxLineBytes,
           !client.input[start...].contains(UInt8(ascii: "\n")) {
            return tooLong(client)
        }
        updateInterest(client)
    }

    private func tooLong(_ client: Client) {
        Log.warning("control: client (\(client.peer)) sent a line over \(limits.maxLineBytes) bytes; dropping it")
        reply(codec.reply(id: nil, ControlError(.lineTooLong, "request lines are limited to \(limits.maxLineBytes) bytes")),
              to: client)
        guard !client.dropped else { return }
        client.closing = true
        if client.pending == 0 { return drop(client, "line too long") }
        updateInterest(client)
    }

    private func answer(_ received: ArraySlice<UInt8>, from client: Client) {
        var sender = ControlRequests.Sender(peer: client.peer, serial: client.serial, subscribed: client.subscribed)
        // A reply may come later (lock): it goes to this client if it is still here, and
        // until then the client is owed one (the idle timeout spares it).
        let phase = ReplyPhase()
        requests.answer(received, from: &sender) { [weak self, weak client] line in
            if phase.later { client?.owed -= 1 }
            guard let self, let client, !client.dropped else { return }
            self.reply(line, to: client)
        }
        phase.later = true
        client.owed += sender.awaiting
        if sender.subscribed && !client.subscribed { Log.debug("control: client fd \(client.fd) (\(client.peer)) subscribed") }
        client.subscribed = sender.subscribed
    }

    private func reply(_ line: [UInt8], to client: Client) {
        if !enqueue(line, to: client) {
            Log.warning("control: client (\(client.peer)) is not reading its replies; dropping it")
            drop(client, "output full")
        }
    }

    /// Queues `line` and sends what the socket takes now. False if it does not fit.
    private func enqueue(_ line: [UInt8], to client: Client) -> Bool {
        guard client.pending + line.count <= limits.maxOutputBytes else { return false }
        if client.pending == 0 {
            client.output.removeAll(keepingCapacity: true)
            client.written = 0
        }
        client.output.append(contentsOf: line)
        flush(client)
        if !client.dropped { updateInterest(client) }
        return true
    }

    /// Sends queued output until the socket would block.
    private func flush(_ client: Client) {
        while client.pending > 0 {
            let n: Int
            do {
                n = try UnixSocket.send(client.fd, client.output, from: client.written, blocking: false)
            } catch {
                return drop(client, "\(error)")
            }
            if n == 0 { break }
            client.written += n
        }
        if client.pending == 0 {
            client.output.removeAll(keepingCapacity: true)
            client.written = 0
        } else if client.written >= 16384 {
            client.output.removeFirst(client.written)
            client.written = 0
        }
    }

    /// Writable while output is queued, otherwise readable (unless closing): a client
    /// is not read from while it is behind on its replies.
    private func updateInterest(_ client: Client) {
        let wanted: IOInterest = client.pending > 0 ? .writable : (client.closing ? [] : .readable)
        guard wanted != client.interest else { return }
        do {
            try loop.modify(client.fd, wanted)
            client.interest = wanted
        } catch {
            drop(client, "\(error)")
        }
    }
}

/// What the control socket answers, apart from any socket: each request line parsed,
/// checked against who may ask, and handed to its handler. The server holds one; the
/// control fuzz target (Fuzz/) drives one directly.
/// Whether a reply is sent while its request is being answered, or later.
private final class ReplyPhase {
    var later = false
}

public final class ControlRequests {
    /// The asking client, as far as the answers need it.
    public struct Sender: Hashable, Sendable {
        public var peer: ControlServer.Peer
        /// Unique for the server's life.
        public var serial: Int
        /// Asked for events.
        public var subscribed: Bool
        /// Replies owed later (a `lock` waiting for the display).
        public var awaiting = 0
        public init(peer: ControlServer.Peer, serial: Int, subscribed: Bool = false) {
            self.peer = peer; self.serial = serial; self.subscribed = subscribed
        }
    }

    /// The group whose members may make `group` requests (nil: root only). The
    /// server's own user is always allowed them, so an unprivileged daemon can be
    /// tested by its own user.
    public var group: UInt32?
    /// The group whose members may make `messageGroup` requests, with its name (nil:
    /// root only, and the server's own user).
    public var messageGroup: (id: UInt32, name: String)?
    /// Carries out `lock` and calls back, now or later on the loop (a VT switch takes a
    /// few frames), with the state after it, or why not.
    public var lockHandler: ((@escaping (Result<Status.State, ControlError>) -> Void) -> Void)?
    /// Answers `metrics`.
    public var metricsHandler: (() -> Metrics)?
    /// Carries out `enroll` (which secret, its hash or nil to remove); nil on success.
    /// A code's length has been checked against the pad in `status` by then.
    public var enrollHandler: ((SecretKind, String?) -> ControlError?)?
    /// Starts an enrollment on the screen of the method for the client with the given
    /// serial number; nil when it began.
    public var enrollScreenHandler: ((UnlockMethod, Int) -> ControlError?)?
    /// Carries out `reset_lockout` for root (the peer, for the log); the state after it,
    /// or why not.
    public var resetLockoutHandler: ((ControlServer.Peer) -> Result<Status.State, ControlError>)?
    /// Sets the lock screen's message (nil removes it) for a peer (for the log), the text
    /// checked by `ScreenMessage` already, and calls back, now or later on the loop (once
    /// it is stored), with nil on success or the error.
    public var messageHandler: ((String?, ControlServer.Peer, @escaping (ControlError?) -> Void) -> Void)?
    /// Unlocks with a one-time service code (the code, the peer for the log) and calls
    /// back, later on the loop (once the attempt is counted and checked), with the state
    /// or why not.
    public var serviceUnlockHandler: ((String, ControlServer.Peer, @escaping (Result<Status.State, ControlError>) -> Void) -> Void)?
    private let status: () -> Status
    private let codec = LineCodec()

    /// `status` is asked for each `status` request.
    public init(status: @escaping () -> Status) { self.status = status }

    func allowed(_ access: RequestKind.Access, _ peer: ControlServer.Peer) -> Bool {
        switch access {
        case .anyone: return true
        case .root: return peer.uid == 0
        case .group: return peer.uid == 0 || peer.uid == geteuid() || group.map { peer.isMember(of: $0) } ?? false
        case .messageGroup:
            return peer.uid == 0 || peer.uid == geteuid() || messageGroup.map { peer.isMember(of: $0.id) } ?? false
        }
    }

    /// Answers one request line (a blank line gets no reply) through `send`, at once
    /// or, for `lock`, when the handler calls back. `subscribe` sets `client.subscribed`.
    public func answer(_ received: ArraySlice<UInt8>, from client: inout Sender,
                       send: @escaping ([UInt8]) -> Void) {
        func reply(_ line: [UInt8], to _: Sender) { send(line) }
        var line = received
        while let last = line.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") {
            line.removeLast()
        }
        if line.isEmpty { return }  // blank lines are ignored

        let raw: Request
        do { raw = try codec.decode(Request.self, from: line) } catch let refused as Request.Refused {
            if let kind = refused.kind, !allowed(kind.access, client.peer) {
                return reply(forbidden(kind, id: refused.id, to: client.peer), to: client)
            }
            return reply(codec.reply(id: refused.id, refused.error), to: client)
        } catch {
            return reply(codec.reply(id: nil, ControlError(.badRequest, Self.describe(error))), to: client)
        }
        let id = raw.id, kind = raw.request
        guard allowed(kind.access, client.peer) else {
            return reply(forbidden(kind, id: id, to: client.peer), to: client)
        }
        let answer: [UInt8]
        do {
            switch kind {
            case .lock:
                guard let lockHandler else {
                    answer = codec.reply(id: id, ControlError(.unsupported, "this server does not lock"))
                    break
                }
                // The reply goes out when the lock is done (or refused), to this client if
                // it is still here.
                var answered = false
                lockHandler { [codec] result in
                    answered = true
                    var line: [UInt8]
                    switch result {
                    case .success(let state):
                        do { line = try codec.reply(id: id, LockReply(state: state)) } catch {
                            Log.bug("control: cannot encode the reply to lock: \(error)")
                            line = codec.reply(id: id, ControlError(.internal, "cannot encode the reply"))
                        }
                    case .failure(let e): line = codec.reply(id: id, e)
                    }
                    send(line)
                }
                if !answered { client.awaiting += 1 }
                return
            case .metrics:
                guard let metricsHandler else {
                    answer = codec.reply(id: id, ControlError(.unsupported, "this server keeps no metrics"))
                    break
                }
                answer = try codec.reply(id: id, metricsHandler())
            case .enroll:
                answer = try enroll(raw, id: id, from: client)
            case .resetLockout:
                guard let resetLockoutHandler else {
                    answer = codec.reply(id: id, ControlError(.unsupported, "this server keeps no lockout"))
                    break
                }
                switch resetLockoutHandler(client.peer) {
                case .success(let state): answer = try codec.reply(id: id, LockReply(state: state))
                case .failure(let e): answer = codec.reply(id: id, e)
                }
            case .message:
                guard let messageHandler else {
                    answer = codec.reply(id: id, ControlError(.unsupported, "this server shows no message"))
                    break
                }
                var text: String?
                if let t = raw.text {
                    do throws(ScreenMessage.Refusal) { text = try ScreenMessage.check(t) } catch {
                        answer = codec.reply(id: id, ControlError(.badValue, error.description))
                        break
                    }
                }
                // The reply goes out once the message is stored (or a later one is), to
                // this client if it is still here.
                var answered = false
                messageHandler(text, client.peer) { [codec] error in
                    answered = true
                    if let error { return send(codec.reply(id: id, error)) }
                    do { send(try codec.reply(id: id, Empty())) } catch {
                        Log.bug("control: cannot encode the reply to message: \(error)")
                        send(codec.reply(id: id, ControlError(.internal, "cannot encode the reply")))
                    }
                }
                if !answered { client.awaiting += 1 }
                return
            case .serviceUnlock:
                guard let serviceUnlockHandler else {
                    answer = codec.reply(id: id, ControlError(.unsupported, "this server takes no service codes"))
                    break
                }
                guard let code = raw.code else {
                    answer = codec.reply(id: id, ControlError(.badRequest, "missing \"code\""))
                    break
                }
                var answered = false
                serviceUnlockHandler(code, client.peer) { [codec] result in
                    answered = true
                    var line: [UInt8]
                    switch result {
                    case .success(let state):
                        do { line = try codec.reply(id: id, LockReply(state: state)) } catch {
                            Log.bug("control: cannot encode the reply to service_unlock: \(error)")
                            line = codec.reply(id: id, ControlError(.internal, "cannot encode the reply"))
                        }
                    case .failure(let e): line = codec.reply(id: id, e)
                    }
                    send(line)
                }
                if !answered { client.awaiting += 1 }
                return
            case .hello:
                answer = try codec.reply(id: id, Hello())
            case .status:
                answer = try codec.reply(id: id, status())
            case .subscribe:
                client.subscribed = true
                answer = try codec.reply(id: id, Empty())
            }
        } catch {
            Log.bug("control: cannot encode the reply to \(kind.rawValue): \(error)")
            answer = codec.reply(id: id, ControlError(.internal, "cannot encode the reply"))
        }
        reply(answer, to: client)
    }

    /// The reply to a request `peer` may not make.
    private func forbidden(_ kind: RequestKind, id: Int?, to peer: ControlServer.Peer) -> [UInt8] {
        Log.warning("control: refused \(kind.rawValue) to \(peer)")
        let who: String
        switch kind.access {
        case .anyone, .group: who = "root or the socket's group"
        case .root: who = "root"
        case .messageGroup:
            who = messageGroup.map { "root or the group '\($0.name)' ([socket] message_group)" }
                ?? "root (a group may be let in with [socket] message_group)"
        }
        return codec.reply(id: id, ControlError(.forbidden, "\(kind.rawValue) is for \(who) only"))
    }

    /// The reply to an enroll request.
    private func enroll(_ raw: Request, id: Int, from client: Sender) throws -> [UInt8] {
        let enrollment: EnrollRequest
        do { enrollment = try EnrollRequest(method: raw.method, hash: raw.hash, length: raw.length, screen: raw.screen) } catch {
            return codec.reply(id: id, error)
        }
        let kind: SecretKind, hash: String?
        switch enrollment {
        case .onScreen(let method):
            guard let enrollScreenHandler else {
                return codec.reply(id: id, ControlError(.unsupported, "this server does not enroll on the screen"))
            }
            if let e = enrollScreenHandler(method, client.serial) { return codec.reply(id: id, e) }
            Log.info("control: \(method.rawValue) enrollment on the screen begun by \(client.peer)")
            return try codec.reply(id: id, Empty())
        case .store(let k, let h, let length):
            // A code the pad on the screen cannot take could never be typed.
            if let length, let pad = status().code?.length {
                do { try CodeRules.fits(length, pad: pad) } catch {
                    Log.warning("control: refused a \(length)-digit \(k.rawValue) from \(client.peer): the pad has \(pad) boxes")
                    return codec.reply(id: id, ControlError(.badValue, error.message))
                }
            }
            kind = k; hash = h
        case .remove(let k):
            kind = k; hash = nil
        }
        guard let enrollHandler else {
            return codec.reply(id: id, ControlError(.unsupported, "this server does not enroll"))
        }
        if let e = enrollHandler(kind, hash) { return codec.reply(id: id, e) }
        Log.info("control: \(kind.rawValue) secret \(hash == nil ? "removed" : "enrolled") by \(client.peer)")
        return try codec.reply(id: id, Empty())
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted:
            return "malformed JSON"
        case DecodingError.typeMismatch(_, let context):
            let field = context.codingPath.map(\.stringValue).joined(separator: ".")
            return field.isEmpty ? "a request is a JSON object" : "\"\(field)\" has the wrong type"
        default:
            return "malformed request"
        }
    }

}
