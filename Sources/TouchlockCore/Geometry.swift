/// A point in screen pixels (origin top left, y down).
public struct Point: Hashable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }

    /// The nearest point on whole pixels.
    public var rounded: Point { Point(x: x.rounded(), y: y.rounded()) }

    public func distance(to p: Point) -> Double { ((x - p.x) * (x - p.x) + (y - p.y) * (y - p.y)).squareRoot() }
    public var description: String { "(\(x), \(y))" }
}

/// A size in screen pixels.
public struct Size: Hashable, Sendable {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) { self.width = width; self.height = height }
}

/// An integer rectangle in screen pixels: the unit of damage and of copies to scanout.
public struct PixelRect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }

    /// The smallest pixel rectangle covering a circle, plus `margin` pixels.
    public init(around c: Point, radius: Double, margin: Double = 2) {
        let r = radius + margin
        let x0 = Int((c.x - r).rounded(.down)), y0 = Int((c.y - r).rounded(.down))
        let x1 = Int((c.x + r).rounded(.up)), y1 = Int((c.y + r).rounded(.up))
        self.init(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// The smallest pixel rectangle covering a segment stroked `width` wide with round caps.
    public init(segment a: Point, _ b: Point, width: Double) {
        let r = width / 2 + 2
        let x0 = Int((min(a.x, b.x) - r).rounded(.down)), y0 = Int((min(a.y, b.y) - r).rounded(.down))
        let x1 = Int((max(a.x, b.x) + r).rounded(.up)), y1 = Int((max(a.y, b.y) + r).rounded(.up))
        self.init(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    public var isEmpty: Bool { width <= 0 || height <= 0 }
    public var area: Int { isEmpty ? 0 : width * height }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }

    public func union(_ o: PixelRect) -> PixelRect {
        if isEmpty { return o }
        if o.isEmpty { return self }
        let x0 = min(x, o.x), y0 = min(y, o.y)
        return PixelRect(x: x0, y: y0, width: max(maxX, o.maxX) - x0, height: max(maxY, o.maxY) - y0)
    }

    public func intersection(_ o: PixelRect) -> PixelRect {
        let x0 = max(x, o.x), y0 = max(y, o.y)
        let x1 = min(maxX, o.maxX), y1 = min(maxY, o.maxY)
        if x1 <= x0 || y1 <= y0 { return PixelRect(x: 0, y: 0, width: 0, height: 0) }
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    public func intersects(_ o: PixelRect) -> Bool { !intersection(o).isEmpty }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// A damage region: a short list of rectangles clipped to the screen. Rectangles that
/// whose union covers little more than the two, or one of which holds the other, are merged.
/// Rectangles may overlap: drawing and copying a pixel twice costs less than repainting
/// the empty corners of a merged box.
public struct Damage: Hashable, Sendable {
    public private(set) var rects: [PixelRect] = []
    public let bounds: PixelRect

    public init(bounds: Size) { self.bounds = PixelRect(x: 0, y: 0, width: bounds.width, height: bounds.height) }

    /// Past this many rectangles the damage becomes their bounding box.
    public static let maximumRects = 48

    public var isEmpty: Bool { rects.isEmpty }
    public var area: Int { rects.reduce(0) { $0 + $1.area } }

    /// Damage for a segment stroked `width` wide with round caps: a chain of boxes along
    /// it, each about three widths long, so a long diagonal line does not damage the
    /// whole square it spans.
    public mutating func addSegment(_ a: Point, _ b: Point, width: Double) {
        let length = a.distance(to: b)
        let pieces = max(1, Int((length / max(3 * width, 24)).rounded(.up)))
        var p = a
        for k in 1...pieces {
            let t = Double(k) / Double(pieces)
            let q = Point(x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t)
            add(PixelRect(segment: p, q, width: width))
            p = q
        }
    }

    public mutating func add(_ r: PixelRect) {
        var r = r.intersection(bounds)
        if r.isEmpty { return }
        var i = 0
        while i < rects.count {
            let u = rects[i].union(r)
            if u.area <= (rects[i].area + r.area) * 5 / 4 || u == rects[i] || u == r {
                r = u
                rects.remove(at: i)
                i = 0
            } else {
                i += 1
            }
        }
        rects.append(r)
        if rects.count > Self.maximumRects { // keep the list bounded: collapse to one box
            let all = rects.dropFirst().reduce(rects[0]) { $0.union($1) }
            rects = [all]
        }
    }

    public mutating func addAll() { rects = [bounds] }
    public mutating func formUnion(_ o: Damage) { for r in o.rects { add(r) } }
    public mutating func removeAll() { rects.removeAll(keepingCapacity: true) }
}
