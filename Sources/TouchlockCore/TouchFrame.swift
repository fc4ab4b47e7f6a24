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
    public var slot: Int
    public var phase: TouchPhase
    public var position: DevicePoint
}

/// Everything that is true of the panel at one SYN_REPORT.
public struct TouchFrame: Hashable, Sendable {
    public var time: Instant
    /// Every touch that is down, began or ended in this frame, ordered by slot.
    public var touches: [Touch]
}
