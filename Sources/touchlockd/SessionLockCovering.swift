import TouchlockCore
import TouchlockDisplay
import TouchlockSystem
import TouchlockWayland

/// Covering by the Wayland compositor's session lock (ext-session-lock-v1): the
/// compositor shows only our lock surfaces, one per output, and gives them every touch and
/// key; no VT, no DRM master, no grab. It keeps the session locked if we die, and the
/// daemon after this one takes the lock over by asking for it again.
final class SessionLockCovering: ChosenCovering {
    let connection: WaylandConnection
    /// The outputs' presenters, the primary's first.
    var presenters: () -> [Presenter] = { [] }
    var report: ((Cover.Report) -> Void)?
    /// The compositor's connection is gone (the compositor stopped, crashed, was restarted):
    /// nothing more can be shown or asked through it, and a compositor started again is
    /// another connection, which a new start of the daemon makes.
    var onGone: ((WaylandFailure) -> Void)?
    /// A lock asked for and not yet granted or refused.
    private var taking = false
    /// An unlock sent and not yet confirmed by the roundtrip.
    private var releasing = false

    init(connection: WaylandConnection) {
        self.connection = connection
        connection.onLockEvent = { [unowned self] event in self.lockEvent(event) }
    }

    var bringsInput: Bool { true }
    var word: String { "session-lock" }
    var title: String { "the compositor's session lock" }

    /// The compositor's outputs (those it has given a size).
    func displays() throws(StartError) -> [Display] {
        let shown = Self.sized(connection.outputs)
        guard !shown.isEmpty else { throw StartError("the compositor shows no output to lock") }
        return shown
    }

    /// The outputs the compositor has given a size: only those are drawn on.
    private static func sized(_ outputs: [Display]) -> [Display] {
        outputs.filter { $0.size.width > 0 && $0.size.height > 0 }
    }

    /// The compositor's outputs coming and going, its seat's touches and keys, to the
    /// daemon. The compositor's connection gone (it stopped, crashed, was restarted), the
    /// daemon ends with status 1: systemd starts it again (Restart=), and that start waits
    /// for the compositor ([display] wayland_wait_s); the record still says locked if it
    /// was, so the lock is asked for at once then.
    func attach(to daemon: Daemon, end: @escaping (Int32) -> Void) {
        presenters = { [unowned daemon] in daemon.presenters }
        connection.onOutputsChanged = { [unowned daemon] added, removed in
            daemon.outputsChanged(added: Self.sized(added), removed: removed)
        }
        connection.onOutputResized = { [unowned daemon] output in daemon.outputResized(output) }
        connection.onTouches = { [unowned daemon] touches, output, time in daemon.touched(touches, onOutput: output, at: time) }
        connection.onKey = { [unowned daemon] key, time in daemon.hardwareKey(key, at: time) }
        connection.isStarted = true
        onGone = { why in
            Log.error("session lock: \(why): stopping, to be started again for the next compositor")
            end(1)
        }
    }
    /// The compositor keeps nothing of ours between two daemons but the lock itself: a
    /// record that says unlocked is taken at its word (the app keeps the screen).
    var mayStartHandedOver: Bool { true }

    func carryOut(_ request: Cover.Request) {
        switch request {
        case .cover: lock()
        case .uncover: unlock()
        case .letGo: letOutputsGo()
        }
    }

    /// Locks the session (taking over a lock the compositor kept from the daemon before);
    /// `covered` follows at the compositor's `locked`, `refused` at `finished`.
    private func lock() {
        for p in presenters() {
            do { try p.take() } catch { Log.warning("output \(p.display.name): \(error)") }
        }
        for p in presenters() { p.redraw() }
        if connection.isLocked {
            report?(.covered)
            return
        }
        taking = true
        connection.lock()
    }

    /// Each output's frame clearing the screen is shown, then one unlock for all.
    private func unlock() {
        for p in presenters() {
            p.onReleased = { [unowned self] in self.outputReleased() }
            p.releaseWhenShown()
        }
    }

    private func outputReleased() {
        guard presenters().allSatisfy(\.isReleased), !releasing else { return }
        releasing = true
        connection.unlock()
    }

    private func letOutputsGo() {
        for p in presenters() { p.letGo() }
    }

    /// The compositor gives our surfaces every touch and key while locked.
    func holdInput(_ on: Bool) {}

    private func lockEvent(_ event: SessionLockEvent) {
        switch event {
        case .locked:
            if taking {
                taking = false
                report?(.covered)
            }
        case .finished(let wasLocked):
            let why = wasLocked
                ? "the compositor ended the session lock (another locker took it, or its policy)"
                : "the compositor refused the session lock (another locker holds it, or it allows no takeover)"
            if taking {
                taking = false
                report?(.refused(why))
            } else if !releasing {
                report?(.lost(why))
            }
        case .unlocked:
            if releasing {
                releasing = false
                report?(.uncovered)
            }
        case .failed(let failure):
            if taking {
                taking = false
                report?(.refused("\(failure)"))
            } else if releasing {
                // The compositor is gone: so is its session, and its lock with it.
                releasing = false
                report?(.uncovered)
            } else {
                report?(.lost("\(failure)"))
            }
            onGone?(failure)
        }
    }

    /// How long after the compositor grants a lock our lock surfaces are kept at a stop
    /// that leaves it locked. A compositor may cover an output by itself only some time
    /// after a new lock: labwc 0.8.3 leaves what is under the lock surfaces shown for its
    /// first 100 ms (to spare a flicker when the locker's surfaces come fast), and a locker
    /// gone within them takes its surfaces with it, so the app shows until then.
    static let blankingHold = Interval.milliseconds(250)

    func shutdown(_ exit: Cover.Exit) {
        switch exit {
        case .stayCovered, .release:
            // The compositor keeps the session locked after its locker is gone: the daemon
            // after this one takes the lock over (a system shutdown takes the compositor
            // down with it). A lock granted (or asked for) just now is held a little first.
            let now = EventLoop.now()
            if let since = connection.lockedAt ?? (connection.isAskingForLock ? now : nil),
               since + Self.blankingHold > now {
                let left = since + Self.blankingHold - now
                Log.info("session lock: left to the compositor, locked, in \(left.milliseconds) ms (granted \((now - since).milliseconds) ms ago: the compositor may not cover its outputs by itself yet)")
                connection.disconnect(notBefore: since + Self.blankingHold)
            } else {
                Log.info("session lock: left to the compositor, locked")
                connection.disconnect()
            }
        case .giveBack:
            connection.unlockNow()
            connection.disconnect()
        }
    }
}
