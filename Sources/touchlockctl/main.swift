import Glibc
import TouchlockControl
import TouchlockCore
import TouchlockSystem

let usage = """
    usage: touchlockctl [--socket PATH] <command> [options]

    Commands:
      status                       print the daemon's status as one JSON line
      wait-unlock [--timeout SEC]  wait for the next unlock; print its event line
      subscribe                    print every event line until the daemon goes away
      lock                         lock the device again (after an unlock)
      metrics                      print the daemon's latency figures as one JSON line
      enroll pattern|code          root: read the secret twice on standard input
                                   (a pattern as node numbers, e.g. 0-1-2-5-8) and
                                   store its hash in the daemon's state
      enroll pattern|code --screen [--timeout SEC]
                                   root: draw (type) the secret twice on the daemon's
                                   screen; print the enrolled or enroll_failed event
      enroll code --duress         root: the duress code (unlocks, tells subscribers)
      enroll --remove METHOD       root: remove a secret (pattern, code; --duress)
      enroll --status              say which methods have a secret
      hash-pattern [--grid RxC]    read a pattern (node numbers from 0, e.g. 0-1-2-5-8)
                                   on standard input; print its salted hash for
                                   the pattern_hash setting
      replay RECORDING [--desc DESCRIPTION] [--quirk QUIRK] --json
                                   decode an evemu recording through the daemon's
                                   touch assembler; print protocol, frames, sessions
                                   and every touch as one JSON object (no daemon)
      hash-code                    read a code (digits) on standard input; print its
                                   salted hash for the code_hash setting
      preview --screen pattern|code --state STATE --size WxH --out FILE.png [-C FILE]
                                   draw a lock screen in a state, without hardware

    Options:
      --socket PATH   the control socket (default: $\(ControlProtocol.socketEnvironmentVariable), \
    else \(ControlProtocol.defaultSocketPath))
      -h, --help      show this help

    Exit status: 0 on success, 1 on failure (daemon unreachable, timeout, disconnect,
    error reply), 64 on a usage error.

    """

enum Exit {
    static let ok: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64  // EX_USAGE
}

func writeError(_ text: String) {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let n = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return }
        bytes = bytes.dropFirst(n)
    }
}

func fail(_ message: String, _ code: Int32 = Exit.failure) -> Never {
    writeError("touchlockctl: \(message)\n")
    exit(code)
}

func usageError(_ message: String) -> Never {
    writeError("touchlockctl: \(message)\n\(usage)")
    exit(Exit.usage)
}

/// One line to stdout, flushed at once so a reader of a pipe sees each event as it comes.
func printLine(_ line: String) {
    print(line)
    fflush(nil)
}

struct Options {
    var socket: String
    var command: String?
    var timeout: Interval?

    init(arguments: [String]) {
        socket = getenv(ControlProtocol.socketEnvironmentVariable).map { String(cString: $0) }
            .flatMap { $0.isEmpty ? nil : $0 } ?? ControlProtocol.defaultSocketPath
        var rest = arguments[...]
        func value(of flag: String) -> String {
            guard let v = rest.popFirst() else { usageError("\(flag) needs a value") }
            return v
        }
        while let arg = rest.popFirst() {
            switch arg {
            case "-h", "--help":
                print(usage, terminator: "")
                exit(Exit.ok)
            case "--socket":
                socket = value(of: arg)
            case _ where arg.hasPrefix("--socket="):
                socket = String(arg.dropFirst("--socket=".count))
            case "--timeout":
                timeout = Self.seconds(value(of: arg))
            case _ where arg.hasPrefix("--timeout="):
                timeout = Self.seconds(String(arg.dropFirst("--timeout=".count)))
            case _ where arg.hasPrefix("-"):
                usageError("unknown option \(arg)")
            default:
                if command != nil { usageError("unexpected argument \(arg)") }
                command = arg
            }
        }
    }

    static func seconds(_ text: String) -> Interval {
        guard let s = Double(text), s.isFinite, s >= 0, s < 1e9 else {
            usageError("--timeout takes a number of seconds, not \(text)")
        }
        return Interval(microseconds: Int64(s * 1_000_000))
    }
}

func connect(_ options: Options) -> ControlClient { connect(options.socket) }

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
    let line: String
    do { line = try client.request(kind, timeout: .milliseconds(5000)) } catch {
        fail("\(kind.rawValue): \(error)")
    }
    let header = try? client.decode(ReplyHeader.self, from: line)
    if echo { printLine(line) }
    guard let header, header.ok else {
        fail("\(kind.rawValue): \(header?.error?.description ?? "unreadable reply: \(line)")")
    }
    return line
}

let arguments = Array(CommandLine.arguments.dropFirst())
// hash-pattern needs no daemon and takes options of its own.
if arguments.first == "hash-pattern" { exit(hashPatternCommand(Array(arguments.dropFirst()))) }
if arguments.first == "replay" { exit(replayCommand(Array(arguments.dropFirst()))) }
if arguments.first == "hash-code" { exit(hashCodeCommand(Array(arguments.dropFirst()))) }
if arguments.first == "preview" { exit(previewCommand(Array(arguments.dropFirst()))) }
if let i = arguments.firstIndex(of: "enroll") {
    // enroll takes options of its own; --socket may come before it.
    let before = Options(arguments: Array(arguments[..<i]) + ["enroll"])
    exit(enrollCommand(Array(arguments[(i + 1)...]), socket: before.socket))
}
let options = Options(arguments: arguments)
if options.timeout != nil && options.command != "wait-unlock" {
    usageError("--timeout applies to wait-unlock only")
}

switch options.command {
case "status", "lock", "metrics":
    // One request, its reply printed.
    let client = connect(options)
    _ = request(client, RequestKind(rawValue: options.command!)!, echo: true)
    exit(Exit.ok)

case "wait-unlock":
    let client = connect(options)
    _ = request(client, .subscribe, echo: false)
    let deadline = options.timeout.map { EventLoop.now() + $0 }
    while true {
        let left = deadline.map { $0 - EventLoop.now() }
        if let left, left.microseconds <= 0 { fail("timed out waiting for an unlock") }
        do {
            guard let (event, line) = try client.nextEvent(timeout: left) else {
                fail("the daemon closed the connection")
            }
            if case .unlocked = event {
                printLine(line)
                exit(Exit.ok)
            }
        } catch ControlClientError.timedOut {
            fail("timed out waiting for an unlock")
        } catch {
            fail("\(error)")
        }
    }

case "subscribe":
    let client = connect(options)
    _ = request(client, .subscribe, echo: false)
    // Every line after the reply is an event; unknown kinds are printed too.
    while true {
        do {
            guard let line = try client.readLine() else { exit(Exit.ok) }
            printLine(line)
        } catch {
            fail("\(error)")
        }
    }

case nil:
    usageError("no command given")

case let other?:
    usageError("unknown command \(other)")
}
