// libFuzzer target: the control protocol's request lines as the daemon answers them
// (ControlRequests: JSON parsing, the access check, the handlers), without a socket.
//
// Input: byte 0 picks the asking peer (root, a member of the socket's group, anyone
// else) and what the handlers answer; the rest is split into lines, each answered in
// turn. Properties: each non-blank line gets exactly one reply, a single JSON object
// on one line with "ok"; a reply that is ok, or that has an id, carries the request's
// id, and a request without an integer id is never ok; a request reaches
// its handler only if the peer may make it (enroll: root only; lock: root or group).
// Built by scripts/fuzz with TouchlockControl, TouchlockSystem and TouchlockCore.
import Foundation
@testable import TouchlockControl
import TouchlockCore

func contract(_ ok: Bool, _ message: @autoclosure () -> String) {
    if !ok { fatalError("contract: \(message())") }
}

let grid = PatternGrid.layout(rows: 3, columns: 3, on: Size(width: 800, height: 480))
let status = Status(session: Session(schedule: LockoutSchedule(seconds: [30])), screen: Size(width: 800, height: 480), grid: grid)
let requests = ControlRequests(status: { status })
nonisolated(unsafe) var handled: [String] = []

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControl(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 1 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let who = bytes[0] % 3
    let peer: ControlServer.Peer
    switch who {
    case 0: peer = ControlServer.Peer(pid: 10, uid: 0, gid: 0)
    case 1: peer = ControlServer.Peer(pid: 11, uid: 4_000_001, gid: 100, groups: [4242])
    default: peer = ControlServer.Peer(pid: 12, uid: 4_000_002, gid: 100)
    }
    requests.group = 4242
    let fail = bytes[0] & 8 != 0
    requests.lockHandler = { done in handled.append("lock"); done(fail ? .failure(ControlError(.displayBusy, "busy")) : .success(.locked)) }
    requests.metricsHandler = { handled.append("metrics"); return Metrics(eventToSubmit: .init(count: 0, p50: nil, p99: nil, max: nil), frames: 0) }
    requests.enrollHandler = { _, _ in handled.append("enroll"); return fail ? ControlError(.badValue, "no") : nil }
    requests.enrollScreenHandler = { _, _ in handled.append("enroll"); return fail ? ControlError(.busy, "busy") : nil }
    var sender = ControlRequests.Sender(peer: peer, serial: 1)

    for line in bytes[1...].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
        handled.removeAll()
        var replies: [[UInt8]] = []
        requests.answer(ArraySlice(line), from: &sender) { replies.append($0) }
        let blank = line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
        contract(replies.count <= 1, "\(replies.count) replies to one line")
        guard let reply = replies.first else {
            contract(blank, "no reply to \(String(decoding: line, as: UTF8.self).debugDescription)")
            continue
        }
        contract(!blank, "a reply to a blank line")
        contract(reply.last == UInt8(ascii: "\n") && reply.dropLast().firstIndex(of: UInt8(ascii: "\n")) == nil,
                 "a reply that is not one line")
        guard let object = try? JSONSerialization.jsonObject(with: Data(reply)) as? [String: Any],
              let ok = object["ok"] as? Bool else {
            fatalError("contract: a reply that is not a JSON object with \"ok\": \(String(decoding: reply, as: UTF8.self))")
        }
        // The request's id as a reader of JSON sees it (one "id" key, an integer), read
        // only when the reply says it answers one.
        let text = String(decoding: line, as: UTF8.self)
        let idKeys = text.components(separatedBy: "\"id\"").count - 1
        let replied = object["id"] as? Int
        if idKeys == 1, ok || replied != nil,
           let request = try? JSONSerialization.jsonObject(with: Data(line), options: [.fragmentsAllowed]) as? [String: Any],
           let id = request["id"] as? Int, String(describing: request["id"]!) == String(id) {
            contract(replied == id, "reply id \(String(describing: replied)) to request id \(id)")
        } else if idKeys == 0 && !text.contains("\\") {
            contract(!ok, "ok to a request without an id: \(String(decoding: line, as: UTF8.self))")
        }
        if handled.contains("enroll") { contract(peer.uid == 0, "enroll handled for \(peer)") }
        if handled.contains("lock") || handled.contains("metrics") { contract(who != 2, "\(handled) handled for \(peer)") }
        if !handled.isEmpty && !fail && handled != ["metrics"] { contract(ok, "a handled request without ok") }
    }
    return 0
}
