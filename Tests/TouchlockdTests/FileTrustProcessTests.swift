import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

private let rightPattern = Pattern(rows: 3, columns: 3, nodes: [0, 4, 8, 5])

private func writeFile(_ path: String, _ text: String, mode: mode_t = 0o600) throws {
    try DurableFile.makeDirectory(DurableFile.directory(of: path))
    try DurableFile.replace(path, with: Array(text.utf8), mode: mode)
}

/// A record forged by the user who owns the state directory: `failures = 0` and a
/// pattern hash of their own.
private func forgedRecord() throws -> String {
    var bytes = rightPattern.secretBytes
    var s = StoredState()
    s.patternHash = try SecretHash.make(&bytes)
    s.lockout = LockoutRecord(failures: 0)
    return s.text
}

/// Files are trusted only as far as they should be: a state file others could write is not
/// read, and a FIFO or a device named as any file the daemon reads is refused at once.
@Suite(.serialized) struct FileTrustProcessTests {
    /// Starts a daemon whose state directory and file belong to `owner`, with `mode` on
    /// the directory, the forged record in it and the right pattern replayed on its
    /// panel; its status once the replay is over.
    private func forged(owner: uid_t, directoryMode: mode_t) throws -> (DaemonProcess, Status, String) {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        let record = try forgedRecord()
        try writeFile(d.statePath, record)
        let dir = DurableFile.directory(of: d.statePath)
        #expect(chown(dir, owner, owner) == 0 && chown(d.statePath, owner, owner) == 0)
        #expect(chmod(dir, directoryMode) == 0)
        let replay = d.dir + "/right.evemu"
        try writeFile(replay, recording(of: [rightPattern.nodes], on: Size(width: 640, height: 400)), mode: 0o644)
        try d.start(replay: replay)
        // The stroke ends 1.1 s after the start; its check would take a few ms more.
        usleep(2_500_000)
        return (d, try d.status(), record)
    }

    @Test(.enabled(if: getuid() == 0, "chown needs root"))
    func aForgedRecordInADirectoryAnotherUserOwnsIsRefused() throws {
        let (d, st, record) = try forged(owner: 65534, directoryMode: 0o700)
        // Locked out with no attempt accepted: the right pattern of the forged hash did
        // not unlock, and the hash is not used.
        #expect(st.state == .lockout && st.record == .untrusted, "\(st)")
        #expect(st.enrolled == [], "the forged hash was used: \(st)")
        #expect(st.reason?.contains("owned by uid 65534") == true, "\(st.reason ?? "no reason")")
        #expect((st.retryAfterMilliseconds ?? 0) > 365 * 86_400_000, "\(st)")
        #expect(d.log.contains("not trusted") && d.log.contains("owned by uid 65534"), "\(d.log)")
        #expect(!d.log.contains("unlocked"), "\(d.log)")
        // Nothing is written there, the lockout cannot be cleared without putting it right.
        let reset = try d.ctl(["lockout", "--reset"])
        #expect(reset.status != 0 && reset.output.contains("not trusted"), "\(reset.output)")
        #expect(d.stateText == record)
        #expect(access(DurableFile.directory(of: d.statePath) + "/text-images", F_OK) != 0)
    }

    @Test(.enabled(if: getuid() == 0, "chown needs root"))
    func aStateDirectoryOthersMayWriteIsRefusedAndRootsOwnIsTrusted() throws {
        let (open, st, _) = try forged(owner: 0, directoryMode: 0o777)
        #expect(st.state == .lockout && st.record == .untrusted, "\(st)")
        #expect(st.reason?.contains("writable by others (mode 777)") == true, "\(st.reason ?? "no reason")")
        _ = open
        // The same record in root's own 0700 directory is read: the pattern unlocks.
        let (d, trusted, _) = try forged(owner: 0, directoryMode: 0o700)
        #expect(trusted.state == .unlocked && trusted.record == nil, "\(trusted); log:\n\(d.log)")
    }

    // MARK: the control socket's directory

    @Test(.enabled(if: getuid() == 0, "chown needs root"))
    func theDaemonServesNoSocketInADirectoryAnotherUserOwns() throws {
        let d = try DaemonProcess(config: "")
        let run = DurableFile.directory(of: d.socketPath)
        try DurableFile.makeDirectory(run, mode: 0o755)
        #expect(chown(run, 65534, 65534) == 0)
        // READY=1 may come before the socket is refused: whether start() throws is not the point.
        _ = try? d.start(replay: nil)
        let status = d.exited(within: 10_000)
        #expect(status.map { ($0 >> 8) & 0xff } == 1, "exit \(String(describing: status)); log:\n\(d.log)")
        #expect(d.log.contains("control socket \(d.socketPath)") && d.log.contains("not trusted")
                && d.log.contains("\(run) is owned by uid 65534, not root"), "\(d.log)")
        var st = stat()
        #expect(lstat(d.socketPath, &st) != 0, "a socket was made there")
    }

    /// The owner of the socket's directory, or anyone who may write a directory above it
    /// (without the sticky bit), could swap the socket for one of theirs and tell
    /// `wait-unlock` a forged unlock: touchlockctl does not believe it.
    @Test(.enabled(if: getuid() == 0, "chown needs root"))
    func touchlockctlRefusesASocketInAnUntrustedDirectory() throws {
        let d = try DaemonProcess(config: "")
        try d.start(replay: nil)
        #expect(try d.ctl(["status", "--json"]).status == 0)
        let run = DurableFile.directory(of: d.socketPath)
        #expect(chown(run, 65534, 65534) == 0)
        for command in [["status", "--json"], ["wait-unlock", "--timeout", "10"]] {
            let started = EventLoop.now()
            let r = try d.ctl(command)
            let ms = (EventLoop.now() - started).milliseconds
            #expect(r.status == 1, "\(command): exit \(r.status): \(r.output)")
            #expect(r.output.contains("cannot connect to \(d.socketPath): not trusted (\(run) is owned by uid 65534, not root)"),
                    "\(command): \(r.output)")
            #expect(ms < 5000, "\(command) waited \(ms) ms")
        }
        #expect(chown(run, 0, 0) == 0)
        // A directory above it that others may write, without the sticky bit, and with it.
        #expect(chmod(d.dir, 0o777) == 0)
        let open = try d.ctl(["status", "--json"])
        #expect(open.status == 1 && open.output.contains("not trusted (\(d.dir) is writable by others (mode 777))"), "\(open.output)")
        #expect(chmod(d.dir, 0o1777) == 0)
        let sticky = try d.ctl(["status", "--json"])
        #expect(sticky.status == 0, "\(sticky.output)")
    }

    // MARK: a FIFO or a device as each file read

    /// A FIFO (no writer: opening it to read would wait for ever) and /dev/zero (reading
    /// it never ends) at `path`, one after the other, by a symbolic link or mkfifo.
    private func specials(at path: String) -> [(String, () -> Void)] {
        [("FIFO", { unlink(path); mkfifo(path, 0o600) }),
         ("/dev/zero", { unlink(path); symlink("/dev/zero", path) })]
    }

    @Test func aStateFileThatIsAFIFOOrADeviceStartsLockedOutAsDamaged() throws {
        for what in ["FIFO", "/dev/zero"] {
            let d = try DaemonProcess(config: "")
            try DurableFile.makeDirectory(DurableFile.directory(of: d.statePath))
            for (name, make) in specials(at: d.statePath) where name == what { make() }
            try d.start(replay: nil)   // READY=1 within 20 s, or this throws
            let st = try d.status()
            let kind = what == "FIFO" ? "a FIFO, not a regular file" : "a character device, not a regular file"
            #expect(st.state == .lockout && st.record == .damaged, "\(what): \(st)")
            #expect(st.reason?.contains(kind) == true && st.reason?.contains(d.statePath) == true, "\(what): \(st.reason ?? "")")
        }
    }

    @Test func aConfigFileOrConfDEntryOrRecordingThatIsAFIFOOrADeviceIsAnErrorNamingIt() throws {
        let d = try DaemonProcess(config: "")
        let dropIn = d.dir + "/etc/touchlock/touchlock.conf.d/50-x.conf"
        try DurableFile.makeDirectory(DurableFile.directory(of: dropIn))
        let file = d.dir + "/special"
        let cases: [(String, [String], String)] = [
            ("-C", ["-C", file], "\(file):0: cannot read:"),
            ("conf.d", [], "\(dropIn):0: cannot read:"),
            ("--replay", ["--replay", file], "\(file)"),
        ]
        for (label, args, named) in cases {
            for (what, make) in specials(at: label == "conf.d" ? dropIn : file) {
                make()
                let started = EventLoop.now()
                // timeout(1) turns a hang into status 124 rather than a test that never ends.
                let r = try runApart(["/usr/bin/timeout", "20", DaemonProcess.binary, "--config-root", d.dir,
                                      "--display", "headless", "--size", "320x200", "--socket", d.socketPath,
                                      "--state", d.statePath] + args, in: d.dir)
                let ms = (EventLoop.now() - started).milliseconds
                let kind = what == "FIFO" ? "a FIFO, not a regular file" : "a character device, not a regular file"
                #expect(r.status == 1, "\(label) \(what): exit \(r.status) after \(ms) ms: \(r.errors)")
                #expect(r.errors.contains(named) && r.errors.contains(kind), "\(label) \(what): \(r.errors)")
                unlink(label == "conf.d" ? dropIn : file)
            }
        }
    }

    @Test func aFontFileOrBackgroundImageThatIsAFIFOOrADeviceIsSaidAndTheScreenDrawnWithout() throws {
        for key in ["font_file", "background_image"] {
            for what in ["FIFO", "/dev/zero"] {
                var template = Array("/tmp/touchlock-special.XXXXXX".utf8CString)
                guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
                let dir = String(cString: made)
                defer { _ = system("rm -rf '\(dir)'") }
                let file = dir + "/special.png"
                if what == "FIFO" { mkfifo(file, 0o600) } else { symlink("/dev/zero", file) }
                let d = try DaemonProcess(config: "[theme]\n\(key) = \(file)\n")
                try d.start(replay: nil)   // the first frame is drawn, READY=1 follows it
                let kind = what == "FIFO" ? "a FIFO, not a regular file" : "a character device, not a regular file"
                #expect(d.log.contains(file) && d.log.contains(kind), "\(key) \(what): \(d.log)")
                #expect(try d.status().state == .locked)
            }
        }
    }

    @Test func aHugeBackgroundImageIsRefusedFromItsHeader() throws {
        // The header of a 20000x20000 PNG (a real one compresses to about a megabyte and
        // decodes to 1.6 GB): refused before a pixel is decoded.
        var template = Array("/tmp/touchlock-huge.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        let dir = String(cString: made)
        defer { _ = system("rm -rf '\(dir)'") }
        let file = dir + "/huge.png"
        try DurableFile.replace(file, with: pngHeader(width: 20000, height: 20000), mode: 0o644)
        let d = try DaemonProcess(config: "[theme]\nbackground_image = \(file)\n")
        try d.start(replay: nil)
        #expect(d.log.contains("20000x20000 pixels, more than the 16777216"), "\(d.log)")
    }
}

/// The signature, an IHDR chunk (8-bit greyscale) and IEND: a PNG's header as a decoder reads it first.
func pngHeader(width: UInt32, height: UInt32) -> [UInt8] {
    func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)] }
    func crc(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xffff_ffff
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 != 0 ? 0xedb8_8320 ^ (c >> 1) : c >> 1 }
        }
        return ~c
    }
    func chunk(_ kind: String, _ body: [UInt8]) -> [UInt8] {
        let k = Array(kind.utf8)
        return be(UInt32(body.count)) + k + body + be(crc(k + body))
    }
    return [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
        + chunk("IHDR", be(width) + be(height) + [8, 0, 0, 0, 0]) + chunk("IEND", [])
}
