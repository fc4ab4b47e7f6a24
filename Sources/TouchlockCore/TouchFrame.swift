/// A position in device units, before any mapping to the screen.
public struct DevicePoint: Hashable, Sendable {
    public var x: Int32
    public var y: Int32
    public init(x: Int32, y: Int32) { self.x = x; self.y = y }
}

/// Where a touch is in its life. `began` and `ended` appear in exactly one frame each.
public enum TouchPhase: Hashable, Sendable {
    case began, moved, stationary, ended
}

public struct Touch: Hashable, Sendable {
    /// Unique for the life of the assembler: a new contact always gets a new id.
    public var id: Int
    /// The kernel slot (protocol B), nil on devices without slots.
    public var slot: Int?
    public var phase: TouchPhase
    /// Nil while the device has sent no X or no Y for this contact.
    public var position: DevicePoint?
    /// The panel says this contact is a palm (ABS_MT_TOOL_TYPE = MT_TOOL_PALM), not a finger.
    public var palm: Bool
    public init(id: Int, slot: Int?, phase: TouchPhase, position: DevicePoint?, palm: Bool = false) {
        self.id = id; self.slot = slot; self.phase = phase; self.position = position; self.palm = palm
    }
}

/// Everything that is true of the panel at one SYN_REPORT.
public struct TouchFrame: Hashable, Sendable {
    public var time: Instant
    /// Every touch that is down, began or ended in this frame, ordered by slot (by id on
    /// devices without slots).
    public var touches: [Touch]
    public init(time: Instant, touches: [Touch]) { self.time = time; self.touches = touches }
}

/// The touch state of a device as read back after SYN_DROPPED (libevdev's synced state):
/// per slot its tracking id and position, the touch button, and the single-touch axes.
public struct DeviceSnapshot: Hashable, Sendable {
    public struct Slot: Hashable, Sendable {
        public var trackingID: Int32
        public var x: Int32?
        public var y: Int32?
        public init(trackingID: Int32, x: Int32? = nil, y: Int32? = nil) { self.trackingID = trackingID; self.x = x; self.y = y }
    }
    public var slots: [Slot]
    public var currentSlot: Int
    /// Key state (BTN_TOUCH, BTN_LEFT) and absolute axis values, by code.
    public var keys: [UInt16: Int32]
    public var axes: [UInt16: Int32]
    public init(slots: [Slot] = [], currentSlot: Int = 0, keys: [UInt16: Int32] = [:], axes: [UInt16: Int32] = [:]) {
        self.slots = slots; self.currentSlot = currentSlot; self.keys = keys; self.axes = axes
    }
}
