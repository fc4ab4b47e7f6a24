import Glibc
import TouchlockCommandLine
import TouchlockConfig
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// The grid, the minimum length and the repeat policy a pattern is checked against: the
/// options, else the configuration in force (the daemon's files, and each -C FILE after
/// them).
struct PatternRules {
    var rows: Int
    var columns: Int
    var minimumLength: Int
    var hitFactor: Double
    var repeats: PatternRepeat

    init(_ invocation: Invocation, command: String) throws(EarlyExit) {
        let grid = try invocation.value("grid") { v throws(UsageError) in
            try OptionValue.pair(v, "ROWSxCOLUMNS", in: 2...9)
        }
        let length = try invocation.value("min-length") { v throws(UsageError) in
            guard let n = Int(v), (1...81).contains(n) else { throw UsageError("expected 1 to 81, found '\(v)'") }
            return n
        }
        let repeats = try invocation.value("repeat") { v throws(UsageError) in
            guard let r = PatternRepeat(rawValue: v) else { throw UsageError("expected never or allowed, found '\(v)'") }
            return r
        }
        var config = Config()
        do { try ConfigFiles.load(ConfigFiles.paths(extra: invocation.parsed.values("config")), into: &config) } catch {
            fail("\(command): \(error)")
        }
        rows = grid?.0 ?? config.rows
        columns = grid?.1 ?? config.columns
        minimumLength = length ?? config.minimumLength
        hitFactor = config.hitFactor
        self.repeats = repeats ?? config.patternRepeat
    }

    /// The pattern in `text` if a finger draws it so on this grid; else exits naming what
    /// the finger would draw.
    func pattern(_ text: String, command: String) -> Pattern {
        do {
            return try Pattern.drawable(text, on: .unit(rows: rows, columns: columns, hitFactor: hitFactor),
                                        minimumLength: minimumLength, repeats: repeats)
        } catch {
            fail("\(command): \(error) (grid \(rows)x\(columns), min_length \(minimumLength), repeat \(repeats))")
        }
    }
}

/// `touchlockctl hash-pattern [--grid RxC] [--min-length N] [--repeat never|allowed]
/// [-C FILE]`: reads a pattern (node numbers from 0, row-major, separated by '-' or ',')
/// from standard input (on a terminal, asked for twice without echo) and prints its salted hash. Only a pattern a finger can draw as
/// written, on the grid and with the minimum length and repeat policy in force, is
/// hashed. The pattern never appears on a command
/// line.
func hashPatternCommand(_ invocation: Invocation) throws(EarlyExit) -> Int32 {
    let rules = try PatternRules(invocation, command: "hash-pattern")
    var line = readSecretLine(prompt: "Pattern: ") ?? []
    defer { SecretHash.wipe(&line) }
    guard repeatedAtTerminal(line, prompt: "Repeat the pattern: ") else {
        StandardStreams.error("touchlockctl: hash-pattern: the two entries differ; nothing printed")
        return Exit.failure
    }
    let pattern = rules.pattern(String(decoding: line, as: UTF8.self), command: "hash-pattern")
    var bytes = pattern.secretBytes
    do {
        StandardStreams.output(try SecretHash.make(&bytes))
    } catch {
        StandardStreams.error("touchlockctl: hash-pattern: \(error)")
        return Exit.failure
    }
    return Exit.ok
}
