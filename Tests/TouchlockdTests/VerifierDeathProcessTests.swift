import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

// A verifier process that dies in the middle of an answer: a real touchlockd and its real
// verifier child, killed (TOUCHLOCK_TEST_VERIFIER_DIES_AT, through the seam) as the
// attempt's request reaches it, which nothing else can time. The daemon reaps it, starts
// another and sends it the request again: the attempt is judged as any other, counted
// once, and the count is never reset by the death.

private let screen = Size(width: 640, height: 400)
private let rightPattern = Pattern(rows: 3, columns: 3, nodes: [0, 4, 8, 5])
private let wrongPattern = [6, 3, 0, 1]
private let config = "error_hold_ms = 50\nlockout_schedule = none\n"

private func stateText(failures: Int) throws -> String {
    var bytes = rightPattern.secretBytes
    var s = StoredState()
    s.patternHash = try SecretHash.make(&bytes)
    s.lockout = LockoutRecord(failures: failures)
    return s.text
}

private func diskFailures(_ d: DaemonProcess) -> Int? {
    guard let text = d.stateText, case .whole(let s) = StoredState.read(Array(text.utf8)) else { return nil }
    return s.lockout.failures
}


/// The pids of the verifier processes the daemon logged it started, in order.
private func verifierProcesses(in log: String) -> [String] {
    log.split(separator: "\n").compactMap { line in
        guard let r = line.range(of: "verifier: process "), line.hasSuffix(" checks the secrets") else { return nil }
        return String(line[r.upperBound...].prefix { $0.isNumber })
    }
}

@Suite(.serialized, .enabled(if: SystemCalls.isReplaceable, "faults are injected in debug builds only"))
struct VerifierDeathProcessTests {
    @Test func aVerifierThatDiesMidAnswerIsReplacedAndTheAttemptJudgedAndCountedOnce() throws {
        let d = try DaemonProcess(config: config)
        try DurableFile.makeDirectory(DurableFile.directory(of: d.statePath))
        try DurableFile.replace(d.statePath, with: Array(try stateText(failures: 2).utf8))
        let replay = d.dir + "/strokes.evemu"
        // The right pattern comes once the wrong one is judged (a stroke made while an
        // attempt is checked is not taken): 0.9 s, stretched under emulation.
        try DurableFile.replace(replay, with: Array(recording(of: [wrongPattern, rightPattern.nodes], on: screen,
                                                              lead: 600_000, gap: 900_000 * TestTime.scale).utf8),
                                mode: 0o644)
        try d.start(replay: replay, extra: ["-v"], environment: ["TOUCHLOCK_TEST_VERIFIER_DIES_AT=0"])
        let sub = try d.client()
        _ = try sub.request(.subscribe, timeout: waited(5000))

        // The wrong pattern, whose check the first verifier died in: judged wrong, and
        // counted once on top of the two stored (not reset, not lost, not twice).
        let first = events(sub, ms: 8000) {
            switch $0 {
            case .failed, .unlocked, .storeFailed: true
            default: false
            }
        }
        guard case .failed(_, let failures, _)? = first.last else {
            Issue.record("no verdict on the wrong pattern: \(first); exited \(String(describing: d.exited(within: 1000))) log:\n\(d.log.suffix(3000))")
            return
        }
        #expect(failures == 3)
        #expect(diskFailures(d) == 3)
        let log = d.log
        #expect(log.contains("ended (killed by signal 9); 1 request(s) to send again"), "log:\n\(log.suffix(3000))")
        let started = verifierProcesses(in: log)
        #expect(started.count == 2 && Set(started).count == 2, "verifiers started: \(started)")

        // The daemon kept going: the next verifier answers the right pattern, which unlocks.
        let second = events(sub, ms: 8000) {
            switch $0 {
            case .failed, .unlocked, .storeFailed: true
            default: false
            }
        }
        #expect(second.contains { if case .unlocked = $0 { true } else { false } },
                "\(second); log:\n\(d.log.suffix(3000))")
        #expect(diskFailures(d) == 0)
        #expect(d.exited(within: 0) == nil)
        #expect(try d.status().state == .unlocked)
        #expect(verifierProcesses(in: d.log).count == 2, "a verifier died again")
    }
}
