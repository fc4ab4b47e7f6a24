import CMosquitto
import Glibc
import TouchlockCore

/// A libmosquitto call that failed: the call, its result and libmosquitto's words for it
/// (with errno's for MOSQ_ERR_ERRNO, and OpenSSL's reason for a refused TLS handshake,
/// which libmosquitto logs through its log callback).
public struct MosquittoError: Error, CustomStringConvertible, Sendable {
    public var call: String
    public var code: Int32
    public var detail: String

    init(_ call: String, _ code: Int32, detail: String = "") {
        self.call = call
        self.code = code
        var words = String(cString: mosquitto_strerror(code))
        if code == Int32(MOSQ_ERR_ERRNO.rawValue) { words = String(cString: strerror(errno)) }
        self.detail = detail.isEmpty ? words : "\(words): \(detail)"
    }

    public var description: String { "\(call): \(detail)" }
}

/// What libmosquitto reported during a call, taken on the loop after the call returns.
public enum MosquittoReport: Hashable, Sendable {
    /// The broker's CONNACK: 0 accepted, else why not (`connackWords`).
    case connected(Int32)
    /// The connection ended: 0 when we asked for it.
    case disconnected(Int32)
    case message(topic: String, payload: [UInt8])
}

/// One client of libmosquitto, driven by its socket from the caller's event loop
/// (`socket`, `wantsWrite`, `read`, `write`, `misc`): never by libmosquitto's own thread.
/// Its callbacks only record what happened; each call returns those records for the
/// caller to act on, so nothing calls back into the caller.
public final class MosquittoClient {
    private final class Inbox {
        var reports: [MosquittoReport] = []
        var lastTLSError = ""
    }

    private let handle: OpaquePointer
    private let inbox = Inbox()

    private static let initialized: Bool = {
        mosquitto_lib_init()
        return true
    }()

    public init(clientID: String) throws(MosquittoError) {
        _ = Self.initialized
        guard let h = mosquitto_new(clientID, true, Unmanaged.passUnretained(inbox).toOpaque()) else {
            throw MosquittoError("mosquitto_new", Int32(MOSQ_ERR_ERRNO.rawValue))
        }
        handle = h
        mosquitto_int_option(h, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311))
        mosquitto_connect_callback_set(h) { _, user, rc in
            Unmanaged<Inbox>.fromOpaque(user!).takeUnretainedValue().reports.append(.connected(rc))
        }
        mosquitto_disconnect_callback_set(h) { _, user, rc in
            Unmanaged<Inbox>.fromOpaque(user!).takeUnretainedValue().reports.append(.disconnected(rc))
        }
        mosquitto_message_callback_set(h) { _, user, m in
            guard let m = m?.pointee else { return }
            let topic = String(cString: m.topic)
            let payload = m.payloadlen > 0 && m.payload != nil
                ? Array(UnsafeRawBufferPointer(start: m.payload, count: Int(m.payloadlen))) : []
            Unmanaged<Inbox>.fromOpaque(user!).takeUnretainedValue().reports.append(.message(topic: topic, payload: payload))
        }
        // libmosquitto says why a TLS handshake failed only in its log (OpenSSL's reason).
        mosquitto_log_callback_set(h) { _, user, level, text in
            guard level & Int32(MOSQ_LOG_ERR) != 0, let text else { return }
            Unmanaged<Inbox>.fromOpaque(user!).takeUnretainedValue().lastTLSError = String(cString: text)
        }
    }

    deinit { mosquitto_destroy(handle) }

    /// The last error libmosquitto logged (OpenSSL's reason for a failed handshake), once.
    public func takeLoggedError() -> String {
        defer { inbox.lastTLSError = "" }
        return inbox.lastTLSError
    }

    private func check(_ call: String, _ rc: Int32) throws(MosquittoError) {
        guard rc == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            let detail = inbox.lastTLSError
            inbox.lastTLSError = ""
            throw MosquittoError(call, rc, detail: detail)
        }
    }

    private func take() -> [MosquittoReport] {
        defer { inbox.reports.removeAll() }
        return inbox.reports
    }

    /// The user name and password the broker checks. The password is handed to
    /// libmosquitto and kept nowhere else.
    public func setCredentials(username: String, password: [UInt8]?) throws(MosquittoError) {
        let rc: Int32
        if var p = password {
            p.append(0)
            rc = p.withUnsafeBufferPointer { b in
                b.withMemoryRebound(to: CChar.self) { mosquitto_username_pw_set(handle, username, $0.baseAddress) }
            }
            for i in p.indices { p[i] = 0 }
        } else {
            rc = mosquitto_username_pw_set(handle, username, nil)
        }
        try check("mosquitto_username_pw_set", rc)
    }

    /// TLS with the broker's certificate checked against `caFile` (and its name against
    /// the host), and a client certificate if given.
    public func setTLS(caFile: String, certFile: String?, keyFile: String?) throws(MosquittoError) {
        // libmosquitto's defaults: the peer verified (SSL_VERIFY_PEER), its name checked,
        // TLS 1.2 or 1.3.
        try check("mosquitto_tls_set", mosquitto_tls_set(handle, caFile, nil, certFile, keyFile, nil))
    }

    /// The message the broker publishes if the connection ends without a DISCONNECT.
    public func setWill(topic: String, payload: String, retain: Bool) throws(MosquittoError) {
        let bytes = Array(payload.utf8)
        try check("mosquitto_will_set", mosquitto_will_set(handle, topic, Int32(bytes.count), bytes, 1, retain))
    }

    /// Connects (TCP, and the TLS handshake, blocking) and queues the CONNECT packet;
    /// the broker's answer comes as `.connected` from a later `read`.
    public func connect(host: String, port: Int, keepalive: Int) throws(MosquittoError) {
        try check("connect to \(host):\(port)", mosquitto_connect(handle, host, Int32(port), Int32(keepalive)))
        _ = take()
    }

    /// The connected socket, or -1.
    public var socket: Int32 { mosquitto_socket(handle) }
    public var wantsWrite: Bool { mosquitto_want_write(handle) }

    /// Reads what the socket has (up to `packets` packets); what happened meanwhile.
    /// A lost connection is reported as `.disconnected` and closes the socket.
    public func read(packets: Int = 64) -> [MosquittoReport] {
        for _ in 0..<packets {
            let before = inbox.reports.count
            let rc = mosquitto_loop_read(handle, 1)
            if rc != Int32(MOSQ_ERR_SUCCESS.rawValue) {
                if !inbox.reports.contains(where: { if case .disconnected = $0 { true } else { false } }) {
                    inbox.reports.append(.disconnected(rc))
                }
                break
            }
            if inbox.reports.count == before {
                var p = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                if socket < 0 || poll(&p, 1, 0) <= 0 { break }
            }
        }
        return take()
    }

    public func write() -> [MosquittoReport] {
        let rc = mosquitto_loop_write(handle, 1)
        if rc != Int32(MOSQ_ERR_SUCCESS.rawValue), !inbox.reports.contains(where: { if case .disconnected = $0 { true } else { false } }) {
            inbox.reports.append(.disconnected(rc))
        }
        return take()
    }

    /// Keepalive pings and retries: once a second or so.
    public func misc() -> [MosquittoReport] {
        _ = mosquitto_loop_misc(handle)
        return take()
    }

    public func publish(topic: String, payload: String, retain: Bool) throws(MosquittoError) {
        let bytes = Array(payload.utf8)
        try check("publish \(topic)", mosquitto_publish(handle, nil, topic, Int32(bytes.count), bytes, 1, retain))
    }

    public func subscribe(topic: String) throws(MosquittoError) {
        try check("subscribe \(topic)", mosquitto_subscribe(handle, nil, topic, 0))
    }

    /// Sends DISCONNECT (the will is not published) and closes the connection.
    public func disconnect() {
        _ = mosquitto_disconnect(handle)
        _ = mosquitto_loop_write(handle, 1)
        _ = take()
    }

    /// libmosquitto's words for one of its results (errno's for MOSQ_ERR_ERRNO).
    public static func errorWords(_ rc: Int32) -> String { MosquittoError("", rc).detail }

    /// The broker's words for a CONNACK code (bad user name or password, not authorised).
    public static func connackWords(_ rc: Int32) -> String { String(cString: mosquitto_connack_string(rc)) }
}
