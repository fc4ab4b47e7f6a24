import Testing
@testable import TouchlockCore

/// What a restart, a crash or an upgrade finds: the runtime record of the daemon before,
/// the VT it was on, and the screen as it left it.
@Suite struct RestartTests {
    // MARK: the runtime record through the lock screen's actions

    /// The record a restart reads says locked from before the lock screen takes anything
    /// back (a restart in the middle comes back locked), and unlocked only once the unlock
    /// has been told.
    @Test func theRecordSaysLockedBeforeATakeAndUnlockedOnlyOnceTold() {
        var r = RuntimeRecord(unlocked: (.pattern, ms(0)))
        let untouched = r.before([.redraw, .armTimer(ms(5))])
        #expect(!untouched && r.unlocked != nil)
        let taking = r.before([.notify(.locked), .cover(.ask(.cover))])
        #expect(taking && r.unlocked == nil && r.text.contains("locked = yes"))
        let again = r.before([.grabInput])  // already locked: nothing to write
        let handingOver = r.after([.releaseInput, .cover(.ask(.uncover))])
        #expect(!again && !handingOver && r.unlocked == nil)
        let told = r.after([.notify(.unlocked(method: .code, at: ms(900))), .releaseInput])
        #expect(told && r.unlocked?.method == .code && r.unlocked?.at == ms(900))
        #expect(r.text.contains("locked = no\nunlocked_by = code\n"))
    }

    // MARK: the VT hand-off after a restart

    @Test func aDaemonStartedOnItsOwnVTHandsBackToTheVTKeptFromBefore() {
        // Restarted while locked: ours is still on screen; the one before kept VT 1.
        var t = TerminalSwitch(ours: 8, returnTo: 1)
        #expect(t.show(active: 8, at: ms(0)) == [.lockSwitching, .shown])
        #expect(t.state == .foreground(returnTo: 1))
        #expect(t.handBack(at: ms(1000)) == [.unlockSwitching, .activate(1), .armTimer(ms(3000))])
        #expect(t.releaseRequested(at: ms(1050)) == [.allowRelease, .handedBack])
        #expect(t.state == .background)
    }

    @Test func withNothingToReturnToTheUnlockStillLetsEverySwitchGo() {
        var t = TerminalSwitch(ours: 8)
        #expect(t.show(active: 8, at: ms(0)) == [.lockSwitching, .shown])
        #expect(t.releaseRequested(at: ms(10)) == [.refuseRelease])  // locked: refused
        #expect(t.handBack(at: ms(1000)) == [.unlockSwitching, .handedBack])
        #expect(t.state == .yielded)
        // chvt 1 (root's, or logind activating the kiosk's session) is allowed now.
        #expect(t.releaseRequested(at: ms(2000)) == [.allowRelease])
        #expect(t.state == .background)
    }

    @Test func aLockWhileYieldedCoversAgainWithoutASwitch() {
        var t = TerminalSwitch(ours: 8)
        _ = t.show(active: 8, at: ms(0))
        _ = t.handBack(at: ms(1000))
        #expect(t.show(active: 8, at: ms(2000)) == [.lockSwitching, .shown])
        #expect(t.releaseRequested(at: ms(2100)) == [.refuseRelease])
    }

    @Test func aSwitchThatCompletesAfterItsTimeoutShowsTheRefusedLock() {
        var t = TerminalSwitch(ours: 8)
        _ = t.show(active: 1, at: ms(0))
        // The kiosk's VT owner is stopped: the switch times out, the lock is refused.
        #expect(t.timerFired(at: ms(2000)).contains { if case .failed = $0 { true } else { false } })
        #expect(t.showWanted)
        // It resumes and lets its VT go: the kernel completes the switch to ours.
        #expect(t.acquired(at: ms(9000)) == [.acknowledgeAcquire, .lockSwitching, .shown])
        #expect(t.state == .foreground(returnTo: 1))
        #expect(t.releaseRequested(at: ms(9100)) == [.refuseRelease])
    }

    @Test func aSwitchToOursNobodyAskedForIsStillSentBack() {
        var t = TerminalSwitch(ours: 8)
        _ = t.show(active: 1, at: ms(0))
        _ = t.acquired(at: ms(10))
        _ = t.handBack(at: ms(100))
        _ = t.releaseRequested(at: ms(150))
        // chvt 8 while unlocked: back to the kiosk's VT.
        #expect(t.acquired(at: ms(5000)) == [.acknowledgeAcquire, .activate(1), .armTimer(ms(7000))])
    }

    @Test func theReturnTargetIsWhatTheNextHandBackShows() {
        var t = TerminalSwitch(ours: 8, returnTo: 2)
        #expect(t.returnTarget == 2)
        _ = t.show(active: 3, at: ms(0))
        #expect(t.returnTarget == 3)
        #expect(TerminalSwitch(ours: 8, returnTo: 8).returnTarget == nil)  // never ours
    }

    // MARK: the runtime record

    @Test func theRecordReadsBackWhatWasWritten() {
        let unlocked = RuntimeRecord(unlocked: (.code, Instant(microseconds: 123_456)), returnVT: 1, ownVT: 8, bootID: "b1")
        let back = RuntimeRecord.read(Array(unlocked.text.utf8), thisBoot: "b1")
        #expect(back == unlocked)
        #expect(back.unlocked?.method == .code && back.unlocked?.at == Instant(microseconds: 123_456))
        let locked = RuntimeRecord(returnVT: 2, ownVT: 8, bootID: "b1")
        #expect(locked.text.contains("locked = yes"))
        #expect(RuntimeRecord.read(Array(locked.text.utf8), thisBoot: "b1") == locked)
    }

    @Test func anythingDoubtfulReadsAsLocked() {
        for text in ["", "locked = no\n", "locked = no\nunlocked_by = pattern\n",
                     "locked = maybe\nunlocked_by = pattern\nunlocked_at_us = 5\n",
                     "locked = no\nunlocked_by = pattern\nunlocked_at_us = 5\nextra = 1\n",
                     "locked = no\nunlocked_by = retina\nunlocked_at_us = 5\n",
                     "\u{0}\u{1}garbage"] {
            #expect(RuntimeRecord.read(Array((text + "\nboot_id = b1\n").utf8), thisBoot: "b1").unlocked == nil, "\(text.debugDescription)")
        }
        #expect(RuntimeRecord.read(Array("locked = no\nunlocked_by = pattern\nunlocked_at_us = 5\nboot_id = b1\n".utf8), thisBoot: "b1").unlocked != nil)
        // A VT out of range is dropped; the rest is kept.
        let r = RuntimeRecord.read(Array("locked = yes\nreturn_vt = 99\nvt = 8\nboot_id = b1\n".utf8), thisBoot: "b1")
        #expect(r.returnVT == nil && r.ownVT == 8)
    }

    /// On a /run that is not a tmpfs the record outlives the boot: one of another boot, or
    /// one with no boot id (an older daemon's), reads as no record at all.
    @Test func aRecordOfAnotherBootOrOfNoneReadsAsNoRecord() {
        let text = "locked = no\nunlocked_by = pattern\nunlocked_at_us = 5\nreturn_vt = 1\nvt = 8\n"
        #expect(RuntimeRecord.read(Array((text + "boot_id = b1\n").utf8), thisBoot: "b1").unlocked?.method == .pattern)
        let cases: [(written: String, now: String?)] = [("boot_id = b0\n", "b1"), ("", "b1"), ("boot_id = b1\n", nil)]
        for (written, now) in cases {
            let r = RuntimeRecord.read(Array((text + written).utf8), thisBoot: now)
            #expect(r.unlocked == nil && r.returnVT == nil && r.ownVT == nil, "\(written.debugDescription) in \(now ?? "an unknown boot"): \(r)")
        }
    }

    /// An older daemon's record has no boot id: it is read only when its file was written
    /// in this boot (an upgrade of an unlocked device does not lock it).
    @Test func aRecordWithNoBootIDIsReadOnlyWhenWrittenInThisBoot() {
        let text = Array("locked = no\nunlocked_by = code\nunlocked_at_us = 5\nreturn_vt = 1\n".utf8)
        let upgraded = RuntimeRecord.read(text, thisBoot: "b1", writtenThisBoot: true)
        #expect(upgraded.unlocked?.method == .code && upgraded.returnVT == 1, "\(upgraded)")
        let rebooted = RuntimeRecord.read(text, thisBoot: "b1", writtenThisBoot: false)
        #expect(rebooted.unlocked == nil && rebooted.returnVT == nil, "\(rebooted)")
        // A record with a boot id goes by it alone.
        let other = Array("locked = no\nunlocked_by = code\nunlocked_at_us = 5\nboot_id = b0\n".utf8)
        #expect(RuntimeRecord.read(other, thisBoot: "b1", writtenThisBoot: true).unlocked == nil)
    }

    // MARK: the lock screen after a restart

    @Test func aScreenUnlockedBeforeTheRestartStartsHandedOverWithoutTakingAnything() {
        var s = makeScreen()
        s.idleLock = .milliseconds(30_000)
        let actions = s.beginHandedOver(unlockedBy: .pattern, since: at(1_000), at: at(5_000_000))
        // The outputs are let go: DRM master, if opening the card gave it, is not kept.
        #expect(actions == [.redraw, .cover(.ask(.letGo)), .armTimer(at(5_000_000) + .milliseconds(30_000))])
        #expect(s.session.state == .unlocked(.pattern, at: at(1_000)) && s.hold == .released)
        // A lock then takes the display first, as after any unlock.
        #expect(s.lock(at: at(6_000_000)) == [.cover(.ask(.cover))])
    }

    @Test func aFailureOnRecordMeansTheRestartStartsLocked() {
        var s = LockScreen(pads: .pattern(PatternLock(grid: grid3, minimumLength: 3)),
                           session: Session(restoring: LockoutRecord(failures: 1), at: at(0),
                                            schedule: .gatekeeper),
                           builder: SceneBuilder(theme: Theme(), size: Size(width: 300, height: 300)))
        #expect(s.beginHandedOver(unlockedBy: .pattern, since: at(1_000), at: at(5_000_000)) == nil)
        #expect(s.session.state == .locked && s.hold == .held)
    }
}
