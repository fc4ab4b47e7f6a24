import TouchlockCore

/// The daemon's status and metrics for the monitoring a fleet already runs: OpenMetrics
/// 1.0 text (`touchlockctl metrics --openmetrics`) or the Prometheus text format 0.0.4
/// (what node_exporter's textfile collector reads). A pure function of the two values a
/// client gets over the socket; families whose figures the daemon did not send are left
/// out.
///
/// Nothing in it goes stale between two writes of a textfile: moments are Unix times (a
/// lockout's end is `touchlock_lockout_until_timestamp_seconds`, not the seconds left),
/// the locked time is counted at each unlock, and what changes without an event (a
/// lockout's end) is written when it does. So a scrape of the live socket and one of the
/// textfile read the same (the per-frame counters within MetricsTextfile's lazy interval).
///
///     # TYPE touchlock_unlocks counter
///     # HELP touchlock_unlocks Unlocks since the daemon started, by method.
///     touchlock_unlocks_total{method="pattern"} 3
public enum MetricsExposition {
    public enum Format: Sendable {
        /// application/openmetrics-text; version=1.0.0: counters' samples end in
        /// `_total`, units are declared, a stateset for the state, `# EOF` at the end.
        case openMetrics
        /// text/plain; version=0.0.4: the same samples, the state as a labelled gauge.
        case prometheusText
    }

    public static func render(status: Status?, metrics: Metrics, format: Format = .openMetrics) -> String {
        var families: [Family] = []

        if let version = metrics.version {
            families.append(Family(
                name: "touchlock_build_info", type: .gauge,
                help: "Always 1; the daemon's version in its label.",
                samples: [Sample(labels: [("version", version)], value: "1")]))
        }
        if let status {
            // OpenMetrics names a stateset's label after the family; the Prometheus text
            // format has no statesets, and there `state` is what dashboards expect.
            let label = format == .openMetrics ? "touchlock_state" : "state"
            families.append(Family(
                name: "touchlock_state", type: .stateset,
                help: "The lock screen's state: locked, verifying, wrong, lockout, store_failed or unlocked.",
                samples: Status.State.allCases.map {
                    Sample(labels: [(label, $0.rawValue)], value: $0 == status.state ? "1" : "0")
                }))
            families.append(Family(
                name: "touchlock_locked", type: .gauge,
                help: "1 while the lock screen is up, 0 once unlocked.",
                samples: [Sample(value: status.state == .unlocked ? "0" : "1")]))
            families.append(Family(
                name: "touchlock_consecutive_failures", type: .gauge,
                help: "Failed attempts since the last unlock (kept across restarts).",
                samples: [Sample(value: "\(status.failures)")]))
            families.append(Family(
                name: "touchlock_secret_files_readable", type: .gauge,
                help: "Config files holding a secret's hash that others than root can read (should be 0).",
                samples: [Sample(value: "\(status.secretsReadable?.count ?? 0)")]))
        }

        if let unlocks = metrics.unlocks {
            let methods = Set(UnlockMethod.allMethods.map(\.rawValue)).union(unlocks.keys).sorted()
            families.append(Family(
                name: "touchlock_unlocks", type: .counter,
                help: "Unlocks since the daemon started, by method.",
                samples: methods.map { Sample(labels: [("method", $0)], value: "\(unlocks[$0] ?? 0)") }))
        }
        if let n = metrics.failuresTotal {
            families.append(Family(name: "touchlock_failures", type: .counter,
                                   help: "Failed attempts since the daemon started.", samples: [Sample(value: "\(n)")]))
        }
        if let n = metrics.lockoutsTotal {
            families.append(Family(name: "touchlock_lockouts", type: .counter,
                                   help: "Lockouts begun since the daemon started.", samples: [Sample(value: "\(n)")]))
        }
        for (name, value, help) in [
            ("touchlock_locked_since_timestamp_seconds", metrics.lockedSince,
             "When the device was locked (Unix time); absent while unlocked."),
            ("touchlock_last_unlock_timestamp_seconds", metrics.lastUnlock,
             "When the device was last unlocked (Unix time), since the daemon started."),
            ("touchlock_last_failure_timestamp_seconds", metrics.lastFailure,
             "When the last attempt failed (Unix time), since the daemon started."),
            ("touchlock_lockout_until_timestamp_seconds", metrics.lockoutUntil,
             "While locked out, when the next attempt is accepted (Unix time); absent otherwise."),
        ] {
            guard let value else { continue }
            families.append(Family(name: name, type: .gauge, unit: "seconds", help: help, samples: [Sample(value: number(value))]))
        }
        if let s = metrics.lockedSeconds {
            families.append(Family(name: "touchlock_locked_seconds", type: .counter, unit: "seconds",
                                   help: "Time spent locked since the daemon started, counted at each unlock (the lock under way is not in it until then).", samples: [Sample(value: number(s))]))
        }
        if let h = histogram("touchlock_event_to_shown_seconds", metrics.eventToShown,
                             help: "From an input event to the frame showing its effect being on the screen.") {
            families.append(h)
        }
        if let h = histogram("touchlock_event_to_submit_seconds", metrics.eventToSubmit,
                             help: "From an input event to the submission of the frame showing its effect.") {
            families.append(h)
        }
        families.append(Family(name: "touchlock_frames", type: .counter,
                               help: "Frames presented since the daemon started.", samples: [Sample(value: "\(metrics.frames)")]))
        if let n = metrics.inputDevices {
            families.append(Family(name: "touchlock_input_devices", type: .gauge,
                                   help: "Input devices in use (touch panels and keypads).", samples: [Sample(value: "\(n)")]))
        }
        if let n = metrics.outputs {
            families.append(Family(name: "touchlock_outputs", type: .gauge,
                                   help: "Outputs the lock screen is shown on.", samples: [Sample(value: "\(n)")]))
        }

        var out = ""
        for f in families { f.write(to: &out, format) }
        if format == .openMetrics { out += "# EOF\n" }
        return out
    }

    /// A latency as a histogram in seconds, if the daemon sent its buckets and sum.
    static func histogram(_ name: String, _ latency: Metrics.Latency?, help: String) -> Family? {
        guard let latency, let buckets = latency.buckets, let sum = latency.sum,
              buckets.count == Metrics.Latency.bucketBounds.count else { return nil }
        var samples: [Sample] = []
        for (bound, count) in zip(Metrics.Latency.bucketBounds, buckets) {
            samples.append(Sample(suffix: "_bucket", labels: [("le", number(Double(bound) / 1_000_000))],
                                  value: "\(min(count, latency.count))"))
        }
        samples.append(Sample(suffix: "_bucket", labels: [("le", "+Inf")], value: "\(latency.count)"))
        samples.append(Sample(suffix: "_count", value: "\(latency.count)"))
        samples.append(Sample(suffix: "_sum", value: number(Double(sum) / 1_000_000)))
        return Family(name: name, type: .histogram, unit: "seconds", help: help, samples: samples)
    }

    /// A float as both formats write it: "0.016", "2.0", never an exponent.
    static func number(_ v: Double) -> String {
        guard v.isFinite else { return v.isNaN ? "NaN" : (v > 0 ? "+Inf" : "-Inf") }
        if v == v.rounded() && abs(v) < 1e15 { return "\(Int64(v)).0" }
        var s = "\(v)"
        if s.contains("e") {
            // Swift writes 1e-05; spell it out to microseconds, enough for these figures.
            let micro = (v * 1_000_000).rounded()
            let whole = Int64(micro) / 1_000_000, frac = abs(Int64(micro) % 1_000_000)
            var f = String(frac)
            f = String(repeating: "0", count: 6 - f.count) + f
            while f.hasSuffix("0") && f.count > 1 { f.removeLast() }
            s = "\(v < 0 && whole == 0 ? "-" : "")\(whole).\(f)"
        }
        return s
    }

    struct Sample {
        var suffix = ""
        var labels: [(String, String)] = []
        var value: String
    }

    struct Family {
        enum Kind: String { case counter, gauge, histogram, stateset }
        var name: String
        var type: Kind
        var unit: String?
        var help: String
        var samples: [Sample]

        init(name: String, type: Kind, unit: String? = nil, help: String, samples: [Sample]) {
            self.name = name; self.type = type; self.unit = unit; self.help = help; self.samples = samples
        }

        func write(to out: inout String, _ format: Format) {
            let sampleSuffix = type == .counter ? "_total" : ""
            switch format {
            case .openMetrics:
                out += "# TYPE \(name) \(type.rawValue)\n"
                if let unit { out += "# UNIT \(name) \(unit)\n" }
                out += "# HELP \(name) \(escape(help, quotes: false))\n"
            case .prometheusText:
                // 0.0.4 names a counter by its samples' name, and knows no stateset.
                let typeName = type == .stateset ? "gauge" : type.rawValue
                out += "# HELP \(name + sampleSuffix) \(escape(help, quotes: false))\n"
                out += "# TYPE \(name + sampleSuffix) \(typeName)\n"
            }
            for s in samples {
                out += name + sampleSuffix + s.suffix
                if !s.labels.isEmpty {
                    out += "{" + s.labels.map { "\($0.0)=\"\(escape($0.1, quotes: true))\"" }.joined(separator: ",") + "}"
                }
                out += " \(s.value)\n"
            }
        }
    }

    /// Backslash and newline escaped (and double quotes, in label values).
    static func escape(_ text: String, quotes: Bool) -> String {
        var out = ""
        for c in text {
            switch c {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\"" where quotes: out += "\\\""
            default: out.append(c)
            }
        }
        return out
    }
}

extension UnlockMethod {
    /// The methods an unlock can come by.
    static let allMethods: [UnlockMethod] = [.pattern, .code, .service]
}
