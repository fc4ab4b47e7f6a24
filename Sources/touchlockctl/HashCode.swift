import Glibc
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// `touchlockctl hash-code`: reads a code (digits only) from standard input and prints
/// its salted hash for the `code_hash` setting. The code never appears on a command line.
func hashCodeCommand(_ args: [String]) -> Int32 {
    if let a = args.first {
        StandardStreams.error("touchlockctl: hash-code: unknown option '\(a)'")
        return 2
    }
    var line = [UInt8]()
    var byte: UInt8 = 0
    while read(0, &byte, 1) == 1 && byte != UInt8(ascii: "\n") { line.append(byte) }
    defer { SecretHash.wipe(&line) }
    while line.last == UInt8(ascii: "\r") || line.last == UInt8(ascii: " ") { line.removeLast() }
    guard !line.isEmpty, line.count <= 12, line.allSatisfy({ (48...57).contains($0) }) else {
        StandardStreams.error("touchlockctl: hash-code: expected 1 to 12 digits (0-9) on standard input")
        return 1
    }
    var code = Code(digits: line.map { $0 - 48 })
    var bytes = code.secretBytes
    for i in code.digits.indices { code.digits[i] = 0 }
    do {
        StandardStreams.output(try SecretHash.make(&bytes))
    } catch {
        StandardStreams.error("touchlockctl: hash-code: \(error)")
        return 1
    }
    StandardStreams.error("touchlockctl: hash-code: set code_length = \(line.count) with this code_hash")
    return 0
}
