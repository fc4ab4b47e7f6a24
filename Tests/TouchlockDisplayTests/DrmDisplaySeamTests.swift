import Glibc
import Testing
import TouchlockCore
import TouchlockDisplay
import TouchlockPixels
import TouchlockSystem

/// Runs `loop` until a frame completes (or 2 s pass); true if one did.
private func waitForFrame(_ display: DrmDisplay, _ loop: EventLoop) throws -> Bool {
    var completed = false
    display.onFrameComplete = { _ in
        completed = true
        loop.stop()
    }
    let timer = loop.schedule(at: EventLoop.now() + .milliseconds(2000)) { _ in loop.stop() }
    defer { loop.cancel(timer) }
    try loop.run()
    return completed
}

/// A whole frame of damage.
private func fullDamage(_ size: Size) -> Damage {
    var d = Damage(bounds: size)
    d.addAll()
    return d
}

/// What opening `card`'s display threw, if it did.
private func openingError(_ card: FakeDrmDevice) throws -> SystemError? {
    let loop = try EventLoop(signals: [])
    return card.run { () -> SystemError? in
        do throws(SystemError) { _ = try DrmDisplay.open(path: FakeDrmDevice.path, loop: loop); return nil } catch { return error }
    }
}

/// Runs `body` on `card`'s display, opened on a loop of its own.
private func withDisplay(_ card: FakeDrmDevice, rotation: Rotation? = nil,
                         _ body: (DrmDisplay, EventLoop) throws -> Void) throws {
    let loop = try EventLoop(signals: [])
    try card.run { try body(try DrmDisplay.open(path: FakeDrmDevice.path, loop: loop, rotation: rotation), loop) }
}

/// The start most tests share: `card`'s display opened, `paint` given the new shadow
/// buffer, a first whole frame presented (the mode set) and its completion waited for;
/// then `body`, then the display shut down.
private func withFirstFrameShown(_ card: FakeDrmDevice, rotation: Rotation? = nil,
                                 paint: (DrmDisplay, ShadowBuffer) -> Void = { _, _ in },
                                 _ body: (DrmDisplay, ShadowBuffer, EventLoop) throws -> Void) throws {
    try withDisplay(card, rotation: rotation) { display, loop in
        let shadow = ShadowBuffer(size: display.size)
        paint(display, shadow)
        try display.present(shadow, damage: fullDamage(display.size))
        #expect(try waitForFrame(display, loop))
        try body(display, shadow, loop)
        display.shutdown()
    }
}

/// What a user of the daemon would check when the kernel refuses the display: a clear
/// error naming the call, the device and the reason; no crash; every buffer freed once,
/// in reverse order of acquisition; the card closed last.
@Suite(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
struct DrmDisplaySeamTests {
    /// One buffer's release, in reverse of create -> AddFB -> map.
    private func freed(_ handle: Int) -> [String] {
        ["munmap(\(handle))", "drmModeRmFB(\(handle))", "drmModeDestroyDumbBuffer(\(handle))"]
    }

    @Test func openRefusedWithEACCESIsAClearErrorAndTouchesNothing() throws {
        let card = FakeDrmDevice()
        card.fail("open", with: EACCES)
        let error = try openingError(card)
        let e = try #require(error)
        #expect(e.call == "open" && e.errno == .permissionDenied)
        #expect("\(e)".contains(FakeDrmDevice.path) && "\(e)".contains("Permission denied"))
        #expect(card.trace == ["open = Permission denied"])
        #expect(card.outstanding == 0)
    }

    @Test func deviceGoneWhileOpeningUnwindsEverythingInReverse() throws {
        // ENODEV on the second buffer's framebuffer: the card was unplugged halfway.
        let card = FakeDrmDevice()
        card.fail("drmModeAddFB", with: ENODEV, onCall: 2)
        let error = try openingError(card)
        let e = try #require(error)
        #expect(e.call == "drmModeAddFB" && e.errno == .noDevice)
        #expect(card.trace(from: "drmModeCreateDumbBuffer(1)") == [
            "drmModeCreateDumbBuffer(1)", "drmModeAddFB(1)", "drmModeMapDumbBuffer(1)", "mmap(1)",
            "drmModeCreateDumbBuffer(2)", "drmModeAddFB(2) = No such device",
            "drmModeDestroyDumbBuffer(2)",
        ] + freed(1) + ["close"])
        #expect(card.outstanding == 0, "left allocated: \(card.live.filter { $0.value != 0 })")
        #expect(card.fd == -1)
    }

    @Test func mapFailureFreesTheFramebufferThenTheBuffer() throws {
        let card = FakeDrmDevice()
        card.fail("mmap", with: ENOMEM)
        let error = try openingError(card)
        #expect(error?.call == "mmap")
        #expect(card.trace(from: "drmModeCreateDumbBuffer(1)") == [
            "drmModeCreateDumbBuffer(1)", "drmModeAddFB(1)", "drmModeMapDumbBuffer(1)", "mmap(1) = Cannot allocate memory",
            "drmModeRmFB(1)", "drmModeDestroyDumbBuffer(1)", "close",
        ])
        #expect(card.outstanding == 0)
    }

    @Test func framesThenShutdownFreeEachBufferOnceInReverseOrder() throws {
        let card = FakeDrmDevice()
        try withFirstFrameShown(card, paint: { display, shadow in
            #expect(display.connectorName == "Virtual-1")
            #expect(display.size == Size(width: 64, height: 48))
            #expect(display.physicalSize?.width == 100)
            // Only the buffers, the mappings and the card stay held after opening.
            #expect(card.live.filter { $0.value != 0 } == ["dumb": 2, "fb": 2, "mapping": 2])
            memset(shadow.pixels, 0x5a, shadow.byteCount)
        }) { display, shadow, loop in  // the first frame was a SetCrtc
            try display.present(shadow, damage: fullDamage(display.size))  // flip to buffer 2
            #expect(display.isBusy)
            #expect(try waitForFrame(display, loop))
            #expect(!display.isBusy)

            display.shutdown()  // and the shutdown after this frees nothing again
        }
        #expect(card.trace(from: "drmModeSetCrtc(1)") == [
            "drmModeSetCrtc(1)", "drmModePageFlip(2)", "drmHandleEvent",
            "drmModeSetCrtc(console)",
        ] + freed(2) + freed(1) + ["close"])
        #expect(card.outstanding == 0)
    }

    /// A driver without vblank (bochs) completes each flip at once: with reports at 100 Hz
    /// for 1 s on a 60 Hz mode, at most one frame per refresh reaches the screen, and the
    /// last frame shows the last report.
    /// A bound on the product at the machine's own speed: not run under emulation
    /// (TOUCHLOCK_TEST_TIME_SCALE set), where the loop's timers are late by more than a
    /// refresh.
    @Test(.enabled(if: getenv("TOUCHLOCK_TEST_TIME_SCALE") == nil, "a bound on the product, at the machine's own speed only"))
    func flipsCompletingAtOnceArePacedToTheRefreshAndTheLastReportIsShown() throws {
        let card = FakeDrmDevice()
        var submitted = 0
        var submissions: [Instant] = []  // when each frame's completion was told
        var lastShown: UInt32?
        try withDisplay(card) { display, loop in
            let shadow = ShadowBuffer(size: display.size)
            var unpresented = Damage(bounds: display.size)
            var reports = 0
            var allReported = false
            func presentIfIdle() throws {
                guard !display.isBusy, !unpresented.isEmpty else {
                    if allReported, !display.isBusy { loop.stop() }
                    return
                }
                try display.present(shadow, damage: unpresented)
                unpresented.removeAll()
                submitted += 1
            }
            display.onFrameComplete = { _ in
                submissions.append(EventLoop.now())
                try? presentIfIdle()
            }
            // Report n paints the top-left pixel with n, as a drag changes the path.
            let start = EventLoop.now()
            func report(_ n: Int) {
                _ = loop.schedule(at: start + Interval(microseconds: Int64(n) * 10_000)) { _ in
                    shadow.pixels.storeBytes(of: UInt32(n), as: UInt32.self)
                    unpresented.add(PixelRect(x: 0, y: 0, width: 1, height: 1))
                    reports += 1
                    if n < 100 { report(n + 1) } else { allReported = true }
                    try? presentIfIdle()
                }
            }
            report(1)
            let guardTimer = loop.schedule(at: start + .milliseconds(5000)) { _ in loop.stop() }
            try loop.run()
            loop.cancel(guardTimer)
            #expect(reports == 100)
            lastShown = card.scannedOutPixel(x: 0, y: 0)
            display.shutdown()
        }
        // Reports from 10 ms to 1 s, and a frame at most every refresh (16.7 ms) until the last
        // one is shown: no more than 1 + 1007 / 16.7 frames.
        #expect(submitted <= 62, "\(submitted) frames for 100 reports in 1 s on a 60 Hz mode")
        // Frames are shown (their completion told) one refresh apart at least, with the
        // eighth of a period of slack the display allows for a vblank's jitter.
        let gaps = zip(submissions.dropFirst(), submissions).map { ($0 - $1).microseconds }
        #expect((gaps.min() ?? 0) >= 16_666 * 7 / 8, "two frames \(gaps.min() ?? 0) µs apart on a 60 Hz mode")
        #expect(submitted >= 20, "\(submitted) frames: pacing must still show the drag as it goes")
        #expect(lastShown == 100, "the screen shows report \(lastShown.map(String.init) ?? "none"), not the last")
    }

    @Test func shutdownWithAFlipPendingWaitsForItBeforeFreeing() throws {
        let card = FakeDrmDevice()
        try withFirstFrameShown(card) { display, shadow, _ in
            try display.present(shadow, damage: fullDamage(display.size))
            #expect(display.isBusy)
        }
        #expect(card.trace(from: "drmModePageFlip") == [
            "drmModePageFlip(2)", "drmHandleEvent", "drmModeSetCrtc(console)",
        ] + freed(2) + freed(1) + ["close"])
    }

    @Test func modeSetRefusedWhileAnotherProcessIsMasterMakesTheOutputInactiveUntilARetry() throws {
        let card = FakeDrmDevice()
        card.fail("drmModeSetCrtc", with: EACCES)
        card.master = false  // another process took it
        try withDisplay(card) { display, loop in
            var changes = 0
            display.onStateChanged = { changes += 1 }
            let shadow = ShadowBuffer(size: display.size)
            let e = thrown(SystemError.self) { try display.present(shadow, damage: fullDamage(display.size)) }
            #expect(e?.errno == .permissionDenied)
            #expect(e.map { "\($0)".contains("not DRM master") } == true)
            #expect(!display.isBusy)
            #expect(display.state.reason?.code == .masterLost && changes == 1)
            // Lost is a state: presents are refused without touching the card.
            let refused = thrown(SystemError.self) { try display.present(shadow, damage: fullDamage(display.size)) }
            #expect(refused.map { "\($0)".contains("inactive: DRM master lost") } == true)
            #expect(card.trace.filter { $0.hasPrefix("drmModeSetCrtc") }.count == 1)
            // A `lock` retries: master is taken again and the next present sets the mode.
            var redraws = 0
            display.onRedrawNeeded = { redraws += 1 }
            display.retry(.lockRequested)
            #expect(display.state.isActive && redraws == 1 && changes == 2)
            try display.present(shadow, damage: Damage(bounds: display.size))
            #expect(try waitForFrame(display, loop))
            #expect(card.scannedOut == 101)
            display.shutdown()
        }
        #expect(card.trace(from: "drmSetMaster") == ["drmSetMaster", "drmModeSetCrtc(1)", "drmModeSetCrtc(console)"]
                + freed(2) + freed(1) + ["close"])
        #expect(card.outstanding == 0)
    }

    @Test func aFlipThatNeverCompletesIsAbandonedAndTheModeSetAgain() throws {
        let card = FakeDrmDevice()
        try withFirstFrameShown(card) { display, shadow, loop in
            card.holdFlips = true
            try display.present(shadow, damage: fullDamage(display.size))  // flip to 2, never shown
            #expect(display.isBusy)
            var redraws = 0
            display.onRedrawNeeded = { redraws += 1; loop.stop() }
            let start = EventLoop.now()
            let timer = loop.schedule(at: start + .milliseconds(2000)) { _ in loop.stop() }
            try loop.run()
            loop.cancel(timer)
            let waited = EventLoop.now() - start
            // Recovered on the flip timer (a timerfd on the loop), not at the 2 s guard.
            #expect(redraws == 1 && waited >= OutputState.flipTimeout && waited < .milliseconds(1500))
            #expect(!display.isBusy && display.state.isActive)
            // The next frame is a full mode set.
            try display.present(shadow, damage: Damage(bounds: display.size))
            #expect(try waitForFrame(display, loop))
            #expect(display.state.timeouts == 0)
        }
        #expect(card.trace(from: "drmModePageFlip") == ["drmModePageFlip(2)", "drmModeSetCrtc(1)", "drmModeSetCrtc(console)"] + freed(2) + freed(1) + ["close"])
        #expect(card.outstanding == 0)
    }

    @Test func unreadableEventsMakeTheOutputInactiveAndARetryReadsThemAgain() throws {
        let card = FakeDrmDevice()
        try withFirstFrameShown(card) { display, shadow, loop in
            card.failEvents = EIO
            try display.present(shadow, damage: fullDamage(display.size))
            display.onStateChanged = { loop.stop() }
            let timer = loop.schedule(at: EventLoop.now() + .milliseconds(2000)) { _ in loop.stop() }
            try loop.run()
            loop.cancel(timer)
            #expect(display.state.reason?.code == .eventsFailed)
            #expect(display.state.stuck(at: EventLoop.now() + .milliseconds(5000)) == nil)
            card.failEvents = nil
            display.retry(.hotplug)
            #expect(display.state.isActive)
            try display.present(shadow, damage: Damage(bounds: display.size))
            #expect(try waitForFrame(display, loop))
        }
        #expect(card.outstanding == 0)
    }

    @Test func flipFailingWithENODEVIsReportedAndNothingLeaks() throws {
        let card = FakeDrmDevice()
        card.fail("drmModePageFlip", with: ENODEV)
        try withFirstFrameShown(card) { display, shadow, _ in
            let e = thrown(SystemError.self) { try display.present(shadow, damage: fullDamage(display.size)) }
            #expect(e?.call == "drmModePageFlip" && e?.errno == .noDevice)
            #expect(!display.isBusy)
            #expect(display.state.reason?.code == .flipFailed)
        }
        // The output is lost: its CRTC is not ours to restore.
        #expect(card.trace(from: "drmModePageFlip") == ["drmModePageFlip(2) = No such device"] + freed(2) + freed(1) + ["close"])
        #expect(card.outstanding == 0)
    }

    @Test func takingTheDisplayBackWhileBusyFailsWithEBUSYAndCanBeRetried() throws {
        let card = FakeDrmDevice()
        card.fail("drmSetMaster", with: EBUSY)
        try withFirstFrameShown(card) { display, shadow, loop in
            try display.release()
            #expect(display.isReleased)
            let refused = thrown(SystemError.self) { try display.present(shadow, damage: fullDamage(display.size)) }
            #expect(refused?.errno == .notPermitted)

            let busy = thrown(SystemError.self) { try display.acquire() }
            #expect(busy?.call == "drmSetMaster" && busy?.errno == .busy)
            #expect(display.isReleased)

            try display.acquire()
            #expect(!display.isReleased)
            // Taken back: a full mode set again, not a flip.
            try display.present(shadow, damage: Damage(bounds: display.size))
            #expect(try waitForFrame(display, loop))
        }
        #expect(card.trace(from: "drmDropMaster") == [
            "drmDropMaster", "drmSetMaster = Device or resource busy", "drmSetMaster", "drmModeSetCrtc(1)",
            "drmModeSetCrtc(console)",
        ] + freed(2) + freed(1) + ["close"])
        #expect(card.outstanding == 0)
    }

    @Test func shutdownAfterAHandOverLeavesTheKiosksCrtcAlone() throws {
        // After an unlock the display is handed over (master dropped): the CRTC is the
        // kiosk's now, and restoring the one saved at start would fail (EACCES) or, worse,
        // put an old picture back.
        let card = FakeDrmDevice()
        try withFirstFrameShown(card) { display, shadow, _ in
            try display.release()
        }
        #expect(card.trace(from: "drmDropMaster") == ["drmDropMaster"] + freed(2) + freed(1) + ["close"])
        #expect(card.outstanding == 0)
    }

    @Test func blankingFindsTheDPMSPropertyAndALostMasterIsAClearError() throws {
        let card = FakeDrmDevice()
        card.fail("drmModeConnectorSetProperty", with: EACCES, onCall: 2)
        try withDisplay(card) { display, _ in
            try display.setPowered(false)
            let e = thrown(SystemError.self) { try display.setPowered(true) }
            #expect(e?.errno == .permissionDenied)
            #expect(e.map { "\($0)".contains("not DRM master") } == true)
            display.shutdown()
        }
        #expect(card.trace.filter { $0.hasPrefix("drmModeConnectorSetProperty") } == [
            "drmModeConnectorSetProperty(DPMS off)", "drmModeConnectorSetProperty(DPMS on) = Permission denied",
        ])
        #expect(card.outstanding == 0, "left allocated: \(card.live.filter { $0.value != 0 })")
    }

    /// A panel mounted with its left side up: the picture is laid out portrait (48x64) and
    /// turned a quarter counter-clockwise on the way to the 64x48 scanout buffer, so the
    /// logical top left corner lands bottom left; [display] rotation overrides it.
    @Test(arguments: [(UInt64?.some(2), Rotation?.none, Rotation.degrees270), (3, nil, .degrees90), (1, nil, .degrees180),
                      (nil, nil, .degrees0), (2, .degrees0, .degrees0), (nil, .degrees90, .degrees90)])
    func thePanelOrientationPropertyTurnsThePictureAndTheConfigWins(property: UInt64?, configured: Rotation?,
                                                                   expected: Rotation) throws {
        let card = FakeDrmDevice()
        card.panelOrientation = property
        try withFirstFrameShown(card, rotation: configured, paint: { display, shadow in
            #expect(display.rotation == expected)
            let logical = expected.logicalSize(panel: Size(width: 64, height: 48))
            #expect(display.size == logical)
            #expect(display.physicalSize?.width == (expected.swapsAxes ? 75 : 100))
            // A marked top left corner (3x2) and a marked bottom row on a grey picture.
            memset(shadow.pixels, 0x40, shadow.byteCount)
            for y in 0..<2 { for x in 0..<3 { shadow.pixels.storeBytes(of: UInt32(0xff0000), toByteOffset: y * shadow.stride + x * 4, as: UInt32.self) } }
        }) { display, shadow, loop in
            let corner: (Int, Int) = switch expected {
            case .degrees0: (0, 0)
            case .degrees90: (63, 0)
            case .degrees180: (63, 47)
            case .degrees270: (0, 47)
            }
            #expect(card.scannedOutPixel(x: corner.0, y: corner.1) == 0xff0000, "corner of \(expected) at \(corner)")
            #expect(card.scannedOutPixel(x: 32, y: 24) == 0x4040_4040)
            // Damage of one logical pixel lands on the one panel pixel it turns to (the second
            // buffer gets both frames' damage: the grey all over, then this pixel).
            shadow.pixels.storeBytes(of: UInt32(0x00ff00), toByteOffset: 5 * shadow.stride + 7 * 4, as: UInt32.self)
            var d = Damage(bounds: display.size)
            d.add(PixelRect(x: 7, y: 5, width: 1, height: 1))
            try display.present(shadow, damage: d)
            #expect(try waitForFrame(display, loop))
            let p = expected.panelRect(PixelRect(x: 7, y: 5, width: 1, height: 1), panel: Size(width: 64, height: 48))
            #expect(card.scannedOutPixel(x: p.x, y: p.y) == 0x00ff00)
        }
        #expect(card.outstanding == 0, "left allocated: \(card.live.filter { $0.value != 0 })")
    }
}
