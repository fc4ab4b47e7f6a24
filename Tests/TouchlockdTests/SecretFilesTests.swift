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
}
