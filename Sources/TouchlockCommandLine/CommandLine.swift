/// One command-line convention for touchlockd and touchlockctl, declared once per
/// command: the parser, the help text and the usage errors all come from the same
/// declaration, so they cannot disagree.
///
/// - `--name VALUE` and `--name=VALUE` for every option that takes a value; `-X VALUE`
///   and `-XVALUE` for its short form, where it has one; `--` ends the options.
/// - A flag takes no value: `--once=yes` (and `--help=yes`) is a usage error naming it.
/// - Short options bundle as with getopt: `-vh` is `-v -h`, and in `-vCFILE` or
///   `-vC FILE` the first letter that takes a value takes the rest.
/// - `-h`/`--help` prints the help on standard output and exits 0 (on every command);
///   `-V`/`--version` prints the version and exits 0.
/// - A usage error is one line on standard error, then one line naming the help, and
///   exit status 64 (EX_USAGE); never the whole help.
///
/// Pure Swift: parsing returns values and texts, the binaries write them and exit.

/// The exit statuses both binaries use.
public enum ExitStatus {
    public static let success: Int32 = 0
    /// The command was understood but failed (daemon unreachable, bad input, error reply).
    public static let failure: Int32 = 1
    /// The command line itself is wrong (sysexits.h EX_USAGE).
    public static let usage: Int32 = 64
}

/// The version of touchlock, the same for every binary.
public enum TouchlockVersion {
    public static let current = "0.1.0"
}

/// What the value of an option (or an argument) is: what the shells' completions offer
/// for it, and which words the man pages must name.
public enum ValueKind: Sendable, Hashable {
    /// Anything (a number, a name): nothing to offer.
    case text
    /// One of these words, and no other (a word with a number to fill in is written
    /// with an upper-case placeholder: `digits:K`).
    case choices([String])
    /// Typical values, offered; others are taken too.
    case examples([String])
    /// A file; with extensions, files that end so are offered.
    case file(extensions: [String])
    case directory
}

/// One option a command takes.
public struct OptionSpec: Sendable, Hashable {
    /// Without the dashes: "socket" is `--socket`.
    public var name: String
    /// The one-letter form, if any: "C" is `-C`.
    public var short: Character?
    /// The placeholder of its value in the help ("PATH"); nil for a flag.
    public var value: String?
    /// What its value is (for a flag: `.text`, unused).
    public var values: ValueKind
    /// Meant to be given more than once (each value counts).
    public var repeats: Bool
    public var help: String

    public init(_ name: String, short: Character? = nil, value: String? = nil, values: ValueKind = .text,
                repeats: Bool = false, help: String) {
        self.name = name; self.short = short; self.value = value; self.values = values; self.repeats = repeats
        self.help = help
    }

    public static func flag(_ name: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(name, short: short, help: help)
    }

    /// How the option reads in help and errors: "-C, --config FILE".
    var spelling: String {
        let long = "--\(name)" + (value.map { " \($0)" } ?? "")
        return short.map { "-\($0), \(long)" } ?? long
    }
}

/// One positional argument.
public struct ArgumentSpec: Sendable, Hashable {
    public var name: String
    public var help: String
    public var optional: Bool
    /// The values it may take; empty: any.
    public var choices: [String]
    /// What it is when it is not one of `choices` (a file).
    public var kind: ValueKind

    public init(_ name: String, optional: Bool = false, choices: [String] = [], kind: ValueKind = .text, help: String) {
        self.name = name; self.optional = optional; self.choices = choices; self.kind = kind; self.help = help
    }

    /// What it takes: its choices, else its kind.
    public var values: ValueKind { choices.isEmpty ? kind : .choices(choices) }
}

/// A command: its options, its arguments, and its subcommands (touchlockctl's).
public struct CommandSpec: Sendable {
    public var name: String
    /// One line, shown in the parent's list of commands.
    public var summary: String
    /// Usage lines after the command's full name; generated when empty.
    public var usage: [String]
    /// Paragraphs shown after the usage line.
    public var about: String?
    public var options: [OptionSpec]
    public var arguments: [ArgumentSpec]
    public var subcommands: [CommandSpec]
    /// Shown at the end of the help (exit statuses, examples).
    public var footer: String?

    public init(_ name: String, summary: String, usage: [String] = [], about: String? = nil,
                options: [OptionSpec] = [], arguments: [ArgumentSpec] = [], subcommands: [CommandSpec] = [],
                footer: String? = nil) {
        self.name = name; self.summary = summary; self.usage = usage; self.about = about
        self.options = options; self.arguments = arguments; self.subcommands = subcommands; self.footer = footer
    }

    static let help = OptionSpec.flag("help", short: "h", help: "show this help and exit")
    static let version = OptionSpec.flag("version", short: "V", help: "print the version and exit")
}

/// A usage error: the message, without the program's name.
public struct UsageError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The options and arguments given to one command.
public struct ParsedArguments: Sendable, Hashable {
    /// The values of each option given, in order; a flag has one empty value per use.
    public private(set) var options: [String: [String]] = [:]
    public private(set) var arguments: [String] = []

    public init() {}

    /// True when the flag was given.
    public func flag(_ name: String) -> Bool { options[name] != nil }
    /// The last value given to the option.
    public func value(_ name: String) -> String? { options[name]?.last }
    /// Every value given to the option, in order.
    public func values(_ name: String) -> [String] { options[name] ?? [] }

    /// The option's last value through `convert`, whose error message is prefixed with the option.
    public func value<T>(_ name: String, _ convert: (String) throws(UsageError) -> T) throws(UsageError) -> T? {
        guard let v = value(name) else { return nil }
        do { return try convert(v) } catch { throw UsageError("--\(name): \(error.message)") }
    }

    mutating func add(_ option: OptionSpec, _ value: String) { options[option.name, default: []].append(value) }
    mutating func add(argument: String) { arguments.append(argument) }
}

/// What a command line asks for.
public struct Invocation: Sendable, Hashable {
    /// The names of the commands, from the program's: ["touchlockctl", "enroll"].
    public var path: [String]
    /// The options of the program itself, before the subcommand (touchlockctl --socket).
    public var global: ParsedArguments
    /// The options and arguments of the command named last.
    public var parsed: ParsedArguments

    /// The subcommand's name; nil when the program was run without one.
    public var command: String? { path.count > 1 ? path.last : nil }
    public var fullName: String { path.joined(separator: " ") }

    /// A usage error found after parsing (a combination of options that does not go
    /// together, a value of the wrong form), in the same form as the parser's own.
    public func usageError(_ message: String) -> EarlyExit {
        EarlyExit(text: CommandLineParser.render(message, path: path), status: ExitStatus.usage)
    }
}

/// Stop before running: a text to print (on standard output when `status` is 0, else on
/// standard error) and the status to exit with.
public struct EarlyExit: Error, Hashable, Sendable {
    public var text: String
    public var status: Int32
    public init(text: String, status: Int32) { self.text = text; self.status = status }
    public var toStandardOutput: Bool { status == ExitStatus.success }
}

/// The outcome of parsing: run, or the text to show and the status to exit with.
public enum CommandLineOutcome: Sendable, Hashable {
    case run(Invocation)
    /// For standard output; exit 0.
    case help(String)
    /// For standard output; exit 0.
    case version(String)
    /// Two lines for standard error; exit 64.
    case usageError(String)

    public var exitStatus: Int32 {
        switch self {
        case .run, .help, .version: ExitStatus.success
        case .usageError: ExitStatus.usage
        }
    }

    /// The invocation to run, or what to print and exit with instead.
    public func invocation() throws(EarlyExit) -> Invocation {
        switch self {
        case .run(let invocation): return invocation
        case .help(let text), .version(let text): throw EarlyExit(text: text, status: ExitStatus.success)
        case .usageError(let text): throw EarlyExit(text: text, status: ExitStatus.usage)
        }
    }
}

public enum CommandLineParser {
    /// Parses `arguments` (without the program's name) against `program`.
    public static func parse(_ arguments: [String], program: CommandSpec) -> CommandLineOutcome {
        var path = [program.name]
        var rest = arguments[...]
        var global = ParsedArguments()
        var command = program
        do throws(UsageError) {
            if !program.subcommands.isEmpty {
                // The program's own options, then the name of a command.
                switch try parseOptions(&rest, of: program, into: &global, stopAtArgument: true) {
                case .help: return .help(help(program, path: path))
                case .version: return .version(versionText(program))
                case .none: break
                }
                guard let name = rest.popFirst() else { throw UsageError("no command given") }
                guard let sub = program.subcommands.first(where: { $0.name == name }) else {
                    throw UsageError("unknown command '\(name)'")
                }
                command = sub
                path.append(name)
            }
            var parsed = ParsedArguments()
            switch try parseOptions(&rest, of: command, into: &parsed, stopAtArgument: false) {
            case .help: return .help(help(command, path: path))
            case .version: return .version(versionText(program))
            case .none: break
            }
            try check(parsed.arguments, of: command)
            return .run(Invocation(path: path, global: global, parsed: parsed))
        } catch {
            return .usageError(render(error.message, path: path))
        }
    }

    /// "touchlockctl: enroll: unknown option '--x'" and the line naming the help.
    static func render(_ message: String, path: [String]) -> String {
        let prefix = path.map { "\($0): " }.joined()
        return "\(prefix)\(message)\nTry '\(path.joined(separator: " ")) --help'."
    }

    private enum Early { case help, version }

    /// Reads options (and, unless `stopAtArgument`, arguments) from `rest`. Stops at the
    /// first argument when `stopAtArgument`.
    private static func parseOptions(_ rest: inout ArraySlice<String>, of command: CommandSpec,
                                     into parsed: inout ParsedArguments, stopAtArgument: Bool) throws(UsageError) -> Early? {
        var early: Early?
        var onlyArguments = false
        while let arg = rest.first {
            if onlyArguments || arg == "-" || !arg.hasPrefix("-") {
                if stopAtArgument { return early }
                rest.removeFirst()
                parsed.add(argument: arg)
                continue
            }
            rest.removeFirst()
            if arg == "--" { onlyArguments = true; continue }
            do throws(UsageError) {
                try parseOption(arg, &rest, of: command, into: &parsed, early: &early)
            } catch {
                // Asking for help wins over a mistake beside it.
                if early == .help || rest.prefix(while: { $0 != "--" }).contains(where: { asksForHelp($0, of: command) }) {
                    return .help
                }
                throw error
            }
        }
        return early
    }

    /// Reads the option `arg` (and its value from `rest`): one long option, or a bundle
    /// of short ones (`-vh` is `-v -h`; the first that takes a value takes the rest of the
    /// bundle, or else the next argument: `-vCFILE`, `-vC FILE`).
    private static func parseOption(_ arg: String, _ rest: inout ArraySlice<String>, of command: CommandSpec,
                                    into parsed: inout ParsedArguments, early: inout Early?) throws(UsageError) {
        guard arg.hasPrefix("--") else {
            var letters = arg.dropFirst()
            while let letter = letters.popFirst() {
                if letter == "h" { early = early ?? .help; continue }
                if letter == "V" { early = early ?? .version; continue }
                guard let option = command.options.first(where: { $0.short == letter }) else {
                    throw UsageError("unknown option '-\(letter)'" + (arg.count > 2 ? " (in '\(arg)')" : ""))
                }
                guard option.value != nil else { parsed.add(option, ""); continue }
                try take(option, inline: letters.isEmpty ? nil : String(letters), &rest, into: &parsed)
                return
            }
            return
        }
        let body = arg.dropFirst(2)
        let name: Substring
        var inline: String?
        if let eq = body.firstIndex(of: "=") {
            name = body[..<eq]
            inline = String(body[body.index(after: eq)...])
        } else {
            name = body
        }
        // One rule for every flag, --help and --version included: it takes no value.
        if name == "help" || name == "version" {
            if inline != nil { throw UsageError("--\(name) takes no value") }
            early = early ?? (name == "help" ? .help : .version)
            return
        }
        guard let option = command.options.first(where: { $0.name == name }) else {
            throw UsageError("unknown option '--\(name)'")
        }
        guard option.value != nil else {
            if inline != nil { throw UsageError("--\(option.name) takes no value") }
            return parsed.add(option, "")
        }
        try take(option, inline: inline, &rest, into: &parsed)
    }

    /// The value of `option`: `inline` (after '=', or the rest of a short bundle), else
    /// the next argument.
    private static func take(_ option: OptionSpec, inline: String?, _ rest: inout ArraySlice<String>,
                             into parsed: inout ParsedArguments) throws(UsageError) {
        if let inline { return parsed.add(option, inline) }
        // A value may start with '-' (a negative number, standard input), but not with
        // "--": "--out --size 640x400" is a missing value, not a file named "--size"
        // ("--out=--size" says so if it is meant).
        guard let v = rest.popFirst(), !v.hasPrefix("--") else {
            throw UsageError("--\(option.name) needs a value (\(option.value ?? ""))")
        }
        parsed.add(option, v)
    }

    /// Whether `arg` asks for help: `--help`, or `-h` alone or in a bundle of flags.
    private static func asksForHelp(_ arg: String, of command: CommandSpec) -> Bool {
        if arg == "--help" { return true }
        guard arg.hasPrefix("-"), !arg.hasPrefix("--") else { return false }
        for letter in arg.dropFirst() {
            if letter == "h" { return true }
            // A letter that takes a value takes the rest of the bundle with it.
            if command.options.first(where: { $0.short == letter })?.value != nil { return false }
        }
        return false
    }

    private static func check(_ arguments: [String], of command: CommandSpec) throws(UsageError) {
        for (i, a) in arguments.enumerated() {
            guard i < command.arguments.count else { throw UsageError("unexpected argument '\(a)'") }
            let spec = command.arguments[i]
            if !spec.choices.isEmpty && !spec.choices.contains(a) {
                throw UsageError("\(spec.name): expected \(list(spec.choices)), found '\(a)'")
            }
        }
        if let missing = command.arguments.dropFirst(arguments.count).first(where: { !$0.optional }) {
            throw UsageError("missing \(missing.name)")
        }
    }

    static func list(_ words: [String]) -> String {
        switch words.count {
        case 0: return ""
        case 1: return words[0]
        default: return words.dropLast().joined(separator: ", ") + " or " + words.last!
        }
    }

    static func versionText(_ program: CommandSpec) -> String {
        "\(program.name) \(TouchlockVersion.current)"
    }

    /// The width every help text fits in: a terminal's 80 columns.
    public static let helpWidth = 80

    /// `line` broken at spaces into lines of at most `width` columns, the lines after the
    /// first indented by `indent` spaces (a word longer than the room is left whole).
    static func wrap(_ line: String, width: Int, indent: Int) -> [String] {
        guard line.count > width else { return [line] }
        let lead = line.prefix(while: { $0 == " " })
        var lines: [String] = []
        var current = String(lead)
        var empty = true
        // A bracketed group ("[-C FILE]") is kept on one line.
        var words: [String] = []
        var depth = 0
        for piece in line.dropFirst(lead.count).split(separator: " ") {
            if depth > 0, let last = words.popLast() { words.append(last + " " + piece) } else { words.append(String(piece)) }
            depth = max(0, depth + piece.filter { $0 == "[" }.count - piece.filter { $0 == "]" }.count)
        }
        for word in words {
            if !empty, current.count + 1 + word.count > width {
                lines.append(current)
                current = String(repeating: " ", count: indent)
                empty = true
            }
            current += (empty ? "" : " ") + word
            empty = false
        }
        lines.append(current)
        return lines
    }

    /// A text of the help (an about, a footer): each line over the width broken, its
    /// continuation indented as the line itself. What a broken line leaves over runs on
    /// into the next line of the same paragraph (same indent, not blank, not an item of a
    /// list), so a sentence written over several lines is not cut into a short line.
    static func fitted(_ text: String) -> String {
        var out: [String] = []
        var carry: (indent: Int, words: String)?
        for l in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = String(l)
            let indent = line.prefix(while: { $0 == " " }).count
            let body = line.dropFirst(indent)
            if let c = carry {
                if c.indent == indent, !body.isEmpty, !startsAnItem(body) {
                    line = String(repeating: " ", count: indent) + c.words + " " + body
                } else {
                    out.append(String(repeating: " ", count: c.indent) + c.words)
                }
                carry = nil
            }
            var pieces = wrap(line, width: helpWidth, indent: indent)
            if pieces.count > 1, let last = pieces.popLast() {
                carry = (indent, String(last.dropFirst(indent)))
            }
            out += pieces
        }
        if let c = carry { out.append(String(repeating: " ", count: c.indent) + c.words) }
        return out.joined(separator: "\n")
    }

    /// Whether a line's text starts an item of a list ("- ...", "* ...", "1. ...") or an
    /// example (a command), which starts a line of its own.
    private static func startsAnItem(_ body: Substring) -> Bool {
        if body.hasPrefix("- ") || body.hasPrefix("* ") || body.hasPrefix("touchlock") { return true }
        let digits = body.prefix(while: { $0.isNumber })
        return !digits.isEmpty && (body.dropFirst(digits.count).hasPrefix(". ") || body.dropFirst(digits.count).hasPrefix(") "))
    }

    /// The help of `command`: usage, about, commands, arguments, options, footer, every
    /// line within `helpWidth` columns.
    public static func help(_ command: CommandSpec, path: [String]) -> String {
        let name = path.joined(separator: " ")
        var out = ""
        var usage = command.usage
        if usage.isEmpty {
            var words = command.options.isEmpty ? [] : ["[options]"]
            if !command.subcommands.isEmpty { words.append("<command> [options]") }
            words += command.arguments.map { a in
                let shown = a.choices.isEmpty ? a.name : a.choices.joined(separator: "|")
                return a.optional ? "[\(shown)]" : shown
            }
            usage = [words.joined(separator: " ")]
        }
        for (i, line) in usage.enumerated() {
            let head = (i == 0 ? "usage: " : "       ") + name
            for l in wrap(head + (line.isEmpty ? "" : " \(line)"), width: helpWidth, indent: head.count + 1) {
                out += l + "\n"
            }
        }
        if let about = command.about { out += "\n\(fitted(about))\n" }
        func table(_ title: String, _ rows: [(String, String)]) {
            guard !rows.isEmpty else { return }
            out += "\n\(title):\n"
            let width = min(max(rows.map(\.0.count).max() ?? 0, 10), 24)
            let room = helpWidth - (width + 4)
            for (left, right) in rows {
                let lines = right.split(separator: "\n", omittingEmptySubsequences: false)
                    .flatMap { wrap(String($0), width: room, indent: 0) }
                if left.count > width {
                    out += "  \(left)\n"
                    for l in lines { out += String(repeating: " ", count: width + 4) + l + "\n" }
                } else {
                    for (k, l) in lines.enumerated() {
                        let head = k == 0 ? left : ""
                        out += "  " + head + String(repeating: " ", count: width - head.count + 2) + l + "\n"
                    }
                }
            }
        }
        table("Commands", command.subcommands.map { ($0.name, $0.summary) })
        table("Arguments", command.arguments.map { ($0.name, $0.help) })
        var options = command.options
        options.append(CommandSpec.help)
        if path.count == 1 { options.append(CommandSpec.version) }
        table("Options", options.map { ($0.spelling, $0.help) })
        if !command.subcommands.isEmpty {
            out += "\nRun '\(name) <command> --help' for the options of a command.\n"
        }
        if let footer = command.footer { out += "\n\(fitted(footer))\n" }
        return out
    }
}

/// Values of the forms several options share.
public enum OptionValue {
    /// "AxB" (a size "WxH", a grid "RxC"), each number in `range`.
    public static func pair(_ v: String, _ form: String, in range: ClosedRange<Int>) throws(UsageError) -> (Int, Int) {
        let p = v.split(separator: "x", omittingEmptySubsequences: false)
        guard p.count == 2, let a = Int(p[0]), let b = Int(p[1]), range.contains(a), range.contains(b) else {
            throw UsageError("expected \(form) (\(range.lowerBound) to \(range.upperBound) each), found '\(v)'")
        }
        return (a, b)
    }
}
