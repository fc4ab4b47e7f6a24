import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

private let screen = Size(width: 640, height: 400)

@Suite(.serialized) struct ControlProcessTests {
    @Test func enrollingByStandardInputThenUnlockingAndLockingAgain() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        try d.start(replay: nil)
        #expect(try d.ctl(["enroll", "--status"]).output == "pattern: not enrolled\ncode: not enrolled\n")

        // Typed twice; both must match and be long enough.
        var r = try d.ctl(["enroll", "pattern"], input: "0-4-8-5\n0-4-8-5\n")
        #expect(r.status == 0 && r.output == "pattern enrolled\n")
        r = try d.ctl(["enroll", "code"], input: "123456\n123457\n")
        #expect(r.status == 1 && r.output.contains("the two entries differ"))
        r = try d.ctl(["enroll", "code"], input: "123\n123\n")
        #expect(r.status == 1 && r.output.contains("at least 4 digits"))
        r = try d.ctl(["enroll", "pattern"], input: "0-1-2\n0-1-2\n")
        #expect(r.status == 1 && r.output.contains("at least 4 nodes"))
        r = try d.ctl(["enroll", "code"], input: "123456\n")
        #expect(r.status == 1 && r.output.contains("twice"))
        r = try d.ctl(["enroll", "code"], input: "246810\n246810\n")
        #expect(r.status == 0)
        #expect(try d.ctl(["enroll", "--status"]).output == "pattern: enrolled\ncode: enrolled\n")

        // Only hashes are stored, in a root-only file.
        let text = d.stateText ?? ""
        #expect(text.contains("pattern_hash = $y$") && text.contains("code_hash = $y$"))
        #expect(!text.contains("0-4-8-5") && !text.contains("246810"))
        var st = stat()
        #expect(stat(d.statePath, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(!d.log.contains("246810") && !d.log.contains("0-4-8-5"))

        // The enrolled pattern unlocks; lock takes the device back.
        d.kill(SIGTERM)
        #expect(d.waitExit() == 0)
        let replay = d.dir + "/right.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [[0, 1, 2, 5], [0, 4, 8, 5]], on: screen).utf8))
        try d.start(replay: replay)
        r = try d.ctl(["wait-unlock", "--timeout", "\(15 * TestTime.scale)"])
        #expect(r.status == 0 && r.output.contains("\"event\":\"unlocked\""))
        #expect(try d.status().state == .unlocked)
        r = try d.ctl(["lock"])
        #expect(r.status == 0 && r.output.contains("\"state\":\"locked\""))
        #expect(try d.status().state == .locked)
        r = try d.ctl(["metrics"])
        #expect(r.status == 0 && r.output.contains("\"p99\":"), "\(r.output)")
    }

    @Test func aCodeThePadCannotTakeIsRefusedByTouchlockctlAndByTheDaemon() throws {
        let d = try DaemonProcess(config: "unlock_method = both\ncode_length = 4\n")
        try d.start(replay: nil)
        #expect(try d.status().code?.length == 4)

        // touchlockctl refuses before hashing, naming both lengths.
        var r = try d.ctl(["enroll", "code"], input: "123456\n123456\n")
        #expect(r.status == 1 && r.output.contains("6-digit code") && r.output.contains("4 boxes"), "\(r.output)")
        r = try d.ctl(["enroll", "code", "--duress"], input: "123456\n123456\n")
        #expect(r.status == 1 && r.output.contains("6-digit code") && r.output.contains("4 boxes"), "\(r.output)")
        #expect(!(d.stateText ?? "").contains("code_hash") && !(d.stateText ?? "").contains("duress_hash"))

        // The daemon refuses it itself: a request with another length, or with none.
        var six = Array("code:123456".utf8)
        let hash = try SecretHash.make(&six)
        let c = try d.client()
        func enroll(_ kind: SecretKind, length: Int?) throws -> ControlError? {
            let line = try c.request(Request(id: 7, request: .enroll, method: kind, hash: hash, length: length),
                                     timeout: waited(10_000))
            return try c.decode(ReplyHeader.self, from: line).error
        }
        for kind in [SecretKind.code, .duress] {
            let wrong = try enroll(kind, length: 6)
            #expect(wrong?.code == .badValue && wrong?.message.contains("6-digit code") == true
                    && wrong?.message.contains("4 boxes") == true, "\(String(describing: wrong))")
            let missing = try enroll(kind, length: nil)
            #expect(missing?.code == .badValue && missing?.message.contains("missing \"length\"") == true,
                    "\(String(describing: missing))")
        }
        #expect(!(d.stateText ?? "").contains("code_hash") && !(d.stateText ?? "").contains("duress_hash"))
        #expect(try d.status().enrolled == [])

        // A code as long as the pad is taken.
        r = try d.ctl(["enroll", "code"], input: "2580\n2580\n")
        #expect(r.status == 0 && r.output == "code enrolled\n", "\(r.output)")
        r = try d.ctl(["enroll", "code", "--duress", "--socket=\(d.socketPath)"], input: "1397\n1397\n")
        #expect(r.status == 0 && r.output == "duress code enrolled\n", "\(r.output)")
        #expect((d.stateText ?? "").contains("code_hash = $y$") && (d.stateText ?? "").contains("duress_hash = $y$"))
        #expect(try d.status().enrolled == [.code])
    }

    @Test func enrollingAPatternDrawnTwiceOnTheScreen() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        // The replay draws the same pattern twice, 3 s after it starts (a lone SYN at 0
        // starts its clock): the enrollment screen is up by then.
        let replay = d.dir + "/twice.evemu"
        var lines = recording(of: [[0, 4, 8, 5], [0, 4, 8, 5]], on: screen, lead: 3_000_000)
            .split(separator: "\n").map(String.init)
        lines.insert("E: 0.000000 0000 0000 0", at: lines.firstIndex { $0.hasPrefix("E: ") } ?? lines.endIndex)
        try DurableFile.replace(replay, with: Array((lines.joined(separator: "\n") + "\n").utf8))
        try d.start(replay: replay)
        let r = try d.ctl(["enroll", "pattern", "--screen", "--timeout", "20"])
        #expect(r.status == 0 && r.output.contains("{\"event\":\"enrolled\",\"method\":\"pattern\"}"), "\(r.output)\n\(d.log)")
        #expect(try d.ctl(["enroll", "--status"]).output == "pattern: enrolled\ncode: not enrolled\n")
        let st = try d.status()
        #expect(st.state == .locked && st.failures == 0)
        // Only the hash is stored, and it is the hash of the pattern drawn.
        let line = (d.stateText ?? "").split(separator: "\n").first { $0.hasPrefix("pattern_hash = ") }
        let hash = line.map { String($0.dropFirst("pattern_hash = ".count)) } ?? ""
        #expect(hash.hasPrefix("$y$"))
        var bytes = Pattern(rows: 3, columns: 3, nodes: [0, 4, 8, 5]).secretBytes
        #expect(SecretHash.verify(&bytes, against: hash))
        #expect(!d.log.contains("0-4-8-5"))
        // Locked with a secret now: a second enrollment on the screen is refused.
        let again = try d.ctl(["enroll", "pattern", "--screen", "--timeout", "5"])
        #expect(again.status == 1 && again.output.contains("busy"), "\(again.output)")
    }

    @Test func anEnrollmentWhoseClientGivesUpIsCancelled() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        try d.start(replay: nil)
        // Nobody draws: touchlockctl gives up after 1 s and closes its connection.
        let r = try d.ctl(["enroll", "pattern", "--screen", "--timeout", "1"])
        #expect(r.status == 1, "\(r.output)")
        var st = try d.status()
        for _ in 0..<50 where st.enrolling != nil {
            usleep(20_000)
            st = try d.status()
        }
        #expect(st.enrolling == nil, "\(d.log)")
        #expect(d.log.contains("went away"))
        #expect(try d.ctl(["enroll", "--status"]).output == "pattern: not enrolled\ncode: not enrolled\n")
    }

    @Test func waitUnlockReturnsAtOnceWhenTheDeviceIsAlreadyUnlocked() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        try d.enrollPattern([0, 4, 8, 5])
        let replay = d.dir + "/unlock.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [[0, 4, 8, 5]], on: screen).utf8))
        try d.start(replay: replay)
        var first = try d.ctl(["wait-unlock", "--timeout", "15"])
        #expect(first.status == 0, "\(first.output)")
        // Unlocked already: a later wait returns at once with the same event, where a
        // wait for the next unlock would time out.
        let t0 = EventLoop.now()
        let again = try d.ctl(["wait-unlock", "--timeout", "3"])
        #expect(again.status == 0, "\(again.output)")
        #expect(EventLoop.now() - t0 < .milliseconds(2500))
        func eventLine(_ out: String) -> String? { out.split(separator: "\n").first { $0.contains("\"event\"") }.map(String.init) }
        first.output = eventLine(first.output) ?? first.output
        #expect(eventLine(again.output) == first.output)
        #expect(first.output.contains("\"event\":\"unlocked\"") && first.output.contains("\"method\":\"pattern\""))
        // Locked again, it waits.
        #expect(try d.ctl(["lock"]).status == 0)
        #expect(try d.ctl(["wait-unlock", "--timeout", "1"]).status == 1)
    }

    /// A kiosk ordered after `wait-unlock` must never start while locked: a daemon not
    /// started yet, and one that accepts but does not answer (what a daemon stopped by a
    /// signal looks like, until the watchdog restarts it), are waited for; the unlock of
    /// the daemon that comes then ends the wait.
    @Test func waitUnlockWaitsThroughADaemonAwayOrNotAnswering() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        try d.enrollPattern([0, 4, 8, 5])
        let out = d.dir + "/wait.out", err = d.dir + "/wait.err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let args = [DaemonProcess.ctl, "--socket", d.socketPath, "wait-unlock", "--timeout", "40"]
        let cargs = args.map { strdup($0) } + [nil]
        let cenv = [strdup("PATH=/usr/bin:/bin"), nil]
        defer { cargs.forEach { free($0) }; cenv.forEach { free($0) } }
        var pid: pid_t = 0
        #expect(posix_spawn(&pid, args[0], &actions, nil, cargs, cenv) == 0)
        defer { if pid > 0 { kill(pid, SIGKILL); waitpid(pid, nil, 0) } }
        func text(_ path: String) -> String {
            (try? DurableFile.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
        func stillWaiting() -> Bool {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                pid = 0
                return false
            }
            return true
        }

        // No daemon yet.
        usleep(1_000_000)
        #expect(stillWaiting(), "exited with no daemon: \(text(err))")
        // A listener that never answers, for longer than a reply may take (5 s).
        try DurableFile.makeDirectory(DurableFile.directory(of: d.socketPath))
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in d.socketPath.utf8.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0 && listen(fd, 4) == 0)
        usleep(6_500_000)
        #expect(stillWaiting(), "exited while the daemon did not answer: \(text(err))")
        close(fd)
        unlink(d.socketPath)
        // The daemon, and its unlock.
        let replay = d.dir + "/unlock.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [[0, 4, 8, 5]], on: screen).utf8))
        try d.start(replay: replay)
        var status: Int32 = 0
        let deadline = EventLoop.now() + .milliseconds(20_000)
        while pid > 0, EventLoop.now() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid { pid = 0 } else { usleep(50_000) }
        }
        #expect(pid == 0, "still waiting after the unlock: \(text(err))\n\(d.log)")
        #expect((status >> 8) & 0xff == 0 && status & 0x7f == 0, "\(text(err))")
        #expect(text(out).contains("\"event\":\"unlocked\""), "\(text(out))")
        let said = text(err)
        #expect(said.contains("No such file") && said.contains("timed out") && said.contains("still locked"), "\(said)")
        #expect(try d.status().state == .unlocked)
    }

    @Test func changingThePatternOnTheScreenAfterAnUnlock() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        try d.enrollPattern([0, 4, 8, 5])
        // The old pattern unlocks; 3 s later the new one is drawn twice.
        let replay = d.dir + "/change.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [[0, 4, 8, 5], [1, 4, 7, 8], [1, 4, 7, 8]], on: screen,
                                                              gap: 3_000_000).utf8))
        try d.start(replay: replay)
        var r = try d.ctl(["wait-unlock", "--timeout", "15"])
        #expect(r.status == 0, "\(r.output)")
        r = try d.ctl(["enroll", "pattern", "--screen", "--timeout", "20"])
        #expect(r.status == 0 && r.output.contains("\"event\":\"enrolled\""), "\(r.output)\n\(d.log)")
        #expect(try d.status().state == .unlocked)
        let line = (d.stateText ?? "").split(separator: "\n").first { $0.hasPrefix("pattern_hash = ") }
        let hash = line.map { String($0.dropFirst("pattern_hash = ".count)) } ?? ""
        var new = Pattern(rows: 3, columns: 3, nodes: [1, 4, 7, 8]).secretBytes
        #expect(SecretHash.verify(&new, against: hash))
        // Locking again: the new pattern is the one asked for.
        #expect(try d.ctl(["lock"]).status == 0)
        #expect(try d.status().state == .locked)
    }

    @Test(.enabled(if: getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 && getgrnam("users") != nil,
                   "needs root, setpriv and a 'users' group"))
    func theSocketIsForItsGroupAndEnrollmentForRoot() throws {
        let users = try #require(getgrnam("users"))
        let gid = users.pointee.gr_gid
        let d = try DaemonProcess(config: "socket_group = users\n")
        chmod(d.dir, 0o755)
        try d.start(replay: nil)
        var st = stat()
        #expect(stat(d.socketPath, &st) == 0 && st.st_gid == gid && st.st_mode & 0o777 == 0o660)

        let member = ["--reuid=65534", "--regid=\(gid)", "--clear-groups"]
        let supplementary = ["--reuid=65534", "--regid=65534", "--groups=\(gid)"]
        let stranger = ["--reuid=65534", "--regid=65534", "--clear-groups"]
        #expect(try d.ctl(["status", "--json"], as: member).status == 0)
        #expect(try d.ctl(["status", "--json"], as: supplementary).status == 0)
        let refused = try d.ctl(["enroll", "code"], input: "123456\n123456\n", as: member)
        #expect(refused.status == 1 && refused.output.contains("forbidden"), "\(refused.output)")
        let outsider = try d.ctl(["status", "--json"], as: stranger)
        #expect(outsider.status == 1 && outsider.output.contains("Permission denied"), "\(outsider.output)")
        #expect(d.log.contains("refused enroll"))
    }
}
