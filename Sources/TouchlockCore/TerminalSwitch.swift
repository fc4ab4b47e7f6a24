/// Switching the console between the kiosk's virtual terminal and ours, the way the Linux
/// desktop hands a seat between sessions. Ours is in VT_PROCESS mode: the kernel asks
/// before it switches away from it (the release signal) and tells when it is shown (the
/// acquire signal); the kiosk's VT owner (weston's launcher, seatd, logind) drops DRM
/// master and the input when its VT is released, and takes them back when it is shown
/// again. The owner carries out the actions (ioctls on the VT) and reports the signals.
/// The diagram in docs/state-machines.md changes with it.
///
///     background --show--> switchingIn --acquired--> foreground --handBack--> switchingOut
///         ^                    |  (lock switching,       |  release asked:      |
///         |                    |   shown)                |  refused            | release asked:
///         |                    +--timeout: failed,       |                     | allowed, handedBack
///         |                       the show still wanted  | handBack, nothing
///         |                       (a late acquire shows; | to return to
///         |                        asked for again)      |
///         |                                              v
///         +--release asked: allowed------------------ yielded (switching allowed)
///         +-------------------------------------------------------------------+
///
/// A switch to ours that times out is still wanted: the kernel keeps it pending while the
/// active VT's owner lives (its answer, if it comes, shows ours late), but if the owner
/// died before answering nothing completes it until VT_ACTIVATE is asked again (the kernel
/// then finds the owner gone, resets its VT and switches). So ours is asked for again
/// after `timeout`, then at doubling intervals up to `retryCap`, until it is shown or the
/// show is called off.
///
/// The VT to return to is known from the switch in, or, when ours was already on screen
/// (a daemon restarted while locked), from `returnTo` given at start (kept across
/// restarts by the owner, else the lowest VT in use): a restarted daemon hands back like
/// the one before it, and with nothing at all to return to it still lets switching go.
public struct TerminalSwitch: Sendable {
    public enum State: Hashable, Sendable, CustomStringConvertible {
        /// Ours is not on screen.
        case background
        /// VT_ACTIVATE of ours was asked for at `since`; the acquire signal is awaited.
        case switchingIn(returnTo: Int?, since: Instant)
        /// Ours is on screen and switching away is locked; `returnTo` is shown again at
        /// the hand-back (nil: nothing to return to, ours was already active).
        case foreground(returnTo: Int?)
        /// VT_ACTIVATE of `to` was asked for; our release signal is awaited. `showAgain`:
        /// a lock came meanwhile, so the release will be refused.
        case switchingOut(to: Int, since: Instant, showAgain: Bool)
        /// Ours is on screen after the unlock with no other VT to show: switching away is
        /// allowed (chvt, Ctrl+Alt+Fn, logind activating a session), nothing is locked.
        case yielded

        public var name: String {
            switch self {
            case .background: "background"
            case .switchingIn: "switching_in"
            case .foreground: "foreground"
            case .switchingOut: "switching_out"
            case .yielded: "yielded"
            }
        }

        public var description: String { name }
    }

    public enum Action: Hashable, Sendable {
        /// VT_ACTIVATE this VT.
        case activate(Int)
        /// VT_RELDISP VT_ACKACQ: ours is shown.
        case acknowledgeAcquire
        /// VT_RELDISP 1: the kernel may switch away from ours.
        case allowRelease
        /// VT_RELDISP 0: ours stays on screen.
        case refuseRelease
        /// VT_LOCKSWITCH: no switch away (chvt, Ctrl+Alt+Fn) while locked.
        case lockSwitching
        /// VT_UNLOCKSWITCH, before our own switch back (else it is ignored too).
        case unlockSwitching
        case armTimer(Instant)
        /// Ours is on screen: DRM master can be taken and the lock screen drawn.
        case shown
        /// The switch to ours did not complete: the display cannot be taken.
        case failed(String)
        /// The kiosk's VT is on screen again.
        case handedBack
    }

    /// Our VT's number.
    public let ours: Int
    /// How long a switch may take before it counts as failed.
    public var timeout: Interval
    public private(set) var state: State = .background
    /// The VT last seen active apart from ours: where an unexpected switch to ours is sent
    /// back, and where the screen goes back to when ours was already shown.
    public private(set) var kiosk: Int?
    /// A show timed out (the active VT's owner did not release it) and was not called
    /// off: if the switch completes later (the owner resumes), ours is shown and kept.
    public var showWanted: Bool { retryAt != nil }
    /// While the show is wanted: when ours is asked for again, and the interval after that.
    public private(set) var retryAt: Instant?
    private var retryInterval: Interval = .milliseconds(0)
    /// The longest interval between two asks of a show that timed out.
    public static let retryCap: Interval = .milliseconds(30_000)

    /// `returnTo`: the VT to hand back to if ours is already on screen at the first show
    /// (a restart while locked), as kept by the owner or found in use; nil: none known.
    public init(ours: Int, returnTo: Int? = nil, timeout: Interval = .milliseconds(2000)) {
        self.ours = ours
        self.timeout = timeout
        kiosk = returnTo == ours ? nil : returnTo
    }

    /// What becomes of our VT when the daemon stops (`exit`).
    public enum Exit: Hashable, Sendable {
        /// Left as it is: shown, in VT_PROCESS and graphics mode, switching locked. The
        /// kernel keeps all of it after the process has gone, so no Ctrl+Alt+Fn or chvt
        /// shows another VT until the daemon after this one takes ours over (physlock's
        /// rule).
        case leaveLocked
        /// Given back as the kernel keeps a VT nobody owns (VT_AUTO, text mode, switching
        /// unlocked), then this VT shown, if any.
        case restore(showing: Int?)
    }

    /// Our VT at a stop of the kind `exit` (`Cover.exit`): left locked, given back, or, at
    /// a system shutdown while locked, only given back to the kernel, still shown.
    public func exit(_ exit: Cover.Exit) -> Exit {
        switch exit {
        case .stayCovered: self.exit(locked: true)
        case .giveBack: self.exit(locked: false)
        case .release: .restore(showing: nil)
        }
    }

    /// Our VT at a stop; `locked`: the screen stays covered (`Cover.exit`). Shown and
    /// locked, it stays so; shown and unlocked, the kiosk's VT is shown again; else it is
    /// only given back (a switch under way, or ours not on screen: nothing to keep).
    public func exit(locked: Bool) -> Exit {
        switch state {
        case .foreground(let back):
            if locked { return .leaveLocked }
            guard let back, back != ours else { return .restore(showing: nil) }
            return .restore(showing: back)
        case .switchingOut(_, _, true):
            // A lock came during the hand-back: its refusal of the release is what the
            // kernel waits for, and ours is still shown.
            return locked ? .leaveLocked : .restore(showing: nil)
        case .background, .switchingIn, .switchingOut, .yielded:
            return .restore(showing: nil)
        }
    }

    /// The VT the screen goes back to at the next hand-back, or nil: for the owner to keep
    /// across a restart.
    public var returnTarget: Int? {
        switch state {
        case .switchingIn(let back, _), .foreground(let back): back ?? kiosk
        case .switchingOut(let to, _, _): to
        case .background, .yielded: kiosk
        }
    }

    /// Shows ours; `active` is the VT on screen now (VT_GETSTATE). `returnTo`: where to
    /// hand back instead of `active`, when nobody has `active` open (the VT of a daemon
    /// before this one that died there: handing back to it would show an empty console).
    public mutating func show(active: Int, returnTo: Int? = nil, at now: Instant) -> [Action] {
        switch state {
        case .background:
            stopRetrying()
            if active == ours {
                // Shown before us (a restart while locked): back to the VT known, if any.
                transition(to: .foreground(returnTo: kiosk), "show (already active)")
                return [.lockSwitching, .shown]
            }
            let back = returnTo ?? active
            kiosk = back
            transition(to: .switchingIn(returnTo: back, since: now), "show")
            // Switching may still be locked by an instance that died while locked (the
            // kernel keeps VT_LOCKSWITCH): it would ignore our VT_ACTIVATE.
            return [.unlockSwitching, .activate(ours), .armTimer(now + timeout)]
        case .switchingIn:
            return []
        case .foreground:
            return [.shown]
        case .switchingOut(let to, let since, _):
            // Our release is still to come: it will be refused.
            transition(to: .switchingOut(to: to, since: since, showAgain: true), "show while switching out")
            return []
        case .yielded:
            transition(to: .foreground(returnTo: kiosk), "show (still on screen)")
            return [.lockSwitching, .shown]
        }
    }

    /// The acquire signal: ours is on screen.
    public mutating func acquired(at now: Instant) -> [Action] {
        switch state {
        case .switchingIn(let back, _):
            transition(to: .foreground(returnTo: back), "acquired")
            return [.acknowledgeAcquire, .lockSwitching, .shown]
        case .background where showWanted:
            // The switch asked for earlier completes late (the VT owner resumed): the lock
            // that timed out is shown now.
            stopRetrying()
            Log.info("terminal: VT \(ours) shown late; the lock screen is shown")
            transition(to: .foreground(returnTo: kiosk), "acquired late")
            return [.acknowledgeAcquire, .lockSwitching, .shown]
        case .background:
            // Someone switched to ours (chvt) while the kiosk has the display: the kernel
            // waits for the acknowledgement, then the kiosk's VT is shown again.
            Log.warning("terminal: VT \(ours) shown by someone else; switching back")
            guard let k = kiosk, k != ours else {
                transition(to: .foreground(returnTo: nil), "acquired unasked")
                return [.acknowledgeAcquire]
            }
            transition(to: .switchingOut(to: k, since: now, showAgain: false), "acquired unasked")
            return [.acknowledgeAcquire, .activate(k), .armTimer(now + timeout)]
        case .foreground, .switchingOut, .yielded:
            Log.bug("terminal: acquire signal while \(state)")
            return [.acknowledgeAcquire]
        }
    }

    /// The release signal: the kernel asks to switch away from ours.
    public mutating func releaseRequested(at now: Instant) -> [Action] {
        switch state {
        case .foreground:
            // Locked: nothing may switch the VT away.
            Log.info("terminal: a switch away from VT \(ours) refused while locked")
            return [.refuseRelease]
        case .switchingOut(let to, _, let showAgain):
            if showAgain {
                transition(to: .foreground(returnTo: to), "release refused: shown again")
                return [.refuseRelease, .lockSwitching, .shown]
            }
            kiosk = to
            transition(to: .background, "released")
            return [.allowRelease, .handedBack]
        case .yielded:
            // Unlocked with nothing to return to: whoever switches away may.
            transition(to: .background, "released (yielded)")
            return [.allowRelease]
        case .switchingIn, .background:
            // Ours is not shown: nothing of ours to keep (a switch in progress elsewhere).
            Log.bug("terminal: release signal while \(state)")
            return [.allowRelease]
        }
    }

    /// Gives the screen back to the VT that was shown before ours, once DRM master has
    /// been dropped (the kiosk cannot take it back while we hold it).
    public mutating func handBack(at now: Instant) -> [Action] {
        switch state {
        case .foreground(let back):
            guard let back, back != ours else {
                // Nothing to return to (ours was active from the start and no other VT is
                // known): ours stays on screen, but switching away is allowed again.
                transition(to: .yielded, "hand back: nothing to return to")
                return [.unlockSwitching, .handedBack]
            }
            transition(to: .switchingOut(to: back, since: now, showAgain: false), "hand back")
            return [.unlockSwitching, .activate(back), .armTimer(now + timeout)]
        case .switchingIn(let back, _):
            // Handed back before ours was shown: the switch in still completes, and the
            // acquire finds us in the background and switches back.
            transition(to: .background, "hand back before shown")
            kiosk = back
            return []
        case .switchingOut(let to, let since, true):
            transition(to: .switchingOut(to: to, since: since, showAgain: false), "hand back again")
            return []
        case .background:
            // Ours is not on screen (a show that timed out is no longer wanted): the
            // screen is the kiosk's VT's already.
            stopRetrying()
            return [.handedBack]
        case .switchingOut, .yielded:
            return []
        }
    }

    /// VT_ACTIVATE itself failed (`reason`): the switch asked for will not happen.
    public mutating func activateFailed(_ reason: String, at now: Instant) -> [Action] {
        switch state {
        case .switchingIn:
            transition(to: .background, "activate failed")
            return [.failed("cannot switch to VT \(ours): \(reason)")]
        case .switchingOut(let to, _, _):
            transition(to: .foreground(returnTo: to), "activate failed")
            return [.lockSwitching, .failed("cannot switch back to VT \(to): \(reason)")]
        case .background where showWanted:
            // Asked for again after a timeout: the next ask may get through.
            Log.warning("terminal: VT \(ours) asked for again: \(reason)")
            return []
        case .background, .foreground, .yielded:
            Log.bug("terminal: activate failed while \(state)")
            return []
        }
    }

    /// A process known to own the VT on screen (plymouthd) has ended: a switch to ours
    /// waiting on its answer will not complete until it is asked for again, so it is, now.
    public mutating func activeOwnerEnded(at now: Instant) -> [Action] {
        switch state {
        case .switchingIn:
            Log.info("terminal: the active VT's owner ended during the switch; VT \(ours) asked for again")
            return [.activate(ours)]
        case .background where showWanted:
            Log.info("terminal: the active VT's owner ended; VT \(ours) asked for again")
            return [.activate(ours)]
        case .background, .foreground, .switchingOut, .yielded:
            return []
        }
    }

    public mutating func timerFired(at now: Instant) -> [Action] {
        switch state {
        case .switchingIn(_, let since):
            guard now >= since + timeout else { return [.armTimer(since + timeout)] }
            transition(to: .background, "timeout")
            // The kernel keeps the switch pending until the owner answers: if it does, the
            // acquire signal still comes, and ours is shown then. If it died, only another
            // ask completes it.
            retryInterval = timeout
            retryAt = now + timeout
            return [.failed("the switch to VT \(ours) did not complete within \(timeout.milliseconds) ms"
                            + " (the active VT's owner did not release it)"), .armTimer(now + timeout)]
        case .switchingOut(let to, let since, _):
            guard now >= since + timeout else { return [.armTimer(since + timeout)] }
            // The kernel did not switch: ours stays shown and locked again.
            transition(to: .foreground(returnTo: to), "timeout switching out")
            return [.lockSwitching, .failed("the switch back to VT \(to) did not complete within \(timeout.milliseconds) ms")]
        case .background:
            guard let at = retryAt else { return [] }
            guard now >= at else { return [.armTimer(at)] }
            retryInterval = min(Interval(microseconds: retryInterval.microseconds.saturatingMultiplied(by: 2)), Self.retryCap)
            retryAt = now + retryInterval
            Log.info("terminal: VT \(ours) asked for again (the switch asked for has not completed)")
            return [.activate(ours), .armTimer(now + retryInterval)]
        case .foreground, .yielded:
            return []
        }
    }

    private mutating func stopRetrying() {
        retryAt = nil
    }

    private mutating func transition(to new: State, _ event: String) {
        Log.debug("terminal: \(state) -> \(event) -> \(new)")
        state = new
    }
}
