/// The shells' completions of a program with commands (touchlockctl), written from the
/// same declaration as its parser and its help: each command, each option and the values
/// each takes. completions/ holds what these write, and a test keeps it equal to them.
public enum Completions {
    public enum Shell: String, CaseIterable, Sendable { case bash, zsh, fish }

    /// The completion script of `program` for `shell`.
    public static func script(_ program: CommandSpec, for shell: Shell) -> String {
        precondition(!program.subcommands.isEmpty, "completions are written for a program with commands")
        switch shell {
        case .bash: return bash(program)
        case .zsh: return zsh(program)
        case .fish: return fish(program)
        }
    }

    /// The file of completions/ that holds `shell`'s script.
    public static func fileName(_ program: CommandSpec, for shell: Shell) -> String {
        switch shell {
        case .bash: "\(program.name).bash"
        case .zsh: "_\(program.name)"
        case .fish: "\(program.name).fish"
        }
    }

    static func header(_ program: CommandSpec, _ shell: Shell) -> String {
        """
        \(shell.rawValue) completion for \(program.name), written from its command-line definitions (those of
        `\(program.name) --help`; see \(program.name)(1)) by Completions.\(shell.rawValue). Do not edit:
        `TOUCHLOCK_UPDATE_GOLDEN=1 swift test --filter CompletionFilesTests` writes it anew.
        """
    }

    /// The words a closed or an open list of values offers: a placeholder to fill in
    /// (`digits:K`) is offered with a number, `digits:2`.
    static func words(_ values: [String]) -> [String] {
        values.map { v in
            guard let colon = v.lastIndex(of: ":"), v[v.index(after: colon)...].allSatisfy(\.isUppercase),
                  v.index(after: colon) != v.endIndex else { return v }
            return v[...colon] + "2"
        }
    }

    /// The help of an option or a command in one line.
    static func oneLine(_ help: String) -> String {
        help.split(whereSeparator: \.isNewline).map { $0.trimmingSpaces }.joined(separator: " ")
    }

    static func options(of command: CommandSpec, top: Bool) -> [OptionSpec] {
        command.options + [CommandSpec.help] + (top ? [CommandSpec.version] : [])
    }

    // MARK: bash

    static func bash(_ program: CommandSpec) -> String {
        let name = program.name
        let fn = "_" + name.replacingDashes
        var out = "# " + header(program, .bash).replacingNewlines(with: "\n# ") + "\n"
        out += """

            # The words of $1 that begin with the word being completed.
            \(fn)_words()
            {
                COMPREPLY=($(compgen -W "$1" -- "$cur"))
                __ltrim_colon_completions "$cur"
            }

            \(fn)()
            {
                local cur prev words cword split
                _init_completion -s -n : || return

                # The command: the first word that is not an option or an option's value.
                local i command=""
                for ((i = 1; i < cword; i++)); do
                    case ${words[i]} in

            """
        let globalTaking = program.options.filter { $0.value != nil }.flatMap { spellings($0) }
        if !globalTaking.isEmpty { out += "            \(globalTaking.joined(separator: " | "))) ((i++)) ;;\n" }
        out += """
                        -*) ;;
                        *) command=${words[i]}; break ;;
                    esac
                done

                # The value of the option before the word being completed.
                case $command:$prev in

            """
        // One branch per action, the command:option pairs that share it together.
        var branches: [(action: String, patterns: [String])] = []
        for (command, key) in [(program, "")] + program.subcommands.map({ ($0, $0.name) }) {
            for option in command.options where option.value != nil {
                let action = bashAction(option.values, fn: fn)
                let patterns = spellings(option).map { "\(key):\($0)" }
                if let i = branches.firstIndex(where: { $0.action == action }) {
                    branches[i].patterns += patterns
                } else {
                    branches.append((action, patterns))
                }
            }
        }
        for b in branches {
            out += "        \(b.patterns.joined(separator: " | ")))\n"
            out += "            \(b.action.isEmpty ? "# anything: nothing to offer" : b.action)\n"
            out += "            return ;;\n"
        }
        out += """
                esac
                # A value given after '=' to an option that takes none: nothing to offer.
                $split && return

                case $command in

            """
        out += "        \"\")\n"
        out += "            if [[ $cur == -* ]]; then\n"
        out += "                \(fn)_words \"\(longNames(options(of: program, top: true)))\"\n"
        out += "            else\n"
        out += "                \(fn)_words \"\(program.subcommands.map(\.name).joined(separator: " "))\"\n"
        out += "            fi ;;\n"
        for command in program.subcommands {
            let opts = longNames(options(of: command, top: false))
            out += "        \(command.name))\n"
            if let argument = command.arguments.first {
                out += "            if [[ $cur == -* ]]; then\n"
                out += "                \(fn)_words \"\(opts)\"\n"
                out += "            else\n"
                out += "                \(bashAction(argument.values, orOptions: opts, fn: fn))\n"
                out += "            fi ;;\n"
            } else {
                out += "            \(fn)_words \"\(opts)\" ;;\n"
            }
        }
        out += """
                esac
            } &&
                complete -F \(fn) \(name)

            """
        return out
    }

    /// -C and --config: the words that name the option.
    static func spellings(_ o: OptionSpec) -> [String] {
        (o.short.map { ["-\($0)"] } ?? []) + ["--\(o.name)"]
    }

    static func longNames(_ options: [OptionSpec]) -> String {
        options.map { "--\($0.name)" }.joined(separator: " ")
    }

    /// What bash offers for a value of `kind` (for an argument of free text: the options).
    static func bashAction(_ kind: ValueKind, orOptions: String? = nil, fn: String) -> String {
        switch kind {
        case .text:
            if let orOptions { return "\(fn)_words \"\(orOptions)\"" }
            return ""
        case .choices(let values), .examples(let values):
            return "\(fn)_words \"\(words(values).joined(separator: " "))\""
        case .file(let extensions):
            switch extensions.count {
            case 0: return "_filedir"
            case 1: return "_filedir \(extensions[0])"
            default: return "_filedir '@(\(extensions.joined(separator: "|")))'"
            }
        case .directory:
            return "_filedir -d"
        }
    }

    // MARK: zsh

    static func zsh(_ program: CommandSpec) -> String {
        let name = program.name
        let fn = "_" + name.replacingDashes
        var out = "#compdef \(name)\n# " + header(program, .zsh).replacingNewlines(with: "\n# ") + "\n\n"
        out += "\(fn)() {\n"
        out += "    local curcontext=$curcontext state line ret=1\n"
        out += "    typeset -A opt_args\n\n"
        out += "    _arguments -C \\\n"
        for spec in zshOptions(options(of: program, top: true)) { out += "        \(spec) \\\n" }
        out += "        '1:command:->command' \\\n"
        out += "        '*::argument:->argument' && ret=0\n\n"
        out += "    case $state in\n"
        out += "        command)\n"
        out += "            local -a commands\n"
        out += "            commands=(\n"
        for command in program.subcommands {
            out += "                \(zshQuote(zshEscape(command.name, ":") + ":" + zshEscape(oneLine(command.summary), ":")))\n"
        }
        out += "            )\n"
        out += "            _describe -t commands '\(name) command' commands && ret=0 ;;\n"
        out += "        argument)\n"
        out += "            curcontext=${curcontext%:*:*}:\(name)-$words[1]:\n"
        out += "            case $words[1] in\n"
        for command in program.subcommands {
            var specs = zshOptions(options(of: command, top: false))
            for (i, a) in command.arguments.enumerated() {
                let action = zshAction(a.values)
                specs.append(zshQuote("\(i + 1):\(a.optional ? ":" : "")\(zshEscape(a.name, ":")):\(action)"))
            }
            out += "                \(command.name))\n"
            out += "                    _arguments \\\n"
            for spec in specs { out += "                        \(spec) \\\n" }
            out += "                        && ret=0 ;;\n"
        }
        out += "            esac ;;\n"
        out += "    esac\n"
        out += "    return ret\n"
        out += "}\n\n"
        out += "\(fn) \"$@\"\n"
        return out
    }

    /// `_arguments` specs: `--name[help]` for a flag, `--name=[help]:VALUE:action` for an
    /// option with a value (after '=' or as the next word); `-C+` for a short form;
    /// `*` in front of one given several times; -h, --help and --version end the line.
    static func zshOptions(_ options: [OptionSpec]) -> [String] {
        options.map { o in
            let help = "[" + zshEscape(oneLine(o.help), "[]") + "]"
            let exclusive = o.name == "help" || o.name == "version"
            let value = o.value.map { ":" + zshEscape($0, ":") + ":" + zshAction(o.values) } ?? ""
            let names: [String]
            if let short = o.short {
                names = ["-\(short)" + (o.value != nil ? "+" : ""), "--\(o.name)" + (o.value != nil ? "=" : "")]
            } else {
                names = ["--\(o.name)" + (o.value != nil ? "=" : "")]
            }
            let exclusion = exclusive ? "(- *)" : o.repeats ? "*" : ""
            if names.count == 1 { return zshQuote(exclusion + names[0] + help + value) }
            // Two names: brace expansion outside the quotes, each spec excluding the other.
            let group = o.repeats || exclusive ? exclusion : "(" + names.map { $0.trimmingSuffix("+=") }.joined(separator: " ") + ")"
            return zshQuote(group) + "{" + names.joined(separator: ",") + "}" + zshQuote(help + value)
        }
    }

    static func zshAction(_ kind: ValueKind) -> String {
        switch kind {
        case .text: return " "
        case .choices(let values), .examples(let values):
            return "(" + words(values).map { zshEscape($0, ": ()") }.joined(separator: " ") + ")"
        case .file(let extensions):
            switch extensions.count {
            case 0: return "_files"
            case 1: return "_files -g \"*.\(extensions[0])(-.)\""
            default: return "_files -g \"*.(\(extensions.joined(separator: "|")))(-.)\""
            }
        case .directory: return "_files -/"
        }
    }

    /// `text` with each of `specials` (and backslashes) escaped by a backslash.
    static func zshEscape(_ text: String, _ specials: String) -> String {
        var out = ""
        for c in text {
            if c == "\\" || specials.contains(c) { out.append("\\") }
            out.append(c)
        }
        return out
    }

    /// `text` in single quotes, a quote in it written '\''.
    static func zshQuote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    // MARK: fish

    static func fish(_ program: CommandSpec) -> String {
        let name = program.name
        var out = "# " + header(program, .fish).replacingNewlines(with: "\n# ") + "\n\n"
        let commands = program.subcommands.map(\.name).joined(separator: " ")
        out += "set -l commands \(commands)\n"
        out += "# No file names unless a value or an argument is a file.\n"
        out += "complete -c \(name) -f\n\n"
        let top = "-n \"not __fish_seen_subcommand_from $commands\""
        for o in options(of: program, top: true) { out += "complete -c \(name) \(top) \(fishOption(o))\n" }
        for command in program.subcommands {
            out += "complete -c \(name) \(top) -a \(command.name) -d \(fishQuote(oneLine(command.summary)))\n"
        }
        for command in program.subcommands {
            out += "\n"
            let after = "-n \"__fish_seen_subcommand_from \(command.name)\""
            for o in options(of: command, top: false) { out += "complete -c \(name) \(after) \(fishOption(o))\n" }
            for a in command.arguments {
                out += "complete -c \(name) \(after) \(fishValues(a.values)) -d \(fishQuote(oneLine(a.help)))\n"
            }
        }
        return out
    }

    static func fishOption(_ o: OptionSpec) -> String {
        var words = o.short.map { ["-s", String($0)] } ?? []
        words += ["-l", o.name]
        if o.value != nil { words.append(fishValues(o.values, required: true)) }
        words += ["-d", fishQuote(oneLine(o.help))]
        return words.joined(separator: " ")
    }

    /// `-r` (a value is required), and what is offered for it.
    static func fishValues(_ kind: ValueKind, required: Bool = false) -> String {
        let r = required ? "-r " : ""
        switch kind {
        case .text: return required ? "-x" : ""
        case .choices(let values), .examples(let values):
            return "\(required ? "-x" : "-f") -a \(fishQuote(words(values).joined(separator: " ")))"
        case .file:
            // fish's own file names: __fish_complete_suffix (3.6) would put a second
            // "--out=" before each name after "--out=".
            return "\(r)-F"
        case .directory: return "\(r)-a '(__fish_complete_directories)'"
        }
    }

    static func fishQuote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }

    func trimmingSuffix(_ characters: String) -> String {
        var s = Substring(self)
        while let last = s.last, characters.contains(last) { s.removeLast() }
        return String(s)
    }

    var replacingDashes: String { String(map { $0 == "-" ? "_" : $0 }) }

    func replacingNewlines(with text: String) -> String {
        split(separator: "\n", omittingEmptySubsequences: false).joined(separator: text)
    }

    func replacingOccurrences(of target: String, with replacement: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound] + replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}
