/// Contacts that rest without moving: debris, a drop of water, a blocked IR beam, a
/// finger or a palm left on the panel. A contact that has stayed within `jitter` of one
/// point for `after` is stale: it no longer holds the pad (the first finger down is the
/// one a pad follows, so a contact that never lifts would keep every other finger from
/// drawing or typing), it never counts as an attempt, and it is ignored until it lifts.
///
/// 4 s: a pattern is drawn in 1-2 s and a key pressed in a tenth of that; a finger held
/// still on one node for 4 s is resting, not drawing (Android's long press is 0.5 s,
/// its "press and hold" accessibility choices go to 1.5 s). Short enough that a finger
/// landing beside a stuck contact is followed after a few seconds at most.
///
/// 12 dp (1.9 mm at the panel's density): a finger held still on glass wanders about a
/// millimetre; a drop or a speck reports the same point, give or take the panel's noise
/// (a few tenths of a millimetre). A moving finger leaves 12 dp within a frame or two.
///
/// Time is passed in; the owner arms one timer, at the moment the first tracked contact
/// would become stale, and only while one is down (`timer`): no periodic wake-up.
public struct StillContacts: Sendable {
    public static let defaultAfter = Interval.milliseconds(4000)
    public static let jitterDp = 12.0

    public var after: Interval
    /// In pixels.
    public var jitter: Double
    /// Where each contact last moved beyond the jitter, and when.
    private var anchors: [Int: Anchor] = [:]

    private struct Anchor: Sendable {
        var point: Point
        var since: Instant
    }
    /// Those found stale, ignored until they lift.
    private var stale: Set<Int> = []
    /// The timer asked for and not yet fired.
    private var armed: Instant?

    public init(after: Interval = StillContacts.defaultAfter, jitter: Double) {
        self.after = after
        self.jitter = jitter
    }

    public var isEmpty: Bool { anchors.isEmpty }

    /// Follows a contact the pads are given.
    public mutating func track(_ t: ScreenTouch, at now: Instant) {
        switch t.phase {
        case .began:
            anchors[t.id] = Anchor(point: t.point, since: now)
        case .moved, .stationary:
            guard let a = anchors[t.id] else { anchors[t.id] = Anchor(point: t.point, since: now); return }
            if a.point.distance(to: t.point) > jitter { anchors[t.id] = Anchor(point: t.point, since: now) }
        case .ended:
            anchors[t.id] = nil
        }
    }

    /// Stops following `id` (it lifted, or is ignored for another reason).
    public mutating func forget(_ id: Int) { anchors[id] = nil }

    /// The contacts stale at `now`, no longer followed from here.
    public mutating func stale(at now: Instant) -> [Int] {
        let out = anchors.filter { now >= $0.value.since + after }.keys.sorted()
        for id in out {
            anchors[id] = nil
            stale.insert(id)
        }
        return out
    }

    /// `touches` without those of stale contacts (a stale contact's lift is the last of it).
    public mutating func withoutStale(_ touches: [ScreenTouch]) -> [ScreenTouch] {
        if stale.isEmpty { return touches }
        return touches.filter { t in
            guard stale.contains(t.id) else { return true }
            if t.phase == .ended { stale.remove(t.id) }
            return false
        }
    }

    /// The moment to be woken, when a contact is down and no timer already asked for
    /// comes first; nil otherwise.
    public mutating func timer(at now: Instant) -> Instant? {
        if let a = armed, a <= now { armed = nil }
        guard let first = anchors.values.map(\.since).min() else { return nil }
        let due = first + after
        if let a = armed, a <= due { return nil }  // it fires first, and asks again then
        armed = due
        return due
    }
}
