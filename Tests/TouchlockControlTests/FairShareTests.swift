import FoundationEssentials
import Glibc
import Testing
@testable import TouchlockControl
import TouchlockCore
import TouchlockSystem

private func header(_ line: String) throws -> ReplyHeader {
    try JSONDecoder().decode(ReplyHeader.self, from: Data(line.utf8))
}

/// A process of another user (setpriv) that opens `count` connections to the harness's
/// socket, sends `request` on each, writes the first line each one got back (or
/// "closed"), then "done", and holds its connections until the test ends it. Its output
/// is read in the harness's loop.
private final class OtherUser {
    let pid: pid_t
    private let stdinWrite: Int32
    private let stdoutRead: Int32
    private var buffer: [UInt8] = []
    var lines: [String] = []
    var done: Bool { lines.last == "done" }

    static let script = """
        use IO::Socket::UNIX; $| = 1; $SIG{PIPE} = "IGNORE";
        my ($path, $n, $req) = @ARGV; my @s;
        for (1 .. $n) {
            my $c = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path);
            if (!$c) { print "connect failed: $!\\n"; next; }
            $c->autoflush(1); print $c "$req\\n"; push @s, $c;
        }
        for my $c (@s) { my $l = <$c>; $l = "closed\\n" unless defined $l; print $l; }
        print "done\\n";
        <STDIN>;
        """

    init(_ h: Harness, uid: UInt32, gid: UInt32, count: Int, request: String) throws {
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0]
        guard pipe(&input) == 0, pipe(&output) == 0 else { throw SystemError("pipe", .current) }
        // Only the child's ends reach it, as 0, 1 and 2.
        for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, output[1], 2)
        let args = ["/usr/bin/setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--",
                    "/usr/bin/perl", "-e", Self.script, h.path, String(count), request]
        let cargs = args.map { strdup($0) } + [nil]
        let cenv = [strdup("PATH=/usr/bin:/bin"), nil]
        defer { cargs.forEach { free($0) }; cenv.forEach { free($0) } }
        var pid: pid_t = 0
        let r = posix_spawn(&pid, args[0], &actions, nil, cargs, cenv)
        close(input[0]); close(output[1])
        guard r == 0 else { throw SystemError("posix_spawn", Errno(rawValue: r), args[0]) }
        self.pid = pid
        stdinWrite = input[1]
        stdoutRead = output[0]
        try h.loop.register(stdoutRead, .readable) { [unowned self, unowned h] _ in
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = read(self.stdoutRead, &chunk, chunk.count)
            if n < 0 && errno == EINTR { return }
            if n <= 0 {
                // The process ended before its "done": what it died of.
                h.loop.unregister(self.stdoutRead)
                self.lines += [n < 0 ? "read: errno \(errno)" : "ended early", "done"]
                h.check()
                return
            }
            self.buffer += chunk[0..<n]
            while let nl = self.buffer.firstIndex(of: UInt8(ascii: "\n")) {
                self.lines.append(String(decoding: self.buffer[..<nl], as: UTF8.self))
                self.buffer.removeFirst(nl + 1)
            }
            h.check()
        }
    }

    /// Ends the process (its connections close with it).
    private var finished = false

    func finish(_ h: Harness) {
        guard !finished else { return }
        finished = true
        h.loop.unregister(stdoutRead)
        close(stdinWrite)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        close(stdoutRead)
    }

    func count(ok: Bool) throws -> Int {
        try lines.filter { $0.hasPrefix("{") }.filter { try header($0).ok == ok }.count
    }
}

/// Connections of other users need root (setpriv) and perl (Essential in Debian).
private let othersCanBeRun = getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 && access("/usr/bin/perl", X_OK) == 0

@Suite(.serialized) struct FairShareTests {
    /// One user opening every slot gets its share only; other users, then root, still
    /// get in, and the last slots are root's.
    @Test(.enabled(if: othersCanBeRun, "needs root, setpriv and perl"))
    func oneUserCannotKeepOthersOrRootOut() throws {
        let h = try Harness(limits: ControlServer.Limits(maxClients: 24, maxClientsPerUser: 8, reservedForRoot: 2))
        // Users of the socket's group (gid 65534) may subscribe and so stay connected.
        chmod(h.dir, 0o755)
        try h.server.setGroup(65534)
        let subscribe = "{\"id\":1,\"request\":\"subscribe\"}"

        let hog = try OtherUser(h, uid: 65534, gid: 65534, count: 24, request: subscribe)
        defer { hog.finish(h) }
        #expect(try h.run { hog.done })
        #expect(try hog.count(ok: true) == 8, "\(hog.lines)")
        #expect(try hog.count(ok: false) == 16)
        #expect(hog.lines.contains { $0.contains("too_many_clients") && $0.contains("uid 65534 has 8 connections") })
        #expect(h.server.clientCount == 8)

        let second = try OtherUser(h, uid: 65533, gid: 65534, count: 8, request: subscribe)
        defer { second.finish(h) }
        #expect(try h.run { second.done })
        #expect(try second.count(ok: true) == 8, "\(second.lines)")

        // A third user fills the slots up to root's reserve: 24 - 2 - 16 = 6 of 8.
        let third = try OtherUser(h, uid: 65532, gid: 65534, count: 8, request: subscribe)
        defer { third.finish(h) }
        #expect(try h.run { third.done })
        #expect(try third.count(ok: true) == 6, "\(third.lines)")
        #expect(third.lines.contains { $0.contains("kept for root") })
        #expect(h.server.clientCount == 22)

        // Root takes the reserved slots; only beyond the server's maximum is it refused.
        let roots = try (0..<3).map { _ in try h.connectWatched() }
        for r in roots { try r.client.send(.status) }
        #expect(try h.run { roots.allSatisfy { !$0.lines.isEmpty } })
        #expect(try roots.map { try header($0.lines[0]).ok } == [true, true, false])
        #expect(try header(roots[2].lines[0]).error?.code == .tooManyClients)

        // When a user's connections go, its share is free again.
        h.server.clientGone = { [weak h] _ in h?.check() }
        hog.finish(h)
        #expect(try h.run { h.server.clientCount == 16 })
        let again = try OtherUser(h, uid: 65534, gid: 65534, count: 1, request: subscribe)
        defer { again.finish(h) }
        #expect(try h.run { again.done })
        #expect(try again.count(ok: true) == 1, "\(again.lines)")
    }

    /// With the default limits: a group member opening all 256 slots holds 32, and a
    /// kiosk app of another user connecting later is served.
    @Test(.enabled(if: othersCanBeRun, "needs root, setpriv and perl"))
    func aUserOpening256ConnectionsHolds32() throws {
        let h = try Harness()
        chmod(h.dir, 0o755)
        try h.server.setGroup(65534)
        let subscribe = "{\"id\":1,\"request\":\"subscribe\"}"
        let hog = try OtherUser(h, uid: 65534, gid: 65534, count: 256, request: subscribe)
        defer { hog.finish(h) }
        #expect(try h.run(timeout: .milliseconds(20_000)) { hog.done })
        #expect(try hog.count(ok: true) == 32)
        #expect(try hog.count(ok: false) == 224)
        let app = try OtherUser(h, uid: 65533, gid: 65534, count: 1, request: subscribe)
        defer { app.finish(h) }
        #expect(try h.run { app.done })
        #expect(try app.count(ok: true) == 1, "\(app.lines)")
        #expect(h.server.clientCount == 33)
    }

    /// A client that neither subscribes nor waits for a reply is told and closed after
    /// the idle timeout; a subscriber stays.
    @Test func idleClientsAreClosedAfterTheTimeoutAndSubscribersStay() throws {
        let timeout = Interval.milliseconds(200)
        let h = try Harness(limits: ControlServer.Limits(idleTimeout: timeout))
        let start = EventLoop.now()
        let idle = try h.connectWatched()
        let asker = try h.connectWatched()
        let subscriber = try h.connectWatched()
        try subscriber.client.send(.subscribe)
        // Sends a byte every 50 ms and never a whole line.
        let trickler = try h.connectWatched()
        func trickle(_ now: Instant) {
            guard !trickler.closed else { return }
            _ = try? trickler.client.send(bytes: [UInt8(ascii: " ")])
            h.loop.schedule(at: now + .milliseconds(50), trickle)
        }
        trickle(start)
        // The asker asks again just before each timeout, three times: it stays meanwhile.
        var asked = 0
        func ask(_ now: Instant) {
            _ = try? asker.client.send(.hello)
            asked += 1
            if asked < 3 { h.loop.schedule(at: now + .milliseconds(150), ask) }
        }
        ask(start)

        #expect(try h.run { idle.closed })
        let idleFor = EventLoop.now() - start
        #expect(idleFor >= timeout && idleFor < .milliseconds(1200), "\(idleFor)")
        #expect(try idle.lines.map { try header($0).error?.code } == [.idleTimeout])
        #expect(try h.run { trickler.closed })
        #expect(!asker.closed)

        #expect(try h.run { asker.closed })
        let askerFor = EventLoop.now() - start
        #expect(askerFor >= .milliseconds(300 + 200), "\(askerFor)")  // last request at 300 ms
        #expect(try asker.lines.map { try header($0).error?.code } == [nil, nil, nil, .idleTimeout])

        // The subscriber is still there well after.
        #expect(try h.run(timeout: .milliseconds(500)) { subscriber.closed } == false)
        #expect(h.server.clientCount == 1)
        #expect(subscriber.lines.count == 1)
    }
}
