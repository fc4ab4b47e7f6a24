import Testing
@testable import TouchlockCore

/// The screen goes off while locked and untouched, comes on at a touch; handed over and
/// untouched, the device locks again.
@Suite struct PowerTests {
    @Test func lockedAndUntouchedTheScreenGoesOffAtTheDeadlineFromTheLastActivity() {
        var p = Power(blankAfter: .milliseconds(30_000))
        #expect(p.shownLocked(at: at(0)) == [.armTimer(at(30_000_000))])
        p.activity(at: at(10_000_000))
        // Early: looked at again from the last activity, never polled.
        #expect(p.blankTimer(at: at(30_000_000), shownLocked: true) == [.armTimer(at(40_000_000))])
        #expect(p.lit)
        #expect(p.blankTimer(at: at(40_000_000), shownLocked: true) == [.blank])
        #expect(p.blanked)
        // Off: nothing more to arm until it wakes.
        #expect(p.blankTimer(at: at(50_000_000), shownLocked: true).isEmpty)
        #expect(p.wake(at: at(60_000_000)) == [.wake, .armTimer(at(90_000_000))])
        #expect(p.lit)
    }

    @Test func theScreenStaysOnWhileNotShownLockedOrWithoutABlankTime() {
        var p = Power(blankAfter: .milliseconds(1_000))
        #expect(p.blankTimer(at: at(5_000_000), shownLocked: false).isEmpty && p.lit)
        var never = Power()
        #expect(never.shownLocked(at: at(0)).isEmpty)
        #expect(never.blankTimer(at: at(5_000_000), shownLocked: true).isEmpty && never.lit)
    }

    @Test func aWakeWhileOnChangesNothing() {
        var p = Power(blankAfter: .milliseconds(1_000))
        #expect(p.wake(at: at(0)).isEmpty && p.lit)
    }

    @Test func handedOverAndUntouchedTheDeviceLocksAgain() {
        var p = Power(idleLock: .milliseconds(60_000))
        #expect(p.handedOver(at: at(1_000_000)) == [.armTimer(at(61_000_000))])
        p.activity(at: at(31_000_000))
        #expect(p.idleTimer(at: at(61_000_000), handedOver: true) == [.armTimer(at(91_000_000))])
        #expect(p.idleTimer(at: at(91_000_000), handedOver: true) == [.lock])
        // Locked already (or not handed over): no idle lock.
        #expect(p.idleTimer(at: at(91_000_000), handedOver: false).isEmpty)
        var never = Power()
        #expect(never.handedOver(at: at(0)).isEmpty)
        #expect(never.idleTimer(at: at(10_000_000_000), handedOver: true).isEmpty)
    }

    /// The lock screen with its code pad: off, the cursor neither blinks nor wakes the loop.
    @Test func offTheCodePadsCursorArmsNoWakeUpAndWakingBlinksItAgain() {
        var s = codeScreen()
        s.blankAfter = .milliseconds(5_000)
        _ = s.begin(at: at(0))
        let off = s.timer(at: at(5_000_000))
        #expect(off.contains(.blankDisplay))
        #expect(!off.contains { if case .armTimer = $0 { true } else { false } })
        #expect(!off.contains(.redraw))
        // A stray timer while off (one armed before) draws nothing and arms nothing.
        #expect(s.timer(at: at(5_600_000)).isEmpty)
        let woken = s.hardwareKey(.digit(1), at: at(9_000_000))
        #expect(woken.first == .wakeDisplay && woken.contains(.redraw))
        let blink = s.code!.blinkStart + CursorBlink.nextChange(after: at(9_000_000) - s.code!.blinkStart)
        #expect(woken.contains(.armTimer(blink)))
        #expect(s.code!.entered == 0)  // the key woke the screen and typed nothing
    }
}
