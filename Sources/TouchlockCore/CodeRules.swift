/// What a code is, in the one place every maker and checker of codes reads it: the
/// config's `[code] length`, `touchlockctl enroll code`, `touchlockctl hash-code` and
/// the daemon's enroll request.
///
/// A code is 4 to 12 digits, 0 to 9:
/// - at least 4, as Android asks: with fewer there are at most 1000 codes, too few
///   against a patient guesser even with the lockout's growing waits;
/// - at most 12, where Android allows 16: the pad draws one box per digit and shows at
///   most 12 of them, and a code longer than the pad can never be typed.
/// A code is also exactly as long as the pad the daemon shows, since the pad's boxes
/// are the code's length (`[code] length`); `fits(_:pad:)` checks that.
public enum CodeRules {
    public static let lengths = 4...12
    /// The length of the pad when `[code] length` is not set (or is 0 or below).
    public static let defaultLength = 4

    /// Why a text is not a code.
    public struct Problem: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// Checks that `length` is an allowed number of digits.
    public static func check(length: Int) throws(Problem) {
        guard lengths.contains(length) else {
            throw Problem("a code has at least \(lengths.lowerBound) digits and at most \(lengths.upperBound); "
                          + "this one has \(length)")
        }
    }

    /// The digit values of `text` (ASCII '0'...'9'), or why it is not a code. The caller
    /// wipes both `text` and the result.
    public static func digits(_ text: [UInt8]) throws(Problem) -> [UInt8] {
        guard text.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw Problem("a code is made of digits only (0-9)")
        }
        try check(length: text.count)
        return text.map { $0 - UInt8(ascii: "0") }
    }

    /// Checks that a code of `length` digits can be typed on a pad of `pad` boxes.
    public static func fits(_ length: Int, pad: Int) throws(Problem) {
        guard length == pad else {
            throw Problem("a \(length)-digit code cannot be typed on the pad, which has \(pad) boxes "
                          + "([code] length = \(pad)); give a \(pad)-digit code, or set length = \(length) first")
        }
    }
}
