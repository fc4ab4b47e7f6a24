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

    private static func scale(_ v: Int32, _ a: AxisRange, _ pixels: Int) -> Double {
        let span = Double(Int64(a.maximum) - Int64(a.minimum) + 1)
        return Double(Int64(v) - Int64(a.minimum)) * Double(pixels) / span
    }
}
