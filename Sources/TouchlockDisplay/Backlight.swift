import TouchlockCore
import TouchlockSystem

/// A panel's backlight under sysfs (/sys/class/backlight/NAME), switched off when the
/// screen is blanked and back on when it wakes: `bl_power` (4, FB_BLANK_POWERDOWN, then 0)
/// where the driver has it, which keeps the brightness as it was; else `brightness` 0 and
/// the brightness it had put back. `sysfs` is the seam tests go through (QEMU offers no
/// backlight device): a directory laid out as /sys.
public final class Backlight {
    public let name: String
    private let dir: String
    private var savedBrightness: String?
    public private(set) var isOff = false

    init(name: String, dir: String) {
        self.name = name
        self.dir = dir
    }

    /// The backlight `choice` picks for `connector`, or nil (logged when it matters).
    public static func find(_ choice: BacklightChoice, connector: String, sysfs: String = "/sys") -> Backlight? {
        if choice == .off { return nil }
        let all = (try? DirectoryListing.names(sysfs + "/class/backlight")) ?? []
        var linked: [String] = []
        for card in (try? DirectoryListing.names(sysfs + "/class/drm")) ?? [] where card.hasSuffix("-" + connector) {
            let entries = (try? DirectoryListing.names(sysfs + "/class/drm/" + card)) ?? []
            linked += entries.filter(all.contains)
        }
        let (picked, why) = choice.choose(for: connector, linked: linked, all: all)
        if let why { Log.warning("backlight: \(why)") }
        guard let picked else { return nil }
        Log.info("backlight: \(picked) goes off with \(connector) when the screen is blanked")
        return Backlight(name: picked, dir: sysfs + "/class/backlight/" + picked)
    }

    private var hasPowerControl: Bool {
        (try? FileContents.bytes(dir + "/bl_power", limit: 64)) != nil
    }

    /// Switches it off (the screen was blanked).
    public func switchOff() {
        guard !isOff else { return }
        do {
            if hasPowerControl {
                try DirectoryListing.writeAttribute(dir + "/bl_power", "4")
            } else {
                let now = try FileContents.text(dir + "/brightness", limit: 64).filter { !$0.isWhitespace }
                try DirectoryListing.writeAttribute(dir + "/brightness", "0")
                savedBrightness = now
            }
            isOff = true
        } catch {
            Log.warning("backlight \(name): cannot switch it off: \(error)")
        }
    }

    /// Switches it on again, at the brightness it had.
    public func switchOn() {
        guard isOff else { return }
        do {
            if let b = savedBrightness {
                try DirectoryListing.writeAttribute(dir + "/brightness", b)
                savedBrightness = nil
            } else {
                try DirectoryListing.writeAttribute(dir + "/bl_power", "0")
            }
            isOff = false
        } catch {
            Log.warning("backlight \(name): cannot switch it on: \(error)")
        }
    }
}
