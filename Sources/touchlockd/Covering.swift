import TouchlockCore
import TouchlockDisplay
import TouchlockSystem

/// The contract between the cover and whatever covers the screen: what the `Cover`
/// machine asks (`Cover.Request`: cover, uncover, let go; and at a stop, stay covered or
/// not) and what comes back (`Cover.Report`: covered, refused with a reason, uncovered,
/// lost, available), in words of neither VT nor DRM. The cover decides; this acts, and reports through
/// the daemon's loop, on a later turn than the request. Two ways implement it: the VT
/// hand-off (`TerminalCovering`: our VT, DRM master on every output, the input's grab) and
/// the compositor's session lock (`SessionLockCovering`, ext-session-lock-v1). A third
/// (DRM without VTs, say) is a third implementation and a word of `[display] cover`; the
/// cover, the lock screen and the daemon stay as they are.
protocol Covering: AnyObject {
    /// Whether the display is ours from the start with nothing to ask (no VT to switch to,
    /// no compositor): headless, `--vt none`.
    var coveredAtStart: Bool { get }
    /// Whether what is drawn is presented before the first cover (false: nothing reaches
    /// the screen until the display is taken, through our VT).
    var presentsFromStart: Bool { get }
    /// Whether touches and keys come through this way of covering (the compositor's
    /// seat), not from the kernel's devices.
    var bringsInput: Bool { get }
    /// Whether a start after an unlock (the runtime record says so) may leave the screen
    /// to the kiosk: what is on screen now is not ours.
    var mayStartHandedOver: Bool { get }
    /// Where what came of a request goes: the daemon passes it on to the lock screen on
    /// a later turn of the loop, never inside the call that asked for it.
    var report: ((Cover.Report) -> Void)? { get set }
    /// Carries out what the cover asks; `report` says what came of it.
    func carryOut(_ request: Cover.Request)
    /// Keeps every touch and key from other programs, or lets them go.
    func holdInput(_ on: Bool)
    /// The daemon stops: the screen stays covered (locked) or goes back to the kiosk.
    func shutdown(_ exit: Cover.Exit)
}

extension Covering {
    /// The display is asked for at start.
    var coveredAtStart: Bool { false }
    /// Frames are presented from the start.
    var presentsFromStart: Bool { true }
    /// Touches and keys come from the kernel's devices.
    var bringsInput: Bool { false }
    /// Nothing says what is on screen is not ours: a start locks.
    var mayStartHandedOver: Bool { false }
}

/// A way of covering other than the VT hand-off, chosen at start by `[display] cover`
/// (`chooseCover`, main.swift): it brings the outputs it shows the lock screen on, and is
/// wired to the daemon once the daemon is made. The VT hand-off is the daemon's own
/// (`TerminalCovering`, made by the daemon when it is given none of these).
protocol ChosenCovering: Covering {
    /// Status's `cover` word: `[display] cover`'s.
    var word: String { get }
    /// What the log calls it ("the compositor's session lock").
    var title: String { get }
    /// The outputs, the primary's first; throws when there is none to show on.
    func displays() throws(StartError) -> [Display]
    /// Wires it to the daemon (its outputs coming and going, its touches and keys);
    /// `end(status)` stops the daemon with that exit status (what it covers through gone).
    func attach(to daemon: Daemon, end: @escaping (Int32) -> Void)
}

/// Covering by a VT hand-off: our VT shown (its owner drops DRM master), master taken on
/// every output, the input grabbed; handed back in reverse. The order of the steps is
/// `TerminalCover`'s (TouchlockCore); this carries them out and reports each on a later
/// turn of the loop. A boot splash's hand-over is a part of it (`BootSplash`). Without a VT (`--vt none`, headless) the outputs are ours from the
/// start and only master and the grab move.
final class TerminalCovering: Covering {
    private let terminal: TerminalHandoff?
    private let loop: EventLoop
    /// The outputs' presenters, the primary's first (hotplug changes them).
    var presenters: () -> [Presenter] = { [] }
    /// The input, once it is open.
    var inputs: () -> Inputs? = { nil }
    /// `--once`: the display is never handed over (the loop stops at the unlock).
    private let once: Bool
    /// Closes the DRM card the outputs are on, at shutdown.
    var closeCard: (() -> Void)?
    /// At a stop while locked: the card left as it is, the lock screen on it, for the
    /// daemon after this one (nothing torn down, nothing taken out of systemd's store).
    var keepCovered: (() -> Void)?
    var report: ((Cover.Report) -> Void)?
    /// The order of the VT hand-off's steps.
    private var steps: TerminalCover
    /// plymouthd's end, watched while it owns the VT on screen at start.
    private let splash: BootSplash?
    /// The outputs were taken on another VT (a start in place) and ours has not been on
    /// screen since: its mode is set again once it is.
    private var takenOffOurTerminal = false

    init(terminal: TerminalHandoff?, once: Bool, loop: EventLoop) {
        self.terminal = terminal
        self.once = once
        self.loop = loop
        steps = TerminalCover(outputsHeld: terminal == nil)
        splash = terminal.flatMap { BootSplash(loop: loop, terminal: $0) }
        terminal?.onShown = { [unowned self] in self.step(.shown) }
        terminal?.onFailed = { [unowned self] why in
            Log.error("cannot show the lock screen: \(why)")
            self.step(.showFailed(why))
        }
        terminal?.onHandedBack = { [unowned self] in
            Log.info("VT hand-off: the kiosk's VT is shown again")
            self.step(.handedBack)
        }
    }

    /// Ours from the start when there is no VT to switch to.
    var coveredAtStart: Bool { terminal == nil }
    /// Nothing is shown before our VT is.
    var presentsFromStart: Bool { terminal == nil }

    func carryOut(_ request: Cover.Request) {
        carryOut(steps.handle(.asked(request, displayFree: displayFree)))
    }

    /// What a step did reaches the steps' order on a later turn of the loop, never inside
    /// the call that carried it out.
    private func step(_ event: TerminalCover.Event) {
        loop.deferred { [unowned self] in self.carryOut(self.steps.handle(event)) }
    }

    private func carryOut(_ actions: [TerminalCover.Action]) {
        for a in actions {
            switch a {
            case .show: showTerminal()
            case .takeOutputs: takeOutputs()
            case .releaseOutputs: releaseOutputs()
            case .letOutputsGo: for p in presenters() { p.letGo() }
            case .handBack:
                if let terminal { terminal.handBack() } else { step(.handedBack) }
            case .report(let r): report?(r)
            }
        }
    }

    /// Only with a VT hand-off and our VT not on screen; else (a restart between the
    /// unlock and the hand-back) it locks.
    var mayStartHandedOver: Bool {
        guard let terminal else { return false }
        return terminal.activeTerminal != terminal.number
    }

    /// Whether the outputs can be taken now, before any VT switch: DRM master is ours on
    /// the primary output and the VT on screen is another (a boot splash that let the
    /// display go, a text console).
    private var displayFree: Bool {
        guard let terminal, let active = terminal.activeTerminal, active != terminal.number else { return false }
        return presenters().first?.display.holdsMaster ?? false
    }

    /// Our VT is asked for once what is drawn is on the screen: at a start in place (the
    /// outputs taken on a boot splash's VT) the lock screen's first frame is scanned out
    /// before the switch, so nothing the splash's daemon does during it shows. No VT: it
    /// is shown.
    private func showTerminal() {
        guard let terminal else { return step(.shown) }
        guard let primary = presenters().first, !primary.isReleased else { return terminal.show() }
        primary.whenShown { terminal.show() }
    }

    /// DRM master on every output (our VT is on screen, or there is no VT to switch),
    /// then a full redraw. Only the primary's refusal refuses: a mirror that cannot be
    /// taken is said and left inactive.
    private func takeOutputs() {
        let all = presenters()
        for p in all { p.retry(.terminalAcquired) }
        if let terminal, let active = terminal.activeTerminal {
            if active != terminal.number {
                takenOffOurTerminal = true
            } else if takenOffOurTerminal {
                // Held already (drawn on the VT on screen before ours was shown): the mode
                // is set again on ours, whatever the VT before did to the screen meanwhile.
                takenOffOurTerminal = false
                for p in all where !p.isReleased { p.display.showAgain() }
            }
        }
        do {
            for p in all.dropFirst() {
                do { try p.take() } catch { Log.warning("output \(p.display.name): cannot take it: \(error)") }
            }
            try all.first?.take()
        } catch {
            Log.warning("cannot take the display: \(error)")
            return step(.outputsRefused("\(error)"))
        }
        for p in all { p.redraw() }
        step(.outputsTaken)
    }

    private func releaseOutputs() {
        guard !once else { return }
        for p in presenters() {
            p.onReleased = { [unowned self] in self.outputReleased() }
            p.releaseWhenShown()
        }
    }

    /// Told by each presenter that has handed its output over; reports once all have
    /// (DRM master is dropped first: the kiosk cannot take it back while we hold it).
    private func outputReleased() {
        guard presenters().allSatisfy(\.isReleased) else { return }
        step(.outputsReleased)
    }

    func holdInput(_ on: Bool) { inputs()?.grab(on) }

    func shutdown(_ exit: Cover.Exit) {
        switch exit {
        case .stayCovered:
            // Locked: the screen stays covered through a stop, a restart or an upgrade.
            // The card is not closed: its descriptor stays in systemd's store with DRM
            // master and the lock screen's last frame (nothing of before is put back, no
            // framebuffer removed), and our VT stays shown with switching locked; the
            // daemon after this one takes both over.
            keepCovered?()
            terminal?.shutdown(.stayCovered)
        case .giveBack:
            // The card (and DRM master with it) goes before the VT is given back: the
            // kiosk takes master when its VT is shown.
            closeCard?()
            terminal?.shutdown(.giveBack)
        case .release:
            // A system shutdown while locked: the card is closed (out of the store: no
            // daemon follows; nothing of the kiosk was put back on the CRTCs, see
            // Daemon.shutdown) and VT switching unlocked, our VT still shown, for
            // plymouth's poweroff splash.
            closeCard?()
            terminal?.shutdown(.release)
        }
    }
}
