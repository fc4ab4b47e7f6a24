import TouchlockCore
import TouchlockLogind
import TouchlockSystem

/// logind's side of the daemon: the bus (LogindBus) and what is done with it (LogindLink,
/// in Core). Connected once the lock screen is first shown; without a system bus or
/// libsystemd the daemon runs as before, saying so once. A bus that comes later, or comes
/// back after dbus-daemon was restarted, is connected to when its socket appears (inotify:
/// no wake-up meanwhile); without libsystemd nothing is tried again.
final class Logind {
    private let loop: EventLoop
    private unowned let daemon: Daemon
    private var link: LogindLink
    private var bus: LogindBus?
    private var toldAbsent = false
    /// Watching for the bus's socket to appear.
    private var socketWatch: DirectoryWatch?
    /// Called as the sleep is let go and on waking up (the watchdog's beat).
    var aroundSleep: (() -> Void)?

    init(seat: String, loop: EventLoop, daemon: Daemon) {
        self.loop = loop
        self.daemon = daemon
        link = LogindLink(seat: seat)
        daemon.onActivity = { [unowned self] t in self.carryOut(self.link.activity(at: t)) }
        daemon.onIdle = { [unowned self] in self.carryOut(self.link.idle()) }
        connect()
    }

    private func connect() {
        do {
            bus = try LogindBus(loop: loop) { [unowned self] event in self.received(event) }
            toldAbsent = false
            socketWatch = nil
        } catch {
            let retry = !LogindBus.cannotLoad(error)
            if !toldAbsent {
                Log.warning("logind: not used: \(error); loginctl lock-session and sleeps do not lock"
                            + (retry ? " until the system bus is there" : ""))
            }
            toldAbsent = true
            if retry { watchForSocket() }
        }
    }

    /// Connects again when the bus's socket is made (or its directory, when it is not there).
    private func watchForSocket() {
        guard socketWatch == nil else { return }
        let (dir, name) = LogindBus.socketToWatch
        do {
            socketWatch = try DirectoryWatch(dir, loop: loop) { [weak self] change in
                let now: Bool
                switch change {
                case .appeared(let n): now = n == name
                case .rescan: now = true
                case .removed: now = false
                }
                guard now else { return }
                self?.loop.deferred { [weak self] in
                    guard let self, self.bus == nil else { return }
                    self.socketWatch = nil
                    self.connect()
                }
            }
        } catch {
            Log.warning("logind: cannot watch \(dir) for the system bus: \(error); not tried again")
        }
    }

    private func received(_ event: LogindBus.Event) {
        switch event {
        case .watching:
            Log.info("logind: watching seat \(link.seat)'s sessions for Lock, and sleeps")
            carryOut(link.watching())
        case .lock(let session):
            carryOut(link.sessionLockAsked(session))
        case .unlock(let session):
            link.sessionUnlockAsked(session)
        case .prepareForSleep(let before):
            Log.info(before ? "logind: going to sleep" : "logind: woke up")
            if !before { aroundSleep?() }
            carryOut(link.prepareForSleep(before: before))
        case .seat(let session, let seat):
            carryOut(link.seatOf(session, is: seat))
        case .sleepDelayTaken:
            carryOut(link.sleepDelayTaken())
        case .idleHintSet(let session, let idle):
            Log.debug("logind: idle hint \(idle) for \(session ?? "no session on the seat")")
        case .failed(let request, let why):
            switch request {
            case .seat: link.seatUnknown(why)
            case .sleepDelay: link.sleepDelayRefused(why)
            case .watch: Log.warning("logind: cannot watch its signals: \(why)")
            case .idleHint: Log.debug("logind: cannot set the idle hint: \(why)")
            case .signal: Log.warning("logind: \(why)")
            }
        case .owner(let owner):
            Log.info(owner.map { "logind: its signals are believed from \($0) only, the owner of org.freedesktop.login1" }
                     ?? "logind: org.freedesktop.login1 has no owner (logind is not running): no signal is believed")
        case .ignoredSignals(let total):
            if let line = link.signalsIgnored(total: total, at: EventLoop.now()) { Log.warning(line) }
        case .disconnected(let why):
            Log.warning("logind: the system bus connection is lost (\(why)); connecting again")
            link.disconnected()
            bus = nil
            toldAbsent = false
            loop.deferred { [weak self] in self?.connect() }
        }
    }

    private func carryOut(_ actions: [LogindLink.Action]) {
        for a in actions {
            switch a {
            case .askSeat(let session):
                bus?.askSeat(ofSession: session)
            case .lock(let reason):
                Log.info("\(reason): locking")
                daemon.lockRequested(shown: true) { [unowned self] result in
                    switch result {
                    case .success:
                        if self.link.sleepPending { Log.info("logind: the lock screen is shown; the sleep may go on") }
                        self.carryOut(self.link.lockShown())
                    case .failure(let e): self.carryOut(self.link.lockRefused(e.message))
                    }
                }
            case .takeSleepDelay:
                guard let bus else {
                    link.sleepDelayRefused("not connected to the system bus")
                    continue
                }
                bus.takeSleepDelay(who: "touchlock", why: "The lock screen is shown before the system sleeps")
            case .releaseSleepDelay:
                aroundSleep?()
                bus?.releaseSleepDelay()
            case .setIdleHint(let idle):
                bus?.setIdleHint(idle, seat: link.seat)
            }
        }
    }
}
