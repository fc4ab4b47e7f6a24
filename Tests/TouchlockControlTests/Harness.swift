import Glibc
import TouchlockControl
import TouchlockCore
import TouchlockSystem

/// A control server on a real Unix socket in a fresh directory, with its event loop
/// run on the test's thread. Clients are real connections; a watched client is read
/// from inside the loop, so the test observes exactly what a client would.
final class Harness {
    let dir: String
    let path: String
    let loop: EventLoop
    private(set) var server: ControlServer!
    var status: Status
    private var watched: [Watched] = []
    private var done: (() -> Bool)?

    /// What a watched client has received.
    final class Watched {
        let client: ControlClient
        var lines: [String] = []
        var closed = false
        var error: (any Error)?
        init(_ client: ControlClient) { self.client = client }

        var events: [String] { lines.filter { $0.contains("\"event\"") } }
        var replies: [String] { lines.filter { !$0.contains("\"event\"") } }
    }

    /// How many times longer the tests wait where the wait is their own choice, not a bound
    /// of the server: TOUCHLOCK_TEST_TIME_SCALE, which scripts/vm/arm64-tests.sh sets for
    /// the tests run under emulation (there every instruction is emulated); 1 elsewhere.
    static let timeScale: Int64 = {
        guard let raw = getenv("TOUCHLOCK_TEST_TIME_SCALE") else { return 1 }
        let text = String(cString: raw)
        guard let n = Int64(text), (1...100).contains(n) else {
            fatalError("TOUCHLOCK_TEST_TIME_SCALE: expected a whole number from 1 to 100, found '\(text)'")
        }
        return n
    }()

    init(limits: ControlServer.Limits = ControlServer.Limits()) throws {
        var template = Array("/tmp/touchlock-ctl-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        dir = String(cString: made)
        // A directory that does not exist yet: the server creates it.
        path = dir + "/run/touchlock.sock"
        loop = try EventLoop(signals: [])
        status = Status(session: Session(), screen: Size(width: 800, height: 480),
                        grid: PatternGrid.layout(on: Size(width: 800, height: 480)))
        server = try ControlServer(path: path, loop: loop, limits: limits) { [unowned self] in self.status }
    }

    deinit {
        for w in watched where !w.closed { loop.unregister(w.client.fd) }
        server.close()
        rmdir(dir + "/run")
        rmdir(dir)
    }

    func connect() throws -> ControlClient { try ControlClient.connect(path: path) }

    /// Connects a client whose lines are collected as the loop runs.
    func connectWatched() throws -> Watched { try watch(connect()) }

    func watch(_ client: ControlClient) throws -> Watched {
        let w = Watched(client)
        watched.append(w)
        try loop.register(client.fd, .readable) { [unowned self, w] _ in
            do {
                let (lines, closed) = try w.client.readAvailableLines()
                w.lines += lines
                w.closed = closed
            } catch {
                w.error = error
                w.closed = true
            }
            if w.closed { self.loop.unregister(w.client.fd) }
            self.check()
        }
        return w
    }

    /// Stops reading `w` in the loop.
    func unwatch(_ w: Watched) {
        loop.unregister(w.client.fd)
        watched.removeAll { $0 === w }
    }

    /// Lets the loop evaluate the condition of the current `run` (after a producer's
    /// step, say).
    func check() {
        if let done, done() { loop.stop() }
    }

    /// Runs the loop until `condition` holds (checked whenever a watched client reads)
    /// or `timeout` passes; true if the condition was met. A loop that blocked would
    /// never get back to its timer, so returning at all shows it did not. The timeout is
    /// only how long the test waits, so it is stretched by `timeScale` where the tests run
    /// emulated.
    @discardableResult
    func run(timeout: Interval = .milliseconds(5000), until condition: @escaping () -> Bool) throws -> Bool {
        if condition() { return true }
        var timedOut = false
        let timer = loop.schedule(at: EventLoop.now() + Interval(microseconds: timeout.microseconds * Harness.timeScale)) { [loop] _ in
            timedOut = true
            loop.stop()
        }
        done = condition
        defer { done = nil; loop.cancel(timer) }
        try loop.run()
        return !timedOut && condition()
    }
}
