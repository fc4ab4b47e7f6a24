import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSystem

/// The message and the clock of a real touchlockd (headless), set over its socket.
@Suite(.serialized) struct ScreenInfoProcessTests {
    @Test func aMessageSetOverTheSocketIsShownKeptAcrossARestartAndClearedBackToTheConfiguredOne() throws {
        let d = try DaemonProcess(config: "[screen]\nclock = time\nmessage = Configured line\n")
        try d.start(replay: nil)
        #expect(try d.status().message == "Configured line")

        var r = try d.ctl(["message", "Back at 3 pm, call 555 0100"])
        #expect(r.status == 0, "\(r.output)")
        #expect(try d.status().message == "Back at 3 pm, call 555 0100")
        // Kept beside the state file, root's (or ours) and 0600, as the text itself.
        let file = DurableFile.directory(of: d.statePath) + "/message"
        var st = stat()
        #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(fileText(file) == "Back at 3 pm, call 555 0100")
        #expect(d.log.contains("message set (27 characters)"))

        // Plain text only, of 200 characters at most: refused by touchlockctl, and by the
        // daemon when another client sends it; the message stays.
        r = try d.ctl(["message", "two\nlines"])
        #expect(r.status == 64 && r.output.contains("control character U+000A"), "\(r.output)")
        r = try d.ctl(["message", String(repeating: "x", count: 201)])
        #expect(r.status == 64 && r.output.contains("at most 200 characters"), "\(r.output)")
        let c = try d.client()
        try c.send(line: #"{"id":7,"request":"message","text":"bell\u0007"}"#)
        let reply = try #require(try c.readLine(timeout: waited(5000)))
        #expect(reply.contains("\"bad_value\"") && reply.contains("U+0007"), "\(reply)")
        try c.send(line: #"{"id":8,"request":"message","text":"\u202Eevil"}"#)
        let reply2 = try #require(try c.readLine(timeout: waited(5000)))
        #expect(reply2.contains("\"bad_value\""), "\(reply2)")
        #expect(try d.status().message == "Back at 3 pm, call 555 0100")

        // Only root (no group is let in here): another user is refused by the daemon,
        // even with the socket open to it.
        if getuid() == 0, access("/usr/bin/setpriv", X_OK) == 0 {
            chmod(d.dir, 0o755)
            chmod(DurableFile.directory(of: d.socketPath), 0o755)
            r = try d.ctl(["message", "hello"], as: ["--reuid=65534", "--regid=0", "--clear-groups"])
            #expect(r.status == 1 && r.output.contains("message is for root (a group may be let in"), "\(r.output)")
        }

        // A restart shows it again.
        d.kill(SIGTERM)
        #expect(d.waitExit() == 0)
        try d.start(replay: nil)
        #expect(try d.status().message == "Back at 3 pm, call 555 0100")

        // Cleared: the configured message again, after a restart too.
        r = try d.ctl(["message", "--clear"])
        #expect(r.status == 0, "\(r.output)")
        #expect(try d.status().message == "Configured line")
        r = try d.ctl(["message"])
        #expect(r.status == 64, "\(r.output)")
        d.kill(SIGTERM)
        #expect(d.waitExit() == 0)
        try d.start(replay: nil)
        #expect(try d.status().message == "Configured line")
    }

    /// With no message configured, the first one set makes room for itself: the screen is
    /// laid out again (the grid moves down, its nodes as status tells them), and removing
    /// it gives the layout of before back.
    @Test func aMessageComingAndGoingLaysTheScreenOutAgain() throws {
        // Turned a quarter: a portrait screen of 400x640, one column.
        let d = try DaemonProcess(config: "[display]\nrotation = 90\n")
        try d.start(replay: nil)
        let before = try #require(try d.status().pattern?.nodes)
        #expect(try d.ctl(["message", "Call 555 0100"]).status == 0)
        let with = try #require(try d.status().pattern?.nodes)
        #expect(with.count == before.count && zip(with, before).allSatisfy { $0[1] > $1[1] }, "\(before) then \(with)")
        #expect(d.log.contains("laid out again with a message"))
        #expect(try d.ctl(["message", "--clear"]).status == 0)
        #expect(try d.status().pattern?.nodes == before)
        #expect(try d.status().message == nil)
    }

    /// The message stays on the screen for anyone to read: a member of the socket's group
    /// (the kiosk app's user) may ask status and lock, but not set it, unless
    /// `[socket] message_group` lets a group in; then that group's members may, and still
    /// not the socket's other members. Real clients of other uids and groups (setpriv).
    @Test(.enabled(if: getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 && getgrnam("users") != nil
                   && getgrnam("adm") != nil, "needs root, setpriv and the groups 'users' and 'adm'"))
    func theMessageIsRootsUnlessAGroupIsLetIn() throws {
        let users = try #require(getgrnam("users")).pointee.gr_gid
        let adm = try #require(getgrnam("adm")).pointee.gr_gid
        let kiosk = ["--reuid=65534", "--regid=\(users)", "--clear-groups"]
        let admin = ["--reuid=65533", "--regid=65534", "--groups=\(users),\(adm)"]

        let d = try DaemonProcess(config: "[socket]\ngroup = users\n")
        chmod(d.dir, 0o755)
        try d.start(replay: nil)
        #expect(try d.ctl(["status", "--json"], as: kiosk).status == 0)
        var r = try d.ctl(["message", "Service: type 0000 then OK to continue"], as: kiosk)
        #expect(r.status == 1 && r.output.contains("forbidden") && r.output.contains("message is for root"), "\(r.output)")
        r = try d.ctl(["message", "Service: type 0000 then OK to continue"], as: admin)
        #expect(r.status == 1 && r.output.contains("forbidden"), "\(r.output)")
        #expect(try d.status().message == nil)
        #expect(d.log.contains("refused message"), "\(d.log)")
        #expect(try d.ctl(["message", "Back at 3 pm"]).status == 0)
        #expect(try d.status().message == "Back at 3 pm")
        d.kill(SIGTERM)
        #expect(d.waitExit() == 0)

        // The group 'adm' let in: its member may; the kiosk's user still may not.
        try DurableFile.replace(d.configPath, with: Array("[socket]\ngroup = users\nmessage_group = adm\n".utf8), mode: 0o644)
        try d.start(replay: nil)
        r = try d.ctl(["message", "Service: type 0000 then OK to continue"], as: kiosk)
        #expect(r.status == 1 && r.output.contains("message is for root or the group 'adm'"), "\(r.output)")
        #expect(try d.status().message == "Back at 3 pm")
        r = try d.ctl(["message", "Closed for cleaning"], as: admin)
        #expect(r.status == 0, "\(r.output)")
        #expect(try d.status().message == "Closed for cleaning")
        r = try d.ctl(["message", "--clear"], as: admin)
        #expect(r.status == 0, "\(r.output)")
        #expect(try d.status().message == nil)
    }

    /// The message file is written off the event loop, the latest message winning: with
    /// every fsync 15 ms long (flash), a flood of message requests leaves root's status
    /// answered between them, costs a handful of writes, not one per message, and the last
    /// message is the one on disk and on the screen; every request is answered.
    @Test func aFloodOfMessagesIsWrittenAFewTimesAndRootIsAnsweredMeanwhile() throws {
        let d = try DaemonProcess(config: "")
        try d.start(replay: nil, environment: ["TOUCHLOCK_TEST_FSYNC_DELAY_MS=15"])
        let flooder = try d.client()
        let root = try d.client()
        let rounds = 50, perRound = 10
        var roundTrips: [Int64] = []
        var last = ""
        for r in 0..<rounds {
            var lines = ""
            for k in 0..<perRound {
                last = "Closed for cleaning, back at \(r):\(k)"
                lines += #"{"id":\#(r * perRound + k + 1),"request":"message","text":"\#(last)"}"# + "\n"
            }
            try flooder.send(bytes: Array(lines.utf8))
            let t0 = EventLoop.now()
            _ = try root.request(.status, timeout: waited(10_000))
            roundTrips.append((EventLoop.now() - t0).microseconds)
        }
        // Every request is answered, in order, each once its message or a later one is stored.
        var ids: [Int] = []
        while ids.count < rounds * perRound, let line = try flooder.readLine(timeout: waited(20_000)) {
            #expect(line.contains("\"ok\":true"), "\(line)")
            if let id = Int(line.split(separator: "\"id\":").last?.prefix { $0.isNumber } ?? "") { ids.append(id) }
        }
        #expect(ids == Array(1...(rounds * perRound)))
        let writes = d.log.components(separatedBy: "message set (").count - 1
        let sorted = roundTrips.sorted()
        print("aFloodOfMessages: \(rounds * perRound) messages, \(writes) message file writes; root's status round trip "
              + "p50 \(sorted[sorted.count / 2] / 1000) ms, max \(sorted.last! / 1000) ms (fsync 15 ms)")
        #expect(writes >= 1 && writes <= rounds * perRound / 10, "\(writes) writes for \(rounds * perRound) messages")
        #expect(fileText(DurableFile.directory(of: d.statePath) + "/message") == last)
        #expect(try d.status().message == last)
    }

    /// A message file someone else may write is not shown (it is trusted as the state
    /// file is).
    @Test func aMessageFileOthersMayWriteIsNotShown() throws {
        let d = try DaemonProcess(config: "")
        try DurableFile.makeDirectory(DurableFile.directory(of: d.statePath))
        let file = DurableFile.directory(of: d.statePath) + "/message"
        try DurableFile.replace(file, with: Array("planted".utf8), mode: 0o666)
        chmod(file, 0o666)
        try d.start(replay: nil)
        #expect(try d.status().message == nil)
        #expect(d.log.contains("the message in it is not shown"), "\(d.log)")
    }

    /// With the clock on, the daemon sleeps between minutes: over seconds within one
    /// minute it is not woken once (its context switches do not move), and at the minute
    /// a new frame is shown, one, with the new time.
    @Test func theClockWakesTheDaemonAtTheMinuteAndNotInBetween() throws {
        let d = try DaemonProcess(config: "[screen]\nclock = time\n")
        let out = d.dir + "/frames"
        try DurableFile.makeDirectory(out)
        // Not too close to a minute: the start and the first frame first.
        while Int(WallClock.now()) % 60 > 45 { usleep(500_000) }
        try d.start(replay: nil, extra: ["--out", out])
        usleep(1_500_000)
        func switches() throws -> Int {
            let text = fileText("/proc/\(d.pid)/status")
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") })
            return try #require(Int(line.split(separator: "\t").last.map(String.init) ?? ""))
        }
        func frames() -> Int { (try? DirectoryListing.names(out))?.filter { $0.hasPrefix("frame-") }.count ?? 0 }
        #expect(frames() >= 1)
        // A slow start (a loaded machine) may end near the minute: then past it first.
        let second = Int(WallClock.now()) % 60
        if second > 51 { usleep(useconds_t(61 - second) * 1_000_000) }
        let f0 = frames()
        let s0 = try switches()
        usleep(6_000_000)
        let s1 = try switches()
        #expect(s1 == s0, "woken \(s1 - s0) times within a minute; \(wakeEvidence(d))")
        #expect(frames() == f0)
        // Past the next minute: one frame more.
        let wait = 60 - Int(WallClock.now()) % 60 + 1
        usleep(useconds_t(wait) * 1_000_000)
        #expect(frames() == f0 + 1, "\(frames() - f0) frames at the minute")
        let s2 = try switches()
        #expect(s2 - s1 <= 3, "woken \(s2 - s1) times for one minute; \(wakeEvidence(d))")
    }
}

/// What a daemon that should sleep is doing: its system calls sampled every 5 ms for 2 s
/// (the number in /proc/PID/syscall, or "running"), tallied, and the end of its log.
private func wakeEvidence(_ d: DaemonProcess) -> String {
    var tally: [String: Int] = [:]
    for _ in 0..<400 {
        let call = fileText("/proc/\(d.pid)/syscall").split(separator: " ").first.map(String.init) ?? "gone"
        tally[call, default: 0] += 1
        usleep(5_000)
    }
    let calls = tally.sorted { $0.value > $1.value }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
    let log = d.log.split(separator: "\n").suffix(8).joined(separator: " | ")
    return "system calls sampled: \(calls); log: \(log)"
}

/// A file's text, read with read(2) to its end (a /proc file has no size).
private func fileText(_ path: String) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fd, &buf, buf.count)
        if n <= 0 { break }
        bytes += buf[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}
