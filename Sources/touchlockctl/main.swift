import Glibc
import TouchlockCommandLine
import TouchlockControl
import TouchlockCore
import TouchlockSystem

enum Exit {
    static let ok = ExitStatus.success
    static let failure = ExitStatus.failure
    static let usage = ExitStatus.usage
}

func writeError(_ text: String) {
    StandardStreams.errorText(text)
}

func fail(_ message: String, _ code: Int32 = Exit.failure) -> Never {
    writeError("touchlockctl: \(message)\n")
    exit(code)
}

func getenvString(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
}

/// One line to stdout, flushed at once so a reader of a pipe sees each event as it comes.
func printLine(_ line: String) {
    print(line)
    fflush(nil)
}

func connect(_ socket: String) -> ControlClient {
    do {
        return try ControlClient.connect(path: socket)
    } catch {
        if case .system(let e) = error { fail("cannot connect to \(socket): \(e.errno)") }
        fail("cannot connect to \(socket): \(error)")
    }
}

/// Sends `kind`; returns the reply line, or reports an error reply and exits 1.
func request(_ client: ControlClient, _ kind: RequestKind, echo: Bool) -> String {
    do { return try answer(client, kind, echo: echo) } catch {
        fail("\(kind.rawValue): \(error)")
    }
}

/// Sends `kind`; returns the reply line, reports an error reply and exits 1, or throws
/// when the daemon does not answer (gone, or no reply within `replyTimeout`).
func answer(_ client: ControlClient, _ kind: RequestKind, echo: Bool) throws(ControlClientError) -> String {
    let line = try client.request(kind, timeout: replyTimeout)
    let header = try? client.decode(ReplyHeader.self, from: line)
    if echo { printLine(line) }
    guard let header, header.ok else {
        fail("\(kind.rawValue): \(header?.error?.description ?? "unreadable reply: \(line)")")
    }
    return line
}

/// Runs the command of `invocation`; its exit status.
func run(_ invocation: Invocation) throws(EarlyExit) -> Int32 {
    switch invocation.command {
    case "metrics" where invocation.parsed.flag("openmetrics"):
        // The status and the figures, as a Prometheus scraper reads them.
        let client = connect(invocation.socket)
        let status = try? client.decode(Status.self, from: request(client, .status, echo: false))
        let line = request(client, .metrics, echo: false)
        guard let metrics = try? client.decode(Metrics.self, from: line) else { fail("metrics: unreadable reply: \(line)") }
        print(MetricsExposition.render(status: status, metrics: metrics, format: .openMetrics), terminator: "")
        return Exit.ok
    case "status" where !invocation.parsed.flag("json"):
        let client = connect(invocation.socket)
        let line = request(client, .status, echo: false)
        guard let status = try? client.decode(Status.self, from: line) else { fail("status: unreadable reply: \(line)") }
        print(status.text, terminator: "")
        return Exit.ok
    case "status", "lock", "metrics":
        // One request, its reply printed.
        let client = connect(invocation.socket)
        _ = request(client, RequestKind(rawValue: invocation.command!)!, echo: true)
        return Exit.ok
    case "wait-unlock":
        let timeout = try invocation.value("timeout", Commands.seconds)
        return waitUnlock(socket: invocation.socket, timeout: timeout)
    case "subscribe":
        let client = connect(invocation.socket)
        _ = request(client, .subscribe, echo: false)
        // Every line after the reply is an event; unknown kinds are printed too.
        while true {
            do {
                guard let line = try client.readLine() else { return Exit.ok }
                printLine(line)
            } catch {
                fail("\(error)")
            }
        }
    case "message":
        let p = invocation.parsed
        let clear = p.flag("clear")
        guard clear != (p.arguments.count == 1), p.arguments.count <= 1 else {
            throw invocation.usageError("message takes one TEXT, or --clear")
        }
        var text: String?
        if let t = p.arguments.first {
            do throws(ScreenMessage.Refusal) { text = try ScreenMessage.check(t) } catch {
                throw invocation.usageError("\(error)")
            }
        }
        let client = connect(invocation.socket)
        let line: String
        do { line = try client.request(Request(id: 0, request: .message, text: text), timeout: .milliseconds(5000)) } catch {
            fail("message: \(error)")
        }
        printLine(line)
        guard let header = try? client.decode(ReplyHeader.self, from: line), header.ok else {
            fail("message: \((try? client.decode(ReplyHeader.self, from: line))?.error?.description ?? "unreadable reply: \(line)")")
        }
        return Exit.ok
    case "lockout":
        guard invocation.parsed.flag("reset") else { throw invocation.usageError("lockout takes --reset") }
        _ = request(connect(invocation.socket), .resetLockout, echo: true)
        return Exit.ok
    case "enroll": return try enrollCommand(invocation)
    case "hash-pattern": return try hashPatternCommand(invocation)
    case "set-secret": return try setSecretCommand(invocation)
    case "hash-code": return hashCodeCommand(invocation)
    case "replay": return try replayCommand(invocation)
    case "preview": return try previewCommand(invocation)
    case "service-key": return try ServiceCommands.keyCommand(invocation)
    case "service-code": return try ServiceCommands.codeCommand(invocation)
    default:
        // The parser knows the same commands: reaching here is a bug of this file.
        fail("no code for the command '\(invocation.fullName)'")
    }
}

/// How long the hand-back may take after the unlock before `wait-unlock` gives up.
let handBackTimeout = Interval.milliseconds(10_000)
/// How long a request may wait for its reply.
let replyTimeout = Interval.milliseconds(5000)
/// The pause before trying touchlockd again: doubled after each try that found no daemon
/// or a busy one, up to the longest; back to the first once a daemon answered.
let retryFirst = Interval.milliseconds(200)
let retryLongest = Interval.milliseconds(5000)

/// Waits for the unlock and the hand-back: the gate a kiosk app is ordered behind, which
/// opens (exit 0) only on the unlock. Until then, a daemon that is away (not started yet,
/// failing to start, restarting, crashed, stopped by a signal, upgraded) or busy (all its
/// client slots taken) is waited for, however long, trying again at growing intervals:
/// the device is still locked, and the daemon after it tells the unlock. Only a refusal
/// that waiting cannot cure (`EACCES`, an error reply such as `forbidden`), `--timeout`,
/// or a hand-back that does not come end it, with status 1.
func waitUnlock(socket: String, timeout: Interval?) -> Int32 {
    let deadline = timeout.map { EventLoop.now() + $0 }
    // Each reason is told once while the daemon stays away (a busy daemon's refusal and
    // its closed connection may alternate), again once one has answered in between.
    var told: Set<String> = []
    var pause = retryFirst
    while true {
        let why: String
        do {
            let client = try ControlClient.connect(path: socket)
            switch waitUnlock(client, until: deadline) {
            case .done(let status): return status
            case .lost(let reason, let answered):
                why = reason
                if answered {
                    pause = retryFirst
                    told = []
                }
            }
        } catch {
            if case .system(let e) = error, e.errno == .permissionDenied || e.errno == .notPermitted {
                fail("cannot connect to \(socket): \(e.errno)")
            }
            if case .untrusted = error { fail("cannot connect to \(socket): \(error)") }
            why = "\(error)"
        }
        if told.insert(why).inserted {
            StandardStreams.error("touchlockctl: wait-unlock: \(why); still locked, waiting for touchlockd")
        }
        let now = EventLoop.now()
        if let deadline, now >= deadline { fail("timed out waiting for an unlock (\(why))") }
        let wait = deadline.map { min(pause, $0 - now) } ?? pause
        usleep(UInt32(clamping: max(wait.microseconds, 0)))
        pause = min(Interval(microseconds: pause.microseconds.saturatingMultiplied(by: 2)), retryLongest)
    }
}

enum WaitOutcome {
    /// Unlocked and handed back, or a failure said: the exit status.
    case done(Int32)
    /// The daemon went away, stopped answering or was busy before the unlock: why, and
    /// whether it had taken this client in (subscribed it) first.
    case lost(String, answered: Bool)
}

/// One connection's wait.
func waitUnlock(_ client: ControlClient, until deadline: Instant?) -> WaitOutcome {
    // Subscribed first, then the status, on one connection: an unlock before the status
    // shows in it, one after it comes as an event; none is missed. It returns once the
    // screen is the kiosk's again (`handed_over`), not at the unlock itself: a kiosk
    // started then finds its VT shown.
    var statusLine = ""
    for kind in [RequestKind.subscribe, .status] {
        do { statusLine = try client.request(kind, timeout: replyTimeout) } catch {
            return .lost("\(kind.rawValue): \(error)", answered: kind != .subscribe)
        }
        guard let header = try? client.decode(ReplyHeader.self, from: statusLine) else {
            StandardStreams.error("touchlockctl: wait-unlock: \(kind.rawValue): unreadable reply: \(statusLine)")
            return .done(Exit.failure)
        }
        if let error = header.error, error.code.isTransient {
            // Too many clients, say: another try later may be let in.
            return .lost("\(kind.rawValue): \(error)", answered: false)
        }
        guard header.ok else {
            StandardStreams.error("touchlockctl: wait-unlock: \(kind.rawValue): \(header.error?.description ?? "failed")")
            return .done(Exit.failure)
        }
    }
    var unlockedLine: String?
    var handBackDeadline: Instant?
    if let st = try? client.decode(Status.self, from: statusLine), st.state == .unlocked,
       let method = st.method, let at = st.unlockedAt {
        // Already unlocked: its event, as a subscriber saw it.
        let line = client.line(of: Event.unlocked(method: method, at: Instant(microseconds: at)))
        if st.display == nil || st.display == .handedOver {
            printLine(line)
            return .done(Exit.ok)
        }
        unlockedLine = line
        handBackDeadline = EventLoop.now() + handBackTimeout
    }
    while true {
        let ends = [deadline, handBackDeadline].compactMap { $0 }.min()
        let left = ends.map { $0 - EventLoop.now() }
        do {
            if let left, left.microseconds <= 0 { throw ControlClientError.timedOut }
            guard let (event, line) = try client.nextEvent(timeout: left) else {
                // A daemon that exits after the unlock (--once) gives the screen back as it goes.
                if let unlockedLine {
                    printLine(unlockedLine)
                    return .done(Exit.ok)
                }
                return .lost("touchlockd closed the connection", answered: true)
            }
            switch event {
            case .unlocked:
                unlockedLine = line
                handBackDeadline = EventLoop.now() + handBackTimeout
            case .handedOver:
                if let unlockedLine {
                    printLine(unlockedLine)
                    return .done(Exit.ok)
                }
            case .locked:
                // Locked again before the hand-back: wait for the next unlock.
                unlockedLine = nil
                handBackDeadline = nil
            case .duress, .failed, .storeFailed, .lockout, .progress, .enrolled, .enrollFailed:
                break
            }
        } catch ControlClientError.timedOut {
            if unlockedLine != nil, let h = handBackDeadline, deadline.map({ h <= $0 }) ?? true {
                let st = try? client.decode(Status.self, from: request(client, .status, echo: false))
                fail("unlocked, but the screen was not handed back within \(handBackTimeout.milliseconds / 1000) s"
                     + " (display: \(st?.display?.rawValue ?? "unknown")\(st?.displayReason.map { ", \($0)" } ?? ""))")
            }
            fail("timed out waiting for an unlock")
        } catch {
            // Also after the unlock: the next daemon's status tells whether the screen was
            // handed back.
            return .lost("\(error)", answered: true)
        }
    }
}

do {
    let invocation = try CommandLineParser.parse(ProgramArguments.afterName, program: Commands.program)
        .invocation()
    exit(try run(invocation))
} catch {
    error.finish()
}
