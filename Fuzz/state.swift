// libFuzzer target: the reader of the state file (StoredState), which holds the
// failure count that throttles guessing.
//
// Property: a record cut off or damaged is never read as fewer failures than the whole
// record it came from. The reader may refuse it (the daemon then fails closed), or read
// it as at least as many failures; it never yields fewer. And no input crashes it.
//
// Input: bytes 0-3 the failure count, byte 4 which optional lines the record has
// (boot id, deadline, the three hashes), bytes 5-6 where the written record is cut,
// byte 7 a byte to change (0: none) at byte 8's offset. The input, and its bytes after
// these 9, are also read as state files of their own. Built by scripts/fuzz with TouchlockCore.
import TouchlockCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzState(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = try? StoredState(parsing: String(decoding: bytes, as: UTF8.self))
    guard bytes.count >= 9 else { return 0 }
    _ = try? StoredState(parsing: String(decoding: bytes[9...], as: UTF8.self))

    var whole = StoredState()
    let count = Int(UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24)
    whole.lockout.failures = count % 2 == 0 ? count & 0xff : count   // small counts often, any count sometimes
    let lines = bytes[4]
    if lines & 1 != 0 { whole.bootID = "5b0c6a4e-3f6d-4a1e-9c35-2f6b1a7d8e90" }
    if lines & 2 != 0 { whole.lockout.deadline = Instant(microseconds: Int64(count) * 1_000_003) }
    let hash = "$y$j9T$abcdefghijklmnop$qrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01234"
    if lines & 4 != 0 { whole.patternHash = hash }
    if lines & 8 != 0 { whole.codeHash = hash }
    if lines & 16 != 0 { whole.duressHash = hash }

    var written = Array(whole.text.utf8)
    guard let back = try? StoredState(parsing: String(decoding: written, as: UTF8.self)), back == whole else {
        fatalError("contract: a whole record does not read back: \(whole.text.debugDescription)")
    }
    let cut = Int(UInt16(bytes[5]) | UInt16(bytes[6]) << 8) % (written.count + 1)
    written.removeLast(written.count - cut)
    if bytes[7] != 0, !written.isEmpty { written[Int(bytes[8]) % written.count] = bytes[7] }
    let damaged = String(decoding: written, as: UTF8.self)
    if let read = try? StoredState(parsing: damaged), read.lockout.failures < whole.lockout.failures {
        fatalError("contract: \(whole.lockout.failures) failures, read as \(read.lockout.failures) from \(damaged.debugDescription)")
    }
    return 0
}
