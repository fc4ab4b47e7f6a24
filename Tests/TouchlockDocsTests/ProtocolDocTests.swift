import Foundation
import Testing
@testable import TouchlockControl
import TouchlockCore

/// docs/protocol.md against the types the daemon encodes: every key of every reply,
/// status field and event, and every error code, is named in the part of the document
/// that describes it. The samples set every field (checked by reflection), so a field
/// added to a type is in its sample's keys, and then must be documented.
@Suite struct ProtocolDocTests {
    /// The document's parts: "## Events" and "### status" and so on, by their titles.
    static func parts() throws -> [String: String] {
        var parts: [String: String] = [:]
        var title = ""
        for line in try Tree.text("docs/protocol.md").split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") {
                title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            } else {
                parts[title, default: ""] += line + "\n"
            }
        }
        return parts
    }

    /// The paths of optional fields left nil in `value`, its nested values included.
    static func unset(_ value: Any, path: String = "") -> [String] {
        let m = Mirror(reflecting: value)
        switch m.displayStyle {
        case .optional:
            guard let inner = m.children.first?.value else { return [path] }
            return unset(inner, path: path)
        case .struct:
            return m.children.flatMap { unset($0.value, path: path + "." + ($0.label ?? "?")) }
        case .collection:
            return m.children.first.map { unset($0.value, path: path + "[0]") } ?? [path + " (empty)"]
        default:
            return []
        }
    }

    /// Every key of the objects in `json`, with the path of the object; not the keys of
    /// maps whose keys are data (`code.keys`: key names; `unlocks`, `secret_source`: methods).
    static func keys(_ json: JSON, at path: String = "", maps: Set<String> = ["keys", "unlocks", "secret_source"]) -> [(path: String, key: String)] {
        switch json {
        case .object(let members):
            return members.sorted { $0.key < $1.key }.flatMap { key, value in
                [(path, key)] + (maps.contains(key) ? [] : keys(value, at: path + "." + key, maps: maps))
            }
        case .array(let elements):
            return elements.first.map { keys($0, at: path + "[]", maps: maps) } ?? []
        default:
            return []
        }
    }

    /// A status with every field set, as the daemon fills it on a screen with both methods.
    static var status: Status {
        get throws {
            let pattern = #"{"rows":3,"columns":3,"node_radius":15.36,"hit_radius":28.8,"nodes":[[352,288]],"min_length":4,"repeat":"never"}"#
            let text = """
                {"state":"unlocked","failures":2,"method":"code","unlocked_at":1,"lockout_until":2,"retry_after_ms":3,
                 "reason":"r","record":"damaged","enrolled":["pattern"],"secrets_readable":["/etc/touchlock/touchlock.conf (mode 0644)"],
                 "secret_source":{"pattern":"config"},"secrets_shadowed":["pattern"],"service_codes":true,"screen":{"width":1280,"height":800},
                 "pattern":\(pattern),"showing":"code",
                 "code":{"length":4,"entered":1,"keys":{"1":[1,2]},"boxes":[[1,2,3,4]]},"toggle":[5,6],
                 "enrolling":"pattern","display":"shown","display_reason":"r","lock_pending":true,"vt":7,"vt_reason":"r","cover":"vt","cover_reason":"r","power":"awake","message":"m",
                 "outputs":[{"name":"HDMI-A-1","card":"card1","state":"inactive","reason":"master_lost","detail":"d","retry_error":"e",
                             "screen":{"width":1280,"height":800},"pattern":\(pattern)}]}
                """
            return try JSONCoding.decode(Status.self, from: JSON.parse(Array(text.utf8)))
        }
    }

    static var metrics: Metrics {
        let latency = Metrics.Latency(count: 1, p50: 2, p99: 3, max: 4, sum: 5, buckets: [1])
        var m = Metrics(eventToSubmit: latency, eventToShown: latency, frames: 6)
        m.unlocks = ["pattern": 1]
        m.failuresTotal = 1; m.lockoutsTotal = 1; m.lockedSeconds = 1.5; m.inputDevices = 1; m.outputs = 1
        m.lockedSince = 1_796_000_000; m.lastUnlock = 1_795_000_000; m.lastFailure = 1_795_500_000; m.version = "1.0"
        m.lockoutUntil = 1_796_000_060
        return m
    }

    /// One of each event; `kind` does not compile until a new case has its sample.
    static let events: [Event] = [
        .unlocked(method: .pattern, at: Instant(microseconds: 1)), .duress(method: .code, at: Instant(microseconds: 1)),
        .failed(method: .pattern, failures: 1, retryAfter: .milliseconds(1)), .storeFailed(method: .pattern, reason: "r"),
        .lockout(until: Instant(microseconds: 1)), .locked, .progress(entered: 1, total: 4), .enrolled(method: .code),
        .enrollFailed(method: .code, reason: "r"), .handedOver,
    ]
    static func kind(_ e: Event) -> Int {
        switch e {
        case .unlocked: 0
        case .duress: 1
        case .failed: 2
        case .storeFailed: 3
        case .lockout: 4
        case .locked: 5
        case .progress: 6
        case .enrolled: 7
        case .enrollFailed: 8
        case .handedOver: 9
        }
    }

    func documented(_ key: String, in text: String) -> Bool { text.contains("`\(key)`") }

    @Test func everyStatusFieldIsDocumentedUnderStatus() throws {
        let status = try Self.status
        #expect(Self.unset(status) == [], "the sample status leaves fields unset: set them here")
        let part = try #require(try Self.parts()["status"])
        for (path, key) in Self.keys(try JSONCoding.encode(status)) {
            #expect(documented(key, in: part), "docs/protocol.md, status: `\(key)` (in \(path.isEmpty ? "status" : path)) is not documented")
        }
        for state in Status.State.allCases {
            #expect(documented(state.rawValue, in: part), "docs/protocol.md, status: the state `\(state.rawValue)`")
        }
    }

    @Test func everyMetricIsDocumentedUnderMetrics() throws {
        #expect(Self.unset(Self.metrics) == [], "the sample metrics leave fields unset: set them here")
        let part = try #require(try Self.parts()["metrics"])
        for (path, key) in Self.keys(try JSONCoding.encode(Self.metrics)) {
            #expect(documented(key, in: part), "docs/protocol.md, metrics: `\(key)` (in \(path.isEmpty ? "metrics" : path)) is not documented")
        }
    }

    @Test func everyEventAndItsFieldsAreInTheEventsTable() throws {
        #expect(Set(Self.events.map(Self.kind)).count == 10)
        let part = try #require(try Self.parts()["Events"])
        let rows = part.split(separator: "\n").filter { $0.hasPrefix("| `") }
        for event in Self.events {
            guard let row = rows.first(where: { $0.hasPrefix("| `\(event.name)` |") }) else {
                Issue.record("docs/protocol.md, Events: no row for `\(event.name)`"); continue
            }
            for (_, key) in Self.keys(try JSONCoding.encode(event)) where key != "event" {
                #expect(documented(key, in: String(row)), "docs/protocol.md, Events: `\(event.name)` without its field `\(key)`")
            }
        }
    }

    @Test func everyRequestReplyAndErrorCodeIsInRequestsAndErrorCodes() throws {
        let parts = try Self.parts()
        let requests = try #require(parts["Requests"])
        for kind in RequestKind.allCases {
            #expect(requests.contains("| `\(kind.rawValue)` |"), "docs/protocol.md, Requests: no row for `\(kind.rawValue)`")
        }
        let request = Request(id: 1, request: .enroll, method: .code, hash: "$y$", length: 4, screen: true, text: "t", code: "123456")
        #expect(Self.unset(request) == [])
        let reply = ReplyHeader(id: 1, ok: false, error: ControlError(.lockedOut, "m", retryAfterMs: 60_000))
        var sent = Self.keys(try JSONCoding.encode(request)) + Self.keys(try JSONCoding.encode(reply))
        sent += Self.keys(try JSONCoding.encode(Hello())) + Self.keys(try JSONCoding.encode(LockReply(state: .locked)))
        for (_, key) in sent {
            #expect(documented(key, in: requests) || requests.contains("\"\(key)\""),
                    "docs/protocol.md, Requests: `\(key)` is not documented")
        }
        // The error codes, as Protocol.swift spells them.
        let source = try Tree.text("Sources/TouchlockControl/Protocol.swift")
        let codes = source.components(separatedBy: "ErrorCode(rawValue: \"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(codes.count >= 12)
        let table = try #require(parts["Error codes"])
        for code in codes {
            #expect(table.contains("| `\(code)` |"), "docs/protocol.md, Error codes: no row for `\(code)`")
        }
    }
}
