import CLinux
import Glibc
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// A real touchlockd process: the binary built beside the tests, run with a headless
/// display, a replayed recording as its touchscreen and its files in a fresh directory.
/// Readiness is learned the way systemd learns it: READY=1 on a notify socket.
final class DaemonProcess {
    let dir: String
    let socketPath: String
    var statePath: String
    let configPath: String
    let logPath: String
    private(set) var pid: pid_t = 0
    private let notifyFD: Int32
    private let notifyPath: String

    static var binary: String {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        let exe = n > 0 ? String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        return DurableFile.directory(of: exe) + "/touchlockd"
    }

    /// The socket group of the daemons the tests start: a name no host has.
    static let absentGroup = "touchlock-tests-no-group"

    init(config: String) throws {
        var template = Array("/tmp/touchlockd-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        dir = String(cString: made)
        socketPath = dir + "/run/touchlock.sock"
        statePath = dir + "/lib/state"
        configPath = dir + "/touchlock.conf"
        logPath = dir + "/log"
        try DurableFile.replace(configPath, with: Array(config.utf8), mode: 0o644)
        notifyPath = dir + "/notify"
        notifyFD = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { $0.copyBytes(from: Array(notifyPath.utf8)) }
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(notifyFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try SystemCall.check("bind", notifyPath) { r }
    }

    deinit {
        if pid > 0 { kill(SIGKILL); waitExit() }
        close(notifyFD)
        _ = system("rm -rf '\(dir)'")
    }

    /// Starts the daemon and waits for READY=1; throws if it exits first.
    /// `prefix` runs the daemon through another program (prlimit, setpriv).
    func start(replay: String?, extra: [String] = [], environment: [String] = [], prefix: [String] = []) throws {
        // The socket's group is one no host has, whatever groups it has (a host with the
        // package installed has `touchlock`, the default): the socket stays root's, as the
        // tests of who may connect expect. A test's own config, read after, may name one.
        let groupPath = dir + "/socket-group.conf"
        try DurableFile.replace(groupPath, with: Array("[socket]\ngroup = \(Self.absentGroup)\n".utf8), mode: 0o644)
        var args = prefix + [Self.binary, "--config-root", dir, "-C", groupPath, "-C", configPath, "--display", "headless", "--size", "640x400",
                    "--socket", socketPath, "--state", statePath]
        if let replay { args += ["--replay", replay] } else { args += ["--input", "evdev"] }
        args += extra
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var env = ["NOTIFY_SOCKET=\(notifyPath)", "PATH=/usr/bin:/bin"] + environment
        let cargs = args.map { strdup($0) } + [nil]
        let cenv = env.map { strdup($0) } + [nil]
        defer { cargs.forEach { free($0) }; cenv.forEach { free($0) }; env.removeAll() }
        exitStatus = nil
        let r = posix_spawn(&pid, args[0], &actions, nil, cargs, cenv)
        guard r == 0 else { throw SystemError("posix_spawn", Errno(rawValue: r), args[0]) }
        guard try waitNotify("READY=1", timeout: Int32(20_000 * TestTime.scale)) else {
            throw SystemError("touchlockd", Errno(rawValue: ETIMEDOUT), "no READY=1; log:\n\(log)")
        }
    }

    /// Waits for a notify datagram containing `text`.
    func waitNotify(_ text: String, timeout ms: Int32) throws -> Bool {
        let deadline = EventLoop.now() + .milliseconds(Int64(ms))
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = (deadline - EventLoop.now()).milliseconds
            if left <= 0 { return false }
            var p = pollfd(fd: notifyFD, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, Int32(min(left, 50))) <= 0 {
                if exited(within: 0) != nil { return false }
                continue
            }
            let n = recv(notifyFD, &buf, buf.count, 0)
            if n > 0, String(decoding: buf[0..<n], as: UTF8.self).contains(text) { return true }
        }
    }

    func kill(_ signal: Int32) { if pid > 0 { Glibc.kill(pid, signal) } }

    /// How the process ended (its wait status), if it ends within `ms`; nil while it runs.
    /// Once it has ended, `pid` is 0 and `exitStatus` keeps the status.
    func exited(within ms: Int64) -> Int32? {
        if pid == 0 { return exitStatus }
        let deadline = EventLoop.now() + .milliseconds(ms)
        while true {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                pid = 0
                exitStatus = status
                return status
            }
            if EventLoop.now() >= deadline { return nil }
            usleep(2000)
        }
    }
    private(set) var exitStatus: Int32?

    /// Waits for the process to end; its exit status.
    @discardableResult
    func waitExit() -> Int32 {
        if pid == 0, let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        pid = 0
        exitStatus = status
        return status
    }

    var log: String {
        (try? DurableFile.read(logPath)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    var stateText: String? {
        (try? DurableFile.read(statePath)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
    }

    func client() throws -> ControlClient { try ControlClient.connect(path: socketPath) }

    /// A state file with the pattern `nodes` (3x3) enrolled, before the daemon starts.
    func enrollPattern(_ nodes: [Int]) throws {
        var secret = Pattern(rows: 3, columns: 3, nodes: nodes).secretBytes
        var state = StoredState()
        state.patternHash = try SecretHash.make(&secret)
        try DurableFile.makeDirectory(DurableFile.directory(of: statePath))
        try DurableFile.replace(statePath, with: Array(state.text.utf8))
    }

    func status() throws -> Status {
        let c = try client()
        let line = try c.request(.status, timeout: waited(5000))
        return try c.decode(Status.self, from: line)
    }
}

/// The evemu header of the test panel: a multitouch screen of 0-32767 on both axes.
let testPanelHeader = [
    "# EVEMU 1.3", "N: touchlock test panel", "I: 0006 0000 0000 0000",
    "P: 02 00 00 00 00 00 00 00",
    "B: 00 0b 00 00 00 00 00 00 00", "B: 01 00 00 00 00 00 00 00 00", "B: 01 00 00 00 00 00 00 00 00",
    "B: 01 00 00 00 00 00 00 00 00", "B: 01 00 00 00 00 00 00 00 00", "B: 01 00 00 00 00 00 00 00 00",
    "B: 01 00 04 00 00 00 00 00 00", "B: 03 03 00 00 00 00 80 60 02",
    "A: 00 0 32767 0 0 0", "A: 01 0 32767 0 0 0", "A: 2f 0 9 0 0 0",
    "A: 35 0 32767 0 0 0", "A: 36 0 32767 0 0 0", "A: 39 0 65535 0 0 0",
]

/// An evemu recording of one finger drawing `patterns` on the default 3x3 grid of a
/// `screen`, one sample per node, `gap` apart, starting after `lead`. The default gap is
/// a quick user's (0.4 s), stretched by `TestTime.scale`: a stroke made while the one
/// before is still being checked is not taken, and under emulation a check takes longer. With a `rotation`,
/// `screen` is the logical size and the finger touches the panel where it shows the node.
func recording(of patterns: [[Int]], on screen: Size, rotation: Rotation = .degrees0,
               lead: Int64 = 1_000_000, gap: Int64 = 400_000 * TestTime.scale) -> String {
    let grid = PatternGrid.layout(on: screen)
    var lines = testPanelHeader
    var t = lead
    func ev(_ type: Int, _ code: Int, _ value: Int) {
        let h = String(type, radix: 16), c = String(code, radix: 16)
        let us = String(t % 1_000_000)
        lines.append("E: \(t / 1_000_000).\(String(repeating: "0", count: 6 - us.count))\(us) \(String(repeating: "0", count: 4 - h.count))\(h) \(String(repeating: "0", count: 4 - c.count))\(c) \(value)")
    }
    for (k, nodes) in patterns.enumerated() {
        for (i, n) in nodes.enumerated() {
            let c = grid.center(of: n)
            let w = Double(screen.width), h = Double(screen.height)
            // The node's place on the panel (the picture turned clockwise), scaled so that
            // dividing by the logical width and height normalizes it.
            let p: (x: Double, y: Double) = switch rotation {
            case .degrees0: (c.x, c.y)
            case .degrees90: ((h - c.y) * w / h, c.x * h / w)
            case .degrees180: (w - c.x, h - c.y)
            case .degrees270: (c.y * w / h, (w - c.x) * h / w)
            }
            let x = Int(p.x * 32768 / w), y = Int(p.y * 32768 / h)
            if i == 0 { ev(3, 0x2f, 0); ev(3, 0x39, k + 1); ev(1, 0x14a, 1) }
            ev(3, 0x35, x); ev(3, 0x36, y); ev(3, 0, x); ev(3, 1, y); ev(0, 0, 0)
            t += 16_000
        }
        ev(3, 0x39, -1); ev(1, 0x14a, 0); ev(0, 0, 0)
        t += gap
    }
    return lines.joined(separator: "\n") + "\n"
}

/// Runs a program to its end with `input` on its standard input; its exit status and
/// what it wrote (stdout and stderr together).
func run(_ args: [String], input: String = "", in dir: String) throws -> (status: Int32, output: String) {
    let inPath = dir + "/stdin", outPath = dir + "/stdout"
    try DurableFile.replace(inPath, with: Array(input.utf8), mode: 0o644)
    unlink(outPath)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, inPath, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let cargs = args.map { strdup($0) } + [nil]
    let path: String = "PATH=/usr/bin:/bin"
    let cenv = [strdup(path), nil]
    defer { cargs.forEach { free($0) }; cenv.forEach { free($0) } }
    var pid: pid_t = 0
    let r = posix_spawn(&pid, args[0], &actions, nil, cargs, cenv)
    guard r == 0 else { throw SystemError("posix_spawn", Errno(rawValue: r), args[0]) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let out = (try? DurableFile.read(outPath)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
    return ((status >> 8) & 0xff, out)
}

extension DaemonProcess {
    static var ctl: String { DurableFile.directory(of: binary) + "/touchlockctl" }

    /// touchlockctl against this daemon.
    func ctl(_ args: [String], input: String = "", as user: [String] = []) throws -> (status: Int32, output: String) {
        let prefix = user.isEmpty ? [] : ["/usr/bin/setpriv"] + user + ["--"]
        return try run(prefix + [Self.ctl, "--socket", socketPath] + args, input: input, in: dir)
    }
}

/// Runs a program to its end with `input` on its standard input; its exit status and
/// what it wrote on each stream, apart.
func runApart(_ args: [String], input: String = "", in dir: String) throws -> (status: Int32, output: String, errors: String) {
    let inPath = dir + "/stdin", outPath = dir + "/stdout", errPath = dir + "/stderr"
    try DurableFile.replace(inPath, with: Array(input.utf8), mode: 0o644)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, inPath, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let cargs = args.map { strdup($0) } + [nil]
    let cenv = [strdup("PATH=/usr/bin:/bin"), nil]
    defer { cargs.forEach { free($0) }; cenv.forEach { free($0) } }
    var pid: pid_t = 0
    let r = posix_spawn(&pid, args[0], &actions, nil, cargs, cenv)
    guard r == 0 else { throw SystemError("posix_spawn", Errno(rawValue: r), args[0]) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    func text(_ path: String) -> String {
        (try? DurableFile.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
    return ((status >> 8) & 0xff, text(outPath), text(errPath))
}

/// The events told to `c` until `stop` accepts one, or `ms` pass (stretched by
/// `TestTime.scale`).
func events(_ c: ControlClient?, ms: Int64, until stop: (Event) -> Bool) -> [Event] {
    guard let c else { return [] }
    var out: [Event] = []
    let deadline = EventLoop.now() + waited(ms)
    while true {
        let left = deadline - EventLoop.now()
        if left.microseconds <= 0 { return out }
        guard let next = try? c.nextEvent(timeout: left) else { return out }
        out.append(next.event)
        if stop(next.event) { return out }
    }
}
