/// `struct input_id`: bus type, vendor, product and version of an input device.
public struct DeviceID: Hashable, Sendable {
    public var bus: UInt16
    public var vendor: UInt16
    public var product: UInt16
    public var version: UInt16
    public init(bus: UInt16 = 0, vendor: UInt16 = 0, product: UInt16 = 0, version: UInt16 = 0) {
        self.bus = bus; self.vendor = vendor; self.product = product; self.version = version
    }
}

/// How a touch device reports its contacts, which decides how its frames are assembled.
public enum TouchMode: Hashable, Sendable {
    /// Multitouch protocol B: slots and tracking ids.
    case multitouchB(slots: Int)
    /// Multitouch protocol A: anonymous contacts separated by SYN_MT_REPORT.
    case multitouchA
    /// One contact: a button (BTN_TOUCH, or BTN_LEFT on panels reporting as absolute mice)
    /// and two absolute axes (ABS_X/ABS_Y unless a quirk names others).
    case single(button: UInt16, x: UInt16, y: UInt16)

    /// "A", "B" or "single", as `touchlockctl replay` prints it.
    public var protocolName: String {
        switch self {
        case .multitouchB: "B"
        case .multitouchA: "A"
        case .single: "single"
        }
    }
}

/// What a device says about itself: the same value whether it comes from a live node
/// (libevdev) or from an evemu description, so that replay and the daemon take one path.
public struct DeviceDescription: Hashable, Sendable {
    public var name: String
    public var id: DeviceID
    public var properties: Set<Int>
    /// Supported codes per event type.
    public var codes: [UInt16: Set<UInt16>]
    public var axes: [UInt16: AxisRange]

    public init(name: String = "", id: DeviceID = DeviceID(), properties: Set<Int> = [],
                codes: [UInt16: Set<UInt16>] = [:], axes: [UInt16: AxisRange] = [:]) {
        self.name = name; self.id = id; self.properties = properties; self.codes = codes; self.axes = axes
    }

    public static let INPUT_PROP_POINTER = 0
    public static let INPUT_PROP_DIRECT = 1

    /// The most slots kept, far above any panel's few dozen: a description claiming 2^31
    /// (a broken or hostile recording) must not allocate that many.
    public static let maxSlots = 256

    public func has(_ type: UInt16, _ code: UInt16) -> Bool { codes[type]?.contains(code) == true }
    public var isDirect: Bool { properties.contains(Self.INPUT_PROP_DIRECT) }

    /// Number of multitouch slots (ABS_MT_SLOT's range), 1 for a device without slots.
    public var slotCount: Int {
        axes[EventCode.ABS_MT_SLOT].map { min(Self.maxSlots, max(1, Int($0.maximum) + 1)) } ?? 1
    }

    /// How this device's touches are read, or nil (with the reason) when it is not a
    /// touchscreen. `quirk` may name the axes of a single-touch panel.
    public func touchMode(quirk: InputQuirk? = nil) -> Result<TouchMode, NotATouchscreen> {
        let abs = EventCode.EV_ABS, key = EventCode.EV_KEY
        let hasMT = has(abs, EventCode.ABS_MT_POSITION_X) && has(abs, EventCode.ABS_MT_POSITION_Y)
        let pointerButtons = has(key, EventCode.BTN_LEFT) || properties.contains(Self.INPUT_PROP_POINTER)
        if hasMT {
            // A touchpad (indirect, with buttons) moves a pointer; it is not a touchscreen.
            if !isDirect && pointerButtons { return .failure(NotATouchscreen("an indirect device (touchpad or tablet)")) }
            if has(abs, EventCode.ABS_MT_SLOT) { return .success(.multitouchB(slots: slotCount)) }
            return .success(.multitouchA)
        }
        let x = quirk?.xAxis ?? EventCode.ABS_X, y = quirk?.yAxis ?? EventCode.ABS_Y
        guard has(abs, x), has(abs, y) else { return .failure(NotATouchscreen("no absolute position axes")) }
        if has(key, EventCode.BTN_STYLUS) && !isDirect { return .failure(NotATouchscreen("a pen tablet")) }
        if has(EventCode.EV_REL, EventCode.REL_X) { return .failure(NotATouchscreen("a relative pointer")) }
        if has(key, EventCode.BTN_TOUCH) { return .success(.single(button: EventCode.BTN_TOUCH, x: x, y: y)) }
        if has(key, EventCode.BTN_LEFT) { return .success(.single(button: EventCode.BTN_LEFT, x: x, y: y)) }
        return .failure(NotATouchscreen("no BTN_TOUCH or BTN_LEFT"))
    }

    /// The ranges of the axes that carry positions in `mode`.
    public func positionAxes(_ mode: TouchMode) -> (x: AxisRange, y: AxisRange)? {
        let xc: UInt16, yc: UInt16
        switch mode {
        case .multitouchA, .multitouchB:
            xc = EventCode.ABS_MT_POSITION_X; yc = EventCode.ABS_MT_POSITION_Y
        case .single(_, let x, let y):
            xc = x; yc = y
        }
        guard let x = axes[xc], let y = axes[yc] else { return nil }
        return (x, y)
    }

    /// A device with digit keys (top row, keypad or numeric) and an enter key: a code pad
    /// or a keyboard that can type a code.
    public var isKeypad: Bool {
        guard let keys = codes[EventCode.EV_KEY] else { return false }
        let enter = keys.contains(KeyInput.KEY_ENTER) || keys.contains(KeyInput.KEY_KPENTER)
        return enter && keys.contains(where: { if case .digit = KeyInput(code: $0) { true } else { false } })
    }

    /// `vvvv:pppp` in lower-case hex, as quirks match it.
    public var vendorProduct: String { "\(Self.hex4(id.vendor)):\(Self.hex4(id.product))" }

    static func hex4(_ v: UInt16) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}

public struct NotATouchscreen: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}
