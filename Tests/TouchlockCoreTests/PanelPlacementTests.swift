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
