/// The properties udev gave an input device it has initialised (its rules and hwdb; what
/// `udevadm info` prints as `E:` lines).
public struct UdevProperties: Hashable, Sendable {
    public var values: [String: String]

    public init(_ values: [String: String] = [:]) { self.values = values }

    public subscript(key: String) -> String? { values[key] }

    /// A flag as libinput reads one: "1" is set, "0" is not; nil when absent or neither.
    public func flag(_ key: String) -> Bool? {
        switch values[key] {
        case "1": true
        case "0": false
        default: nil
        }
    }

    /// The seat udev assigns the device to; seat0 when it names none (as logind and libinput).
    public var seat: String { values["ID_SEAT"].flatMap { $0.isEmpty ? nil : $0 } ?? "seat0" }
}

/// What touchlockd does with an input device, from its capabilities and, where udev has
/// initialised it, from udev's properties; decided as libinput decides, except where a
/// lock screen must not lose its panel (`decide`).
public struct InputAdmission: Equatable, Sendable {
    /// How a device is read as a touchscreen.
    public enum Touchscreen: Equatable, Sendable {
        /// As its capabilities say (it may still be no touchscreen: `DeviceDescription.touchMode`).
        case byCapabilities
        /// As a direct-touch device, though its capabilities say touchpad: udev tags it a
        /// touchscreen (a panel without INPUT_PROP_DIRECT, set right by a hwdb entry or a rule).
        case asDirect
        /// Not as a touchscreen, whatever its capabilities say.
        case no(String)
    }

    /// Why the device is left out altogether (neither touchscreen nor keypad), or nil.
    public var skipped: String?
    public var touchscreen: Touchscreen
    /// udev's LIBINPUT_CALIBRATION_MATRIX, when it has a valid one.
    public var calibration: AffineMatrix?
    /// What udev and the capabilities made of the device where they differ, or a property
    /// not honoured: said once per device at info level.
    public var note: String?

    public init(skipped: String? = nil, touchscreen: Touchscreen = .byCapabilities,
                calibration: AffineMatrix? = nil, note: String? = nil) {
        self.skipped = skipped; self.touchscreen = touchscreen; self.calibration = calibration; self.note = note
    }

    /// The properties honoured: LIBINPUT_IGNORE_DEVICE=1 leaves a device out; ID_SEAT, when
    /// `seat` names one (`[logind] seat`), leaves out the devices of other seats;
    /// ID_INPUT_TOUCHSCREEN decides when it is set: 1 reads the device as a touchscreen
    /// (as a direct one if its capabilities say touchpad), 0 does not. A device udev does
    /// not tag is still read as a touchscreen when its capabilities say it is one (panels
    /// that report as absolute mice, which udev tags ID_INPUT_MOUSE), where libinput would
    /// make it a pointer: a lock screen whose only panel were left out could never be
    /// unlocked; a rule setting ID_INPUT_TOUCHSCREEN=0 or LIBINPUT_IGNORE_DEVICE=1 leaves it
    /// out. LIBINPUT_CALIBRATION_MATRIX is the panel's matrix (a quirk's takes precedence).
    ///
    /// `udev` is nil when udev has not initialised the device (no udevd: no database):
    /// then the capabilities alone decide, and nothing is noted.
    /// What `decide` leaves out by udev's properties alone, before the device is opened
    /// (LIBINPUT_IGNORE_DEVICE, ID_SEAT); nil: the device is to be looked at.
    public static func leftOut(udev: UdevProperties?, seat: String?) -> InputAdmission? {
        guard let udev else { return nil }
        if udev.flag("LIBINPUT_IGNORE_DEVICE") == true {
            let why = "udev sets LIBINPUT_IGNORE_DEVICE"
            return InputAdmission(skipped: why, touchscreen: .no(why), note: "ignored: \(why)")
        }
        if let seat, udev.seat != seat {
            let why = "on \(udev.seat) (ID_SEAT), not on \(seat)"
            return InputAdmission(skipped: why, touchscreen: .no(why), note: "not used: \(why)")
        }
        return nil
    }

    public static func decide(_ device: DeviceDescription, quirk: InputQuirk? = nil,
                              udev: UdevProperties?, seat: String?) -> InputAdmission {
        guard let udev else { return InputAdmission() }
        if let out = leftOut(udev: udev, seat: seat) { return out }
        let capabilities = device.touchMode(quirk: quirk)
        var result = InputAdmission()
        // .some(true), not true: Swift 6.0 does not see true, false and nil as covering a Bool?.
        switch (udev.flag("ID_INPUT_TOUCHSCREEN"), capabilities) {
        case (.some(true), .success), (.none, .failure), (.some(false), .failure):
            break
        case (.some(true), .failure(let why)):
            var direct = device
            direct.properties.insert(DeviceDescription.INPUT_PROP_DIRECT)
            if case .success = direct.touchMode(quirk: quirk) {
                result.touchscreen = .asDirect
                result.note = "udev tags it a touchscreen (ID_INPUT_TOUCHSCREEN=1), its capabilities \(why):"
                    + " read as a direct-touch panel"
            } else {
                result.touchscreen = .no("\(why)")
                result.note = "udev tags it a touchscreen (ID_INPUT_TOUCHSCREEN=1), but it cannot be read as one: \(why)"
            }
        case (.some(false), .success):
            let why = "udev sets ID_INPUT_TOUCHSCREEN=0"
            result.touchscreen = .no(why)
            result.note = "not a touchscreen: \(why), though its capabilities are a touchscreen's"
        case (.none, .success):
            let tags = ["ID_INPUT_MOUSE", "ID_INPUT_TABLET", "ID_INPUT_TOUCHPAD", "ID_INPUT_JOYSTICK", "ID_INPUT_KEY"]
                .filter { udev.flag($0) == true }
            result.note = "udev does not tag it ID_INPUT_TOUCHSCREEN"
                + (tags.isEmpty ? "" : " (it has \(tags.joined(separator: ", ")))")
                + ": read as a touchscreen by its capabilities"
                + " (a udev rule setting ID_INPUT_TOUCHSCREEN=0 or LIBINPUT_IGNORE_DEVICE=1 leaves it out)"
        }
        let touch: Bool = switch (result.touchscreen, capabilities) {
        case (.asDirect, _), (.byCapabilities, .success): true
        default: false
        }
        if touch, let text = udev["LIBINPUT_CALIBRATION_MATRIX"] {
            if let m = AffineMatrix(parsing: text) {
                result.calibration = m
            } else {
                let bad = "LIBINPUT_CALIBRATION_MATRIX '\(text)' is not six numbers: not used"
                result.note = result.note.map { "\($0); \(bad)" } ?? bad
            }
        }
        return result
    }
}
