import CPaths

/// The directories touchlock reads and writes, fixed when it is built: the defaults are
/// in Modules/CPaths/shim.h, and `make` may give others (PREFIX and friends). Nothing
/// else in the sources spells these paths out.
public enum Paths {
    /// The package's files: the defaults file, its .d directory, the demo recording.
    public static let data: String = TL_DATADIR
    /// The administrator's settings.
    public static let config: String = TL_CONFDIR
    /// The control socket's directory (tmpfiles.d makes it at boot).
    public static let runtime: String = TL_RUNDIR
    /// The state file's directory (root only).
    public static let state: String = TL_STATEDIR

    /// The control socket.
    public static var socket: String { runtime + "/touchlock.sock" }
    /// The lockout record and the secrets' hashes.
    public static var stateFile: String { state + "/state" }
    /// The device key of one-time service codes (`[service] key_file`), root's only.
    public static var serviceKey: String { config + "/service.key" }
    /// The recording `--input replay` plays when no other is named.
    public static var demoRecording: String { data + "/demo-pattern.evemu" }
}
