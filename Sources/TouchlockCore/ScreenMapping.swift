/// Maps device units to screen pixels from the axis ranges, the way libinput's
/// `_transformed` getters do: the range [min, max] covers the screen edge to edge.
public struct ScreenMapping: Hashable, Sendable {
    public var x: AxisRange
    public var y: AxisRange
    public var screen: Size

    public init(x: AxisRange, y: AxisRange, screen: Size) {
        self.x = x; self.y = y; self.screen = screen
    }

    public func map(_ p: DevicePoint) -> Point {
        Point(x: Self.scale(p.x, x, screen.width), y: Self.scale(p.y, y, screen.height))
    }

    /// An empty or inverted range (a broken device description) counts as one unit wide,
    /// so the result stays finite.
    private static func scale(_ v: Int32, _ a: AxisRange, _ pixels: Int) -> Double {
        let span = Double(max(1, Int64(a.maximum) - Int64(a.minimum) + 1))
        return Double(Int64(v) - Int64(a.minimum)) * Double(pixels) / span
    }
}

extension Point {
    /// The point with each coordinate held within ±2^31 and NaN taken as far off the
    /// screen: whatever a device or a calibration gives, later whole-pixel arithmetic
    /// cannot trap.
    public var bounded: Point {
        func b(_ v: Double) -> Double { v.isNaN ? -2_147_483_648 : min(max(v, -2_147_483_648), 2_147_483_647) }
        return Point(x: b(x), y: b(y))
    }
}
