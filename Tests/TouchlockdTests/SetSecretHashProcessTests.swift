import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

private let screen = Size(width: 640, height: 400)

/// A file's inode, modification time (ns) and mode, to tell a rewrite from no write.
private func stamp(_ path: String) -> (ino: UInt, mtime: Int, mode: UInt32)? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return (UInt(st.st_ino), st.st_mtim.tv_sec * 1_000_000_000 + st.st_mtim.tv_nsec, UInt32(st.st_mode & 0o7777))
}

private func contents(_ path: String) -> String? {
    (try? DurableFile.read(path)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }
}

/// `set-secret --hash`: a hash made elsewhere (a workstation, configuration management),
/// checked and written with the real touchlockctl on real files, and used by the daemon.
@Suite(.serialized) struct SetSecretHashProcessTests {
    /// The workflow: the hash made off the device with hash-pattern / hash-code, handed to
    /// set-secret on standard input; the daemon unlocks with the pattern and takes the code.
    @Test func aHashMadeElsewhereIsStoredAndTheDaemonUnlocksWithIt() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        let secrets = d.dir + "/etc/secrets.conf"
        try DurableFile.makeDirectory(d.dir + "/etc")
        // On the workstation.
        let made = try runApart([DaemonProcess.ctl, "hash-pattern"], input: "0-3-6-7-8\n", in: d.dir)
        #expect(made.status == 0 && made.output.hasPrefix("$y$"), "\(made)")
        let patternHash = String(made.output.dropLast())
        let code = try runApart([DaemonProcess.ctl, "hash-code"], input: "246810\n", in: d.dir)
        #expect(code.status == 0 && code.output.hasPrefix("$y$"), "\(code)")
        let codeHash = String(code.output.dropLast())

        // On the device: the hash on standard input, out of the process list.
        var r = try runApart([DaemonProcess.ctl, "set-secret", "pattern", "--hash", "-", "--file", secrets],
                             input: patternHash + "\n", in: d.dir)
        #expect(r.status == 0 && r.output.hasPrefix("changed: pattern stored in \(secrets)"), "\(r)")
        r = try runApart([DaemonProcess.ctl, "set-secret", "code", "--hash", codeHash, "--length", "6", "--file", secrets],
                         in: d.dir)
        #expect(r.status == 0 && r.output.hasPrefix("changed: code stored in \(secrets)"), "\(r)")
        let text = contents(secrets) ?? ""
        #expect(text.contains("pattern_hash = \(patternHash)\n") && text.contains("code_hash = \(codeHash)\n")
                && text.contains("code_length = 6\n"), "\(text)")
        #expect(stamp(secrets)?.mode == 0o600)
        var digits = Array("code:246810".utf8)
        #expect(SecretHash.verify(&digits, against: codeHash))

        let replay = d.dir + "/right.evemu"
        try DurableFile.replace(replay, with: Array(recording(of: [[0, 3, 6, 7, 8]], on: screen).utf8), mode: 0o644)
        try d.start(replay: replay, extra: ["-C", secrets])
        let st = try d.status()
        #expect(st.secretSource == ["pattern": .config, "code": .config], "\(st)")
        let w = try d.ctl(["wait-unlock", "--timeout", "15"])
        #expect(w.status == 0 && w.output.contains("\"event\":\"unlocked\""), "\(w.output)\n\(d.log)")
    }

    /// Configuration management pushing a code over one enrolled on the device: the
    /// running daemon keeps the enrolled one until it restarts (the role's handler); then
    /// the pushed one counts, and the log and status say the enrolled one is shadowed.
    @Test func aCodePushedOverAnEnrolledOneCountsFromTheRestartAndTheLogSaysSo() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\nunlock_method = both\n")
        let secrets = d.dir + "/etc/secrets.conf"
        try DurableFile.makeDirectory(d.dir + "/etc")
        try d.start(replay: nil)
        var r = try d.ctl(["enroll", "code"], input: "1357\n1357\n")
        #expect(r.status == 0, "\(r)")
        #expect(try d.status().secretSource?["code"] == .enrolled)

        let made = try runApart([DaemonProcess.ctl, "hash-code"], input: "2468\n", in: d.dir)
        let pushed = try runApart([DaemonProcess.ctl, "set-secret", "code", "--hash", "-", "--length", "4", "--file", secrets],
                                  input: made.output, in: d.dir)
        #expect(pushed.status == 0 && pushed.output.hasPrefix("changed: "), "\(pushed)")
        #expect(try d.status().secretSource?["code"] == .enrolled)
        #expect(!d.log.contains("does not count"))

        d.kill(SIGTERM)
        d.waitExit()
        try d.start(replay: nil, extra: ["-C", secrets])
        let st = try d.status()
        #expect(st.secretSource?["code"] == .config && st.secretsShadowed == [.code], "\(st)")
        #expect(d.log.contains("the code enrolled in \(d.statePath) does not count: the config files set one, which wins"),
                "\(d.log)")
        r = try d.ctl(["enroll", "code"], input: "9753\n9753\n")
        #expect(r.status == 1 && r.output.contains("shadowed"), "\(r)")
    }

    /// Setting the hash a file already holds writes nothing (same inode, same mtime) and
    /// says `unchanged`; another hash, or the same in a file others could read, is written
    /// and says `changed`. Exit 0 each time.
    @Test func theSameHashAgainLeavesTheFileUntouchedAndSaysUnchanged() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        let secrets = d.dir + "/etc/secrets.conf"
        try DurableFile.makeDirectory(d.dir + "/etc")
        var a = Array("code:2468".utf8), b = Array("code:1357".utf8)
        let first = try SecretHash.make(&a), second = try SecretHash.make(&b)
        let hashFile = d.dir + "/code.hash"
        try DurableFile.replace(hashFile, with: Array((first + "\n").utf8), mode: 0o600)
        func set(_ args: [String], input: String = "") throws -> (status: Int32, output: String, errors: String) {
            try runApart([DaemonProcess.ctl, "set-secret", "code"] + args + ["--length", "4", "--file", secrets], input: input, in: d.dir)
        }

        var r = try set(["--hash", first])
        #expect(r.status == 0 && r.output.hasPrefix("changed: "), "\(r)")
        let written = try #require(stamp(secrets))
        let text = contents(secrets)
        usleep(20_000)
        for args in [["--hash", first], ["--hash", "-"], ["--hash-file", hashFile]] {
            r = try set(args, input: first + "\n")
            #expect(r.status == 0 && r.output == "unchanged: \(secrets) already sets this code (mode 0600); nothing written\n",
                    "\(args): \(r)")
            let now = try #require(stamp(secrets))
            #expect(now.ino == written.ino && now.mtime == written.mtime, "\(args): the file was rewritten")
            #expect(contents(secrets) == text)
        }
        // Another code: written.
        r = try set(["--hash", second])
        #expect(r.status == 0 && r.output.hasPrefix("changed: "), "\(r)")
        #expect(contents(secrets)?.contains("code_hash = \(second)\n") == true && contents(secrets)?.contains(first) == false)
        // The same hash, but the file could be read by others: written again, 0600.
        chmod(secrets, 0o644)
        r = try set(["--hash", second])
        #expect(r.status == 0 && r.output.hasPrefix("changed: "), "\(r)")
        #expect(stamp(secrets)?.mode == 0o600)
        // Another length with the same hash is a change too.
        r = try runApart([DaemonProcess.ctl, "set-secret", "code", "--hash", second, "--length", "5", "--file", secrets], in: d.dir)
        #expect(r.status == 0 && r.output.hasPrefix("changed: ") && contents(secrets)?.contains("code_length = 5\n") == true, "\(r)")
    }

    /// A hash touchlock does not take is refused before anything is written, naming its
    /// method: DES, MD5, SHA-crypt, a bare setting, a hash cut off, anything else.
    @Test func aWeakOrDamagedHashIsRefusedAndNothingIsWritten() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        let secrets = d.dir + "/etc/secrets.conf"
        try DurableFile.makeDirectory(d.dir + "/etc")
        var s = Array("code:2468".utf8)
        let good = try SecretHash.make(&s)
        let cases: [(hash: String, says: String)] = [
            ("abJnggxhB/yWI", "traditional DES crypt"),
            ("$1$abcdefgh$G//4keteveJRO5v5bA0Ko.", "MD5 crypt"),
            ("$5$saltsalt$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZF7SgrtJ0", "SHA-256 crypt"),
            ("$6$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4XSIecDzlB5KiA2/jctKu9YterLp8wwnSq.qc.eoxqOmSuNp2xS0ktL3nh/", "SHA-512 crypt"),
            ("$2b$10$abcdefghijklmnopqrstuu5Rz8Qd2CM0l6Ifa/vZ1Pn3nE7eQe3Vu", "bcrypt"),
            (String(good[..<good.lastIndex(of: "$")!]), "only a setting"),
            (String(good.dropLast(5)), "cut off"),
            (good + "AAAA", "cut off"),
            ("0000", "not a crypt(5) hash"),
        ]
        for (hash, says) in cases {
            let r = try runApart([DaemonProcess.ctl, "set-secret", "code", "--hash", "-", "--length", "4", "--file", secrets],
                                 input: hash + "\n", in: d.dir)
            #expect(r.status == 1 && r.errors.contains("the code hash is refused") && r.errors.contains(says)
                    && r.errors.contains("nothing written"), "\(hash): \(r)")
            #expect(stamp(secrets) == nil, "\(hash): a file was written")
        }
        // A pattern's hash likewise.
        let r = try runApart([DaemonProcess.ctl, "set-secret", "pattern", "--hash", cases[1].hash, "--file", secrets], in: d.dir)
        #expect(r.status == 1 && r.errors.contains("MD5 crypt"), "\(r)")
        #expect(stamp(secrets) == nil)
    }

    /// A code's hash needs the code's length, one the pad can show; options that check a
    /// typed secret, or that do not go together, are usage errors (64). Nothing written.
    @Test func aCodesHashNeedsALengthThePadTakes() throws {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        let secrets = d.dir + "/etc/secrets.conf"
        try DurableFile.makeDirectory(d.dir + "/etc")
        var s = Array("code:2468".utf8)
        let good = try SecretHash.make(&s)
        let cases: [(args: [String], says: String)] = [
            (["code", "--hash", good], "needs --length N"),
            (["code", "--hash", good, "--length", "3"], "at least 4 digits"),
            (["code", "--hash", good, "--length", "13"], "at most 12"),
            (["code", "--hash", good, "--length", "four"], "expected a number of digits"),
            (["pattern", "--hash", good, "--length", "4"], "a pattern has none"),
            (["pattern", "--hash", good, "--grid", "4x4"], "hash-pattern --grid"),
            (["code", "--hash", good, "--hash-file", secrets, "--length", "4"], "--hash or --hash-file"),
            (["code", "--length", "4"], "--length goes with --hash"),
        ]
        for (args, says) in cases {
            let r = try runApart([DaemonProcess.ctl, "set-secret"] + args + ["--file", secrets], input: "2468\n2468\n", in: d.dir)
            #expect(r.status == 64 && r.errors.contains(says), "\(args): \(r)")
            #expect(stamp(secrets) == nil, "\(args): a file was written")
        }
        let missing = try runApart([DaemonProcess.ctl, "set-secret", "code", "--hash-file", d.dir + "/none", "--length", "4",
                                    "--file", secrets], in: d.dir)
        #expect(missing.status == 1 && missing.errors.contains("no such file"), "\(missing)")
        let r = try runApart([DaemonProcess.ctl, "set-secret", "code", "--hash", good, "--length", "4", "--file", secrets], in: d.dir)
        #expect(r.status == 0 && contents(secrets)?.contains("code_length = 4\n") == true, "\(r)")
    }
}
