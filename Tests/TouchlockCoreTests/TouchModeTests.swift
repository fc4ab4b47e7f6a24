import Testing
@testable import TouchlockCore

extension EventScript {
    /// One protocol A contact: its values, then SYN_MT_REPORT.
    mutating func contact(x: Int32, y: Int32) {
        abs(EventCode.ABS_MT_POSITION_X, x); abs(EventCode.ABS_MT_POSITION_Y, y)
        syn(EventCode.SYN_MT_REPORT, advance: false)
    }
    mutating func syn(_ code: UInt16, advance: Bool) {
        events.append(InputEvent(type: EventCode.EV_SYN, code: code, value: 0, time: Instant(microseconds: time)))
        if advance { time += 8_000 }
    }
}

func frames(_ events: [InputEvent], mode: TouchMode) -> [TouchFrame] {
    var a = TouchFrameAssembler(mode: mode)
    return events.compactMap { a.feed($0) }
}

func describe(abs: [UInt16], keys: [UInt16] = [], direct: Bool = true, slots: Int32? = nil) -> DeviceDescription {
    var axes: [UInt16: AxisRange] = [:]
    for c in abs { axes[c] = AxisRange(minimum: 0, maximum: 1000) }
    if let slots { axes[EventCode.ABS_MT_SLOT] = AxisRange(minimum: 0, maximum: slots - 1) }
    var codes: [UInt16: Set<UInt16>] = [EventCode.EV_ABS: Set(axes.keys)]
    if !keys.isEmpty { codes[EventCode.EV_KEY] = Set(keys) }
    return DeviceDescription(name: "test", properties: direct ? [1] : [], codes: codes, axes: axes)
}

@Suite struct TouchModeTests {
    let mtX = EventCode.ABS_MT_POSITION_X, mtY = EventCode.ABS_MT_POSITION_Y

    @Test func theDescriptionPicksTheProtocol() {
        #expect(describe(abs: [mtX, mtY], slots: 60).touchMode() == .success(.multitouchB(slots: 60)))
        #expect(describe(abs: [mtX, mtY]).touchMode() == .success(.multitouchA))
        #expect(describe(abs: [0, 1], keys: [EventCode.BTN_TOUCH]).touchMode()
                == .success(.single(button: EventCode.BTN_TOUCH, x: 0, y: 1)))
        #expect(describe(abs: [0, 1], keys: [EventCode.BTN_LEFT], direct: false).touchMode()
                == .success(.single(button: EventCode.BTN_LEFT, x: 0, y: 1)))
        // A touchpad: multitouch, indirect, with a button.
        #expect((try? describe(abs: [mtX, mtY], keys: [EventCode.BTN_LEFT], direct: false, slots: 5).touchMode().get()) == nil)
        // A quirk can name the axes that carry the position.
        var q = InputQuirk(match: .name("test")); q.xAxis = EventCode.ABS_Z; q.yAxis = EventCode.ABS_RX
        #expect(describe(abs: [0, 1, 2, 3], keys: [EventCode.BTN_TOUCH]).touchMode(quirk: q)
                == .success(.single(button: EventCode.BTN_TOUCH, x: EventCode.ABS_Z, y: EventCode.ABS_RX)))
    }

    @Test func protocolAContactsKeepTheirIdentityByNearestDistance() {
        var s = EventScript()
        s.contact(x: 100, y: 100); s.syn()
        s.contact(x: 900, y: 900); s.contact(x: 110, y: 100); s.syn()   // order swapped, second finger lands
        s.contact(x: 890, y: 910); s.contact(x: 120, y: 100); s.syn()
        s.contact(x: 880, y: 920); s.syn()                                // the first finger lifts
        s.syn(EventCode.SYN_MT_REPORT, advance: false); s.syn()          // empty report: all up
        let f = frames(s.events, mode: .multitouchA)
        #expect(f.count == 5)
        let first = f[0].touches[0].id
        let byId = f.flatMap(\.touches).filter { $0.id == first }
        #expect(byId.map(\.phase) == [.began, .moved, .moved, .ended])
        #expect(byId.map(\.position?.x) == [100, 110, 120, 120])
        let second = f[1].touches.first { $0.phase == .began }!
        #expect(second.position == DevicePoint(x: 900, y: 900))
        #expect(f[3].touches.first { $0.id == second.id }?.position == DevicePoint(x: 880, y: 920))
        #expect(f[4].touches.map(\.phase) == [.ended])
        #expect(f.flatMap(\.touches).allSatisfy { $0.slot == nil })
    }

    @Test func aProtocolAFrameWithoutContactsEndsThemAll() {
        var s = EventScript()
        s.contact(x: 5, y: 5); s.contact(x: 500, y: 500); s.syn()
        s.key(EventCode.BTN_TOUCH, 0); s.syn()
        let f = frames(s.events, mode: .multitouchA)
        #expect(f.last?.touches.map(\.phase) == [.ended, .ended])
    }

    @Test func aSingleTouchPanelIsOneTouchPerPress() {
        let mode = TouchMode.single(button: EventCode.BTN_LEFT, x: EventCode.ABS_X, y: EventCode.ABS_Y)
        var s = EventScript()
        s.abs(EventCode.ABS_X, 40); s.abs(EventCode.ABS_Y, 50); s.key(EventCode.BTN_LEFT, 1); s.syn()
        s.abs(EventCode.ABS_X, 45); s.syn()
        s.key(EventCode.BTN_LEFT, 0); s.syn()
        s.abs(EventCode.ABS_X, 46); s.syn()                              // hovering: no touch
        s.key(EventCode.BTN_LEFT, 1); s.syn()                            // same place: position kept
        let f = frames(s.events, mode: mode)
        #expect(f.map { $0.touches.map(\.phase) } == [[.began], [.moved], [.ended], [.began]])
        #expect(f[1].touches[0].position == DevicePoint(x: 45, y: 50))
        #expect(f[3].touches[0].position == DevicePoint(x: 46, y: 50))
        #expect(f[0].touches[0].id != f[3].touches[0].id)
    }

    @Test func sixtySlotsAreAllUsable() {
        var s = EventScript()
        s.down(slot: 59, id: 3, x: 1, y: 2); s.syn()
        s.up(slot: 59); s.syn()
        let f = frames(s.events, mode: .multitouchB(slots: 60))
        #expect(f.map { $0.touches.map(\.slot) } == [[59], [59]])
    }

    @Test func aContactWithoutPositionHasNone() {
        var s = EventScript()
        s.abs(EventCode.ABS_MT_TRACKING_ID, 4); s.syn()
        #expect(frames(s.events)[0].touches[0].position == nil)
    }

    @Test func aResyncEndsTouchesWhoseSlotIsEmptyAndRestartsChangedOnes() {
        var s = EventScript()
        s.down(slot: 0, id: 1, x: 5, y: 5); s.down(slot: 1, id: 2, x: 50, y: 50); s.syn()
        var a = TouchFrameAssembler(slotCount: 3)
        for e in s.events { _ = a.feed(e) }
        _ = a.feed(InputEvent(type: EventCode.EV_SYN, code: EventCode.SYN_DROPPED, value: 0, time: Instant(microseconds: 1)))
        let snapshot = DeviceSnapshot(slots: [.init(trackingID: -1), .init(trackingID: 9, x: 60, y: 60), .init(trackingID: -1)])
        let f = a.resync(to: snapshot, at: Instant(microseconds: 99))
        #expect(f?.touches.map(\.phase) == [.ended, .ended, .began])
        #expect(a.touchesDown.map(\.slot) == [1])
    }

    @Test func aTouchAfterAResyncKeepsTheAxisTheKernelDidNotSendAgain() {
        // The daemon opens a panel whose last touch lifted at (500, 300); the next lands at
        // (200, 300): the kernel sends no ABS_MT_POSITION_Y, the value being unchanged.
        var a = TouchFrameAssembler(slotCount: 2)
        let snapshot = DeviceSnapshot(slots: [.init(trackingID: -1, x: 500, y: 300), .init(trackingID: -1)])
        #expect(a.resync(to: snapshot, at: Instant(microseconds: 1))?.touches.isEmpty ?? true)
        var s = EventScript()
        s.abs(EventCode.ABS_MT_SLOT, 0); s.abs(EventCode.ABS_MT_TRACKING_ID, 7)
        s.abs(EventCode.ABS_MT_POSITION_X, 200); s.syn()
        let f = s.events.compactMap { a.feed($0) }
        #expect(f.map { $0.touches.map(\.phase) } == [[.began]])
        #expect(f.first?.touches.first?.position == DevicePoint(x: 200, y: 300))
    }

    @Test func withNonZeroMinimumsTheRangeSpansTheScreen() {
        // The eGalax 0eef:0001 axes start at 42.
        let t = TouchTransform(x: AxisRange(minimum: 42, maximum: 1981), y: AxisRange(minimum: 42, maximum: 1981),
                               screen: Size(width: 1940, height: 1940))
        #expect(t.map(DevicePoint(x: 42, y: 42)) == Point(x: 0, y: 0))
        #expect(t.map(DevicePoint(x: 1981, y: 1981)) == Point(x: 1939, y: 1939))
    }
}

@Suite struct CalibrationTests {
    let range = AxisRange(minimum: 0, maximum: 1000)
    let screen = Size(width: 1001, height: 1001)   // one pixel per device unit

    func map(_ x: Int32, _ y: Int32, quirk: InputQuirk? = nil, matrix: AffineMatrix? = nil,
             orientation: TouchOrientation = TouchOrientation()) -> (Int, Int) {
        let p = TouchTransform(x: range, y: range, screen: screen, quirk: quirk, calibration: matrix,
                               orientation: orientation).map(DevicePoint(x: x, y: y))
        return (Int(p.x.rounded()), Int(p.y.rounded()))
    }

    @Test func aCalibrationMatrixWorksInNormalizedCoordinatesAsLibinputDoes() {
        // libinput's documented example: half the width and height, offset by a quarter.
        let m = AffineMatrix(parsing: "0.5 0 0.25 0 0.5 0.25")!
        #expect(map(0, 0, matrix: m) == (250, 250))
        #expect(map(1000, 1000, matrix: m) == (750, 750))
    }

    @Test func rotationsAndFlipsMoveTheCornersWhereTheDisplayPutsThem() {
        // The top-left corner of the panel, under each display rotation (clockwise).
        #expect(map(0, 0, orientation: TouchOrientation(rotation: .degrees90)) == (1000, 0))
        #expect(map(0, 0, orientation: TouchOrientation(rotation: .degrees180)) == (1000, 1000))
        #expect(map(0, 0, orientation: TouchOrientation(rotation: .degrees270)) == (0, 1000))
        #expect(map(100, 0, orientation: TouchOrientation(flipX: true)) == (900, 0))
        #expect(map(0, 100, orientation: TouchOrientation(flipY: true)) == (0, 900))
    }

    /// Touch follows the display: a finger on the panel pixel where the rotated copy put a
    /// logical pixel lands on that logical pixel, for each rotation, with the panel's own
    /// [input] rotation composed before it (a digitizer mounted upside down on the LCD), and
    /// not with a quirk that says `ignore_display_rotation`.
    @Test(arguments: Rotation.allCases)
    func touchOnARotatedDisplayLandsOnTheLogicalPixelShownThere(rotation: Rotation) throws {
        let panel = Size(width: 800, height: 480)
        let logical = rotation.logicalSize(panel: panel)
        let rx = AxisRange(minimum: 0, maximum: Int32(panel.width - 1))
        let ry = AxisRange(minimum: 0, maximum: Int32(panel.height - 1))
        let plain = TouchTransform(x: rx, y: ry, screen: logical, display: rotation)
        let flipped = TouchTransform(x: rx, y: ry, screen: logical, orientation: TouchOrientation(rotation: .degrees180), display: rotation)
        for (lx, ly) in [(10, 20), (logical.width - 3, 5), (200, logical.height - 9), (logical.width / 2, logical.height / 2)] {
            let p = rotation.panelRect(PixelRect(x: lx, y: ly, width: 1, height: 1), panel: panel)
            let got = plain.map(DevicePoint(x: Int32(p.x), y: Int32(p.y)))
            #expect(abs(got.x - Double(lx)) <= 1.5 && abs(got.y - Double(ly)) <= 1.5, "\(rotation): (\(lx), \(ly)) came out \(got)")
            // The digitizer upside down: the device reports the opposite corner.
            let upsideDown = DevicePoint(x: Int32(panel.width - 1 - p.x), y: Int32(panel.height - 1 - p.y))
            let g2 = flipped.map(upsideDown)
            #expect(abs(g2.x - Double(lx)) <= 1.5 && abs(g2.y - Double(ly)) <= 1.5, "\(rotation) with [input] rotation 180: \(g2)")
        }
        let q = try InputQuirk.parse("\"Rotated Already\" ignore_display_rotation")
        let ignoring = TouchTransform(x: rx, y: ry, screen: logical, quirk: q, display: rotation)
        #expect(ignoring.matrix == .identity)
        #expect(try InputQuirk.parse(q.text) == q)
    }

    @Test func theDisplayRotationIsReadFromTheConfig() throws {
        var c = Config()
        #expect(c.displayRotation == nil)
        #expect(c.text.contains("[display]\nblank_s = 0\nrotation = auto\n"))
        try c.set(section: "display", key: "rotation", value: "270")
        #expect(c.displayRotation == .degrees270)
        #expect(c.text.contains("rotation = 270\n"))
        let e = thrown(Config.BadValue.self) { try c.set(section: "display", key: "rotation", value: "45") }
        #expect(e?.message == "[display] rotation: expected 0, 90, 180, 270 or auto, found '45'")
        try c.set(section: "display", key: "rotation", value: "auto")
        #expect(c.displayRotation == nil)
    }

    @Test func thePanelOrientationNamesTurnThePictureUpright() {
        // The kernel's names: the side of the panel at the top of the device.
        #expect(Rotation(panelOrientation: "Normal") == .degrees0)
        #expect(Rotation(panelOrientation: "Upside Down") == .degrees180)
        #expect(Rotation(panelOrientation: "Left Side Up") == .degrees270)   // left edge on top: logical top drawn on it
        #expect(Rotation(panelOrientation: "Right Side Up") == .degrees90)
        #expect(Rotation(panelOrientation: "Sideways") == nil)
        // Left side up: the logical top row is the panel's left column.
        let panel = Size(width: 800, height: 1280)
        #expect(Rotation.degrees270.panelRect(PixelRect(x: 0, y: 0, width: 1280, height: 1), panel: panel)
                == PixelRect(x: 0, y: 0, width: 1, height: 1280))
    }

    @Test func quirksSwapAndInvertBeforeTheCalibration() throws {
        let q = try InputQuirk.parse("\"Panel Name\" swap_xy invert_x")
        #expect(q.match == .name("Panel Name"))
        #expect(map(100, 300, quirk: q) == (700, 100))
        let scaled = try InputQuirk.parse("0eef:0001 invert_y calibration=0.5,0,0,0,1,0")
        #expect(scaled.match == .vendorProduct(0x0eef, 0x0001))
        #expect(map(200, 100, quirk: scaled) == (100, 900))
    }

    @Test func badQuirksSayWhatIsWrong() {
        #expect(throws: InputQuirk.ParseError.self) { try InputQuirk.parse("0eef:1 swap_xy") }
        #expect(throws: InputQuirk.ParseError.self) { try InputQuirk.parse("0eef:0001") }
        #expect(throws: InputQuirk.ParseError.self) { try InputQuirk.parse("0eef:0001 x=ABS_NOPE") }
        #expect(throws: InputQuirk.ParseError.self) { try InputQuirk.parse("0eef:0001 calibration=1,0,0") }
        #expect(throws: InputQuirk.ParseError.self) { try InputQuirk.parse("\"unclosed swap_xy") }
    }

    @Test func laterQuirksForTheSameDeviceAddUp() throws {
        let d = DeviceDescription(name: "P", id: DeviceID(vendor: 0x0eef, product: 0x0001))
        let qs = [try InputQuirk.parse("0eef:0001 x=ABS_Z y=ABS_RX"), try InputQuirk.parse("\"P\" invert_x"),
                  try InputQuirk.parse("\"Other\" swap_xy")]
        let m = InputQuirk.merged(qs, for: d)
        #expect(m?.xAxis == EventCode.ABS_Z && m?.invertX == true && m?.swapXY == false)
    }

    @Test func theConfigReadsQuirksAndOrientation() throws {
        var c = Config()
        try c.apply(settings: "input_quirk = 0eef:0001 x=ABS_Z y=ABS_RX\ntouch_rotation = 90\ntouch_flip = x\n")
        try c.set(section: "input", key: "quirk", value: "\"ILITEK Multi-Touch\" swap_xy invert_y")
        #expect(c.inputQuirks.count == 2)
        #expect(c.touchOrientation == TouchOrientation(rotation: .degrees90, flipX: true))
        #expect(throws: Config.BadValue.self) { try c.apply(settings: "touch_rotation = 45\n") }
        // --check-config prints every quirk, and what it prints reads back the same.
        #expect(c.text.contains("quirk = 0eef:0001 x=ABS_Z y=ABS_RX\nquirk = \"ILITEK Multi-Touch\" swap_xy invert_y\n"))
        #expect(try InputQuirk.parse(c.inputQuirks[1].text) == c.inputQuirks[1])
    }
}

@Suite struct KeyInputTests {
    @Test func digitsComeFromTheTopRowTheKeypadAndNumericKeys() {
        #expect(KeyInput(code: 2) == .digit(1))       // KEY_1
        #expect(KeyInput(code: 11) == .digit(0))      // KEY_0
        #expect(KeyInput(code: 82) == .digit(0))      // KEY_KP0
        #expect(KeyInput(code: 73) == .digit(9))      // KEY_KP9
        #expect(KeyInput(code: 0x205) == .digit(5))   // KEY_NUMERIC_5
        #expect(KeyInput(code: 14) == .backspace)
        #expect(KeyInput(code: 28) == .enter && KeyInput(code: 96) == .enter)
        #expect(KeyInput(code: 1) == .escape)
        #expect(KeyInput(code: 30) == nil)            // KEY_A
    }

    @Test func onlyPressesCountAndOnlyBackspaceRepeats() {
        func key(_ code: UInt16, _ v: Int32) -> KeyInput? {
            KeyInput(InputEvent(type: EventCode.EV_KEY, code: code, value: v, time: Instant(microseconds: 0)))
        }
        #expect(key(2, 1) == .digit(1))
        #expect(key(2, 0) == nil && key(2, 2) == nil)
        #expect(key(14, 2) == .backspace)
    }

    @Test func aDeviceWithDigitsAndEnterIsAKeypad() {
        let pad = DeviceDescription(codes: [EventCode.EV_KEY: [71, 72, 73, 96]])
        #expect(pad.isKeypad)
        #expect(!DeviceDescription(codes: [EventCode.EV_KEY: [EventCode.BTN_TOUCH]]).isKeypad)
    }
}
