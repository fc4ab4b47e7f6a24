/// Which backlight goes off with the screen (`[display] backlight`). On DSI and LVDS panels
/// (the Raspberry Pi displays, most tablets' panels) switching the connector off through
/// DPMS leaves the backlight lit: blanking also switches it off, and waking restores it.
public enum BacklightChoice: Hashable, Sendable, CustomStringConvertible {
    /// The backlight the kernel links to the connector, else the only one there is.
    case auto
    /// Never touched.
    case off
    /// This one, by its name under /sys/class/backlight.
    case named(String)

    public var description: String {
        switch self {
        case .auto: "auto"
        case .off: "off"
        case .named(let n): n
        }
    }

    /// The backlight for `connector`: `linked` are those the kernel registered under that
    /// connector's sysfs directory, `all` every one under /sys/class/backlight. Nil: none
    /// to switch (with the reason, when one was asked for or there are several).
    public func choose(for connector: String, linked: [String], all: [String]) -> (name: String?, why: String?) {
        switch self {
        case .off:
            return (nil, nil)
        case .named(let n):
            return all.contains(n) ? (n, nil) : (nil, "[display] backlight = \(n): no such backlight (there are: \(all.isEmpty ? "none" : all.joined(separator: ", ")))")
        case .auto:
            if let l = linked.sorted().first { return (l, nil) }
            if all.count == 1 { return (all[0], nil) }
            return (nil, all.isEmpty ? nil : "several backlights (\(all.sorted().joined(separator: ", "))) and none linked to \(connector): set [display] backlight")
        }
    }

    /// A backlight's name as sysfs gives them: no slash, not empty, printable.
    public static func isName(_ s: String) -> Bool {
        !s.isEmpty && s != "." && s != ".." && s.utf8.count <= 64 && s.utf8.allSatisfy { $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "/") }
    }
}
