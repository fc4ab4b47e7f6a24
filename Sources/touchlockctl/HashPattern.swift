import Glibc
import TouchlockCommandLine
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// `touchlockctl hash-pattern [--grid RxC]`: reads a pattern (node numbers from 0,
/// row-major, separated by '-' or ',') from standard input and prints its salted hash
/// for the `pattern_hash` setting. The pattern never appears on a command line.
func hashPatternCommand(_ invocation: Invocation) throws(EarlyExit) -> Int32 {
    let (rows, columns) = try invocation.value("grid") { v throws(UsageError) in
        try OptionValue.pair(v, "ROWSxCOLUMNS", in: 2...9)
    } ?? (3, 3)
    var line = [UInt8]()
    var byte: UInt8 = 0
    while read(0, &byte, 1) == 1 && byte != UInt8(ascii: "\n") { line.append(byte) }
    defer { SecretHash.wipe(&line) }
    let text = String(decoding: line, as: UTF8.self)
    let pattern: Pattern
    do { pattern = try Pattern(parsing: text, rows: rows, columns: columns) } catch {
        StandardStreams.error("touchlockctl: hash-pattern: \(error)")
        return Exit.failure
    }
    var bytes = pattern.secretBytes
    do {
        StandardStreams.output(try SecretHash.make(&bytes))
    } catch {
        StandardStreams.error("touchlockctl: hash-pattern: \(error)")
        return Exit.failure
    }
    return Exit.ok
}
