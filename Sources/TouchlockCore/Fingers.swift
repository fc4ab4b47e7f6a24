/// Which contacts reach the pad on screen. The first finger down drives the pad; a
/// finger that lands while input is blocked, or that wakes the screen, is ignored until it
/// lifts; a finger on the switch between methods presses it and switches when it lifts
/// there; a contact resting on another panel (a palm, a stuck IR frame) gives way to a
/// finger on this one; a contact resting without moving (`StillContacts`) stops holding
/// the pad and is ignored until it lifts.
///
///     (up) --began, input taken--> down (the first: driver) --ended--> (up)
///       |                            | gives way (another panel, nothing drawn),
///       |                            | rests too long
///       +--began, input blocked----> ignored --ended--> (up)
///       +--began on the switch-----> on the switch --ended there--> switch methods
///
/// A value machine: `touches` says where each frame goes as actions, which the lock
/// screen carries out in order; what it needs of the screen comes in as `Screen`.
public struct Fingers: Sendable {
    public enum Action: Hashable, Sendable {
        /// The switch between methods is drawn pressed, or no longer.
        case redrawSwitch
        /// A finger lifted on the switch it pressed: methods are switched if the pad on
        /// screen is at rest and takes input.
        case switchReleased
        /// A contact resting on another panel gave way to a finger on this one: lift it
        /// for the pad, at its last point. It is ignored until it lifts.
        case gaveWay(id: Int, lastPoint: Point)
        /// A contact rested too long: lift it for the pad where nothing is chosen or
        /// pressed (what it started is dropped, not submitted). Ignored until it lifts.
        case rested(id: Int)
        /// Touches for the pad on screen.
        case pass([ScreenTouch])
        /// Be woken then: the first contact down becomes stale.
        case armTimer(Instant)
    }

    /// What the fingers need to know of the lock screen, as of the frame's start.
    public struct Screen: Hashable, Sendable {
        /// The session or an enrollment takes input.
        public var takesInput: Bool
        /// Where the switch between methods is (nil: none).
        public var toggle: PixelRect?
        /// The switch can be pressed now (no enrollment, the pad on screen at rest).
        public var switchable: Bool
        /// The finger the pad follows has chosen something (a pattern node).
        public var driverHasDrawn: Bool

        public init(takesInput: Bool, toggle: PixelRect?, switchable: Bool, driverHasDrawn: Bool) {
            self.takesInput = takesInput
            self.toggle = toggle
            self.switchable = switchable
            self.driverHasDrawn = driverHasDrawn
        }
    }

    /// Contacts the pads are given, followed to find those that rest without moving.
    public var stillContacts: StillContacts
    /// Fingers that landed while input was blocked, or on the switch: ignored until they lift.
    private var ignored: Set<Int> = []
    /// The fingers passed to the pads and down now, with their last point.
    private var down: [Int: Point] = [:]
    /// The finger the pad on screen follows (the first one down).
    public private(set) var driver: Int?
    /// A finger on the switch between pattern and code, and whether it is on it now.
    private var switchPress: (id: Int, inside: Bool)?

    public init(stillContacts: StillContacts) {
        self.stillContacts = stillContacts
    }

    /// Whether the switch is drawn pressed: a finger is on it.
    public var switchPressed: Bool { switchPress?.inside ?? false }

    /// The fingers down on the pads now.
    public var downCount: Int { down.count }

    /// `touches` without those of contacts found stale (a stale contact's lift is the
    /// last of it): what is left is activity.
    public mutating func admit(_ touches: [ScreenTouch]) -> [ScreenTouch] {
        stillContacts.withoutStale(touches)
    }

    /// Contacts down that have rested too long at `now`.
    public mutating func rested(at now: Instant) -> [Action] {
        var out: [Action] = []
        for id in stillContacts.stale(at: now) where down[id] != nil {
            Log.info("lock screen: touch \(id) has not moved for \(stillContacts.after.milliseconds / 1000) s; ignored until it lifts")
            lift(id)
            out.append(.rested(id: id))
        }
        return out
    }

    /// The timer to arm for the stale contacts, if one is needed.
    public mutating func timer(at now: Instant) -> [Action] {
        stillContacts.timer(at: now).map { [.armTimer($0)] } ?? []
    }

    /// A frame of touches while the screen takes them (it is on).
    public mutating func touches(_ touches: [ScreenTouch], on screen: Screen, at now: Instant) -> [Action] {
        var passed: [ScreenTouch] = []
        var out: [Action] = []
        for t in touches {
            if let press = switchPress, press.id == t.id {
                // Pressed while the finger is on it; it acts when the finger lifts there.
                let inside = screen.toggle?.contains(t.point) ?? false
                if t.phase == .ended {
                    switchPress = nil
                    out.append(.redrawSwitch)
                    if inside { out.append(.switchReleased) }
                } else if inside != press.inside {
                    switchPress = (t.id, inside)
                    out.append(.redrawSwitch)
                }
                continue
            }
            if ignored.contains(t.id) {
                if t.phase == .ended { ignored.remove(t.id) }
                continue
            }
            if t.phase == .began && !screen.takesInput {
                ignored.insert(t.id)
                continue
            }
            if t.phase == .began, screen.switchable, let r = screen.toggle, r.contains(t.point), passed.isEmpty,
               switchPress == nil {
                switchPress = (t.id, true)
                out.append(.redrawSwitch)
                continue
            }
            if t.phase == .began, let d = driver, let p = down[d], d / ScreenTouch.panelStride != t.panel,
               !screen.driverHasDrawn {
                // A contact resting on another panel (a palm, a stuck IR frame) gives way
                // to a finger on this one: it is lifted for the pad and ignored from here.
                Log.debug("lock screen: touch \(d) on panel \(d / ScreenTouch.panelStride) gives way to panel \(t.panel)")
                lift(d)
                ignored.insert(d)
                out.append(.gaveWay(id: d, lastPoint: p))
            }
            passed.append(t)
        }
        if passed.isEmpty { return out }
        for t in passed { follow(t, at: now) }
        out.append(.pass(passed))
        return out
    }

    /// A frame of touches that wakes the screen: none is input, so their fingers are
    /// ignored until they lift (they select no node and press no key).
    public mutating func woke(by touches: [ScreenTouch]) {
        for t in touches where t.phase != .ended { ignored.insert(t.id) }
        for t in touches {
            down[t.id] = nil
            stillContacts.forget(t.id)
            if driver == t.id { driver = nil }
        }
    }

    /// Keeps which fingers are down for a touch passed to the pads.
    private mutating func follow(_ t: ScreenTouch, at now: Instant) {
        stillContacts.track(t, at: now)
        switch t.phase {
        case .began, .moved, .stationary:
            if down.isEmpty && t.phase == .began { driver = t.id }
            down[t.id] = t.point
        case .ended:
            down[t.id] = nil
            if driver == t.id { driver = nil }
        }
    }

    /// A finger no longer passed to the pads.
    private mutating func lift(_ id: Int) {
        down[id] = nil
        stillContacts.forget(id)
        if driver == id { driver = nil }
    }
}
