import TouchlockCore

/// The control protocol: newline-delimited JSON over a Unix stream socket.
///
/// A client sends one request per line and gets one reply line per request:
///
///     -> {"id": 1, "request": "status"}
///     <- {"failures":0,"id":1,"ok":true,"pattern":{...},"screen":{...},"state":"locked"}
///     -> {"id": 2, "request": "nope"}
///     <- {"error":{"code":"unknown_request","message":"..."},"id":2,"ok":false}
///
/// After `subscribe` the client also receives event lines, which carry "event" and no
/// "id". Keys are written sorted, so equal values give equal bytes.
public enum ControlProtocol {
    public static let version = 1
    public static let defaultSocketPath = Paths.socket
    /// Environment variable naming the socket for clients.
    public static let socketEnvironmentVariable = "TOUCHLOCK_SOCKET"
}

/// What a client may ask.
public enum RequestKind: String, Codable, Hashable, Sendable, CaseIterable {
    /// Answers {"protocol": 1}.
    case hello
    /// Answers the fields of a `Status`.
    case status
    /// Answers ok; event lines follow on this connection.
    case subscribe
    /// Locks the device again (after an unlock); answers {"state": ...}.
    case lock
    /// Answers the daemon's latency figures (`Metrics`).
    case metrics
    /// Root only: stores a secret's hash {"method": "pattern"|"code"|"duress",
    /// "hash": "$y$...", "length": N (a code's digits)}; a null hash removes it.
    case enroll
    /// Root only: clears the failure count and the wait (`touchlockctl lockout --reset`);
    /// answers {"state": ...}.
    case resetLockout = "reset_lockout"
    /// Sets the message the lock screen shows {"text": "..."}, or removes it (no text);
    /// answers {}.
    case message
    /// Unlocks with a one-time service code {"code": "123456"}: counted and checked as
    /// every attempt is; answers {"state": "unlocked"}, or `wrong_code`, `locked_out`,
    /// `no_service_key`, `bad_value`, `busy`, `store_failed`. The code is never logged.
    case serviceUnlock = "service_unlock"

    /// Who may ask: `group` is root and members of the socket's group, `root` is root only,
    /// `messageGroup` root and the members of the group `[socket] message_group` names, if
    /// it names one: the message stays on the lock screen for everyone to read, so the
    /// socket's group (the kiosk app's user) may not set it unless a group is let in.
    public enum Access: Sendable { case anyone, group, messageGroup, root }

    public var access: Access {
        switch self {
        case .hello: .anyone
        case .status, .subscribe, .lock, .metrics, .serviceUnlock: .group
        case .message: .messageGroup
        case .enroll, .resetLockout: .root
        }
    }
}

/// One request line: what a client sends and what the server reads, one type for both.
/// Read by the server, a line that is not a request it can carry out is refused with
/// the error to answer (`Refused`); the fields are read in the order of the line's
/// keys below, so the first of the wrong type is the one named.
public struct Request: Codable, Hashable, Sendable {
    public var id: Int
    public var request: RequestKind
    /// enroll: which secret.
    public var method: SecretKind?
    /// enroll: its hash in the format of crypt(5); never the secret itself.
    public var hash: String?
    /// enroll of a code (or duress code) with its hash: how many digits it has, so the
    /// daemon can refuse a code its pad cannot take.
    public var length: Int?
    /// enroll: true to have the secret drawn (or typed) twice on the screen instead of
    /// sending a hash; the outcome comes as an `enrolled` or `enroll_failed` event.
    public var screen: Bool?
    /// message: the text to show (plain, at most `ScreenMessage.limit` characters); absent
    /// or null removes the message set before.
    public var text: String?
    /// service_unlock: the one-time code, as digits.
    public var code: String?
    public init(id: Int, request: RequestKind, method: SecretKind? = nil, hash: String? = nil, length: Int? = nil,
                screen: Bool? = nil, text: String? = nil, code: String? = nil) {
        self.id = id; self.request = request; self.method = method; self.hash = hash; self.length = length
        self.screen = screen; self.text = text; self.code = code
    }

    /// A request line read and refused: the error to answer, the line's id if it had one
    /// (nil: the reply's id is null), and what it asked for if that is known, so that who
    /// may ask is checked before a field of it is refused.
    public struct Refused: Error, Hashable, Sendable {
        public var id: Int?
        public var kind: RequestKind?
        public var error: ControlError
    }

    enum CodingKeys: String, CodingKey {
        case id, request, method, hash, length, screen, text, code
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let id = try c.decodeIfPresent(Int.self, forKey: .id)
        let name = try c.decodeIfPresent(String.self, forKey: .request)
        let method = try c.decodeIfPresent(String.self, forKey: .method)
        hash = try c.decodeIfPresent(String.self, forKey: .hash)
        length = try c.decodeIfPresent(Int.self, forKey: .length)
        screen = try c.decodeIfPresent(Bool.self, forKey: .screen)
        text = try c.decodeIfPresent(String.self, forKey: .text)
        code = try c.decodeIfPresent(String.self, forKey: .code)
        guard let id else { throw Refused(id: nil, kind: nil, error: ControlError(.badRequest, "missing \"id\"")) }
        guard let name else { throw Refused(id: id, kind: nil, error: ControlError(.badRequest, "missing \"request\"")) }
        guard let kind = RequestKind(rawValue: name) else {
            let known = RequestKind.allCases.map(\.rawValue).joined(separator: ", ")
            throw Refused(id: id, kind: nil, error: ControlError(.unknownRequest, "unknown request \"\(name)\" (known: \(known))"))
        }
        self.id = id
        request = kind
        do throws(ControlError) {
            self.method = try method.map { name throws(ControlError) in try SecretKind.named(name) }
        } catch {
            // Only enroll reads the method; another request with one it cannot be is
            // answered as if it had none.
            guard kind != .enroll else { throw Refused(id: id, kind: kind, error: error) }
            self.method = nil
        }
    }
}

/// An `enroll` request, decoded and checked once: what the server carries out.
public enum EnrollRequest: Hashable, Sendable {
    /// Store `hash` as the secret of `kind`; `length` is a code's number of digits
    /// (allowed by `CodeRules`), nil for a pattern.
    case store(SecretKind, hash: String, length: Int?)
    /// Remove the secret of `kind`.
    case remove(SecretKind)
    /// Show the enrollment screen of `method`.
    case onScreen(UnlockMethod)

    /// The fields of an enroll request line, its method by name, or the error to answer.
    public init(method: String?, hash: String?, length: Int?, screen: Bool?) throws(ControlError) {
        try self.init(method: try method.map { name throws(ControlError) in try SecretKind.named(name) },
                      hash: hash, length: length, screen: screen)
    }

    /// The fields of an enroll request line (its method known, as `Request` reads it),
    /// or the error to answer.
    public init(method: SecretKind?, hash: String?, length: Int?, screen: Bool?) throws(ControlError) {
        guard let kind = method else { throw ControlError(.badRequest, "missing \"method\"") }
        if screen == true {
            guard hash == nil, length == nil else {
                throw ControlError(.badRequest, "\"screen\" takes no \"hash\" and no \"length\"")
            }
            guard kind != .duress else {
                throw ControlError(.badValue, "the duress code is not enrolled on the screen (pattern, code)")
            }
            self = .onScreen(kind.method)
            return
        }
        guard let hash else {
            guard length == nil else { throw ControlError(.badRequest, "\"length\" goes with a \"hash\"") }
            self = .remove(kind)
            return
        }
        switch kind {
        case .pattern:
            guard length == nil else { throw ControlError(.badRequest, "\"length\" is a code's number of digits; a pattern has none") }
            self = .store(kind, hash: hash, length: nil)
        case .code, .duress:
            guard let length else {
                throw ControlError(.badValue, "missing \"length\": a \(kind.rawValue) comes with its number of digits, "
                                   + "so that one the pad cannot take is refused")
            }
            do { try CodeRules.check(length: length) } catch { throw ControlError(.badValue, error.message) }
            self = .store(kind, hash: hash, length: length)
        }
    }
}

extension SecretKind {
    /// The secret a request's "method" names, or the error to answer.
    static func named(_ name: String) throws(ControlError) -> SecretKind {
        guard let kind = SecretKind(rawValue: name) else {
            let known = SecretKind.allCases.map(\.rawValue).joined(separator: ", ")
            throw ControlError(.badValue, "unknown method \"\(name)\" (\(known))")
        }
        return kind
    }
}

/// The reply body of `lock`.
public struct LockReply: Codable, Hashable, Sendable {
    public var state: Status.State
    public init(state: Status.State) { self.state = state }
}

/// The reply body of `metrics`. The fields after `frames` are optional: a daemon fills
/// those it counts, and a client shows what it gets.
public struct Metrics: Codable, Hashable, Sendable {
    /// From the kernel timestamp of an input event to the submission of the frame that
    /// shows its effect, in microseconds.
    public struct Latency: Codable, Hashable, Sendable {
        public var count: Int
        public var p50: Int64?
        public var p99: Int64?
        public var max: Int64?
        /// All samples added up, in microseconds.
        public var sum: Int64?
        /// Cumulative counts at `Latency.bucketBounds`: samples at most each bound.
        public var buckets: [Int]?
        public init(count: Int, p50: Int64?, p99: Int64?, max: Int64?, sum: Int64? = nil, buckets: [Int]? = nil) {
            self.count = count; self.p50 = p50; self.p99 = p99; self.max = max
            self.sum = sum; self.buckets = buckets
        }
        public init(_ e: LatencyEstimator) {
            self.init(count: e.count, p50: e.quantile(0.5)?.microseconds, p99: e.quantile(0.99)?.microseconds,
                      max: e.maximum?.microseconds, sum: e.total.microseconds,
                      buckets: e.cumulativeCounts(atMost: Self.bucketBounds.map { Interval(microseconds: $0) }))
        }

        /// The histogram's upper bounds, in microseconds: around a 60 Hz frame (16.7 ms).
        public static let bucketBounds: [Int64] = [
            1_000, 2_000, 4_000, 8_000, 16_000, 33_000, 50_000, 100_000, 250_000, 500_000, 1_000_000,
        ]

        enum CodingKeys: String, CodingKey {
            case count, p50, p99, max, buckets
            case sum = "sum_us"
        }
    }
    public var eventToSubmit: Latency
    /// To the frame being on screen: the page flip's completion (on the headless display,
    /// the next turn of the loop).
    public var eventToShown: Latency?
    /// Frames presented since the start.
    public var frames: Int
    /// Unlocks since the start, by method ("pattern", "code").
    public var unlocks: [String: Int]?
    /// Failed attempts since the start (`Status.failures` counts the consecutive ones).
    public var failuresTotal: Int?
    /// Lockouts begun since the start.
    public var lockoutsTotal: Int?
    /// Time spent locked since the start, in seconds, counted at each unlock (the lock
    /// under way is the time since `lockedSince`).
    public var lockedSeconds: Double?
    /// Input devices in use (touch panels and keypads).
    public var inputDevices: Int?
    /// Outputs (connectors) the lock screen is shown on.
    public var outputs: Int?
    /// When things happened, in seconds since the Unix epoch: a scraper that reads them
    /// late (a node_exporter textfile written at the last event) still gets them right.
    /// Since when the device is locked (absent while unlocked).
    public var lockedSince: Double?
    /// The last unlock, and the last failed attempt, since the daemon started.
    public var lastUnlock: Double?
    public var lastFailure: Double?
    /// While locked out: when the next attempt is accepted.
    public var lockoutUntil: Double?
    /// The daemon's version.
    public var version: String?

    public init(eventToSubmit: Latency, eventToShown: Latency? = nil, frames: Int) {
        self.eventToSubmit = eventToSubmit; self.eventToShown = eventToShown; self.frames = frames
    }

    enum CodingKeys: String, CodingKey {
        case frames, unlocks, outputs
        case eventToSubmit = "event_to_submit_us"
        case eventToShown = "event_to_shown_us"
        case failuresTotal = "failures_total"
        case lockoutsTotal = "lockouts_total"
        case lockedSeconds = "locked_seconds"
        case inputDevices = "input_devices"
        case lockedSince = "locked_since"
        case lastUnlock = "last_unlock"
        case lastFailure = "last_failure"
        case lockoutUntil = "lockout_until"
        case version
    }
}

/// The machine-readable reason a request failed. Unknown codes from a newer server
/// decode as themselves.
public struct ErrorCode: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
    public var description: String { rawValue }

    /// Not JSON, not an object, or a field missing or of the wrong type.
    public static let badRequest = ErrorCode(rawValue: "bad_request")
    /// Well-formed, but not a request this server knows.
    public static let unknownRequest = ErrorCode(rawValue: "unknown_request")
    /// A line longer than the limit; the server then closes the connection.
    public static let lineTooLong = ErrorCode(rawValue: "line_too_long")
    /// The server already has its maximum number of clients; it then closes the connection.
    public static let tooManyClients = ErrorCode(rawValue: "too_many_clients")
    /// A client neither subscribed nor owed a reply sent no request for the idle
    /// timeout; the server then closes the connection.
    public static let idleTimeout = ErrorCode(rawValue: "idle_timeout")
    /// The server could not build the reply.
    public static let `internal` = ErrorCode(rawValue: "internal")
    /// The peer (SO_PEERCRED) may not make this request: status, subscribe, lock and
    /// metrics need root or the socket's group; message needs root or the group of
    /// `[socket] message_group`; enroll and reset_lockout need root.
    public static let forbidden = ErrorCode(rawValue: "forbidden")
    /// A field has a value the request does not take.
    public static let badValue = ErrorCode(rawValue: "bad_value")
    /// This server does not carry out the request.
    public static let unsupported = ErrorCode(rawValue: "unsupported")
    /// Another process holds the display (DRM master); the lock screen cannot show.
    public static let displayBusy = ErrorCode(rawValue: "display_busy")
    /// The state file could not be written (disk full, read-only...); nothing changed.
    public static let storeFailed = ErrorCode(rawValue: "store_failed")
    /// The lock screen cannot do it now: an enrollment on the screen while locked with a
    /// secret, while an attempt is checked or waited out, or during another enrollment.
    public static let busy = ErrorCode(rawValue: "busy")
    /// `enroll` of a secret the config files set (secrets.conf): that one wins, so an
    /// enrolled one would not count; nothing changed.
    public static let shadowed = ErrorCode(rawValue: "shadowed")
    /// `service_unlock` with a code that is not this device's now (or was used already):
    /// counted as a failure.
    public static let wrongCode = ErrorCode(rawValue: "wrong_code")
    /// No attempt is taken before the wait (`retry_after_ms`) is over.
    public static let lockedOut = ErrorCode(rawValue: "locked_out")
    /// `service_unlock` on a device without a usable device key (docs/service-codes.md).
    public static let noServiceKey = ErrorCode(rawValue: "no_service_key")
}

/// The "error" object of a failed reply.
public struct ControlError: Codable, Hashable, Sendable, Error, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// `locked_out` and `wrong_code`: milliseconds until the next attempt is taken.
    public var retryAfterMs: Int64?
    public init(_ code: ErrorCode, _ message: String, retryAfterMs: Int64? = nil) {
        self.code = code; self.message = message; self.retryAfterMs = retryAfterMs
    }
    enum CodingKeys: String, CodingKey {
        case code, message
        case retryAfterMs = "retry_after_ms"
    }
    public var description: String { "\(code): \(message)" }
}

/// The body of the reply to `hello`.
public struct Hello: Codable, Hashable, Sendable {
    public var `protocol`: Int
    public init(protocol: Int = ControlProtocol.version) { self.protocol = `protocol` }
}

/// The parts every reply line has. Decode a reply line as this first, then as the body
/// type the request answers (`Status`, `Hello`).
public struct ReplyHeader: Codable, Hashable, Sendable {
    /// nil when the server could not tell which request the reply answers.
    public var id: Int?
    public var ok: Bool
    public var error: ControlError?
}

/// What the daemon reports for `status`.
public struct Status: Codable, Hashable, Sendable {
    public enum State: String, Codable, Hashable, Sendable, CaseIterable {
        case locked, verifying, wrong, lockout, unlocked
        /// A failure could not be stored (disk full, read-only): input is refused until
        /// it is; `reason` says why.
        case storeFailed = "store_failed"

        public init(_ state: Session.State) {
            switch state {
            case .locked: self = .locked
            case .verifying, .storing: self = .verifying
            case .wrong: self = .wrong
            case .lockout: self = .lockout
            case .storeFailed: self = .storeFailed
            case .unlocked: self = .unlocked
            }
        }
    }

    public struct Screen: Codable, Hashable, Sendable {
        public var width: Int
        public var height: Int
        public init(width: Int, height: Int) { self.width = width; self.height = height }
        public init(_ size: Size) { self.init(width: size.width, height: size.height) }
    }

    /// The pattern grid as laid out on the screen, so a client can aim at nodes.
    public struct Pattern: Codable, Hashable, Sendable {
        public var rows: Int
        public var columns: Int
        /// The radius nodes are drawn with, in pixels.
        public var nodeRadius: Double
        /// A touch within this distance of a node's centre selects it.
        public var hitRadius: Double
        /// Node centres [x, y] in screen pixels, row-major from node 0.
        public var nodes: [[Double]]
        /// The fewest nodes a pattern connects.
        public var minLength: Int?
        /// Whether a node can be chosen again: "never" or "allowed" (`[pattern] repeat`).
        public var repeats: PatternRepeat?

        public init(rows: Int, columns: Int, nodeRadius: Double, hitRadius: Double, nodes: [[Double]]) {
            self.rows = rows; self.columns = columns
            self.nodeRadius = nodeRadius; self.hitRadius = hitRadius; self.nodes = nodes
        }

        /// `grid`'s geometry, rounded to 1/100 pixel so the JSON reads as it should
        /// (172.8, not 172.79999999999998).
        public init(_ grid: PatternGrid) {
            func r(_ v: Double) -> Double { (v * 100).rounded() / 100 }
            self.init(rows: grid.rows, columns: grid.columns, nodeRadius: r(grid.nodeRadius),
                      hitRadius: r(grid.hitRadius),
                      nodes: (0..<grid.count).map { let p = grid.center(of: $0); return [r(p.x), r(p.y)] })
        }

        enum CodingKeys: String, CodingKey {
            case rows, columns, nodes
            case nodeRadius = "node_radius"
            case hitRadius = "hit_radius"
            case minLength = "min_length"
            case repeats = "repeat"
        }
    }

    /// The code pad as laid out on the screen, so a client can aim at its keys.
    public struct CodePad: Codable, Hashable, Sendable {
        /// Digits in the code.
        public var length: Int
        /// Digits entered so far.
        public var entered: Int
        /// Key centres [x, y] in screen pixels: "0"..."9", "delete", "ok".
        public var keys: [String: [Double]]
        /// The digit boxes as [x, y, width, height].
        public var boxes: [[Int]]

        public init(_ pad: TouchlockCore.CodePad) {
            length = pad.length
            entered = pad.entered
            var keys: [String: [Double]] = [:]
            for slot in pad.layout.keys.indices {
                let name: String
                switch pad.key(inSlot: slot) {
                case .digit(let d): name = String(d)
                case .delete: name = "delete"
                case .ok: name = "ok"
                }
                let c = pad.layout.keys[slot].centre
                keys[name] = [c.x, c.y]
            }
            self.keys = keys
            boxes = pad.layout.boxes.map { [$0.x, $0.y, $0.width, $0.height] }
        }
    }

    public var state: State
    /// Consecutive failed attempts.
    public var failures: Int
    /// How the session was unlocked; only while unlocked.
    public var method: UnlockMethod?
    /// When it was unlocked (monotonic, microseconds, as the `unlocked` event's `at`);
    /// only while unlocked.
    public var unlockedAt: Int64?
    /// While locked out: when the next attempt is allowed (monotonic clock, microseconds).
    public var lockoutUntil: Int64?
    /// While locked out: milliseconds left.
    public var retryAfterMilliseconds: Int64?
    /// Why input is refused, in words (state store_failed, or a damaged record).
    public var reason: String?
    /// "damaged" while the lockout stands for a state file that was damaged or unreadable
    /// at start-up (until a whole record is written); "untrusted" for one others could
    /// have written (no attempt accepted until a restart); absent otherwise.
    public var record: Record?
    public enum Record: String, Codable, Hashable, Sendable, CaseIterable {
        case damaged, untrusted
    }
    /// The methods that have a secret.
    public var enrolled: [UnlockMethod]?
    /// Where each method's secret that counts comes from ("pattern": "config"): the
    /// config files (secrets.conf) win over a secret enrolled in the state file.
    public var secretSource: [String: SecretSource]?
    public enum SecretSource: String, Codable, Hashable, Sendable, CaseIterable {
        case config, enrolled
    }
    /// The methods whose enrolled secret does not count, the config files setting one
    /// too; absent when there are none.
    public var secretsShadowed: [UnlockMethod]?
    /// Whether one-time service codes are taken (`service_unlock`): true with a usable
    /// device key, false without (the log says why); absent from a server without them.
    public var serviceCodes: Bool?
    /// The config files that hold a secret's hash and that others than root can read
    /// ("PATH (mode 0644)"); absent when there are none. The hashes there should move to
    /// the root-only secrets file (docs/operations.md, "Secrets and lockout").
    public var secretsReadable: [String]?
    public var screen: Screen
    /// The pattern grid, when the screen has one.
    public var pattern: Pattern?
    /// The method on screen (pattern or code; service while the service pad is open).
    public var showing: UnlockMethod?
    /// The code pad on screen: the service pad while it is open, else the owner's.
    public var code: CodePad?
    /// The centre [x, y] of the control that switches between pattern and code.
    public var toggle: [Double]?
    /// The method being enrolled on the screen, while it is.
    public var enrolling: UnlockMethod?
    /// The message on the lock screen: the one set over the socket, else `[screen] message`.
    public var message: String?
    /// Whether the lock screen is on the display: `shown`, `taking` (being switched to),
    /// `handing_over` (after an unlock, the switch back to the kiosk's VT is under way),
    /// `handed_over` (after an unlock, the kiosk app has it), `not_shown` (it could not be
    /// taken: `display_reason` says why).
    public var display: Cover.Display?
    public var displayReason: String?
    /// A `lock` (or the idle lock) was refused because the display could not be taken: it
    /// is tried again when the VT owner lets our VT be shown, or at the next `lock`.
    public var lockPending: Bool?
    /// Our virtual terminal, when the display is taken from a kiosk by a VT switch; else
    /// `vt_reason` says why there is no VT hand-off.
    public var vt: Int?
    public var vtReason: String?
    /// How the screen is covered: `vt` (the VT hand-off) or `session-lock` (the Wayland
    /// compositor's ext-session-lock-v1); `cover_reason` says why that one.
    public var cover: String?
    public var coverReason: String?
    /// `blank` while the screen is switched off (locked and untouched for `blank_s`),
    /// else `awake`.
    public var power: Power?
    public enum Power: String, Codable, Hashable, Sendable, CaseIterable {
        case awake, blank
    }
    /// Each output (connected screen) the lock screen is shown on.
    public var outputs: [Output]?

    /// One output: `state` is `active`, `handed_over` (after an unlock) or `inactive`
    /// (lost: `reason` says how, `detail` what the kernel said, `retry_error` why the
    /// last retry failed).
    public struct Output: Codable, Hashable, Sendable {
        public var name: String
        /// The DRM card the output is on (its node's name, e.g. card1); absent under the
        /// compositor's session lock and headless.
        public var card: String?
        public var state: OutputState.Phase.Name
        public var reason: OutputState.Reason.Code?
        public var detail: String?
        public var retryError: String?
        public var screen: Screen
        /// The pattern grid as laid out on this output, when it shows one.
        public var pattern: Pattern?

        public init(_ o: OutputState, screen: Size, grid: PatternGrid?, card: String? = nil) {
            name = o.name
            self.card = card
            state = o.phase.name
            reason = o.reason?.code
            detail = o.reason.map { "\($0)" }
            retryError = o.retryError
            self.screen = Screen(screen)
            pattern = grid.map(Pattern.init)
        }

        enum CodingKeys: String, CodingKey {
            case name, card, state, reason, detail, screen, pattern
            case retryError = "retry_error"
        }
    }

    public init(state: State, failures: Int, method: UnlockMethod?, screen: Screen, pattern: Pattern?) {
        self.state = state; self.failures = failures; self.method = method
        self.screen = screen; self.pattern = pattern
    }

    /// The status of `session` at `now` on a screen of `screen` pixels with `grid` laid out on it.
    public init(session: Session, screen: Size, grid: PatternGrid?, now: Instant? = nil,
                enrolled: [UnlockMethod]? = nil) {
        var method: UnlockMethod?
        var at: Int64?
        if case .unlocked(let m, let t) = session.state { method = m; at = t.microseconds }
        self.init(state: State(session.state), failures: session.failures, method: method,
                  screen: Screen(screen), pattern: grid.map(Pattern.init))
        unlockedAt = at
        if let until = session.lockedOutUntil {
            lockoutUntil = until.microseconds
            if let now { retryAfterMilliseconds = max(0, (until - now).microseconds.saturatingAdding(999)) / 1000 }
        }
        if case .storeFailed(let why) = session.state { reason = why }
        self.enrolled = enrolled
    }

    enum CodingKeys: String, CodingKey {
        case state, failures, method, reason, record, enrolled, enrolling, screen, pattern, showing, code, toggle, display, vt, power, outputs
        case message
        case displayReason = "display_reason"
        case lockPending = "lock_pending"
        case unlockedAt = "unlocked_at"
        case vtReason = "vt_reason"
        case cover
        case coverReason = "cover_reason"
        case secretsReadable = "secrets_readable"
        case secretSource = "secret_source"
        case secretsShadowed = "secrets_shadowed"
        case serviceCodes = "service_codes"
        case lockoutUntil = "lockout_until"
        case retryAfterMilliseconds = "retry_after_ms"
    }

    /// The status of a whole lock screen.
    public init(_ lock: LockScreen, screen: Size, now: Instant? = nil, enrolled: [UnlockMethod]? = nil) {
        self.init(session: lock.session, screen: screen, grid: lock.pattern?.grid, now: now, enrolled: enrolled)
        pattern?.minLength = lock.pattern?.minimumLength
        pattern?.repeats = lock.pattern?.repeats
        showing = lock.showing
        code = lock.shownCode.map(CodePad.init)
        toggle = lock.toggleRect.map { [$0.centre.x, $0.centre.y] }
        enrolling = lock.enrollment?.method
    }
}

/// A line sent to subscribers.
///
///     {"at":123456789,"event":"unlocked","method":"pattern"}
///     {"event":"failed","failures":2,"method":"pattern","retry_after_ms":500}
///     {"event":"store_failed","method":"pattern","reason":"No space left on device"}
///     {"event":"locked"}
///     {"entered":2,"event":"progress","total":4}
///     {"event":"enrolled","method":"pattern"}
///     {"event":"enroll_failed","method":"code","reason":"cancelled by a lock request"}
///
/// The lock screen's own event type: what it tells is what subscribers get, with no
/// second list of cases to keep in step.
public typealias Event = LockEvent

extension LockEvent: Codable {
    /// Which event it is, without its fields: the raw values are the wire's "event".
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case unlocked, duress, failed, lockout, progress, locked, enrolled
        case storeFailed = "store_failed"
        case enrollFailed = "enroll_failed"
        case handedOver = "handed_over"
    }

    public var kind: Kind {
        switch self {
        case .unlocked: .unlocked
        case .duress: .duress
        case .failed: .failed
        case .storeFailed: .storeFailed
        case .lockout: .lockout
        case .progress: .progress
        case .locked: .locked
        case .enrolled: .enrolled
        case .enrollFailed: .enrollFailed
        case .handedOver: .handedOver
        }
    }

    /// The event's name on the wire.
    public var name: String { kind.rawValue }

    enum CodingKeys: String, CodingKey {
        case event, method, at, failures, until, entered, total, reason
        case retryAfterMilliseconds = "retry_after_ms"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let name = try c.decode(String.self, forKey: .event)
        guard let kind = Kind(rawValue: name) else {
            throw DecodingError.dataCorruptedError(forKey: .event, in: c, debugDescription: "unknown event \"\(name)\"")
        }
        switch kind {
        case .unlocked:
            self = .unlocked(method: try c.decode(UnlockMethod.self, forKey: .method),
                             at: Instant(microseconds: try c.decode(Int64.self, forKey: .at)))
        case .failed:
            self = .failed(method: try c.decode(UnlockMethod.self, forKey: .method),
                           failures: try c.decode(Int.self, forKey: .failures),
                           retryAfter: .milliseconds(try c.decode(Int64.self, forKey: .retryAfterMilliseconds)))
        case .storeFailed:
            self = .storeFailed(method: try c.decode(UnlockMethod.self, forKey: .method),
                                reason: try c.decode(String.self, forKey: .reason))
        case .duress:
            self = .duress(method: try c.decode(UnlockMethod.self, forKey: .method),
                           at: Instant(microseconds: try c.decode(Int64.self, forKey: .at)))
        case .lockout:
            self = .lockout(until: Instant(microseconds: try c.decode(Int64.self, forKey: .until)))
        case .locked:
            self = .locked
        case .progress:
            self = .progress(entered: try c.decode(Int.self, forKey: .entered), total: try c.decode(Int.self, forKey: .total))
        case .enrolled:
            self = .enrolled(method: try c.decode(UnlockMethod.self, forKey: .method))
        case .enrollFailed:
            self = .enrollFailed(method: try c.decode(UnlockMethod.self, forKey: .method),
                                 reason: try c.decode(String.self, forKey: .reason))
        case .handedOver:
            self = .handedOver
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .event)
        switch self {
        case .unlocked(let method, let at), .duress(let method, let at):
            try c.encode(method, forKey: .method)
            try c.encode(at.microseconds, forKey: .at)
        case .lockout(let until):
            try c.encode(until.microseconds, forKey: .until)
        case .failed(let method, let failures, let retryAfter):
            try c.encode(method, forKey: .method)
            try c.encode(failures, forKey: .failures)
            try c.encode(retryAfter.milliseconds, forKey: .retryAfterMilliseconds)
        case .locked, .handedOver:
            break
        case .progress(let entered, let total):
            try c.encode(entered, forKey: .entered)
            try c.encode(total, forKey: .total)
        case .enrolled(let method):
            try c.encode(method, forKey: .method)
        case .enrollFailed(let method, let reason), .storeFailed(let method, let reason):
            try c.encode(method, forKey: .method)
            try c.encode(reason, forKey: .reason)
        }
    }
}

/// Encoding and decoding of single lines, with `JSON` and `JSONCoding`.
struct LineCodec {
    /// `value` as one line, newline included.
    func line<T: Encodable>(_ value: T) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try JSONCoding.encode(value).write(into: &bytes)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Malformed JSON is `DecodingError.dataCorrupted`, with the syntax error as its
    /// underlying error.
    func decode<T: Decodable>(_ type: T.Type, from bytes: some Collection<UInt8>) throws -> T {
        let json: JSON
        do { json = try JSON.parse(bytes) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "malformed JSON: \(error)",
                                                    underlyingError: error))
        }
        return try JSONCoding.decode(type, from: json)
    }

    /// A successful reply: id, ok and the body's fields in one object.
    func reply<Body: Encodable>(id: Int?, _ body: Body) throws -> [UInt8] {
        try line(Reply(id: id, body: .success(body)))
    }

    /// A failed reply.
    func reply(id: Int?, _ error: ControlError) -> [UInt8] {
        // Only strings and an integer: encoding cannot fail.
        (try? line(Reply<Hello>(id: id, body: .failure(error)))) ?? Array("{\"ok\":false}\n".utf8)
    }
}

/// {"id": N, "ok": true, ...body} or {"id": N, "ok": false, "error": {...}}.
private struct Reply<Body: Encodable>: Encodable {
    enum Outcome { case success(Body), failure(ControlError) }
    var id: Int?
    var body: Outcome

    enum CodingKeys: String, CodingKey { case id, ok, error }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)  // null when the request could not be read
        switch body {
        case .success(let body):
            try c.encode(true, forKey: .ok)
            try body.encode(to: encoder)  // the body's keys join the same object
        case .failure(let error):
            try c.encode(false, forKey: .ok)
            try c.encode(error, forKey: .error)
        }
    }
}

/// An empty reply body.
struct Empty: Encodable {
    func encode(to encoder: any Encoder) throws {}
}
