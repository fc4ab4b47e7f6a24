import Testing
import TouchlockCore

/// The output's life as status and the watchdog see it.
struct OutputStateTests {
    let t0 = Instant(microseconds: 1_000_000)

    @Test func aFlipCompletingDisarmsItsTimerAndShowsTheFrame() {
        var s = OutputState(name: "HDMI-A-1")
        #expect(s.submitted(1, at: t0) == [.armFlipTimer(t0 + OutputState.flipTimeout)])
        #expect(s.flipPending)
        #expect(s.completed(1, at: t0 + .milliseconds(16)) == [.disarmFlipTimer, .frameShown(t0 + .milliseconds(16))])
        #expect(!s.flipPending && s.stuck(at: t0 + .milliseconds(5000)) == nil)
    }

    @Test func aStuckFlipIsAbandonedAndThreeInARowMakeTheOutputInactive() {
        var s = OutputState(name: "DP-1")
        var t = t0
        for n in 1...2 {
            _ = s.submitted(UInt64(n), at: t)
            #expect(s.timerFired(at: t + .milliseconds(100)) == [.armFlipTimer(t + OutputState.flipTimeout)])
            t = t + OutputState.flipTimeout
            #expect(s.timerFired(at: t) == [.abandonFlip, .redraw])
            #expect(s.isActive && s.timeouts == n)
        }
        // The late event of the first is not taken for the third's.
        _ = s.submitted(3, at: t)
        #expect(s.completed(1, at: t + .milliseconds(1)) == [])
        #expect(s.flipPending)
        // Frames have been waited for since the first flip: a stuck screen after 1 s.
        #expect(s.stuck(at: t + .milliseconds(400)) == nil)
        #expect(s.stuck(at: t + .milliseconds(600)) != nil)
        t = t + OutputState.flipTimeout
        #expect(s.timerFired(at: t) == [.abandonFlip, .changed])
        #expect(s.reason == .flipStuck(3))
        #expect(s.stuck(at: t)?.contains("never completed") == true)
    }

    @Test func lostMasterIsAStateRetriedOnLockVTOrHotplug() {
        var s = OutputState(name: "Virtual-1")
        _ = s.submitted(1, at: t0)
        #expect(s.failed(.notMaster, "EACCES") == [.disarmFlipTimer, .changed])
        #expect(s.phase.name == .inactive && s.reason?.code == .masterLost)
        // Waiting out another process's master is not a stuck screen.
        #expect(s.stuck(at: t0 + .milliseconds(60_000)) == nil)
        #expect(s.retry(.lockRequested) == [.reacquire])
        #expect(s.reacquired(error: "EBUSY") == [.changed])
        #expect(s.reason?.code == .masterLost && s.retryError == "EBUSY")
        #expect(s.retry(.terminalAcquired) == [.reacquire])
        #expect(s.reacquired(error: nil) == [.changed, .redraw])
        #expect(s.isActive && s.retryError == nil)
        #expect(s.retry(.hotplug) == [])
    }

    @Test func aHandOverIsNotALossButARefusedTakeIs() {
        var s = OutputState(name: "Virtual-1")
        #expect(s.released() == [.changed])
        #expect(s.phase == .handedOver)
        #expect(s.failed(.notMaster, "EBUSY") == [.changed])
        #expect(s.reason == .masterLost("EBUSY"))
        #expect(s.acquired() == [.changed, .redraw])
        #expect(s.isActive)
    }

    @Test func eventsThatCannotBeReadStopTheReading() {
        var s = OutputState(name: "Virtual-1")
        _ = s.submitted(7, at: t0)
        #expect(s.failed(.events, "EIO") == [.disarmFlipTimer, .stopEvents, .changed])
        #expect(s.reason?.code == .eventsFailed)
    }

    @Test func modesAreParsedAndPicked() {
        #expect(DisplayMode(parsing: "1024x768") == DisplayMode(width: 1024, height: 768))
        #expect(DisplayMode(parsing: "1920x1080@50") == DisplayMode(width: 1920, height: 1080, refresh: 50))
        for bad in ["", "1024", "1024x", "x768", "1024x768@", "1024x768@0", "0x768", "1024x768@60@60", "a x b"] {
            #expect(DisplayMode(parsing: bad) == nil, "\(bad)")
        }
        let modes = [(width: 1920, height: 1080, refresh: 60), (width: 1024, height: 768, refresh: 60),
                     (width: 1024, height: 768, refresh: 75), (width: 800, height: 600, refresh: 60)]
        #expect(DisplayMode(width: 1024, height: 768).pick(modes) == 2)
        #expect(DisplayMode(width: 1024, height: 768, refresh: 60).pick(modes) == 1)
        #expect(DisplayMode(width: 640, height: 480).pick(modes) == nil)
    }
}
