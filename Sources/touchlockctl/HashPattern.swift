import Glibc
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// `touchlockctl hash-pattern [--grid RxC]`: reads a pattern (node numbers from 0,
/// row-major, separated by '-' or ',') from standard input and prints its salted hash
/// for the `pattern_hash` setting. The pattern never appears on a command line.
func hashPatternCommand(_ args: [String]) -> Int32 {
    var rows = 3, columns = 3
    var i = 0
    while i < args.count {
        switch args[i] {
        case "--grid" where i + 1 < args.count:
            let p = args[i + 1].split(separator: "x")
            guard p.count == 2, let r = Int(p[0]), let c = Int(p[1]), (2...9).contains(r), (2...9).contains(c) else {
                StandardStreams.error("touchlockctl: --grid: expected ROWSxCOLUMNS, found '\(args[i + 1])'")
                return 2
            }
            rows = r; columns = c
            i += 2
        default:
            StandardStreams.error("touchlockctl: hash-pattern: unknown option '\(args[i])'")
            return 2
        }
    }
    var line = [UInt8]()
    var byte: UInt8 = 0
    while read(0, &byte, 1) == 1 && byte != UInt8(ascii: "\n") { line.append(byte) }
    defer { SecretHash.wipe(&line) }
    let text = String(decoding: line, as: UTF8.self)
    let pattern: Pattern
    do { pattern = try Pattern(parsing: text, rows: rows, columns: columns) } catch {
        StandardStreams.error("touchlockctl: hash-pattern: \(error)")
        return 1
    }
    var bytes = pattern.secretBytes
    do {
        StandardStreams.output(try SecretHash.make(&bytes))
    } catch {
        StandardStreams.error("touchlockctl: hash-pattern: \(error)")
        return 1
    }
    return 0
}
