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
/// (`PatternGrid.extend`). A node joins the path once; a node on the straight segment
/// between two chosen nodes (the gcd rule), or whose hit circle the finger crosses on its
/// way, joins on the way if it is not chosen yet; and a path shorter than the minimum
/// length is not an attempt. A secret the finger cannot draw as written could never
/// unlock the device.
extension Pattern {
    /// The path a finger going straight from node centre to node centre through these
    /// nodes, in order, produces on `grid`.
    public func drawn(on grid: PatternGrid) -> Pattern {
        var path: [Int] = []
        if let first = nodes.first { path.append(first) }
        for (a, b) in zip(nodes, nodes.dropFirst()) {
            grid.extend(&path, from: grid.center(of: a), to: grid.center(of: b))
        }
        return Pattern(rows: rows, columns: columns, nodes: path)
    }

    /// Why a pattern cannot be a secret.
    public enum Undrawable: Error, Equatable, Sendable, CustomStringConvertible {
        case unreadable(ParseError)
        /// `node` comes again; `drawn` is what the finger produces.
        case repeatedNode(Int, drawn: Pattern)
        /// From `from` to `to` the finger passes over `over`, not chosen yet, which joins.
        case passesOver(from: Int, to: Int, over: Int, drawn: Pattern)
        case tooShort(Int, minimum: Int)
        /// The minimum length is more than the grid has nodes.
        case gridTooSmall(nodes: Int, minimum: Int)

        public var description: String {
            func form(_ p: Pattern) -> String { p.nodes.map(String.init).joined(separator: "-") }
            switch self {
            case .unreadable(let e): return "\(e)"
            case .repeatedNode(let n, let drawn):
                return "node \(n) is used twice, and a node joins once: drawn, this is \(form(drawn))"
            case .passesOver(let a, let b, let m, let drawn):
                return "from \(a) to \(b) the finger passes over \(m), which joins there: drawn, this is \(form(drawn))"
            case .tooShort(let n, let minimum):
                return "a pattern connects at least \(minimum) nodes (min_length); this one has \(n)"
            case .gridTooSmall(let n, let minimum):
                return "min_length \(minimum) is more than the \(n) nodes of the grid: no pattern can be drawn"
            }
        }
    }

    /// The pattern written in `text` if a finger draws it as written on `grid` and it has
    /// at least `minimumLength` nodes; else why not, naming the form a finger produces.
    public static func drawable(_ text: String, on grid: PatternGrid, minimumLength: Int) throws(Undrawable) -> Pattern {
        let p: Pattern
        do { p = try Pattern(parsing: text, rows: grid.rows, columns: grid.columns, repeats: true) } catch {
            throw .unreadable(error)
        }
        try p.checkDrawable(on: grid, minimumLength: minimumLength)
        return p
    }

    /// Throws unless a finger draws exactly these nodes on `grid` and there are enough.
    public func checkDrawable(on grid: PatternGrid, minimumLength: Int) throws(Undrawable) {
        if minimumLength > rows * columns { throw .gridTooSmall(nodes: rows * columns, minimum: minimumLength) }
        let d = drawn(on: grid)
        if d.nodes != nodes {
            let i = (0..<min(d.nodes.count, nodes.count)).first(where: { d.nodes[$0] != nodes[$0] }) ?? min(d.nodes.count, nodes.count)
            var seen = Set<Int>()
            if let r = nodes.firstIndex(where: { !seen.insert($0).inserted }), r <= i {
                throw .repeatedNode(nodes[r], drawn: d)
            }
            throw .passesOver(from: nodes[i - 1], to: nodes[i], over: d.nodes[i], drawn: d)
        }
        if nodes.count < minimumLength { throw .tooShort(nodes.count, minimum: minimumLength) }
    }
}
