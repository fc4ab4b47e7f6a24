import Glibc
import TouchlockCommandLine
import TouchlockControl
import TouchlockCore
import TouchlockMQTT
import TouchlockSystem

/// The bridge's loop: the control socket on one side, the broker on the other, both
/// driven by the one EventLoop; `BridgeMachine` decides, this carries its actions out.
/// Either side that goes away is reconnected with a growing delay (1 s to 30 s).
final class Bridge {
    enum Pending { case subscribe, status, command }

    let loop: EventLoop
    let config: BridgeConfig
    let socketPath: String
    let clientID: String
    private let password: [UInt8]?
    private var machine: BridgeMachine

    private var mqtt: MosquittoClient?
    private var mqttFD: Int32 = -1
    private var brokerDelay = Interval.milliseconds(1000)
    private var brokerRetry: EventLoop.TimerID?

    private var control: ControlClient?
    private var replies: [Int: Pending] = [:]
    private var nextID = 1
    private var daemonDelay = Interval.milliseconds(1000)
    private var daemonRetry: EventLoop.TimerID?
    private var releaseTimer: EventLoop.TimerID?
    private var released: Instant?

    static let maxDelay = Interval.milliseconds(30_000)

    init(loop: EventLoop, config: BridgeConfig, deviceID: String, socketPath: String, password: [UInt8]?) {
        self.loop = loop
        self.config = config
        self.socketPath = socketPath
        self.password = password
        clientID = config.clientID ?? "touchlock-\(deviceID)"
        machine = BridgeMachine(config: config, deviceID: deviceID, version: TouchlockVersion.current)
    }

    func start() {
        connectDaemon()
        connectBroker()
        tick()
    }

    /// Once a second: keepalive pings, and the machine's logging of dropped commands.
    private func tick() {
        if let m = mqtt { handle(reports: m.misc()) }
        apply(machine.handle(.tick, at: EventLoop.now()))
        loop.schedule(at: EventLoop.now() + .milliseconds(1000)) { [unowned self] _ in self.tick() }
    }

    /// On SIGTERM: `offline` published, and a DISCONNECT, so the broker keeps the will.
    func stop() {
        if let m = mqtt, machine.brokerUp {
            try? m.publish(topic: machine.topics.availability, payload: "offline", retain: true)
            m.disconnect()
        }
    }

    // MARK: - The machine's actions

    private func feed(_ input: BridgeInput) {
        apply(machine.handle(input, at: EventLoop.now()))
    }

    private func apply(_ actions: [BridgeAction]) {
        for a in actions {
            switch a {
            case .publish(let topic, let payload, let retain):
                guard let m = mqtt else { continue }
                do { try m.publish(topic: topic, payload: payload, retain: retain) } catch {
                    Log.warning("mqtt: \(error)")
                }
            case .subscribe(let topic):
                guard let m = mqtt else { continue }
                do { try m.subscribe(topic: topic) } catch { Log.warning("mqtt: \(error)") }
            case .request(let r):
                send(r)
            }
        }
        watchBroker()
        armRelease()
    }

    /// A command held back by the rate goes when the machine says it may.
    private func armRelease() {
        let next = machine.nextRelease
        if next == released { return }
        if let t = releaseTimer { loop.cancel(t) }
        releaseTimer = nil
        released = next
        if let next {
            releaseTimer = loop.schedule(at: next) { [unowned self] _ in
                self.releaseTimer = nil
                self.released = nil
                self.feed(.tick)
            }
        }
    }

    // MARK: - The control socket

    private func connectDaemon() {
        daemonRetry = nil
        let c: ControlClient
        do { c = try ControlClient.connect(path: socketPath) } catch {
            Log.warning("mqtt: cannot reach touchlockd at \(socketPath): \(error); again in \(daemonDelay.milliseconds / 1000) s")
            retryDaemon()
            return
        }
        do {
            try loop.register(c.fd, .readable) { [unowned self] _ in self.daemonReadable() }
        } catch {
            Log.error("mqtt: \(error)")
            retryDaemon()
            return
        }
        control = c
        Log.info("mqtt: connected to touchlockd at \(socketPath)")
        feed(.daemonConnected)
    }

    private func retryDaemon() {
        let delay = daemonDelay
        daemonDelay = min(Self.maxDelay, Interval(microseconds: daemonDelay.microseconds * 2))
        daemonRetry = loop.schedule(at: EventLoop.now() + delay) { [unowned self] _ in self.connectDaemon() }
    }

    private func daemonGone(_ why: String) {
        guard let c = control else { return }
        loop.unregister(c.fd)
        c.close()
        control = nil
        replies.removeAll()
        Log.warning("mqtt: lost touchlockd (\(why)); again in \(daemonDelay.milliseconds / 1000) s")
        feed(.daemonDisconnected)
        retryDaemon()
    }

    private func send(_ r: BridgeRequest) {
        guard let c = control else { return }
        let id = nextID
        nextID += 1
        var fields: [String: JSONText] = ["id": .number(id)]
        let kind: Pending
        switch r {
        case .subscribe: fields["request"] = .text("subscribe"); kind = .subscribe
        case .status: fields["request"] = .text("status"); kind = .status
        case .command(.lock): fields["request"] = .text("lock"); kind = .command
        case .command(.serviceUnlock(let code)):
            fields["request"] = .text("service_unlock")
            fields["code"] = .text(code)
            kind = .command
        }
        replies[id] = kind
        do { try c.send(line: JSONText.object(fields)) } catch {
            daemonGone("\(error)")
        }
    }

    /// A reply, read without `ErrorCode`: the daemon may answer codes this bridge was
    /// built without (`wrong_code`, `locked_out`...), and each is passed on as it is.
    private struct Reply: Decodable {
        struct Failure: Decodable { var code: String; var message: String? }
        var id: Int?
        var ok: Bool
        var error: Failure?
        var state: String?
    }

    private func daemonReadable() {
        guard let c = control else { return }
        let got: (lines: [String], closed: Bool)
        do { got = try c.readAvailableLines() } catch {
            daemonGone("\(error)")
            return
        }
        for line in got.lines {
            if let event = try? c.decode(Event.self, from: line) {
                feed(.daemonEvent(event))
                continue
            }
            guard let reply = try? c.decode(Reply.self, from: line) else {
                Log.bug("mqtt: a line from touchlockd that is neither a reply nor an event")
                continue
            }
            guard let id = reply.id, let kind = replies.removeValue(forKey: id) else {
                Log.warning("mqtt: touchlockd refused a request: \(reply.error?.code ?? "?") \(reply.error?.message ?? "")")
                continue
            }
            let error = reply.ok ? nil : (reply.error?.code ?? "error")
            switch kind {
            case .subscribe:
                if let error { Log.error("mqtt: touchlockd refused subscribe: \(error) (is this user in the socket's group?)") }
            case .status:
                if let error {
                    Log.error("mqtt: touchlockd refused status: \(error)")
                } else {
                    feed(.daemonState(reply.state == "unlocked" ? .unlocked : reply.state == "store_failed" ? .jammed : .locked))
                }
            case .command:
                feed(.commandReply(error: error))
            }
        }
        if got.closed { daemonGone("it closed the connection") }
    }

    // MARK: - The broker

    private func connectBroker() {
        brokerRetry = nil
        let where_ = "\(config.host):\(config.effectivePort)"
        do {
            let m = try MosquittoClient(clientID: clientID)
            if let user = config.username { try m.setCredentials(username: user, password: password) }
            if config.usesTLS, let ca = config.caFile {
                try m.setTLS(caFile: ca, certFile: config.certFile, keyFile: config.keyFile)
            }
            try m.setWill(topic: machine.topics.availability, payload: "offline", retain: true)
            try m.connect(host: config.host, port: config.effectivePort, keepalive: config.keepaliveSeconds)
            mqtt = m
            mqttFD = m.socket
            try loop.register(mqttFD, .readable) { [unowned self] r in self.brokerReady(r) }
            watchBroker()
        } catch {
            dropBroker()
            Log.error("mqtt: cannot connect to the broker at \(where_)\(config.usesTLS ? " (TLS)" : ""): \(error); again in \(brokerDelay.milliseconds / 1000) s")
            retryBroker()
        }
    }

    private func retryBroker() {
        let delay = brokerDelay
        brokerDelay = min(Self.maxDelay, Interval(microseconds: brokerDelay.microseconds * 2))
        brokerRetry = loop.schedule(at: EventLoop.now() + delay) { [unowned self] _ in self.connectBroker() }
    }

    /// The socket watched for writing too while libmosquitto has bytes to send.
    private func watchBroker() {
        guard let m = mqtt, mqttFD >= 0, m.socket == mqttFD else { return }
        try? loop.modify(mqttFD, m.wantsWrite ? [.readable, .writable] : .readable)
    }

    private func brokerReady(_ r: IOReadiness) {
        guard let m = mqtt else { return }
        if r.writable { handle(reports: m.write()) }
        if mqtt != nil, r.readable || r.hangup { handle(reports: m.read()) }
        watchBroker()
    }

    /// Forgets the client: its socket unwatched before libmosquitto closes it.
    private func dropBroker() {
        if mqttFD >= 0 { loop.unregister(mqttFD) }
        mqttFD = -1
        mqtt = nil
    }

    private func handle(reports: [MosquittoReport]) {
        for r in reports {
            switch r {
            case .connected(0):
                Log.info("mqtt: connected to the broker at \(config.host):\(config.effectivePort) as \(clientID)")
                brokerDelay = .milliseconds(1000)
                feed(.brokerConnected)
            case .connected(let rc):
                Log.error("mqtt: the broker refused the connection: \(MosquittoClient.connackWords(rc)); again in \(brokerDelay.milliseconds / 1000) s")
                let wasUp = machine.brokerUp
                dropBroker()
                if wasUp { feed(.brokerDisconnected) }
                retryBroker()
                return
            case .disconnected(let rc):
                // A TLS handshake that fails after connect returned comes here: before the
                // broker's CONNACK it is a connection that could not be made, with
                // OpenSSL's reason from libmosquitto's log.
                let detail = mqtt?.takeLoggedError() ?? ""
                let words = rc == 0 ? "closed" : MosquittoClient.errorWords(rc) + (detail.isEmpty ? "" : ": \(detail)")
                if machine.brokerUp {
                    Log.warning("mqtt: lost the broker (\(words)); again in \(brokerDelay.milliseconds / 1000) s")
                } else {
                    Log.error("mqtt: cannot connect to the broker at \(config.host):\(config.effectivePort)\(config.usesTLS ? " (TLS)" : ""): \(words); again in \(brokerDelay.milliseconds / 1000) s")
                }
                dropBroker()
                if machine.brokerUp { feed(.brokerDisconnected) }
                retryBroker()
                return
            case .message(let topic, let payload):
                guard topic == machine.topics.command else { continue }
                feed(.command(Self.command(payload)))
            }
        }
    }

    private struct CommandJSON: Decodable { var action: String; var code: String? }

    /// `LOCK`, `UNLOCK`, or Home Assistant's command template's {"action": ..., "code": ...}.
    static func command(_ payload: [UInt8]) -> BridgeCommandMessage {
        guard payload.count <= 256, let text = String(validating: payload, as: UTF8.self) else {
            return .unreadable("a payload over 256 bytes or not UTF-8")
        }
        var t = Substring(text)
        while let c = t.first, c == " " || c == "\n" || c == "\t" || c == "\r" { t.removeFirst() }
        while let c = t.last, c == " " || c == "\n" || c == "\t" || c == "\r" { t.removeLast() }
        var action = String(t), code: String?
        if t.hasPrefix("{") {
            guard let j = try? ControlJSON.decode(CommandJSON.self, from: Array(t.utf8)) else {
                return .unreadable("a JSON payload without \"action\"")
            }
            action = j.action
            code = j.code.flatMap { $0.isEmpty ? nil : $0 }
        }
        switch action {
        case "LOCK": return .lock
        case "UNLOCK": return .unlock(code: code)
        default: return .unreadable("not LOCK or UNLOCK")
        }
    }
}
