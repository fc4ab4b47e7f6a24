/// Logging without I/O in Core: the executable installs a sink at start.
/// `bug` is for events a state machine holds impossible: they are reported, never ignored.
public enum LogLevel: Int, Comparable, Sendable {
    case debug = 0, info, warning, error, bug
    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
    public var label: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        case .bug: "bug"
        }
    }
}

public enum Log {
    /// Where log lines go; set once by the executable before the loop runs.
    nonisolated(unsafe) public static var sink: (LogLevel, String) -> Void = { _, _ in }
    nonisolated(unsafe) public static var threshold: LogLevel = .info

    public static func debug(_ m: @autoclosure () -> String) { emit(.debug, m) }
    public static func info(_ m: @autoclosure () -> String) { emit(.info, m) }
    public static func warning(_ m: @autoclosure () -> String) { emit(.warning, m) }
    public static func error(_ m: @autoclosure () -> String) { emit(.error, m) }
    /// An event that the state machine's design says cannot happen.
    public static func bug(_ m: @autoclosure () -> String) { emit(.bug, m) }

    private static func emit(_ level: LogLevel, _ m: () -> String) {
        if level >= threshold { sink(level, m()) }
    }
}
