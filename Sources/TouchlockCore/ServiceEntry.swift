/// The screen's hidden way in for a one-time service code (docs/service-codes.md): a
/// long press on the prompt (or the clock above it) opens a pad of `[service] digits`
/// boxes in place of the grid or the owner's pad, whatever the owner's screen is. Nothing
/// on the owner's screen shows it; a device without service codes has none.
///
///     closed --one finger down on the prompt or the clock, the pad at rest--> pressing
///     pressing --held 3 s within 12 dp--> open (the finger is ignored until it lifts)
///     pressing --moved, lifted, another finger, a node chosen--> closed
///     open --Cancel, Escape, 30 s untouched, the unlock's hold over--> closed
///
/// A code typed there is an attempt of the `service` method, counted before it is checked
/// and checked only as a service code: the owner's secret is never taken there.
///
/// 3 s: six times Android's long press, so no tap, no hesitation before a pattern and no
/// slow start of a stroke reaches it, and under the 4 s after which a contact that does
/// not move is taken for debris (`StillContacts`). A stroke begins on the grid, never on
/// the prompt, and any move beyond 12 dp (the jitter a finger held still has) ends the
/// press; so does a second finger. 30 s untouched takes the owner's screen back, so one
/// who opened it by chance sees the usual screen again without having to do anything.
public struct ServiceEntry: Sendable {
    public static let hold = Interval.milliseconds(3000)
    public static let idleTimeout = Interval.milliseconds(30_000)

    public enum State: Sendable {
        case closed
        /// A finger is held on the prompt or the clock since `since`, at `point`.
        case pressing(touch: Int, point: Point, since: Instant)
        /// The service pad is on screen; `touched` is its last touch or key.
        case open(CodePad, touched: Instant)
    }

    public enum Action: Hashable, Sendable {
        /// The service pad took the screen: the owner's pads start over.
        case opened
        /// The owner's screen is back.
        case closed
        /// What the service pad asks for.
        case pad(CodePad.Action)
        case armTimer(Instant)
    }

    /// Digits in a service code, and boxes on the pad.
    public let digits: Int
    /// The service pad's screen: its boxes, keypad, Cancel and information area.
    public var layout: ScreenLayout
    public private(set) var state: State = .closed
    /// How far a finger held still may wander, in pixels.
    public var jitter: Double
    /// The finger that opened the pad: ignored until it lifts.
    private var opener: Int?
    /// The keypad's shuffle, when the owner's is shuffled.
    private let shuffleSeed: UInt64?
    private let secure: Bool

    /// `layout` must have a code pad of `digits` boxes and a switch (the Cancel).
    public init(digits: Int, layout: ScreenLayout, jitter: Double, secure: Bool = false, shuffleSeed: UInt64? = nil) {
        precondition(layout.pad?.boxes.count == digits && layout.toggle != nil, "a service pad's layout has \(digits) boxes and a Cancel")
        self.digits = digits
        self.layout = layout
        self.jitter = jitter
        self.secure = secure
        self.shuffleSeed = shuffleSeed
    }

    public var isOpen: Bool {
        if case .open = state { return true }
        return false
    }

    /// The service pad, while it is open.
    public var pad: CodePad? {
        if case .open(let p, _) = state { return p }
        return nil
    }

    /// Where Cancel is.
    public var cancelRect: PixelRect { layout.toggle ?? PixelRect(x: 0, y: 0, width: 0, height: 0) }

    /// The same entry on another output's service layout.
    public func relaid(as other: ServiceEntry) -> ServiceEntry {
        var e = self
        e.layout = other.layout
        e.jitter = other.jitter
        if case .open(let p, let t) = state, let l = other.layout.pad { e.state = .open(p.relaid(on: l), touched: t) }
        return e
    }

    // MARK: the press

    /// Touches passed to the owner's pads while closed. `band` is where a press is taken
    /// (the prompt, the clock), `eligible` whether the screen may open it now (locked,
    /// taking input, the pad at rest, nothing enrolled), `fingers` how many are down.
    public mutating func watch(_ touches: [ScreenTouch], band: [PixelRect], eligible: Bool, fingers: Int,
                               at now: Instant) -> [Action] {
        for t in touches {
            switch state {
            case .open:
                Log.bug("service entry: the owner's pad given touches while the service pad is open")
                return []
            case .closed:
                guard t.phase == .began, eligible, fingers == 1, band.contains(where: { $0.contains(t.point) }) else { continue }
                state = .pressing(touch: t.id, point: t.point, since: now)
            case .pressing(let id, let p, _):
                if t.id != id {
                    if t.phase == .began { cancelPress("another finger") }
                    continue
                }
                switch t.phase {
                case .began:
                    Log.bug("service entry: touch \(id) began twice")
                    cancelPress("began twice")
                case .moved, .stationary:
                    if t.point.distance(to: p) > jitter { cancelPress("moved") }
                case .ended:
                    cancelPress("lifted")
                }
            }
        }
        if case .pressing(_, _, let since) = state { return [.armTimer(since + Self.hold)] }
        return []
    }

    /// Something made the press no longer a press (the pad left its rest, the session took
    /// no more input).
    public mutating func cancelPress(_ why: String) {
        guard case .pressing = state else { return }
        Log.debug("service entry: pressing -> \(why) -> closed")
        state = .closed
    }

    // MARK: the pad

    /// Touches while open: the finger that opened it is ignored until it lifts.
    public mutating func handle(_ touches: [ScreenTouch], at now: Instant) -> [Action] {
        guard case .open(var pad, _) = state else {
            Log.bug("service entry: touches for a closed pad")
            return []
        }
        var passed: [ScreenTouch] = []
        for t in touches {
            if t.id == opener {
                if t.phase == .ended { opener = nil }
                continue
            }
            passed.append(t)
        }
        if passed.isEmpty { return [] }
        let out = pad.handle(passed, at: now)
        state = .open(pad, touched: now)
        return out.map(Action.pad)
    }

    /// A key of the keypad typed on a hardware keypad or keyboard.
    public mutating func key(_ k: CodePad.Key, at now: Instant) -> [Action] {
        guard case .open(var pad, _) = state else {
            Log.bug("service entry: a key for a closed pad")
            return []
        }
        let out = pad.key(k, at: now)
        state = .open(pad, touched: now)
        return out.map(Action.pad)
    }

    /// The verdict on the code typed here; the 30 s start again from it.
    public mutating func verdict(accepted: Bool, at now: Instant, errorHold: Interval) -> [Action] {
        guard case .open(var pad, _) = state else {
            Log.bug("service entry: a verdict while closed")
            return []
        }
        let out = pad.verdict(accepted: accepted, at: now, errorHold: errorHold)
        state = .open(pad, touched: now)
        return out.map(Action.pad)
    }

    /// Whether the pad has a code out for a verdict.
    public var submitted: Bool { pad?.state == .submitted }

    /// The timer reached `now`: a press held long enough opens the pad; an open pad
    /// untouched for 30 s closes (not while its code is checked); the pad's own timers
    /// (its cursor only if `wakes`).
    public mutating func timerFired(at now: Instant, wakes: Bool) -> [Action] {
        switch state {
        case .closed:
            return []
        case .pressing(let id, _, let since):
            guard now >= since + Self.hold else { return [] }
            return open(opener: id, at: now)
        case .open(var pad, let touched):
            if pad.state == .submitted { return [] }  // the verdict restarts the wait
            if now >= touched + Self.idleTimeout {
                Log.info("service entry: untouched for \(Self.idleTimeout.milliseconds / 1000) s; the owner's screen is back")
                return close()
            }
            let out = pad.timerFired(at: now, wakes: wakes)
            state = .open(pad, touched: touched)
            return out.map(Action.pad) + [.armTimer(touched + Self.idleTimeout)]
        }
    }

    private mutating func open(opener: Int, at now: Instant) -> [Action] {
        guard let l = layout.pad else { return [] }
        let pad = CodePad(length: digits, layout: l, secure: secure, shuffleSeed: shuffleSeed.map { $0 ^ UInt64(bitPattern: now.microseconds) },
                          at: now)
        self.opener = opener
        state = .open(pad, touched: now)
        Log.info("service entry: opened by a long press")
        var out: [Action] = [.opened]
        out += pad.nextWake(after: now).map { [Action.armTimer($0)] } ?? []
        return out + [.armTimer(now + Self.idleTimeout)]
    }

    /// Back to the owner's screen (Cancel, Escape, the unlock over): nothing typed stays.
    public mutating func close() -> [Action] {
        switch state {
        case .closed, .pressing:
            state = .closed
            return []
        case .open(var pad, let t):
            // The state lets go of the pad first, so the digits are wiped in place.
            state = .closed
            _ = pad.clear(at: t)
            Log.debug("service entry: open -> closed")
            return [.closed]
        }
    }
}
