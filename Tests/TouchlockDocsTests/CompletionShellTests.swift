import Foundation
import Testing
@testable import TouchlockCommandLine

/// The completion files as the shells run them: every command, each command's options
/// and every value of an option or argument that has a list, as the definitions have them.
@Suite struct CompletionShellTests {
    /// A completion to ask for: the words before the cursor and the one being typed.
    struct Case {
        var words: [String]
        var expected: [String]
    }

    /// Every case the definitions give, and those issue reports asked for by name.
    static var cases: [Case] {
        let program = Tree.ctl
        var cases = [
            Case(words: [""], expected: program.subcommands.map(\.name)),
            Case(words: ["lo"], expected: ["lock", "lockout"]),
            Case(words: ["--"], expected: ["--socket", "--help", "--version"]),
            Case(words: ["--socket", "/tmp/x.sock", "w"], expected: ["wait-unlock"]),
            Case(words: ["lockout", "--"], expected: ["--socket", "--reset", "--help"]),
            Case(words: ["preview", "--rotation", ""], expected: ["0", "90", "180", "270"]),
            Case(words: ["enroll", "pattern", "--s"], expected: ["--socket", "--status", "--screen"]),
        ]
        for command in program.subcommands {
            cases.append(Case(words: [command.name, "--"], expected: command.options.map { "--\($0.name)" } + ["--help"]))
            for option in command.options {
                guard case .choices(let values) = option.values else { continue }
                cases.append(Case(words: [command.name, "--\(option.name)", ""], expected: Completions.words(values)))
            }
            for argument in command.arguments where !argument.choices.isEmpty {
                cases.append(Case(words: [command.name, ""], expected: argument.choices))
            }
        }
        return cases
    }

    func run(_ args: [String], input: String? = nil) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: args[0])
        p.arguments = Array(args.dropFirst())
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/bash-completion/bash_completion"),
                   "needs bash-completion"))
    func bash() throws {
        let cases = Self.cases
        // COMP_WORDS as bash splits a line: '=' and ':' are words of their own
        // (COMP_WORDBREAKS); the script joins them again.
        var script = """
            . /usr/share/bash-completion/bash_completion
            . '\(Tree.path("completions/touchlockctl.bash"))'
            c() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
                  COMPREPLY=(); _touchlockctl touchlockctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                  echo "${COMPREPLY[*]}"; }
            # The same, the line as typed first (bash reads from it where words touched).
            cl() { local line=$1; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE=$line
                   COMP_POINT=${#COMP_LINE}; COMPREPLY=()
                   _touchlockctl touchlockctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; echo "${COMPREPLY[*]}"; }

            """
        for c in cases {
            script += "c touchlockctl " + c.words.map { "'\($0)'" }.joined(separator: " ") + "\n"
        }
        // '=' and ':' as bash splits them.
        script += "cl 'touchlockctl preview --state=dig' touchlockctl preview --state = dig\n"
        script += "cl 'touchlockctl preview --state digits:' touchlockctl preview --state digits : ''\n"
        script += "cl 'touchlockctl preview --rotation=1' touchlockctl preview --rotation = 1\n"
        let lines = try run(["/bin/bash", "-c", script]).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (i, c) in cases.enumerated() {
            let got = i < lines.count ? lines[i].split(separator: " ").map(String.init) : []
            #expect(Set(got) == Set(c.expected), "touchlockctl \(c.words.joined(separator: " "))<TAB>")
        }
        #expect(Array(lines.dropFirst(cases.count).prefix(3)) == ["digits:2", "2", "180"], "\(lines.suffix(4))")
    }

    /// Whether `typed`'s characters appear in `word` in their order (fish's fuzzy match).
    static func isSubsequence(_ typed: String, of word: String) -> Bool {
        var rest = Substring(word)
        for ch in typed {
            guard let i = rest.firstIndex(of: ch) else { return false }
            rest = rest[rest.index(after: i)...]
        }
        return true
    }

    /// fish's TAB offers the candidates that start with the word typed. fish 4's
    /// `complete -C` also lists those the word only matches fuzzily (its characters in
    /// order: `--duress` for `--s`), which TAB leaves out while a prefix match exists
    /// (fish 3 lists none): those must be fuzzy matches, nothing else.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/fish"), "needs fish"))
    func fish() throws {
        for c in Self.cases {
            let line = "touchlockctl " + c.words.joined(separator: " ")
            let typed = c.words.last ?? ""
            let out = try run(["/usr/bin/fish", "--no-config", "-c",
                               "source '\(Tree.path("completions/touchlockctl.fish"))'; complete -C '\(line)'"])
            let got = out.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
            let offered = got.filter { $0.hasPrefix(typed) }
            #expect(Set(offered) == Set(c.expected), "\(line)<TAB>: \(out)")
            let fuzzy = got.filter { !$0.hasPrefix(typed) }
            #expect(fuzzy.allSatisfy { Self.isSubsequence(typed, of: $0) }, "\(line)<TAB>: \(out)")
        }
    }

    /// Types each line and a TAB into an interactive zsh on a pseudo-terminal (zpty),
    /// compinit loading completions/; prints "N WORD" for each word the completion of the
    /// Nth line offers (compadd, wrapped, reports them).
    static let zshTyper = #"""
        zmodload zsh/zpty
        zpty z zsh -f -i
        zpty -w z "PS1=''; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
        zpty -w z 'compadd() { if [[ "$*" == *-[OAD]* ]]; then builtin compadd "$@"; return; fi
            local -a h; builtin compadd -A h "$@"; local r=$?
            (( $#h )) && print -r -- "" "HIT>"${^h}"<HIT"; builtin compadd "$@"; return $r }'
        zpty -w z 'zstyle ":completion:*" list-prompt ""; zstyle ":completion:*" menu no; LISTMAX=1000000'
        # TAB completes, then says so: nothing is typed ahead of a completion under way.
        zpty -w z 'complete-then-say() { zle complete-word; print -r -- "" "DONE<" }; zle -N complete-then-say; bindkey "^I" complete-then-say'
        zpty -w z 'print READY"<"'
        while zpty -r z line; do [[ $line == *'READY<'* ]] && break; done
        shift
        n=0
        for typed in "$@"; do
          (( n++ ))
          zpty -w -n z "$typed"$'\t'
          while zpty -r z line; do
            while [[ $line =~ 'HIT>([^<]*)<HIT' ]]; do print -r -- "$n $match[1]"; line=${line#*<HIT}; done
            [[ $line == *'DONE<'* ]] && break
          done
          zpty -w z $'\C-u'
        done
        zpty -d z
        """#

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh"), "needs zsh"))
    func zsh() throws {
        #expect(try run(["/usr/bin/zsh", "-n", Tree.path("completions/_touchlockctl")]) == "")
        let cases = Self.cases
        let lines = cases.map { "touchlockctl " + $0.words.joined(separator: " ") }
        let out = try run(["/usr/bin/timeout", "60", "/usr/bin/zsh", "-f", "-c", Self.zshTyper, "zsh",
                           Tree.path("completions")] + lines)
        var offered: [Int: Set<String>] = [:]
        for line in out.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let n = Int(parts[0]) else { continue }
            offered[n - 1, default: []].insert(String(parts[1]))
        }
        for (i, c) in cases.enumerated() {
            #expect(offered[i] ?? [] == Set(c.expected), "\(lines[i])<TAB>: \(offered[i] ?? [])")
        }
    }
}
