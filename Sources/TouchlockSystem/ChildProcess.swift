import Glibc
import TouchlockCore

/// A process this one started, until it is reaped: spawned with the descriptors it is
/// given under its own numbers, signalled, and waited for with its end decoded. Every call
/// goes through `SystemCalls.current` and one error wrapper.
public final class ChildProcess {
    /// What the child has at a descriptor number of its own when it starts.
    public enum Descriptor: Sendable {
        /// This process's `fd`, duplicated as the child's `number` (dup2).
        case duplicate(_ fd: Int32, as: Int32)
        /// `path` opened with `flags` as the child's `number`.
        case open(_ path: String, _ flags: Int32, as: Int32)
    }

    /// How a child ended, decoded from its wait status.
    public enum Termination: Equatable, Sendable, CustomStringConvertible {
        /// It called exit with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32, coreDumped: Bool)

        /// `status` as waitpid(2) gives it (WIFEXITED, WEXITSTATUS, WTERMSIG, WCOREDUMP).
        public init(waitStatus status: Int32) {
            if status & 0x7f == 0 {
                self = .exited((status >> 8) & 0xff)
            } else {
                self = .signalled(status & 0x7f, coreDumped: status & 0x80 != 0)
            }
        }

        public var description: String {
            switch self {
            case .exited(let code): "exit status \(code)"
            case .signalled(let signal, let core): "killed by signal \(signal)\(core ? " (core dumped)" : "")"
            }
        }
    }

    public let pid: pid_t
    /// How it ended, once it is reaped; nil while it runs (or is a zombie not waited for).
    public private(set) var termination: Termination?

    private init(pid: pid_t) { self.pid = pid }

    /// Starts `path` with `arguments` (the first is its name) and `environment`, its
    /// descriptors set up as `descriptors` say (the others are closed at exec if they are
    /// close-on-exec, as every descriptor touchlock opens is); with `unblockingSignals`
    /// its signal mask is empty, whatever this thread blocks for its signalfd.
    public static func spawn(_ path: String, arguments: [String], environment: [String] = [],
                             descriptors: [Descriptor] = [], unblockingSignals: Bool = true) throws(SystemError) -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        try SystemCall.checkCode("posix_spawn_file_actions_init") { posix_spawn_file_actions_init(&actions) }
        defer { posix_spawn_file_actions_destroy(&actions) }
        for d in descriptors {
            switch d {
            case .duplicate(let fd, let number):
                try SystemCall.checkCode("posix_spawn_file_actions_adddup2", "fd \(fd) as \(number)") {
                    posix_spawn_file_actions_adddup2(&actions, fd, number)
                }
            case .open(let file, let flags, let number):
                try SystemCall.checkCode("posix_spawn_file_actions_addopen", "\(file) as \(number)") {
                    posix_spawn_file_actions_addopen(&actions, number, file, flags, 0)
                }
            }
        }
        var attributes = posix_spawnattr_t()
        try SystemCall.checkCode("posix_spawnattr_init") { posix_spawnattr_init(&attributes) }
        defer { posix_spawnattr_destroy(&attributes) }
        if unblockingSignals {
            var none = sigset_t()
            sigemptyset(&none)
            try SystemCall.checkCode("posix_spawnattr_setsigmask") { posix_spawnattr_setsigmask(&attributes, &none) }
            try SystemCall.checkCode("posix_spawnattr_setflags") {
                posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
            }
        }
        var pid: pid_t = 0
        let sys = SystemCalls.current
        try withCStrings(arguments) { argv throws(SystemError) in
            try withCStrings(environment) { envp throws(SystemError) in
                try SystemCall.checkCode("posix_spawn", path) { sys.spawn(&pid, path, &actions, &attributes, argv, envp) }
            }
        }
        return ChildProcess(pid: pid)
    }

    /// Sends `signal` to the child. A child already reaped is not signalled: its number
    /// may be another process's by now.
    public func signal(_ signal: Int32) throws(SystemError) {
        guard termination == nil else { return }
        let pid = pid
        try SystemCall.check("kill", "process \(pid), signal \(signal)") { SystemCalls.current.kill(pid, signal) }
    }

    /// Reaps the child if it has ended, without waiting: how it ended, or nil while it runs.
    public func reap() throws(SystemError) -> Termination? {
        try waitForEnd(options: WNOHANG)
    }

    /// Waits until the child ends and reaps it: how it ended.
    public func wait() throws(SystemError) -> Termination {
        // Without WNOHANG waitpid returns only once the child has ended.
        while true {
            if let t = try waitForEnd(options: 0) { return t }
        }
    }

    private func waitForEnd(options: Int32) throws(SystemError) -> Termination? {
        if let termination { return termination }
        let pid = pid
        var status: Int32 = 0
        let r = try SystemCall.check("waitpid", "process \(pid)") { SystemCalls.current.waitpid(pid, &status, options) }
        guard r == pid else { return nil }
        let t = Termination(waitStatus: status)
        termination = t
        return t
    }

    deinit {
        // A child must not be left a zombie, nor run on unowned: ended and reaped.
        guard termination == nil else { return }
        Log.bug("process \(pid) dropped before it was reaped; killing it")
        do {
            try signal(SIGKILL)
            _ = try wait()
        } catch {
            Log.error("process \(pid): \(error)")
        }
    }
}

/// `strings` as a NULL-terminated array of C strings, for `body` only.
private func withCStrings<R>(_ strings: [String],
                             _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) throws(SystemError) -> R) throws(SystemError) -> R {
    var storage: [CChar] = []
    var offsets: [Int] = []
    for s in strings {
        offsets.append(storage.count)
        storage += s.utf8CString
    }
    let result = storage.withUnsafeMutableBufferPointer { buffer in
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: offsets.count + 1)
        defer { pointers.deallocate() }
        for (i, offset) in offsets.enumerated() { (pointers + i).initialize(to: buffer.baseAddress.map { $0 + offset }) }
        (pointers + offsets.count).initialize(to: nil)
        return Result { () throws(SystemError) in try body(pointers) }
    }
    return try result.get()
}
