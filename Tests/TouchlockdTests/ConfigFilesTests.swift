import Glibc
import Testing
import TouchlockConfig
import TouchlockCore
import TouchlockSystem

/// A directory tree standing for / with the config files in it.
private final class Tree {
    let root: String
    init() throws {
        var template = Array("/tmp/touchlock-conf-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        root = String(cString: made)
    }
    deinit { _ = system("rm -rf '\(root)'") }

    @discardableResult
    func write(_ path: String, _ text: String) throws -> String {
        let full = root + path
        _ = system("mkdir -p '\(DurableFile.directory(of: full))'")
        try DurableFile.replace(full, with: Array(text.utf8), mode: 0o644)
        return full
    }
}

private func load(_ text: String) throws(Config.Error) -> Config {
    let t = try! Tree()
    let f = try! t.write("/x.conf", text)
    var c = Config()
    do { try ConfigFiles.load([f], into: &c) } catch {
        // Report the error against the name the test uses.
        throw Config.Error(file: "x.conf", line: error.line, message: error.message)
    }
    return c
}

private func problem(_ text: String) -> Config.Error? {
    do { _ = try load(text); return nil } catch { return error }
}

@Suite struct ConfigFilesTests {
    @Test func filesMergeInTheDocumentedOrderLaterWinningKeyByKey() throws {
        let t = try Tree()
        try t.write("/usr/share/touchlock/touchlock.conf", "[pattern]\ngrid = 4x4\nmin_length = 5\n[theme]\nfont_size = 20\n")
        try t.write("/usr/share/touchlock/touchlock.conf.d/20-b.conf", "[pattern]\nmin_length = 7\n")
        try t.write("/usr/share/touchlock/touchlock.conf.d/10-a.conf", "[pattern]\nmin_length = 6\nhit_factor = 0.5\n")
        try t.write("/usr/share/touchlock/touchlock.conf.d/README", "not a config file\n")
        try t.write("/etc/touchlock/touchlock.conf", "[lockout]\nerror_hold_ms = 900\n[pattern]\nhit_factor = 0.7\n")
        try t.write("/etc/touchlock/touchlock.conf.d/local.conf", "[socket]\ngroup = kiosk\n")
        let extra = try t.write("/tmp/one.conf", "error_hold_ms = 1000   # flat names still work\n")
        let files = ConfigFiles.paths(root: t.root, extra: [extra])
        #expect(files.map { String($0.dropFirst(t.root.count)) } == [
            "/usr/share/touchlock/touchlock.conf",
            "/usr/share/touchlock/touchlock.conf.d/10-a.conf",
            "/usr/share/touchlock/touchlock.conf.d/20-b.conf",
            "/etc/touchlock/touchlock.conf",
            "/etc/touchlock/touchlock.conf.d/local.conf",
            "/tmp/one.conf",
        ])
        var c = Config()
        try ConfigFiles.load(files, into: &c)
        #expect(c.rows == 4 && c.columns == 4 && c.minimumLength == 7 && c.hitFactor == 0.7)
        #expect(c.errorHold == .milliseconds(1000) && c.socketGroup == "kiosk" && c.theme.fontSize == 20)
        // The merged text reads back to the same settings.
        let back = try load(c.text)
        #expect(back.text == c.text)
    }

    @Test func theMergedSettingsPrintedReadBackAlikeWithAColourSetBeforeTheTheme() throws {
        // Found by fuzzing: the theme key, printed after the colours, reset them when the
        // output of --check-config was read back.
        var c = Config()
        try ConfigFiles.apply(contents: Array("[theme]\npath_color = #04aaff80\ntheme = default\nnode_color = #112233ff\n".utf8),
                              named: "a.conf", to: &c)
        var again = Config()
        try ConfigFiles.apply(contents: Array(c.text.utf8), named: "b.conf", to: &again)
        #expect(again.text == c.text)
        #expect(c.text.contains("node_color = #112233ff"))
    }

    @Test func everyClassOfErrorNamesFileAndLine() {
        let cases: [(String, Int, String)] = [
            ("[pattern]\ngrid 4x4\n", 2, "expected 'key = value' or '[section]'"),
            ("[pattern\ngrid = 4x4\n", 1, "expected 'key = value' or '[section]'"),
            ("\n[colours]\nx = 1\n", 3, "unknown section [colours] (known: screen, pattern, code, lockout, socket, lock, display, input, theme, messages, metrics, logind, service)"),
            ("[pattern]\ngird = 3x3\n", 2, "unknown key 'gird' in [pattern]"),
            ("gird = 3x3\n", 1, "unknown key 'gird'"),
            ("[pattern]\ngrid = 1x3\n", 2, "[pattern] grid: expected ROWSxCOLUMNS from 2x2 to 9x9, found '1x3'"),
            ("[pattern]\nmin_length = 0\n", 2, "[pattern] min_length: expected a whole number from 1 to 81, found '0'"),
            ("[pattern]\nhit_factor = lots\n", 2, "[pattern] hit_factor: expected a number from 0.1 to 1.0, found 'lots'"),
            ("[pattern]\n\nrepeat = twice\n", 3, "[pattern] repeat: expected never or allowed, found 'twice'"),
            ("[pattern]\nhash = 0-1-2-5-8\n", 2, "[pattern] hash: expected a hash made by 'touchlockctl hash-pattern' (it starts with '$')"),
            ("[lockout]\nschedule = 1,x\n", 2, "[lockout] schedule: expected 'gatekeeper', 'none' or seconds per failure like 0,0,0,0,60,300; found '1,x'"),
            ("[lockout]\nstate_file = state\n", 2, "[lockout] state_file: expected an absolute path, found 'state'"),
            ("[socket]\ngroup = two words\n", 2, "[socket] group: expected a group name, found 'two words'"),
            ("[theme]\npath_color = blue\n", 2, "[theme] path_color: expected a colour like #00aaff or #00aaff80, found 'blue'"),
            ("[theme]\nfont_family =\n", 2, "[theme] font_family: expected a font family name"),
            ("[input]\noutput = DP-1\nquirk = \"Panel\" output=HDMI_A:1\n", 3,
             "[input] quirk: output: expected a connector name (e.g. HDMI-A-1), found 'HDMI_A:1'"),
        ]
        for (text, line, message) in cases {
            #expect(problem(text) == Config.Error(file: "x.conf", line: line, message: message), "\(text)")
        }
        // The first problem of a file is the one reported.
        #expect(problem("[pattern]\ngrid = 3x3\nmin_length = 99\ngird = 1\n")?.line == 3)
    }

    /// Found by the config fuzz target: libinih reads a line of at most 199 bytes and the
    /// rest of a longer one as a line of its own, and bytes that are not UTF-8 were
    /// silently replaced, so a value could be read other than as written and
    /// --check-config printed settings that did not read back.
    @Test func linesAreReadAsWrittenOrRefused() throws {
        let t = try Tree()
        let f = t.root + "/x.conf"
        func problem(_ bytes: [UInt8]) throws -> Config.Error? {
            try DurableFile.replace(f, with: bytes, mode: 0o644)
            var c = Config()
            do { try ConfigFiles.load([f], into: &c); return nil } catch { return error }
        }
        // The tail of a long line would have set the state file.
        let padded = "message_unlocked = " + String(repeating: "x", count: 200) + "state_file = /tmp/elsewhere\n"
        #expect(try problem(Array(("# long\n" + padded).utf8)) == Config.Error(file: f, line: 2, message: "line longer than 199 bytes"))
        let latin1: [UInt8] = Array("[messages]\nwrong_code = Code faux, r".utf8) + [0xE9] + Array("essayez\n".utf8)
        #expect(try problem(latin1) == Config.Error(file: f, line: 2, message: "not UTF-8 text"))
        #expect(try problem(Array("[messages]\nunlocked = ok\0 ignored\n".utf8)) == Config.Error(file: f, line: 2, message: "a NUL byte in the line"))
        let long = "[messages]\nwrong_code=" + String(repeating: "y", count: 161) + "\n"
        #expect(try problem(Array(long.utf8)) == Config.Error(file: f, line: 2, message: "[messages] wrong_code: longer than 160 bytes"))

        // The longest value fits, and the settings written back read back the same.
        let longest = String(repeating: "验", count: 53) + "z"   // 160 bytes
        let c = try load("[messages]\nwrong_code=" + longest + "\n[input]\nquirk = \"" + String(repeating: "p", count: 150) + "\" swap_xy\n")
        #expect(c.screens.messages.wrongCode == longest)
        #expect(c.text.split(separator: "\n").allSatisfy { $0.utf8.count <= ConfigFiles.maxLineBytes })
        #expect(try load(c.text).text == c.text)
    }

    @Test func aFileThatCannotBeReadIsAnError() throws {
        var c = Config()
        #expect(throws: Config.Error(file: "/nonexistent/x.conf", line: 0, message: "cannot read: No such file or directory")) {
            try ConfigFiles.load(["/nonexistent/x.conf"], into: &c)
        }
        let t = try Tree()
        #expect(throws: Config.Error(file: t.root, line: 0, message: "cannot read: a directory, not a regular file")) {
            try ConfigFiles.load([t.root], into: &c)
        }
    }

    @Test func commentsAndColoursAreToldApart() throws {
        let c = try load("; comment\n# comment\n[theme]\npath_color = #00aaff80 ; translucent\nnode_color = #ffffff  # white\n")
        #expect(c.theme.path.alpha == 128.0 / 255)
        #expect(c.theme.node == Color(hex: "#ffffff"))
    }

    /// Found by the config fuzz target: libinih passed `key =;x` on as ";x" but takes
    /// `key = ;x`, the form --check-config writes, as a comment, so the settings printed
    /// did not read back. A ';' that begins a value now starts a comment in either form.
    @Test func aSemicolonBeginningAValueIsACommentWrittenOrNot() throws {
        for line in ["code_prompt =;请输入 = x", "code_prompt = ;请输入", "code_prompt=;"] {
            #expect(problem("[messages]\n\(line)\n") == Config.Error(file: "x.conf", line: 2, message: "[messages] code_prompt: expected some text"), "\(line)")
        }
        let c = try load("[messages]\ncode_prompt = 请输入;验证码\nwrong_code = x;\n")
        #expect(c.screens.messages.codePrompt == "请输入;验证码")
        #expect(c.screens.messages.wrongCode == "x;")
        #expect(try load(c.text).text == c.text)
    }

    /// The daemon refuses to start on a bad file, and --check-config prints the merge.
    @Test func theDaemonChecksAndPrintsItsConfig() throws {
        let t = try Tree()
        try t.write("/etc/touchlock/touchlock.conf", "[pattern]\ngrid = 3x4\n")
        let good = try t.write("/good.conf", "[lockout]\nschedule = 0,0,0,0,5\n")
        let bad = try t.write("/bad.conf", "[pattern]\n\nmin_length = many\n")
        var r = try run([DaemonProcess.binary, "--config-root", t.root, "-C", good, "--check-config"], in: t.root)
        #expect(r.status == 0)
        #expect(r.output.contains("grid = 3x4\n") && r.output.contains("schedule = 0,0,0,0,5\n"))
        #expect(r.output.contains("#   \(t.root)/etc/touchlock/touchlock.conf\n"))
        r = try run([DaemonProcess.binary, "--config-root", t.root, "-C", bad, "--display", "headless"], in: t.root)
        #expect(r.status == 1)
        #expect(r.output.contains("\(bad):3: [pattern] min_length: expected a whole number from 1 to 81, found 'many'"))
    }
}
