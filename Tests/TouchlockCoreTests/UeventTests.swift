import Testing
import TouchlockCore

/// The uevents the daemon reads for display hotplug, as the kernel writes them.
struct UeventTests {
    private func datagram(_ fields: [String]) -> [UInt8] {
        fields.flatMap { Array($0.utf8) + [0] }
    }

    @Test func aDrmHotplugNamesItsCard() throws {
        let e = try #require(Uevent(datagram([
            "change@/devices/pci0000:00/0000:00:02.0/drm/card0", "ACTION=change",
            "DEVPATH=/devices/pci0000:00/0000:00:02.0/drm/card0", "SUBSYSTEM=drm", "HOTPLUG=1",
            "DEVNAME=dri/card0", "DEVTYPE=drm_minor", "SEQNUM=2145", "MAJOR=226", "MINOR=0",
        ])))
        #expect(e.action == "change" && e.subsystem == "drm")
        #expect(e.drmHotplugCard == "card0")
    }

    @Test func otherEventsAreNotHotplugs() throws {
        let add = try #require(Uevent(datagram(["add@/devices/virtual/input/input7", "ACTION=add", "SUBSYSTEM=input"])))
        #expect(add.drmHotplugCard == nil)
        // A connector's own events are not the card's.
        let connector = try #require(Uevent(datagram(["change@/devices/x/drm/card1/card1-HDMI-A-1", "ACTION=change",
                                                      "SUBSYSTEM=drm", "DEVTYPE=drm_connector"])))
        #expect(connector.drmHotplugCard == nil)
        // A change written to the card's uevent file asks for a probe too.
        let synthetic = try #require(Uevent(datagram(["change@/devices/x/drm/card1", "ACTION=change", "DEVPATH=/devices/x/drm/card1",
                                                      "SUBSYSTEM=drm", "SYNTH_UUID=0", "DEVNAME=dri/card1", "DEVTYPE=drm_minor"])))
        #expect(synthetic.drmHotplugCard == "card1")
    }

    @Test func whatIsNotAKernelUeventIsRefused() {
        #expect(Uevent(datagram(["libudev", "junk"])) == nil)
        #expect(Uevent([UInt8]()) == nil)
        #expect(Uevent(datagram(["change@/devices/x", "ACTION=add"])) == nil)
    }
}
