import Testing
import TouchlockCore

/// Which output a touch panel belongs to on a kiosk with several screens.
struct PanelPlacementTests {
    let outputs = [
        PanelPlacement.Output(name: "eDP-1", millimetres: Size(width: 293, height: 165)),   // the 13" built-in panel
        PanelPlacement.Output(name: "HDMI-A-1", millimetres: Size(width: 527, height: 296)), // a 24" monitor
        PanelPlacement.Output(name: "DP-1", millimetres: nil),
    ]

    @Test func thePanelOfAScreensSizeBelongsToIt() {
        #expect(PanelPlacement.output(forPanel: Size(width: 520, height: 292), named: nil, among: outputs) == 1)
        #expect(PanelPlacement.output(forPanel: Size(width: 292, height: 164), named: nil, among: outputs) == 0)
        // Reported turned against the monitor (a portrait kiosk).
        #expect(PanelPlacement.output(forPanel: Size(width: 296, height: 527), named: nil, among: outputs) == 1)
    }

    @Test func theNamedOutputWinsAndOtherwiseTheFirst() {
        #expect(PanelPlacement.output(forPanel: Size(width: 520, height: 292), named: "DP-1", among: outputs) == 2)
        // A name that is not connected falls back to the size, then the first.
        #expect(PanelPlacement.output(forPanel: Size(width: 520, height: 292), named: "HDMI-A-2", among: outputs) == 1)
        // No resolution on the panel's axes, or no screen of its size: the first.
        #expect(PanelPlacement.output(forPanel: nil, named: nil, among: outputs) == 0)
        #expect(PanelPlacement.output(forPanel: Size(width: 400, height: 300), named: nil, among: outputs) == 0)
    }

    /// A panel of `mm` millimetres, 40 units per millimetre.
    func panel(_ name: String, _ mm: Size) -> DeviceDescription {
        DeviceDescription(name: name, axes: [
            EventCode.ABS_MT_POSITION_X: AxisRange(minimum: 0, maximum: Int32(mm.width * 40), resolution: 40),
            EventCode.ABS_MT_POSITION_Y: AxisRange(minimum: 0, maximum: Int32(mm.height * 40), resolution: 40)])
    }

    @Test func eachPanelQuirkedToAnOutputTakesTouchesInThatOutputsLayout() throws {
        var config = Config()
        // Each panel is the size of the other output, and [input] output names a third:
        // the quirk wins over both.
        try config.set(section: "input", key: "output", value: "DP-1")
        try config.apply(settings: "input_quirk = \"Panel A\" output=HDMI-A-1\n"
                         + "input_quirk = \"Panel B\" swap_xy\ninput_quirk = \"Panel B\" output=eDP-1\n")
        let sizes = [Size(width: 1920, height: 1080), Size(width: 3840, height: 2160), Size(width: 1280, height: 800)]
        let layouts = zip(sizes, outputs).map { size, o in
            LockScreen.make(config: config, size: size,
                            density: Density(screen: size, physicalMillimetres: (o.millimetres?.width ?? 300, o.millimetres?.height ?? 190)),
                            shuffleSeed: 7)
        }
        for (device, expected) in [(panel("Panel A", Size(width: 292, height: 164)), 1), (panel("Panel B", Size(width: 520, height: 292)), 0)] {
            let placed = PanelPlacement.output(for: device, quirks: config.inputQuirks, named: config.touchOutput, among: outputs)
            #expect(placed.index == expected && placed.unknown == nil, "\(device.name)")
            let x = try #require(device.axes[EventCode.ABS_MT_POSITION_X]), y = try #require(device.axes[EventCode.ABS_MT_POSITION_Y])
            let transform = TouchTransform(x: x, y: y, screen: sizes[placed.index],
                                           quirk: InputQuirk.merged(config.inputQuirks, for: device))
            // The finger on the panel where its output shows the centre node (Panel B's
            // axes are swapped).
            let grid = try #require(layouts[placed.index].pattern?.grid), size = sizes[placed.index]
            let c = grid.center(of: 4)
            var n = (x: c.x / Double(size.width), y: c.y / Double(size.height))
            if device.name == "Panel B" { n = (n.y, n.x) }
            let p = transform.map(DevicePoint(x: Int32(n.x * Double(x.maximum)), y: Int32(n.y * Double(y.maximum))))
            #expect(grid.node(at: p) == 4, "\(device.name) at \(p)")
            // In the other output's layout the same point is not the centre node.
            #expect(try #require(layouts[1 - expected].pattern?.grid).node(at: p) != 4, "\(device.name)")
        }
    }

    @Test func anOutputNamedByAQuirkThatIsNotConnectedIsReportedAndLeftOut() throws {
        let quirks = [try InputQuirk.parse("\"Panel A\" output=HDMI-A-2")]
        let a = panel("Panel A", Size(width: 520, height: 292))
        // Then as without the quirk: [input] output, else the size, else the first.
        #expect(PanelPlacement.output(for: a, quirks: quirks, named: "DP-1", among: outputs) == (2, "HDMI-A-2"))
        #expect(PanelPlacement.output(for: a, quirks: quirks, named: nil, among: outputs) == (1, "HDMI-A-2"))
        #expect(PanelPlacement.output(for: panel("Panel A", Size(width: 400, height: 300)), quirks: quirks, named: nil, among: outputs) == (0, "HDMI-A-2"))
        // Other panels are not concerned.
        #expect(PanelPlacement.output(for: panel("Panel B", Size(width: 520, height: 292)), quirks: quirks, named: nil, among: outputs) == (1, nil))
        // The option reads back as written, and a later quirk's output replaces an earlier one.
        #expect(quirks[0].text == "\"Panel A\" output=HDMI-A-2")
        let later = quirks + [try InputQuirk.parse("\"Panel A\" invert_x output=eDP-1")]
        #expect(InputQuirk.merged(later, for: a)?.output == "eDP-1")
        #expect(throws: InputQuirk.ParseError.self) { try InputQuirk.parse("\"Panel A\" output=") }
    }

    @Test func aPanelsSizeComesFromItsAxesResolution() {
        var d = DeviceDescription(axes: [EventCode.ABS_MT_POSITION_X: AxisRange(minimum: 0, maximum: 20800, resolution: 40),
                                         EventCode.ABS_MT_POSITION_Y: AxisRange(minimum: 0, maximum: 11680, resolution: 40)])
        #expect(d.millimetres == Size(width: 520, height: 292))
        d.axes = [EventCode.ABS_X: AxisRange(minimum: 0, maximum: 4095), EventCode.ABS_Y: AxisRange(minimum: 0, maximum: 4095)]
        #expect(d.millimetres == nil)
    }

    @Test func aTouchOnAnotherOutputLandsOnTheSameNodeOrKeyOfTheLockScreen() throws {
        var config = Config()
        config.screens.methods = .both
        func make(_ size: Size, _ mm: (width: Int, height: Int)) -> LockScreen {
            LockScreen.make(config: config, size: size, density: Density(screen: size, physicalMillimetres: mm), shuffleSeed: 7)
        }
        let lock = make(Size(width: 1280, height: 800), (320, 200))
        let view = make(Size(width: 3840, height: 2160), (600, 340))
        let grid = try #require(lock.pattern?.grid), other = try #require(view.pattern?.grid)
        for node in [0, 4, 8] {
            let p = lock.point(other.center(of: node), from: view)
            #expect(grid.node(at: p) == node)
        }
        let toggle = try #require(view.toggleRect)
        let p = lock.point(Point(x: Double(toggle.x) + 2, y: Double(toggle.y) + 2), from: view)
        #expect(lock.toggleRect.map { Double($0.x) <= p.x && p.x < Double($0.x + $0.width) } == true)
    }
}
