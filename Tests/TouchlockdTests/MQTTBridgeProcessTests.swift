import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

private let screen = Size(width: 640, height: 400)

/// A program run in the background, its standard output and error to `logPath`.
final class BackgroundProcess {
    let logPath: String
    fileprivate(set) var pid: pid_t = 0

    init(_ args: [String], log: String, stdin: String? = nil) throws {
        logPath = log
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let cargs = args.map { strdup($0) } + [nil]
        let cenv = [strdup("PATH=/usr/bin:/bin:/usr/sbin"), nil]
        defer { cargs.forEach { free($0) }; cenv.forEach { free($0) } }
        // The signals as a new program expects them: the test process blocks some (its
        // event loops' signalfd), and mosquitto_sub's -W is an alarm.
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let r = posix_spawn(&pid, args[0], &actions, &attr, cargs, cenv)
        guard r == 0 else { throw SystemError("posix_spawn", Errno(rawValue: r), args[0]) }
    }

    deinit { stop(SIGKILL) }

    /// Runs `args` to its end; what it wrote.
    static func output(_ args: [String], in dir: String) throws -> (status: Int32, output: String) {
        let log = dir + "/run-\(EventLoop.now().microseconds).out"
        let p = try BackgroundProcess(args, log: log)
        var status: Int32 = 0
        while waitpid(p.pid, &status, 0) < 0 && errno == EINTR {}
        p.pid = 0
        defer { unlink(log) }
        return ((status >> 8) & 0xff, p.log)
    }

    func stop(_ signal: Int32 = SIGTERM) {
        guard pid > 0 else { return }
        kill(pid, signal)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        pid = 0
    }

    var log: String {
        (try? DurableFile.read(logPath)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Waits until the log holds `text`; whether it came within `ms`.
    func waitLog(_ text: String, ms: Int64 = 10_000) -> Bool {
        let deadline = EventLoop.now() + .milliseconds(ms)
        while EventLoop.now() < deadline {
            if log.contains(text) { return true }
            usleep(20_000)
        }
        return log.contains(text)
    }
}

/// A real Mosquitto broker on 127.0.0.1, on a free port, with a password file, and TLS
/// with a CA and a server certificate for `localhost` made by openssl for the test.
final class MosquittoBroker {
    let dir: String
    let port: Int
    let tls: Bool
    static let user = "kiosk", password = "s3cret-broker-pass"
    private var process: BackgroundProcess?

    init(in dir: String, tls: Bool) throws {
        self.dir = dir
        self.tls = tls
        port = Self.freePort()
        let passwd = dir + "/broker.passwd"
        #expect(system("mosquitto_passwd -b -c '\(passwd)' \(Self.user) \(Self.password) >/dev/null 2>&1") == 0)
        chmod(passwd, 0o644)  // mosquitto drops to its own user and must read it
        // Root, as the test is: mosquitto would drop to its own user, which cannot enter the
        // test's directory (0700).
        var conf = "user root\nper_listener_settings false\nallow_anonymous false\npassword_file \(passwd)\npersistence false\n"
        conf += "listener \(port) 127.0.0.1\n"
        if tls {
            let subj = "-subj /CN=touchlock-test-ca"
            let make = """
                cd '\(dir)' && \
                openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.crt -days 2 \(subj) && \
                openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr -subj /CN=localhost && \
                printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.ext && \
                openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile san.ext && \
                openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout other-ca.key -out other-ca.crt -days 2 -subj /CN=another-ca && \
                chmod 644 server.key
                """
            #expect(system("(\(make)) >/dev/null 2>&1") == 0, "openssl could not make the certificates")
            conf += "cafile \(dir)/ca.crt\ncertfile \(dir)/server.crt\nkeyfile \(dir)/server.key\n"
        }
        try DurableFile.replace(dir + "/mosquitto.conf", with: Array(conf.utf8), mode: 0o644)
    }

    var caFile: String { dir + "/ca.crt" }
    var otherCAFile: String { dir + "/other-ca.crt" }

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    func start() throws {
        process = try BackgroundProcess(["/usr/sbin/mosquitto", "-c", dir + "/mosquitto.conf"], log: dir + "/broker.log")
        #expect(process!.waitLog("running", ms: 10_000), "the broker did not start: \(process!.log)")
    }

    func stop() {
        process?.stop(SIGKILL)
        process = nil
    }

    /// mosquitto_sub/pub's connection options.
    var clientOptions: [String] {
        var o = ["-h", tls ? "localhost" : "127.0.0.1", "-p", String(port), "-u", Self.user, "-P", Self.password]
        if tls { o += ["--cafile", caFile] }
        return o
    }

    /// A subscriber from now on, writing "RETAINED TOPIC PAYLOAD" lines to its log.
    /// Returned once the broker has acknowledged the subscription.
    func subscriber(_ topics: [String], log: String) throws -> BackgroundProcess {
        let probe = "touchlock-test/probe"
        let p = try BackgroundProcess(["/usr/bin/mosquitto_sub"] + clientOptions + (topics + [probe]).flatMap { ["-t", $0] }
                                      + ["-F", "%r %t %p"], log: log)
        // Subscribed once a message published after it comes through.
        let deadline = EventLoop.now() + .milliseconds(10_000)
        while !p.log.contains(probe) && EventLoop.now() < deadline {
            try publish(probe, "probe")
            _ = p.waitLog(probe, ms: 300)
        }
        #expect(p.log.contains(probe), "\(p.log)")
        return p
    }

    /// The message retained on `topic` as a new subscriber gets it ("1 payload"), or "".
    func retained(_ topic: String) throws -> String {
        let out = try BackgroundProcess.output(["/usr/bin/mosquitto_sub"] + clientOptions + ["-t", topic, "-C", "1", "-W", "2", "-F", "%r %p"],
                                               in: dir).output
        // "Timed out" (on standard error) when nothing is retained.
        return out.split(separator: "\n").first { $0.hasPrefix("1 ") || $0.hasPrefix("0 ") }.map(String.init) ?? ""
    }

    func publish(_ topic: String, _ payload: String) throws {
        let r = try BackgroundProcess.output(["/usr/bin/mosquitto_pub"] + clientOptions + ["-t", topic, "-m", payload], in: dir)
        #expect(r.status == 0, "\(r.output)")
    }

    /// Waits until `retained(topic)` is `expected`.
    func waitRetained(_ topic: String, _ expected: String, ms: Int64 = 15_000) throws -> Bool {
        let deadline = EventLoop.now() + .milliseconds(ms)
        while EventLoop.now() < deadline {
            if try retained(topic) == expected { return true }
            usleep(100_000)
        }
        return false
    }
}

extension String {
    func trimmingCharacters(in set: Set<Character>) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}

/// touchlock-mqtt, the real binary built beside the tests, against a real touchlockd and
/// a real Mosquitto, watched by mosquitto_sub as Home Assistant would watch it.
@Suite(.serialized) struct MQTTBridgeProcessTests {
    static var binary: String { DurableFile.directory(of: DaemonProcess.binary) + "/touchlock-mqtt" }
    static let device = "kiosk7"
    static let prefix = "touchlock/kiosk7"

    func bridgeConfig(_ broker: MosquittoBroker, password: String = MosquittoBroker.password, ca: String? = nil,
                      extra: String = "") throws -> String {
        let pwFile = broker.dir + "/bridge.password"
        try DurableFile.replace(pwFile, with: Array((password + "\n").utf8), mode: 0o600)
        var c = "[broker]\nhost = \(broker.tls ? "localhost" : "127.0.0.1")\nport = \(broker.port)\n"
        c += "username = \(MosquittoBroker.user)\npassword_file = \(pwFile)\n"
        c += broker.tls ? "tls = on\nca_file = \(ca ?? broker.caFile)\n" : "tls = off\n"
        c += "[device]\nid = \(Self.device)\n" + extra
        let path = broker.dir + "/mqtt-\(EventLoop.now().microseconds).conf"
        try DurableFile.replace(path, with: Array(c.utf8), mode: 0o644)
        return path
    }

    func startBridge(_ d: DaemonProcess, config: String, socket: String? = nil) throws -> BackgroundProcess {
        try BackgroundProcess([Self.binary, "--config", config, "--socket", socket ?? d.socketPath], log: d.dir + "/bridge.log")
    }

    /// A daemon with the pattern 0-4-8-5 enrolled, whose touchscreen draws it after `lead`.
    func unlockingDaemon(lead: Int64, before: (DaemonProcess) throws -> Void = { _ in }) throws -> DaemonProcess {
        let d = try DaemonProcess(config: "error_hold_ms = 100\n")
        try before(d)
        try d.enrollPattern([0, 4, 8, 5])
        let replay = d.dir + "/right.evemu"
        // A lone SYN at 0 starts the replay's clock: the pattern comes `lead` after the start.
        var lines = recording(of: [[0, 4, 8, 5]], on: screen, lead: lead).split(separator: "\n").map(String.init)
        lines.insert("E: 0.000000 0000 0000 0", at: lines.firstIndex { $0.hasPrefix("E: ") } ?? lines.endIndex)
        try DurableFile.replace(replay, with: Array((lines.joined(separator: "\n") + "\n").utf8))
        try d.start(replay: replay)
        return d
    }

    @Test func announcesTheLockAndItsRetainedStateAndLocksFromTheBus() throws {
        var made: MosquittoBroker?
        let d = try unlockingDaemon(lead: 8_000_000) { d in
            made = try MosquittoBroker(in: d.dir, tls: true)
            try made!.start()
        }
        let broker = made!
        let events = try broker.subscriber([Self.prefix + "/event"], log: d.dir + "/events.log")
        let bridge = try startBridge(d, config: try bridgeConfig(broker))
        #expect(bridge.waitLog("connected to the broker"), "\(bridge.log)")

        // On connect: the discovery config and the state, retained, and online.
        let discovery = try broker.retained("homeassistant/lock/touchlock_\(Self.device)/config")
        #expect(discovery.hasPrefix("1 {"), "\(discovery)")
        for part in [#""unique_id":"touchlock_kiosk7""#, #""command_topic":"touchlock/kiosk7/set""#,
                     #""state_topic":"touchlock/kiosk7/state""#, #""availability_topic":"touchlock/kiosk7/availability""#,
                     #""state_locked":"locked""#, #""state_unlocked":"unlocked""#, #""state_jammed":"jammed""#] {
            #expect(discovery.contains(part), "\(part) in \(discovery)")
        }
        #expect(!discovery.contains("code_format"), "UNLOCK from the bus is off by default: \(discovery)")
        #expect(try broker.waitRetained(Self.prefix + "/state", "1 locked"))
        #expect(try broker.waitRetained(Self.prefix + "/availability", "1 online"))

        // The owner unlocks on the screen: `unlocked`, retained, and the event.
        #expect(try d.ctl(["wait-unlock", "--timeout", "20"]).status == 0)
        #expect(try broker.waitRetained(Self.prefix + "/state", "1 unlocked"))
        #expect(events.waitLog(#"0 touchlock/kiosk7/event {"event":"unlocked","method":"pattern"}"#), "\(events.log)")

        // LOCK from the bus locks the daemon.
        let c = try d.client()
        _ = try c.request(.subscribe, timeout: waited(5000))
        let sent = EventLoop.now()
        try broker.publish(Self.prefix + "/set", "LOCK")
        let got = MQTTBridgeProcessTestsSupport.events(c, ms: 5000) { $0 == .locked }
        let took = EventLoop.now() - sent
        #expect(got.last == .locked, "\(got); bridge: \(bridge.log)")
        #expect(try d.status().state == .locked)
        print("mqtt: LOCK published -> daemon's locked event: \(took.milliseconds) ms (mosquitto_pub's start included)")
        #expect(try broker.waitRetained(Self.prefix + "/state", "1 locked"))
        #expect(!bridge.log.contains(MosquittoBroker.password), "the password in the log: \(bridge.log)")
    }

    @Test func wrongCredentialsAndAnUnknownCAAreRefusedWithAClearLog() throws {
        let d = try DaemonProcess(config: "")
        try d.start(replay: nil)
        let broker = try MosquittoBroker(in: d.dir, tls: true)
        try broker.start()

        let wrong = try startBridge(d, config: try bridgeConfig(broker, password: "not-the-password"))
        #expect(wrong.waitLog("the broker refused the connection: "), "\(wrong.log)")
        #expect(wrong.log.contains("not authori"), "\(wrong.log)")
        #expect(!wrong.log.contains("not-the-password"), "\(wrong.log)")
        wrong.stop()
        #expect(try broker.retained(Self.prefix + "/availability") == "")

        let badCA = try startBridge(d, config: try bridgeConfig(broker, ca: broker.otherCAFile))
        #expect(badCA.waitLog("cannot connect to the broker at localhost:\(broker.port) (TLS)"), "\(badCA.log)")
        #expect(badCA.log.contains("certificate verify failed"), "\(badCA.log)")
        badCA.stop()
        #expect(try broker.retained(Self.prefix + "/availability") == "")
    }

    @Test func theLastWillSaysOfflineAndABrokerRestartGetsTheStateBack() throws {
        let d = try DaemonProcess(config: "")
        try d.start(replay: nil)
        let broker = try MosquittoBroker(in: d.dir, tls: false)
        try broker.start()
        let config = try bridgeConfig(broker)
        var bridge = try startBridge(d, config: config)
        #expect(try broker.waitRetained(Self.prefix + "/availability", "1 online"), "\(bridge.log)")

        // The bridge dies without a word: the broker publishes its will.
        let watcher = try broker.subscriber([Self.prefix + "/availability"], log: d.dir + "/availability.log")
        #expect(watcher.waitLog("touchlock/kiosk7/availability online"))
        bridge.stop(SIGKILL)
        #expect(watcher.waitLog("0 touchlock/kiosk7/availability offline", ms: 5000), "\(watcher.log)")
        #expect(try broker.retained(Self.prefix + "/availability") == "1 offline")

        // Started again, then the broker restarted empty (no persistence): the bridge
        // comes back and publishes the state, the availability and the discovery again.
        bridge = try startBridge(d, config: config)
        #expect(try broker.waitRetained(Self.prefix + "/availability", "1 online"), "\(bridge.log)")
        let connections = bridge.log.split(separator: "\n").filter { $0.contains("connected to the broker") }.count
        broker.stop()
        try broker.start()
        #expect(try broker.waitRetained(Self.prefix + "/state", "1 locked", ms: 20_000), "\(bridge.log)")
        #expect(try broker.waitRetained(Self.prefix + "/availability", "1 online"))
        #expect(try broker.retained("homeassistant/lock/touchlock_\(Self.device)/config").hasPrefix("1 {"))
        #expect(bridge.log.contains("lost the broker"), "\(bridge.log)")
        // Retained again by the bridge's new connection: the broker kept nothing (no persistence).
        #expect(bridge.log.split(separator: "\n").filter { $0.contains("connected to the broker") }.count == connections + 1, "\(bridge.log)")

        // touchlockd restarted: `offline` while it is away, then the state again.
        d.kill(SIGTERM)
        #expect(d.waitExit() == 0)
        #expect(try broker.waitRetained(Self.prefix + "/availability", "1 offline"), "\(bridge.log)")
        try d.start(replay: nil)
        #expect(try broker.waitRetained(Self.prefix + "/availability", "1 online", ms: 20_000), "\(bridge.log)")
        #expect(try broker.retained(Self.prefix + "/state") == "1 locked")
    }

    @Test func aFloodOfCommandsReachesTheDaemonBoundedAndRootIsAnsweredFast() throws {
        let d = try unlockingDaemon(lead: 1_000_000)
        #expect(try d.ctl(["wait-unlock", "--timeout", "20"]).status == 0)
        let broker = try MosquittoBroker(in: d.dir, tls: false)
        try broker.start()
        // The bridge talks to the daemon through a relay that counts the request lines.
        let relaySocket = d.dir + "/relay.sock", counted = d.dir + "/relay.count"
        let relay = try BackgroundProcess(["/usr/bin/python3", MQTTBridgeProcessTestsSupport.relayScript(in: d.dir),
                                           relaySocket, d.socketPath, counted], log: d.dir + "/relay.log")
        #expect(relay.waitLog("listening"), "\(relay.log)")
        let bridge = try startBridge(d, config: try bridgeConfig(broker, extra: "[commands]\nrate_per_s = 1\nburst = 3\n"),
                                     socket: relaySocket)
        #expect(try broker.waitRetained(Self.prefix + "/state", "1 unlocked"), "\(bridge.log)")

        // Root's status round trip before the flood.
        func roundTrips(_ n: Int) throws -> [Int64] {
            let c = try d.client()
            return try (0..<n).map { _ in
                let t = EventLoop.now()
                _ = try c.request(.status, timeout: waited(5000))
                return (EventLoop.now() - t).microseconds
            }
        }
        let before = try roundTrips(50).sorted()

        // 10,000 LOCK messages, as fast as mosquitto_pub sends them.
        let lines = d.dir + "/flood.txt"
        try DurableFile.replace(lines, with: Array(String(repeating: "LOCK\n", count: 10_000).utf8), mode: 0o644)
        let start = EventLoop.now()
        let flood = try BackgroundProcess(["/usr/bin/mosquitto_pub"] + broker.clientOptions + ["-t", Self.prefix + "/set", "-l"],
                                          log: d.dir + "/flood.log", stdin: lines)
        var during: [Int64] = []
        while flood.pid > 0 && waitpid(flood.pid, nil, WNOHANG) == 0 { during += try roundTrips(5) }
        during += try roundTrips(20)
        let floodTook = EventLoop.now() - start
        usleep(1_500_000)  // what the bridge still lets through after the flood
        let elapsed = EventLoop.now() - start
        let requests = Int((try? FileContents.text(counted, limit: 64)).flatMap { Int($0.trimmingCharacters(in: ["\n"])) } ?? -1)
        during.sort()
        // subscribe and status at the start, then at most burst + rate x time commands.
        let bound = 2 + 3 + Int(Double(elapsed.microseconds) / 1_000_000 * 1) + 1
        print("mqtt flood: 10000 LOCK in \(floodTook.milliseconds) ms; requests the daemon got: \(requests) (bound \(bound)); "
              + "root's status round trip before p50 \(before[before.count / 2]) us max \(before.last!) us, "
              + "during p50 \(during[during.count / 2]) us p99 \(during[during.count * 99 / 100]) us max \(during.last!) us (\(during.count) samples)")
        #expect(requests >= 3 && requests <= bound, "\(requests) requests; bridge: \(bridge.log)")
        #expect(try d.status().state == .locked)
        #expect(bridge.waitLog("commands from the bus dropped", ms: 12_000), "\(bridge.log)")
        relay.stop()
    }

    @Test func aBadSettingOrAPasswordFileOthersCanReadStopsItNamingTheFile() throws {
        let d = try DaemonProcess(config: "")
        let conf = d.dir + "/mqtt.conf"
        try DurableFile.replace(conf, with: Array("[broker]\nhost = 127.0.0.1\ntls = yes\n".utf8), mode: 0o644)
        var r = try BackgroundProcess.output([Self.binary, "--config", conf, "--socket", d.socketPath], in: d.dir)
        #expect(r.status == 1 && r.output.contains("\(conf):3: expected on, off or auto, found 'yes'"), "\(r)")

        try DurableFile.replace(conf, with: Array("[broker]\npassword = hunter2\n".utf8), mode: 0o644)
        r = try BackgroundProcess.output([Self.binary, "--config", conf, "--socket", d.socketPath], in: d.dir)
        #expect(r.status == 1 && r.output.contains("\(conf):2: a password is not kept in this file"), "\(r)")
        #expect(!r.output.contains("hunter2"))

        let pw = d.dir + "/password"
        try DurableFile.replace(pw, with: Array("hunter2\n".utf8), mode: 0o644)
        try DurableFile.replace(conf, with: Array("[broker]\nusername = u\npassword_file = \(pw)\n[device]\nid = x\n".utf8), mode: 0o644)
        r = try BackgroundProcess.output([Self.binary, "--config", conf, "--check-config"], in: d.dir)
        #expect(r.status == 1 && r.output.contains("\(pw):0: the password file may be read by others (mode 0644)"), "\(r)")
        #expect(!r.output.contains("hunter2"))
        chmod(pw, 0o640)
        r = try BackgroundProcess.output([Self.binary, "--config", conf, "--check-config"], in: d.dir)
        #expect(r.status == 0 && r.output.contains("broker: localhost:1883 without TLS as u"), "\(r)")
        #expect(r.output.contains("state: touchlock/x/state") && r.output.contains("discovery: homeassistant/lock/touchlock_x/config"), "\(r)")
    }

    @Test func unlockFromTheBusIsOffUnlessConfiguredAndThenAsksForTheServiceCode() throws {
        let d = try DaemonProcess(config: "")
        try d.start(replay: nil)
        let broker = try MosquittoBroker(in: d.dir, tls: false)
        try broker.start()
        let events = try broker.subscriber([Self.prefix + "/event"], log: d.dir + "/events.log")
        var bridge = try startBridge(d, config: try bridgeConfig(broker))
        #expect(try broker.waitRetained(Self.prefix + "/availability", "1 online"), "\(bridge.log)")
        try broker.publish(Self.prefix + "/set", #"{"action": "UNLOCK", "code": "123456"}"#)
        #expect(events.waitLog(#"{"error":"unlock_disabled","event":"command_failed"}"#), "\(events.log)")
        bridge.stop()

        bridge = try startBridge(d, config: try bridgeConfig(broker, extra: "[commands]\nunlock = on\ncode_digits = 6\n"))
        #expect(try broker.waitRetained(Self.prefix + "/availability", "1 online"), "\(bridge.log)")
        let discovery = try broker.retained("homeassistant/lock/touchlock_\(Self.device)/config")
        #expect(discovery.contains(#""code_format":"^\\d{6}$""#), "\(discovery)")
        // A code goes to the daemon as service_unlock; a daemon without a device key says
        // so, and the bridge tells the bus the command failed, without the code in its log.
        try broker.publish(Self.prefix + "/set", #"{"action": "UNLOCK", "code": "482913"}"#)
        #expect(events.waitLog(#"{"command":"unlock","error":"no_service_key","event":"command_failed"}"#), "\(events.log)")
        #expect(try d.status().state == .locked)
        #expect(!bridge.log.contains("482913") && !events.log.contains("482913"), "\(bridge.log)")
        try broker.publish(Self.prefix + "/set", "UNLOCK")
        #expect(events.waitLog(#"{"error":"code_required","event":"command_failed"}"#), "\(events.log)")
    }

    /// The whole way of a technician's code: an authenticator's code published as UNLOCK
    /// unlocks the device once, as `service`; the same code again, and a wrong one, are
    /// refused and counted by the daemon like any attempt; none of them is logged.
    @Test func aOneTimeCodeFromTheBusUnlocksOnceAndEveryTryCounts() throws {
        let d = try DaemonProcess(config: "")
        let keyPath = d.dir + "/service.key"
        let deviceKey = ServiceCrypto.deviceKey(fleetKey: Array("a fleet key for the bus tests...".utf8), deviceID: Self.device)
        try DurableFile.replace(keyPath, with: Array(ServiceKey.line(deviceKey).utf8), mode: 0o600)
        try DurableFile.replace(d.configPath, with: Array("[lockout]\nerror_hold_ms = 50\n[service]\nkey_file = \(keyPath)\n".utf8), mode: 0o644)
        try d.enrollPattern([0, 4, 8, 5])
        try d.start(replay: nil)
        let broker = try MosquittoBroker(in: d.dir, tls: true)
        try broker.start()
        let events = try broker.subscriber([Self.prefix + "/event"], log: d.dir + "/events.log")
        let bridge = try startBridge(d, config: try bridgeConfig(broker, extra: "[commands]\nunlock = on\ncode_digits = 6\n"))
        #expect(try broker.waitRetained(Self.prefix + "/state", "1 locked"), "\(bridge.log)")

        // The code a phone shows, as touchlockctl computes it from the device key.
        let shown = try BackgroundProcess.output([DaemonProcess.ctl, "service-code", "--key-file", keyPath], in: d.dir)
        #expect(shown.status == 0, "\(shown.output)")
        let code = shown.output.trimmingCharacters(in: [" ", "\n"])
        #expect(code.count == 6 && code.allSatisfy(\.isNumber), "\(code)")
        try broker.publish(Self.prefix + "/set", #"{"action": "UNLOCK", "code": "\#(code)"}"#)
        #expect(try broker.waitRetained(Self.prefix + "/state", "1 unlocked"), "\(bridge.log)\n\(d.log)")
        #expect(events.waitLog(#"{"event":"unlocked","method":"service"}"#), "\(events.log)")
        let unlocked = try d.status()
        #expect(unlocked.state == .unlocked && unlocked.method == .service)

        // LOCK, then the same code again: refused (taken once), counted.
        try broker.publish(Self.prefix + "/set", "LOCK")
        #expect(try broker.waitRetained(Self.prefix + "/state", "1 locked"), "\(bridge.log)")
        try broker.publish(Self.prefix + "/set", #"{"action": "UNLOCK", "code": "\#(code)"}"#)
        #expect(events.waitLog(#"{"command":"unlock","error":"wrong_code","event":"command_failed"}"#), "\(events.log)")
        var st = try d.status()
        #expect(st.state != .unlocked && st.failures == 1, "\(st)")
        #expect(try broker.retained(Self.prefix + "/state") == "1 locked")

        // The owner's pattern is not a service code: "0485" has the wrong length and is
        // refused by the bridge itself; a wrong six-digit code reaches the daemon and counts.
        let wrong = code == "000000" ? "000001" : "000000"
        usleep(1_200_000) // the bridge's rate: one command a second after a burst of 3
        try broker.publish(Self.prefix + "/set", #"{"action": "UNLOCK", "code": "\#(wrong)"}"#)
        var counted = false
        for _ in 0..<50 where !counted {
            st = try d.status()
            counted = st.failures == 2
            if !counted { usleep(100_000) }
        }
        #expect(counted && st.state != .unlocked, "\(st); \(events.log)")
        for text in [code, wrong] {
            #expect(!bridge.log.contains(text) && !d.log.contains(text), "a code in a log")
        }
    }
}

enum MQTTBridgeProcessTestsSupport {
    static func events(_ c: ControlClient, ms: Int64, until stop: (Event) -> Bool) -> [Event] {
        TouchlockdTests.events(c, ms: ms, until: stop)
    }

    /// A relay between a client and the daemon's socket that writes the number of request
    /// lines it passed on to `count` (python3, the standard library only).
    static func relayScript(in dir: String) throws -> String {
        let path = dir + "/relay.py"
        let script = """
            import os, select, socket, sys
            listen, target, count = sys.argv[1:4]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(listen)
            s.listen(4)
            print("listening", flush=True)
            n = 0
            while True:
                c, _ = s.accept()
                d = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                d.connect(target)
                done = False
                while not done:
                    r, _, _ = select.select([c, d], [], [])
                    for x in r:
                        data = x.recv(65536)
                        if not data:
                            done = True
                            break
                        if x is c:
                            n += data.count(b"\\n")
                            with open(count + ".tmp", "w") as f:
                                f.write(str(n))
                            os.rename(count + ".tmp", count)
                            d.sendall(data)
                        else:
                            c.sendall(data)
                c.close()
                d.close()
            """
        try DurableFile.replace(path, with: Array(script.utf8), mode: 0o644)
        return path
    }
}
