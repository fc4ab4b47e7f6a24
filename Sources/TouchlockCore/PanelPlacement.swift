/// Which output a touch panel belongs to: the one its quirk names (`output=NAME`), else
/// the one `[input] output` names, else the one whose physical size is the panel's (a
/// touchscreen glued on a monitor is that monitor's size, turned or not), else the first.
public enum PanelPlacement {
    /// An output as the matching sees it.
    public struct Output: Hashable, Sendable {
        public var name: String
        /// Millimetres, as the connector reports them (nil: it reports none).
        public var millimetres: Size?
        public init(name: String, millimetres: Size?) {
            self.name = name
            self.millimetres = millimetres
        }
    }

    /// Sizes within this fraction of each other on both sides are the same screen.
    public static let tolerance = 0.12

    /// The index in `outputs` (never empty) for `device`; `unknown`: the output its quirks
    /// name when none of `outputs` has that name (it is then placed as without the quirk).
    public static func output(for device: DeviceDescription, quirks: [InputQuirk], named: String?,
                              among outputs: [Output]) -> (index: Int, unknown: String?) {
        let quirked = InputQuirk.merged(quirks, for: device)?.output
        if let quirked, let i = outputs.firstIndex(where: { $0.name == quirked }) { return (i, nil) }
        return (output(forPanel: device.millimetres, named: named, among: outputs), quirked)
    }

    /// The index in `outputs` (never empty) for a panel of `panel` millimetres.
    public static func output(forPanel panel: Size?, named: String?, among outputs: [Output]) -> Int {
        if let named, let i = outputs.firstIndex(where: { $0.name == named }) { return i }
        guard let panel, panel.width > 0, panel.height > 0 else { return 0 }
        func mismatch(_ o: Size) -> Double {
            func off(_ a: Int, _ b: Int) -> Double { abs(Double(a - b)) / Double(max(a, b)) }
            // A panel may report its axes turned against the monitor's.
            return min(max(off(panel.width, o.width), off(panel.height, o.height)),
                       max(off(panel.width, o.height), off(panel.height, o.width)))
        }
        var best: (index: Int, mismatch: Double)?
        for (i, o) in outputs.enumerated() {
            guard let mm = o.millimetres, mm.width > 0, mm.height > 0 else { continue }
            let m = mismatch(mm)
            if m <= tolerance, m < best?.mismatch ?? .infinity { best = (i, m) }
        }
        return best?.index ?? 0
    }
}

extension DeviceDescription {
    /// The touch surface in millimetres, from its position axes' resolution (units per
    /// millimetre: the multitouch axes, else ABS_X and ABS_Y); nil when the driver gives
    /// no resolution.
    public var millimetres: Size? {
        for (xc, yc) in [(EventCode.ABS_MT_POSITION_X, EventCode.ABS_MT_POSITION_Y), (EventCode.ABS_X, EventCode.ABS_Y)] {
            guard let x = axes[xc], let y = axes[yc] else { continue }
            guard x.resolution > 0, y.resolution > 0 else { return nil }
            return Size(width: Int(x.maximum - x.minimum) / Int(x.resolution), height: Int(y.maximum - y.minimum) / Int(y.resolution))
        }
        return nil
    }
}
