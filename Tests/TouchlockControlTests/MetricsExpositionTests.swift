import Foundation
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSystem

/// The exposition read back by a real parser: Python's prometheus_client (Debian's, installed by
/// `scripts/setup --test`), its OpenMetrics parser and its Prometheus text parser.
@Suite struct MetricsExpositionTests {
    struct Parsed: Decodable {
        struct Family: Decodable {
            var name: String
            var type: String
            var unit: String
            var samples: [Sample]
        }
        struct Sample: Decodable {
            var name: String
            var labels: [String: String]
            var value: Double
        }
        var families: [Family]

        func family(_ name: String) -> Family? { families.first { $0.name == name } }
        func value(_ sample: String, _ labels: [String: String] = [:]) -> Double? {
            families.lazy.flatMap(\.samples).first { $0.name == sample && $0.labels == labels }?.value
        }
    }

    /// Parses `text` with prometheus_client; throws with the parser's complaint.
    static func parse(_ text: String, _ format: MetricsExposition.Format) throws -> Parsed {
        let module = format == .openMetrics ? "prometheus_client.openmetrics.parser" : "prometheus_client.parser"
        let script = """
            import json, sys
            from \(module) import text_string_to_metric_families
            out = [{"name": f.name, "type": f.type, "unit": getattr(f, "unit", "") or "",
                    "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]}
                   for f in text_string_to_metric_families(sys.stdin.read())]
            print(json.dumps({"families": out}))
            """
        let process = Process()
        // Debian's python3, which has the python3-prometheus-client scripts/setup installs.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ParseFailure(message: "prometheus_client refused it:\n\(complaint)\n--- text:\n\(text)")
        }
        return try JSONDecoder().decode(Parsed.self, from: data)
    }

    struct ParseFailure: Error, CustomStringConvertible { var message: String; var description: String { message } }

    static let status: Status = {
        var s = Status(state: .lockout, failures: 5, method: nil, screen: .init(width: 800, height: 480),
                       pattern: .init(rows: 3, columns: 3, nodeRadius: 10, hitRadius: 20, nodes: []))
        s.retryAfterMilliseconds = 59_500
        return s
    }()

    /// Every figure there: what a daemon that counts everything sends.
    static func fullMetrics() -> Metrics {
        var shown = LatencyEstimator()
        // 0.5 ms, 3 ms twice, 20 ms, 2 s: none within 4% of a bucket's bound.
        for us: Int64 in [500, 3_000, 3_000, 20_000, 2_000_000] { shown.record(Interval(microseconds: us)) }
        var m = Metrics(eventToSubmit: .init(LatencyEstimator()), eventToShown: .init(shown), frames: 1234)
        m.unlocks = ["pattern": 3, "code": 1]
        m.failuresTotal = 17
        m.lockoutsTotal = 2
        m.lockedSeconds = 3600.25
        m.inputDevices = 2
        m.outputs = 1
        m.lockedSince = 1_796_000_000.25
        m.lastUnlock = 1_795_999_000.5
        m.lastFailure = 1_795_999_900
        m.lockoutUntil = 1_796_000_059.5
        m.version = "9.8.7"
        return m
    }

    @Test func openMetricsParsesWithEveryFigure() throws {
        let text = MetricsExposition.render(status: Self.status, metrics: Self.fullMetrics(), format: .openMetrics)
        #expect(text.hasSuffix("# EOF\n"))
        let p = try Self.parse(text, .openMetrics)

        #expect(p.family("touchlock_state")?.type == "stateset")
        #expect(p.value("touchlock_state", ["touchlock_state": "lockout"]) == 1)
        #expect(p.value("touchlock_state", ["touchlock_state": "locked"]) == 0)
        #expect(p.family("touchlock_state")?.samples.count == Status.State.allCases.count)
        #expect(p.value("touchlock_locked") == 1)
        #expect(p.value("touchlock_consecutive_failures") == 5)
        // The lockout's end as a Unix time, not the seconds left, which go stale in a textfile.
        #expect(p.value("touchlock_lockout_until_timestamp_seconds") == 1_796_000_059.5)
        #expect(p.family("touchlock_lockout_until_timestamp_seconds")?.unit == "seconds")
        #expect(p.family("touchlock_lockout_remaining_seconds") == nil)

        #expect(p.family("touchlock_unlocks")?.type == "counter")
        #expect(p.value("touchlock_unlocks_total", ["method": "pattern"]) == 3)
        #expect(p.value("touchlock_unlocks_total", ["method": "code"]) == 1)
        #expect(p.value("touchlock_failures_total") == 17)
        #expect(p.value("touchlock_lockouts_total") == 2)
        #expect(p.value("touchlock_locked_seconds_total") == 3600.25)
        #expect(p.value("touchlock_frames_total") == 1234)
        #expect(p.value("touchlock_input_devices") == 2)
        #expect(p.value("touchlock_outputs") == 1)
        // When things happened, not durations that go stale between writes of a textfile.
        #expect(p.value("touchlock_locked_since_timestamp_seconds") == 1_796_000_000.25)
        #expect(p.family("touchlock_locked_since_timestamp_seconds")?.unit == "seconds")
        #expect(p.value("touchlock_last_unlock_timestamp_seconds") == 1_795_999_000.5)
        #expect(p.value("touchlock_last_failure_timestamp_seconds") == 1_795_999_900)
        #expect(p.value("touchlock_build_info", ["version": "9.8.7"]) == 1)

        let h = try #require(p.family("touchlock_event_to_shown_seconds"))
        #expect(h.type == "histogram" && h.unit == "seconds")
        let expected: [(String, Double)] = [("0.001", 1), ("0.002", 1), ("0.004", 3), ("0.016", 3), ("0.033", 4),
                                            ("1.0", 4), ("+Inf", 5)]
        for (le, count) in expected {
            #expect(p.value("touchlock_event_to_shown_seconds_bucket", ["le": le]) == count, "le=\(le)")
        }
        #expect(p.value("touchlock_event_to_shown_seconds_count") == 5)
        #expect(abs((p.value("touchlock_event_to_shown_seconds_sum") ?? 0) - 2.0265) < 1e-9)
        // No samples yet: a histogram of zeros, still valid.
        #expect(p.value("touchlock_event_to_submit_seconds_count") == 0)
    }

    @Test func prometheusTextParsesForNodeExporter() throws {
        let text = MetricsExposition.render(status: Self.status, metrics: Self.fullMetrics(), format: .prometheusText)
        #expect(!text.contains("# EOF") && !text.contains("# UNIT"))
        let p = try Self.parse(text, .prometheusText)
        #expect(p.family("touchlock_unlocks")?.type == "counter")
        #expect(p.value("touchlock_unlocks_total", ["method": "pattern"]) == 3)
        // The usual label name where there are no statesets.
        #expect(p.value("touchlock_state", ["state": "lockout"]) == 1)
        #expect(p.value("touchlock_state", ["state": "locked"]) == 0)
        #expect(p.family("touchlock_state")?.type == "gauge")
        #expect(p.value("touchlock_locked_since_timestamp_seconds") == 1_796_000_000.25)
        #expect(p.value("touchlock_build_info", ["version": "9.8.7"]) == 1)
        #expect(p.value("touchlock_event_to_shown_seconds_bucket", ["le": "0.004"]) == 3)
        #expect(p.value("touchlock_frames_total") == 1234)
    }

    /// An older daemon sends latency quantiles only and no counters: the families it
    /// has no figures for are left out, and what is left still parses.
    @Test func onlyWhatTheDaemonSent() throws {
        let old = Metrics(eventToSubmit: .init(count: 3, p50: 900, p99: 2000, max: 2100), frames: 7)
        for format in [MetricsExposition.Format.openMetrics, .prometheusText] {
            let text = MetricsExposition.render(status: nil, metrics: old, format: format)
            let p = try Self.parse(text, format)
            #expect(p.families.map(\.name) == ["touchlock_frames"])
            #expect(p.value("touchlock_frames_total") == 7)
        }
    }

    @Test func labelValuesAreEscaped() throws {
        var m = Metrics(eventToSubmit: .init(LatencyEstimator()), frames: 0)
        m.unlocks = ["odd \"method\"\\\n": 1]
        let p = try Self.parse(MetricsExposition.render(status: nil, metrics: m), .openMetrics)
        #expect(p.value("touchlock_unlocks_total", ["method": "odd \"method\"\\\n"]) == 1)
        #expect(p.value("touchlock_unlocks_total", ["method": "pattern"]) == 0)
    }
}

/// The textfile for node_exporter: written at once, then at most once per interval,
/// whole (by rename), world-readable, with the newest figures.
@Suite struct MetricsTextfileTests {
    @Test func writesAtMostOncePerIntervalAndAtomically() throws {
        var template = Array("/tmp/touchlock-textfile-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        let dir = String(cString: made)
        defer { _ = try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/touchlock.prom"
        let loop = try EventLoop(signals: [])
        var frames = 0
        let interval = Interval.milliseconds(300)
        let file = MetricsTextfile(path: path, loop: loop, minimumInterval: interval) {
            MetricsExposition.render(status: nil, metrics: Metrics(eventToSubmit: .init(LatencyEstimator()), frames: frames),
                                     format: .prometheusText)
        }
        func content() -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

        let start = EventLoop.now()
        frames = 1
        file.changed()
        #expect(file.writes == 1)
        #expect(content().contains("touchlock_frames_total 1\n"))
        // Three more changes at once: nothing written before the interval is up...
        for n in 2...4 { frames = n; file.changed() }
        #expect(file.writes == 1)
        #expect(content().contains("touchlock_frames_total 1\n"))
        // ...then once, with the newest figures.
        loop.schedule(at: start + interval + .milliseconds(200)) { _ in loop.stop() }
        try loop.run()
        #expect(file.writes == 2)
        #expect(content().contains("touchlock_frames_total 4\n"))
        #expect(try #require(file.lastWrite) >= start + interval)

        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o644)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["touchlock.prom"])
    }

    /// Frames counted alone (a countdown redrawing every second) wait for the lazy
    /// interval; a change of state brings them with it.
    @Test func countersAloneWaitForTheLazyIntervalAndAChangeBringsThemForward() throws {
        var template = Array("/tmp/touchlock-textfile-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        let dir = String(cString: made)
        defer { _ = try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/touchlock.prom"
        let loop = try EventLoop(signals: [])
        var frames = 0
        let file = MetricsTextfile(path: path, loop: loop, minimumInterval: .milliseconds(100),
                                   lazyInterval: .milliseconds(1500)) {
            MetricsExposition.render(status: nil, metrics: Metrics(eventToSubmit: .init(LatencyEstimator()), frames: frames),
                                     format: .prometheusText)
        }
        func content() -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        let start = EventLoop.now()
        file.changed()
        #expect(file.writes == 1)
        // A frame every 100 ms for 1 s: nothing written.
        for n in 1...10 {
            loop.schedule(at: start + .milliseconds(Int64(n) * 100)) { _ in frames = n; file.changedLazily() }
        }
        loop.schedule(at: start + .milliseconds(1100)) { _ in loop.stop() }
        try loop.run()
        #expect(file.writes == 1)
        #expect(content().contains("touchlock_frames_total 0\n"))
        // At the lazy interval, the newest count.
        loop.schedule(at: start + .milliseconds(1800)) { _ in loop.stop() }
        try loop.run()
        #expect(file.writes == 2)
        #expect(content().contains("touchlock_frames_total 10\n"))
        // A frame waits again; a change of state 200 ms later writes both at once.
        let second = EventLoop.now()
        frames = 11
        file.changedLazily()
        loop.schedule(at: second + .milliseconds(200)) { _ in file.changed() }
        loop.schedule(at: second + .milliseconds(400)) { _ in loop.stop() }
        try loop.run()
        #expect(file.writes == 3)
        #expect(content().contains("touchlock_frames_total 11\n"))
    }
}
