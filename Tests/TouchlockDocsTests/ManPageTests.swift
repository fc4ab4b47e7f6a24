import Foundation
import Testing
@testable import TouchlockCommandLine
import TouchlockControl

/// A man page read as its reader sees the words: sections, and in each the `.TP` entries
/// (the tag line, then the paragraph under it), escapes and font changes taken out.
struct ManPage {
    struct Entry {
        var head: String
        var body: String
        var text: String { head + "\n" + body }
    }
    var sections: [String: [Entry]] = [:]

    init(_ source: String) {
        var section = ""
        var entry: Entry?
        var wantHead = false
        func close() {
            if let e = entry { sections[section, default: []].append(e) }
            entry = nil
        }
        for raw in source.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            if line.hasPrefix(".\\\"") { continue }
            let (macro, text) = Self.decode(line)
            switch macro {
            case "SH", "SS":
                close()
                section = text.uppercased()
                sections[section, default: []] = sections[section] ?? []
            case "TP":
                close()
                wantHead = true
            case "PP", "P", "LP":
                close()
            default:
                if wantHead {
                    entry = Entry(head: text, body: "")
                    wantHead = false
                } else if entry != nil {
                    entry!.body += text + "\n"
                }
            }
        }
        close()
    }

    subscript(_ section: String) -> [Entry] { sections[section] ?? [] }

    /// The macro of a line (nil for text) and its words as shown.
    static func decode(_ line: String) -> (macro: String?, text: String) {
        guard line.hasPrefix(".") else { return (nil, unescape(line)) }
        let body = line.dropFirst()
        let macro = String(body.prefix { !$0.isWhitespace })
        let args = arguments(String(body.dropFirst(macro.count)))
        let alternating = ["BR", "RB", "BI", "IB", "IR", "RI"].contains(macro)
        return (macro, unescape(args.joined(separator: alternating ? "" : " ")))
    }

    /// The arguments of a macro: words, or "quoted words".
    static func arguments(_ text: String) -> [String] {
        var args: [String] = []
        var current = ""
        var quoted = false, inWord = false
        for c in text {
            if c == "\"" { quoted.toggle(); inWord = true; continue }
            if c.isWhitespace && !quoted {
                if inWord { args.append(current); current = ""; inWord = false }
                continue
            }
            current.append(c)
            inWord = true
        }
        if inWord { args.append(current) }
        return args
    }

    static func unescape(_ text: String) -> String {
        var out = ""
        var it = Array(text)[...]
        while let c = it.popFirst() {
            guard c == "\\", let next = it.popFirst() else { out.append(c); continue }
            switch next {
            case "-": out.append("-")
            case "e": out.append("\\")
            case "&", "c": break
            case "f":  // \fB, \f(CW
                if it.first == "(" { it = it.dropFirst(3) } else { it = it.dropFirst() }
            case "(":
                let name = String(it.prefix(2)); it = it.dropFirst(2)
                out += ["aq": "'", "dq": "\"", "em": "-", "en": "-"][name] ?? ""
            default: out.append(next)
            }
        }
        return out
    }
}

/// Whether `word` stands in `text` as a word of its own (not inside a longer one).
func mentions(_ text: String, _ word: String) -> Bool {
    func part(_ c: Character?) -> Bool { c.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } ?? false }
    var rest = text[...]
    while let r = rest.firstRange(of: word) {
        let before = r.lowerBound > text.startIndex ? text[text.index(before: r.lowerBound)] : nil
        let after = r.upperBound < text.endIndex ? text[r.upperBound] : nil
        if !part(before) && !part(after) { return true }
        rest = text[r.upperBound...]
    }
    return false
}

/// The long options (`--name`) written in `text`.
func longOptions(in text: String) -> Set<String> {
    var found: Set<String> = []
    var rest = text[...]
    while let r = rest.firstRange(of: "--") {
        let name = text[r.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "-" }
        if !name.isEmpty, name.first!.isLetter { found.insert(String(name)) }
        rest = text[r.upperBound...]
    }
    return found
}

/// The words a man page must have for each value of `kind` (none for open lists).
func requiredWords(_ kind: ValueKind) -> [String] {
    if case .choices(let words) = kind { return words }
    return []
}

/// touchlockctl(1) and touchlockd(8) against the programs' declarations: every command,
/// option and value of a closed list is in the page, where it belongs, and no option is
/// there that the program does not take.
@Suite struct ManPageTests {
    static let universal: Set<String> = ["help", "version"]

    @Test func touchlockctlDocumentsEveryCommandOptionAndValueAndNothingElse() throws {
        let page = ManPage(try Tree.text("man/touchlockctl.1"))
        let program = Tree.ctl
        let entries = page["COMMANDS"]
        let optionsSection = page["OPTIONS"]
        #expect(!entries.isEmpty && !optionsSection.isEmpty)
        // Each entry is a command's.
        for e in entries {
            let first = String(e.head.prefix { !$0.isWhitespace })
            #expect(program.subcommands.contains { $0.name == first }, "COMMANDS has an entry for no command: \(e.head)")
        }
        let global = Set(program.options.map(\.name))
        for command in program.subcommands {
            let own = entries.filter { $0.head.prefix { !$0.isWhitespace } == command.name }
            #expect(!own.isEmpty, "touchlockctl(1) has no entry for the command \(command.name)")
            let text = own.map(\.text).joined(separator: "\n")
            for option in command.options where !global.contains(option.name) {
                // In the command's entry, or in OPTIONS in an entry that names the command.
                let optionEntry = optionsSection.first {
                    longOptions(in: $0.head).contains(option.name) && mentions($0.body, command.name)
                }
                let place = longOptions(in: text).contains(option.name) ? text : optionEntry?.text
                guard let place else {
                    Issue.record("touchlockctl(1) does not document \(command.name) --\(option.name)"); continue
                }
                if let short = option.short {
                    #expect(mentions(place, "-\(short)"), "touchlockctl(1): \(command.name) --\(option.name) without -\(short)")
                }
                for value in requiredWords(option.values) {
                    #expect(mentions(place, value), "touchlockctl(1): \(command.name) --\(option.name) without its value \(value)")
                }
            }
            for argument in command.arguments {
                for value in requiredWords(argument.values) {
                    #expect(mentions(text, value), "touchlockctl(1): \(command.name) without its \(argument.name) \(value)")
                }
            }
            // Nothing stale: the options the entry names are the command's.
            let known = Set(command.options.map(\.name)).union(Self.universal).union(global)
            for name in longOptions(in: text).subtracting(known) {
                Issue.record("touchlockctl(1): the entry of \(command.name) names --\(name), which it does not take")
            }
        }
        let every = Set(program.subcommands.flatMap { $0.options.map(\.name) }).union(global).union(Self.universal)
        for e in optionsSection {
            for name in longOptions(in: e.head).subtracting(every) {
                Issue.record("touchlockctl(1): OPTIONS names --\(name), which no command takes")
            }
        }
        for name in global {
            #expect(optionsSection.contains { longOptions(in: $0.head).contains(name) }, "touchlockctl(1): no --\(name) in OPTIONS")
        }
        #expect(optionsSection.contains { mentions($0.head, "-h") && longOptions(in: $0.head).contains("help") })
        #expect(optionsSection.contains { longOptions(in: $0.head).contains("version") })
    }

    @Test func touchlockctlNamesEveryStateAndEvent() throws {
        let entries = ManPage(try Tree.text("man/touchlockctl.1"))["COMMANDS"]
        func entry(_ command: String) -> String {
            entries.filter { $0.head.hasPrefix(command) }.map(\.text).joined(separator: "\n")
        }
        for state in Status.State.allCases {
            #expect(mentions(entry("status"), state.rawValue), "touchlockctl(1), status: the state \(state.rawValue)")
        }
        for event in ProtocolDocTests.events {
            #expect(mentions(entry("subscribe"), event.name), "touchlockctl(1), subscribe: the event \(event.name)")
        }
    }

    @Test func touchlockdDocumentsEveryOptionAndValueAndNothingElse() throws {
        let page = ManPage(try Tree.text("man/touchlockd.8"))
        let command = Tree.daemon
        let entries = page["OPTIONS"]
        for option in command.options + [CommandSpec.help, CommandSpec.version] {
            guard let e = entries.first(where: { longOptions(in: $0.head).contains(option.name) }) else {
                Issue.record("touchlockd(8) does not document --\(option.name)"); continue
            }
            if let short = option.short {
                #expect(mentions(e.head, "-\(short)"), "touchlockd(8): --\(option.name) without -\(short)")
            }
            if let placeholder = option.value {
                #expect(mentions(e.head, placeholder), "touchlockd(8): --\(option.name) without its \(placeholder)")
            }
            for value in requiredWords(option.values) {
                #expect(mentions(e.text, value), "touchlockd(8): --\(option.name) without its value \(value)")
            }
        }
        let known = Set(command.options.map(\.name)).union(Self.universal)
        for e in entries {
            for name in longOptions(in: e.head).subtracting(known) {
                Issue.record("touchlockd(8): OPTIONS names --\(name), which touchlockd does not take")
            }
        }
    }

    @Test func theReaderTakesOutEscapesAndFonts() {
        let page = ManPage("""
            .SH COMMANDS
            .TP
            \\fBpreview\\fR [\\fB\\-\\-state\\fR \\fISTATE\\fR]
            States: digits:\\fIK\\fR, too\\-short.
            .TP
            .BR \\-h ", " \\-\\-help
            Print.
            """)
        #expect(page["COMMANDS"].map(\.head) == ["preview [--state STATE]", "-h, --help"])
        #expect(page["COMMANDS"][0].body == "States: digits:K, too-short.\n")
        #expect(mentions("States: digits:K, too-short.", "digits:K") && !mentions("too-short", "short"))
        #expect(longOptions(in: "[--state STATE] --x=1 -- y") == ["state", "x"])
    }
}
