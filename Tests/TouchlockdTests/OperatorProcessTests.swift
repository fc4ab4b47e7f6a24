import Foundation
import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

private let screen = Size(width: 640, height: 400)
private let rightPattern = [0, 4, 8, 5]
private let wrongPattern = [0, 1, 2, 5]

private func hashOf(_ nodes: [Int]) throws -> String {
    var bytes = Pattern(rows: 3, columns: 3, nodes: nodes).secretBytes
    return try SecretHash.make(&bytes)
}

private func text(_ path: String) -> String? {
    (try? DurableFile.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
}

/// The value of the sample `name` (with its labels as written, e.g. `{state="lockout"}`)
/// in Prometheus text, or nil if it is not there.
private func sample(_ text: String, _ name: String) -> Double? {
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        let parts = line.split(separator: " ")
        if parts.count == 2, parts[0] == name { return Double(parts[1]) }
    }
    return nil
}

/// A unix datagram socket standing for journald's (/run/systemd/journal/socket): the
/// daemon is pointed at it and believes its standard error is the journal's stream, as
/// under systemd ($JOURNAL_STREAM naming the log file's device and inode).
private final class JournalSocket {
    let path: String
    let fd: Int32

    init(dir: String) throws {
        path = dir + "/journal.socket"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        try UnixSocket.bind(fd, to: path)
    }

    deinit { close(fd) }

    /// The environment that has `d` log to this socket.
    func environment(for d: DaemonProcess) throws -> [String] {
        try DurableFile.replace(d.logPath, with: [], mode: 0o644)
        var st = stat()
        guard stat(d.logPath, &st) == 0 else { throw SystemError("stat", .current, d.logPath) }
        return ["JOURNAL_STREAM=\(st.st_dev):\(st.st_ino)", "TOUCHLOCK_JOURNAL_SOCKET=\(path)"]
    }

    /// Every entry received so far, as journald would store it (fields by name).
    private(set) var entries: [[String: String]] = []

    func drain() -> [[String: String]] {
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &buf, buf.count, Int32(MSG_DONTWAIT))
            guard n > 0 else { break }
            let fields = Journal.parse(Array(buf[0..<n]))
            #expect(fields != nil, "not the native protocol: \(Array(buf[0..<n]))")
            var entry: [String: String] = [:]
            for f in fields ?? [] { entry[f.name] = f.value }
            entries.append(entry)
        }
        return entries
    }

    /// Waits for the entry with MESSAGE_ID `id`.
    func wait(for id: LogMessageID, timeout ms: Int64 = 15_000) -> [String: String]? {
        let deadline = EventLoop.now() + .milliseconds(ms)
        while EventLoop.now() < deadline {
            if let e = drain().first(where: { $0["MESSAGE_ID"] == id.rawValue }) { return e }
            usleep(20_000)
        }
        return nil
    }
}

/// A real systemd-journald in a namespace of its own (systemd-journald NAME: its socket
/// in /run/systemd/journal.NAME/, its files in /var/log/journal/MACHINE-ID.NAME), read
/// with journalctl --namespace; removed with its files at the end.
private final class RealJournal {
    static let binary = "/lib/systemd/systemd-journald"
    static var available: Bool {
        geteuid() == 0 && access(binary, X_OK) == 0 && access("/usr/bin/journalctl", X_OK) == 0
            && !machineID.isEmpty
    }

    /// The machine's id, which names the namespace's journal files: with none (an empty
    /// /etc/machine-id, as a root made by mmdebstrap has before its first boot) journald
    /// writes them where journalctl never looks.
    static var machineID: String {
        (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }

    let namespace = "touchlock-test-\(getpid())"
    var socketPath: String { "/run/systemd/journal.\(namespace)/socket" }
    private let process = Process()

    init() throws {
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = [namespace]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = EventLoop.now() + .milliseconds(10_000)
        while access(socketPath, F_OK) != 0 {
            guard EventLoop.now() < deadline, process.isRunning else {
                throw SystemError("systemd-journald", Errno(rawValue: ETIMEDOUT), socketPath)
            }
            usleep(20_000)
        }
    }

    deinit {
        process.terminate()
        process.waitUntilExit()
        let id = Self.machineID
        if !id.isEmpty { try? FileManager.default.removeItem(atPath: "/var/log/journal/\(id).\(namespace)") }
        try? FileManager.default.removeItem(atPath: "/run/systemd/journal.\(namespace)")
    }

    /// The environment that has `d` log here, its standard error taken for the journal's
    /// stream ($JOURNAL_STREAM naming the log file's device and inode, as systemd does).
    func environment(for d: DaemonProcess) throws -> [String] {
        try DurableFile.replace(d.logPath, with: [], mode: 0o644)
        var st = stat()
        guard stat(d.logPath, &st) == 0 else { throw SystemError("stat", .current, d.logPath) }
        return ["JOURNAL_STREAM=\(st.st_dev):\(st.st_ino)", "TOUCHLOCK_JOURNAL_SOCKET=\(socketPath)"]
    }

    /// The entries journalctl gives for `filters` (matches such as MESSAGE_ID=..., or
    /// options such as -p notice).
    func entries(_ filters: [String]) throws -> [[String: String]] {
        let sync = Process()
        sync.executableURL = URL(fileURLWithPath: "/usr/bin/journalctl")
        sync.arguments = ["--namespace=\(namespace)", "--sync"]
        try sync.run()
        sync.waitUntilExit()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/journalctl")
        p.arguments = ["--namespace=\(namespace)", "--no-pager", "-o", "json"] + filters
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return data.split(separator: UInt8(ascii: "\n")).compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any]
        }.map { $0.compactMapValues { $0 as? String } }
    }

    /// Waits until journalctl finds an entry for `filters`.
    func wait(_ filters: [String], timeout ms: Int64) throws -> [[String: String]] {
        let deadline = EventLoop.now() + .milliseconds(ms)
        while true {
            let found = try entries(filters)
            if !found.isEmpty || EventLoop.now() >= deadline { return found }
            usleep(200_000)
        }
    }
}

/// What an operator reads: the metrics textfile, the journal, the status.
@Suite(.serialized) struct OperatorProcessTests {
    /// A 3 s lockout after one wrong pattern, and nothing else happening: 1.5 s after its
    /// end the textfile says there is none, as the live exposition does, with no further
    /// event to rewrite it.
    @Test func theTextfileSaysALockoutIsOverWithoutAnotherEventAndMatchesTheLiveExposition() throws {
        let d = try DaemonProcess(config: "")
        let prom = d.dir + "/touchlock.prom"
        try DurableFile.replace(d.configPath, with: Array("""
            pattern_hash = \(try hashOf(rightPattern))
            error_hold_ms = 100
            [lockout]
            schedule = 3
            [metrics]
            textfile = \(prom)

            """.utf8), mode: 0o600)
        let replay = d.dir + "/wrong.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [wrongPattern], on: screen).utf8), mode: 0o644)
        try d.start(replay: replay)
        let sub = try d.client()
        _ = try sub.request(.subscribe, timeout: waited(5000))
        var lockoutUntil: Instant?
        let deadline = EventLoop.now() + waited(15_000)
        while lockoutUntil == nil, EventLoop.now() < deadline {
            guard let e = try sub.nextEvent(timeout: deadline - EventLoop.now()) else { break }
            if case .lockout(let until) = e.event { lockoutUntil = until }
        }
        let until = try #require(lockoutUntil, "no lockout; log:\n\(d.log)")
        let wallUntil = WallClock.now() + Double((until - EventLoop.now()).microseconds) / 1e6

        // During the lockout: its end as a Unix time, which stays right however late it is read.
        usleep(1_200_000)
        let during = try #require(text(prom))
        #expect(sample(during, "touchlock_state{state=\"lockout\"}") == 1, "\(during)")
        let written = try #require(sample(during, "touchlock_lockout_until_timestamp_seconds"), "\(during)")
        #expect(abs(written - wallUntil) < 0.5, "\(written) vs \(wallUntil)")
        #expect(!during.contains("touchlock_lockout_remaining_seconds"))

        // 1.5 s after the lockout's end, no touch, no request but reading.
        let wait = (until - EventLoop.now()).microseconds + 1_500_000
        if wait > 0 { usleep(UInt32(wait)) }
        let after = try #require(text(prom))
        #expect(sample(after, "touchlock_state{state=\"lockout\"}") == 0, "\(after)")
        #expect(sample(after, "touchlock_state{state=\"locked\"}") == 1, "\(after)")
        #expect(sample(after, "touchlock_lockout_until_timestamp_seconds") == nil, "\(after)")
        #expect(sample(after, "touchlock_consecutive_failures") == 1)

        // The live exposition (what `touchlockctl metrics` sends) says the same, line for line.
        let c = try d.client()
        var live = ""
        for _ in 0..<12 {
            let status = try c.decode(Status.self, from: try c.request(.status, timeout: waited(5000)))
            let metrics = try c.decode(Metrics.self, from: try c.request(.metrics, timeout: waited(5000)))
            live = MetricsExposition.render(status: status, metrics: metrics, format: .prometheusText)
            // Frames counted since the last write (the redraw at the lockout's end, the
            // clock's minute) are written within the textfile's lazy interval (15 s).
            if live == text(prom) { break }
            usleep(1_500_000)
        }
        let file = text(prom) ?? ""
        let onlyLive = live.split(separator: "\n").filter { !file.split(separator: "\n").contains($0) }
        let onlyFile = file.split(separator: "\n").filter { !live.split(separator: "\n").contains($0) }
        #expect(live == file, "only live: \(onlyLive)\nonly in the textfile: \(onlyFile)")
        #expect(sample(live, "touchlock_state{state=\"lockout\"}") == 0)
    }

    /// Under systemd the lines reach the journal natively, at their priority, with the
    /// MESSAGE_ID of each event an operator alerts on and fields to filter on; never the
    /// secret. A real journald (a namespace of its own) takes them, and journalctl finds
    /// them with the filters docs/operations.md gives.
    @Test(.enabled(if: RealJournal.available, "root and systemd-journald are needed for a journal namespace"))
    func journalLinesCarryTheirMessageIDsPrioritiesAndFields() throws {
        let d = try DaemonProcess(config: "")
        let journal = try RealJournal()
        let hash = try hashOf(rightPattern)
        try DurableFile.replace(d.configPath, with: Array("""
            pattern_hash = \(hash)
            error_hold_ms = 100
            [lockout]
            schedule = 2

            """.utf8), mode: 0o600)
        // A wrong pattern, a 2 s lockout, the right pattern 5 s later.
        let replay = d.dir + "/replay.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [wrongPattern, rightPattern], on: screen, gap: 5_000_000).utf8),
                                mode: 0o644)
        try d.start(replay: replay, environment: try journal.environment(for: d))

        let unlocked = try #require(journal.wait(["MESSAGE_ID=\(LogMessageID.unlocked.rawValue)", "TOUCHLOCK_METHOD=pattern"],
                                                 timeout: 25_000).first, "log:\n\(d.log)")
        #expect(unlocked["PRIORITY"] == "5")
        #expect(unlocked["MESSAGE"] == "unlocked by pattern")
        #expect(unlocked["SYSLOG_IDENTIFIER"] == "touchlockd")
        #expect(unlocked["_PID"] == "\(d.pid)")

        let wrong = try #require(journal.entries(["MESSAGE_ID=\(LogMessageID.wrongAttempt.rawValue)"]).first)
        #expect(wrong["PRIORITY"] == "5")
        #expect(wrong["TOUCHLOCK_METHOD"] == "pattern")
        #expect(wrong["TOUCHLOCK_ATTEMPTS"] == "1")
        #expect(wrong["MESSAGE"]?.hasPrefix("wrong pattern; 1 failure(s) in a row") == true)

        let lockout = try #require(journal.entries(["MESSAGE_ID=\(LogMessageID.lockoutStarted.rawValue)"]).first)
        #expect(lockout["PRIORITY"] == "4")
        #expect(lockout["TOUCHLOCK_ATTEMPTS"] == "1")
        #expect(lockout["TOUCHLOCK_LOCKOUT_SECONDS"] == "2")

        // -p notice: the events and what is wrong, without the info lines.
        let notice = try journal.entries(["-p", "notice"])
        #expect(Set(notice.compactMap { $0["MESSAGE_ID"] }).isSuperset(of: [LogMessageID.wrongAttempt.rawValue,
                                                                          LogMessageID.lockoutStarted.rawValue,
                                                                          LogMessageID.unlocked.rawValue]))
        #expect(!notice.contains { $0["MESSAGE"] == "first frame shown" })
        let all = try journal.entries([])
        // Lines with no event of their own go too, at their own priority.
        #expect(all.contains { $0["MESSAGE"] == "first frame shown" && $0["PRIORITY"] == "6" && $0["MESSAGE_ID"] == nil })
        // Nothing of the secret: not its hash, not its nodes.
        let everything = all.map { $0.map { "\($0.key)=\($0.value)" }.joined(separator: "\n") }.joined(separator: "\n")
        #expect(!everything.contains(hash))
        #expect(!everything.contains("0-4-8-5") && !everything.contains("0, 4, 8, 5"))
        // What went to the journal is not written on standard error a second time.
        #expect(!d.log.contains("unlocked by pattern"), "\(d.log)")
    }

    /// The rule: the config files (secrets.conf, pushed by configuration management) win;
    /// an enrolled secret is then shadowed, which is logged at start with its MESSAGE_ID
    /// and shown in status.
    @Test func aSecretInSecretsConfWinsOverAnEnrolledOneAndStatusAndTheJournalSaySo() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n[lockout]\nschedule = none\n")
        let journal = try JournalSocket(dir: d.dir)
        // Enrolled on the screen some day: the pattern in the state file.
        try d.enrollPattern(wrongPattern)
        // Pushed by configuration management.
        let secrets = d.dir + "/etc/secrets.conf"
        try DurableFile.makeDirectory(d.dir + "/etc")
        try DurableFile.replace(secrets, with: Array("pattern_hash = \(try hashOf(rightPattern))\n".utf8), mode: 0o600)
        // The enrolled pattern first (refused), then the pushed one (unlocks).
        let replay = d.dir + "/replay.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [wrongPattern, rightPattern], on: screen, gap: 1_500_000).utf8),
                                mode: 0o644)
        try d.start(replay: replay, extra: ["-C", secrets], environment: try journal.environment(for: d))

        let shadowed = try #require(journal.wait(for: .secretShadowed, timeout: 5000), "entries: \(journal.drain())")
        #expect(shadowed["PRIORITY"] == "4")
        #expect(shadowed["TOUCHLOCK_METHOD"] == "pattern")
        #expect(shadowed["TOUCHLOCK_SOURCE"] == "config")
        let st = try d.status()
        #expect(st.secretSource == ["pattern": .config], "\(st)")
        #expect(st.secretsShadowed == [.pattern])
        // touchlockctl status shows it as the daemon sends it.
        let shown = try runApart([DaemonProcess.ctl, "--socket", d.socketPath, "status", "--json"], in: d.dir)
        #expect(shown.output.contains("\"secret_source\":{\"pattern\":\"config\"}"), "\(shown.output)")
        #expect(shown.output.contains("\"secrets_shadowed\":[\"pattern\"]"), "\(shown.output)")

        let wrong = try #require(journal.wait(for: .wrongAttempt), "the enrolled pattern was not refused: \(journal.drain())")
        #expect(wrong["TOUCHLOCK_METHOD"] == "pattern")
        let unlocked = try #require(journal.wait(for: .unlocked), "the pushed pattern did not unlock: \(journal.drain())")
        #expect(unlocked["TOUCHLOCK_METHOD"] == "pattern")
        #expect(journal.drain().filter { $0["MESSAGE_ID"] == LogMessageID.unlocked.rawValue }.count == 1)
    }

    /// With a pattern pushed in secrets.conf, enrolling one is refused (it would be stored
    /// and never count); the code, which the config does not set, may still be enrolled.
    @Test func enrollingASecretTheConfigSetsIsRefusedAndNothingIsStored() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        let secrets = d.dir + "/etc/secrets.conf"
        try DurableFile.makeDirectory(d.dir + "/etc")
        try DurableFile.replace(secrets, with: Array("pattern_hash = \(try hashOf(rightPattern))\n".utf8), mode: 0o600)
        try d.start(replay: nil, extra: ["-C", secrets])
        let before = d.stateText
        let r = try d.ctl(["enroll", "pattern"], input: "0-4-8-5\n0-4-8-5\n")
        #expect(r.status == 1 && r.output.contains("shadowed") && r.output.contains("secrets.conf"), "\(r)")
        #expect(d.stateText == before, "the state file changed: \(d.stateText ?? "none")")
        #expect(try d.status().secretsShadowed == nil)
        let code = try d.ctl(["enroll", "code"], input: "246810\n246810\n")
        #expect(code.status == 0, "\(code)")
        #expect(d.stateText?.contains("code_hash = $y$") == true)
    }

    /// `touchlockctl status` reads as lines for a person (state and the lockout's wait,
    /// attempts, methods, where the secret comes from, the cover); `--json` is the
    /// protocol's reply, as scripts read it.
    @Test func statusPrintsReadableLinesAndTheJSONBehindJson() throws {
        let d = try DaemonProcess(config: "")
        try DurableFile.replace(d.configPath, with: Array("""
            pattern_hash = \(try hashOf(rightPattern))
            error_hold_ms = 100
            [lockout]
            schedule = 60

            """.utf8), mode: 0o600)
        let replay = d.dir + "/wrong.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [wrongPattern], on: screen).utf8), mode: 0o644)
        try d.start(replay: replay)
        let deadline = EventLoop.now() + waited(15_000)
        while try d.status().state != .lockout, EventLoop.now() < deadline { usleep(100_000) }

        let human = try runApart([DaemonProcess.ctl, "--socket", d.socketPath, "status"], in: d.dir)
        #expect(human.status == 0, "\(human.errors)")
        let lines = human.output.split(separator: "\n").map(String.init)
        #expect(!human.output.contains("{"), "\(human.output)")
        let wait = try #require(lines.first { $0.hasPrefix("state:") }, "\(human.output)")
        #expect(wait.contains("locked out, next attempt in "), "\(wait)")
        let seconds = Int(wait.split(separator: " ").dropLast().last ?? "") ?? 0
        #expect((50...60).contains(seconds), "\(wait)")
        #expect(lines.contains { $0.hasPrefix("attempts:") && $0.hasSuffix(" 1 failed") }, "\(human.output)")
        #expect(lines.contains { $0.hasPrefix("methods:") && $0.contains("pattern on screen") }, "\(human.output)")
        #expect(lines.contains { $0.hasPrefix("secrets:") && $0.hasSuffix("pattern from the config files") }, "\(human.output)")
        #expect(lines.contains { $0.hasPrefix("cover:") }, "\(human.output)")
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(human.output)")

        let json = try runApart([DaemonProcess.ctl, "--socket", d.socketPath, "status", "--json"], in: d.dir)
        #expect(json.status == 0, "\(json.errors)")
        let reply = try d.client().decode(Status.self, from: String(json.output.split(separator: "\n").first ?? ""))
        #expect(reply.state == .lockout && reply.failures == 1, "\(json.output)")
    }

    /// The figures the demo prints: stopped by SIGTERM after the unlock, as `scripts/run`
    /// stops it, the daemon's latency lines say they time PNG files when it writes each
    /// frame as one (the demo's `--out`), and say nothing of the kind when it does not.
    @Test func theLatencyLinesSayWhenTheyTimeTheWritingOfPNGFiles() throws {
        for writesFiles in [true, false] {
            let d = try DaemonProcess(config: "")
            try DurableFile.replace(d.configPath, with: Array("pattern_hash = \(try hashOf(rightPattern))\n".utf8), mode: 0o600)
            let replay = d.dir + "/right.evemu"
            try DurableFile.replace(replay, with: Array(recording(of: [rightPattern], on: screen).utf8), mode: 0o644)
            try d.start(replay: replay, extra: ["--replay-pace", "frames"] + (writesFiles ? ["--out", d.dir + "/out"] : []))
            let deadline = EventLoop.now() + .milliseconds(30_000)
            // Unlocked and handed back, as `touchlockctl wait-unlock` waits for.
            while try d.status().display != .handedOver, EventLoop.now() < deadline { usleep(100_000) }
            d.kill(SIGTERM)
            d.waitExit()
            let latency = d.log.split(separator: "\n").filter { $0.contains("latency from input event") }
            #expect(latency.count == 2, "\(d.log)")
            if writesFiles {
                #expect(latency.allSatisfy { $0.contains("each frame encoded and written as a PNG file first") }, "\(latency)")
            } else {
                #expect(!latency.contains { $0.contains("PNG") }, "\(latency)")
            }
        }
    }

    /// With only the enrolled secret, it counts, and nothing is shadowed.
    @Test func anEnrolledSecretAloneCountsAndStatusSaysItIsTheEnrolledOne() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        try d.enrollPattern(rightPattern)
        try d.start(replay: nil)
        let st = try d.status()
        #expect(st.secretSource == ["pattern": .enrolled], "\(st)")
        #expect(st.secretsShadowed == nil)
        #expect(!d.log.contains("does not count"))
    }
}
