import Glibc

/// Faults a process test asks a real touchlockd to suffer, through the seam
/// (`SystemCalls`), named in the environment. Debug builds only: a release build ignores
/// the variables and has no such code.
///
///     TOUCHLOCK_TEST_FSYNC_DELAY_MS=15   every fsync takes 15 ms longer (flash storage)
///     TOUCHLOCK_TEST_FSYNC_ERRNO=5       every fsync fails with that errno (EIO)
///     TOUCHLOCK_TEST_KILL_AT=K           SIGKILL at the K-th step of a durable write (from
///                                        0: before and after each fsync and rename)
public enum InjectedFaults {
    /// Runs `body` with the faults of the environment in effect.
    public static func run(_ body: () -> Void) {
        #if ENABLE_MOCKING
        func number(_ name: String) -> Int? { getenv(name).flatMap { Int(String(cString: $0)) } }
        let delay = number("TOUCHLOCK_TEST_FSYNC_DELAY_MS"), failure = number("TOUCHLOCK_TEST_FSYNC_ERRNO")
        let killAt = number("TOUCHLOCK_TEST_KILL_AT")
        guard delay != nil || failure != nil || killAt != nil else { return body() }
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
        SystemCalls.$current.withValue(calls) { body() }
        #else
        body()
        #endif
    }
}

#if ENABLE_MOCKING
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
