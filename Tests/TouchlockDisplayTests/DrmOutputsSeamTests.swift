import Glibc
import Testing
import TouchlockCore
import TouchlockDisplay
import TouchlockPixels
import TouchlockSystem

/// Several outputs on one card and hotplug, against the fake card: what an integrator
/// would check on a kiosk with two screens (each gets its own CRTC, mode and buffers; an
/// unplugged one is torn down, newest buffer first, and a replugged one set up again).
@Suite(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
struct DrmOutputsSeamTests {
    private func freed(_ handle: Int) -> [String] {
        ["munmap(\(handle))", "drmModeRmFB(\(handle))", "drmModeDestroyDumbBuffer(\(handle))"]
    }

    /// Presents a whole frame on `output` and runs the loop until it is shown.
    private func show(_ output: DrmDisplay, _ loop: EventLoop) throws -> Bool {
        let shadow = ShadowBuffer(size: output.size)
        var d = Damage(bounds: output.size)
        d.addAll()
        var shown = false
        output.onFrameComplete = { _ in shown = true; loop.stop() }
        try output.present(shadow, damage: d)
        let timer = loop.schedule(at: EventLoop.now() + .milliseconds(2000)) { _ in loop.stop() }
        try loop.run()
        loop.cancel(timer)
        return shown
    }

    @Test func everyConnectedConnectorGetsItsOwnCrtcAndAnUnplugTearsItDown() throws {
        let card = FakeDrmDevice()
        card.secondConnected = true
        let loop = try EventLoop(signals: [])
        try card.run {
            let drm = try DrmCard.open(path: FakeDrmDevice.path, loop: loop)
            #expect(drm.outputs.map(\.connectorName) == ["Virtual-1", "Virtual-2"])
            #expect(drm.outputs.map(\.size) == [Size(width: 64, height: 48), Size(width: 32, height: 24)])
            #expect(card.live.filter { $0.value != 0 } == ["dumb": 4, "fb": 4, "mapping": 4])
            #expect(try show(drm.outputs[0], loop) && show(drm.outputs[1], loop))
            // Each on its own CRTC, from its own buffers (1-2 for Virtual-1, 3-4 for Virtual-2).
            #expect(card.scannedOutOn == [card.crtcID: 101, card.crtc2: 103])

            var changes: [[String]] = []
            drm.onOutputsChanged = { added, removed in changes.append(added.map(\.connectorName) + removed.map { "-" + $0.connectorName }) }
            card.secondConnected = false
            try drm.probe()
            #expect(changes == [["-Virtual-2"]])
            #expect(drm.outputs.map(\.connectorName) == ["Virtual-1"])
            #expect(card.trace(from: "drmModeSetCrtc(console) on CRTC 2") == ["drmModeSetCrtc(console) on CRTC 2"] + freed(4) + freed(3))

            // Plugged again: set up again, with its mode chosen again.
            card.secondConnected = true
            try drm.probe()
            #expect(changes.last == ["Virtual-2"])
            #expect(drm.outputs.last?.size == Size(width: 32, height: 24))
            #expect(try show(drm.outputs[1], loop))
            // A probe with nothing changed changes nothing.
            try drm.probe()
            #expect(changes.count == 2)
            drm.close()
        }
        // The newest output first, then the first one, then the card.
        let newest: [String] = ["drmModeSetCrtc(console) on CRTC 2"] + freed(6) + freed(5)
        let first: [String] = ["drmModeSetCrtc(console)"] + freed(2) + freed(1) + ["close"]
        #expect(card.trace(from: "drmModeSetCrtc(console) on CRTC 2") == newest + first)
        #expect(card.outstanding == 0, "left allocated: \(card.live.filter { $0.value != 0 })")
    }

    @Test func connectorsAndModeChooseWhatIsDrivenAndNoCrtcIsShared() throws {
        let card = FakeDrmDevice()
        card.secondConnected = true
        let loop = try EventLoop(signals: [])
        try card.run {
            let drm = try DrmCard.open(path: FakeDrmDevice.path, loop: loop, connectors: ["Virtual-2"],
                                       mode: DisplayMode(width: 16, height: 12))
            #expect(drm.outputs.map(\.connectorName) == ["Virtual-2"])
            #expect(drm.outputs[0].size == Size(width: 16, height: 12))
            // Virtual-1 (not ours) keeps its CRTC: Virtual-2 gets the other one.
            #expect(try show(drm.outputs[0], loop))
            #expect(card.scannedOutOn == [card.crtc2: 101])
            drm.close()
        }
        #expect(card.outstanding == 0)

        let none = FakeDrmDevice()
        let refused = none.run { () -> SystemError? in
            do throws(SystemError) { _ = try DrmCard.open(path: FakeDrmDevice.path, loop: loop, connectors: ["HDMI-A-1"]); return nil }
            catch { return error }
        }
        #expect(refused.map { "\($0)".contains("no connected output with a free CRTC among HDMI-A-1") } == true)
        #expect(none.outstanding == 0 && none.fd == -1)
    }

    @Test func handingOverDropsMasterOnceEveryOutputIsHandedOver() throws {
        let card = FakeDrmDevice()
        card.secondConnected = true
        let loop = try EventLoop(signals: [])
        try card.run {
            let drm = try DrmCard.open(path: FakeDrmDevice.path, loop: loop)
            #expect(try show(drm.outputs[0], loop) && show(drm.outputs[1], loop))
            try drm.outputs[0].release()
            #expect(card.master)  // Virtual-2 still shows the lock screen
            try drm.outputs[1].release()
            #expect(!card.master)
            #expect(drm.outputs.allSatisfy { $0.state.phase == .handedOver })
            try drm.outputs[1].acquire()
            try drm.outputs[0].acquire()
            #expect(card.master && drm.outputs.allSatisfy { $0.state.isActive })
            drm.close()
        }
        #expect(card.trace.filter { $0.contains("Master") } == ["drmDropMaster", "drmSetMaster"])
        #expect(card.outstanding == 0)
    }

    /// A daemon restarted behind a kiosk opens the card while the compositor is master; when
    /// the VT owner has dropped it, drmSetMaster is still refused (EACCES: the descriptor
    /// was never master, and the unit has no CAP_SYS_ADMIN). The card is opened again,
    /// which makes it master, and every output is moved onto the new descriptor.
    @Test func aDescriptorThatWasNeverMasterIsReplacedByOneOpenedAgain() throws {
        let card = FakeDrmDevice()
        card.secondConnected = true
        card.masterAtOpen = false  // the kiosk's compositor holds the card
        let loop = try EventLoop(signals: [])
        try card.run {
            let drm = try DrmCard.open(path: FakeDrmDevice.path, loop: loop)
            #expect(card.opens == 1 && !card.master)
            // Our VT is shown: the compositor's master is dropped, ours is refused.
            card.masterAtOpen = true
            card.fail("drmSetMaster", with: EACCES)
            let before = card.trace.count
            try drm.outputs[0].acquire()
            try drm.outputs[1].acquire()
            #expect(card.opens == 2 && card.master)
            let after = Array(card.trace[before...])
            #expect(after.first == "drmSetMaster = \(Errno(rawValue: EACCES))")
            // The old descriptor's four buffers freed, four new ones made on the new one.
            #expect(after.filter { $0.hasPrefix("drmModeDestroyDumbBuffer") }.count == 4)
            #expect(after.filter { $0.hasPrefix("drmModeCreateDumbBuffer") }.count == 4)
            #expect(drm.outputs.allSatisfy { $0.state.isActive })
            // Both outputs show frames on the new descriptor.
            #expect(try show(drm.outputs[0], loop) && show(drm.outputs[1], loop))
            drm.close()
        }
        #expect(card.outstanding == 0)
    }

    /// A daemon restarted after a crash gets the card's descriptor back from systemd's
    /// store: it is not opened again, and the old daemon's framebuffers (its lock screen,
    /// still on the screen) are removed only once the new first frame has replaced them.
    @Test func anInheritedDescriptorIsUsedAndWhatWasLeftOnItGoesAfterTheFirstFrame() throws {
        let card = FakeDrmDevice()
        let loop = try EventLoop(signals: [])
        try card.run {
            let fd = FakeDrmDevice.path.withCString { SystemCalls.current.open($0, O_RDWR, 0) }
            #expect(fd >= 0 && card.opens == 1)
            card.leaveFramebuffers([150, 151])
            let drm = try DrmCard.open(path: FakeDrmDevice.path, loop: loop, inherited: (FakeDrmDevice.path, fd))
            #expect(card.opens == 1 && drm.descriptor == fd)
            #expect(!card.trace.contains { $0.hasPrefix("drmModeRmFB") })
            #expect(card.scannedOut == 150)  // the old lock screen, until the new first frame
            #expect(try show(drm.outputs[0], loop))
            let setCrtc = try #require(card.trace.firstIndex { $0.hasPrefix("drmModeSetCrtc(") })
            let removed = card.trace.indices.filter { card.trace[$0] == "drmModeRmFB(50)" || card.trace[$0] == "drmModeRmFB(51)" }
            #expect(removed.count == 2 && removed.allSatisfy { $0 > setCrtc }, "\(card.trace)")
            #expect(card.trace.contains("drmModeDestroyDumbBuffer(50)") && card.trace.contains("drmModeDestroyDumbBuffer(51)"))
            #expect(card.leftovers.isEmpty && card.scannedOut == 101)
            drm.close()
        }
        #expect(card.outstanding == 0, "left allocated: \(card.live.filter { $0.value != 0 })")
    }

    @Test func anInheritedDescriptorOfAnotherCardIsClosed() throws {
        let card = FakeDrmDevice()
        let loop = try EventLoop(signals: [])
        try card.run {
            let fd = FakeDrmDevice.path.withCString { SystemCalls.current.open($0, O_RDWR, 0) }
            let drm = try DrmCard.open(path: FakeDrmDevice.path, loop: loop, inherited: ("/dev/dri/card1", fd))
            #expect(card.opens == 2 && drm.descriptor != fd)
            #expect(fcntl(fd, F_GETFD) == -1 && errno == EBADF)  // the inherited one, closed
            drm.close()
        }
    }

    /// The kernel refuses drmDropMaster on a descriptor another process opened (without
    /// CAP_SYS_ADMIN): handing over from an inherited descriptor closes it instead, once
    /// the outputs are on one of our own, which takes the lock screen back later.
    @Test func handingOverFromAnInheritedDescriptorLetsMasterGoWithIt() throws {
        let card = FakeDrmDevice()
        let loop = try EventLoop(signals: [])
        try card.run {
            let inherited = FakeDrmDevice.path.withCString { SystemCalls.current.open($0, O_RDWR, 0) }
            card.leaveFramebuffers([150, 151])
            var stored: [Int32?] = []
            let drm = try DrmCard.open(path: FakeDrmDevice.path, loop: loop, inherited: (FakeDrmDevice.path, inherited))
            drm.descriptorChanged = { stored.append($0) }
            #expect(try show(drm.outputs[0], loop))
            card.fail("drmDropMaster", with: EACCES)
            card.masterAtOpen = false  // opened while the inherited descriptor is master
            try drm.outputs[0].release()
            #expect(drm.outputs[0].state.phase == .handedOver)
            #expect(card.opens == 2 && drm.descriptor != inherited)
            #expect(fcntl(inherited, F_GETFD) == -1 && errno == EBADF)
            #expect(!card.trace.contains { $0.hasPrefix("drmDropMaster") }, "\(card.trace)")
            #expect(stored == [drm.descriptor])
            // Locked again: master on our own descriptor, and frames on it.
            card.master = false
            try drm.outputs[0].acquire()
            #expect(card.master && drm.outputs[0].state.isActive)
            #expect(try show(drm.outputs[0], loop))
            drm.close()
            #expect(stored == [drm.descriptor, nil])
        }
        #expect(card.outstanding == 0, "left allocated: \(card.live.filter { $0.value != 0 })")
    }
}
