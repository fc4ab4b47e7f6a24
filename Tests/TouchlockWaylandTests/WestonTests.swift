import Glibc
import Testing
import TouchlockCore
import TouchlockSystem
import TouchlockWayland

/// The client against a real compositor without the session lock: Debian 12's weston 10,
/// headless. It finds the outputs with their sizes, and says the lock is not offered
/// (the daemon's `cover = auto` then keeps the VT hand-off).
@Suite(.serialized) final class WestonTests {
    let runtime: String
    var weston: pid_t = 0
    let socket: String

    init() throws {
        var template = Array("/tmp/touchlock-weston.XXXXXX".utf8CString)
        runtime = String(cString: try #require(mkdtemp(&template)))
        socket = "\(runtime)/wayland-test"
        let argv = ["/usr/bin/weston", "--backend=headless-backend.so", "--socket=wayland-test",
                    "--width=800", "--height=600", "--idle-time=0", "--shell=kiosk-shell.so",
                    "--log=\(runtime)/weston.log"]
        let env = ["XDG_RUNTIME_DIR=\(runtime)", "PATH=/usr/bin:/bin"]
        var cArgv = argv.map { strdup($0) } + [nil]
        var cEnv = env.map { strdup($0) } + [nil]
        defer { for p in cArgv + cEnv { free(p) } }
        let rc = posix_spawn(&weston, argv[0], nil, nil, &cArgv, &cEnv)
        try #require(rc == 0, "weston: \(rc)")
        // The socket appears once weston listens.
        for _ in 0..<100 where access(socket, F_OK) != 0 { usleep(50_000) }
        try #require(access(socket, F_OK) == 0, "weston made no socket")
    }

    deinit {
        kill(weston, SIGTERM)
        var status: Int32 = 0
        waitpid(weston, &status, 0)
        _ = system("rm -rf '\(runtime)'")
    }

    @Test func findsTheOutputAndNoSessionLock() throws {
        let loop = try EventLoop()
        let connection = try WaylandConnection(socket: socket, loop: loop)
        #expect(!connection.offersSessionLock)
        #expect(connection.outputs.count == 1)
        #expect(connection.outputs.first?.size == Size(width: 800, height: 600))
        #expect(connection.outputs.first?.scale == 1)
    }

    @Test func aSocketWithNoCompositorIsAFailureValue() throws {
        let loop = try EventLoop()
        #expect(throws: WaylandFailure.self) {
            _ = try WaylandConnection(socket: "\(self.runtime)/nobody-here", loop: loop)
        }
    }

    @Test func theCompositorGoneIsReportedOnTheLoop() throws {
        let loop = try EventLoop()
        let connection = try WaylandConnection(socket: socket, loop: loop)
        var events: [SessionLockEvent] = []
        connection.onLockEvent = { e in
            events.append(e)
            loop.stop()
        }
        kill(weston, SIGKILL)
        loop.schedule(at: EventLoop.now() + .milliseconds(5000)) { _ in loop.stop() }
        try loop.run()
        #expect(events.count == 1)
        if case .failed(.connectionLost) = events.first {} else { Issue.record("not a lost connection: \(events)") }
    }
}
