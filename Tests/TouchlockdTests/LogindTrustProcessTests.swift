import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSystem

private let screen = Size(width: 640, height: 400)
private let session = "/org/freedesktop/login1/session/_31"

/// A private system bus: a real dbus-daemon with a system bus's policy as Debian's
/// system.conf and systemd's login1.conf give it (anyone may send any signal to anyone;
/// only root may own org.freedesktop.login1), and on it a stand-in logind
/// (logind_standin.py) driven line by line. Its socket's directory is open to every user,
/// as /run/dbus is.
final class PrivateSystemBus {
    static let python = "/usr/bin/python3"
    let dir: String
    let address: String
    private let busDaemon: ChildProcess
    private var standin: ChildProcess?
    private var toStandin: Int32 = -1
    private var fromStandin: Int32 = -1
    private var pending: [UInt8] = []

    init() throws {
        var template = Array("/tmp/touchlock-bus.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        dir = String(cString: made)
        chmod(dir, 0o755)
        address = "unix:path=\(dir)/system_bus_socket"
        try DurableFile.replace(dir + "/system.conf", with: Array(Self.config(address).utf8), mode: 0o644)
        let here = DurableFile.directory(of: String(#filePath))
        for script in ["logind_standin.py", "logind_forger.py"] {
            try DurableFile.replace(dir + "/" + script, with: try DurableFile.read(here + "/" + script) ?? [], mode: 0o644)
        }
        busDaemon = try ChildProcess.spawn("/usr/bin/dbus-daemon", arguments: [
            "dbus-daemon", "--config-file=\(dir)/system.conf", "--nofork", "--nopidfile", "--nosyslog",
        ], descriptors: [.open(dir + "/bus.log", O_WRONLY | O_CREAT | O_APPEND, as: 1), .duplicate(1, as: 2)])
        let deadline = EventLoop.now() + .milliseconds(10_000)
        while access(dir + "/system_bus_socket", F_OK) != 0 {
            guard EventLoop.now() < deadline, try busDaemon.reap() == nil else {
                throw SystemError("dbus-daemon", Errno(rawValue: ETIMEDOUT), "no socket: \(text(dir + "/bus.log"))")
            }
            usleep(5000)
        }
        try startStandin()
    }

    deinit {
        stopStandin()
        try? busDaemon.signal(SIGKILL)
        _ = try? busDaemon.wait()
        _ = system("rm -rf '\(dir)'")
    }

    /// The stand-in's unique name on the bus.
    private(set) var logindName = ""

    /// Starts the stand-in logind; once it owns org.freedesktop.login1, its unique name is
    /// `logindName`.
    func startStandin() throws {
        var input: [Int32] = [0, 0], output: [Int32] = [0, 0]
        guard pipe(&input) == 0, pipe(&output) == 0 else { throw SystemError("pipe", .current) }
        for fd in input + output { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        standin = try ChildProcess.spawn(Self.python, arguments: ["python3", dir + "/logind_standin.py", address],
                                         descriptors: [.duplicate(input[0], as: 0), .duplicate(output[1], as: 1),
                                                       .open(dir + "/standin.log", O_WRONLY | O_CREAT | O_APPEND, as: 2)])
        close(input[0])
        close(output[1])
        toStandin = input[1]
        fromStandin = output[0]
        pending = []
        let ready = try line(timeout: 20_000)
        guard ready.hasPrefix("ready :") else {
            throw SystemError("logind_standin.py", Errno(rawValue: EIO), "\(ready): \(text(dir + "/standin.log"))")
        }
        logindName = String(ready.dropFirst("ready ".count))
    }

    /// Stops the stand-in, as logind stops when it is restarted.
    func stopStandin() {
        if toStandin >= 0 { close(toStandin) }
        if fromStandin >= 0 { close(fromStandin) }
        toStandin = -1
        fromStandin = -1
        if let standin {
            try? standin.signal(SIGKILL)
            _ = try? standin.wait()
        }
        standin = nil
    }

    /// The stand-in's answer to `command`.
    func command(_ command: String, timeout ms: Int64 = 10_000) throws -> String {
        let bytes = Array((command + "\n").utf8)
        guard write(toStandin, bytes, bytes.count) == bytes.count else { throw SystemError("write", .current, "stand-in") }
        return try line(timeout: ms)
    }

    /// The method calls the stand-in logind has received.
    func calls() throws -> Int {
        let answer = try command("calls")
        guard let n = answer.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw SystemError("logind_standin.py", Errno(rawValue: EIO), answer)
        }
        return n
    }

    private func line(timeout ms: Int64) throws -> String {
        let deadline = EventLoop.now() + .milliseconds(ms)
        while true {
            if let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let text = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeSubrange(...end)
                return text
            }
            let left = (deadline - EventLoop.now()).milliseconds
            guard left > 0 else { throw SystemError("logind_standin.py", Errno(rawValue: ETIMEDOUT), text(dir + "/standin.log")) }
            var p = pollfd(fd: fromStandin, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(min(left, 1000))) > 0 else { continue }
            var buf = [UInt8](repeating: 0, count: 4096)
            let n = read(fromStandin, &buf, buf.count)
            guard n > 0 else { throw SystemError("logind_standin.py", Errno(rawValue: EPIPE), text(dir + "/standin.log")) }
            pending += buf[0..<n]
        }
    }

    /// The forger's command line: logind_forger.py run as the local user nobody (65534).
    func forgerArguments(_ args: [String], to pid: pid_t) -> [String] {
        ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
         Self.python, dir + "/logind_forger.py", address, "\(pid)"] + args
    }

    /// Runs the forger to its end.
    func forge(_ args: [String], to pid: pid_t) throws -> (status: Int32, output: String) {
        try run(forgerArguments(args, to: pid), in: dir)
    }

    static func config(_ address: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <auth>EXTERNAL</auth>
          <listen>\(address)</listen>
          <policy context="default">
            <allow user="*"/>
            <deny own="*"/>
            <deny send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow receive_type="signal"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
            <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"
                  send_member="UpdateActivationEnvironment"/>
          </policy>
          <policy user="root">
            <allow own="org.freedesktop.login1"/>
            <allow send_destination="org.freedesktop.login1"/>
            <allow receive_sender="org.freedesktop.login1"/>
          </policy>
          <policy context="default">
            <deny send_destination="org.freedesktop.login1"/>
            <allow send_destination="org.freedesktop.login1" send_interface="org.freedesktop.DBus.Properties" send_member="Get"/>
            <allow send_destination="org.freedesktop.login1" send_interface="org.freedesktop.login1.Manager" send_member="ListSessions"/>
            <allow send_destination="org.freedesktop.login1" send_interface="org.freedesktop.login1.Manager" send_member="Inhibit"/>
            <allow send_destination="org.freedesktop.login1" send_interface="org.freedesktop.login1.Session" send_member="SetIdleHint"/>
            <allow receive_sender="org.freedesktop.login1"/>
          </policy>
        </busconfig>

        """
    }
}

/// What `path` holds past its first `offset` bytes (a daemon's log may grow past what
/// DurableFile reads).
private func bytes(_ path: String, from offset: Int) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var out: [UInt8] = [], buf = [UInt8](repeating: 0, count: 1 << 16), at = off_t(offset)
    while true {
        let n = pread(fd, &buf, buf.count, at)
        if n <= 0 { return out }
        out += buf[0..<n]
        at += off_t(n)
    }
}

/// The CPU time `pid` has used (user and system), in milliseconds.
private func cpuTime(_ pid: pid_t) -> Int {
    let stat = String(decoding: bytes("/proc/\(pid)/stat", from: 0), as: UTF8.self)
    // The fields after the command's closing parenthesis; utime and stime are the 14th and 15th.
    guard let close = stat.lastIndex(of: ")") else { return 0 }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
    return (user + system) * 1000 / sysconf(Int32(_SC_CLK_TCK))
}

private func ms(_ t: Interval) -> String {
    "\(t.microseconds / 1000).\(t.microseconds % 1000 / 100) ms"
}

private func text(_ path: String) -> String {
    (try? DurableFile.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
}

/// Only logind is believed: its Lock and PrepareForSleep are taken from the current owner of
/// org.freedesktop.login1 alone. The same signals sent by a local user (nobody, uid 65534)
/// straight to touchlockd's connection, which the system bus's policy lets anyone do,
/// neither lock nor hold anything up.
@Suite(.serialized) struct LogindTrustProcessTests {
    /// A daemon on `bus` with the pattern 0-4-8-5 enrolled and drawn once, unlocked and
    /// watching logind.
    private func unlockedDaemon(on bus: PrivateSystemBus, config: String = "") throws -> DaemonProcess {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n" + config)
        try d.enrollPattern([0, 4, 8, 5])
        let replay = d.dir + "/unlock.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [[0, 4, 8, 5]], on: screen).utf8))
        try d.start(replay: replay, environment: ["DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)"])
        let r = try d.ctl(["wait-unlock", "--timeout", "20"])
        guard r.status == 0 else { throw SystemError("wait-unlock", Errno(rawValue: ETIMEDOUT), "\(r.output)\n\(d.log)") }
        guard waitFor(20_000, { d.log.contains("logind: watching seat seat0") }) else {
            throw SystemError("touchlockd", Errno(rawValue: ETIMEDOUT), "not watching logind:\n\(d.log)")
        }
        return d
    }

    private func waitFor(_ ms: Int64, _ done: () -> Bool) -> Bool {
        let deadline = EventLoop.now() + .milliseconds(ms)
        while !done() {
            if EventLoop.now() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }

    private func occurrences(_ needle: String, in text: String) -> Int {
        text.split(separator: "\n").filter { $0.contains(needle) }.count
    }

    /// Everything the bus took before now has reached the daemon: logind's Unlock is sent
    /// after it, and the daemon says it refused it.
    private func settle(_ d: DaemonProcess, _ bus: PrivateSystemBus) throws {
        let refused = occurrences("Unlock for \(session) refused", in: d.log)
        #expect(try bus.command("unlock \(session)") == "ok")
        #expect(waitFor(10_000) { occurrences("Unlock for \(session) refused", in: d.log) > refused }, "\(d.log)")
    }

    /// Whether the daemon stays unlocked for `ms`.
    private func staysUnlocked(_ d: DaemonProcess, ms: Int64) throws -> Bool {
        let deadline = EventLoop.now() + .milliseconds(ms)
        while EventLoop.now() < deadline {
            if try d.status().state != .unlocked { return false }
            usleep(20_000)
        }
        return true
    }

    @Test func aLockFromAnotherConnectionDoesNotLockAndLogindsOwnDoes() throws {
        let bus = try PrivateSystemBus()
        let d = try unlockedDaemon(on: bus)
        let forged = try bus.forge(["lock"], to: d.pid)
        #expect(forged.status == 0, "\(forged.output)")
        try settle(d, bus)
        let unlocked = try staysUnlocked(d, ms: 1000)
        print("forged Session.Lock accepted: \(unlocked ? "no" : "yes")")
        #expect(unlocked, "\(d.log)")

        // A forged NameOwnerChanged saying the forger owns login1 now, then its Lock.
        if unlocked {
            let owner = try bus.forge(["owner"], to: d.pid)
            #expect(owner.status == 0, "\(owner.output)")
            try settle(d, bus)
            #expect(try staysUnlocked(d, ms: 1000), "\(d.log)")
        }

        // logind restarted: the new one is followed (the bus's NameOwnerChanged), and a
        // forged Lock still does not lock.
        bus.stopStandin()
        try bus.startStandin()
        #expect(waitFor(10_000) { d.log.contains("believed from \(bus.logindName) only") }, "\(d.log)")
        let again = try bus.forge(["lock"], to: d.pid)
        #expect(again.status == 0, "\(again.output)")
        try settle(d, bus)
        #expect(try staysUnlocked(d, ms: 500), "\(d.log)")

        // logind's own Lock locks.
        #expect(try bus.command("lock \(session)") == "ok")
        #expect(waitFor(10_000) { (try? d.status().state) == .locked }, "\(d.log)")
    }

    /// The idle lock tells logind the seat is idle, though "locked" comes a turn later,
    /// once the display is taken (screen lockers and power managers go by the hint).
    @Test func theIdleLockSetsTheIdleHint() throws {
        let bus = try PrivateSystemBus()
        let d = try unlockedDaemon(on: bus, config: "[lock]\nidle_s = 2\n")
        #expect(waitFor(20_000) { (try? d.status().state) == .locked }, "no idle lock:\n\(d.log)")
        #expect(d.log.contains("nothing touched for 2 s; locking"), "\(d.log)")
        var hints = ""
        #expect(waitFor(10_000) {
            hints = (try? bus.command("idle")) ?? ""
            return hints.hasSuffix(" 1")
        }, "the idle hints set: '\(hints)'\n\(d.log)")
        print("idle hints set by the idle lock: \(hints)")
    }

    @Test func aForgedPrepareForSleepDoesNotStopTheRealOneLocking() throws {
        let bus = try PrivateSystemBus()
        let d = try unlockedDaemon(on: bus)
        #expect(waitFor(10_000) { (try? bus.command("delays")) == "delays 1" }, "no sleep delay held:\n\(d.log)")
        let forged = try bus.forge(["sleep"], to: d.pid)
        #expect(forged.status == 0, "\(forged.output)")
        try settle(d, bus)
        let unlocked = try staysUnlocked(d, ms: 1000)
        print("forged PrepareForSleep(true) accepted: \(unlocked ? "no" : "yes")")
        #expect(unlocked, "\(d.log)")

        // logind's own: the delay is let go once the lock screen is shown.
        let slept = try bus.command("sleep")
        print("logind's PrepareForSleep(true) after a forged one: \(slept)")
        #expect(slept.hasPrefix("slept released=1"), "\(slept)\n\(d.log)")
        #expect(try d.status().state == .locked, "\(d.log)")
        #expect(try bus.command("wake") == "ok")
        #expect(waitFor(10_000) { (try? bus.command("delays")) == "delays 1" }, "no delay taken again:\n\(d.log)")
    }

    @Test func aFloodOfForgedSignalsMakesNoCallToLogindAndTheControlSocketStaysFast() throws {
        let bus = try PrivateSystemBus()
        let d = try unlockedDaemon(on: bus)
        // The calls made at the start (the delay, the idle hint) are over.
        #expect(waitFor(10_000) { (try? bus.command("delays")) == "delays 1" }, "\(d.log)")
        usleep(300_000)
        let before = try bus.calls()
        var st = stat()
        let logBefore = stat(d.logPath, &st) == 0 ? Int(st.st_size) : 0
        func logSince() -> [UInt8] { bytes(d.logPath, from: logBefore) }
        func refusals() -> Int { occurrences("Unlock for \(session) refused", in: String(decoding: logSince(), as: UTF8.self)) }

        let c = try d.client()
        var worst = Interval.milliseconds(0), trips = 0
        func trip() throws {
            let t0 = EventLoop.now()
            _ = try c.request(.status, timeout: waited(10_000))
            worst = max(worst, EventLoop.now() - t0)
            trips += 1
        }
        // The same round trips with no flood, for comparison (the machine may be busy).
        let quiet = EventLoop.now()
        while EventLoop.now() - quiet < .milliseconds(1500) {
            try trip()
            usleep(2000)
        }
        let (quietWorst, quietTrips) = (worst, trips)
        worst = .milliseconds(0)
        trips = 0

        let cpuBefore = cpuTime(d.pid)
        let out = d.dir + "/forger.out"
        let forger = try ChildProcess.spawn("/usr/bin/setpriv", arguments: bus.forgerArguments(["lock", "10000"], to: d.pid),
                                            environment: ["PATH=/usr/bin:/bin"],
                                            descriptors: [.open(out, O_WRONLY | O_CREAT | O_TRUNC, as: 1), .duplicate(1, as: 2)])
        let start = EventLoop.now()
        while try forger.reap() == nil {
            try trip()
            usleep(2000)
        }
        let sent = EventLoop.now() - start
        #expect(forger.termination == .exited(0), "\(text(out))")
        // Until the daemon has had every forged signal.
        #expect(try bus.command("unlock \(session)") == "ok")
        var polls = 0
        while EventLoop.now() - start < .milliseconds(60_000) {
            try trip()
            polls += 1
            if polls % 25 == 0, refusals() > 0 { break }
            usleep(2000)
        }
        let handled = EventLoop.now() - start
        let cpu = cpuTime(d.pid) - cpuBefore
        let calls = try bus.calls() - before
        let written = logSince()
        let lines = written.filter { $0 == UInt8(ascii: "\n") }.count
        print("""
            10,000 forged Session.Lock: \(text(out).split(separator: "\n").last ?? ""); sent in \
            \(sent.milliseconds) ms, \(refusals() > 0 ? "all handled after \(handled.milliseconds) ms" : "not all handled in 60 s"); \
            calls to logind during the flood: \(calls); status round trips: \(trips), worst \(ms(worst)) \
            (\(quietTrips) with no flood before it: worst \(ms(quietWorst))); the daemon's CPU time meanwhile: \
            \(cpu) ms; daemon log: \(lines) lines, \(written.count) bytes
            """)
        if lines < 10 { print(String(decoding: written, as: UTF8.self), terminator: "") }
        let byMethod = try bus.command("calls")
        #expect(calls == 0, "\(byMethod)\n\(String(decoding: written.suffix(2000), as: UTF8.self))")
        #expect(try d.status().state == .unlocked, "\(d.log)")
        // Counted, not logged one by one.
        #expect(lines < 10, "\(String(decoding: written.suffix(2000), as: UTF8.self))")
    }
}
