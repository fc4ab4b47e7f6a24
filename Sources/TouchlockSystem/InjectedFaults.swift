import Glibc

/// Faults a process test asks a real touchlockd to suffer, through the seam
/// (`SystemCalls`), named in the environment. Debug builds only: a release build ignores
/// the variables and has no such code.
///
///     TOUCHLOCK_TEST_FSYNC_DELAY_MS=15   every fsync takes 15 ms longer (flash storage)
///     TOUCHLOCK_TEST_FSYNC_ERRNO=5       every fsync fails with that errno (EIO)
///     TOUCHLOCK_TEST_KILL_AT=K           SIGKILL at the K-th step of a durable write (from
///                                        0: before and after each fsync and rename)
///     TOUCHLOCK_TEST_VERIFIER_DIES_AT=K  the verifier process is killed (SIGKILL) as the K-th
///                                        request (from 0) is sent to it: it dies in the middle
///                                        of its answer, the request in hand and unanswered
///                                        (its socket is the only SOCK_SEQPACKET one)
public enum InjectedFaults {
    /// Runs `body` with the faults of the environment in effect.
    public static func run(_ body: () -> Void) {
        #if ENABLE_MOCKING
        func number(_ name: String) -> Int? { getenv(name).flatMap { Int(String(cString: $0)) } }
        let delay = number("TOUCHLOCK_TEST_FSYNC_DELAY_MS"), failure = number("TOUCHLOCK_TEST_FSYNC_ERRNO")
        let killAt = number("TOUCHLOCK_TEST_KILL_AT"), verifierDiesAt = number("TOUCHLOCK_TEST_VERIFIER_DIES_AT")
        guard delay != nil || failure != nil || killAt != nil || verifierDiesAt != nil else { return body() }
        let steps = StepCounter(killAt: killAt)
        var calls = SystemCalls.real
        calls.fsync = { fd in
            steps.step()
            if let delay { usleep(useconds_t(delay * 1000)) }
            if let failure {
                errno = Int32(failure)
                return -1
            }
            let r = Glibc.fsync(fd)
            steps.step()
            return r
        }
        calls.rename = { from, to in
            steps.step()
            let r = Glibc.rename(from, to)
            steps.step()
            return r
        }
        if let verifierDiesAt {
            // The pair's peer credentials are the daemon's own (socketpair), so the
            // child is known by what posix_spawn gave.
            let verifier = VerifierDeath(at: verifierDiesAt)
            let spawn = calls.spawn, send = calls.send
            calls.spawn = { pid, path, actions, attributes, arguments, environment in
                let r = spawn(pid, path, actions, attributes, arguments, environment)
                if r == 0 { verifier.pid = pid.pointee }
                return r
            }
            calls.send = { fd, buffer, count, flags in
                let n = send(fd, buffer, count, flags)
                if n > 0, isSequencedPacket(fd) { verifier.sent() }
                return n
            }
        }
        SystemCalls.$current.withValue(calls) { body() }
        #else
        body()
        #endif
    }
}

#if ENABLE_MOCKING
/// Whether `fd` is a SOCK_SEQPACKET socket (the verifier's pair).
private func isSequencedPacket(_ fd: Int32) -> Bool {
    var type: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0 && type == Int32(SOCK_SEQPACKET.rawValue)
}

/// Kills the verifier process as the request it is to die with is sent to it.
private final class VerifierDeath: @unchecked Sendable {
    let at: Int
    /// The last process started.
    var pid: pid_t = 0
    var requests = 0
    init(at: Int) { self.at = at }
    func sent() {
        if requests == at && pid > 0 { _ = kill(pid, SIGKILL) }
        requests += 1
    }
}

/// Counts the steps of durable writes; kills the process at the one asked for.
private final class StepCounter: @unchecked Sendable {
    let killAt: Int?
    var count = 0
    init(killAt: Int?) { self.killAt = killAt }
    func step() {
        if count == killAt { raise(SIGKILL) }
        count += 1
    }
}
#endif
