import Glibc
import Testing
import TouchlockConfig
import TouchlockCore
import TouchlockSystem

@Suite struct SecretFilesTests {
    @Test func aFileIsReadableByOthersWithAGroupOrWorldReadBitOrAnotherOwner() {
        #expect(!SecretFiles.readableByOthers(mode: 0o100600, owner: 0, reader: 0))
        #expect(!SecretFiles.readableByOthers(mode: 0o100400, owner: 0, reader: 0))
        #expect(SecretFiles.readableByOthers(mode: 0o100644, owner: 0, reader: 0))
        #expect(SecretFiles.readableByOthers(mode: 0o100640, owner: 0, reader: 0))
        #expect(SecretFiles.readableByOthers(mode: 0o100604, owner: 0, reader: 0))
        #expect(SecretFiles.readableByOthers(mode: 0o100600, owner: 1000, reader: 0))
        #expect(!SecretFiles.readableByOthers(mode: 0o100600, owner: 1000, reader: 1000))
    }

    @Test func onlyFilesThatSetAHashAreNamedWithTheirMode() throws {
        var template = Array("/tmp/touchlock-secrets-XXXXXX".utf8CString)
        guard let d = mkdtemp(&template) else { Issue.record("mkdtemp"); return }
        let dir = String(cString: d)
        defer { _ = system("rm -rf '\(dir)'") }
        let hash = "$y$j9T$abcdefghijklmnop$qrstuvwxyz0123456789"
        let plain = dir + "/plain.conf", flat = dir + "/flat.conf", section = dir + "/section.conf", closed = dir + "/closed.conf"
        try DurableFile.replace(plain, with: Array("min_length = 5\n".utf8), mode: 0o644)
        try DurableFile.replace(flat, with: Array("pattern_hash = \(hash)\n".utf8), mode: 0o644)
        try DurableFile.replace(section, with: Array("[code]\nhash = \(hash)\nlength = 4\n".utf8), mode: 0o640)
        try DurableFile.replace(closed, with: Array("code_hash = \(hash)\n".utf8), mode: 0o600)
        let found = SecretFiles.exposures(in: [plain, flat, section, closed, dir + "/missing.conf"])
        #expect(found.map(\.path) == [flat, section])
        #expect(found.map(\.modeText) == ["0644", "0640"])
        #expect(found.first?.description == "\(flat) holds a secret's hash and others can read it (mode 0644)")
    }

    @Test func updatingTheSecretsFileReplacesItsKeysAndKeepsTheRest() {
        let first = SecretFiles.updated(nil, setting: [("pattern_hash", "$y$j9T$AAAAAAAAAAAAAAAA$aaaaaaaaaaaaaaaaaaaaaaaa")])
        #expect(first.hasPrefix("# touchlock: the hashes"))
        #expect(first.hasSuffix("\npattern_hash = $y$j9T$AAAAAAAAAAAAAAAA$aaaaaaaaaaaaaaaaaaaaaaaa\n"))
        let second = SecretFiles.updated(first + "# mine\n", setting: [("code_hash", "$y$j9T$CCCCCCCCCCCCCCCC$cccccccccccccccccccccccc"), ("code_length", "6")])
        let third = SecretFiles.updated(second, setting: [("pattern_hash", "$y$j9T$BBBBBBBBBBBBBBBB$bbbbbbbbbbbbbbbbbbbbbbbb")])
        let lines = third.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("pattern_hash") } == ["pattern_hash = $y$j9T$BBBBBBBBBBBBBBBB$bbbbbbbbbbbbbbbbbbbbbbbb"])
        #expect(lines.contains("code_hash = $y$j9T$CCCCCCCCCCCCCCCC$cccccccccccccccccccccccc") && lines.contains("code_length = 6") && lines.contains("# mine"))
        // What it writes reads back as settings.
        var c = Config()
        #expect((try? ConfigFiles.apply(contents: Array(third.utf8), named: "secrets.conf", to: &c)) != nil)
        #expect(c.patternHash == "$y$j9T$BBBBBBBBBBBBBBBB$bbbbbbbbbbbbbbbbbbbbbbbb" && c.screens.codeHash == "$y$j9T$CCCCCCCCCCCCCCCC$cccccccccccccccccccccccc" && c.screens.codeLength == 6)
    }

    @Test func theSecretsFileKeepsItsFormAndIsCheckedWithTheDaemonsParser() throws {
        let old = "$y$j9T$OOOOOOOOOOOOOOOO$oooooooooooooooooooooooo"
        let new = "$y$j9T$NNNNNNNNNNNNNNNN$nnnnnnnnnnnnnnnnnnnnnnnn"
        let pattern = [(key: "pattern_hash", value: new)]
        let code = [(key: "code_hash", value: new), (key: "code_length", value: "4")]
        func parsed(_ text: String) -> Config? {
            var c = Config()
            return (try? ConfigFiles.apply(contents: Array(text.utf8), named: "secrets.conf", to: &c)) != nil ? c : nil
        }
        // Replaced where it is, in its section.
        var t = SecretFiles.updated("[pattern]\nhash = \(old)\n[code]\nhash = \(old)\n", setting: pattern)
        #expect(t == "[pattern]\nhash = \(new)\n[code]\nhash = \(old)\n")
        // Not there: into its section if the file has it, else a section of its own.
        t = SecretFiles.updated("# mine\n[code]\nsecure = true\n\n[pattern]\nhash = \(old)\n", setting: code)
        #expect(t == "# mine\n[code]\nsecure = true\nhash = \(new)\nlength = 4\n\n[pattern]\nhash = \(old)\n")
        t = SecretFiles.updated("[pattern]\nhash = \(old)\n", setting: code)
        #expect(t == "[pattern]\nhash = \(old)\n\n[code]\nhash = \(new)\nlength = 4\n")
        #expect(parsed(t)?.screens.codeHash == new && parsed(t)?.patternHash == old)
        // What earlier versions wrote into a section file: the flat key goes, the old hash too.
        t = SecretFiles.updated("[pattern]\nhash = \(old)\npattern_hash = \(old)\n", setting: pattern)
        #expect(t == "[pattern]\nhash = \(new)\n")
        // Flat stays flat; `name: value` is a setting too, as libinih reads it.
        t = SecretFiles.updated("code_length = 6\npattern_hash: \(old)\n", setting: pattern)
        #expect(t == "code_length = 6\npattern_hash = \(new)\n")
        t = SecretFiles.updated("code_length = 6\n", setting: pattern)
        #expect(t == "code_length = 6\npattern_hash = \(new)\n")

        // The check: what the daemon reads, with these values.
        #expect(throws: Never.self) { try SecretFiles.check(t, named: "s.conf", setting: pattern) }
        do {
            try SecretFiles.check("pattern_hash = \(new)\n[metric]\nx = 1\n", named: "s.conf", setting: pattern)
            Issue.record("an unknown section was taken")
        } catch {
            #expect(error.description.contains("touchlockd would not start with the result (s.conf:3: unknown section [metric]"), "\(error)")
        }
        do {
            try SecretFiles.check("pattern_hash = \(new)\n[pattern]\nhash = \(old)\n", named: "s.conf", setting: pattern)
            Issue.record("a hash overridden by a later line was taken")
        } catch {
            #expect(error.description.contains("another line of s.conf sets pattern_hash"), "\(error)")
        }
    }
}
