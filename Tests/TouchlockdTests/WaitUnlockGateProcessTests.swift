import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSystem

private let screen = Size(width: 640, height: 400)

/// `touchlockctl wait-unlock` run as the unit a kiosk app is ordered behind runs it: no
/// timeout, its output in files, its end watched.
private final class Gate {
    let out: String, err: String
    private(set) var pid: pid_t = 0
    private(set) var status: Int32 = 0

    init(socket: String, dir: String) throws {
        out = dir + "/gate.out"
        err = dir + "/gate.err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let args = [DaemonProcess.ctl, "--socket", socket, "wait-unlock"]
        let cargs = args.map { strdup($0) } + [nil]
        let cenv = [strdup("PATH=/usr/bin:/bin"), nil]
        defer { cargs.forEach { free($0) }; cenv.forEach { free($0) } }
        let r = posix_spawn(&pid, args[0], &actions, nil, cargs, cenv)
        guard r == 0 else { throw SystemError("posix_spawn", Errno(rawValue: r), args[0]) }
    }

    deinit {
        if pid > 0 {
            kill(pid, SIGKILL)
            waitpid(pid, nil, 0)
        }
    }

    /// Whether it is still waiting (it has not exited).
    var waiting: Bool {
        guard pid > 0 else { return false }
        var s: Int32 = 0
        if waitpid(pid, &s, WNOHANG) == pid {
            pid = 0
            status = s
            return false
        }
        return true
    }

    /// Waits up to `ms` for it to exit; whether it did.
    func ended(within ms: Int64) -> Bool {
        let deadline = EventLoop.now() + .milliseconds(ms)
        while waiting, EventLoop.now() < deadline { usleep(50_000) }
        return !waiting
    }

    /// Exited with status 0 (not killed by a signal).
    var opened: Bool { pid == 0 && status & 0x7f == 0 && (status >> 8) & 0xff == 0 }

    var output: String { Self.text(out) }
    var errors: String { Self.text(err) }

    private static func text(_ path: String) -> String {
        (try? DurableFile.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
}

/// The gate a kiosk app starts behind opens only on the unlock: without a daemon, however
/// long, and with a daemon that turns it away, it stays shut and keeps trying.
@Suite struct WaitUnlockGateProcessTests {
    /// touchlockd that cannot start (a refused config, a card that comes late, a crash
    /// loop stopped by systemd's start limit) is no reason to start the app: the gate waits
    /// past the 120 s it used to give up after, and opens when a daemon comes and unlocks.
    @Test func withoutADaemonTheGateStaysShutPastTwoMinutesThenOpensOnTheUnlock() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        try d.enrollPattern([0, 4, 8, 5])
        let gate = try Gate(socket: d.socketPath, dir: d.dir)
        let t0 = EventLoop.now()
        while EventLoop.now() - t0 < .milliseconds(126_000) {
            #expect(gate.waiting, "exited after \((EventLoop.now() - t0).milliseconds) ms without a daemon: \(gate.errors)")
            if !gate.waiting { return }
            usleep(1_000_000)
        }
        #expect(gate.output.isEmpty)
        #expect(gate.errors.contains("No such file") && gate.errors.contains("still locked, waiting for touchlockd"), "\(gate.errors)")

        let replay = d.dir + "/unlock.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [[0, 4, 8, 5]], on: screen).utf8))
        try d.start(replay: replay)
        #expect(gate.ended(within: 20_000), "still waiting after the unlock: \(gate.errors)\n\(d.log)")
        #expect(gate.opened, "status \(gate.status): \(gate.errors)")
        #expect(gate.output.contains("\"event\":\"unlocked\""), "\(gate.output)")
        #expect(try d.status().state == .unlocked)
    }

    /// A daemon whose client slots are all taken answers `too_many_clients` and closes:
    /// the gate neither opens nor gives up, and gets in once a slot is free.
    @Test func aDaemonTurningTheGateAwayKeepsItShutUntilItLetsItInAndUnlocks() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        try d.enrollPattern([0, 4, 8, 5])
        // A wrong pattern at the start, the right one 15 s later (stretched under
        // emulation): the slots are taken before it.
        let replay = d.dir + "/unlock.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [[0, 1, 2, 5], [0, 4, 8, 5]], on: screen,
                                                              gap: 15_000_000 * TestTime.scale).utf8))
        try d.start(replay: replay)
        // Locked (the wrong pattern may be being checked already).
        #expect(try d.status().state != .unlocked)
        // Every slot taken (256, root's kept ones too), each connection answered. Each
        // subscribes: a subscriber is never closed as idle (after 30 s), however long
        // taking every slot takes (over 30 s at emulated speed).
        var hogs: [ControlClient] = []
        while hogs.count < 300 {
            let c = try d.client()
            // The daemon refuses a client by answering too_many_clients and closing; on a
            // loaded machine it can close before the client has written its request, which
            // then finds the connection closed (EPIPE): refused all the same.
            let reply = Result { try c.request(.subscribe, timeout: waited(5000)) }
            if case .failure(let e) = reply, case .disconnected? = e as? ControlClientError { break }
            let line = try reply.get()
            let header = try c.decode(ReplyHeader.self, from: line)
            if header.error?.code == .tooManyClients { break }
            #expect(header.ok, "\(line)")
            hogs.append(c)
        }
        #expect(hogs.count == 256)

        let gate = try Gate(socket: d.socketPath, dir: d.dir)
        usleep(4_000_000)
        #expect(gate.waiting, "exited while the daemon was full (status \(gate.status)): \(gate.errors)")
        #expect(gate.errors.contains("too_many_clients") || gate.errors.contains("closed the connection"), "\(gate.errors)")
        #expect(gate.output.isEmpty)
        let held = try d.status(via: hogs[0])
        #expect(held.state != .unlocked, "\(held)")

        hogs.removeAll()
        #expect(gate.ended(within: 30_000 * TestTime.scale), "still waiting after the unlock: \(gate.errors)\n\(d.log)")
        #expect(gate.opened, "status \(gate.status): \(gate.errors)")
        #expect(gate.output.contains("\"event\":\"unlocked\""), "\(gate.output)")
    }
}

private extension DaemonProcess {
    func status(via client: ControlClient) throws -> Status {
        try client.decode(Status.self, from: try client.request(.status, timeout: waited(5000)))
    }
}
