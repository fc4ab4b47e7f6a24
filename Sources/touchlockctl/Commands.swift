import TouchlockCommandLine
import TouchlockControl
import TouchlockConfig
import TouchlockCore

/// touchlockctl's commands and their options, declared once: the parser, the help and
/// the usage errors come from here.
enum Commands {
    static let socket = OptionSpec("socket", value: "PATH", values: .file(extensions: []), help: """
        the control socket (default: $\(ControlProtocol.socketEnvironmentVariable),
        else \(ControlProtocol.defaultSocketPath))
        """)
    static let timeout = OptionSpec("timeout", value: "SEC", help: "give up after SEC seconds (exit 1)")

    static let exitStatus = """
        Exit status: 0 on success; 1 on failure (daemon unreachable, timeout, disconnect,
        error reply, bad input on standard input); 64 on a usage error.
        """

    static let program = CommandSpec(
        "touchlockctl", summary: "the client of touchlockd",
        about: "Talks to touchlockd over its control socket, and makes what its config needs.",
        options: [socket],
        subcommands: [
            CommandSpec("status", summary: "print the daemon's state, methods, attempts, secrets and screens",
                        options: [socket, .flag("json", help: "print the protocol's status reply, one JSON line")],
                        footer: exitStatus),
            CommandSpec("wait-unlock", summary: "wait until unlocked and the screen handed back (at once if it is); print the unlocked event line",
                        options: [socket, timeout], footer: exitStatus),
            CommandSpec("subscribe", summary: "print every event line until the daemon goes away",
                        options: [socket], footer: exitStatus),
            CommandSpec("lock", summary: "lock the device again (after an unlock)",
                        options: [socket], footer: exitStatus),
            CommandSpec("metrics", summary: "print the daemon's latency figures as one JSON line",
                        options: [socket, .flag("openmetrics", help: "print the status and the figures as OpenMetrics text")],
                        footer: exitStatus),
            enroll,
            CommandSpec("message", summary: "set the message the lock screen shows, or remove it (--clear)",
                        usage: ["TEXT", "--clear"],
                        about: """
                            Shows TEXT on the lock screen, under the clock, instead of [screen] message,
                            until it is set again or removed; the daemon keeps it across restarts. Plain
                            text on one line, at most \(ScreenMessage.limit) characters, no control
                            characters. --clear removes it (the configured message shows again). Root,
                            and the group [socket] message_group names, if any; not the socket's group.
                            """,
                        options: [socket, .flag("clear", help: "remove the message set before")],
                        arguments: [ArgumentSpec("TEXT", optional: true, help: "the message (quoted as one argument)")],
                        footer: exitStatus),
            CommandSpec("lockout", summary: "root: clear the failure count and the wait (logged)",
                        usage: ["--reset"],
                        about: """
                            Clears the failure count and the wait of a lockout on purpose, also the
                            lockout a damaged state file starts; the daemon writes a whole record and
                            logs who asked. Root only.
                            """,
                        options: [socket, .flag("reset", help: "clear the count and the wait (required)")],
                        footer: exitStatus),
            CommandSpec("set-secret", summary: "root: hash a secret read on standard input into the root-only secrets file",
                        usage: [
                            "pattern|code [--file FILE] [--grid RxC] [--min-length N] [--repeat never|allowed] [-C FILE]",
                            "code --hash HASH|- --length N [--file FILE]",
                            "pattern --hash HASH|- [--file FILE]",
                            "pattern|code --hash-file HASHFILE [--length N] [--file FILE]",
                        ],
                        about: """
                            Reads the secret twice on standard input (one per line; on a terminal,
                            without echo), hashes it and writes the hash into \(SecretFiles.defaultPath)
                            (mode 0600, written whole), with no daemon running. A pattern must be drawn
                            by a finger as written, on the grid and with the min_length and repeat
                            policy in force; a code sets code_length too. It wins over a secret
                            enrolled in the daemon's state.
                            With --hash or --hash-file, a yescrypt hash made elsewhere (hash-code,
                            hash-pattern) is checked and written instead; --hash - reads it on
                            standard input, out of the process list. A file that already holds it is
                            not written. Standard output starts with "changed" or "unchanged".
                            """,
                        options: patternRules + [
                            OptionSpec("file", value: "FILE", help: "the secrets file (default \(SecretFiles.defaultPath))"),
                            OptionSpec("hash", value: "HASH", help: "a yescrypt hash made elsewhere; - reads it on standard input"),
                            OptionSpec("hash-file", value: "HASHFILE", help: "read the hash from HASHFILE (one line)"),
                            OptionSpec("length", value: "N", help: "with a code's hash: its number of digits, \(CodeRules.lengths.lowerBound) to \(CodeRules.lengths.upperBound)"),
                        ],
                        arguments: [ArgumentSpec("SECRET", choices: ["pattern", "code"], help: "which secret: pattern or code")],
                        footer: exitStatus),
            CommandSpec("hash-pattern", summary: "print the salted hash of a pattern read on standard input",
                        about: """
                            Reads a pattern on standard input (node numbers from 0, row by row from the
                            top left, separated by '-' or ',', e.g. 0-1-2-5-8) and prints its salted
                            hash. Only a pattern a finger draws as written is hashed: at least
                            min_length nodes, none twice (with repeat allowed: none right after
                            itself, and one again only where the stroke turns by 45 degrees or more,
                            or ends), and no node passed over on the way between two (it would join
                            there). Keep the hash in a file only root can read:
                            set-secret does it in one step. The pattern never appears on a command line.
                            """,
                        options: patternRules,
                        footer: exitStatus),
            CommandSpec("hash-code", summary: "print the salted hash of a code read on standard input",
                        about: """
                            Reads a code on standard input (\(CodeRules.lengths.lowerBound) to \
                            \(CodeRules.lengths.upperBound) digits) and prints its salted hash for the
                            code_hash setting; set code_length to its number of digits.
                            """,
                        footer: exitStatus),
            CommandSpec("replay", summary: "decode an evemu recording through the touch assembler (no daemon)",
                        about: """
                            Decodes RECORDING through the daemon's touch assembler and prints protocol,
                            frames, sessions and every touch as one JSON object.
                            """,
                        options: [
                            OptionSpec("desc", value: "DESCRIPTION", values: .file(extensions: ["desc"]), help: "the device's description, from another recording"),
                            OptionSpec("quirk", value: "QUIRK", repeats: true, help: "an input quirk (may be given several times)"),
                            .flag("json", help: "print JSON (the only output; required)"),
                        ],
                        arguments: [ArgumentSpec("RECORDING", kind: .file(extensions: ["evemu", "events"]), help: "an evemu recording")],
                        footer: exitStatus),
            CommandSpec("preview", summary: "draw a lock screen in a state as a PNG, without hardware",
                        about: """
                            Draws a lock screen in a given state with the configured theme, without a
                            display, a touchscreen or a daemon.
                              pattern states: \(Preview.states(of: .pattern).joined(separator: ", "))
                              code states:    \(Preview.states(of: .code).joined(separator: ", ")) (K: digits entered)
                              service states: \(Preview.states(of: .service).joined(separator: ", ")) (the service pad)
                            """,
                        options: [
                            OptionSpec("screen", value: "SCREEN", values: .choices(Preview.Screen.allCases.map(\.rawValue)),
                                       help: "pattern (default), code or service (the service pad over the configured screen)"),
                            OptionSpec("state", value: "STATE", values: .choices(previewStates), help: "the state to draw (default idle)"),
                            OptionSpec("size", value: "WxH", values: .examples(["1280x800", "800x1280", "480x800"]),
                                       help: "the screen's size (default 1280x800)"),
                            OptionSpec("out", value: "FILE.png", values: .file(extensions: ["png"]), help: "where to write the picture (required)"),
                            OptionSpec("config", short: "C", value: "FILE", values: .file(extensions: ["conf"]), repeats: true,
                                       help: "read settings from FILE (may be given several times)"),
                            OptionSpec("dpi", value: "N", help: "dots per inch of the panel, 30 to 1000"),
                            OptionSpec("rotation", value: "DEG", values: .choices(Rotation.allCases.map { String($0.degrees) }), help: "the picture turned on the panel, clockwise: 0, 90, 180 or 270 (default: [display] rotation)"),
                        ],
                        footer: exitStatus),
            ServiceCommands.keyCommand,
            ServiceCommands.codeCommand,
        ],
        footer: exitStatus)

    static let enroll = CommandSpec(
        "enroll", summary: "enroll or remove a secret (root), or say which are enrolled",
        usage: [
            "pattern|code [--duress]",
            "pattern|code --screen [--timeout SEC]",
            "--remove pattern|code [--duress]",
            "--status",
        ],
        about: """
            Reads the secret twice on standard input (a pattern as node numbers, e.g.
            0-1-2-5-8; a code as digits), one per line (on a terminal, without echo),
            checks it against the daemon's screen, hashes it here and sends only the hash.
            With --screen, the daemon shows its enrollment screen and the secret is drawn
            (typed) twice there. A code has as many digits as the daemon's pad has boxes.
            """,
        options: [
            socket,
            .flag("duress", help: "the duress code (unlocks, and tells subscribers)"),
            .flag("remove", help: "remove the secret"),
            .flag("status", help: "say which secrets are enrolled"),
            .flag("screen", help: "draw (type) the secret on the daemon's screen;\nprint the enrolled or enroll_failed event"),
            OptionSpec("timeout", value: "SEC", help: "with --screen: give up after SEC seconds"),
        ],
        arguments: [ArgumentSpec("SECRET", optional: true, choices: ["pattern", "code"], help: "which secret: pattern or code")],
        footer: exitStatus)

    /// The states `preview --state` draws: the pattern's, then the code's it lacks.
    static let previewStates: [String] = Preview.Screen.allCases.flatMap(Preview.states).reduce(into: []) { all, s in
        if !all.contains(s) { all.append(s) }
    }
    /// The grid and minimum length a pattern is checked against (default: the config in force).
    static let patternRules = [
        OptionSpec("grid", value: "RxC", values: .examples(["3x3", "4x4", "5x5"]), help: "the grid's rows and columns, 2 to 9 each (default: the config's, else 3x3)"),
        OptionSpec("min-length", value: "N", help: "the fewest nodes a pattern connects (default: the config's min_length, else 4)"),
        OptionSpec("repeat", value: "POLICY", values: .choices(PatternRepeat.allCases.map(\.rawValue)),
                   help: "never or allowed: whether a node can be chosen again (default: the config's repeat, else never)"),
        OptionSpec("config", short: "C", value: "FILE", help: "read settings from FILE too, after the daemon's (may be given several times)"),
    ]

    /// A number of seconds, 0 or more.
    static func seconds(_ text: String) throws(UsageError) -> Interval {
        guard let s = Double(text), s.isFinite, s >= 0, s < 1e9 else {
            throw UsageError("expected a number of seconds, found '\(text)'")
        }
        return Interval(microseconds: Int64(s * 1_000_000))
    }

    /// "WxH", each side 64 to 8192 pixels.
    static func size(_ v: String) throws(UsageError) -> Size {
        let (w, h) = try OptionValue.pair(v, "WxH", in: 64...8192)
        return Size(width: w, height: h)
    }
}

extension Invocation {
    /// The socket named on the command line (after or before the command), else in the
    /// environment, else the default.
    var socket: String {
        parsed.value("socket") ?? global.value("socket") ?? getenvString(ControlProtocol.socketEnvironmentVariable)
            ?? ControlProtocol.defaultSocketPath
    }

    /// The option's value through `convert`; a bad value is a usage error of this command.
    func value<T>(_ name: String, _ convert: (String) throws(UsageError) -> T) throws(EarlyExit) -> T? {
        do { return try parsed.value(name, convert) } catch { throw usageError(error.message) }
    }
}
