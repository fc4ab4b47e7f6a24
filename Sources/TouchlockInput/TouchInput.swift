import Glibc
import TouchlockCore
import TouchlockSystem

/// What the config says about reading input devices.
public struct InputSettings: Sendable {
    public var quirks: [InputQuirk]
    public var orientation: TouchOrientation
    /// How the display turns the picture: touch follows it (after `orientation`).
    public var displayRotation: Rotation
    /// The seat whose devices are used (`[logind] seat`), by udev's ID_SEAT; nil: every seat's.
    public var seat: String?

    public init(quirks: [InputQuirk] = [], orientation: TouchOrientation = TouchOrientation(),
                displayRotation: Rotation = .degrees0, seat: String? = nil) {
        self.quirks = quirks
        self.orientation = orientation
        self.displayRotation = displayRotation
        self.seat = seat
    }
}

/// One source of touch frames: a kernel device or a replayed recording, with the frame
/// assembler its description picks and the transform from device units to screen pixels.
public final class TouchInput {
    public let label: String
    private var assembler: TouchFrameAssembler
    private let transform: TouchTransform
    private let deliver: ([ScreenTouch], Instant) -> Void
    /// Touches passed on, with their last point: a touch is passed on from the first frame
    /// in which its position is known, and its end only if it was passed on.
    private var delivered: [Int: Point] = [:]

    public init(label: String, mode: TouchMode, transform: TouchTransform,
         deliver: @escaping ([ScreenTouch], Instant) -> Void) {
        self.label = label
        assembler = TouchFrameAssembler(mode: mode)
        self.transform = transform
        self.deliver = deliver
    }

    /// The assembler and transform for `device`, or why it is not a touchscreen.
    public static func make(label: String, device: DeviceDescription, settings: InputSettings, screen: Size,
                     calibration: AffineMatrix? = nil,
                     deliver: @escaping ([ScreenTouch], Instant) -> Void) -> Result<TouchInput, NotATouchscreen> {
        let quirk = InputQuirk.merged(settings.quirks, for: device)
        let mode: TouchMode
        switch device.touchMode(quirk: quirk) {
        case .success(let m): mode = m
        case .failure(let why): return .failure(why)
        }
        guard let axes = device.positionAxes(mode) else { return .failure(NotATouchscreen("no ranges for its position axes")) }
        let transform = TouchTransform(x: axes.x, y: axes.y, screen: screen, quirk: quirk,
                                       calibration: calibration, orientation: settings.orientation,
                                       display: settings.displayRotation)
        let input = TouchInput(label: label, mode: mode, transform: transform, deliver: deliver)
        Log.info("touchscreen \(label): protocol \(mode.protocolName), x \(axes.x.minimum)...\(axes.x.maximum), "
                 + "y \(axes.y.minimum)...\(axes.y.maximum)"
                 + (quirk != nil ? ", with a quirk" : "") + (transform.matrix != .identity ? ", matrix \(transform.matrix)" : ""))
        return .success(input)
    }

    public var mode: TouchMode { assembler.mode }

    public func feed(_ e: InputEvent) {
        if let frame = assembler.feed(e) { send(frame) }
    }

    /// After SYN_DROPPED: the touch state becomes the device's.
    public func resync(_ snapshot: DeviceSnapshot, at time: Instant) {
        if let frame = assembler.resync(to: snapshot, at: time) { send(frame) }
    }

    /// The device went away: every finger on it is lifted.
    public func releaseAll(at now: Instant) {
        if let frame = assembler.releaseAll(at: now) { send(frame) }
    }

    private func send(_ frame: TouchFrame) {
        var touches: [ScreenTouch] = []
        for t in frame.touches {
            switch t.phase {
            case .ended:
                guard let last = delivered.removeValue(forKey: t.id) else { continue }
                touches.append(ScreenTouch(id: t.id, phase: .ended, point: t.position.map(transform.map) ?? last))
            case .began, .moved, .stationary:
                if t.palm {
                    // A palm never draws or presses: one never passed on is dropped; a
                    // finger that turns into a palm is lifted where it was.
                    if let last = delivered.removeValue(forKey: t.id) {
                        touches.append(ScreenTouch(id: t.id, phase: .ended, point: last))
                    }
                    continue
                }
                guard let p = t.position.map(transform.map) else { continue }
                let phase = delivered[t.id] == nil ? .began : t.phase
                delivered[t.id] = p
                touches.append(ScreenTouch(id: t.id, phase: phase, point: p))
            }
        }
        if !touches.isEmpty { deliver(touches, frame.time) }
    }
}
