import TouchlockCore

/// The protocol's Codable types to and from `JSON`, through the standard library's
/// Encoder and Decoder protocols: what JSONEncoder (keys sorted, slashes as they are) and
/// JSONDecoder did for them, without Foundation.
///
/// Decoding reads numbers as Foundation did: an integer field takes any number that is
/// exactly an integer of its type (3, 3.0, 3e0), a floating-point one any finite number.
/// A value of the wrong kind is `DecodingError.typeMismatch` with the field's path, a
/// number out of range `dataCorrupted`, a missing field `keyNotFound`, null where a value
/// must be `valueNotFound`.
enum JSONCoding {
    static func encode<T: Encodable>(_ value: T) throws -> JSON {
        let root = Slot()
        try value.encode(to: ValueEncoder(slot: root, codingPath: []))
        return root.json
    }

    static func decode<T: Decodable>(_ type: T.Type, from json: JSON) throws -> T {
        try T(from: ValueDecoder(value: json, codingPath: []))
    }
}

// MARK: - Encoding

/// Where one encoded value goes; objects and arrays hold the slots of their members, so
/// containers asked for later (a reply's body after its id and ok) add to the same object.
private final class Slot {
    enum Content { case unset, value(JSON), object([String: Slot]), array([Slot]) }
    var content: Content = .unset

    var json: JSON {
        switch content {
        case .unset: .object([:])  // as JSONEncoder: a value that encoded nothing is {}
        case .value(let v): v
        case .object(let members): .object(members.mapValues(\.json))
        case .array(let elements): .array(elements.map(\.json))
        }
    }

    func member(_ key: String) -> Slot {
        let s = Slot()
        if case .object(var members) = content {
            content = .unset  // keep the dictionary uniquely referenced while it grows
            members[key] = s
            content = .object(members)
        } else {
            Log.bug("json: a member \"\(key)\" written into a value that is not an object")
            content = .object([key: s])
        }
        return s
    }

    func element() -> Slot {
        let s = Slot()
        if case .array(var elements) = content {
            content = .unset
            elements.append(s)
            content = .array(elements)
        } else {
            Log.bug("json: an element written into a value that is not an array")
            content = .array([s])
        }
        return s
    }
}

private struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ i: Int) { intValue = i }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { return nil }
}

private func scalar<T: Encodable>(_ value: T, path: [any CodingKey]) throws -> JSON? {
    switch value {
    case let v as String: return .string(v)
    case let v as Bool: return .bool(v)
    case let v as Int: return .number(String(v))
    case let v as Int64: return .number(String(v))
    case let v as Double:
        guard let n = JSON.number(v) else { throw nonFinite(v, path) }
        return n
    default: return nil
    }
}

private func nonFinite(_ v: Any, _ path: [any CodingKey]) -> EncodingError {
    .invalidValue(v, .init(codingPath: path, debugDescription: "\(v) has no JSON text"))
}

private struct ValueEncoder: Encoder {
    let slot: Slot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        switch slot.content {
        case .unset: slot.content = .object([:])
        case .object: break  // a second container for the same object adds to it
        case .value, .array:
            Log.bug("json: an object asked for where a value is already written")
            slot.content = .object([:])
        }
        return KeyedEncodingContainer(Keyed(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        switch slot.content {
        case .unset: slot.content = .array([])
        case .array: break
        case .value, .object:
            Log.bug("json: an array asked for where a value is already written")
            slot.content = .array([])
        }
        return Unkeyed(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { Single(slot: slot, codingPath: codingPath) }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let slot: Slot
        let codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { slot.member(key.stringValue).content = .value(.null) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { slot.member(key.stringValue).content = .value(.bool(value)) }
        mutating func encode(_ value: String, forKey key: Key) throws { slot.member(key.stringValue).content = .value(.string(value)) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let path = codingPath + [key]
            let member = slot.member(key.stringValue)
            if let s = try scalar(value, path: path) {
                member.content = .value(s)
            } else {
                try value.encode(to: ValueEncoder(slot: member, codingPath: path))
            }
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                            forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            ValueEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            ValueEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder {
            ValueEncoder(slot: slot.member("super"), codingPath: codingPath)
        }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            ValueEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let slot: Slot
        let codingPath: [any CodingKey]
        var count: Int {
            if case .array(let elements) = slot.content { return elements.count }
            return 0
        }

        mutating func encodeNil() throws { slot.element().content = .value(.null) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            let path = codingPath + [IndexKey(count)]
            let element = slot.element()
            if let s = try scalar(value, path: path) {
                element.content = .value(s)
            } else {
                try value.encode(to: ValueEncoder(slot: element, codingPath: path))
            }
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let path = codingPath + [IndexKey(count)]
            return ValueEncoder(slot: slot.element(), codingPath: path).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let path = codingPath + [IndexKey(count)]
            return ValueEncoder(slot: slot.element(), codingPath: path).unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder {
            let path = codingPath + [IndexKey(count)]
            return ValueEncoder(slot: slot.element(), codingPath: path)
        }
    }

    struct Single: SingleValueEncodingContainer {
        let slot: Slot
        let codingPath: [any CodingKey]

        mutating func encodeNil() throws { slot.content = .value(.null) }
        mutating func encode(_ value: Bool) throws { slot.content = .value(.bool(value)) }
        mutating func encode(_ value: String) throws { slot.content = .value(.string(value)) }
        mutating func encode(_ value: Double) throws {
            guard let n = JSON.number(value) else { throw nonFinite(value, codingPath) }
            slot.content = .value(n)
        }
        mutating func encode(_ value: Float) throws {
            guard let n = JSON.number(value) else { throw nonFinite(value, codingPath) }
            slot.content = .value(n)
        }
        mutating func encode(_ value: Int) throws { slot.content = .value(.number(String(value))) }
        mutating func encode(_ value: Int8) throws { slot.content = .value(.number(String(value))) }
        mutating func encode(_ value: Int16) throws { slot.content = .value(.number(String(value))) }
        mutating func encode(_ value: Int32) throws { slot.content = .value(.number(String(value))) }
        mutating func encode(_ value: Int64) throws { slot.content = .value(.number(String(value))) }
        mutating func encode(_ value: UInt) throws { slot.content = .value(.number(String(value))) }
        mutating func encode(_ value: UInt8) throws { slot.content = .value(.number(String(value))) }
        mutating func encode(_ value: UInt16) throws { slot.content = .value(.number(String(value))) }
        mutating func encode(_ value: UInt32) throws { slot.content = .value(.number(String(value))) }
        mutating func encode(_ value: UInt64) throws { slot.content = .value(.number(String(value))) }
        mutating func encode<T: Encodable>(_ value: T) throws {
            if let s = try scalar(value, path: codingPath) {
                slot.content = .value(s)
            } else {
                try value.encode(to: ValueEncoder(slot: slot, codingPath: codingPath))
            }
        }
    }
}

// MARK: - Decoding

private func mismatch(_ type: Any.Type, _ value: JSON, _ path: [any CodingKey]) -> DecodingError {
    .typeMismatch(type, .init(codingPath: path, debugDescription: "expected \(type), found \(value.kind)"))
}

/// A number of type `type`, or the error saying why `value` is not one: `parse` reads the
/// number's text, nil when it does not fit.
private func number<T>(_ type: T.Type, _ value: JSON, _ path: [any CodingKey], _ parse: (String) -> T?) throws -> T {
    guard case .number(let text) = value else {
        if value == .null { throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "null")) }
        throw mismatch(type, value, path)
    }
    guard let v = parse(text) else {
        throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(text) does not fit in \(type)"))
    }
    return v
}

private func integer<T: FixedWidthInteger>(_ type: T.Type, _ value: JSON, _ path: [any CodingKey]) throws -> T {
    // 3.0 or 3e0 is 3, as for JSONDecoder; 3.5 or 1e400 fits no integer.
    try number(type, value, path) { text in T(text) ?? Double(text).flatMap { $0.isFinite ? T(exactly: $0) : nil } }
}

private func floating<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type, _ value: JSON,
                                                                         _ path: [any CodingKey]) throws -> T {
    try number(type, value, path) { text in T(text).flatMap { $0.isFinite ? $0 : nil } }
}

private func string(_ value: JSON, _ path: [any CodingKey]) throws -> String {
    switch value {
    case .string(let s): return s
    case .null: throw DecodingError.valueNotFound(String.self, .init(codingPath: path, debugDescription: "null"))
    default: throw mismatch(String.self, value, path)
    }
}

private func bool(_ value: JSON, _ path: [any CodingKey]) throws -> Bool {
    switch value {
    case .bool(let b): return b
    case .null: throw DecodingError.valueNotFound(Bool.self, .init(codingPath: path, debugDescription: "null"))
    default: throw mismatch(Bool.self, value, path)
    }
}

private struct ValueDecoder: Decoder {
    let value: JSON
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            if value == .null {
                throw DecodingError.valueNotFound([String: Any].self, .init(codingPath: codingPath, debugDescription: "null"))
            }
            throw mismatch([String: Any].self, value, codingPath)
        }
        return KeyedDecodingContainer(Keyed(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            if value == .null {
                throw DecodingError.valueNotFound([Any].self, .init(codingPath: codingPath, debugDescription: "null"))
            }
            throw mismatch([Any].self, value, codingPath)
        }
        return Unkeyed(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(value: value, codingPath: codingPath) }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let members: [String: JSON]
        let codingPath: [any CodingKey]
        var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

        func member(_ key: Key) throws -> JSON {
            guard let v = members[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no \"\(key.stringValue)\""))
            }
            return v
        }

        func decodeNil(forKey key: Key) throws -> Bool { try member(key) == .null }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try bool(member(key), codingPath + [key]) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try string(member(key), codingPath + [key]) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try floating(type, member(key), codingPath + [key]) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try floating(type, member(key), codingPath + [key]) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, member(key), codingPath + [key]) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, member(key), codingPath + [key]) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, member(key), codingPath + [key]) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, member(key), codingPath + [key]) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, member(key), codingPath + [key]) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, member(key), codingPath + [key]) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, member(key), codingPath + [key]) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, member(key), codingPath + [key]) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, member(key), codingPath + [key]) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, member(key), codingPath + [key]) }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try T(from: ValueDecoder(value: member(key), codingPath: codingPath + [key]))
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type,
                                                   forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try ValueDecoder(value: member(key), codingPath: codingPath + [key]).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try ValueDecoder(value: member(key), codingPath: codingPath + [key]).unkeyedContainer()
        }
        func superDecoder() throws -> any Decoder {
            ValueDecoder(value: members["super"] ?? .null, codingPath: codingPath)
        }
        func superDecoder(forKey key: Key) throws -> any Decoder {
            ValueDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        let elements: [JSON]
        let codingPath: [any CodingKey]
        var currentIndex = 0
        var count: Int? { elements.count }
        var isAtEnd: Bool { currentIndex >= elements.count }

        mutating func next(_ type: Any.Type) throws -> (JSON, [any CodingKey]) {
            let path = codingPath + [IndexKey(currentIndex)]
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "past the end of the array"))
            }
            defer { currentIndex += 1 }
            return (elements[currentIndex], path)
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, elements[currentIndex] == .null else { return false }
            currentIndex += 1
            return true
        }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let (v, path) = try next(type)
            return try T(from: ValueDecoder(value: v, codingPath: path))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            let (v, path) = try next([String: Any].self)
            return try ValueDecoder(value: v, codingPath: path).container(keyedBy: type)
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let (v, path) = try next([Any].self)
            return try ValueDecoder(value: v, codingPath: path).unkeyedContainer()
        }
        mutating func superDecoder() throws -> any Decoder {
            let (v, path) = try next(Any.self)
            return ValueDecoder(value: v, codingPath: path)
        }
    }

    struct Single: SingleValueDecodingContainer {
        let value: JSON
        let codingPath: [any CodingKey]

        func decodeNil() -> Bool { value == .null }
        func decode(_ type: Bool.Type) throws -> Bool { try bool(value, codingPath) }
        func decode(_ type: String.Type) throws -> String { try string(value, codingPath) }
        func decode(_ type: Double.Type) throws -> Double { try floating(type, value, codingPath) }
        func decode(_ type: Float.Type) throws -> Float { try floating(type, value, codingPath) }
        func decode(_ type: Int.Type) throws -> Int { try integer(type, value, codingPath) }
        func decode(_ type: Int8.Type) throws -> Int8 { try integer(type, value, codingPath) }
        func decode(_ type: Int16.Type) throws -> Int16 { try integer(type, value, codingPath) }
        func decode(_ type: Int32.Type) throws -> Int32 { try integer(type, value, codingPath) }
        func decode(_ type: Int64.Type) throws -> Int64 { try integer(type, value, codingPath) }
        func decode(_ type: UInt.Type) throws -> UInt { try integer(type, value, codingPath) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type, value, codingPath) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type, value, codingPath) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type, value, codingPath) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type, value, codingPath) }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try T(from: ValueDecoder(value: value, codingPath: codingPath))
        }
    }
}
