import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

private let screen = Size(width: 640, height: 400)

private func mode(_ path: String) -> mode_t? {
    var st = stat()
    return stat(path, &st) == 0 ? st.st_mode & 0o7777 : nil
}

private func hashOf(_ nodes: [Int]) throws -> String {
    var bytes = Pattern(rows: 3, columns: 3, nodes: nodes).secretBytes
    return try SecretHash.make(&bytes)
}

/// Secrets never readable by others, and only drawable ones: the binaries as root uses them.
@Suite(.serialized) struct SecretFilesProcessTests {
    @Test func checkConfigFailsNamingAFileOthersCanReadThatHoldsAHash() throws {
        let d = try DaemonProcess(config: "pattern_hash = \(try hashOf([0, 3, 6, 7, 8]))\n")
        var r = try runApart([DaemonProcess.binary, "--config-root", d.dir, "-C", d.configPath, "--check-config"], in: d.dir)
        #expect(r.status == 1)
        #expect(r.errors.contains("\(d.configPath) holds a secret's hash and others can read it (mode 0644)"), "\(r.errors)")
        #expect(r.errors.contains("touchlockctl set-secret"))
        chmod(d.configPath, 0o600)
        r = try runApart([DaemonProcess.binary, "--config-root", d.dir, "-C", d.configPath, "--check-config"], in: d.dir)
        #expect(r.status == 0 && r.errors.isEmpty, "\(r.errors)")
        // A file with no hash may be read by all.
        try DurableFile.replace(d.configPath, with: Array("error_hold_ms = 100\n".utf8), mode: 0o644)
        r = try runApart([DaemonProcess.binary, "--config-root", d.dir, "-C", d.configPath, "--check-config"], in: d.dir)
        #expect(r.status == 0, "\(r.errors)")
        // No grid holds more nodes than it has.
        try DurableFile.replace(d.configPath, with: Array("grid = 2x2\nmin_length = 5\n".utf8), mode: 0o644)
        r = try runApart([DaemonProcess.binary, "--config-root", d.dir, "-C", d.configPath, "--check-config"], in: d.dir)
        #expect(r.status == 1 && r.errors.contains("min_length 5 is more than the 4 nodes"), "\(r.errors)")
    }

    @Test func theDaemonWarnsAtEveryStartInItsLogStatusAndMetrics() throws {
        let d = try DaemonProcess(config: "pattern_hash = \(try hashOf([0, 3, 6, 7, 8]))\n")
        try d.start(replay: nil)
        let st = try d.status()
        #expect(st.secretsReadable == ["\(d.configPath) (mode 0644)"])
        #expect(d.log.contains("warning: \(d.configPath) holds a secret's hash and others can read it (mode 0644)"))
        let m = try runApart([DaemonProcess.ctl, "--socket", d.socketPath, "metrics", "--openmetrics"], in: d.dir)
        #expect(m.output.contains("\ntouchlock_secret_files_readable 1\n"), "\(m.output)")
        d.kill(SIGTERM)
        d.waitExit()
        chmod(d.configPath, 0o600)
        try d.start(replay: nil)
        #expect(try d.status().secretsReadable == nil)
        let m2 = try runApart([DaemonProcess.ctl, "--socket", d.socketPath, "metrics", "--openmetrics"], in: d.dir)
        #expect(m2.output.contains("\ntouchlock_secret_files_readable 0\n"))
    }

    @Test func setSecretWritesTheHashRootOnlyInOneStepAndTheDaemonUnlocksWithIt() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        let secrets = d.dir + "/etc/secrets.conf"
        try DurableFile.makeDirectory(d.dir + "/etc")
        let set = { (what: String, input: String) throws in
            try runApart([DaemonProcess.ctl, "set-secret", what, "--file", secrets, "-C", d.configPath], input: input, in: d.dir)
        }
        // Undrawable, too short, or given differently twice: refused, nothing written.
        var r = try set("pattern", "0-2-5-8\n0-2-5-8\n")
        #expect(r.status == 1 && r.errors.contains("drawn, this is 0-1-2-5-8"), "\(r.errors)")
        r = try set("pattern", "1-2\n1-2\n")
        #expect(r.status == 1 && r.errors.contains("at least 4 nodes"), "\(r.errors)")
        r = try set("pattern", "0-3-6-7-8\n0-3-6-7-5\n")
        #expect(r.status == 1 && r.errors.contains("differ"))
        #expect(mode(secrets) == nil)

        r = try set("pattern", "0-3-6-7-8\n0-3-6-7-8\n")
        #expect(r.status == 0, "\(r.errors)")
        #expect(mode(secrets) == 0o600)
        r = try set("code", "2468\n2468\n")
        #expect(r.status == 0, "\(r.errors)")
        let text = String(decoding: try DurableFile.read(secrets) ?? [], as: UTF8.self)
        #expect(!text.contains("0-3-6-7-8") && !text.contains("2468"))
        #expect(text.contains("pattern_hash = $y$") && text.contains("code_hash = $y$") && text.contains("code_length = 4"))
        #expect(mode(secrets) == 0o600)
        // Set again: one line per key, the newest.
        r = try set("pattern", "0-3-6-7-8\n0-3-6-7-8\n")
        let again = String(decoding: try DurableFile.read(secrets) ?? [], as: UTF8.self)
        #expect(again.split(separator: "\n").filter { $0.hasPrefix("pattern_hash") }.count == 1)
        #expect(again.contains("code_hash = $y$"))

        let replay = d.dir + "/right.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [[0, 3, 6, 7, 8]], on: screen).utf8), mode: 0o644)
        try d.start(replay: replay, extra: ["-C", secrets])
        let sub = try d.client()
        _ = try sub.request(.subscribe, timeout: waited(5000))
        var unlocked = false
        let deadline = EventLoop.now() + waited(15_000)
        while !unlocked, EventLoop.now() < deadline {
            guard let e = try sub.nextEvent(timeout: deadline - EventLoop.now()) else { break }
            if case .unlocked = e.event { unlocked = true }
        }
        #expect(unlocked, "log:\n\(d.log)")
        #expect(try d.status().secretsReadable == nil)
    }

    /// README documents the secrets file in section form too (`[pattern]` / `hash =`):
    /// A mistyped --file is refused before the secret is asked for, and no directory is
    /// made for it.
    @Test func setSecretRefusesAFileInADirectoryThatDoesNotExist() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        let secrets = d.dir + "/etc/touchlok/secrets.conf"
        let r = try runApart([DaemonProcess.ctl, "set-secret", "pattern", "--file", secrets, "-C", d.configPath],
                             input: "0-1-2-5-8\n0-1-2-5-8\n", in: d.dir)
        #expect(r.status == 1 && r.errors.contains("no such directory") && r.errors.contains(d.dir + "/etc/touchlok"), "\(r)")
        #expect(access(d.dir + "/etc", F_OK) != 0, "a directory was made")
    }

    /// set-secret replaces the old hash where it was found, in the form it was found, and
    /// what it writes is a file touchlockd starts with, whose hash is the new secret's.
    @Test func setSecretKeepsTheFormOfTheFileItFindsAndReplacesTheOldHash() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        let secrets = d.dir + "/etc/secrets.conf"
        let old = try hashOf([1, 4, 7, 8])
        func set(_ what: String, _ input: String) throws -> (status: Int32, output: String, errors: String) {
            try runApart([DaemonProcess.ctl, "set-secret", what, "--file", secrets, "-C", d.configPath], input: input, in: d.dir)
        }
        func text() throws -> String { String(decoding: try DurableFile.read(secrets) ?? [], as: UTF8.self) }
        func checkConfig() throws -> (status: Int32, output: String, errors: String) {
            try runApart([DaemonProcess.binary, "--config-root", d.dir, "-C", d.configPath, "-C", secrets, "--check-config"], in: d.dir)
        }
        func storedHash(_ t: String, _ prefix: String) -> String? {
            t.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        }
        func verifies(_ nodes: [Int], _ hash: String?) -> Bool {
            var bytes = Pattern(rows: 3, columns: 3, nodes: nodes).secretBytes
            return hash.map { SecretHash.verify(&bytes, against: $0) } ?? false
        }

        // Section form, with a comment and another section around it.
        try DurableFile.makeDirectory(DurableFile.directory(of: secrets))
        try DurableFile.replace(secrets, with: Array("# ours\n[pattern]\nhash = \(old)\n\n[code]\nhash = \(old)\nlength = 6\n".utf8), mode: 0o600)
        var r = try set("pattern", "0-3-6-7-8\n0-3-6-7-8\n")
        #expect(r.status == 0, "\(r.errors)")
        var t = try text()
        #expect(!t.contains("pattern_hash") && t.split(separator: "\n").filter { $0.hasSuffix(old) } == ["hash = \(old)"], "\(t)")
        #expect(t.hasPrefix("# ours\n[pattern]\nhash = $y$"), "\(t)")
        #expect(verifies([0, 3, 6, 7, 8], storedHash(t, "hash = ")), "\(t)")
        var c = try checkConfig()
        #expect(c.status == 0 && c.errors.isEmpty, "\(c.errors)\n\(t)")
        r = try set("code", "2468\n2468\n")
        #expect(r.status == 0, "\(r.errors)")
        t = try text()
        #expect(!t.contains(old) && !t.contains("code_hash") && !t.contains("code_length"), "\(t)")
        #expect(t.contains("\n[code]\nhash = $y$") && t.contains("\nlength = 4\n") && !t.contains("length = 6"), "\(t)")
        c = try checkConfig()
        #expect(c.status == 0 && c.errors.isEmpty, "\(c.errors)\n\(t)")
        #expect(c.output.contains("code_length = 4") || c.output.contains("length = 4"), "\(c.output)")

        // Flat form stays flat.
        try DurableFile.replace(secrets, with: Array("pattern_hash = \(old)\n".utf8), mode: 0o600)
        r = try set("pattern", "0-3-6-7-8\n0-3-6-7-8\n")
        #expect(r.status == 0, "\(r.errors)")
        t = try text()
        #expect(!t.contains(old) && !t.contains("[pattern]") && t.split(separator: "\n").count == 1, "\(t)")
        #expect(verifies([0, 3, 6, 7, 8], storedHash(t, "pattern_hash = ")), "\(t)")
        c = try checkConfig()
        #expect(c.status == 0 && c.errors.isEmpty, "\(c.errors)\n\(t)")

        // A file that the daemon would refuse after the change is left as it was.
        let broken = "[pattern]\nhash = \(old)\n[patern]\ngrid = 4x4\n"
        try DurableFile.replace(secrets, with: Array(broken.utf8), mode: 0o600)
        r = try set("pattern", "0-3-6-7-8\n0-3-6-7-8\n")
        #expect(r.status == 1 && r.output.isEmpty, "\(r.output)")
        #expect(r.errors.contains("\(secrets) left as it was: touchlockd would not start with the result")
                && r.errors.contains("unknown section [patern]"), "\(r.errors)")
        #expect(try text() == broken)
        #expect(mode(secrets) == 0o600)
    }

    @Test func hashPatternAndEnrollTakeOnlyWhatAFingerDraws() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        func hash(_ input: String, _ args: [String] = []) throws -> (status: Int32, output: String, errors: String) {
            try runApart([DaemonProcess.ctl, "hash-pattern", "-C", d.configPath] + args, input: input, in: d.dir)
        }
        var r = try hash("0-2-1-3\n")
        #expect(r.status == 1 && r.output.isEmpty
                && r.errors.contains("from 0 to 2 the finger passes over 1, which joins there: drawn, this is 0-1-2-3"), "\(r.errors)")
        r = try hash("1-2\n")
        #expect(r.status == 1 && r.errors.contains("at least 4 nodes (min_length); this one has 2"))
        r = try hash("1-2\n", ["--min-length", "2"])
        #expect(r.status == 0 && r.output.hasPrefix("$y$"))
        r = try hash("0-3-7-11\n", ["--grid", "4x4"])
        #expect(r.status == 1 && r.errors.contains("drawn, this is 0-1-2-3-7-11"), "\(r.errors)")
        // The config's grid and min_length are the ones in force.
        try DurableFile.replace(d.configPath, with: Array("grid = 4x4\nmin_length = 5\n".utf8), mode: 0o644)
        r = try hash("0-1-2-3\n")
        #expect(r.status == 1 && r.errors.contains("at least 5 nodes") && r.errors.contains("grid 4x4"), "\(r.errors)")
        r = try hash("0-1-2-3-6\n")
        #expect(r.status == 0, "\(r.errors)")

        // enroll: the daemon's grid.
        try DurableFile.replace(d.configPath, with: Array("error_hold_ms = 100\n".utf8), mode: 0o644)
        try d.start(replay: nil)
        let e = try runApart([DaemonProcess.ctl, "--socket", d.socketPath, "enroll", "pattern"], input: "0-2-5-8\n0-2-5-8\n", in: d.dir)
        #expect(e.status == 1 && e.errors.contains("drawn, this is 0-1-2-5-8"), "\(e.errors)")
        #expect(try d.status().enrolled?.contains(.pattern) != true)
        let ok = try runApart([DaemonProcess.ctl, "--socket", d.socketPath, "enroll", "pattern"], input: "0-1-2-5-8\n0-1-2-5-8\n", in: d.dir)
        #expect(ok.status == 0, "\(ok.errors)")
        #expect(try d.status().enrolled?.contains(.pattern) == true)
    }

    @Test func aRepeatedNodeIsHashedOnlyUnderRepeatAllowedAndThenUnlocksAndEnrolls() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        func hash(_ input: String, _ args: [String] = []) throws -> (status: Int32, output: String, errors: String) {
            try runApart([DaemonProcess.ctl, "hash-pattern", "-C", d.configPath] + args, input: input, in: d.dir)
        }
        // The default: never.
        var r = try hash("0-1-2-1-4\n")
        #expect(r.status == 1 && r.output.isEmpty && r.errors.contains("node 1 is used twice, and a node joins once: drawn, this is 0-1-2-4")
                && r.errors.contains("repeat never"), "\(r.errors)")
        r = try hash("0-1-2-1-4\n", ["--repeat", "allowed"])
        #expect(r.status == 0 && r.output.hasPrefix("$y$"), "\(r.errors)")
        r = try hash("1-4-3-4-5\n", ["--repeat", "allowed"])
        #expect(r.status == 1 && r.errors.contains("from 3 through 4 to 5 the finger turns less than 45 degrees at 4")
                && r.errors.contains("drawn, this is 1-4-3-5"), "\(r.errors)")
        r = try hash("0-1-1-2\n", ["--repeat", "allowed"])
        #expect(r.status == 1 && r.errors.contains("node 1 follows itself"), "\(r.errors)")
        r = try hash("0-1-2-1-4\n", ["--repeat", "twice"])
        #expect(r.status == 64 && r.errors.contains("expected never or allowed, found 'twice'"), "\(r.errors)")

        // The config's policy is the one in force; the option overrides it.
        try DurableFile.replace(d.configPath, with: Array("error_hold_ms = 100\n[pattern]\nrepeat = allowed\n".utf8), mode: 0o644)
        r = try hash("0-1-2-1-4\n")
        #expect(r.status == 0, "\(r.errors)")
        r = try hash("0-1-2-1-4\n", ["--repeat", "never"])
        #expect(r.status == 1 && r.errors.contains("node 1 is used twice"), "\(r.errors)")
        let secrets = d.dir + "/etc/secrets.conf"
        try DurableFile.makeDirectory(d.dir + "/etc")
        let set = try runApart([DaemonProcess.ctl, "set-secret", "pattern", "--file", secrets, "-C", d.configPath],
                               input: "0-1-2-1-4\n0-1-2-1-4\n", in: d.dir)
        #expect(set.status == 0, "\(set.errors)")

        // The daemon under allowed: a finger drawing 0-1-2, back to 1 and down to 4
        // unlocks; the first attempt, 0-1-2-4, does not.
        let replay = d.dir + "/repeat.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [[0, 1, 2, 4], [0, 1, 2, 1, 4]], on: screen).utf8), mode: 0o644)
        try d.start(replay: replay, extra: ["-C", secrets])
        let sub = try d.client()
        _ = try sub.request(.subscribe, timeout: waited(5000))
        var failed = 0, unlocked = false
        let deadline = EventLoop.now() + waited(15_000)
        while !unlocked, EventLoop.now() < deadline {
            guard let e = try sub.nextEvent(timeout: deadline - EventLoop.now()) else { break }
            if case .failed = e.event { failed += 1 }
            if case .unlocked = e.event { unlocked = true }
        }
        #expect(failed == 1 && unlocked, "log:\n\(d.log)")
        #expect(try d.status().pattern?.repeats == .allowed)
        // enroll checks against the daemon's policy: a pattern it allows goes through to
        // the daemon, which refuses it only because secrets.conf sets the pattern (it
        // would be shadowed); one it does not allow is refused for the policy.
        let e = try runApart([DaemonProcess.ctl, "--socket", d.socketPath, "enroll", "pattern"], input: "3-4-5-4-1\n3-4-5-4-1\n", in: d.dir)
        #expect(e.status == 1 && e.errors.contains("shadowed") && !e.errors.contains("repeat"), "\(e.errors)")
        #expect(d.stateText?.contains("pattern_hash") != true, "\(d.stateText ?? "")")
        let straight = try runApart([DaemonProcess.ctl, "--socket", d.socketPath, "enroll", "pattern"], input: "1-4-3-4-5\n1-4-3-4-5\n", in: d.dir)
        #expect(straight.status == 1 && straight.errors.contains("repeat allowed"), "\(straight.errors)")
    }
}
