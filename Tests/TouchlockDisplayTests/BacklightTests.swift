import Glibc
import Testing
import TouchlockCore
import TouchlockSystem
@testable import TouchlockDisplay

/// The backlight that goes off with a blanked screen, on a sysfs laid out in a directory
/// (QEMU offers no backlight device to try it on; the files are what the kernel shows).
@Suite final class BacklightTests {
    let sysfs: String
    init() throws {
        var template = Array("/tmp/touchlock-sysfs.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        sysfs = String(cString: made)
    }
    deinit { _ = system("rm -rf '\(sysfs)'") }

    /// A backlight NAME with `files` (attribute: value), and its link under a connector.
    func backlight(_ name: String, _ files: [String: String], linkedTo connector: String? = nil) throws {
        let dir = sysfs + "/class/backlight/" + name
        try DurableFile.makeDirectory(dir, mode: 0o755)
        for (f, v) in files { try DurableFile.replace(dir + "/" + f, with: Array((v + "\n").utf8), mode: 0o644) }
        if let connector {
            let c = sysfs + "/class/drm/card0-" + connector
            try DurableFile.makeDirectory(c, mode: 0o755)
            #expect(symlink(dir, c + "/" + name) == 0)
        }
    }

    func read(_ name: String, _ file: String) -> String {
        (try? FileContents.text(sysfs + "/class/backlight/\(name)/\(file)"))?.filter { !$0.isWhitespace } ?? "missing"
    }

    @Test func blankingSwitchesBlPowerAndWakingPutsItBack() throws {
        try backlight("rpi_backlight", ["bl_power": "0", "brightness": "200", "max_brightness": "255"], linkedTo: "DSI-1")
        try backlight("acpi_video0", ["bl_power": "0", "brightness": "5"])
        let b = try #require(Backlight.find(.auto, connector: "DSI-1", sysfs: sysfs))
        #expect(b.name == "rpi_backlight")  // the one the kernel links to the connector
        b.switchOff()
        #expect(read("rpi_backlight", "bl_power") == "4" && read("rpi_backlight", "brightness") == "200")
        #expect(read("acpi_video0", "bl_power") == "0")  // the other one is left alone
        b.switchOn()
        #expect(read("rpi_backlight", "bl_power") == "0" && read("rpi_backlight", "brightness") == "200")
    }

    @Test func withoutBlPowerTheBrightnessGoesToZeroAndBack() throws {
        try backlight("panel", ["brightness": "137", "max_brightness": "255"])
        let b = try #require(Backlight.find(.auto, connector: "LVDS-1", sysfs: sysfs))  // the only one
        b.switchOff()
        b.switchOff()  // once
        #expect(read("panel", "brightness") == "0")
        b.switchOn()
        #expect(read("panel", "brightness") == "137")
    }

    @Test func offNamedAndAmbiguousChoices() throws {
        try backlight("a", ["bl_power": "0"])
        try backlight("b", ["bl_power": "0"])
        #expect(Backlight.find(.auto, connector: "HDMI-A-1", sysfs: sysfs) == nil)  // two, none linked: asked to say
        #expect(Backlight.find(.off, connector: "HDMI-A-1", sysfs: sysfs) == nil)
        #expect(Backlight.find(.named("b"), connector: "HDMI-A-1", sysfs: sysfs)?.name == "b")
        #expect(Backlight.find(.named("c"), connector: "HDMI-A-1", sysfs: sysfs) == nil)
        #expect(BacklightChoice.auto.choose(for: "X", linked: [], all: ["a", "b"]).why?.contains("set [display] backlight") == true)
        #expect(BacklightChoice.auto.choose(for: "X", linked: [], all: []) == (nil, nil))
    }

    @Test func theSettingTakesAutoOffOrAName() throws {
        var c = Config()
        #expect(c.backlight == .auto)
        try c.set(section: "display", key: "backlight", value: "rpi_backlight")
        #expect(c.backlight == .named("rpi_backlight"))
        try c.set(section: "display", key: "backlight", value: "off")
        #expect(c.backlight == .off)
        #expect(throws: (any Error).self) { try c.set(section: "display", key: "backlight", value: "../x") }
    }
}
