import Glibc
import TouchlockCommandLine
import TouchlockConfig
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// `touchlockctl set-secret pattern|code [--file FILE] [--grid RxC] [--min-length N]
/// [--repeat never|allowed] [-C FILE]`: reads the secret twice on standard input (on a
/// terminal without echo), checks it (a pattern as a finger draws it on the grid and
/// under the repeat policy in force, a code as the pad takes it), hashes it and writes the hash into the root-only secrets file in one step
/// (0600, written whole, fsynced, renamed into place). Needs no daemon: for an image or
/// a first boot. The secret never appears on a command line or in a file in clear.
func setSecretCommand(_ invocation: Invocation) throws(EarlyExit) -> Int32 {
    let p = invocation.parsed
    guard let method = p.arguments.first.flatMap(UnlockMethod.init(rawValue:)) else {
        throw invocation.usageError("say which secret: pattern or code")
    }
    let file = p.value("file") ?? SecretFiles.defaultPath
    // The default file's directory is made if missing (a first install from source); a
    // file named with --file goes only where its directory is: a mistyped path is
    // refused before the secret is asked for, and no directory is made for it.
    let directory = DurableFile.directory(of: file)
    var st = stat()
    if p.value("file") != nil, stat(directory, &st) != 0 || st.st_mode & S_IFMT != S_IFDIR {
        fail("set-secret: \(directory): no such directory (--file \(file)); nothing written")
    }
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

    let existing: String?
    do { existing = try DurableFile.read(file).map { String(decoding: $0, as: UTF8.self) } } catch {
        fail("set-secret: cannot read \(file): \(error)")
    }
    // Written in the form the file has (`[pattern]` / `hash =`, or `pattern_hash =`), and
    // read back with the daemon's parser first: a file it would refuse is not written.
    let text = SecretFiles.updated(existing, setting: settings)
    do throws(SecretFiles.Refusal) { try SecretFiles.check(text, named: file, setting: settings) } catch {
        fail("set-secret: \(file) left as it was: \(error)")
    }
    do {
        try DurableFile.makeDirectory(DurableFile.directory(of: file), mode: 0o755)
        try DurableFile.replace(file, with: Array(text.utf8), mode: 0o600)
    } catch {
        fail("set-secret: cannot write \(file): \(error)")
    }
    printLine("\(method.rawValue) stored in \(file) (mode 0600); touchlockd uses it from its next start"
              + " (it wins over a \(method.rawValue) enrolled in its state)")
    return Exit.ok
}
