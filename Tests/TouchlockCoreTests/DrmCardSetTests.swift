import Testing
import TouchlockCore

/// Which DRM cards are covered: every one, found again by its device when card numbers
/// change between boots, adopted when it appears late and dropped when it goes. The device
/// paths are a Raspberry Pi 5's (the DSI panel on RP1's KMS device, HDMI on vc4) and QEMU's.
struct DrmCardSetTests {
    static let dsi = "/devices/platform/axi/1000120000.pcie/1f00000000.rp1/1f00130000.dsi"
    static let hdmi = "/devices/platform/axi/axi:gpu"
    static let bochs = "/devices/pci0000:00/0000:00:02.0"
    static let virtio = "/devices/pci0000:00/0000:00:03.0"

    private func datagram(_ fields: [String]) -> [UInt8] {
        fields.flatMap { Array($0.utf8) + [0] }
    }

    private func uevent(_ action: String, _ devpath: String, _ more: [String] = []) throws -> Uevent {
        try #require(Uevent(datagram(["\(action)@\(devpath)", "ACTION=\(action)", "DEVPATH=\(devpath)", "SUBSYSTEM=drm"] + more)))
    }

    @Test func aCardsNameIsItsDeviceFromAUeventOrItsSysfsLink() throws {
        let fromLink = try #require(DrmCardName(devpath: "../../devices/platform/axi/axi:gpu/drm/card2"))
        #expect(fromLink == DrmCardName(node: "card2", device: Self.hdmi))
        let fromUevent = try #require(DrmCardName(devpath: Self.bochs + "/drm/card0"))
        #expect(fromUevent.device == Self.bochs && fromUevent.node == "card0")
        // A connector, a render node and a path without drm/ are not cards.
        #expect(DrmCardName(devpath: Self.bochs + "/drm/card0/card0-Virtual-1") == nil)
        #expect(DrmCardName(devpath: Self.bochs + "/drm/renderD128") == nil)
        #expect(DrmCardName(devpath: "/devices/virtual/card0") == nil)
        #expect(DrmCardName(devpath: Self.bochs + "/drm/cardx") == nil)
    }

    @Test func theStoreNameHoldsNoColonAndIsTheSameWhateverTheNumber() throws {
        let a = DrmCardName(node: "card0", device: Self.bochs)
        let b = DrmCardName(node: "card1", device: Self.bochs)
        let name = try #require(a.storeName)
        #expect(name == "drm@/devices/pci0000%3A00/0000%3A00%3A02.0")
        #expect(!name.contains(":") && name.utf8.count <= 255)
        #expect(b.storeName == name)
        #expect(DrmCardName(node: "card0", device: "/devices/a%3Ab").storeName == "drm@/devices/a%253Ab")
        #expect(DrmCardName(node: "card0", device: "/devices/" + String(repeating: "x", count: 300)).storeName == nil)
        #expect(DrmCardName(node: "card0", device: "/devices/a\tb").storeName == nil)
        #expect(DrmCardName(node: "card0", device: "/devices/é").storeName == nil)
    }

    @Test func everyCardPresentIsOpenedByDefault() {
        let present = [DrmCardName(node: "card0", device: Self.dsi), DrmCardName(node: "card1", device: Self.hdmi)]
        let actions = DrmCardSet.start(present: present, pinned: nil, stored: [])
        #expect(actions == [.open(present[0], inherited: nil), .open(present[1], inherited: nil)])
    }

    @Test func aRestartFindsEachCardsDescriptorByItsDeviceWhenTheNumbersSwapped() throws {
        // Before: DSI was card1, HDMI card2 (the names the daemon before stored).
        let before = [DrmCardName(node: "card1", device: Self.dsi), DrmCardName(node: "card2", device: Self.hdmi)]
        let stored = try [(name: #require(before[0].storeName), fd: Int32(7)), (name: #require(before[1].storeName), fd: Int32(8))]
        // Now: the other way round.
        let now = [DrmCardName(node: "card1", device: Self.hdmi), DrmCardName(node: "card2", device: Self.dsi)]
        let actions = DrmCardSet.start(present: now, pinned: nil, stored: stored)
        #expect(actions == [.open(now[0], inherited: 8), .open(now[1], inherited: 7)])
    }

    @Test func aDescriptorOfTheDaemonBeforeByNodeIsTakenAndOneOfNoCardClosed() {
        let now = [DrmCardName(node: "card0", device: Self.bochs), DrmCardName(node: "card1", device: Self.virtio)]
        let gone = DrmCardName(node: "card5", device: "/devices/gone").storeName ?? ""
        let actions = DrmCardSet.start(present: now, pinned: nil,
                                       stored: [(name: "drm-card1", fd: 4), (name: gone, fd: 5)])
        #expect(actions == [.open(now[0], inherited: nil), .open(now[1], inherited: 4), .closeStored(name: gone, fd: 5)])
    }

    @Test func devicePinsCoverOnlyThoseCardsAndSayWhichIsAbsent() {
        let now = [DrmCardName(node: "card0", device: Self.dsi), DrmCardName(node: "card1", device: Self.hdmi)]
        let stored = [(name: now[0].storeName ?? "", fd: Int32(9))]
        let actions = DrmCardSet.start(present: now, pinned: ["card1", "card3"], stored: stored)
        #expect(actions == [.open(now[1], inherited: nil), .ignore("[display] device: card3 is not present"),
                            .closeStored(name: now[0].storeName ?? "", fd: 9)])
    }

    @Test func aCardThatAppearsLateIsOpenedAndOneThatGoesIsClosed() throws {
        var set = DrmCardSet()
        let bochs = DrmCardName(node: "card0", device: Self.bochs)
        #expect(set.opened(bochs) == [])
        let added = try uevent("add", Self.virtio + "/drm/card1", ["DEVNAME=dri/card1", "DEVTYPE=drm_minor"])
        let late = DrmCardName(node: "card1", device: Self.virtio)
        let addition = try #require(added.drmCard)
        #expect(addition == .added(late))
        #expect(set.handle(addition, pinned: nil) == [.open(late, inherited: nil)])
        #expect(set.opened(late) == [])
        #expect(set.covered == [bochs, late])

        let removed = try uevent("remove", Self.bochs + "/drm/card0", ["DEVNAME=dri/card0", "DEVTYPE=drm_minor"])
        let removal = try #require(removed.drmCard)
        #expect(set.handle(removal, pinned: nil) == [.close(bochs)])
        #expect(set.covered == [late])
        // Told twice: nothing is closed twice.
        #expect(set.handle(removal, pinned: nil) == [.ignore("\(bochs) went away; it was not covered")])
    }

    @Test func aHotplugProbesACoveredCardAndOpensOneWithoutAScreenUntilNow() throws {
        var set = DrmCardSet()
        let hdmi = DrmCardName(node: "card1", device: Self.hdmi)
        _ = set.opened(hdmi)
        let change = try uevent("change", Self.hdmi + "/drm/card1", ["HOTPLUG=1", "DEVNAME=dri/card1", "DEVTYPE=drm_minor"])
        let hotplug = try #require(change.drmCard)
        #expect(set.handle(hotplug, pinned: nil) == [.probe(hdmi)])
        // card2 had no connected output at the start: a screen plugged in makes it covered.
        let dsi = DrmCardName(node: "card2", device: Self.dsi)
        #expect(set.handle(.changed(dsi), pinned: nil) == [.open(dsi, inherited: nil)])
        // Unless [display] device leaves it out.
        #expect(set.handle(.changed(dsi), pinned: ["card1"]) == [.ignore("\(dsi): not among [display] device")])
    }

    @Test func aNodeTakenByAnotherDeviceClosesTheOldCardAndOpensTheNew() {
        var set = DrmCardSet()
        let old = DrmCardName(node: "card1", device: Self.virtio)
        _ = set.opened(old)
        let new = DrmCardName(node: "card1", device: Self.bochs)
        #expect(set.handle(.added(new), pinned: nil) == [.close(old), .open(new, inherited: nil)])
        #expect(set.covered == [])
    }

    @Test func openingACardTwiceIsABug() {
        var set = DrmCardSet()
        let card = DrmCardName(node: "card0", device: Self.bochs)
        #expect(set.opened(card) == [])
        #expect(set.opened(card) == [.impossible("\(card) opened twice")])
        #expect(set.covered == [card])
    }

    @Test func connectorsRenderNodesAndOtherActionsAreNoCardEvents() throws {
        #expect(try uevent("change", Self.bochs + "/drm/card0/card0-Virtual-1", ["DEVTYPE=drm_connector"]).drmCard == nil)
        #expect(try uevent("add", Self.bochs + "/drm/renderD128", ["DEVNAME=dri/renderD128", "DEVTYPE=drm_minor"]).drmCard == nil)
        #expect(try uevent("bind", Self.bochs + "/drm/card0").drmCard == nil)
        let input = try #require(Uevent(datagram(["add@/devices/virtual/input/input7", "ACTION=add", "SUBSYSTEM=input"])))
        #expect(input.drmCard == nil)
    }

    @Test func displayDeviceTakesNodesOrStableLinksAndRefusesAnythingElse() throws {
        var c = Config()
        #expect(c.displayDevices == [])
        try c.set(section: "display", key: "device", value: "/dev/dri/by-path/platform-axi:gpu-card, /dev/dri/card1")
        #expect(c.displayDevices == ["/dev/dri/by-path/platform-axi:gpu-card", "/dev/dri/card1"])
        #expect(c.text.contains("device = /dev/dri/by-path/platform-axi:gpu-card, /dev/dri/card1\n"))
        let e = thrown(Config.BadValue.self) { try c.set(section: "display", key: "device", value: "card1") }
        #expect(e?.message == "[display] device: expected DRM device paths separated by commas (e.g. /dev/dri/card1 or /dev/dri/by-path/platform-gpu-card), found 'card1'")
        #expect(thrown(Config.BadValue.self) { try c.set(section: "display", key: "device", value: "/dev/../etc/passwd") } != nil)
        try c.set(section: "display", key: "device", value: "")
        #expect(c.displayDevices == [])
    }
}
