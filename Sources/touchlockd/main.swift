import Glibc
import TouchlockCommandLine
import TouchlockConfig
import TouchlockControl
import TouchlockCore
import TouchlockDisplay
import TouchlockRender
import TouchlockSystem
import TouchlockWayland

func fail(_ message: String, code: Int32 = 1) -> Never {
    StandardStreams.error("touchlockd: \(message)")
    exit(code)
}

/// The DRM cards the outputs are on, kept for the daemon's life (hotplug re-probes them,
/// a card that appears late is adopted, one that goes away dropped).
nonisolated(unsafe) var cards: Cards?

/// The outputs of every card covered, card by card: the lock screen takes touches in the
/// first's layout (a panel on another output has its touches moved there, see `Daemon.place`).
func openDisplays(_ config: Config, _ options: Options, _ loop: EventLoop) throws(StartError) -> [Display] {
    let rotation = config.displayRotation
    func drm() throws(SystemError) -> [Display] {
        // Each card's descriptor is kept in systemd's store (FileDescriptorStoreMax=): a
        // daemon restarted (after a crash, the watchdog's kill, a stop while locked: an
        // upgrade, `systemctl restart`) gets them back with DRM master and the lock screen
        // still on the screens, instead of dark screens until its first frame. A stop
        // while locked leaves them there (systemd >= 254 keeps the store across a restart:
        // FileDescriptorStorePreserve=restart); one that gives the screens back takes them out.
        let c = try Cards(config: config, loop: loop)
        cards = c
        if let name = config.touchOutput, !c.outputs.contains(where: { $0.connectorName == name }) {
            Log.warning("[input] output = \(name): no such connected output (yet); panels go by their size, else to \(c.outputs[0].connectorName)")
        }
        return c.outputs
    }
    switch options.display {
    case .headless:
        return [try openHeadless(options, loop, rotation: rotation)]
    case .drm, .auto:
        // Never the headless display unless asked for: a lock screen that says it is shown
        // while the console or the kiosk app is on the screen is worse than none.
        do { return try drm() } catch {
            throw StartError("no usable DRM display: \(error) (--display headless draws into memory only)")
        }
    }
}

/// The way of covering `[display] cover` asks for, with why: the compositor's session lock
/// when asked (or, under `auto`, when a compositor is reachable and offers
/// ext-session-lock-v1), else nil, the VT hand-off. A third way is a case of the config's
/// `CoverChoice` and its branch here, and its own `ChosenCovering`.
func chooseCover(_ config: Config, _ options: Options, _ loop: EventLoop) throws(StartError) -> ((any ChosenCovering)?, String) {
    let socket = config.waylandSocket ?? WaylandConnection.defaultSocketName
    switch config.cover {
    case .vt:
        return (nil, "[display] cover = vt")
    case .sessionLock:
        let c = try connectWaiting(config, loop, socket)
        guard c.offersSessionLock else {
            throw StartError("[display] cover = session-lock: the compositor at \(socket) does not offer ext-session-lock-v1")
        }
        return (SessionLockCovering(connection: c), "[display] cover = session-lock: the compositor at \(socket) offers it")
    case .auto:
        if options.display == .headless { return (nil, "cover = auto: a headless display") }
        // Nothing names a compositor (the system unit's environment has no WAYLAND_DISPLAY):
        // the VT hand-off, without a try that libwayland would log on standard error.
        guard config.waylandSocket != nil || getenv("WAYLAND_DISPLAY") != nil else {
            return (nil, "cover = auto: no Wayland socket named ([display] wayland_socket, WAYLAND_DISPLAY)")
        }
        let c: WaylandConnection
        do { c = try WaylandConnection(socket: config.waylandSocket, loop: loop) } catch {
            if case .noCompositor(_, let e) = error { return (nil, "cover = auto: no Wayland compositor at \(socket) (\(e))") }
            return (nil, "cover = auto: no Wayland compositor at \(socket) (\(error))")
        }
        guard c.offersSessionLock else {
            c.disconnect()
            return (nil, "cover = auto: the compositor at \(socket) does not offer ext-session-lock-v1")
        }
        return (SessionLockCovering(connection: c), "cover = auto: the compositor at \(socket) offers ext-session-lock-v1")
    }
}

/// The compositor's connection, waited for while the compositor is not up yet (at boot the
/// kiosk's session may come after this unit), up to `[display] wayland_wait_s`: tried again
/// every 100 ms, before the loop runs. The unit is ordered before the display manager
/// (display-manager.service), which starts the compositor: waiting before READY=1 would
/// hold that start until the wait gave up. So a start that has to wait says READY=1 (and
/// STATUS= what it waits for) and keeps systemd's watchdog fed meanwhile; the lock comes
/// once the compositor does. Any other failure (the socket not ours to open) fails at once.
func connectWaiting(_ config: Config, _ loop: EventLoop, _ socket: String) throws(StartError) -> WaylandConnection {
    let start = EventLoop.now()
    var said = false
    while true {
        do {
            let c = try WaylandConnection(socket: config.waylandSocket, loop: loop)
            if said {
                Log.info("cover = session-lock: the compositor at \(socket) answered after \((EventLoop.now() - start).milliseconds) ms")
            }
            return c
        } catch {
            guard case .noCompositor = error, EventLoop.now() - start < config.waylandWait else {
                let waited = said ? " after \((EventLoop.now() - start).milliseconds / 1000) s ([display] wayland_wait_s)" : ""
                throw StartError("[display] cover = session-lock: \(error)\(waited)")
            }
            if !said {
                Log.info("cover = session-lock: \(error): waiting up to \(config.waylandWait.milliseconds / 1000) s for it to start")
                ServiceNotify.send("READY=1\nSTATUS=waiting for the compositor at \(socket)")
                said = true
            }
            ServiceNotify.send("WATCHDOG=1")
            usleep(100_000)
        }
    }
}

/// The headless display (`--display headless` only).
func openHeadless(_ options: Options, _ loop: EventLoop, rotation: Rotation?) throws(StartError) -> Display {
    do {
        return try HeadlessDisplay(size: options.headlessSize, rotation: rotation ?? .degrees0, loop: loop,
                                   outputDirectory: options.headlessOut, writePNG: { try $0.writePNG(to: $1) })
    } catch { throw StartError("\(error)") }
}

/// Our virtual terminal for the hand-off with a kiosk, or why there is none.
func openTerminal(_ config: Config, _ options: Options, _ loop: EventLoop,
                  _ display: Display, record: RuntimeRecord) -> (TerminalHandoff?, String?) {
    if display is HeadlessDisplay { return (nil, "a headless display") }
    let number: Int?
    switch config.terminal {
    case .off: return (nil, "[display] vt = off")
    case .auto:
        // The one the daemon before this one had (a restart: its VT may be on screen
        // still), else the first free one.
        number = record.ownVT
    case .number(let n): number = n
    }
    if let why = LinuxVirtualTerminal.unavailableReason() {
        Log.warning("no VT hand-off: \(why); the lock screen shows only on a display nobody else holds")
        return (nil, why)
    }
    // The signals are taken by the loop before the VT is put in VT_PROCESS mode: unhandled,
    // the first one would end the process.
    var handoff: TerminalHandoff?
    do {
        try loop.handle(signal: SIGUSR1) { handoff?.releaseSignal() }
        try loop.handle(signal: SIGUSR2) { handoff?.acquireSignal() }
        let device = try LinuxVirtualTerminal(number: number, releaseSignal: SIGUSR1, acquireSignal: SIGUSR2)
        handoff = TerminalHandoff(device: device, remembered: record.returnVT, previousOwn: record.ownVT,
                                  now: { EventLoop.now() },
                                  schedule: { t, f in loop.schedule(at: t, f) })
        Log.info("VT hand-off: the lock screen is shown on VT \(device.number)")
        return (handoff, nil)
    } catch {
        Log.warning("no VT hand-off: \(error)")
        return (nil, "\(error)")
    }
}

/// Under a systemd watchdog (WatchdogSec=), sends WATCHDOG=1 from the loop every half
/// period: a loop that hangs stops sending and systemd restarts the daemon.
/// WATCHDOG=1 goes out only while frames complete (`stuck` says why not): a daemon whose
/// screen is stuck is restarted by systemd like one whose loop hangs.
final class Watchdog {
    private let loop: EventLoop
    private let period: Interval
    private let stuck: (Instant) -> String?
    private var told = false
    private var next: EventLoop.TimerID?

    /// nil when not under a watchdog (no WATCHDOG_USEC, or it is another process's).
    init?(_ loop: EventLoop, stuck: @escaping (Instant) -> String?) {
        guard let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let usec = Int64(text), usec > 0 else { return nil }
        if let pid = getenv("WATCHDOG_PID").map({ String(cString: $0) }), Int32(pid) != getpid() { return nil }
        self.loop = loop
        self.stuck = stuck
        period = Interval(microseconds: usec / 2)
        Log.info("watchdog: every \(period.milliseconds) ms")
        beat(EventLoop.now())
    }

    /// Sends it now and starts the period again: just before the system sleeps, so that a
    /// clock that runs on through the sleep (s2idle on some machines) does not count it
    /// against the daemon, and on waking up.
    func beatNow() { beat(EventLoop.now()) }

    private func beat(_ now: Instant) {
        if let next { loop.cancel(next) }
        if let why = stuck(now) {
            if !told { Log.error("watchdog: not sent: \(why)") }
            told = true
        } else {
            told = false
            ServiceNotify.send("WATCHDOG=1")
        }
        next = loop.schedule(at: now + period) { [unowned self] in self.beat($0) }
    }
}

func main() {
    // The verifier process (see Verifier): this executable, started by the daemon.
    if ProgramArguments.afterName == ["--verifier-child"] { runVerifierChild() }
    if getenv("JOURNAL_STREAM") != nil {
        // Under systemd: journald reads the priority from a "<N>" prefix (sd-daemon(3)).
        let stream: (LogRecord) -> Void = { r in
            StandardStreams.error("<\(r.level.priority)>\(r.level == .bug ? "bug: " : "")\(r.message)")
        }
        // Standard error is the journal's own stream: lines go to it natively, with their
        // MESSAGE_ID and fields; on the stream, with their priority only, if it refuses one.
        let path = getenv("TOUCHLOCK_JOURNAL_SOCKET").map { String(cString: $0) } ?? Journal.defaultPath
        if Journal.standardErrorIsJournal(), let journal = Journal(path: path, identifier: "touchlockd") {
            Log.sink = { r in if !journal.write(r) { stream(r) } }
        } else {
            Log.sink = stream
        }
    } else {
        Log.sink = { r in
            StandardStreams.error("touchlockd: \(r.level == .info ? "" : "\(r.level.label): ")\(r.message)")
        }
    }

    let options: Options
    do { options = try Options.parse(ProgramArguments.afterName) } catch {
        error.finish()
    }
    if options.verbose { Log.threshold = .debug }
    if options.syslog {
        SystemLog.open("touchlockd")
        Log.sink = { SystemLog.write($0) }
    }

    var config = Config()
    let files = ConfigFiles.paths(root: options.configRoot, extra: options.configFiles)
    do { try ConfigFiles.load(files, into: &config) } catch { fail("\(error)") }
    if let s = options.socketPath { config.socketPath = s }
    if let s = options.statePath { config.statePath = s }
    // A hash others can read is as good as the secret to them (a 4-digit code falls in
    // minutes): --check-config fails, and the daemon says so at every start.
    let exposed = SecretFiles.exposures(in: files)
    if options.checkConfig {
        print("# touchlockd --check-config: the merged settings, read from:")
        for f in files { print("#   \(f)") }
        if files.isEmpty { print("#   (no file: the defaults)") }
        print(config.text, terminator: "")
        var problems = exposed.map {
            "\($0); move the secret into a root-only file: touchlockctl set-secret pattern|code "
                + "(\(SecretFiles.defaultPath), 0600), then remove the hash from \($0.path)"
        }
        if config.screens.methods != .code && config.patternRepeat == .never && config.minimumLength > config.rows * config.columns {
            problems.append("min_length \(config.minimumLength) is more than the \(config.rows * config.columns) nodes of "
                            + "the \(config.rows)x\(config.columns) grid: no pattern can be drawn")
        }
        for p in problems { StandardStreams.error("touchlockd: --check-config: \(p)") }
        exit(problems.isEmpty ? 0 : 1)
    }
    for e in exposed {
        Log.event(.fileRefused, .warning, "\(e): move it to \(SecretFiles.defaultPath) (touchlockctl set-secret, 0600) and remove it there",
                  [.init("TOUCHLOCK_FILE", e.path), .init("TOUCHLOCK_REASON", "a secret's hash others can read (mode \(e.modeText))")])
    }
    // A damaged or unreadable record fails closed: the daemon starts locked out as after
    // [lockout] damaged_count failures (Daemon), never from zero.
    // A file others could have written is not read at all: the daemon starts locked out
    // and accepts no attempt (Daemon), whatever the file says.
    var reading: StoredState.Reading
    var untrusted: String?
    do {
        let file = try DurableFile.readWithOwner(config.statePath)
        untrusted = FileTrust.distrust(config.statePath, file: file?.info)
        reading = StoredState.read(file?.bytes)
    } catch {
        untrusted = FileTrust.distrust(config.statePath, file: nil)
        reading = .damaged(reason: "cannot read it: \(error)", salvaged: StoredState())
    }
    if let untrusted {
        Log.event(.fileRefused, .error,
                  "\(config.statePath): not trusted, \(untrusted); ignored, and no attempt is accepted until root makes it and its directory root's and writable only by root, then restarts touchlockd",
                  [.init("TOUCHLOCK_FILE", config.statePath), .init("TOUCHLOCK_REASON", "not trusted: \(untrusted)")])
        reading = .missing
    }
    var stored = StoredState()
    var damage: String?
    switch reading {
    case .missing: break
    case .whole(let s): stored = s
    case .damaged(let reason, let salvaged):
        stored = salvaged
        damage = reason
        Log.event(.fileRefused, .error,
                  "\(config.statePath): damaged record (\(reason)); starting locked out as after \(max(config.damagedCount, salvaged.lockout.failures)) failures\(salvaged.enrolled.isEmpty && salvaged.duressHash == nil ? "; the secrets of the config files apply" : "")",
                  [.init("TOUCHLOCK_FILE", config.statePath), .init("TOUCHLOCK_REASON", "damaged: \(reason)")])
    }
    if config.screens.methods != .code && stored.patternHash == nil && config.patternHash == nil {
        Log.warning("no pattern enrolled: the pattern unlocks nothing until one is (touchlockctl enroll pattern)")
    }
    if config.screens.methods != .pattern && stored.codeHash == nil && config.screens.codeHash == nil {
        Log.warning("no code enrolled: the code pad unlocks nothing until one is (touchlockctl enroll code)")
    }

    let loop: EventLoop
    do { loop = try EventLoop() } catch { fail("\(error)") }

    let daemon: Daemon
    var exitStatus: Int32 = 0
    do {
        let (chosen, coverReason) = try chooseCover(config, options, loop)
        let displays = try chosen?.displays() ?? openDisplays(config, options, loop)
        let display = displays[0]
        let store = StateStore(path: config.statePath, bootID: BootID.current(), stored: stored, config: config,
                               damage: damage, untrusted: untrusted)
        for m in store.shadowed { store.logShadowed(m) }
        // Kept by the daemon before this one (a restart, a crash, an upgrade): whether it
        // was unlocked, and the VT to hand back to. `--once` runs keep none.
        let runtime = options.once ? nil : RuntimeFile(besideSocket: config.socketPath)
        let record = runtime?.load() ?? RuntimeRecord()
        let (terminal, absence): (TerminalHandoff?, String?) = chosen.map { (nil, "\($0.title) covers the screen") }
            ?? openTerminal(config, options, loop, display, record: record)
        daemon = Daemon(config: config, options: options, loop: loop, display: display, store: store,
                        terminal: terminal, terminalAbsence: absence, others: Array(displays.dropFirst()),
                        runtime: runtime, runtimeRecord: record, covering: chosen)
        daemon.coverInUse = (chosen?.word ?? "vt", coverReason)
        Log.info("cover: \(chosen?.title ?? "the VT hand-off"): \(coverReason)")
        chosen?.attach(to: daemon) { status in
            exitStatus = status
            loop.stop()
        }
        daemon.secretsReadable = exposed.map { "\($0.path) (mode \($0.modeText))" }
        cards?.onOutputsChanged = { added, removed in
            for d in added where daemon.backlights[d.name] == nil {
                if let b = Backlight.find(config.backlight, connector: d.name) { daemon.backlights[d.name] = b }
            }
            daemon.outputsChanged(added: added, removed: removed)
        }
        cards?.onProbed = { daemon.hotplugged() }
        cards?.isCovering = { !daemon.presenter.isReleased }
        daemon.closeCard = { cards?.close() }
        daemon.keepCovered = { cards?.leaveOnScreen() }
        daemon.forgetScreen = { cards?.forgetScreens() }
        // Only a KMS output's panel has a backlight of its own (never a headless display's).
        for d in displays where d is DrmDisplay {
            if let b = Backlight.find(config.backlight, connector: d.name) { daemon.backlights[d.name] = b }
        }
    } catch { fail("\(error)") }

    // The lock screen first: the input, the control socket and the rest wait until its
    // first frame is on its way.
    var control: ControlServer?
    var logind: Logind?
    var watchdog: Watchdog?
    daemon.start {
        do { try daemon.startInput(config: config) } catch { fail("\(error)") }
        control = startControl(config, loop, daemon)
        watchdog = Watchdog(loop) { now in daemon.stuck(at: now) }
        // After READY=1: libsystemd is loaded then, not before the first frame.
        if let seat = config.logindSeat, !options.once {
            loop.deferred {
                logind = Logind(seat: seat, loop: loop, daemon: daemon)
                logind?.aroundSleep = { watchdog?.beatNow() }
            }
        }
    }
    do { try loop.run() } catch { Log.error("\(error)") }
    control?.close()
    withExtendedLifetime((logind, watchdog)) {}
    daemon.shutdown()
    exit(exitStatus)
}

/// The control socket and the metrics textfile, wired to `daemon`.
func startControl(_ config: Config, _ loop: EventLoop, _ daemon: Daemon) -> ControlServer {
    let control: ControlServer
    do {
        control = try ControlServer(path: config.socketPath, loop: loop) { daemon.status }
    } catch { fail("control socket \(config.socketPath): \(error)") }
    daemon.onEvent = { control.broadcast($0) }
    if let path = config.metricsTextfile {
        daemon.textfile = MetricsTextfile(path: path, loop: loop) {
            MetricsExposition.render(status: daemon.status, metrics: daemon.metrics, format: .prometheusText)
        }
        daemon.textfile?.changed()
    }
    control.lockHandler = { done in daemon.lockRequested(done) }
    control.metricsHandler = { daemon.metrics }
    control.enrollHandler = { daemon.enroll($0, $1) }
    control.enrollScreenHandler = { daemon.enrollOnScreen($0, client: $1) }
    control.clientGone = { daemon.clientGone($0) }
    control.resetLockoutHandler = { daemon.resetLockout(by: "\($0)") }
    control.messageHandler = { daemon.info.setMessage($0, by: "\($1)", done: $2) }
    control.serviceUnlockHandler = { daemon.serviceUnlock($0, by: "\($1)", $2) }
    let gid: gid_t?
    do { gid = try GroupDatabase.id(named: config.socketGroup) } catch {
        Log.warning("control: group '\(config.socketGroup)': \(error)")
        gid = nil
    }
    if let gid {
        do { try control.setGroup(gid) } catch { fail("control socket: \(error)") }
    } else {
        Log.warning("control: no group '\(config.socketGroup)': the socket is for root only")
    }
    if let name = config.messageGroup {
        do {
            if let id = try GroupDatabase.id(named: name) {
                control.messageGroup = (id, name)
            } else {
                Log.warning("control: no group '\(name)' ([socket] message_group): the message is for root only")
            }
        } catch {
            Log.warning("control: group '\(name)' ([socket] message_group): \(error); the message is for root only")
        }
    }
    return control
}

InjectedFaults.run(main)
