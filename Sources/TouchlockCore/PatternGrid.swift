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

    /// Nodes lying exactly on the straight line between two nodes (the gcd rule): a
    /// pattern from 0 to 2 on a 3x3 grid passes through 1. Knight moves yield nothing.
    public func nodes(between a: Int, _ b: Int) -> [Int] {
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
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == "," || $0 == " " })
        if parts.isEmpty { throw .malformed("no nodes") }
        var seen = Set<Int>(), nodes: [Int] = []
        for p in parts {
            guard let n = Int(p) else { throw .malformed("'\(p)' is not a node number") }
            guard n >= 0, n < rows * columns else { throw .nodeOutOfRange(n) }
            guard seen.insert(n).inserted else { throw .repeatedNode(n) }
            nodes.append(n)
        }
        self.init(rows: rows, columns: columns, nodes: nodes)
    }
}
