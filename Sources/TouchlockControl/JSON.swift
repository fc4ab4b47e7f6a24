/// A JSON value (RFC 8259), read from and written as UTF-8 bytes with the standard
/// library alone.
///
/// Reading is strict, because the control socket is where hostile bytes arrive: one value
/// with only whitespace around it, no trailing commas, no comments, strings of valid
/// UTF-8 with escapes that make whole scalars (a surrogate pair together or not at all),
/// no raw control characters, each key at most once in an object, nesting at most
/// `maximumDepth` arrays and objects deep. Numbers keep their text, so an integer is
/// read exactly whatever its size.
///
/// Writing is what the protocol documents: keys sorted by their UTF-8 bytes, no spaces,
/// "/" and non-ASCII as they are, control characters escaped (\b \t \n \f \r by name,
/// the others as \u00xx).
enum JSON: Hashable, Sendable {
    case null
    case bool(Bool)
    /// The number's text as it was read or will be written: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    case number(String)
    case string(String)
    case array([JSON])
    case object([String: JSON])

    /// Deeper arrays and objects are refused: protocol lines nest 3 deep, and a line of
    /// 4096 "[" must cost neither the stack nor the time of the loop.
    static let maximumDepth = 64

    /// Why bytes are not a JSON value, and where (the offset of the first byte that is wrong).
    struct SyntaxError: Error, Hashable, CustomStringConvertible {
        var offset: Int
        var message: String
        var description: String { "\(message) at byte \(offset)" }
    }

    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    // MARK: Reading

    /// The one value in `bytes`.
    static func parse(_ bytes: some Collection<UInt8>) throws(SyntaxError) -> JSON {
        var reader = Reader(bytes: Array(bytes))
        reader.skipSpace()
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.at == reader.bytes.count else { throw reader.error("text after the value") }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var at = 0

        func error(_ message: String) -> SyntaxError { SyntaxError(offset: at, message: message) }

        var peek: UInt8? { at < bytes.count ? bytes[at] : nil }

        mutating func skipSpace() {
            while let b = peek, b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { at += 1 }
        }

        mutating func expect(_ word: StaticString, _ value: JSON) throws(SyntaxError) -> JSON {
            let start = at
            for b in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
                guard peek == b else { at = start; throw error("not a JSON value") }
                at += 1
            }
            return value
        }

        mutating func value(depth: Int) throws(SyntaxError) -> JSON {
            guard let b = peek else { throw error("unexpected end") }
            switch b {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try expect("true", .bool(true))
            case UInt8(ascii: "f"): return try expect("false", .bool(false))
            case UInt8(ascii: "n"): return try expect("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw error("not a JSON value")
            }
        }

        mutating func object(depth: Int) throws(SyntaxError) -> JSON {
            guard depth <= JSON.maximumDepth else { throw error("nested deeper than \(JSON.maximumDepth)") }
            at += 1  // {
            var members: [String: JSON] = [:]
            skipSpace()
            if peek == UInt8(ascii: "}") { at += 1; return .object(members) }
            while true {
                guard peek == UInt8(ascii: "\"") else { throw error("expected a key") }
                let keyAt = at
                let key = try string()
                skipSpace()
                guard peek == UInt8(ascii: ":") else { throw error("expected ':'") }
                at += 1
                skipSpace()
                let v = try value(depth: depth)
                guard members.updateValue(v, forKey: key) == nil else {
                    throw SyntaxError(offset: keyAt, message: "key \"\(key)\" given twice")
                }
                skipSpace()
                switch peek {
                case UInt8(ascii: ","): at += 1; skipSpace()
                case UInt8(ascii: "}"): at += 1; return .object(members)
                default: throw error("expected ',' or '}'")
                }
            }
        }

        mutating func array(depth: Int) throws(SyntaxError) -> JSON {
            guard depth <= JSON.maximumDepth else { throw error("nested deeper than \(JSON.maximumDepth)") }
            at += 1  // [
            var elements: [JSON] = []
            skipSpace()
            if peek == UInt8(ascii: "]") { at += 1; return .array(elements) }
            while true {
                elements.append(try value(depth: depth))
                skipSpace()
                switch peek {
                case UInt8(ascii: ","): at += 1; skipSpace()
                case UInt8(ascii: "]"): at += 1; return .array(elements)
                default: throw error("expected ',' or ']'")
                }
            }
        }

        mutating func digits() -> Int {
            let start = at
            while let b = peek, b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") { at += 1 }
            return at - start
        }

        mutating func number() throws(SyntaxError) -> String {
            let start = at
            if peek == UInt8(ascii: "-") { at += 1 }
            if peek == UInt8(ascii: "0") {
                at += 1
            } else {
                guard digits() > 0 else { throw error("expected a digit") }
            }
            if peek == UInt8(ascii: ".") {
                at += 1
                guard digits() > 0 else { throw error("expected a digit") }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                at += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { at += 1 }
                guard digits() > 0 else { throw error("expected a digit") }
            }
            return String(decoding: bytes[start..<at], as: UTF8.self)
        }

        mutating func hex4() throws(SyntaxError) -> UInt32 {
            guard at + 4 <= bytes.count else { at = bytes.count; throw error("unexpected end") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let b = bytes[at]
                let d: UInt8
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
                default: throw error("expected a hex digit")
                }
                v = v << 4 | UInt32(d)
                at += 1
            }
            return v
        }

        mutating func string() throws(SyntaxError) -> String {
            let start = at
            at += 1  // "
            var text: [UInt8] = []
            while true {
                guard let b = peek else { throw error("unterminated string") }
                switch b {
                case UInt8(ascii: "\""):
                    at += 1
                    guard let s = String(validating: text, as: UTF8.self) else {
                        throw SyntaxError(offset: start, message: "a string that is not UTF-8")
                    }
                    return s
                case UInt8(ascii: "\\"):
                    at += 1
                    guard let e = peek else { throw error("unterminated string") }
                    at += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(e)
                    case UInt8(ascii: "b"): text.append(0x08)
                    case UInt8(ascii: "f"): text.append(0x0C)
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "t"): text.append(0x09)
                    case UInt8(ascii: "u"):
                        let escapeAt = at - 2
                        var v = try hex4()
                        if v >= 0xD800 && v < 0xDC00 {
                            guard peek == UInt8(ascii: "\\"), at + 1 < bytes.count, bytes[at + 1] == UInt8(ascii: "u") else {
                                throw SyntaxError(offset: escapeAt, message: "a lone surrogate")
                            }
                            at += 2
                            let low = try hex4()
                            guard low >= 0xDC00 && low < 0xE000 else {
                                throw SyntaxError(offset: escapeAt, message: "a lone surrogate")
                            }
                            v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                        } else if v >= 0xDC00 && v < 0xE000 {
                            throw SyntaxError(offset: escapeAt, message: "a lone surrogate")
                        }
                        // Not a surrogate, or a pair put together: always a scalar.
                        text.append(contentsOf: Unicode.Scalar(v).map { Array(String($0).utf8) } ?? [])
                    default:
                        at -= 1
                        throw error("unknown escape")
                    }
                case 0..<0x20:
                    throw error("a control character in a string")
                default:
                    text.append(b)
                    at += 1
                }
            }
        }
    }

    // MARK: Writing

    /// The value's bytes.
    var bytes: [UInt8] {
        var out: [UInt8] = []
        write(into: &out)
        return out
    }

    func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let text): out.append(contentsOf: text.utf8)
        case .string(let s): JSON.write(string: s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, e) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                e.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, key) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSON.write(string: key, into: &out)
                out.append(UInt8(ascii: ":"))
                members[key]!.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func write(string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in string.utf8 {
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(b)
            case 0x08: out.append(contentsOf: #"\b"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0C: out.append(contentsOf: #"\f"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0xF)])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A finite floating-point number as the protocol writes it: the shortest text that
    /// reads back as the same value, without a trailing ".0" (352, 15.36, 1e+20); nil for
    /// NaN and the infinities, which JSON has no text for.
    static func number<F: BinaryFloatingPoint & LosslessStringConvertible>(_ v: F) -> JSON? {
        guard v.isFinite else { return nil }
        var text = v.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return .number(text)
    }
}
