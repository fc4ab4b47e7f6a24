import Glibc
import TouchlockCommandLine
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// `touchlockctl hash-code`: reads a code (`CodeRules`: digits only) from standard input
/// (on a terminal, asked for twice without echo) and prints its salted hash for the `code_hash` setting, which belongs in a file only
/// root can read (`set-secret` writes it there). The code never appears on a command line.
func hashCodeCommand(_ invocation: Invocation) -> Int32 {
    var line = readSecretLine(prompt: "Code: ") ?? []
    defer { SecretHash.wipe(&line) }
    while line.last == UInt8(ascii: "\r") || line.last == UInt8(ascii: " ") { line.removeLast() }
    // Typed unseen at a terminal, twice: a typo would be hashed, pushed to a fleet and
    // typed by no one.
    guard repeatedAtTerminal(line, prompt: "Repeat the code: ") else {
        StandardStreams.error("touchlockctl: hash-code: the two entries differ; nothing printed")
        return Exit.failure
    }
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
                          + "can read: on the device, touchlockctl set-secret code --hash - --length \(line.count) does both")
    return Exit.ok
}

/// On a terminal, reads the secret once more (without echo) and tells whether it is
/// `first` again; elsewhere (a pipe, a file) true: the input was not typed blind.
func repeatedAtTerminal(_ first: [UInt8], prompt: String) -> Bool {
    guard isatty(0) == 1 else { return true }
    var again = readSecretLine(prompt: prompt) ?? []
    defer { SecretHash.wipe(&again) }
    while again.last == UInt8(ascii: "\r") || again.last == UInt8(ascii: " ") { again.removeLast() }
    return SecretHash.constantTimeEqual(first, again)
}
