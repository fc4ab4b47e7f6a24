import Glibc
import TouchlockCommandLine
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// `touchlockctl hash-code`: reads a code (`CodeRules`: digits only) from standard input
/// (on a terminal, asked for without echo) and prints its salted hash for the `code_hash` setting, which belongs in a file only
/// root can read (`set-secret` writes it there). The code never appears on a command line.
func hashCodeCommand(_ invocation: Invocation) -> Int32 {
    var line = readSecretLine(prompt: "Code: ") ?? []
    defer { SecretHash.wipe(&line) }
    while line.last == UInt8(ascii: "\r") || line.last == UInt8(ascii: " ") { line.removeLast() }
    var digits: [UInt8]
    do { digits = try CodeRules.digits(line) } catch {
        StandardStreams.error("touchlockctl: hash-code: \(error.message)")
        return Exit.failure
    }
    var code = Code(digits: digits)
    SecretHash.wipe(&digits)
    var bytes = code.secretBytes
    for i in code.digits.indices { code.digits[i] = 0 }
    do {
        StandardStreams.output(try SecretHash.make(&bytes))
    } catch {
        StandardStreams.error("touchlockctl: hash-code: \(error)")
        return Exit.failure
    }
    StandardStreams.error("touchlockctl: hash-code: set code_length = \(line.count) with this code_hash, in a file only root "
                          + "can read (touchlockctl set-secret code does both in one step)")
    return Exit.ok
}
