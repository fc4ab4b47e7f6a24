import Foundation
import Testing
import TouchlockControl
import TouchlockCore

/// What an operator is given: the Prometheus rules under data/prometheus (promtool checks
/// and unit-tests them), written against metrics the daemon exposes, and
/// docs/operations.md naming every journal MESSAGE_ID.
@Suite struct OperationsDocTests {
    static var promtool: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/promtool" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func run(_ args: [String], in dir: String) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: args[0])
        p.arguments = Array(args.dropFirst())
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = pipe
        try p.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test(.enabled(if: promtool != nil, "promtool (Debian's prometheus) is installed by scripts/setup --test"))
    func theAlertRulesPassPromtoolsCheckAndTheirUnitTests() throws {
        let dir = Tree.path("data/prometheus")
        let check = try Self.run([Self.promtool!, "check", "rules", "touchlock.rules.yml"], in: dir)
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("SUCCESS: 5 rules found"), "\(check.output)")
        let test = try Self.run([Self.promtool!, "test", "rules", "touchlock.rules.test.yml"], in: dir)
        #expect(test.status == 0, "\(test.output)")
    }

    /// Every touchlock_ metric a rule names is one the daemon writes (a family, or a
    /// counter's `_total` sample), so a renamed metric cannot leave a rule that never fires.
    @Test func everyMetricTheRulesNameIsExposed() throws {
        var status = Status(state: .lockout, failures: 5, method: nil, screen: .init(width: 800, height: 480), pattern: nil)
        status.retryAfterMilliseconds = 1000
        var m = Metrics(eventToSubmit: .init(count: 0, p50: nil, p99: nil, max: nil), frames: 1)
        m.unlocks = [:]; m.failuresTotal = 5; m.lockoutsTotal = 1; m.lockedSeconds = 0; m.inputDevices = 1; m.outputs = 1
        m.lockedSince = 1; m.lastFailure = 2; m.lockoutUntil = 3; m.version = "1"
        let exposed = Set(MetricsExposition.render(status: status, metrics: m, format: .prometheusText)
            .split(separator: "\n").filter { !$0.hasPrefix("#") }
            .map { String($0.prefix { $0 != "{" && $0 != " " }) })
        let rules = try Tree.text("data/prometheus/touchlock.rules.yml")
        var named: Set<String> = []
        var rest = Substring(rules)
        while let r = rest.range(of: "touchlock_") {
            let name = rest[r.lowerBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            named.insert(String(name))
            rest = rest[name.endIndex...]
        }
        #expect(named.contains("touchlock_lockout_until_timestamp_seconds"))
        for name in named.sorted() {
            #expect(exposed.contains(name), "data/prometheus/touchlock.rules.yml names \(name), which touchlockd does not expose")
        }
    }

    @Test func everyJournalMessageIDIsDocumentedWithItsFields() throws {
        let doc = try Tree.text("docs/operations.md")
        for id in LogMessageID.allCases {
            #expect(doc.contains("`\(id.rawValue)`"), "docs/operations.md does not list \(id) (\(id.rawValue))")
        }
        for field in ["TOUCHLOCK_METHOD", "TOUCHLOCK_ATTEMPTS", "TOUCHLOCK_LOCKOUT_SECONDS", "TOUCHLOCK_FILE",
                      "TOUCHLOCK_REASON", "TOUCHLOCK_SOURCE"] {
            #expect(doc.contains("`\(field)`"), "docs/operations.md does not describe \(field)")
        }
    }
}
