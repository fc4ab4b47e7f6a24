/// Whether a node can be chosen again in one pattern (`[pattern] repeat`).
public enum PatternRepeat: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// A node joins once (Android's rule).
    case never
    /// A chosen node joins again when the finger comes back onto it
    /// (`PatternGrid.extend(_:revisit:from:to:repeats:)`), never by passing over it.
    case allowed

    public var description: String { rawValue }
}

/// The pattern grid laid out on a screen: node centres in pixels, the hit radius, and
/// the node indices (row-major, from 0) that make up a pattern.
public struct PatternGrid: Hashable, Sendable {
    public var rows: Int
    public var columns: Int
    /// Top-left corner of the grid's area and the side of one cell, in pixels.
    public var origin: Point
    public var cell: Double
    /// A finger within this distance of a node's centre selects it.
    public var hitRadius: Double

    public init(rows: Int, columns: Int, origin: Point, cell: Double, hitFactor: Double = 0.6) {
        precondition(rows >= 2 && columns >= 2, "a pattern grid needs at least 2x2 nodes")
        self.rows = rows; self.columns = columns
        self.origin = origin; self.cell = cell
        self.hitRadius = hitFactor * cell / 2
    }

    /// The grid of a screen offering only the pattern, on `screen` (ScreenLayout has the
    /// rules).
    public static func layout(rows: Int = 3, columns: Int = 3, on screen: Size, hitFactor: Double = 0.6,
                              density: Density = Density(dpi: Density.defaultDpi)) -> PatternGrid {
        ScreenLayout(size: screen, density: density, methods: .pattern, rows: rows, columns: columns, hitFactor: hitFactor).grid
    }

    public var count: Int { rows * columns }

    /// `p` on this grid moved to the same place relative to `other` (another output's).
    public func map(_ p: Point, to other: PatternGrid) -> Point {
        let k = cell > 0 ? other.cell / cell : 1
        return Point(x: other.origin.x + (p.x - origin.x) * k, y: other.origin.y + (p.y - origin.y) * k)
    }
    /// The radius nodes are drawn with.
    public var nodeRadius: Double { cell * 0.16 }

    public func center(of node: Int) -> Point {
        Point(x: origin.x + (Double(node % columns) + 0.5) * cell,
              y: origin.y + (Double(node / columns) + 0.5) * cell)
    }

    /// The node whose hit circle contains `p`, if any.
    public func node(at p: Point) -> Int? {
        let c = Int(((p.x - origin.x) / cell).rounded(.down))
        let r = Int(((p.y - origin.y) / cell).rounded(.down))
        guard r >= 0, r < rows, c >= 0, c < columns else { return nil }
        let n = r * columns + c
        return center(of: n).distance(to: p) <= hitRadius ? n : nil
    }

    /// Nodes whose hit circle the segment a→b passes through, in the order the segment
    /// meets them, so a fast swipe between two samples skips nothing.
    public func nodes(alongSegment a: Point, _ b: Point) -> [Int] {
        let dx = b.x - a.x, dy = b.y - a.y
        let len2 = dx * dx + dy * dy
        var hits: [(t: Double, node: Int)] = []
        // Only cells the segment's bounding box touches can be hit.
        let c0 = max(0, Int(((min(a.x, b.x) - hitRadius - origin.x) / cell).rounded(.down)))
        let c1 = min(columns - 1, Int(((max(a.x, b.x) + hitRadius - origin.x) / cell).rounded(.down)))
        let r0 = max(0, Int(((min(a.y, b.y) - hitRadius - origin.y) / cell).rounded(.down)))
        let r1 = min(rows - 1, Int(((max(a.y, b.y) + hitRadius - origin.y) / cell).rounded(.down)))
        guard c0 <= c1, r0 <= r1 else { return [] }
        for r in r0...r1 {
            for c in c0...c1 {
                let n = r * columns + c
                let p = center(of: n)
                // Closest point of the segment to the centre.
                var t = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0
                t = min(1, max(0, t))
                let q = Point(x: a.x + t * dx, y: a.y + t * dy)
                if q.distance(to: p) <= hitRadius { hits.append((t, n)) }
            }
        }
        return hits.sorted { $0.t < $1.t }.map(\.node)
    }

    /// The path after a finger moved from `a` to `b`: each node whose hit circle the
    /// segment passes through joins, unless chosen already, after the unused nodes on the
    /// line from the last chosen node to it (the gcd rule). The one rule of drawing: the
    /// lock screen's (`PatternLock`) and the tools' (`Pattern.drawn(on:)`).
    public func extend(_ path: inout [Int], from a: Point, to b: Point) {
        for n in nodes(alongSegment: a, b) where !path.contains(n) {
            if let last = path.last {
                for m in nodes(between: last, n) where !path.contains(m) { path.append(m) }
            }
            path.append(n)
        }
    }

    /// The finger on a node chosen already, under `repeat = allowed`: where it entered the
    /// node's hit circle and its point nearest the centre since. The node is chosen again
    /// when the finger lifts there, or leaves turned by `Revisit.turn` or more; a finger
    /// going straight on passes over it.
    public struct Revisit: Hashable, Sendable {
        public var node: Int
        public var entry: Point
        public var nearest: Point

        /// The least turn, in degrees, that makes a node chosen again: a corner, not the
        /// curve of a stroke passing over it.
        public static let turn = 45

        /// The cosine of the turn of a finger that entered at `entry`, came nearest the
        /// centre at `nearest` and left at `exit` (1 going straight on, -1 going back);
        /// 1 when it only grazed the circle (no direction to compare).
        public static func cosine(entry: Point, nearest: Point, exit: Point) -> Double {
            let ux = nearest.x - entry.x, uy = nearest.y - entry.y
            let vx = exit.x - nearest.x, vy = exit.y - nearest.y
            let lu = (ux * ux + uy * uy).squareRoot(), lv = (vx * vx + vy * vy).squareRoot()
            guard lu > 1e-9, lv > 1e-9 else { return 1 }
            return (ux * vx + uy * vy) / (lu * lv)
        }

        /// Whether a finger leaving at `exit` came back onto the node: it turned by
        /// `turn` degrees or more (cos 45 = 0.7071...; the grid's exact 45-degree corners
        /// are not tipped by rounding).
        public func turned(leavingAt exit: Point) -> Bool {
            Self.cosine(entry: entry, nearest: nearest, exit: exit) <= 0.5.squareRoot() + 1e-9
        }
    }

    /// `extend(_:from:to:)` under the repeat policy. Under `never` it is that rule and
    /// `revisit` stays nil. Under `allowed` a node not chosen yet joins as there; a node
    /// chosen already, other than the last, joins again when the finger comes back onto
    /// it: it enters the node's hit circle and leaves it turned by 45 degrees or more
    /// (measured from its way in to the point nearest the centre, and from there to its
    /// way out), or lifts there (`lift`). A finger passing over it, straight on, however
    /// slowly, adds nothing; the last node never follows itself.
    public func extend(_ path: inout [Int], revisit: inout Revisit?, from a: Point, to b: Point,
                       repeats: PatternRepeat) {
        switch repeats {
        case .never:
            revisit = nil
            extend(&path, from: a, to: b)
        case .allowed:
            extendAllowingRepeats(&path, revisit: &revisit, from: a, to: b)
        }
    }

    /// The finger lifted where `extend` left it: a chosen node it came onto joins again.
    public func lift(_ path: inout [Int], revisit: inout Revisit?) {
        if let r = revisit { join(r.node, to: &path) }
        revisit = nil
    }

    /// `n` joins after the nodes not chosen yet on the line from the last chosen node to
    /// it (the gcd rule).
    private func join(_ n: Int, to path: inout [Int]) {
        if let last = path.last {
            for m in nodes(between: last, n) where !path.contains(m) { path.append(m) }
        }
        path.append(n)
    }

    private func extendAllowingRepeats(_ path: inout [Int], revisit: inout Revisit?, from a: Point, to b: Point) {
        let dx = b.x - a.x, dy = b.y - a.y
        let len2 = dx * dx + dy * dy
        let r2 = hitRadius * hitRadius
        func point(_ t: Double) -> Point { Point(x: a.x + t * dx, y: a.y + t * dy) }
        // The stretch of the segment inside each hit circle it meets, in the order the
        // finger meets them (circles do not overlap: the stretches do not either).
        var inside: [(t0: Double, t1: Double, node: Int, enters: Bool, leaves: Bool)] = []
        let c0 = max(0, Int(((min(a.x, b.x) - hitRadius - origin.x) / cell).rounded(.down)))
        let c1 = min(columns - 1, Int(((max(a.x, b.x) + hitRadius - origin.x) / cell).rounded(.down)))
        let r0 = max(0, Int(((min(a.y, b.y) - hitRadius - origin.y) / cell).rounded(.down)))
        let r1 = min(rows - 1, Int(((max(a.y, b.y) + hitRadius - origin.y) / cell).rounded(.down)))
        if c0 <= c1, r0 <= r1 {
            for row in r0...r1 {
                for col in c0...c1 {
                    let n = row * columns + col
                    let p = center(of: n)
                    let fx = a.x - p.x, fy = a.y - p.y
                    let aIn = fx * fx + fy * fy <= r2
                    let bIn = (b.x - p.x) * (b.x - p.x) + (b.y - p.y) * (b.y - p.y) <= r2
                    if len2 == 0 {
                        if aIn { inside.append((0, 0, n, false, false)) }
                        continue
                    }
                    // |a + t d - p|^2 = r^2
                    let h = fx * dx + fy * dy
                    let disc = h * h - len2 * (fx * fx + fy * fy - r2)
                    guard disc >= 0 else { continue }
                    let s = disc.squareRoot()
                    let t0 = aIn ? 0 : (-h - s) / len2, t1 = bIn ? 1 : (-h + s) / len2
                    guard t0 <= t1, t1 >= 0, t0 <= 1 else { continue }
                    inside.append((max(0, t0), min(1, t1), n, !aIn, !bIn))
                }
            }
        }
        for stretch in inside.sorted(by: { $0.t0 < $1.t0 }) {
            let n = stretch.node
            // The point of the stretch nearest the centre.
            let p = center(of: n)
            var t = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0
            t = min(stretch.t1, max(stretch.t0, t))
            let near = point(t)
            if !path.contains(n) {
                // Not chosen yet: it joins as under `never` (also if the finger was
                // already inside, as after the grid was relaid).
                revisit = nil
                join(n, to: &path)
            } else if stretch.enters {
                revisit = n == path.last ? nil : Revisit(node: n, entry: point(stretch.t0), nearest: near)
            } else if var r = revisit, r.node == n,
                      near.distance(to: p) < r.nearest.distance(to: p) {
                r.nearest = near
                revisit = r
            }
            if stretch.leaves, let r = revisit, r.node == n {
                if r.turned(leavingAt: point(stretch.t1)) { join(n, to: &path) }
                revisit = nil
            }
        }
    }

    /// A grid of `rows` x `columns` of 100-pixel cells with the hit factor of the config:
    /// what a pattern is drawn on, apart from any screen (the rule does not depend on the
    /// scale).
    public static func unit(rows: Int, columns: Int, hitFactor: Double = 0.6) -> PatternGrid {
        PatternGrid(rows: rows, columns: columns, origin: Point(x: 0, y: 0), cell: 100, hitFactor: hitFactor)
    }

    /// Nodes lying exactly on the straight line between two nodes (the gcd rule): a
    /// pattern from 0 to 2 on a 3x3 grid passes through 1. Knight moves yield nothing.
    public func nodes(between a: Int, _ b: Int) -> [Int] {
        Self.nodes(between: a, b, columns: columns)
    }

    /// `nodes(between:_:)` on any grid `columns` wide.
    public static func nodes(between a: Int, _ b: Int, columns: Int) -> [Int] {
        let dr = b / columns - a / columns, dc = b % columns - a % columns
        let g = Self.gcd(abs(dr), abs(dc))
        guard g > 1 else { return [] }
        let sr = dr / g, sc = dc / g
        return (1..<g).map { k in (a / columns + k * sr) * columns + (a % columns + k * sc) }
    }

    static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }
}

/// An attempt or a secret: ordered node indices on a grid of a given size.
/// Its canonical text ("3x3:0-1-2-5-8") is unambiguous for any grid size.
public struct Pattern: Hashable, Sendable {
    public var rows: Int
    public var columns: Int
    public var nodes: [Int]

    public init(rows: Int, columns: Int, nodes: [Int]) {
        self.rows = rows; self.columns = columns; self.nodes = nodes
    }

    public var canonical: String {
        "\(rows)x\(columns):" + nodes.map(String.init).joined(separator: "-")
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case malformed(String), nodeOutOfRange(Int), repeatedNode(Int)
        public var description: String {
            switch self {
            case .malformed(let why): "malformed pattern: \(why)"
            case .nodeOutOfRange(let n): "node \(n) is outside the grid"
            case .repeatedNode(let n): "node \(n) is used twice"
            }
        }
    }

    /// Parses node numbers separated by '-' or ',' (from 0, row-major) for a grid.
    public init(parsing text: String, rows: Int, columns: Int) throws(ParseError) {
        try self.init(parsing: text, rows: rows, columns: columns, repeats: false)
    }

    init(parsing text: String, rows: Int, columns: Int, repeats: Bool) throws(ParseError) {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == "," || $0 == " " })
        if parts.isEmpty { throw .malformed("no nodes") }
        var seen = Set<Int>(), nodes: [Int] = []
        for p in parts {
            guard let n = Int(p) else { throw .malformed("'\(p)' is not a node number") }
            guard n >= 0, n < rows * columns else { throw .nodeOutOfRange(n) }
            guard seen.insert(n).inserted || repeats else { throw .repeatedNode(n) }
            nodes.append(n)
        }
        self.init(rows: rows, columns: columns, nodes: nodes)
    }
}

/// Only what a finger can draw: the one rule, shared by everything that makes a pattern's
/// hash (`hash-pattern`, `set-secret`, `enroll`), of the lock screen's `PatternLock`
/// (`PatternGrid.extend`). Under `repeat = never` a node joins the path once; under
/// `allowed` a chosen node joins again where the finger comes back onto it (it turns
/// there by 45 degrees or more, or the pattern ends there), never where it goes straight
/// on over it, and never right after itself. A node on the straight segment between two
/// chosen nodes (the gcd rule), or whose hit circle the finger crosses on its way, joins
/// on the way if it is not chosen yet; and a path shorter than the minimum length (in
/// nodes drawn, a repeated one counted each time) is not an attempt. A secret the finger
/// cannot draw as written could never unlock the device.
extension Pattern {
    /// The path a finger going straight from node centre to node centre through these
    /// nodes, in order, and lifting on the last, produces on `grid`.
    public func drawn(on grid: PatternGrid, repeats: PatternRepeat = .never) -> Pattern {
        var path: [Int] = []
        var revisit: PatternGrid.Revisit?
        if let first = nodes.first { path.append(first) }
        for (a, b) in zip(nodes, nodes.dropFirst()) {
            grid.extend(&path, revisit: &revisit, from: grid.center(of: a), to: grid.center(of: b), repeats: repeats)
        }
        grid.lift(&path, revisit: &revisit)
        return Pattern(rows: rows, columns: columns, nodes: path)
    }

    /// Why a pattern cannot be a secret.
    public enum Undrawable: Error, Equatable, Sendable, CustomStringConvertible {
        case unreadable(ParseError)
        /// `node` comes again; `drawn` is what the finger produces.
        case repeatedNode(Int, drawn: Pattern)
        /// From `from` to `to` the finger passes over `over`, not chosen yet, which joins.
        case passesOver(from: Int, to: Int, over: Int, drawn: Pattern)
        /// Repeats allowed: `node` comes right after itself.
        case followsItself(Int)
        /// Repeats allowed: from `from` through `over` (chosen already) to `to` the finger
        /// turns less than 45 degrees, so it passes over `over`, which does not join again.
        case goesStraightOn(from: Int, over: Int, to: Int, drawn: Pattern)
        case tooShort(Int, minimum: Int)
        /// The minimum length is more than the grid has nodes (no repeats).
        case gridTooSmall(nodes: Int, minimum: Int)

        public var description: String {
            func form(_ p: Pattern) -> String { p.nodes.map(String.init).joined(separator: "-") }
            switch self {
            case .unreadable(let e): return "\(e)"
            case .repeatedNode(let n, let drawn):
                return "node \(n) is used twice, and a node joins once: drawn, this is \(form(drawn))"
            case .passesOver(let a, let b, let m, let drawn):
                return "from \(a) to \(b) the finger passes over \(m), which joins there: drawn, this is \(form(drawn))"
            case .followsItself(let n):
                return "node \(n) follows itself: a node comes again only after another"
            case .goesStraightOn(let a, let m, let b, let drawn):
                return "from \(a) through \(m) to \(b) the finger turns less than \(PatternGrid.Revisit.turn) degrees at \(m), "
                    + "so it passes over \(m), which joins again only where the stroke turns or ends: drawn, this is \(form(drawn))"
            case .tooShort(let n, let minimum):
                return "a pattern connects at least \(minimum) nodes (min_length); this one has \(n)"
            case .gridTooSmall(let n, let minimum):
                return "min_length \(minimum) is more than the \(n) nodes of the grid: no pattern can be drawn"
            }
        }
    }

    /// The pattern written in `text` if a finger draws it as written on `grid` and it has
    /// at least `minimumLength` nodes; else why not, naming the form a finger produces.
    public static func drawable(_ text: String, on grid: PatternGrid, minimumLength: Int,
                                repeats: PatternRepeat = .never) throws(Undrawable) -> Pattern {
        let p: Pattern
        do { p = try Pattern(parsing: text, rows: grid.rows, columns: grid.columns, repeats: true) } catch {
            throw .unreadable(error)
        }
        try p.checkDrawable(on: grid, minimumLength: minimumLength, repeats: repeats)
        return p
    }

    /// Throws unless a finger draws exactly these nodes on `grid` and there are enough.
    public func checkDrawable(on grid: PatternGrid, minimumLength: Int, repeats: PatternRepeat = .never) throws(Undrawable) {
        if repeats == .never && minimumLength > rows * columns {
            throw .gridTooSmall(nodes: rows * columns, minimum: minimumLength)
        }
        let d = drawn(on: grid, repeats: repeats)
        if d.nodes != nodes {
            let i = (0..<min(d.nodes.count, nodes.count)).first(where: { d.nodes[$0] != nodes[$0] }) ?? min(d.nodes.count, nodes.count)
            switch repeats {
            case .never:
                var seen = Set<Int>()
                if let r = nodes.firstIndex(where: { !seen.insert($0).inserted }), r <= i {
                    throw .repeatedNode(nodes[r], drawn: d)
                }
                throw .passesOver(from: nodes[i - 1], to: nodes[i], over: d.nodes[i], drawn: d)
            case .allowed:
                // Both start on the first node and end on the last: 0 < i < nodes.count.
                guard i > 0, i < nodes.count else {
                    throw .passesOver(from: nodes[max(0, nodes.count - 2)], to: nodes[nodes.count - 1],
                                      over: d.nodes[min(i, d.nodes.count - 1)], drawn: d)
                }
                if nodes[i] == nodes[i - 1] { throw .followsItself(nodes[i]) }
                // The step to nodes[i] alone, from where the two agree.
                var path = Array(nodes[..<i])
                var revisit: PatternGrid.Revisit?
                grid.extend(&path, revisit: &revisit, from: grid.center(of: nodes[i - 1]), to: grid.center(of: nodes[i]),
                            repeats: .allowed)
                if path.count > i || i + 1 == nodes.count {
                    throw .passesOver(from: nodes[i - 1], to: nodes[i], over: path.count > i ? path[i] : d.nodes[i], drawn: d)
                }
                throw .goesStraightOn(from: nodes[i - 1], over: nodes[i], to: nodes[i + 1], drawn: d)
            }
        }
        if nodes.count < minimumLength { throw .tooShort(nodes.count, minimum: minimumLength) }
    }
}
