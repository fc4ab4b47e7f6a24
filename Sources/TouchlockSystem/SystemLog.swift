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

    public static func write(_ record: LogRecord) {
        clinux_syslog(Int32(record.level.priority), record.level == .bug ? "bug: " + record.message : record.message)
    }
}
