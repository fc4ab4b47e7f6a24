import TouchlockCore
import TouchlockDisplay

/// What carries out the cover's actions on the device and reports what came of them: the
/// one way the daemon covers the screen and keeps the input. The `Cover` machine decides;
/// this acts. Today that is a VT of our own, DRM master on every output and the input's
/// grab (`TerminalCovering`); another way of covering (a Wayland ext-session-lock-v1
/// client, DRM with no VT) is another implementation of this, with the cover and the lock
/// screen unchanged.
protocol Covering: AnyObject {
    /// Whether covering goes through a VT switch (the cover's `hasTerminal`).
    var hasTerminal: Bool { get }
    /// Without a VT: whether the display is asked for at start too (the cover's
    /// `asksAtStart`), rather than ours from the start.
    var asksAtStart: Bool { get }
    /// Whether touches and keys come through this way of covering (the compositor's
    /// seat), not from the kernel's devices.
    var bringsInput: Bool { get }
    /// Whether a start after an unlock (the runtime record says so) may leave the screen
    /// to the kiosk: what is on screen now is not ours.
    var mayStartHandedOver: Bool { get }
    /// Whether the outputs can be taken now, before any VT switch: DRM master is ours on
    /// the primary output and the VT on screen is another (a boot splash that let the
    /// display go, a text console). The cover's `start(inPlace:)`.
    var displayFree: Bool { get }
    /// Where what came of an action goes: the daemon passes it on to the lock screen on
    /// a later turn of the loop, never inside the call that asked for it.
    var report: ((Cover.Event) -> Void)? { get set }
    /// `showTerminal`: `terminalShown` or `terminalFailed` follows.
    func showTerminal()
    /// `handBackTerminal`: `terminalHandedBack` follows.
    func handBackTerminal()
    /// `takeOutputs`: `outputsTaken` or `outputsRefused` follows.
    func takeOutputs()
    /// `releaseOutputs`: each output once its frame clearing the screen is shown;
    /// `outputsReleased` follows when all have.
    func releaseOutputs()
    /// `letOutputsGo`: the outputs, never taken, are let go at once (DRM master dropped
    /// if opening the card gave it); nothing is reported.
    func letOutputsGo()
    /// Keeps every touch and key from other programs, or lets them go.
    func holdInput(_ on: Bool)
    /// The daemon stops: the screen stays covered (locked) or goes back to the kiosk.
    func shutdown(_ exit: Cover.Exit)
}

extension Covering {
    /// The display is ours from the start, or through a VT.
    var asksAtStart: Bool { false }
    /// Touches and keys come from the kernel's devices.
    var bringsInput: Bool { false }
    /// Nothing says what is on screen is not ours: a start locks.
    var mayStartHandedOver: Bool { false }
}

/// Covering by a VT hand-off: our VT shown (its owner drops DRM master), master taken on
/// every output, the input grabbed; handed back in reverse. Without a VT (`--vt none`,
/// headless) the outputs are ours from the start and only master and the grab move.
final class TerminalCovering: Covering {
    private let terminal: TerminalHandoff?
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
    var report: ((Cover.Event) -> Void)?
    /// The outputs were taken on another VT (a start in place) and ours has not been on
    /// screen since: its mode is set again once it is.
    private var takenOffOurTerminal = false

    init(terminal: TerminalHandoff?, once: Bool) {
        self.terminal = terminal
        self.once = once
        terminal?.onShown = { [unowned self] in self.report?(.terminalShown) }
        terminal?.onFailed = { [unowned self] why in
            Log.error("cannot show the lock screen: \(why)")
            self.report?(.terminalFailed(why))
        }
        terminal?.onHandedBack = { [unowned self] in
            Log.info("VT hand-off: the kiosk's VT is shown again")
            self.report?(.terminalHandedBack)
        }
    }

    var hasTerminal: Bool { terminal != nil }
    /// Only with a VT hand-off and our VT not on screen; else (a restart between the
    /// unlock and the hand-back) it locks.
    var mayStartHandedOver: Bool {
        guard let terminal else { return false }
        return terminal.activeTerminal != terminal.number
    }

    var displayFree: Bool {
        guard let terminal, let active = terminal.activeTerminal, active != terminal.number else { return false }
        return presenters().first?.display.holdsMaster ?? false
    }

    /// Our VT is asked for once what is drawn is on the screen: at a start in place (the
    /// outputs taken on a boot splash's VT) the lock screen's first frame is scanned out
    /// before the switch, so nothing the splash's daemon does during it shows.
    func showTerminal() {
        guard let terminal else { return }
        guard let primary = presenters().first, !primary.isReleased else { return terminal.show() }
        primary.whenShown { terminal.show() }
    }

    func handBackTerminal() { terminal?.handBack() }

    /// DRM master on every output (our VT is on screen, or there is no VT to switch),
    /// then a full redraw. Only the primary's refusal refuses: a mirror that cannot be
    /// taken is said and left inactive.
    func takeOutputs() {
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
            report?(.outputsRefused("\(error)"))
            return
        }
        for p in all { p.redraw() }
        report?(.outputsTaken)
    }

    func releaseOutputs() {
        guard !once else { return }
        for p in presenters() {
            p.onReleased = { [unowned self] in self.outputReleased() }
            p.releaseWhenShown()
        }
    }

    func letOutputsGo() {
        for p in presenters() { p.letGo() }
    }

    /// Told by each presenter that has handed its output over; reports once all have
    /// (DRM master is dropped first: the kiosk cannot take it back while we hold it).
    private func outputReleased() {
        guard presenters().allSatisfy(\.isReleased) else { return }
        report?(.outputsReleased)
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
