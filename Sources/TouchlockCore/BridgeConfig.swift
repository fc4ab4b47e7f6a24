/// The settings of touchlock-mqtt, the bridge between the control socket and an MQTT
/// broker, from its own file (`mqtt.conf`, read like touchlock.conf: `[section]` and
/// `key = value`, a bad value named with its file and line).
///
///     [broker]
///     host = mqtt.example.net
///     port = 8883
///     tls = auto              # on, off, auto: on unless the host is a loopback address
///     ca_file = /etc/ssl/certs/ca-certificates.crt
///     cert_file = ...         # a client certificate and its key, both or neither
///     key_file = ...
///     username = kiosk-12
///     password_file = /etc/touchlock/mqtt.password   # root's or the bridge's own, 0600 or 0640
///     client_id = ...         # default touchlock-<device id>
///     keepalive_s = 30
///     [device]
///     id = ...                # default from /etc/machine-id, hashed
///     name = Kiosk lock
///     [topics]
///     prefix = touchlock/<device id>
///     discovery = homeassistant   # or off
///     [commands]
///     unlock = off            # on: UNLOCK with a one-time service code
///     code_digits = 6
///     rate_per_s = 1          # commands carried to the daemon, at most, on average
///     burst = 3
public struct BridgeConfig: Hashable, Sendable {
    public enum TLSMode: String, Hashable, Sendable { case on, off, auto }

    public var host = "localhost"
    public var port: Int?
    public var tls: TLSMode = .auto
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?
    public var username: String?
    public var passwordFile: String?
    public var clientID: String?
    public var keepaliveSeconds = 30
    public var deviceID: String?
    public var deviceName = "Kiosk lock"
    public var topicPrefix: String?
    /// nil: no Home Assistant discovery.
    public var discoveryPrefix: String? = "homeassistant"
    public var unlock = false
    public var codeDigits = 6
    public var ratePerSecond = 1.0
    public var burst = 3

    public init() {}

    public static let sections = ["broker", "device", "topics", "commands"]

    /// Whether the connection is encrypted: `auto` is on for every host but a loopback
    /// one (`localhost`, 127.0.0.0/8, ::1), where a broker on the device itself listens.
    public var usesTLS: Bool {
        switch tls {
        case .on: true
        case .off: false
        case .auto: !Self.isLoopback(host)
        }
    }

    public var effectivePort: Int { port ?? (usesTLS ? 8883 : 1883) }

    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The topics, once the device id is known.
    public func topics(deviceID id: String) -> BridgeTopics {
        BridgeTopics(prefix: topicPrefix ?? "touchlock/\(id)", discoveryPrefix: discoveryPrefix, objectID: "touchlock_\(id)")
    }

    /// What is wrong with the settings as a whole (each value was checked as it was read).
    public func problems() -> [String] {
        var out: [String] = []
        if (certFile == nil) != (keyFile == nil) { out.append("[broker] cert_file and key_file go together") }
        if !usesTLS && (caFile != nil || certFile != nil) { out.append("[broker] ca_file or cert_file set with tls = off") }
        if usesTLS && caFile == nil { out.append("[broker] TLS needs ca_file (the CA that signed the broker's certificate)") }
        if passwordFile != nil && username == nil { out.append("[broker] password_file without username") }
        return out
    }

    public mutating func set(section: String, key: String, value raw: String) throws(Config.BadValue) {
        let v = Config.stripInlineComment(Substring(raw.trimmingSpaces)).trimmingSpaces
        func bad(_ m: String) -> Config.BadValue { Config.BadValue(message: m) }
        switch (section, key) {
        case ("broker", "host"):
            guard !v.isEmpty, !v.contains(" ") else { throw bad("expected a host name or address, found '\(v)'") }
            host = v
        case ("broker", "port"): port = try Config.int(v, 1...65535)
        case ("broker", "tls"):
            guard let m = TLSMode(rawValue: v) else { throw bad("expected on, off or auto, found '\(v)'") }
            tls = m
        case ("broker", "ca_file"): caFile = try Config.path(v)
        case ("broker", "cert_file"): certFile = try Config.path(v)
        case ("broker", "key_file"): keyFile = try Config.path(v)
        case ("broker", "username"): username = try Config.text(v)
        case ("broker", "password"):
            throw bad("a password is not kept in this file: write it to a file of its own and name it with password_file")
        case ("broker", "password_file"): passwordFile = try Config.path(v)
        case ("broker", "client_id"):
            guard (1...64).contains(v.utf8.count), !v.contains(" ") else { throw bad("expected 1 to 64 characters without spaces, found '\(v)'") }
            clientID = v
        case ("broker", "keepalive_s"): keepaliveSeconds = try Config.int(v, 5...3600)
        case ("device", "id"):
            guard Self.isTopicWord(v) else { throw bad("expected 1 to 64 letters, digits, '-' or '_', found '\(v)'") }
            deviceID = v
        case ("device", "name"): deviceName = try Config.text(v)
        case ("topics", "prefix"):
            guard !v.isEmpty, !v.hasSuffix("/"), !v.contains("+"), !v.contains("#"), !v.hasPrefix("$") else {
                throw bad("expected a topic without wildcards or a trailing '/', found '\(v)'")
            }
            topicPrefix = v
        case ("topics", "discovery"):
            if v == "off" { discoveryPrefix = nil; return }
            guard !v.isEmpty, !v.contains("+"), !v.contains("#"), !v.hasSuffix("/") else {
                throw bad("expected a topic prefix (homeassistant) or off, found '\(v)'")
            }
            discoveryPrefix = v
        case ("commands", "unlock"): unlock = try Config.bool(v)
        case ("commands", "code_digits"): codeDigits = try Config.int(v, 4...12)
        case ("commands", "rate_per_s"): ratePerSecond = try Config.number(v, 0.01...100)
        case ("commands", "burst"): burst = try Config.int(v, 1...100)
        default:
            guard Self.sections.contains(section) else {
                throw bad("unknown section [\(section)] (known: \(Self.sections.joined(separator: ", ")))")
            }
            throw bad("unknown key '\(key)' in [\(section)]")
        }
    }

    /// A word that may stand in a topic and in Home Assistant's object id.
    static func isTopicWord(_ v: String) -> Bool {
        (1...64).contains(v.utf8.count) && v.utf8.allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2d || $0 == 0x5f
        }
    }

    /// The device id made from the machine id (`/etc/machine-id`'s 32 hex digits): the
    /// first 12 hex digits of SHA-256 over it and the application's name, so the machine
    /// id itself, which systemd asks to keep from the network, is not published.
    public static func deviceID(machineID: String) -> String {
        let digest = SHA256.hash(Array("touchlock-mqtt:".utf8) + Array(machineID.trimmingSpaces.utf8))
        return digest.prefix(6).map { b in
            let s = String(b, radix: 16)
            return b < 16 ? "0" + s : s
        }.joined()
    }
}

/// The bridge's topics under its prefix.
public struct BridgeTopics: Hashable, Sendable {
    public var prefix: String
    public var discoveryPrefix: String?
    public var objectID: String

    /// `locked`, `unlocked` or `jammed`, retained.
    public var state: String { prefix + "/state" }
    /// `online` or `offline`, retained; the broker publishes `offline` as the last will.
    public var availability: String { prefix + "/availability" }
    /// `LOCK`, `UNLOCK`, or {"action": ..., "code": ...}.
    public var command: String { prefix + "/set" }
    /// Events, not retained.
    public var event: String { prefix + "/event" }
    /// Home Assistant's discovery config of the lock entity, retained.
    public var discovery: String? { discoveryPrefix.map { "\($0)/lock/\(objectID)/config" } }
}
