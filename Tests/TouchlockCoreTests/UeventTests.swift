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
        // A DRM change without HOTPLUG=1 (a lease, a property) is not one either.
        let lease = try #require(Uevent(datagram(["change@/devices/x/drm/card1", "ACTION=change", "SUBSYSTEM=drm", "LEASE=1"])))
        #expect(lease.drmHotplugCard == nil)
    }

    @Test func whatIsNotAKernelUeventIsRefused() {
        #expect(Uevent(datagram(["libudev", "junk"])) == nil)
        #expect(Uevent([UInt8]()) == nil)
        #expect(Uevent(datagram(["change@/devices/x", "ACTION=add"])) == nil)
    }
}
