/// Logging without I/O in Core: the executable installs a sink at start.
/// `bug` is for events a state machine holds impossible: they are reported, never ignored.
/// The levels are syslog's priorities that the daemon uses (`bug` is LOG_CRIT).
public enum LogLevel: Int, Comparable, Sendable {
    case debug = 0, info, notice, warning, error, bug
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
    public var label: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .bug: "bug"
        }
    }

    /// syslog's (and journald's) priority: 7 debug ... 2 critical.
    public var priority: Int {
        switch self {
        case .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .bug: 2
        }
    }
}

/// The fixed 128-bit ids (journald's MESSAGE_ID, as systemd's catalogs use them) of the
/// events an operator filters or alerts on. They never change once released: rules and
/// saved queries name them (docs/operations.md lists them with their fields).
public enum LogMessageID: String, CaseIterable, Sendable {
    /// A wrong pattern or code (TOUCHLOCK_METHOD, TOUCHLOCK_ATTEMPTS).
    case wrongAttempt = "f9f281ef282b4f2aa68a06f685db210c"
    /// A lockout began (TOUCHLOCK_ATTEMPTS, TOUCHLOCK_LOCKOUT_SECONDS).
    case lockoutStarted = "b61429c546ea47629a2bab3e34269668"
    /// Unlocked (TOUCHLOCK_METHOD).
    case unlocked = "49525129c4c74490b0b0a2d50808edf0"
    /// Unlocked by the duress code (TOUCHLOCK_METHOD).
    case duress = "331acd6ea90d490b83aebbca1f74a787"
    /// A file refused or not trusted: the state file (untrusted or damaged), a config file
    /// holding a hash that others can read (TOUCHLOCK_FILE, TOUCHLOCK_REASON).
    case fileRefused = "fe5fea35db0f481bbf69f5548708b27b"
    /// An enrolled secret is shadowed by one in the config files (TOUCHLOCK_METHOD,
    /// TOUCHLOCK_SOURCE).
    case secretShadowed = "bad58b50e4a64476bc0559b5d3fce3a0"
    /// A failed attempt could not be stored: input is blocked (TOUCHLOCK_METHOD).
    case storeFailed = "c5c2466253aa4eb8922eb4bd3ff4274b"
    /// Root cleared the failures and the wait (TOUCHLOCK_ATTEMPTS: those cleared).
    case lockoutReset = "51793feb5f274686bd1c2df34c0e543b"
}

/// One log line: a fixed text with its variables also as fields (journald's
/// `TOUCHLOCK_*`), and the id of the event when an operator may filter on it. Fields
/// never carry a secret, a guess or a hash.
public struct LogRecord: Sendable {
    public var level: LogLevel
    public var message: String
    public var id: LogMessageID?
    public var fields: [Field]

    public struct Field: Hashable, Sendable {
        /// Upper case, digits and underscores, as journald wants them.
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) { self.name = name; self.value = value }
    }

    public init(level: LogLevel, message: String, id: LogMessageID? = nil, fields: [Field] = []) {
        self.level = level; self.message = message; self.id = id; self.fields = fields
    }
}

public enum Log {
    /// Where log lines go; set once by the executable before the loop runs.
    nonisolated(unsafe) public static var sink: (LogRecord) -> Void = { _ in }
    nonisolated(unsafe) public static var threshold: LogLevel = .info

    public static func debug(_ m: @autoclosure () -> String) { emit(.debug, m) }
    public static func info(_ m: @autoclosure () -> String) { emit(.info, m) }
    public static func notice(_ m: @autoclosure () -> String) { emit(.notice, m) }
    public static func warning(_ m: @autoclosure () -> String) { emit(.warning, m) }
    public static func error(_ m: @autoclosure () -> String) { emit(.error, m) }
    /// An event that the state machine's design says cannot happen.
    public static func bug(_ m: @autoclosure () -> String) { emit(.bug, m) }

    /// An event an operator filters on: its id and fields go with the line.
    public static func event(_ id: LogMessageID, _ level: LogLevel, _ m: @autoclosure () -> String,
                             _ fields: [LogRecord.Field] = []) {
        if level >= threshold { sink(LogRecord(level: level, message: m(), id: id, fields: fields)) }
    }

    private static func emit(_ level: LogLevel, _ m: () -> String) {
        if level >= threshold { sink(LogRecord(level: level, message: m())) }
    }
}
