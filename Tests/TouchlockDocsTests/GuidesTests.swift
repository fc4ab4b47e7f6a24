import Foundation
import Testing
import TouchlockCommandLine
import TouchlockCore

/// The README and the guides under docs/ against the code: every setting the config
/// accepts, every command and option of both programs, every benchmark of touchlock-bench
/// and every action of the state machines is where the docs say; the code paths and names
/// the architecture and contributing guides give exist; every relative link resolves. The
/// lists come from the code (the config's table, the command-line definitions, the Swift
/// sources), never from a copy kept here.
@Suite struct GuidesTests {
    // MARK: Markdown, as far as these checks read it

    /// `text`'s parts under each heading (any level): the heading's line without its
    /// hashes, and the lines up to the next heading.
    static func sections(_ text: String) -> [(title: String, body: String)] {
        var parts: [(title: String, body: String)] = [("", "")]
        var fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle() }
            if !fenced, line.hasPrefix("#") {
                parts.append((line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces), ""))
            } else {
                parts[parts.count - 1].body += line + "\n"
            }
        }
        return parts
    }

    /// The rows of the tables in `text`, each as its cells (trimmed), separator rows left out.
    static func rows(_ text: String) -> [[String]] {
        text.split(separator: "\n").compactMap { line -> [String]? in
            let l = line.trimmingCharacters(in: .whitespaces)
            guard l.hasPrefix("|"), l.hasSuffix("|") else { return nil }
            let cells = l.replacingOccurrences(of: "\\|", with: "\u{1}").dropFirst().dropLast()
                .split(separator: "|", omittingEmptySubsequences: false)
                .map { $0.replacingOccurrences(of: "\u{1}", with: "|").trimmingCharacters(in: .whitespaces) }
            if cells.allSatisfy({ $0.allSatisfy { "-: ".contains($0) } }) { return nil }
            return cells
        }
    }

    /// The words in backquotes in `text`.
    static func quoted(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The anchor GitHub gives a heading: lower case, spaces to hyphens, and nothing but
    /// letters, digits, hyphens and underscores kept.
    static func anchor(_ title: String) -> String {
        String(title.lowercased().compactMap { c -> Character? in
            if c == " " { return "-" }
            return c.isLetter || c.isNumber || c == "-" || c == "_" ? c : nil
        })
    }

    static func matches(_ pattern: String, in text: String) throws -> [[String]] {
        let re = try NSRegularExpression(pattern: pattern)
        let ns = text as NSString
        return re.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { m in
            (0..<m.numberOfRanges).map { i in
                m.range(at: i).location == NSNotFound ? "" : ns.substring(with: m.range(at: i))
            }
        }
    }

    static var markdownFiles: [String] {
        get throws {
            let docs = try FileManager.default.contentsOfDirectory(atPath: Tree.path("docs"))
                .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
            return ["README.md"] + docs
        }
    }

    // MARK: Settings

    /// Every key of the config's table has a row in docs/configuring.md's settings table,
    /// under its section, with its flat name; and every key a row names is one.
    @Test func everySettingIsInConfiguringUnderItsSection() throws {
        let doc = try Tree.text("docs/configuring.md")
        var section = ""
        var documented: [(section: String, names: [String], flat: String)] = []
        for cells in Self.rows(doc) where cells.count >= 5 && cells[0] != "section" {
            if !cells[0].isEmpty { section = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`[]")) }
            documented.append((section, Self.quoted(cells[1]), cells[2]))
        }
        #expect(!documented.isEmpty, "docs/configuring.md has no settings table")
        for key in Config.keys {
            let rows = documented.filter { $0.section == key.section && $0.names.contains(key.name) }
            guard let row = rows.first else {
                Issue.record("docs/configuring.md: no row for [\(key.section)] \(key.name)"); continue
            }
            #expect(rows.count == 1, "docs/configuring.md: [\(key.section)] \(key.name) has \(rows.count) rows")
            let flat = row.flat
            switch key.flatName {
            case nil:
                #expect(flat == "(none)", "docs/configuring.md: [\(key.section)] \(key.name) has no flat name, the table says \(flat)")
            case let name? where name == key.name:
                #expect(flat == "same" || Self.quoted(flat).contains(name),
                        "docs/configuring.md: [\(key.section)] \(key.name)'s flat name is the same, the table says \(flat)")
            case let name?:
                let prefixes = Self.quoted(flat).filter { $0.hasSuffix("...") }.map { String($0.dropLast(3)) }
                #expect(Self.quoted(flat).contains(name) || prefixes.contains { name.hasPrefix($0) },
                        "docs/configuring.md: [\(key.section)] \(key.name)'s flat name \(name) is not in its row (\(flat))")
            }
        }
        for row in documented {
            for name in row.names where !Config.keys.contains(where: { $0.section == row.section && $0.name == name }) {
                Issue.record("docs/configuring.md names [\(row.section)] \(name), which the daemon does not accept")
            }
        }
        #expect(Set(documented.map(\.section)) == Set(Config.sections), "docs/configuring.md: the sections")
    }

    // MARK: Commands and options

    /// The table of command lines in docs/integrating.md has a row for touchlockd and for
    /// every touchlockctl command, naming every option it takes and none it does not.
    @Test func everyCommandAndOptionIsInIntegrating() throws {
        let doc = try Tree.text("docs/integrating.md")
        let rows = Self.rows(doc).filter { $0.count >= 3 && $0[0].hasPrefix("`touchlock") }
        let universal: Set<String> = ["help", "version"]
        func options(_ cell: String) throws -> Set<String> {
            Set(try Self.matches(#"--([a-z][a-z-]*)"#, in: cell).map { $0[1] })
        }
        func check(_ title: String, _ spec: CommandSpec, global: Set<String>) throws {
            guard let row = rows.first(where: { $0[0] == "`\(title)`" }) else {
                Issue.record("docs/integrating.md: no row for `\(title)`"); return
            }
            let own = Set(spec.options.map(\.name)).subtracting(universal)
            let named = try options(row[1])
            for o in own.subtracting(named).sorted() { Issue.record("docs/integrating.md: `\(title)` without --\(o)") }
            for o in named.subtracting(own).subtracting(global).sorted() {
                Issue.record("docs/integrating.md: `\(title)` names --\(o), which it does not take")
            }
            #expect(!row[2].isEmpty, "docs/integrating.md: `\(title)` says nothing of what it does")
        }
        try check("touchlockd", Tree.daemon, global: [])
        let global = Set(Tree.ctl.options.map(\.name)).subtracting(universal)
        try check("touchlockctl", Tree.ctl, global: [])
        for command in Tree.ctl.subcommands {
            try check("touchlockctl \(command.name)", command, global: global)
        }
        let known = Set(["`touchlockd`", "`touchlockctl`"] + Tree.ctl.subcommands.map { "`touchlockctl \($0.name)`" })
        for row in rows where !known.contains(row[0]) {
            Issue.record("docs/integrating.md has a row for \(row[0]), which is no command")
        }
    }

    // MARK: Benchmarks

    /// The benchmarks touchlock-bench runs one at a time (`--only NAME`), read from its
    /// source, are each named in docs/benchmarks.md, and it names no other.
    @Test func everyBenchmarkIsInBenchmarks() throws {
        let source = try Tree.text("Sources/touchlock-bench/main.swift")
        let names = Set(try Self.matches(#"only\.contains\("([a-z]+)"\)"#, in: source).map { $0[1] })
        #expect(names.count >= 3, "touchlock-bench's benchmarks were not found in its source")
        let doc = try Tree.text("docs/benchmarks.md")
        for name in names.sorted() {
            #expect(doc.contains("`--only \(name)`"), "docs/benchmarks.md does not name the benchmark `--only \(name)`")
        }
        for stale in Set(try Self.matches(#"`--only ([a-z]+)`"#, in: doc).map { $0[1] }).subtracting(names) {
            Issue.record("docs/benchmarks.md names `--only \(stale)`, which touchlock-bench does not run")
        }
        // scripts/bench writes the page anew: its generator says the same.
        let generator = try Tree.text("scripts/bench-report.py")
        for name in names.sorted() {
            #expect(generator.contains("`--only \(name)`"), "scripts/bench-report.py does not write `--only \(name)`")
        }
    }

    // MARK: State machines

    /// The cases of `enum Action` in `source`: the first word of each `case` line one level
    /// inside it (several per line, associated values left out).
    static func actionCases(in source: String) -> [String] {
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.contains("enum Action:") || $0.contains("enum Action {") }) else { return [] }
        let indent = lines[start].prefix { $0 == " " }.count
        var names: [String] = []
        for line in lines[(start + 1)...] {
            let depth = line.prefix { $0 == " " }.count
            let body = line.trimmingCharacters(in: .whitespaces)
            if body == "}" && depth == indent { break }
            guard depth == indent + 4, body.hasPrefix("case ") else { continue }
            // "case a(X, Y), b" -> a, b: commas inside parentheses are not separators.
            var level = 0, current = "", parts: [String] = []
            for c in body.dropFirst(5) {
                if c == "(" { level += 1 } else if c == ")" { level -= 1 }
                if c == ",", level == 0 { parts.append(current); current = "" } else { current.append(c) }
            }
            parts.append(current)
            for p in parts {
                let name = p.trimmingCharacters(in: .whitespaces).prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                if !name.isEmpty { names.append(String(name)) }
            }
        }
        return names
    }

    /// Every action of every state machine in Core (each `enum Action`) is named in the
    /// part of docs/state-machines.md about its file.
    @Test func everyActionIsInStateMachines() throws {
        let core = Tree.path("Sources/TouchlockCore")
        let files = try FileManager.default.contentsOfDirectory(atPath: core).filter { $0.hasSuffix(".swift") }.sorted()
        let parts = Self.sections(try Tree.text("docs/state-machines.md"))
        var machines = 0
        for file in files {
            let names = Self.actionCases(in: try Tree.text("Sources/TouchlockCore/" + file))
            guard !names.isEmpty else { continue }
            machines += 1
            guard let part = parts.first(where: { $0.title.contains("TouchlockCore/\(file)") }) else {
                Issue.record("docs/state-machines.md has no part for TouchlockCore/\(file), whose machine has actions"); continue
            }
            for name in names where !part.body.contains("`\(name)`") && !part.body.contains("`\(name)(") {
                Issue.record("docs/state-machines.md, \(part.title): the action `\(name)` is not named")
            }
        }
        #expect(machines >= 8, "only \(machines) machines with actions found in Sources/TouchlockCore")
    }

    // MARK: Code paths and names

    /// The files and directories `doc` names (Sources/..., Tests/..., scripts/..., a
    /// target's file such as TouchlockCore/Session.swift, or a bare Name.swift).
    static func paths(in doc: String) throws -> [String] {
        let roots = "Sources|Tests|scripts|docs|Modules|data|systemd|debian|man|Fuzz|completions|openrc"
        let targets = "Touchlock[A-Za-z]*|touchlockd|touchlockctl|touchlock-bench"
        let pattern = #"(?<![A-Za-z0-9_./-])((?:(?:"# + roots + "|" + targets + #")/[A-Za-z0-9_.+/-]*[A-Za-z0-9_+/])|[A-Z][A-Za-z0-9+]*\.swift)"#
        return try matches(pattern, in: doc).map { $0[1] }
    }

    /// Whether `path`, as a doc names it, exists: from the top of the tree, under Sources/,
    /// or (a bare file name) anywhere under Sources or Tests.
    static func exists(_ path: String) -> Bool {
        let fm = FileManager.default
        if fm.fileExists(atPath: Tree.path(path)) || fm.fileExists(atPath: Tree.path("Sources/" + path)) { return true }
        guard !path.contains("/") else { return false }
        for top in ["Sources", "Tests"] {
            guard let all = fm.enumerator(atPath: Tree.path(top)) else { continue }
            for case let p as String in all where (p as NSString).lastPathComponent == path { return true }
        }
        return false
    }

    /// Every type the sources declare (class, struct, enum, protocol, actor, typealias),
    /// and every target (a directory of Sources or Modules).
    static var declaredTypes: Set<String> {
        get throws {
            let fm = FileManager.default
            var names = Set(try fm.contentsOfDirectory(atPath: Tree.path("Sources"))
                + fm.contentsOfDirectory(atPath: Tree.path("Modules")))
            guard let all = fm.enumerator(atPath: Tree.path("Sources")) else { return [] }
            for case let p as String in all where p.hasSuffix(".swift") {
                let text = try Tree.text("Sources/" + p)
                for m in try matches(#"\b(?:class|struct|enum|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9]*)"#, in: text) {
                    names.insert(m[1])
                }
            }
            return names
        }
    }

    /// The files, types and members docs/architecture.md and docs/contributing.md name
    /// exist: a path, a `Type` or a `Type.member` in backquotes.
    @Test func theCodeTheArchitectureAndContributingGuidesNameExists() throws {
        let types = try Self.declaredTypes
        var sources = ""
        if let all = FileManager.default.enumerator(atPath: Tree.path("Sources")) {
            for case let p as String in all where p.hasSuffix(".swift") { sources += try Tree.text("Sources/" + p) }
        }
        for doc in ["docs/architecture.md", "docs/contributing.md"] {
            let text = try Tree.text(doc)
            let paths = try Self.paths(in: text)
            #expect(paths.count >= 5, "\(doc): too few paths found to check")
            for path in Set(paths).sorted() where !Self.exists(path) {
                Issue.record("\(doc) names \(path), which does not exist")
            }
            for word in Set(Self.quoted(text)).sorted() {
                guard word.range(of: #"^[A-Z][a-z][A-Za-z0-9]*(\.[a-z][A-Za-z0-9]*)?$"#, options: .regularExpression) != nil else { continue }
                let parts = word.split(separator: ".").map(String.init)
                guard types.contains(parts[0]) else {
                    Issue.record("\(doc) names `\(word)`: no type or target \(parts[0]) is in Sources"); continue
                }
                if parts.count == 2, sources.range(of: #"\b"# + parts[1] + #"\b"#, options: .regularExpression) == nil {
                    Issue.record("\(doc) names `\(word)`: \(parts[1]) is nowhere in Sources")
                }
            }
        }
    }

    // MARK: Links

    /// The guides other work adds; links to them are checked once they are in the tree.
    static let coming: Set<String> = ["docs/service-codes.md", "docs/config-management.md", "docs/mqtt.md"]

    /// Every relative link and picture in README.md and docs/*.md points at a file of the
    /// tree, and a `#part` of a Markdown file at one of its headings.
    @Test func everyRelativeLinkResolves() throws {
        var checked = 0
        for file in try Self.markdownFiles {
            let text = try Tree.text(file)
            let dir = (file as NSString).deletingLastPathComponent
            for m in try Self.matches(#"\]\(([^)\s]+)\)"#, in: text) {
                let link = m[1]
                if link.hasPrefix("http://") || link.hasPrefix("https://") || link.hasPrefix("mailto:") { continue }
                let pieces = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let target = pieces[0].isEmpty ? file : (((dir as NSString).appendingPathComponent(pieces[0])) as NSString).standardizingPath
                checked += 1
                if Self.coming.contains(target) && !FileManager.default.fileExists(atPath: Tree.path(target)) { continue }
                guard FileManager.default.fileExists(atPath: Tree.path(target)) else {
                    Issue.record("\(file): the link \(link) points at \(target), which does not exist"); continue
                }
                if pieces.count == 2, target.hasSuffix(".md") {
                    let anchors = Set(Self.sections(try Tree.text(target)).map { Self.anchor($0.title) })
                    #expect(anchors.contains(pieces[1]), "\(file): the link \(link): \(target) has no heading #\(pieces[1])")
                }
            }
        }
        #expect(checked >= 30, "only \(checked) links found")
    }

    // MARK: The first screen

    /// A newcomer finds the two commands, where Swift comes from, and a line for each
    /// guide on the README's first screen.
    @Test func theReadmeGivesTheTwoCommandsAndTheGuidesOnItsFirstScreen() throws {
        let lines = try Tree.text("README.md").split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 80, "README.md has \(lines.count) lines")
        let top = lines.prefix(25).joined(separator: "\n")
        #expect(top.contains("./scripts/run") && top.contains("./scripts/test"), "the two commands are not in the README's first 25 lines")
        #expect(top.contains("swift.org") && top.contains("scripts/setup"), "the README's first screen does not say where Swift and the packages come from")
        let readme = lines.joined(separator: "\n")
        for guide in ["integrating", "operations", "configuring", "contributing", "fleet", "state-machines", "architecture", "protocol"] {
            #expect(readme.contains("(docs/\(guide).md)"), "README.md does not link docs/\(guide).md")
        }
    }
}
