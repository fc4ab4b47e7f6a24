// libFuzzer target: the evemu parser (what `touchlockd --replay` and `touchlockctl
// replay` read), then the recording replayed as they do it: the device's touch mode,
// its position axes, and every event through the frame assembler into a summary.
// Input: the text of an evemu file. Built by scripts/fuzz with TouchlockCore.
import TouchlockCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEvemu(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let recording = try? EvemuRecording(parsing: text) else { return 0 }
    _ = recording.slotCount
    _ = (recording.xRange, recording.yRange, recording.isDirect)
    guard let device = recording.description, case .success(let mode) = device.touchMode() else { return 0 }
    _ = device.positionAxes(mode)
    let summary = ReplaySummary(mode: mode, events: recording.events)
    if summary.touches.count > recording.events.count { fatalError("contract: more touches than events") }
    return 0
}
