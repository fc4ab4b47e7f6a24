import CLinux
import Glibc
import Testing
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// touchlockctl run by a person at a terminal (a real pseudo-terminal, the program on it
/// as a shell runs it: its own session, the terminal its controlling one).
private final class Terminal {
    let master: Int32
    private(set) var pid: pid_t = 0
    private(set) var status: Int32 = 0
    /// Everything the program wrote to the terminal, and the terminal echoed.
    private(set) var screen = ""

    init(_ args: [String]) throws {
        // posix_openpt and its kin, as glibc does them (Glibc's module leaves them out):
        // the multiplexer, unlocked (TIOCSPTLCK), its number (TIOCGPTN).
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, clinux_ioctl_pointer(master, 0x4004_5431, &unlock) == 0,
              clinux_ioctl_pointer(master, 0x8004_5430, &number) == 0 else {
            throw SystemError("/dev/ptmx", .current)
        }
        let slave = "/dev/pts/\(number)"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // After setsid, the first terminal opened becomes the controlling one.
        posix_spawn_file_actions_addopen(&actions, 0, slave, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // As a shell starts it: no signal blocked or ignored (the test runner's are not
        // passed on). 0x80: POSIX_SPAWN_SETSID, declared under _GNU_SOURCE only.
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(0x80 | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let cargs = args.map { strdup($0) } + [nil]
        let cenv = [strdup("PATH=/usr/bin:/bin"), nil]
        defer { cargs.forEach { free($0) }; cenv.forEach { free($0) } }
        let r = posix_spawn(&pid, args[0], &actions, &attributes, cargs, cenv)
        guard r == 0 else { throw SystemError("posix_spawn", Errno(rawValue: r), args[0]) }
    }

    deinit {
        if pid > 0 {
            kill(pid, SIGKILL)
            waitpid(pid, nil, 0)
        }
        close(master)
    }

    /// Reads what the terminal shows until `text` is there (after `from`), or 10 s.
    func waitFor(_ text: String, from: String.Index? = nil) -> Bool {
        let deadline = EventLoop.now() + .milliseconds(10_000)
        while true {
            if screen[(from ?? screen.startIndex)...].contains(text) { return true }
            let left = (deadline - EventLoop.now()).milliseconds
            if left <= 0 || !read(for: Int32(left)) { return screen[(from ?? screen.startIndex)...].contains(text) }
        }
    }

    /// Reads what there is within `ms`; false once nothing more will come.
    private func read(for ms: Int32) -> Bool {
        var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, ms) > 0 else { return false }
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = Glibc.read(master, &buf, buf.count)
        guard n > 0 else { return false }
        screen += String(decoding: buf[0..<n], as: UTF8.self)
        return true
    }

    /// Types `text` at the terminal.
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
    }

    /// Waits up to 10 s for the program to end, reading what it shows meanwhile.
    func end() -> Bool {
        let deadline = EventLoop.now() + .milliseconds(10_000)
        while pid > 0, EventLoop.now() < deadline {
            var s: Int32 = 0
            if waitpid(pid, &s, WNOHANG) == pid {
                pid = 0
                status = s
                while read(for: 100) {}
                return true
            }
            _ = read(for: 50)
        }
        return pid == 0
    }

    /// Whether the terminal echoes what is typed (its settings, as the shell finds them).
    var echoes: Bool {
        var t = termios()
        return tcgetattr(master, &t) == 0 && t.c_lflag & tcflag_t(ECHO) != 0
    }
}

/// The documented way to give a secret: typed at touchlockctl's prompt, not on a command
/// line or in a `printf` the shell keeps in its history. Nothing typed shows.
@Suite(.serialized) struct SecretPromptProcessTests {
    @Test func secretsTypedAtATerminalNeverShowAndSetSecretAsksTwice() throws {
        var template = Array("/tmp/touchlock-prompt-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        let dir = String(cString: made)
        defer { _ = system("rm -rf '\(dir)'") }
        let secrets = dir + "/secrets.conf", config = dir + "/touchlock.conf"
        try DurableFile.replace(config, with: Array("error_hold_ms = 100\n".utf8), mode: 0o644)

        let set = try Terminal([DaemonProcess.ctl, "set-secret", "pattern", "--file", secrets, "-C", config])
        #expect(set.waitFor("New pattern: "), "\(set.screen)")
        set.type("0-3-6-7-8\n")
        #expect(set.waitFor("Repeat the pattern: "), "\(set.screen)")
        set.type("0-3-6-7-8\n")
        #expect(set.end() && set.status == 0, "\(set.screen)")
        #expect(set.screen.contains("pattern stored in \(secrets)"), "\(set.screen)")
        #expect(!set.screen.contains("0-3-6"), "the pattern showed: \(set.screen)")
        #expect(set.echoes)
        let text = String(decoding: try DurableFile.read(secrets) ?? [], as: UTF8.self)
        let hash = text.split(separator: "\n").first { $0.hasPrefix("pattern_hash = ") }.map { String($0.dropFirst(15)) }
        var typed = Pattern(rows: 3, columns: 3, nodes: [0, 3, 6, 7, 8]).secretBytes
        #expect(hash.map { SecretHash.verify(&typed, against: $0) } == true, "\(text)")

        // hash-pattern and hash-code ask the same way, twice: a hash made on a workstation
        // goes to a fleet, and a typo in it would lock every kiosk with a code no one knows.
        let pattern = try Terminal([DaemonProcess.ctl, "hash-pattern", "-C", config])
        #expect(pattern.waitFor("Pattern: "), "\(pattern.screen)")
        pattern.type("1-4-7-8\n")
        #expect(pattern.waitFor("Repeat the pattern: "), "\(pattern.screen)")
        pattern.type("1-4-7-8\n")
        #expect(pattern.end() && pattern.status == 0, "\(pattern.screen)")
        #expect(pattern.screen.contains("$y$") && !pattern.screen.contains("1-4-7"), "\(pattern.screen)")
        let code = try Terminal([DaemonProcess.ctl, "hash-code"])
        #expect(code.waitFor("Code: "), "\(code.screen)")
        code.type("975310\n")
        #expect(code.waitFor("Repeat the code: "), "\(code.screen)")
        code.type("975310\n")
        #expect(code.end() && code.status == 0, "\(code.screen)")
        #expect(code.screen.contains("$y$") && !code.screen.contains("975310"), "\(code.screen)")
        let typo = try Terminal([DaemonProcess.ctl, "hash-code"])
        #expect(typo.waitFor("Code: "), "\(typo.screen)")
        typo.type("975310\n")
        #expect(typo.waitFor("Repeat the code: "), "\(typo.screen)")
        typo.type("975301\n")
        #expect(typo.end() && typo.status == 1 << 8, "\(typo.status): \(typo.screen)")
        #expect(typo.screen.contains("the two entries differ") && !typo.screen.contains("$y$"), "\(typo.screen)")
    }

    /// Ctrl-C at the prompt ends it, writes nothing, and leaves the terminal echoing: the
    /// shell it returns to is usable.
    @Test func ctrlCAtThePromptLeavesTheTerminalEchoingAndNothingWritten() throws {
        var template = Array("/tmp/touchlock-prompt-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        let dir = String(cString: made)
        defer { _ = system("rm -rf '\(dir)'") }
        let secrets = dir + "/secrets.conf"
        let set = try Terminal([DaemonProcess.ctl, "set-secret", "code", "--file", secrets])
        #expect(set.waitFor("New code: "), "\(set.screen)")
        set.type("2468\n")
        #expect(set.waitFor("Repeat the code: "), "\(set.screen)")
        #expect(!set.echoes)
        set.type("\u{03}")
        #expect(set.end(), "\(set.screen)")
        #expect(set.status & 0x7f == SIGINT, "status \(set.status): \(set.screen)")
        #expect(set.echoes, "the terminal was left without echo")
        #expect(access(secrets, F_OK) != 0)
        #expect(!set.screen.contains("2468"))
    }
}
