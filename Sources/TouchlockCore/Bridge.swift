/// The state touchlock-mqtt publishes, as Home Assistant's MQTT lock takes it.
public enum BridgeLockState: String, Hashable, Sendable {
    case locked, unlocked
    /// Attempts are refused until an attempt's count can be stored (`store_failed`).
    case jammed
}

/// A command read from the bus, before it is checked.
public enum BridgeCommandMessage: Hashable, Sendable {
    case lock
    /// `code` is the one-time service code given with it, if any.
    case unlock(code: String?)
    /// Not a command: why.
    case unreadable(String)
}

/// A command carried to the daemon. Its description never shows a code.
public enum BridgeCommand: Hashable, Sendable, CustomStringConvertible {
    case lock
    case serviceUnlock(code: String)

    public var description: String {
        switch self {
        case .lock: "lock"
        case .serviceUnlock: "unlock"
        }
    }
}

/// A request to the control socket.
public enum BridgeRequest: Hashable, Sendable {
    case subscribe, status
    case command(BridgeCommand)
}

/// What the bridge's loop is told.
public enum BridgeInput: Hashable, Sendable {
    case brokerConnected, brokerDisconnected
    case daemonConnected, daemonDisconnected
    /// The daemon's state from a `status` reply.
    case daemonState(BridgeLockState)
    case daemonEvent(LockEvent)
    /// The daemon's answer to the command in flight: nil when it was carried out, else
    /// the error code (`display_busy`, `wrong_code`, `unknown_request`...).
    case commandReply(error: String?)
    case command(BridgeCommandMessage)
    /// Time passes: a command held back by the rate may go; dropped commands are logged.
    case tick
}

/// What the loop carries out.
public enum BridgeAction: Hashable, Sendable {
    case publish(topic: String, payload: String, retain: Bool)
    case subscribe(topic: String)
    case request(BridgeRequest)
}

/// touchlock-mqtt's logic: what the daemon's state and events become on the bus, and
/// which commands from the bus reach the daemon. Pure: the loop passes in the time and
/// carries out the actions.
///
/// Commands are carried one at a time, at most `burst` at once and `ratePerSecond` on
/// average (a token bucket). A command that comes while another is in flight or the rate
/// holds it back waits in one slot; a later one takes its place, and the one it replaces
/// is dropped and counted. So a broker flooding the command topic costs the daemon at
/// most the rate's requests, whatever the flood.
public struct BridgeMachine: Sendable {
    public let config: BridgeConfig
    public let topics: BridgeTopics
    public let deviceID: String
    public let version: String

    public private(set) var brokerUp = false
    public private(set) var daemonUp = false
    public private(set) var state: BridgeLockState?
    public private(set) var inFlight: BridgeCommand?
    public private(set) var pending: BridgeCommand?
    private var tokens: Double
    private var refilledAt: Instant?
    /// Commands dropped (replaced by a later one, or refused here) since the start.
    public private(set) var dropped = 0
    /// Commands carried to the daemon since the start.
    public private(set) var carried = 0
    private var droppedLogged = 0
    private var droppedLoggedAt: Instant?
    private var refusalPublishedAt: Instant?

    public init(config: BridgeConfig, deviceID: String, version: String) {
        self.config = config
        self.deviceID = deviceID
        self.version = version
        topics = config.topics(deviceID: deviceID)
        tokens = Double(config.burst)
    }

    /// When a held-back command may go: the loop calls `tick` then.
    public var nextRelease: Instant? {
        guard pending != nil, inFlight == nil, daemonUp, tokens < 1, let refilledAt else { return nil }
        let wait = (1 - tokens) / config.ratePerSecond
        return refilledAt + Interval(microseconds: Int64((wait * 1_000_000).rounded(.up)))
    }

    public mutating func handle(_ input: BridgeInput, at now: Instant) -> [BridgeAction] {
        refill(now)
        var out: [BridgeAction] = []
        switch input {
        case .brokerConnected:
            brokerUp = true
            out.append(.subscribe(topic: topics.command))
            if let d = discoveryConfig() { out.append(.publish(topic: d.topic, payload: d.payload, retain: true)) }
            out += announce()
        case .brokerDisconnected:
            brokerUp = false
        case .daemonConnected:
            daemonUp = true
            out += [.request(.subscribe), .request(.status)]
        case .daemonDisconnected:
            daemonUp = false
            state = nil
            if let c = inFlight {
                inFlight = nil
                Log.warning("mqtt: the daemon went away with the \(c) command in flight")
                out += publishEvent(["event": .text("command_failed"), "command": .text(c.description), "error": .text("daemon_gone")])
            }
            if brokerUp { out.append(.publish(topic: topics.availability, payload: "offline", retain: true)) }
        case .daemonState(let s):
            state = s
            out += announce()
        case .daemonEvent(let e):
            out += event(e, at: now)
        case .commandReply(let error):
            guard let c = inFlight else {
                Log.bug("mqtt: a command's reply with no command in flight")
                break
            }
            inFlight = nil
            if let error {
                Log.warning("mqtt: the \(c) command from the bus failed: \(error)")
                out += publishEvent(["event": .text("command_failed"), "command": .text(c.description), "error": .text(error)])
            } else {
                Log.info("mqtt: the \(c) command from the bus was carried out")
            }
        case .command(let m):
            out += command(m, at: now)
        case .tick:
            logDropped(at: now, force: false)
        }
        out += release(at: now)
        return out
    }

    // MARK: - State and events

    /// Availability and the retained state, when both ends are up and the state known.
    private func announce() -> [BridgeAction] {
        guard brokerUp else { return [] }
        guard daemonUp, let state else {
            return [.publish(topic: topics.availability, payload: "offline", retain: true)]
        }
        return [.publish(topic: topics.state, payload: state.rawValue, retain: true),
                .publish(topic: topics.availability, payload: "online", retain: true)]
    }

    private mutating func event(_ e: LockEvent, at now: Instant) -> [BridgeAction] {
        var out: [BridgeAction] = []
        let newState: BridgeLockState?
        switch e {
        case .unlocked(let method, _):
            newState = .unlocked
            out += publishEvent(["event": .text("unlocked"), "method": .text(method.rawValue)])
        case .duress(let method, _):
            newState = nil
            out += publishEvent(["event": .text("duress"), "method": .text(method.rawValue)])
        case .failed(let method, let failures, let retryAfter):
            newState = .locked
            out += publishEvent(["event": .text("failed"), "method": .text(method.rawValue), "failures": .number(failures),
                                 "retry_after_ms": .number(Int(retryAfter.milliseconds))])
        case .storeFailed(let method, _):
            newState = .jammed
            out += publishEvent(["event": .text("store_failed"), "method": .text(method.rawValue)])
        case .lockout(let until):
            newState = .locked
            out += publishEvent(["event": .text("lockout"), "retry_after_ms": .number(Int(max(0, (until - now).milliseconds)))])
        case .locked:
            newState = .locked
            out += publishEvent(["event": .text("locked")])
        case .progress, .enrolled, .enrollFailed, .handedOver:
            newState = nil
        }
        if let newState, newState != state {
            state = newState
            if brokerUp, daemonUp { out.append(.publish(topic: topics.state, payload: newState.rawValue, retain: true)) }
        }
        return out
    }

    private func publishEvent(_ fields: [String: JSONText]) -> [BridgeAction] {
        guard brokerUp else { return [] }
        return [.publish(topic: topics.event, payload: JSONText.object(fields), retain: false)]
    }

    // MARK: - Commands

    private mutating func command(_ m: BridgeCommandMessage, at now: Instant) -> [BridgeAction] {
        let c: BridgeCommand
        switch m {
        case .lock:
            c = .lock
        case .unlock(let code):
            guard config.unlock else { return refuse("unlock_disabled", "UNLOCK from the bus is off ([commands] unlock)", at: now) }
            guard let code else { return refuse("code_required", "UNLOCK without a one-time code", at: now) }
            guard code.utf8.count == config.codeDigits, code.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return refuse("bad_value", "UNLOCK with a code that is not \(config.codeDigits) digits", at: now)
            }
            c = .serviceUnlock(code: code)
        case .unreadable(let why):
            return refuse("bad_request", why, at: now)
        }
        if pending != nil { dropped += 1 }
        pending = c
        return []
    }

    /// A command refused here: counted with the dropped ones, logged with them, and told
    /// on the event topic at most once a second.
    private mutating func refuse(_ code: String, _ why: String, at now: Instant) -> [BridgeAction] {
        dropped += 1
        if let at = refusalPublishedAt, now - at < .milliseconds(1000) { return [] }
        refusalPublishedAt = now
        Log.warning("mqtt: a command from the bus refused: \(why)")
        return publishEvent(["event": .text("command_failed"), "error": .text(code)])
    }

    private mutating func refill(_ now: Instant) {
        if let at = refilledAt, now > at {
            tokens = min(Double(config.burst), tokens + Double((now - at).microseconds) / 1_000_000 * config.ratePerSecond)
        }
        if refilledAt == nil || now > refilledAt! { refilledAt = now }
    }

    private mutating func release(at now: Instant) -> [BridgeAction] {
        guard daemonUp, inFlight == nil, let c = pending, tokens >= 1 else { return [] }
        tokens -= 1
        pending = nil
        inFlight = c
        carried += 1
        return [.request(.command(c))]
    }

    private mutating func logDropped(at now: Instant, force: Bool) {
        guard dropped > droppedLogged else { return }
        if !force, let at = droppedLoggedAt, now - at < .milliseconds(10_000) { return }
        Log.warning("mqtt: \(dropped - droppedLogged) commands from the bus dropped (rate \(config.ratePerSecond)/s, burst \(config.burst); \(dropped) since the start)")
        droppedLogged = dropped
        droppedLoggedAt = now
    }

    // MARK: - Home Assistant

    /// The retained discovery message: one lock entity per device.
    public func discoveryConfig() -> (topic: String, payload: String)? {
        guard let topic = topics.discovery else { return nil }
        var f: [String: JSONText] = [
            "name": .null,
            "unique_id": .text(topics.objectID),
            "object_id": .text(topics.objectID),
            "command_topic": .text(topics.command),
            "state_topic": .text(topics.state),
            "availability_topic": .text(topics.availability),
            "payload_available": .text("online"),
            "payload_not_available": .text("offline"),
            "payload_lock": .text("LOCK"),
            "payload_unlock": .text("UNLOCK"),
            "state_locked": .text("locked"),
            "state_unlocked": .text("unlocked"),
            "state_jammed": .text("jammed"),
            "json_attributes_topic": .text(topics.event),
            "device": .raw(JSONText.object([
                "identifiers": .raw("[" + JSONText.text(topics.objectID).encoded + "]"),
                "name": .text(config.deviceName),
                "manufacturer": .text("touchlock"),
                "model": .text("touchlock-mqtt"),
                "sw_version": .text(version),
            ])),
        ]
        if config.unlock {
            f["code_format"] = .text("^\\d{\(config.codeDigits)}$")
            f["command_template"] = .text("{\"action\": \"{{ value }}\", \"code\": \"{{ code }}\"}")
        }
        return (topic, JSONText.object(f))
    }
}

/// A JSON value written by the bridge (keys sorted, as the daemon writes its lines).
public enum JSONText: Hashable, Sendable {
    case text(String), number(Int), null, raw(String)

    public var encoded: String {
        switch self {
        case .text(let s): Self.quote(s)
        case .number(let n): String(n)
        case .null: "null"
        case .raw(let r): r
        }
    }

    public static func object(_ fields: [String: JSONText]) -> String {
        "{" + fields.keys.sorted().map { quote($0) + ":" + fields[$0]!.encoded }.joined(separator: ",") + "}"
    }

    public static func quote(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if u.value < 0x20 {
                    let h = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }
}
