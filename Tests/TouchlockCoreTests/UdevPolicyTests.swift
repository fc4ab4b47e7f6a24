import Testing
@testable import TouchlockCore

@Suite struct UdevPolicyTests {
    let mtX = EventCode.ABS_MT_POSITION_X, mtY = EventCode.ABS_MT_POSITION_Y
    var panel: DeviceDescription { describe(abs: [mtX, mtY], slots: 10) }
    /// Multitouch with a button and no INPUT_PROP_DIRECT: by its capabilities a touchpad.
    var touchpadLike: DeviceDescription { describe(abs: [mtX, mtY], keys: [EventCode.BTN_LEFT], direct: false, slots: 5) }
    /// ABS_X/ABS_Y and BTN_LEFT: a panel that reports as an absolute mouse.
    var absoluteMouse: DeviceDescription { describe(abs: [0, 1], keys: [EventCode.BTN_LEFT], direct: false) }
    var keypad: DeviceDescription {
        DeviceDescription(name: "keys", codes: [EventCode.EV_KEY: Set((2...11).map { UInt16($0) })])
    }

    func udev(_ values: [String: String]) -> UdevProperties { UdevProperties(values) }

    @Test func withoutUdevTheCapabilitiesAloneDecide() {
        for d in [panel, touchpadLike, absoluteMouse, keypad] {
            #expect(InputAdmission.decide(d, udev: nil, seat: "seat0") == InputAdmission())
        }
    }

    @Test func aTouchscreenUdevAgreesOnIsReadAsItsCapabilitiesSayWithNothingToSay() {
        let a = InputAdmission.decide(panel, udev: udev(["ID_INPUT": "1", "ID_INPUT_TOUCHSCREEN": "1"]), seat: "seat0")
        #expect(a == InputAdmission())
    }

    @Test func libinputIgnoreDeviceLeavesAnyDeviceOut() {
        for d in [panel, keypad] {
            let a = InputAdmission.decide(d, udev: udev(["ID_INPUT_TOUCHSCREEN": "1", "LIBINPUT_IGNORE_DEVICE": "1"]),
                                          seat: "seat0")
            #expect(a.skipped == "udev sets LIBINPUT_IGNORE_DEVICE")
            #expect(a.note == "ignored: udev sets LIBINPUT_IGNORE_DEVICE")
        }
        // Before the device is opened: the same verdict.
        #expect(InputAdmission.leftOut(udev: udev(["LIBINPUT_IGNORE_DEVICE": "1"]), seat: nil)?.skipped
                == "udev sets LIBINPUT_IGNORE_DEVICE")
        #expect(InputAdmission.leftOut(udev: udev(["ID_SEAT": "seat1"]), seat: "seat0")?.skipped
                == "on seat1 (ID_SEAT), not on seat0")
        #expect(InputAdmission.leftOut(udev: udev(["ID_INPUT_TOUCHSCREEN": "0"]), seat: "seat0") == nil)
        #expect(InputAdmission.leftOut(udev: nil, seat: "seat0") == nil)
        // Only "1" sets a flag, as libinput reads it.
        #expect(InputAdmission.decide(panel, udev: udev(["LIBINPUT_IGNORE_DEVICE": "0", "ID_INPUT_TOUCHSCREEN": "1"]),
                                      seat: nil).skipped == nil)
    }

    @Test func devicesOfAnotherSeatAreLeftOutWhenASeatIsConfigured() {
        let other = udev(["ID_INPUT_TOUCHSCREEN": "1", "ID_SEAT": "seat1"])
        #expect(InputAdmission.decide(panel, udev: other, seat: "seat0").skipped == "on seat1 (ID_SEAT), not on seat0")
        #expect(InputAdmission.decide(panel, udev: other, seat: "seat1").skipped == nil)
        // No ID_SEAT is seat0; no seat configured (`[logind] seat = off`) takes every seat's.
        #expect(InputAdmission.decide(panel, udev: udev(["ID_INPUT_TOUCHSCREEN": "1"]), seat: "seat1").skipped
                == "on seat0 (ID_SEAT), not on seat1")
        #expect(InputAdmission.decide(panel, udev: other, seat: nil).skipped == nil)
    }

    @Test func aTouchpadUdevTagsATouchscreenIsReadAsADirectPanel() {
        let a = InputAdmission.decide(touchpadLike, udev: udev(["ID_INPUT_TOUCHSCREEN": "1"]), seat: nil)
        #expect(a.touchscreen == .asDirect)
        #expect(a.skipped == nil)
        #expect(a.note?.contains("read as a direct-touch panel") == true)
        var direct = touchpadLike
        direct.properties.insert(DeviceDescription.INPUT_PROP_DIRECT)
        #expect(direct.touchMode() == .success(.multitouchB(slots: 5)))
    }

    @Test func aDeviceUdevTagsATouchscreenButNothingCanReadIsNoTouchscreen() {
        let a = InputAdmission.decide(keypad, udev: udev(["ID_INPUT_TOUCHSCREEN": "1"]), seat: nil)
        #expect(a.touchscreen == .no("no absolute position axes"))
        #expect(a.skipped == nil)  // still a keypad
        #expect(a.note == "udev tags it a touchscreen (ID_INPUT_TOUCHSCREEN=1), but it cannot be read as one: no absolute position axes")
    }

    @Test func aRuleSettingTouchscreenToZeroLeavesAPanelOut() {
        let a = InputAdmission.decide(panel, udev: udev(["ID_INPUT_TOUCHSCREEN": "0"]), seat: nil)
        #expect(a.touchscreen == .no("udev sets ID_INPUT_TOUCHSCREEN=0"))
        #expect(a.note != nil)
        // A keypad: nothing to say.
        #expect(InputAdmission.decide(keypad, udev: udev(["ID_INPUT_TOUCHSCREEN": "0"]), seat: nil) == InputAdmission())
    }

    @Test func aPanelUdevDoesNotTagIsStillReadByItsCapabilitiesAndSaidSo() {
        let a = InputAdmission.decide(absoluteMouse, udev: udev(["ID_INPUT": "1", "ID_INPUT_MOUSE": "1"]), seat: "seat0")
        #expect(a.touchscreen == .byCapabilities)
        #expect(a.skipped == nil)
        #expect(a.note == "udev does not tag it ID_INPUT_TOUCHSCREEN (it has ID_INPUT_MOUSE): read as a touchscreen by"
                + " its capabilities (a udev rule setting ID_INPUT_TOUCHSCREEN=0 or LIBINPUT_IGNORE_DEVICE=1 leaves it out)")
        // What is no touchscreen by either is left as it is.
        #expect(InputAdmission.decide(keypad, udev: udev(["ID_INPUT": "1", "ID_INPUT_KEY": "1"]), seat: nil) == InputAdmission())
    }

    @Test func theCalibrationMatrixIsTakenFromUdevForATouchscreen() {
        let a = InputAdmission.decide(panel, udev: udev(["ID_INPUT_TOUCHSCREEN": "1",
                                                         "LIBINPUT_CALIBRATION_MATRIX": "-1 0 1 0 1 0"]), seat: nil)
        #expect(a.calibration == AffineMatrix(-1, 0, 1, 0, 1, 0))
        #expect(a.note == nil)
        let bad = InputAdmission.decide(panel, udev: udev(["ID_INPUT_TOUCHSCREEN": "1",
                                                           "LIBINPUT_CALIBRATION_MATRIX": "1 0 0 0 1"]), seat: nil)
        #expect(bad.calibration == nil)
        #expect(bad.note == "LIBINPUT_CALIBRATION_MATRIX '1 0 0 0 1' is not six numbers: not used")
        // Not read for what is not read as a touchscreen.
        #expect(InputAdmission.decide(keypad, udev: udev(["LIBINPUT_CALIBRATION_MATRIX": "x"]), seat: nil) == InputAdmission())
    }

    @Test func flagsAndSeatReadAsLibinputReadsThem() {
        #expect(udev(["A": "1", "B": "0", "C": "yes"]).flag("A") == true)
        #expect(udev(["A": "1", "B": "0", "C": "yes"]).flag("B") == false)
        #expect(udev(["A": "1", "B": "0", "C": "yes"]).flag("C") == nil)
        #expect(udev([:]).flag("A") == nil)
        #expect(udev([:]).seat == "seat0")
        #expect(udev(["ID_SEAT": ""]).seat == "seat0")
        #expect(udev(["ID_SEAT": "seat-kiosk"]).seat == "seat-kiosk")
    }
}
