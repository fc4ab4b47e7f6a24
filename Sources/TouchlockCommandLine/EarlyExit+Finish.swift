import Glibc
import TouchlockSystem

extension EarlyExit {
    /// Prints the help, the version or the usage error, and exits.
    public func finish() -> Never {
        var text = text
        if text.hasSuffix("\n") { text.removeLast() }
        if toStandardOutput { StandardStreams.output(text) } else { StandardStreams.error(text) }
        exit(status)
    }
}
