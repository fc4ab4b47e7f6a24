import Testing
@testable import TouchlockCommandLine

/// A program shaped like touchlockctl: an option of its own, commands with options,
/// arguments and a short form.
private let program = CommandSpec(
    "tool", summary: "a tool",
    options: [OptionSpec("socket", value: "PATH", help: "the socket")],
    subcommands: [
        CommandSpec("wait", summary: "wait", options: [
            OptionSpec("socket", value: "PATH", help: "the socket"),
            OptionSpec("timeout", value: "SEC", help: "give up after SEC seconds"),
        ]),
        CommandSpec("make", summary: "make a thing", options: [
            OptionSpec("config", short: "C", value: "FILE", help: "read FILE"),
            .flag("verbose", short: "v", help: "say more"),
        ], arguments: [ArgumentSpec("KIND", choices: ["pattern", "code"], help: "which"),
                       ArgumentSpec("EXTRA", optional: true, help: "more")]),
    ])

private func run(_ args: [String]) throws -> Invocation {
    try CommandLineParser.parse(args, program: program).invocation()
}

private func usageError(_ args: [String]) -> String? {
    if case .usageError(let text) = CommandLineParser.parse(args, program: program) { return text }
    return nil
}

@Suite struct CommandLineTests {
    @Test func bothSpellingsOfAValueAndShortForms() throws {
        for args in [["wait", "--timeout", "5"], ["wait", "--timeout=5"]] {
            #expect(try run(args).parsed.value("timeout") == "5")
        }
        let m = try run(["make", "-C", "a.conf", "code", "--config=b.conf", "-Cc.conf", "-v", "x"])
        #expect(m.parsed.values("config") == ["a.conf", "b.conf", "c.conf"])
        #expect(m.parsed.flag("verbose") && !m.parsed.flag("nothing"))
        #expect(m.parsed.arguments == ["code", "x"])
        #expect(m.path == ["tool", "make"] && m.command == "make")
        // "--" ends the options; an empty value is a value.
        #expect(try run(["make", "--", "pattern", "-v"]).parsed.arguments == ["pattern", "-v"])
        #expect(try run(["wait", "--timeout="]).parsed.value("timeout") == "")
    }

    @Test func theProgramsOptionsComeBeforeTheCommandTheCommandsAfter() throws {
        let i = try run(["--socket", "/a", "wait", "--socket=/b"])
        #expect(i.global.value("socket") == "/a" && i.parsed.value("socket") == "/b")
        #expect(usageError(["--socket", "/a"]) == "tool: no command given\nTry 'tool --help'.")
        #expect(usageError(["--timeout", "1", "wait"]) == "tool: unknown option '--timeout'\nTry 'tool --help'.")
        #expect(usageError(["frob"]) == "tool: unknown command 'frob'\nTry 'tool --help'.")
    }

    @Test func usageErrorsAreOneLineAndAHintNamingTheCommandsHelp() {
        #expect(usageError(["wait", "--x"]) == "tool: wait: unknown option '--x'\nTry 'tool wait --help'.")
        #expect(usageError(["wait", "-x"]) == "tool: wait: unknown option '-x'\nTry 'tool wait --help'.")
        #expect(usageError(["wait", "--timeout"]) == "tool: wait: --timeout needs a value (SEC)\nTry 'tool wait --help'.")
        // An option where a value was expected is a missing value, not the value.
        #expect(usageError(["make", "pattern", "--config", "--verbose"])
                == "tool: make: --config needs a value (FILE)\nTry 'tool make --help'.")
        #expect(usageError(["make", "pattern", "--verbose=yes"])
                == "tool: make: --verbose takes no value\nTry 'tool make --help'.")
        #expect(usageError(["make", "pattern", "-vC"]) == "tool: make: --config needs a value (FILE)\nTry 'tool make --help'.")
        #expect(usageError(["make", "pattern", "-vx"]) == "tool: make: unknown option '-x' (in '-vx')\nTry 'tool make --help'.")
        #expect(usageError(["make"]) == "tool: make: missing KIND\nTry 'tool make --help'.")
        #expect(usageError(["make", "pin"])
                == "tool: make: KIND: expected pattern or code, found 'pin'\nTry 'tool make --help'.")
        #expect(usageError(["make", "code", "x", "y"]) == "tool: make: unexpected argument 'y'\nTry 'tool make --help'.")
        for args in [["wait", "--x"], ["make"], ["frob"]] {
            #expect(CommandLineParser.parse(args, program: program).exitStatus == 64)
            #expect(throws: EarlyExit.self) { try run(args) }
        }
        // Errors found after parsing read the same.
        let i = try? run(["wait"])
        #expect(i?.usageError("--timeout applies to --screen only")
                == EarlyExit(text: "tool: wait: --timeout applies to --screen only\nTry 'tool wait --help'.", status: 64))
    }

    @Test func helpAndVersionWinOverEverythingElseAndExitZero() throws {
        for args in [["--help"], ["-h"], ["--socket", "/a", "-h"]] {
            guard case .help(let text) = CommandLineParser.parse(args, program: program) else {
                Issue.record("\(args): no help"); continue
            }
            #expect(text.hasPrefix("usage: tool [options] <command> [options]\n"))
            #expect(text.contains("\nCommands:\n  wait        wait\n  make        make a thing\n"), "\(text)")
            #expect(text.contains("--version"))
        }
        // Help of a command, even with errors beside it.
        for args in [["make", "--help"], ["make", "-h", "--bogus"], ["make", "pin", "--help"]] {
            guard case .help(let text) = CommandLineParser.parse(args, program: program) else {
                Issue.record("\(args): no help"); continue
            }
            #expect(text.hasPrefix("usage: tool make [options] pattern|code [EXTRA]\n"), "\(text)")
            #expect(text.contains("  -C, --config FILE  read FILE\n"), "\(text)")
            #expect(text.contains("  -h, --help"))
        }
        #expect(CommandLineParser.parse(["--version"], program: program) == .version("tool \(TouchlockVersion.current)"))
        #expect(CommandLineParser.parse(["wait", "--version"], program: program).exitStatus == 0)
        #expect(throws: EarlyExit(text: "tool \(TouchlockVersion.current)", status: 0)) { try run(["--version"]) }
    }

    @Test func shortOptionsBundleAsWithGetopt() throws {
        // Flags together; the first letter that takes a value takes the rest, or the next word.
        var m = try run(["make", "-vCa.conf", "code"])
        #expect(m.parsed.flag("verbose") && m.parsed.values("config") == ["a.conf"] && m.parsed.arguments == ["code"])
        m = try run(["make", "-vC", "b.conf", "code"])
        #expect(m.parsed.flag("verbose") && m.parsed.values("config") == ["b.conf"])
        // After a letter that takes a value, the rest is its value, 'v' and 'h' included.
        m = try run(["make", "-Cvh", "code"])
        #expect(!m.parsed.flag("verbose") && m.parsed.values("config") == ["vh"])
        // -h in a bundle asks for help, even beside a mistake.
        for args in [["make", "-vh"], ["make", "-hv"], ["make", "pin", "-vh"], ["make", "--bogus", "-vh"]] {
            guard case .help(let text) = CommandLineParser.parse(args, program: program) else {
                Issue.record("\(args): no help"); continue
            }
            #expect(text.hasPrefix("usage: tool make "), "\(text)")
        }
        // A value that merely contains an 'h' does not.
        #expect(usageError(["make", "--bogus", "-Ch"]) == "tool: make: unknown option '--bogus'\nTry 'tool make --help'.")
    }

    @Test func noFlagTakesAValueHelpAndVersionIncluded() {
        // The one rule: a flag given as --flag=VALUE is refused, naming it.
        #expect(usageError(["--help=yes"]) == "tool: --help takes no value\nTry 'tool --help'.")
        #expect(usageError(["--version=1"]) == "tool: --version takes no value\nTry 'tool --help'.")
        #expect(usageError(["make", "code", "--help=no"]) == "tool: make: --help takes no value\nTry 'tool make --help'.")
        #expect(usageError(["make", "code", "--verbose="]) == "tool: make: --verbose takes no value\nTry 'tool make --help'.")
        // An option that takes a value takes an empty one.
        #expect(usageError(["wait", "--timeout="]) == nil)
    }

    @Test func convertedValuesNameTheirOption() throws {
        let i = try run(["wait", "--timeout", "soon"])
        #expect(throws: UsageError("--timeout: expected seconds, found 'soon'")) {
            try i.parsed.value("timeout") { v throws(UsageError) -> Double in
                guard let d = Double(v) else { throw UsageError("expected seconds, found '\(v)'") }
                return d
            }
        }
        #expect(try OptionValue.pair("640x400", "WxH", in: 64...8192) == (640, 400))
        #expect(throws: UsageError("expected WxH (64 to 8192 each), found '640x'")) {
            try OptionValue.pair("640x", "WxH", in: 64...8192)
        }
        #expect(throws: UsageError("expected RxC (2 to 9 each), found '3x10'")) { try OptionValue.pair("3x10", "RxC", in: 2...9) }
    }

    @Test func aProgramWithoutCommandsTakesItsOptionsAndArguments() throws {
        let single = CommandSpec("daemon", summary: "", options: [.flag("once", help: "once")])
        guard case .run(let i) = CommandLineParser.parse(["--once"], program: single) else {
            Issue.record("not run"); return
        }
        #expect(i.parsed.flag("once") && i.command == nil && i.fullName == "daemon")
        #expect(CommandLineParser.parse(["x"], program: single)
                == .usageError("daemon: unexpected argument 'x'\nTry 'daemon --help'."))
    }
}
