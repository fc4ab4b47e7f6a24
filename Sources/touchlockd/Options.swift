import TouchlockCommandLine
import TouchlockCore
import TouchlockInput

/// Command-line options of touchlockd.
struct Options {
    enum DisplayChoice: String, CaseIterable { case auto, drm, headless }
    enum InputChoice: String, CaseIterable { case auto, evdev, replay }

    var configFiles: [String] = []
    /// Prefix of `Paths.data` and `Paths.config` (tests, images).
    var configRoot = ""
    var display = DisplayChoice.auto
    var input = InputChoice.auto
    var replayPath: String?
    var replayPace = ReplaySource.Pace.recording
    var headlessSize = Size(width: 1280, height: 800)
    var headlessOut: String?
    var socketPath: String?
    var statePath: String?
    var once = false
    var verbose = false
    var syslog = false
    var checkConfig = false

    static let command = CommandSpec(
        "touchlockd", summary: "the touch lock screen daemon",
        about: """
            Shows a pattern lock or a code pad on the KMS display, reads the touchscreens
            with libevdev, and tells clients of the control socket when the device is
            unlocked (touchlockctl is such a client).
            """,
        options: [
            OptionSpec("config", short: "C", value: "FILE", values: .file(extensions: ["conf"]), repeats: true, help: """
                read settings from FILE after \(Paths.data) and
                \(Paths.config) (may be given several times; later wins)
                """),
            OptionSpec("config-root", value: "DIR", values: .directory, help: "look for those two directories under DIR"),
            OptionSpec("display", value: "MODE", values: .choices(DisplayChoice.allCases.map(\.rawValue)),
                       help: "auto (default) or drm: the KMS display, else exit 1;\nheadless: frames in memory only (tests, demos)"),
            OptionSpec("input", value: "MODE", values: .choices(InputChoice.allCases.map(\.rawValue)), help: """
                auto (default), evdev: the touchscreens; replay: the
                --replay recording, else the bundled demo (auto never
                replays anything)
                """),
            OptionSpec("replay", value: "FILE", values: .file(extensions: ["evemu", "events"]), help: "an evemu recording to play as the touch input\n(implies --input replay)"),
            OptionSpec("replay-pace", value: "PACE", values: .choices(ReplaySource.Pace.allCases.map(\.rawValue)), help: """
                recording (default): each frame at its recorded time;
                frames: each frame once the previous one is shown (the
                same frames every run)
                """),
            OptionSpec("size", value: "WxH", values: .examples(["1280x800", "800x1280"]), help: "headless screen size (default 1280x800)"),
            OptionSpec("out", value: "DIR", values: .directory, help: "headless: write every frame shown as DIR/frame-NNNNN.png"),
            OptionSpec("socket", value: "PATH", values: .file(extensions: []), help: "control socket (default \(Paths.socket))"),
            OptionSpec("state", value: "FILE", values: .file(extensions: []), help: "lockout and secrets (default \(Paths.stateFile))"),
            .flag("once", help: "exit 0 at the first unlock"),
            .flag("check-config", help: "print the merged settings and exit"),
            .flag("verbose", short: "v", help: "debug logging"),
            .flag("syslog", help: "log to syslog, each line at its priority (facility\ndaemon), not to standard error (OpenRC)"),
        ],
        footer: """
            Exit status: 0 when stopped (SIGTERM, SIGINT), after the first unlock with --once,
            and for --check-config, --help and --version; 1 when it cannot start (a bad
            config file or state file, no display, no input, no control socket); 64 on a
            usage error.
            """)

    /// The options of `arguments` (without the program's name), or what to print instead.
    static func parse(_ arguments: [String]) throws(EarlyExit) -> Options {
        let invocation = try CommandLineParser.parse(arguments, program: command).invocation()
        let p = invocation.parsed
        var o = Options()
        do {
            o.configFiles = p.values("config")
            o.configRoot = p.value("config-root") ?? ""
            o.display = try p.value("display") { v throws(UsageError) in try choice(v, of: DisplayChoice.self) } ?? .auto
            o.input = try p.value("input") { v throws(UsageError) in try choice(v, of: InputChoice.self) } ?? .auto
            o.replayPath = p.value("replay")
            if o.replayPath != nil && o.input == .auto { o.input = .replay }
            o.replayPace = try p.value("replay-pace") { v throws(UsageError) in try choice(v, of: ReplaySource.Pace.self) } ?? .recording
            o.headlessSize = try p.value("size", size) ?? o.headlessSize
            o.headlessOut = p.value("out")
            o.socketPath = p.value("socket")
            o.statePath = p.value("state")
            o.once = p.flag("once")
            o.checkConfig = p.flag("check-config")
            o.verbose = p.flag("verbose")
            o.syslog = p.flag("syslog")
        } catch {
            throw invocation.usageError(error.message)
        }
        if o.replayPath != nil && o.input != .replay {
            throw invocation.usageError("--replay goes with --input replay, not --input \(o.input.rawValue)")
        }
        return o
    }

    static func choice<T: RawRepresentable & CaseIterable>(_ v: String, of: T.Type) throws(UsageError) -> T
    where T.RawValue == String {
        guard let c = T(rawValue: v) else {
            throw UsageError("expected \(T.allCases.map(\.rawValue).joined(separator: ", ")), found '\(v)'")
        }
        return c
    }

    /// "WxH", each side 64 to 8192 pixels.
    static func size(_ v: String) throws(UsageError) -> Size {
        let (w, h) = try OptionValue.pair(v, "WxH", in: 64...8192)
        return Size(width: w, height: h)
    }
}
