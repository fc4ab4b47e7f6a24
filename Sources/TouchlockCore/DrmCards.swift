/// A DRM device as the kernel names it: its node (card1, which may be another number at
/// the next boot: cards are numbered in the order their drivers bound) and its device's
/// path in sysfs (/devices/platform/axi/1000120000.pcie/1f00110000.dsi, the same at every
/// boot for the same hardware in the same place). Both come from one string: a uevent's
/// DEVPATH, or where /sys/class/drm/cardN links to (…/DEVICE/drm/cardN).
public struct DrmCardName: Hashable, Sendable, CustomStringConvertible {
    /// The node's name under /dev/dri, e.g. card1.
    public var node: String
    /// The device's sysfs path without /sys, e.g. /devices/pci0000:00/0000:00:02.0.
    public var device: String

    public init(node: String, device: String) {
        self.node = node
        self.device = device
    }

    /// From a card's sysfs path (`/devices/…/drm/card1`, or relative, as a link in
    /// /sys/class/drm gives it: `../../devices/…/drm/card1`); nil when it is not a card's
    /// (a connector's card1-HDMI-A-1, a render node's renderD128).
    public init?(devpath: String) {
        var parts = devpath.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        while parts.first == ".." { parts.removeFirst() }
        guard parts.count >= 3, let node = parts.last, Self.isCardNode(node), parts[parts.count - 2] == "drm" else { return nil }
        self.node = node
        device = "/" + parts.dropLast(2).joined(separator: "/")
    }

    /// card0, card1, ...: a primary node's name.
    public static func isCardNode(_ name: String) -> Bool {
        name.hasPrefix("card") && name.count > 4 && name.dropFirst(4).allSatisfy(\.isASCII) && Int(name.dropFirst(4)) != nil
    }

    /// The name of this card's descriptor in systemd's store: found again by its device
    /// whatever its number is at the next start. The store's names may not hold ':' (the
    /// separator of LISTEN_FDNAMES), are printable ASCII and at most 255 characters: ':' is
    /// written %3A, '%' %25. Nil for a device path that does not fit (the node's name is
    /// used then).
    public var storeName: String? {
        var name = Self.storePrefix
        for c in device {
            switch c {
            case ":": name += "%3A"
            case "%": name += "%25"
            default: name.append(c)
            }
        }
        // systemd takes printable ASCII only (no control character, nothing past 126).
        return name.utf8.count <= 255 && name.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) ? name : nil
    }

    /// What a stored descriptor's name starts with: "drm@" and the encoded device path.
    public static let storePrefix = "drm@"
    /// Names of the daemons before this one: "drm-card0", by node (still taken at an
    /// upgrade while locked, for the card that has that node now).
    public static let legacyStorePrefix = "drm-card"

    /// Whether a stored descriptor named `name` is this card's.
    public func owns(storedName name: String) -> Bool {
        if let mine = storeName, name == mine { return true }
        return name.hasPrefix(Self.legacyStorePrefix) && "card" + name.dropFirst(Self.legacyStorePrefix.count) == node
    }

    public var description: String { "\(node) (\(device))" }
}

/// What a uevent says about a DRM card: a card node appeared (a driver bound: a late
/// module, a device plugged) or went away, or its connectors must be probed again.
public enum DrmCardEvent: Hashable, Sendable {
    case added(DrmCardName)
    case removed(DrmCardName)
    case changed(DrmCardName)
}

extension Uevent {
    /// The DRM card event this is, else nil (another subsystem, a connector's or a render
    /// node's own uevent, an action that changes nothing of ours: bind, move, online).
    public var drmCard: DrmCardEvent? {
        guard subsystem == "drm", properties["DEVTYPE"].map({ $0 == "drm_minor" }) ?? true,
              let card = DrmCardName(devpath: devpath) else { return nil }
        if let devname = properties["DEVNAME"], devname.split(separator: "/").last.map(String.init) != card.node { return nil }
        switch action {
        case "add": return .added(card)
        case "remove": return .removed(card)
        case "change": return .changed(card)
        default: return nil
        }
    }
}

/// Which DRM cards the daemon covers, as values: which to open at the start (and with which
/// descriptor kept in systemd's store by the daemon before), and what a card's uevent asks
/// for. The owner opens and closes the cards (TouchlockDisplay) and reports back with
/// `opened`, `failed` and `closed`.
///
/// Every card with a connected output is covered, unless `[display] device` pins some
/// (`pinned`: the node names its paths resolve to now; nil: every card).
public struct DrmCardSet: Sendable {
    public enum Action: Hashable, Sendable {
        /// Open this card (with this stored descriptor: the one the daemon before kept).
        case open(DrmCardName, inherited: Int32?)
        /// Probe the connectors of this covered card again (hotplug).
        case probe(DrmCardName)
        /// The card went away: close it and forget its outputs.
        case close(DrmCardName)
        /// A stored descriptor no card present is ours for: close it.
        case closeStored(name: String, fd: Int32)
        /// Nothing done, and why (for the log).
        case ignore(String)
        /// What cannot happen happened (a card opened twice): logged as a bug.
        case impossible(String)
    }

    /// The cards open now, in the order they were opened (their outputs in that order).
    public private(set) var covered: [DrmCardName] = []

    public init() {}

    /// At the start: the cards present (in node order), the ones `[display] device` pins
    /// (nil: all) and the descriptors systemd's store gave back. Each card is opened with
    /// the stored descriptor that names its device (or, from a daemon before this one, its
    /// node); every other stored descriptor is closed.
    public static func start(present: [DrmCardName], pinned: Set<String>?,
                             stored: [(name: String, fd: Int32)]) -> [Action] {
        var left = stored
        var actions: [Action] = []
        for card in present where pinned?.contains(card.node) ?? true {
            // Its device's name first: a node's (legacy) name may be another card's now.
            let i = left.firstIndex { $0.name == card.storeName } ?? left.firstIndex { card.owns(storedName: $0.name) }
            actions.append(.open(card, inherited: i.map { left[$0].fd }))
            if let i { left.remove(at: i) }
        }
        if let pinned {
            for node in pinned.sorted() where !present.contains(where: { $0.node == node }) {
                actions.append(.ignore("[display] device: \(node) is not present"))
            }
        }
        actions += left.map { .closeStored(name: $0.name, fd: $0.fd) }
        return actions
    }

    /// The card was opened and covers its outputs.
    public mutating func opened(_ card: DrmCardName) -> [Action] {
        if covered.contains(where: { $0.node == card.node }) {
            return [.impossible("\(card) opened twice")]
        }
        covered.append(card)
        return []
    }

    /// The card was closed (gone, or given back).
    public mutating func closed(_ card: DrmCardName) {
        covered.removeAll { $0.node == card.node }
    }

    /// What a card's uevent asks for. A card not covered yet that appears, or whose
    /// connectors change (a display plugged into a card that had none), is opened; a
    /// covered one that changes is probed, one that goes away closed.
    public mutating func handle(_ event: DrmCardEvent, pinned: Set<String>?) -> [Action] {
        switch event {
        case .added(let card), .changed(let card):
            if let mine = covered.first(where: { $0.node == card.node }) {
                if mine.device != card.device {
                    // The node was another device's: that one went without a remove we saw.
                    covered.removeAll { $0.node == card.node }
                    return [.close(mine), .open(card, inherited: nil)]
                }
                return [.probe(mine)]
            }
            if let pinned, !pinned.contains(card.node) {
                return [.ignore("\(card): not among [display] device")]
            }
            return [.open(card, inherited: nil)]
        case .removed(let card):
            guard let mine = covered.first(where: { $0.node == card.node }) else {
                return [.ignore("\(card) went away; it was not covered")]
            }
            covered.removeAll { $0.node == card.node }
            return [.close(mine)]
        }
    }
}
