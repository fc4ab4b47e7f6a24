/// A touch in screen pixels, as the gesture machines see it.
public struct ScreenTouch: Hashable, Sendable {
    public var id: Int
    public var phase: TouchPhase
    public var point: Point
    public init(id: Int, phase: TouchPhase, point: Point) { self.id = id; self.phase = phase; self.point = point }
}

extension ScreenTouch {
    /// Touch ids of different panels differ by this much: `panel` tells them apart.
    public static let panelStride = 1 << 24

    /// Which panel (input device) the touch is on.
    public var panel: Int { id / Self.panelStride }
}

/// The pattern gesture: the first finger's path is hit-tested against the
/// nodes; each node joins the ordered path once (under `repeat = allowed`, again each
/// time the finger comes back onto it: `PatternGrid.extend(_:revisit:from:to:repeats:)`);
/// on release the path is submitted.
///
/// States and what moves between them (docs/state-machines.md shows the diagram; the
/// code and the diagram change together):
///
///     idle --first finger down--> drawing --finger up--> submitted --accept--> accepted
///       ^                           |                       |
///       |                           +--up, no node---> idle +--reject--> rejected --timeout--> idle
///
/// Other fingers are ignored. While `submitted`, `accepted` or `rejected`, touches do
/// nothing (input is blocked), but a finger that lands stays tracked so that it cannot
/// start a pattern halfway through its stroke.
public struct PatternLock: Sendable {
    public enum State: Hashable, Sendable, CustomStringConvertible {
        case idle
        case drawing(touch: Int, path: [Int], finger: Point)
        case submitted(path: [Int])
        case accepted(path: [Int])
        case rejected(path: [Int], until: Instant)

        public var description: String {
            switch self {
            case .idle: "idle"
            case .drawing(_, let p, _): "drawing(\(p.count) nodes)"
            case .submitted(let p): "submitted(\(p.count) nodes)"
            case .accepted: "accepted"
            case .rejected(_, let t): "rejected(until \(t))"
            }
        }
    }

    public enum Action: Hashable, Sendable {
        /// The scene changed.
        case redraw
        /// A finished attempt, for the session to verify.
        case submit(Pattern)
        /// The attempt was shorter than the minimum: not a failure, not verified.
        case tooShort(nodes: Int, minimum: Int)
        case armTimer(Instant)
    }

    public let grid: PatternGrid
    public var minimumLength: Int
    /// Whether a node can be chosen again (`[pattern] repeat`).
    public let repeats: PatternRepeat
    public private(set) var state: State = .idle
    /// A finger that landed while input was blocked; it can start nothing until it lifts.
    private var blockedTouch: Int?
    /// While drawing under `repeat = allowed`: the chosen node the finger is on, which
    /// joins again if it turns there or lifts.
    private var revisit: PatternGrid.Revisit?

    public init(grid: PatternGrid, minimumLength: Int = 4, repeats: PatternRepeat = .never) {
        self.grid = grid
        self.minimumLength = minimumLength
        self.repeats = repeats
    }

    /// The same lock on another output's grid (same rows and columns): the nodes by
    /// number, the finger moved with the grid.
    public func relaid(on other: PatternGrid) -> PatternLock {
        var p = PatternLock(grid: other, minimumLength: minimumLength, repeats: repeats)
        p.blockedTouch = blockedTouch
        p.revisit = revisit.map {
            PatternGrid.Revisit(node: $0.node, entry: grid.map($0.entry, to: other), nearest: grid.map($0.nearest, to: other))
        }
        switch state {
        case .drawing(let touch, let path, let finger):
            p.state = .drawing(touch: touch, path: path, finger: grid.map(finger, to: other))
        case .idle, .submitted, .accepted, .rejected:
            p.state = state
        }
        return p
    }

    /// The path drawn so far, in node order (empty when idle).
    public var path: [Int] {
        switch state {
        case .idle: []
        case .drawing(_, let p, _), .submitted(let p), .accepted(let p), .rejected(let p, _): p
        }
    }

    public mutating func handle(_ touches: [ScreenTouch], at now: Instant) -> [Action] {
        let old = state
        var actions: [Action] = []
        for t in touches {
            actions += handle(t)
        }
        if old != state { Log.debug("pattern: \(old) -> touches -> \(state)") }
        return actions
    }

    private mutating func handle(_ t: ScreenTouch) -> [Action] {
        if t.id == blockedTouch {
            if t.phase == .ended { blockedTouch = nil }
            return []
        }
        switch state {
        case .idle:
            switch t.phase {
            case .began:
                var path: [Int] = []
                revisit = nil
                if let n = grid.node(at: t.point) { path.append(n) }
                state = .drawing(touch: t.id, path: path, finger: t.point)
                return [.redraw]
            case .moved, .stationary, .ended:
                return []  // a finger that was down before we started, or a second finger
            }
        case .drawing(let id, var path, let finger):
            guard t.id == id else { return [] }  // only the first finger draws
            switch t.phase {
            case .began:
                Log.bug("pattern: touch \(id) began twice")
                return []
            case .stationary:
                return []
            case .moved:
                extend(&path, from: finger, to: t.point)
                state = .drawing(touch: id, path: path, finger: t.point)
                // Until a node is chosen the finger draws nothing: no frame to make.
                return path.isEmpty ? [] : [.redraw]
            case .ended:
                extend(&path, from: finger, to: t.point)
                grid.lift(&path, revisit: &revisit)
                if path.isEmpty {
                    state = .idle
                    return [.redraw]
                }
                if path.count < minimumLength {
                    state = .idle
                    return [.redraw, .tooShort(nodes: path.count, minimum: minimumLength)]
                }
                state = .submitted(path: path)
                return [.redraw, .submit(Pattern(rows: grid.rows, columns: grid.columns, nodes: path))]
            }
        case .submitted, .accepted, .rejected:
            if t.phase == .began { blockedTouch = t.id }
            return []
        }
    }

    /// Adds the nodes the finger passed between two samples, and the unused nodes lying
    /// on the line between consecutive chosen nodes (and, repeats allowed, a chosen node
    /// the finger came back onto).
    private mutating func extend(_ path: inout [Int], from a: Point, to b: Point) {
        grid.extend(&path, revisit: &revisit, from: a, to: b, repeats: repeats)
    }

    /// The session's verdict on the submitted attempt.
    public mutating func verdict(accepted: Bool, at now: Instant, errorHold: Interval) -> [Action] {
        guard case .submitted(let path) = state else {
            Log.bug("pattern: verdict in state \(state)")
            return []
        }
        if accepted {
            state = .accepted(path: path)
            return [.redraw]
        }
        let until = now + errorHold
        state = .rejected(path: path, until: until)
        return [.redraw, .armTimer(until)]
    }

    /// The event loop's timer reached `now`.
    public mutating func timerFired(at now: Instant) -> [Action] {
        switch state {
        case .rejected(_, let until):
            if now < until { return [.armTimer(until)] }
            state = .idle
            return [.redraw]
        case .idle, .drawing, .submitted, .accepted:
            return []
        }
    }

    /// Back to idle (a lock request, a cancelled gesture).
    public mutating func reset() -> [Action] {
        revisit = nil
        if state == .idle { return [] }
        state = .idle
        return [.redraw]
    }
}
