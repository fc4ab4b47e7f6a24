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
    public static let EV_REL: UInt16 = 0x02
    public static let EV_ABS: UInt16 = 0x03

    public static let SYN_REPORT: UInt16 = 0
    public static let SYN_MT_REPORT: UInt16 = 2
    public static let SYN_DROPPED: UInt16 = 3

    public static let ABS_X: UInt16 = 0x00
    public static let ABS_Y: UInt16 = 0x01
    public static let ABS_Z: UInt16 = 0x02
    public static let ABS_RX: UInt16 = 0x03
    public static let ABS_RY: UInt16 = 0x04
    public static let ABS_RZ: UInt16 = 0x05
    public static let ABS_MT_SLOT: UInt16 = 0x2f
    public static let ABS_MT_POSITION_X: UInt16 = 0x35
    public static let ABS_MT_POSITION_Y: UInt16 = 0x36
    public static let ABS_MT_TRACKING_ID: UInt16 = 0x39
    public static let ABS_MT_TOOL_TYPE: UInt16 = 0x37
    /// ABS_MT_TOOL_TYPE's value for a palm.
    public static let MT_TOOL_PALM: Int32 = 2

    public static let REL_X: UInt16 = 0x00

    public static let BTN_LEFT: UInt16 = 0x110
    public static let BTN_TOOL_PEN: UInt16 = 0x140
    public static let BTN_TOUCH: UInt16 = 0x14a
    public static let BTN_STYLUS: UInt16 = 0x14b

    /// Names of the absolute axes a quirk may name, as in input-event-codes.h.
    public static let absoluteAxisNames: [String: UInt16] = [
        "ABS_X": 0x00, "ABS_Y": 0x01, "ABS_Z": 0x02, "ABS_RX": 0x03, "ABS_RY": 0x04, "ABS_RZ": 0x05,
        "ABS_THROTTLE": 0x06, "ABS_RUDDER": 0x07, "ABS_WHEEL": 0x08, "ABS_GAS": 0x09, "ABS_BRAKE": 0x0a,
        "ABS_PRESSURE": 0x18, "ABS_DISTANCE": 0x19, "ABS_TILT_X": 0x1a, "ABS_TILT_Y": 0x1b, "ABS_MISC": 0x28,
    ]
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
