import TouchlockCore
import TouchlockLogind
import TouchlockSystem

/// logind's side of the daemon: the bus (LogindBus) and what is done with it (LogindLink,
/// in Core). Connected once the lock screen is first shown; without a system bus or
/// libsystemd the daemon runs as before, saying so once, and tries again now and then
/// (a bus that comes later, a dbus-daemon restarted).
final class Logind {
    private let loop: EventLoop
    private unowned let daemon: Daemon
    private var link: LogindLink
    private var bus: LogindBus?
    private var toldAbsent = false
    static let retryAfter = Interval.milliseconds(30_000)

    init(seat: String, loop: EventLoop, daemon: Daemon) {
        self.loop = loop
        self.daemon = daemon
        link = LogindLink(seat: seat)
        daemon.onActivity = { [unowned self] in self.carryOut(self.link.activity()) }
        daemon.onIdle = { [unowned self] in self.carryOut(self.link.idle()) }
        connect()
    }

    private func connect() {
        do {
            bus = try LogindBus(loop: loop) { [unowned self] event in self.received(event) }
            toldAbsent = false
        } catch {
            if !toldAbsent { Log.warning("logind: not used: \(error) (loginctl lock-session and sleep do not lock)") }
            toldAbsent = true
            loop.schedule(at: EventLoop.now() + Self.retryAfter) { [weak self] _ in self?.connect() }
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
            carryOut(link.prepareForSleep(before: before))
        case .seat(let session, let seat):
            carryOut(link.seatOf(session, is: seat))
        case .sleepDelayTaken:
            carryOut(link.sleepDelayTaken())
        case .idleHintSet(let session, let idle):
            Log.debug("logind: idle hint \(idle) for \(session ?? "no active session")")
        case .failed(let request, let why):
            switch request {
            case .seat: link.seatUnknown(why)
            case .sleepDelay: link.sleepDelayRefused(why)
            case .watch: Log.warning("logind: cannot watch its signals: \(why)")
            case .idleHint: Log.debug("logind: cannot set the idle hint: \(why)")
            case .signal: Log.warning("logind: \(why)")
            }
        case .disconnected(let why):
            Log.warning("logind: the system bus connection is lost (\(why)); connecting again")
            link.disconnected()
            bus = nil
            toldAbsent = false
            loop.schedule(at: EventLoop.now() + .milliseconds(1000)) { [weak self] _ in self?.connect() }
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
                    case .success: self.carryOut(self.link.lockShown())
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
                bus?.releaseSleepDelay()
            case .setIdleHint(let idle):
                bus?.setIdleHint(idle, seat: link.seat)
            }
        }
    }
}
