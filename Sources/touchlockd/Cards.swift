import TouchlockCore
import TouchlockDisplay
import TouchlockSystem

/// Every DRM card the lock screen covers (`DrmCardSet` decides which; this opens and closes
/// them): each card with a connected output, or those `[display] device` names. Each card's
/// descriptor is kept in systemd's store under its device's name (`DrmCardName.storeName`),
/// so that a daemon restarted after a reboot-free crash, or an upgrade, finds each card again
/// whatever its number is. The kernel's uevents (one socket) bring cards that appear late
/// (a driver bound after the start), take away the ones that go, and make a covered card
/// probe its connectors again (hotplug).
final class Cards {
    private let loop: EventLoop
    private let config: Config
    private var set = DrmCardSet()
    /// The cards open, in the order they were opened.
    private(set) var open: [(name: DrmCardName, card: DrmCard)] = []
    /// Cards whose probe is queued for the end of this loop turn.
    private var probing: Set<String> = []
    private var uevents: UeventSocket?

    /// Outputs set up (a card adopted, a screen plugged in) and torn down (a card gone, a
    /// screen unplugged).
    var onOutputsChanged: ((_ added: [DrmDisplay], _ removed: [DrmDisplay]) -> Void)?
    /// After a hotplug's probe (inactive outputs try again).
    var onProbed: (() -> Void)?
    /// Whether the lock screen is shown now: a card adopted while the display is handed
    /// over gives DRM master up at once (the kiosk's compositor takes it when it needs it).
    var isCovering: () -> Bool = { true }

    /// Every output of every card, card by card.
    var outputs: [DrmDisplay] { open.flatMap { $0.card.outputs } }

    /// Opens the cards to cover, each with the descriptor the daemon before kept for it
    /// (systemd's store). Fails when none can be opened.
    init(config: Config, loop: EventLoop) throws(SystemError) {
        self.loop = loop
        self.config = config
        var stored: [(name: String, fd: Int32)] = []
        for (name, fd) in ServiceNotify.takeStored() {
            if name.hasPrefix(DrmCardName.storePrefix) || name.hasPrefix(DrmCardName.legacyStorePrefix) {
                stored.append((name, fd))
            } else {
                Log.info("a descriptor named \(name) from systemd's store: not ours, closed")
                _ = FileDescriptor(adopting: fd)  // closed through the seam
            }
        }
        let present = DrmCard.present()
        var lastError = SystemError("open", .noEntry, "/dev/dri/card*: no DRM device")
        if let pins = pinned() {
            lastError = SystemError("open", .noEntry, "[display] device = \(config.displayDevices.joined(separator: ", ")): no such DRM card")
            Log.info("drm: [display] device: covering \(pins.sorted().joined(separator: ", ")) only")
        }
        for action in DrmCardSet.start(present: present, pinned: pinned(), stored: stored) {
            switch action {
            case .open(let card, let inherited):
                do throws(SystemError) { try adopt(card, inherited: inherited) } catch { lastError = error }
            case .closeStored(let name, let fd):
                Log.info("drm: the descriptor kept from before as \(name) is of no card covered now; closed")
                _ = FileDescriptor(adopting: fd)
            case .ignore(let why):
                Log.warning("drm: \(why)")
            case .impossible(let what):
                Log.bug("drm: \(what)")
            case .probe, .close:
                Log.bug("drm: \(action) at the start")
            }
        }
        if open.isEmpty { throw lastError }
        do {
            uevents = try UeventSocket(loop: loop) { [unowned self] event in self.received(event) }
        } catch {
            Log.warning("no display hotplug: \(error)")
        }
    }

    /// The node names `[display] device` resolves to now; nil: every card.
    private func pinned() -> Set<String>? {
        guard !config.displayDevices.isEmpty else { return nil }
        var nodes = Set<String>()
        for path in config.displayDevices {
            if let node = DrmCard.node(of: path) { nodes.insert(node) } else {
                Log.warning("drm: [display] device: \(path) is not a DRM card node (absent, or not a link to /dev/dri/card*)")
            }
        }
        return nodes
    }

    /// Opens `card` and keeps its descriptor in systemd's store; logged and thrown when it
    /// cannot be (no connected output: a `change` uevent tries again).
    private func adopt(_ name: DrmCardName, inherited: Int32?) throws(SystemError) {
        let path = "/dev/dri/" + name.node
        let card: DrmCard
        do {
            card = try DrmCard.open(path: path, loop: loop, connectors: config.displayConnectors, mode: config.displayMode,
                                    rotation: config.displayRotation, inherited: inherited.map { (path, $0) })
        } catch {
            Log.info("drm: \(name) not covered: \(error)")
            throw error
        }
        for a in set.opened(name) { perform(a) }
        open.append((name, card))
        let storeName = name.storeName ?? "drm-\(name.node)"
        func keep(_ fd: Int32?) {
            ServiceNotify.removeStored(name: storeName)
            if let fd { ServiceNotify.store(fd, name: storeName) }
        }
        keep(card.descriptor)
        card.descriptorChanged = { fd in
            keep(fd)
            // The descriptor before was closed here, but DRM master goes only once systemd
            // has closed its copy too: nothing (the VT switch back to the kiosk, whose
            // compositor logind then makes master) goes on before it has.
            if !ServiceNotify.barrier(timeout: .milliseconds(1000)) {
                Log.warning("drm: systemd did not confirm within 1 s that the descriptor before was taken out of its store")
            }
        }
        card.onOutputsChanged = { [unowned self] added, removed in self.onOutputsChanged?(added, removed) }
        Log.info("drm: covering \(name): \(card.outputs.map(\.connectorName).joined(separator: ", "))")
    }

    private func received(_ event: Uevent) {
        guard let change = event.drmCard else { return }
        for a in set.handle(change, pinned: pinned()) { perform(a) }
    }

    private func perform(_ action: DrmCardSet.Action) {
        switch action {
        case .open(let name, let inherited):
            // A card that appeared (or got its first screen) after the start.
            guard (try? adopt(name, inherited: inherited)) != nil, let card = open.last?.card else { return }
            if !isCovering() {
                for o in card.outputs {
                    do throws(SystemError) { try o.release() } catch { Log.warning("drm: \(name): \(error)") }
                }
            }
            onOutputsChanged?(card.outputs, [])
            onProbed?()
        case .probe(let name):
            // Several uevents in one loop turn make one probe.
            guard !probing.contains(name.node) else { return }
            probing.insert(name.node)
            loop.deferred { [weak self] in
                guard let self else { return }
                self.probing.remove(name.node)
                guard let card = self.open.first(where: { $0.name == name })?.card else { return }
                Log.info("drm: hotplug on \(name.node): probing the connectors")
                do { try card.probe() } catch { Log.warning("drm: hotplug on \(name.node): \(error)") }
                self.onProbed?()
            }
        case .close(let name):
            guard let i = open.firstIndex(where: { $0.name == name }) else { return }
            let card = open.remove(at: i).card
            let outputs = card.outputs
            Log.info("drm: \(name) went away: \(outputs.map(\.connectorName).joined(separator: ", ")) no longer covered")
            card.onOutputsChanged = nil
            // Nothing to put back on a device that is gone.
            card.restoresScreenAtShutdown = false
            card.close()
            set.closed(name)
            onOutputsChanged?([], outputs)
        case .closeStored(let name, let fd):
            Log.info("drm: the descriptor kept from before as \(name): closed")
            _ = FileDescriptor(adopting: fd)
        case .ignore(let why):
            Log.info("drm: \(why)")
        case .impossible(let what):
            Log.bug("drm: \(what)")
        }
    }

    /// Gives every card back (the screens restored), newest first.
    func close() {
        for (name, card) in open.reversed() {
            card.close()
            set.closed(name)
        }
        open = []
    }

    /// Leaves every card as it is, the lock screen on it, for the daemon after this one.
    func leaveOnScreen() {
        for (_, card) in open { card.leaveOnScreen() }
    }

    /// A system shutdown while locked: closing puts back no CRTC (the kiosk's last frame).
    func forgetScreens() {
        for (_, card) in open { card.restoresScreenAtShutdown = false }
    }
}
