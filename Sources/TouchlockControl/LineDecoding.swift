/// One JSON line read as a value by the protocol's strict reader, for clients that take
/// lines other than through `ControlClient` (touchlock-mqtt's commands from the bus).
public enum ControlJSON {
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try LineCodec().decode(type, from: bytes)
    }
}
