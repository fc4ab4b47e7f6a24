/// A kernel uevent as it arrives on a NETLINK_KOBJECT_UEVENT socket: a header line
/// "ACTION@DEVPATH" then KEY=VALUE strings, each ended by a NUL. The daemon listens for
/// the DRM hotplug ones (SUBSYSTEM=drm, ACTION=change, HOTPLUG=1), so no udev is needed.
public struct Uevent: Hashable, Sendable {
    public var action: String
    public var devpath: String
    public var properties: [String: String]

    public var subsystem: String? { properties["SUBSYSTEM"] }

    /// A display was connected or disconnected on a DRM card, or its connectors must be
    /// probed again: its card's name (card0), else nil. Every `change` of a card counts:
    /// a plug sends one with HOTPLUG=1, a connector forced on or off through sysfs sends
    /// none (the driver may not notice), and a change written to the card's `uevent` file
    /// (SYNTH_UUID) asks for a probe; probing when nothing changed changes nothing.
    public var drmHotplugCard: String? {
        guard subsystem == "drm", action == "change", properties["DEVTYPE"].map({ $0 == "drm_minor" }) ?? true else { return nil }
        return properties["DEVNAME"].map { String($0.split(separator: "/").last ?? "") }
            ?? devpath.split(separator: "/").last.map(String.init)
    }

    /// Nil for what is not a kernel uevent (udev's own messages start "libudev", and a
    /// datagram without a header or an ACTION is not one).
    public init?(_ bytes: some Collection<UInt8>) {
        let fields = bytes.split(separator: 0, omittingEmptySubsequences: true).map { String(decoding: $0, as: UTF8.self) }
        guard let header = fields.first, let at = header.firstIndex(of: "@") else { return nil }
        action = String(header[..<at])
        devpath = String(header[header.index(after: at)...])
        var props: [String: String] = [:]
        for f in fields.dropFirst() {
            guard let eq = f.firstIndex(of: "=") else { continue }
            props[String(f[..<eq])] = String(f[f.index(after: eq)...])
        }
        guard !action.isEmpty, props["ACTION"] == nil || props["ACTION"] == action else { return nil }
        properties = props
    }
}
