/// One kernel input event (struct input_event), with its timestamp.
public struct InputEvent: Hashable, Sendable, CustomStringConvertible {
    public var type: UInt16
    public var code: UInt16
    public var value: Int32
    public var time: Instant

    public init(type: UInt16, code: UInt16, value: Int32, time: Instant) {
        self.type = type; self.code = code; self.value = value; self.time = time
    }

    public var description: String { "\(time) type \(type) code \(code) value \(value)" }
}

/// Event type and code numbers of the Linux input ABI
/// (include/uapi/linux/input-event-codes.h); Core does not import kernel headers.
public enum EventCode {
    public static let EV_SYN: UInt16 = 0x00
    public static let EV_KEY: UInt16 = 0x01
    public static let EV_ABS: UInt16 = 0x03

    public static let SYN_REPORT: UInt16 = 0
    public static let SYN_MT_REPORT: UInt16 = 2
    public static let SYN_DROPPED: UInt16 = 3

    public static let ABS_X: UInt16 = 0x00
    public static let ABS_Y: UInt16 = 0x01
    public static let ABS_MT_SLOT: UInt16 = 0x2f
    public static let ABS_MT_POSITION_X: UInt16 = 0x35
    public static let ABS_MT_POSITION_Y: UInt16 = 0x36
    public static let ABS_MT_TRACKING_ID: UInt16 = 0x39

    public static let BTN_TOUCH: UInt16 = 0x14a
}

/// The range of one absolute axis, as EVIOCGABS reports it.
public struct AxisRange: Hashable, Sendable {
    public var minimum: Int32
    public var maximum: Int32
    public var resolution: Int32
    public init(minimum: Int32, maximum: Int32, resolution: Int32 = 0) {
        self.minimum = minimum; self.maximum = maximum; self.resolution = resolution
    }
}
