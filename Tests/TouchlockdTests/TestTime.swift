import Glibc
import TouchlockCore

/// How many times longer the process tests wait where the wait is their own choice (a
/// reply, READY=1, the events a replay brings), never a bound the daemon must keep:
/// TOUCHLOCK_TEST_TIME_SCALE, which scripts/vm/arm64-tests.sh sets for the tests run under
/// emulation (there every instruction is emulated); 1 elsewhere.
enum TestTime {
    static let scale: Int64 = {
        guard let raw = getenv("TOUCHLOCK_TEST_TIME_SCALE") else { return 1 }
        let text = String(cString: raw)
        guard let n = Int64(text), (1...100).contains(n) else {
            fatalError("TOUCHLOCK_TEST_TIME_SCALE: expected a whole number from 1 to 100, found '\(text)'")
        }
        return n
    }()
}

/// A harness's wait of `ms` milliseconds, stretched by `TestTime.scale`.
func waited(_ ms: Int64) -> Interval { .milliseconds(ms * TestTime.scale) }
