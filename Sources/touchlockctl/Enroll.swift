import Glibc
import TouchlockCommandLine
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// The terminal's settings from before echo was turned off, while a secret is read, for
/// `echoBack` to put back if a signal ends the program then (Ctrl-C at the prompt): the
/// shell would otherwise be left with echo off.
nonisolated(unsafe) private var echoSaved = termios()
nonisolated(unsafe) private var echoOff: sig_atomic_t = 0

/// A signal that ends the program while echo is off: the terminal's settings back, then
/// the signal's default action (the handler is reset on entry; the signal raised here is
/// delivered once it returns).
private func echoBack(_ signal: Int32) {
    if echoOff != 0 {
        tcsetattr(0, TCSANOW, &echoSaved)
        _ = write(2, "\n", 1)
    }
    raise(signal)
}

/// Reads one line from standard input into a buffer the caller wipes. On a terminal
/// it prompts on stderr and turns echo off, until the line is read or a signal (SIGINT,
/// SIGQUIT, SIGTERM, SIGHUP) ends the program.
func readSecretLine(prompt: String) -> [UInt8]? {
    var quiet = termios()
    let tty = isatty(0) == 1 && tcgetattr(0, &quiet) == 0
    if tty {
        echoSaved = quiet
        for s in [SIGINT, SIGQUIT, SIGTERM, SIGHUP] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { echoBack($0) }
            action.sa_flags = Int32(truncatingIfNeeded: SA_RESETHAND)
            sigemptyset(&action.sa_mask)
            sigaction(s, &action, nil)
        }
        echoOff = 1
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(0, TCSAFLUSH, &quiet)
        // Only now: what is typed after the prompt shows is neither echoed nor flushed.
        writeError(prompt)
    }
    defer {
        if tty {
            tcsetattr(0, TCSAFLUSH, &echoSaved)
            echoOff = 0
            writeError("\n")
        }
    }
    return StandardStreams.readLine(limit: 1024)
}

/// `touchlockctl enroll pattern|code [--duress]`, `enroll --remove METHOD`,
/// `enroll --status`, `enroll pattern|code --screen [--timeout S]`. The secret is read
/// twice on standard input (one per line; on a terminal without echo), checked against
/// the daemon's screen, hashed here with yescrypt, and only the hash is sent to the
/// daemon, which accepts it from root only.
func enrollCommand(_ invocation: Invocation) throws(EarlyExit) -> Int32 {
    let p = invocation.parsed
    let method = p.arguments.first.flatMap(UnlockMethod.init(rawValue:))
    let duress = p.flag("duress"), remove = p.flag("remove"), status = p.flag("status"), screen = p.flag("screen")
    let timeout = try invocation.value("timeout", Commands.seconds)
    if timeout != nil && !screen { throw invocation.usageError("--timeout applies to --screen only") }
    if screen && (duress || remove || status) {
        throw invocation.usageError("--screen enrolls a pattern or a code, not with --duress, --remove or --status")
    }
    if status && (method != nil || duress || remove) {
        throw invocation.usageError("--status takes no secret and no other option")
    }
    if status { return enrollStatus(connect(invocation.socket)) }
    guard let method else { throw invocation.usageError("say which secret: pattern or code") }
    if duress && method != .code { throw invocation.usageError("only a code can be a duress code") }
    let client = connect(invocation.socket)
    let statusLine = request(client, .status, echo: false)
    guard let st = try? client.decode(Status.self, from: statusLine) else { fail("enroll: unreadable status: \(statusLine)") }
    guard let kind = SecretKind(method) else { throw invocation.usageError("say which secret: pattern or code") }
    let target: SecretKind = duress ? .duress : kind
    if screen { return enrollOnScreen(client, method, timeout: timeout) }
    if remove {
        let reply = send(client, Request(id: 0, request: .enroll, method: target, hash: nil))
        return reply ? Exit.ok : Exit.failure
    }

    let what = duress ? "duress code" : method.rawValue
    guard var first = readSecretLine(prompt: "New \(what): ") else { fail("enroll: no \(what) on standard input") }
    defer { SecretHash.wipe(&first) }
    guard var second = readSecretLine(prompt: "Repeat the \(what): ") else {
        fail("enroll: give the \(what) twice (two lines on standard input)")
    }
    defer { SecretHash.wipe(&second) }
    guard SecretHash.constantTimeEqual(first, second) else { fail("enroll: the two entries differ; nothing changed") }

    var bytes: [UInt8]
    var length: Int?
    switch method {
    case .service:
        // The parser takes pattern or code only.
        fail("enroll: service codes have no secret of their own: their key is a file (docs/service-codes.md)")
    case .pattern:
        guard let grid = st.pattern else { fail("enroll: the daemon's screen has no pattern grid") }
        let rows = grid.rows, columns = grid.columns
        let minimum = grid.minLength ?? 4
        // A daemon that does not say allows no repeat.
        let repeats = grid.repeats ?? .never
        // As a finger draws it on the daemon's grid: a pattern it cannot draw as given
        // could never unlock.
        let pattern: Pattern
        do {
            // The hit factor of the daemon's grid: hit radius over half a cell.
            let cell = grid.nodes.count > 1 ? abs(grid.nodes[1][0] - grid.nodes[0][0]) : 0
            let hitFactor = cell > 0 ? 2 * grid.hitRadius / cell : 0.6
            pattern = try Pattern.drawable(String(decoding: first, as: UTF8.self),
                                           on: .unit(rows: rows, columns: columns, hitFactor: hitFactor),
                                           minimumLength: minimum, repeats: repeats)
        } catch {
            fail("enroll: \(error) (the daemon's grid \(rows)x\(columns), min_length \(minimum), repeat \(repeats))")
        }
        bytes = pattern.secretBytes
    case .code:
        // Checked before hashing: a code the daemon's pad cannot take could never be typed.
        do {
            var values = try CodeRules.digits(first)
            SecretHash.wipe(&values)
            if let pad = st.code?.length { try CodeRules.fits(first.count, pad: pad) }
        } catch {
            fail("enroll: \(error.message)")
        }
        length = first.count
        var digits = first
        bytes = codeSecretBytes(&digits)
    }
    let hash: String
    do { hash = try SecretHash.make(&bytes) } catch { fail("enroll: \(error)") }
    return send(client, Request(id: 0, request: .enroll, method: target, hash: hash, length: length)) ? Exit.ok : Exit.failure
}

/// Prints which unlock methods have a secret.
private func enrollStatus(_ client: ControlClient) -> Int32 {
    let statusLine = request(client, .status, echo: false)
    guard let st = try? client.decode(Status.self, from: statusLine) else { fail("enroll: unreadable status: \(statusLine)") }
    let enrolled = st.enrolled ?? []
    for m in [UnlockMethod.pattern, .code] {
        printLine("\(m.rawValue): \(enrolled.contains(m) ? "enrolled" : "not enrolled")")
    }
    return Exit.ok
}

private func send(_ client: ControlClient, _ r: Request) -> Bool {
    let line: String
    do { line = try client.request(r, timeout: .milliseconds(10_000)) } catch { fail("enroll: \(error)") }
    guard let header = try? client.decode(ReplyHeader.self, from: line) else { fail("enroll: unreadable reply: \(line)") }
    if let e = header.error { fail("enroll: \(e)") }
    let name = r.method.map { $0 == .duress ? "duress code" : $0.rawValue } ?? "secret"
    printLine(r.hash == nil ? "\(name) removed" : "\(name) enrolled")
    return header.ok
}

/// Has the daemon show its enrollment screen and waits for the outcome: prints the
/// `enrolled` or `enroll_failed` event line; 0 when enrolled.
private func enrollOnScreen(_ client: ControlClient, _ method: UnlockMethod, timeout: Interval?) -> Int32 {
    _ = request(client, .subscribe, echo: false)
    let line: String
    do { line = try client.request(Request(id: 0, request: .enroll, method: SecretKind(method), screen: true),
                                   timeout: .milliseconds(10_000)) } catch { fail("enroll: \(error)") }
    guard let header = try? client.decode(ReplyHeader.self, from: line) else { fail("enroll: unreadable reply: \(line)") }
    if let e = header.error { fail("enroll: \(e)") }
    writeError("Draw (or type) the new \(method.rawValue) twice on the screen\n")
    let deadline = timeout.map { EventLoop.now() + $0 }
    while true {
        let left = deadline.map { $0 - EventLoop.now() }
        if let left, left.microseconds <= 0 { fail("enroll: timed out waiting for the enrollment on the screen") }
        do {
            guard let (event, text) = try client.nextEvent(timeout: left) else { fail("enroll: the daemon closed the connection") }
            switch event {
            case .enrolled(let m) where m == method:
                printLine(text)
                return Exit.ok
            case .enrollFailed(let m, _) where m == method:
                printLine(text)
                return Exit.failure
            default:
                continue
            }
        } catch ControlClientError.timedOut {
            fail("enroll: timed out waiting for the enrollment on the screen")
        } catch {
            fail("enroll: \(error)")
        }
    }
}
