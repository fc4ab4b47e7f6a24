import Glibc
import TouchlockCommandLine
import TouchlockConfig
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// `touchlockctl set-secret pattern|code [--file FILE] [--grid RxC] [--min-length N]
/// [--repeat never|allowed] [-C FILE]`: reads the secret twice on standard input (on a
/// terminal without echo), checks it (a pattern as a finger draws it on the grid and
/// under the repeat policy in force, a code as the pad takes it), hashes it and writes
/// the hash into the root-only secrets file in one step (0600, written whole, fsynced,
/// renamed into place). Needs no daemon: for an image or a first boot. The secret never
/// appears on a command line or in a file in clear.
///
/// With `--hash HASH|-` or `--hash-file FILE` (and `--length N` for a code), the hash
/// made elsewhere (`hash-code`, `hash-pattern` on a workstation) is checked and written
/// instead: the way configuration management sets a secret. A file that already holds
/// what would be written, root's and 0600, is left untouched. The first word on standard
/// output says which: `changed` or `unchanged` (exit 0 both).
func setSecretCommand(_ invocation: Invocation) throws(EarlyExit) -> Int32 {
    let p = invocation.parsed
    guard let method = p.arguments.first.flatMap(UnlockMethod.init(rawValue:)) else {
        throw invocation.usageError("say which secret: pattern or code")
    }
    let imported = try ImportedHash(invocation, method: method)
    let file = p.value("file") ?? SecretFiles.defaultPath
    // The default file's directory is made if missing (a first install from source); a
    // file named with --file goes only where its directory is: a mistyped path is
    // refused before the secret is asked for, and no directory is made for it.
    let directory = DurableFile.directory(of: file)
    var st = stat()
    if p.value("file") != nil, stat(directory, &st) != 0 || st.st_mode & S_IFMT != S_IFDIR {
        fail("set-secret: \(directory): no such directory (--file \(file)); nothing written")
    }
    let settings: [(key: String, value: String)]
    if let imported { settings = try imported.settings() } else { settings = try hashTyped(invocation, method) }

    let existing: (bytes: [UInt8], info: FileContents.Info)?
    do { existing = try DurableFile.readWithOwner(file) } catch {
        fail("set-secret: cannot read \(file): \(error)")
    }
    // Written in the form the file has (`[pattern]` / `hash =`, or `pattern_hash =`), and
    // read back with the daemon's parser first: a file it would refuse is not written.
    let text = SecretFiles.updated(existing.map { String(decoding: $0.bytes, as: UTF8.self) }, setting: settings)
    do throws(SecretFiles.Refusal) { try SecretFiles.check(text, named: file, setting: settings) } catch {
        fail("set-secret: \(file) left as it was: \(error)")
    }
    // Already so, root's (the caller's) and 0600: nothing written, not even its time.
    if let existing, existing.bytes == Array(text.utf8), existing.info.mode & 0o7777 == 0o600,
       existing.info.owner == geteuid() {
        printLine("unchanged: \(file) already sets this \(method.rawValue) (mode 0600); nothing written")
        return Exit.ok
    }
    do {
        try DurableFile.makeDirectory(DurableFile.directory(of: file), mode: 0o755)
        try DurableFile.replace(file, with: Array(text.utf8), mode: 0o600)
    } catch {
        fail("set-secret: cannot write \(file): \(error)")
    }
    printLine("changed: \(method.rawValue) stored in \(file) (mode 0600); touchlockd uses it from its next start"
              + " (it wins over a \(method.rawValue) enrolled in its state)")
    return Exit.ok
}

/// The settings for a secret read twice on standard input, checked and hashed here.
private func hashTyped(_ invocation: Invocation, _ method: UnlockMethod) throws(EarlyExit) -> [(key: String, value: String)] {
    let rules = try PatternRules(invocation, command: "set-secret")
    guard var first = readSecretLine(prompt: "New \(method.rawValue): ") else {
        fail("set-secret: no \(method.rawValue) on standard input")
    }
    defer { SecretHash.wipe(&first) }
    guard var second = readSecretLine(prompt: "Repeat the \(method.rawValue): ") else {
        fail("set-secret: give the \(method.rawValue) twice (two lines on standard input)")
    }
    defer { SecretHash.wipe(&second) }
    guard SecretHash.constantTimeEqual(first, second) else { fail("set-secret: the two entries differ; nothing changed") }

    var bytes: [UInt8]
    var settings: [(key: String, value: String)] = []
    switch method {
    case .service:
        // The parser takes pattern or code only.
        fail("set-secret: service codes have no secret of their own: their key is a file (docs/service-codes.md)")
    case .pattern:
        bytes = rules.pattern(String(decoding: first, as: UTF8.self), command: "set-secret").secretBytes
    case .code:
        do {
            var values = try CodeRules.digits(first)
            SecretHash.wipe(&values)
        } catch {
            fail("set-secret: \(error.message)")
        }
        settings.append(("code_length", String(first.count)))
        var digits = first
        bytes = codeSecretBytes(&digits)
    }
    let hash: String
    do { hash = try SecretHash.make(&bytes) } catch { fail("set-secret: \(error)") }
    settings.insert((method == .pattern ? "pattern_hash" : "code_hash", hash), at: 0)
    return settings
}

/// A hash made elsewhere, as `--hash HASH`, `--hash -` (one line on standard input) or
/// `--hash-file FILE` name it, with a code's `--length N`.
private struct ImportedHash {
    enum Source {
        case line(String)
        case standardInput
        case file(String)
    }
    var method: UnlockMethod
    var source: Source
    var length: Int?

    /// Nil when no hash is given (the secret is typed); a usage error for options that
    /// do not go together.
    init?(_ invocation: Invocation, method: UnlockMethod) throws(EarlyExit) {
        let p = invocation.parsed
        let given = p.value("hash"), file = p.value("hash-file")
        let length = try invocation.value("length") { v throws(UsageError) in
            guard let n = Int(v) else { throw UsageError("expected a number of digits, found '\(v)'") }
            do throws(CodeRules.Problem) { try CodeRules.check(length: n) } catch { throw UsageError(error.message) }
            return n
        }
        if given != nil && file != nil { throw invocation.usageError("give the hash once: --hash or --hash-file") }
        guard let source: Source = given.map({ $0 == "-" ? .standardInput : .line($0) }) ?? file.map(Source.file) else {
            if length != nil { throw invocation.usageError("--length goes with --hash or --hash-file (a typed code sets its own)") }
            return nil
        }
        switch method {
        case .pattern:
            if length != nil { throw invocation.usageError("--length is a code's number of digits; a pattern has none") }
            for rule in ["grid", "min-length", "repeat"] where p.value(rule) != nil {
                throw invocation.usageError("--\(rule) checks a pattern typed here; a hash is checked where it is made (hash-pattern --\(rule))")
            }
        case .service:
            throw invocation.usageError("service codes have no secret of their own: their key is a file (docs/service-codes.md)")
        case .code:
            guard length != nil else {
                throw invocation.usageError("a code's hash needs --length N, the code's number of digits (the pad's boxes)")
            }
        }
        self.method = method
        self.source = source
        self.length = length
    }

    /// The hash, read and checked, with the code's length: the settings to write.
    func settings() throws(EarlyExit) -> [(key: String, value: String)] {
        var text: String
        switch source {
        case .standardInput:
            if isatty(0) == 1 { writeError("Hash: ") }
            guard let line = StandardStreams.readLine(limit: 1024) else { fail("set-secret: no hash on standard input") }
            text = String(decoding: line, as: UTF8.self)
        case .file(let path):
            let bytes: [UInt8]?
            do { bytes = try DurableFile.read(path) } catch { fail("set-secret: cannot read \(path): \(error)") }
            guard let bytes else { fail("set-secret: \(path): no such file; nothing written") }
            text = String(decoding: bytes, as: UTF8.self)
            while text.last == "\n" { text.removeLast() }
            if text.contains("\n") { fail("set-secret: \(path) holds more than one line; give a file with the hash alone") }
        case .line(let given):
            text = given
        }
        text = String(text.drop { $0 == " " || $0 == "\t" })
        while text.last == " " || text.last == "\t" || text.last == "\r" { text.removeLast() }
        do throws(SecretHash.Failure) { try SecretHash.checkImported(text) } catch {
            fail("set-secret: the \(method.rawValue) hash is refused: \(error); nothing written")
        }
        switch method {
        case .pattern: return [("pattern_hash", text)]
        case .code: return [("code_hash", text), ("code_length", String(length ?? 0))]
        case .service: fail("set-secret: service codes have no secret of their own; nothing written")
        }
    }
}
