import Glibc
import TouchlockCommandLine
import TouchlockConfig
import TouchlockControl
import TouchlockCore
import TouchlockSystem

// touchlock-mqtt: the lock on an MQTT broker. A client of touchlockd's control socket (a
// member of its group) that publishes the lock's state and events, announces a lock to
// Home Assistant, and carries LOCK (and, when enabled, UNLOCK with a one-time service
// code) from the bus to the socket.

let usage = """
    Usage: touchlock-mqtt [--config FILE] [--socket PATH]
           touchlock-mqtt --check-config [--config FILE]

    Publishes touchlockd's state on an MQTT broker and carries commands from it.

    Options:
      -c, --config FILE   the settings (default \(Paths.config)/mqtt.conf)
      --socket PATH       touchlockd's control socket (default $TOUCHLOCK_SOCKET, else
                          \(Paths.socket))
      --check-config      read the settings and the password file, print the topics, exit
      -h, --help          this help
      -V, --version       the version
    """

func fail(_ message: String, status: Int32 = 1) -> Never {
    Log.error(message)
    exit(status)
}

func runBridge() {
    if getenv("JOURNAL_STREAM") != nil {
        Log.sink = { r in StandardStreams.error("<\(r.level.priority)>\(r.level == .bug ? "bug: " : "")\(r.message)") }
    } else {
        Log.sink = { r in StandardStreams.error("touchlock-mqtt: \(r.level == .info ? "" : "\(r.level.label): ")\(r.message)") }
    }

    var configPath = Paths.config + "/mqtt.conf"
    var socketPath = getenv("TOUCHLOCK_SOCKET").map { String(cString: $0) } ?? Paths.socket
    var checkOnly = false
    var args = ProgramArguments.afterName[...]
    while let a = args.popFirst() {
        switch a {
        case "-c", "--config":
            guard let v = args.popFirst() else { usageError("\(a) needs a file") }
            configPath = v
        case "--socket":
            guard let v = args.popFirst() else { usageError("--socket needs a path") }
            socketPath = v
        case "--check-config": checkOnly = true
        case "-h", "--help":
            StandardStreams.output(usage)
            exit(0)
        case "-V", "--version":
            StandardStreams.output("touchlock-mqtt \(TouchlockVersion.current)")
            exit(0)
        default:
            if a.hasPrefix("--config=") { configPath = String(a.dropFirst(9)); continue }
            if a.hasPrefix("--socket=") { socketPath = String(a.dropFirst(9)); continue }
            usageError("unknown option '\(a)'")
        }
    }

    var config = BridgeConfig()
    do { try ConfigFiles.apply(file: configPath, to: &config) } catch { fail("\(error)") }
    let problems = config.problems()
    if !problems.isEmpty { fail("\(configPath): " + problems.joined(separator: "; ")) }

    var password: [UInt8]?
    if let file = config.passwordFile {
        do { password = try PasswordFile.read(file) } catch { fail("\(error)") }
    }
    let deviceID: String
    if let id = config.deviceID {
        deviceID = id
    } else {
        guard let machine = try? FileContents.text("/etc/machine-id", limit: 4096), machine.utf8.count >= 32 else {
            fail("no /etc/machine-id to make the device id from: set [device] id in \(configPath)")
        }
        deviceID = BridgeConfig.deviceID(machineID: machine)
    }
    if checkOnly {
        let t = config.topics(deviceID: deviceID)
        StandardStreams.output("""
            broker: \(config.host):\(config.effectivePort) \(config.usesTLS ? "TLS" : "without TLS")\(config.username.map { " as \($0)" } ?? "")
            state: \(t.state)
            availability: \(t.availability)
            commands: \(t.command)\(config.unlock ? " (LOCK, UNLOCK with a \(config.codeDigits)-digit service code)" : " (LOCK)")
            events: \(t.event)
            discovery: \(t.discovery ?? "off")
            """)
        exit(0)
    }
    if !config.usesTLS && !BridgeConfig.isLoopback(config.host) {
        Log.warning("mqtt: TLS is off for a broker that is not on this machine: the state, the commands and the password cross the network in clear")
    }

    let loop: EventLoop
    do { loop = try EventLoop() } catch { fail("\(error)") }
    // The daemon's socket going away mid-write is an error to handle, not a signal to die of.
    signal(SIGPIPE, SIG_IGN)
    // The password stays with the bridge, which hands it to libmosquitto at each connection.
    let bridge = Bridge(loop: loop, config: config, deviceID: deviceID, socketPath: socketPath, password: password)
    bridge.start()
    do { try loop.run() } catch { fail("\(error)") }
    bridge.stop()
    Log.info("mqtt: stopped")
}

func usageError(_ message: String) -> Never {
    StandardStreams.error("touchlock-mqtt: \(message)")
    StandardStreams.error("Try 'touchlock-mqtt --help'.")
    exit(64)
}

/// The broker's password, from a file only root (or the bridge's own user) can read.
enum PasswordFile {
    static func read(_ path: String) throws(Config.Error) -> [UInt8] {
        func refuse(_ why: String) -> Config.Error { Config.Error(file: path, line: 0, message: why) }
        let got: (bytes: [UInt8], info: FileContents.Info)
        do { got = try FileContents.read(path, limit: 4096) } catch {
            throw refuse("cannot read the password file: \(error.reason(reading: path))")
        }
        if got.info.owner != 0 && got.info.owner != geteuid() {
            throw refuse("the password file belongs to uid \(got.info.owner), not root or this user: not used")
        }
        if got.info.mode & 0o007 != 0 {
            throw refuse("the password file may be read by others (mode 0\(String(got.info.mode, radix: 8))): make it 0600 or 0640")
        }
        var bytes = got.bytes
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.isEmpty, !bytes.contains(0), !bytes.contains(UInt8(ascii: "\n")) else {
            throw refuse("the password file must hold the password on one line")
        }
        return bytes
    }
}

runBridge()
