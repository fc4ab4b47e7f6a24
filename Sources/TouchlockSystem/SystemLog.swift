import CLinux
import Glibc
import TouchlockCore

/// The daemon's log lines through syslog(3), for a service manager whose standard error
/// no journal reads (OpenRC): each at its own priority, tagged once with the program's
/// name and process id, facility daemon.
public enum SystemLog {
    /// Opens the log as `ident` (kept for the process's life, as openlog(3) wants it).
    public static func open(_ ident: String) {
        openlog(strdup(ident), LOG_PID, LOG_DAEMON)
    }

    public static func write(_ level: LogLevel, _ message: String) {
        clinux_syslog(priority(level), level == .bug ? "bug: " + message : message)
    }

    /// syslog's (and journald's) priority of a level.
    public static func priority(_ level: LogLevel) -> Int32 {
        switch level {
        case .debug: LOG_DEBUG
        case .info: LOG_INFO
        case .warning: LOG_WARNING
        case .error: LOG_ERR
        case .bug: LOG_CRIT
        }
    }
}
