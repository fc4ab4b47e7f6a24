import Glibc
import Testing
import TouchlockCommandLine
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// Whether this process may make a mount namespace of its own (root, or unprivileged
/// user namespaces allowed), in which /proc can be hidden.
private let mayHideProc: Bool = access("/usr/bin/unshare", X_OK) == 0 && system("/usr/bin/unshare -rm true 2>/dev/null") == 0

/// The built binaries' command lines, as a user (or a script) meets them.
@Suite final class CommandLineProcessTests {
    let dir: String
    init() throws {
        var template = Array("/tmp/touchlock-cli-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        dir = String(cString: made)
    }
    deinit { _ = system("rm -rf '\(dir)'") }

    func daemon(_ args: [String]) throws -> (status: Int32, output: String, errors: String) {
        try runApart([DaemonProcess.binary] + args, in: dir)
    }

    func ctl(_ args: [String], input: String = "") throws -> (status: Int32, output: String, errors: String) {
        try runApart([DaemonProcess.ctl] + args, input: input, in: dir)
    }

    @Test func helpGoesToStandardOutputAndExitsZeroForEveryCommand() throws {
        for (r, name) in [(try daemon(["--help"]), "touchlockd"), (try daemon(["-h"]), "touchlockd"),
                          (try ctl(["--help"]), "touchlockctl"), (try ctl(["-h"]), "touchlockctl")] {
            #expect(r.status == 0 && r.errors.isEmpty, "\(name): \(r)")
            #expect(r.output.hasPrefix("usage: \(name) [options]"), "\(r.output)")
            #expect(r.output.contains("Exit status: 0 "), "\(r.output)")
        }
        for command in ["status", "wait-unlock", "subscribe", "lock", "metrics", "enroll", "set-secret", "hash-pattern", "hash-code",
                        "replay", "preview"] {
            // Without a daemon, and before any other check of the command line.
            let r = try ctl(["--socket", dir + "/nothing.sock", command, "--help"])
            #expect(r.status == 0 && r.errors.isEmpty, "\(command): \(r)")
            #expect(r.output.hasPrefix("usage: touchlockctl \(command)"), "\(command): \(r.output)")
            #expect(r.output.contains("-h, --help"), "\(command): \(r.output)")
        }
    }

    /// Every help, of both programs and every command, fits a terminal's 80 columns.
    @Test func everyHelpFitsEightyColumns() throws {
        var helps = [("touchlockd", try daemon(["--help"]).output), ("touchlockctl", try ctl(["--help"]).output)]
        for command in ["status", "wait-unlock", "subscribe", "lock", "metrics", "enroll", "message", "lockout", "set-secret",
                        "hash-pattern", "hash-code", "replay", "preview"] {
            helps.append(("touchlockctl \(command)", try ctl([command, "--help"]).output))
        }
        for (name, text) in helps {
            #expect(!text.isEmpty, "\(name): no help")
            let long = text.split(separator: "\n").filter { $0.count > 80 }
            #expect(long.isEmpty, "\(name): \(long.count) lines over 80 columns: \(long)")
        }
    }

    /// `-V` is `--version`, for both programs.
    @Test func dashCapitalVPrintsTheVersion() throws {
        for (short, long) in [(try daemon(["-V"]), try daemon(["--version"])), (try ctl(["-V"]), try ctl(["--version"]))] {
            #expect(short.status == 0 && short.errors.isEmpty && !short.output.isEmpty, "\(short)")
            #expect(short.output == long.output, "\(short.output) vs \(long.output)")
        }
    }

    /// A state the preview cannot draw is refused, never drawn as another.
    @Test func aPreviewOfMoreDigitsThanThePadHoldsIsRefused() throws {
        let out = dir + "/p.png"
        let r = try ctl(["preview", "--screen", "code", "--state", "digits:13", "--out", out])
        #expect(r.status != 0 && r.errors.contains("K is 0 to"), "\(r)")
        #expect(access(out, F_OK) != 0)
        let ok = try ctl(["preview", "--screen", "code", "--state", "digits:3", "--out", out])
        #expect(ok.status == 0, "\(ok)")
    }

    /// `--display auto` (the default) is the KMS display or nothing: on a machine with no
    /// DRM card the daemon exits 1 saying why, and never shows frames nobody sees while
    /// status would say the lock screen is shown.
    @Test(.enabled(if: access("/dev/dri/card0", F_OK) != 0, "this machine has a DRM card"))
    func withNoCardTheDefaultDisplayExitsOneSayingWhy() throws {
        try DurableFile.replace(dir + "/t.conf", with: Array("[pattern]\nmin_length = 4\n".utf8), mode: 0o644)
        for args in [[String](), ["--display", "auto"], ["--display", "drm"]] {
            let r = try daemon(["--config-root", dir, "-C", dir + "/t.conf", "--socket", dir + "/t.sock",
                                "--state", dir + "/state"] + args)
            #expect(r.status == 1, "\(args): \(r)")
            #expect(r.errors.contains("no usable DRM display"), "\(args): \(r.errors)")
            #expect(!r.errors.contains("first frame shown"), "\(args): \(r.errors)")
            #expect(access(dir + "/t.sock", F_OK) != 0, "\(args): a socket was made")
        }
    }

    /// At boot the kiosk's compositor may come after touchlockd: under `cover = session-lock`
    /// a start waits for it (`[display] wayland_wait_s`), then says what it waited for. A
    /// socket nobody listens on is waited for too; with 0, no wait at all.
    @Test func underTheSessionLockAStartWaitsForTheCompositorThenSaysWhatItWaitedFor() throws {
        let socket = dir + "/wayland-9"
        func start(wait: Int) throws -> (result: (status: Int32, output: String, errors: String), seconds: Double) {
            let conf = "[display]\ncover = session-lock\nwayland_socket = \(socket)\nwayland_wait_s = \(wait)\n"
            try DurableFile.replace(dir + "/w.conf", with: Array(conf.utf8), mode: 0o644)
            let t0 = EventLoop.now()
            let r = try daemon(["--config-root", dir, "-C", dir + "/w.conf", "--socket", dir + "/w.sock",
                                "--state", dir + "/state", "--display", "headless"])
            return (r, Double((EventLoop.now() - t0).milliseconds) / 1000)
        }
        let absent = try start(wait: 1)
        #expect(absent.result.status == 1, "\(absent.result)")
        #expect(absent.seconds >= 1.0, "gave up after \(absent.seconds) s")
        #expect(absent.result.errors.contains("no compositor at \(socket) (") && absent.result.errors.contains("waiting up to 1 s"),
                "\(absent.result.errors)")
        #expect(absent.result.errors.contains("after 1 s ([display] wayland_wait_s)"), "\(absent.result.errors)")
        #expect(access(dir + "/w.sock", F_OK) != 0, "a control socket was made")
        // A socket that is there but not listened on (a compositor not yet accepting).
        let fd = boundSocket(at: socket)
        defer { close(fd) }
        let refused = try start(wait: 1)
        #expect(refused.result.status == 1 && refused.seconds >= 1.0, "\(refused)")
        #expect(refused.result.errors.contains("no compositor at \(socket) (") && refused.result.errors.contains("after 1 s"),
                "\(refused.result.errors)")
        let none = try start(wait: 0)
        #expect(none.result.status == 1, "\(none.result)")
        #expect(!none.result.errors.contains("waiting") && none.result.errors.contains("no compositor at \(socket)"),
                "\(none.result.errors)")
    }
    @Test func usageErrorsAreOneLineAndAHintOnStandardErrorWithStatus64() throws {
        let cases: [(result: (status: Int32, output: String, errors: String), errors: String)] = [
            (try daemon(["--bogus"]), "touchlockd: unknown option '--bogus'\nTry 'touchlockd --help'.\n"),
            (try daemon(["--display", "vga"]),
             "touchlockd: --display: expected auto, drm, headless, found 'vga'\nTry 'touchlockd --help'.\n"),
            (try daemon(["--size=10x10"]),
             "touchlockd: --size: expected WxH (64 to 8192 each), found '10x10'\nTry 'touchlockd --help'.\n"),
            (try ctl(["enroll", "--x"]), "touchlockctl: enroll: unknown option '--x'\nTry 'touchlockctl enroll --help'.\n"),
            (try ctl(["enroll", "pin"]),
             "touchlockctl: enroll: SECRET: expected pattern or code, found 'pin'\nTry 'touchlockctl enroll --help'.\n"),
            (try ctl(["enroll", "pattern", "--duress"]),
             "touchlockctl: enroll: only a code can be a duress code\nTry 'touchlockctl enroll --help'.\n"),
            (try ctl(["hash-code", "--x"]), "touchlockctl: hash-code: unknown option '--x'\nTry 'touchlockctl hash-code --help'.\n"),
            (try ctl(["hash-pattern", "--grid", "1x3"]),
             "touchlockctl: hash-pattern: --grid: expected ROWSxCOLUMNS (2 to 9 each), found '1x3'\nTry 'touchlockctl hash-pattern --help'.\n"),
            (try ctl(["preview", "--out"]),
             "touchlockctl: preview: --out needs a value (FILE.png)\nTry 'touchlockctl preview --help'.\n"),
            (try ctl(["wait-unlock", "--timeout=soon"]),
             "touchlockctl: wait-unlock: --timeout: expected a number of seconds, found 'soon'\nTry 'touchlockctl wait-unlock --help'.\n"),
            (try ctl(["replay"]), "touchlockctl: replay: missing RECORDING\nTry 'touchlockctl replay --help'.\n"),
            (try ctl([]), "touchlockctl: no command given\nTry 'touchlockctl --help'.\n"),
            (try ctl(["frob"]), "touchlockctl: unknown command 'frob'\nTry 'touchlockctl --help'.\n"),
        ]
        for (r, errors) in cases {
            #expect(r.status == 64 && r.output.isEmpty && r.errors == errors, "\(r)")
        }
    }

    @Test func bothBinariesSayTheSameVersion() throws {
        let d = try daemon(["--version"]), c = try ctl(["--version"])
        #expect(d.status == 0 && d.output == "touchlockd \(TouchlockVersion.current)\n" && d.errors.isEmpty)
        #expect(c.status == 0 && c.output == "touchlockctl \(TouchlockVersion.current)\n" && c.errors.isEmpty)
    }

    @Test func hashCodeTakesTheSameCodesAsThePad() throws {
        var r = try ctl(["hash-code"], input: "123\n")
        #expect(r.status == 1 && r.output.isEmpty
                && r.errors == "touchlockctl: hash-code: a code has at least 4 digits and at most 12; this one has 3\n")
        r = try ctl(["hash-code"], input: "1234567890123\n")
        #expect(r.status == 1 && r.errors.contains("this one has 13"))
        r = try ctl(["hash-code"], input: "12a4\n")
        #expect(r.status == 1 && r.errors.contains("digits only"))
        r = try ctl(["hash-code"], input: "2580\n")
        #expect(r.status == 0 && r.output.hasPrefix("$y$") && r.errors.contains("code_length = 4"), "\(r)")
    }

    /// Runs `args` where /proc is an empty tmpfs (a mount namespace of its own, as a
    /// chroot without /proc has it); exit 99 if /proc could not be hidden.
    func withoutProc(_ args: [String], input: String = "") throws -> (status: Int32, output: String, errors: String) {
        let script = "mount -t tmpfs tmpfs /proc && [ ! -e /proc/self/cmdline ] || exit 99; exec /usr/bin/timeout 20 \"$@\""
        return try runApart(["/usr/bin/unshare", "-rm", "/bin/sh", "-c", script, "sh"] + args, input: input, in: dir)
    }

    @Test(.enabled(if: mayHideProc, "needs a mount namespace: root, or unprivileged user namespaces"))
    func bothProgramsReadTheirArgumentsWithoutProc() throws {
        // The grid option and the command: a 4x4 pattern, whose node 15 a 3x3 grid lacks.
        var r = try withoutProc([DaemonProcess.ctl, "hash-pattern", "--grid=4x4"], input: "0-5-10-15\n")
        #expect(r.status == 0 && r.errors.isEmpty && r.output.hasPrefix("$y$"), "\(r)")
        var secret = try Pattern(parsing: "0-5-10-15", rows: 4, columns: 4).secretBytes
        #expect(SecretHash.verify(&secret, against: String(r.output.dropLast())))
        // The daemon reads its own: a usage error names the option (had it read none, it
        // would have started).
        r = try withoutProc([DaemonProcess.binary, "--bogus"])
        #expect(r.status == 64 && r.output.isEmpty
                && r.errors == "touchlockd: unknown option '--bogus'\nTry 'touchlockd --help'.\n", "\(r)")
    }
}

/// A Unix socket bound at `path` and never listened on: connecting to it is refused.
private func boundSocket(at path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var a = sockaddr_un()
    a.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &a.sun_path) { raw in
        for (i, b) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
    }
    _ = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
    return fd
}
