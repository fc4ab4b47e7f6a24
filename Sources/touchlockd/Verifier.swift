import CLinux
import Glibc
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// Checks attempts against the secrets and hashes new ones, in a process of its own (as
/// swaylock checks passwords in a child): yescrypt's 20-35 ms and its working memory stay
/// out of the daemon, whose loop keeps serving touches and clients meanwhile. The child
/// is this executable started with `--verifier-child`, talking over a SOCK_SEQPACKET pair
/// (fd 3 on its side). If it cannot be started the checks run in the daemon, each on a
/// later loop turn. Results always come back on a later turn, so the screen shows the
/// attempt being checked first.
final class Verifier {
    private let loop: EventLoop
    private let secrets: StateStore
    private var child: (process: ChildProcess, fd: Int32)?
    /// Requests sent and not answered, kept to send again if the child dies.
    private var pending: [UInt32: (request: VerifierRequest, done: (VerifierReply) -> Void)] = [:]
    private var nextID: UInt32 = 1
    /// Used only when there is no child.
    private lazy var digester: GuessDigester? = {
        do { return try GuessDigester() } catch {
            Log.error("cannot make guess digests (\(error)); every wrong guess counts")
            return nil
        }
    }()
    private var restarts = 0

    init(loop: EventLoop, secrets: StateStore, separateProcess: Bool = true) {
        self.loop = loop
        self.secrets = secrets
        if separateProcess { spawn() }
    }

    /// Starts the child when none runs yet (the daemon starts it once its first frame is
    /// out; a check asked for before that runs in the daemon).
    func start() {
        if child == nil { spawn() }
    }

    /// Checks `attempt` and calls `done` with the verdict: the method's secret, and for
    /// codes the duress code too.
    func check(_ attempt: LockScreen.Attempt, done: @escaping (Session.Verdict) -> Void) {
        let candidates = secrets.candidates(for: attempt.method)
        let request = VerifierRequest.verify(id: takeID(), hashes: candidates.map(\.hash), secret: attempt.secretBytes)
        Log.debug("\(attempt): checking")
        send(request) { reply in
            guard case .verified(_, let index, let digest) = reply else {
                Log.bug("verifier: a hash reply to a check")
                done(.wrong(digest: nil))
                return
            }
            let matched: SecretKind?
            if let index {
                guard candidates.indices.contains(index) else {
                    Log.bug("verifier: a match with hash \(index) of \(candidates.count)")
                    done(.wrong(digest: nil))
                    return
                }
                matched = candidates[index].kind
            } else {
                matched = nil
            }
            switch matched {
            case .pattern, .code: done(.match(duress: false))
            case .duress: done(.match(duress: true))
            case nil: done(.wrong(digest: digest.isEmpty ? nil : digest))
            }
        }
    }

    /// Hashes a new secret (`bytes` are wiped, shared copies too) and calls `done` with
    /// the hash, or why it could not be made.
    func hash(_ bytes: [UInt8], done: @escaping (Result<String, VerifierReply.HashFailure>) -> Void) {
        // A copy with storage of its own: the action's copies are wiped at once.
        let copy = bytes.withUnsafeBufferPointer { [UInt8]($0) }
        SecretHash.wipeShared(bytes)
        send(.hash(id: takeID(), secret: copy)) { reply in
            guard case .hashed(_, let result) = reply else {
                Log.bug("verifier: a check reply to a hash")
                done(.failure(.init("the verifier answered something else")))
                return
            }
            done(result)
        }
    }

    private func takeID() -> UInt32 {
        defer { nextID &+= 1 }
        return nextID
    }

    private func send(_ request: VerifierRequest, _ done: @escaping (VerifierReply) -> Void) {
        guard let child else {
            loop.deferred { [self] in done(serve(request, digester: digester)) }
            return
        }
        pending[request.id] = (request, done)
        write(request, to: child.fd)
    }

    private func write(_ request: VerifierRequest, to fd: Int32) {
        var packet = request.encoded()
        defer { SecretHash.wipe(&packet) }
        do {
            _ = try packet.withUnsafeBytes { b throws(SystemError) in try IO.send(fd, from: b, "the verifier") }
        } catch {
            // The child is gone or stuck: the readable handler sees it go and starts another,
            // which gets every pending request again.
            Log.error("verifier: \(error)")
        }
    }

    // MARK: the child process

    private func spawn() {
        var pair: [Int32] = [-1, -1]
        do {
            try SystemCall.check("socketpair") {
                SystemCalls.current.socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair)
            }
        } catch {
            Log.warning("verifier: \(error); checking secrets in the daemon")
            return
        }
        let path = "/proc/self/exe"
        let process: ChildProcess
        do {
            process = try ChildProcess.spawn(path, arguments: ["touchlock-verifier", "--verifier-child"],
                                             descriptors: [.duplicate(pair[1], as: 3), .open("/dev/null", O_RDONLY, as: 0)])
        } catch {
            Log.warning("verifier: cannot start \(path) --verifier-child: \(error.errno); checking secrets in the daemon")
            Self.close(pair[1])
            Self.close(pair[0])
            return
        }
        Self.close(pair[1])
        let fd = pair[0]
        do {
            try loop.register(fd, .readable) { [weak self] readiness in self?.readable(readiness) }
        } catch {
            Log.warning("verifier: \(error); checking secrets in the daemon")
            Self.close(fd)
            end(process, killing: true)
            return
        }
        child = (process, fd)
        Log.info("verifier: process \(process.pid) checks the secrets")
        for (_, p) in pending.sorted(by: { $0.key < $1.key }) { write(p.request, to: fd) }
    }

    /// Closes one end of the pair; an error is logged (the descriptor is gone either way).
    private static func close(_ fd: Int32) {
        do { try FileDescriptor(adopting: fd).close() } catch { Log.warning("verifier: \(error)") }
    }

    /// Waits for the child to end (with `killing`, first ends it) and says how it ended.
    @discardableResult
    private func end(_ process: ChildProcess, killing: Bool = false) -> ChildProcess.Termination? {
        do {
            if killing { try process.signal(SIGKILL) }
            return try process.wait()
        } catch {
            Log.error("verifier: \(error)")
            return nil
        }
    }

    private func readable(_ readiness: IOReadiness) {
        guard let child else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let r: IOResult
            do {
                r = try buffer.withUnsafeMutableBytes { b throws(SystemError) in
                    try IO.receive(child.fd, into: b, flags: Int32(MSG_DONTWAIT), "the verifier")
                }
            } catch {
                Log.error("verifier: \(error)")
                break
            }
            if case .wouldBlock = r { return }
            guard case .bytes(let n) = r else { break }  // end of stream: the child is gone
            do {
                guard let reply = VerifierReply.decode(Array(buffer[0..<n])), let p = pending.removeValue(forKey: reply.id) else {
                    Log.bug("verifier: an answer that matches no request (\(n) bytes)")
                    continue
                }
                p.request.wipe()
                p.done(reply)
            }
        }
        loop.unregister(child.fd)
        Self.close(child.fd)
        let ended = end(child.process)
        self.child = nil
        restarts += 1
        Log.error("verifier: process \(child.process.pid) ended (\(ended.map { "\($0)" } ?? "not reaped")); "
                  + "\(pending.count) request(s) to send again")
        if restarts <= 5 {
            spawn()
        } else {
            Log.error("verifier: ended \(restarts) times; checking secrets in the daemon from now on")
        }
        if self.child == nil {
            let left = pending
            pending.removeAll()
            for (_, p) in left.sorted(by: { $0.key < $1.key }) { send(p.request, p.done) }
        }
    }

    /// Ends the child (its end of the pair closes; it exits).
    func shutdown() {
        guard let child else { return }
        loop.unregister(child.fd)
        Self.close(child.fd)
        end(child.process)
        self.child = nil
    }
}

/// The verifier process: answers requests on fd 3 until the daemon closes its end. It
/// dies with the daemon too (PR_SET_PDEATHSIG).
func runVerifierChild() -> Never {
    _ = clinux_set_parent_death_signal(SIGKILL)
    // Its own name in ps and pidof, apart from the daemon's.
    _ = clinux_set_process_name("touchlock-verif")
    if getppid() == 1 { exit(0) }  // the daemon is already gone
    var digester: GuessDigester?
    do { digester = try GuessDigester() } catch { digester = nil }
    Log.sink = { r in StandardStreams.error("touchlock-verifier: \(r.level.label): \(r.message)") }
    Log.threshold = .warning
    // Requests carry secrets: they are received into locked pages (never swapped).
    guard let buffer = try? SecretBuffer(capacity: 4096) else { exit(2) }
    while true {
        let r = try? buffer.withUnsafeMutableStorage { b throws(SystemError) in
            try IO.receive(3, into: UnsafeMutableRawBufferPointer(b), "the daemon")
        }
        guard case .bytes(let n)? = r, n > 0 else { exit(0) }
        let request = buffer.withUnsafeMutableStorage { VerifierRequest.decode(Array($0.prefix(n))) }
        buffer.wipe()
        guard let request else { exit(2) }  // only the daemon writes here
        var reply = serve(request, digester: digester).encoded()
        _ = try? reply.withUnsafeBytes { b throws(SystemError) in try IO.send(3, from: b, "the daemon") }
        SecretHash.wipe(&reply)
    }
}
