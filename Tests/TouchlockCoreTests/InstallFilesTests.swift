import Foundation
import Testing
@testable import TouchlockCore

/// The files installed beside the binaries say what the config table and `Paths` say:
/// touchlock.conf(5) documents every key, in its section, at its default, with its
/// flat name, and nothing else; tmpfiles.d makes the directories the daemon uses.
@Suite struct InstallFilesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// One key's paragraph in the man page: `.TP`, then `.B name = default`, then prose.
    struct Entry {
        var section: String
        var name: String
        var value: String
        var prose: String
    }

    /// The entries of touchlock.conf(5), and each section's text (intro and prose).
    static func manEntries() throws -> (entries: [Entry], sectionText: [String: String]) {
        var entries: [Entry] = []
        var sectionText: [String: String] = [:]
        var section: String?
        var expectTag = false
        for line in try text("man/touchlock.conf.5").split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(".SH ") {
                let title = line.dropFirst(4).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                section = title.hasPrefix("[") && title.hasSuffix("]") ? String(title.dropFirst().dropLast()) : nil
                expectTag = false
                continue
            }
            guard let s = section else { continue }
            if line == ".TP" { expectTag = true; continue }
            if expectTag {
                expectTag = false
                guard line.hasPrefix(".B "), let eq = line.range(of: " =") else {
                    Issue.record("[\(s)]: a .TP tag that is not '.B key = default': \(line)")
                    continue
                }
                let name = String(line[line.index(line.startIndex, offsetBy: 3)..<eq.lowerBound])
                let value = line[eq.upperBound...].trimmingCharacters(in: .whitespaces)
                entries.append(Entry(section: s, name: name, value: value, prose: ""))
                continue
            }
            sectionText[s, default: ""] += line + "\n"
            if let last = entries.last, last.section == s { entries[entries.count - 1].prose += line + "\n" }
        }
        return (entries, sectionText)
    }

    @Test func manPageDocumentsEveryKeyAtItsDefault() throws {
        let (entries, sectionText) = try Self.manEntries()
        let defaults = Config()
        let documented = Set(entries.map { "[\($0.section)] \($0.name)" })
        let table = Set(Config.keys.map { "[\($0.section)] \($0.name)" })
        #expect(table.subtracting(documented).sorted() == [], "keys missing from man/touchlock.conf.5")
        #expect(documented.subtracting(table).sorted() == [], "keys in man/touchlock.conf.5 the daemon does not know")
        #expect(entries.count == documented.count, "a key documented twice")
        #expect(Set(entries.map(\.section)) == Set(Config.sections))

        for key in Config.keys {
            guard let entry = entries.first(where: { $0.section == key.section && $0.name == key.name }) else { continue }
            #expect(entry.value == key.show(defaults), "[\(key.section)] \(key.name): the man page's default")
            if let flat = key.flatName, flat != key.name {
                // Named in its paragraph, or by the [messages] rule "message_KEY".
                let named = entry.prose.contains(flat)
                    || (key.section == "messages" && flat == "message_" + key.name
                        && sectionText["messages", default: ""].contains("message_"))
                    || sectionText[key.section, default: ""].contains(flat)
                #expect(named, "[\(key.section)] \(key.name): the flat name \(flat) is not documented")
            }
        }
    }

    /// A key added to the table without a man page entry fails the test above; this
    /// checks the parser finds what it should (a key of each kind, with prose).
    @Test func manPageParserReadsEntries() throws {
        let (entries, _) = try Self.manEntries()
        let grid = try #require(entries.first { $0.section == "pattern" && $0.name == "grid" })
        #expect(grid.value == "3x3")
        #expect(grid.prose.contains("2x2 to 9x9"))
        let hash = try #require(entries.first { $0.section == "code" && $0.name == "hash" })
        #expect(hash.value == "")
        #expect(hash.prose.contains("code_hash"))
    }

    @Test func tmpfilesMakesTheDaemonsDirectories() throws {
        let lines = try Self.text("systemd/tmpfiles.d/touchlock.conf").split(separator: "\n")
            .filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ").map(String.init) }
        #expect(lines.contains(["d", Paths.state, "0700", "root", "root", "-"]))
        #expect(lines.contains(["d", Paths.runtime, "0750", "root", "touchlock", "-"]))
        #expect(Paths.stateFile.hasPrefix(Paths.state + "/"))
        #expect(Paths.socket.hasPrefix(Paths.runtime + "/"))
        #expect(Config().socketPath == Paths.socket && Config().statePath == Paths.stateFile)
    }
}
