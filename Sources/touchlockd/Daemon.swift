import TouchlockCommandLine
import TouchlockControl
import TouchlockCore
import TouchlockDisplay
import TouchlockRender
import TouchlockSecrets
import TouchlockSystem

/// Owns the lock screen and carries out what it asks, on one event loop. The lock
/// screen decides; the rooms act and report back:
///
/// - `Inputs` (touches and keys in; grab and release),
/// - `Verifier` (attempts checked, new secrets hashed),
/// - `StateStore` (the durable record and the secrets),
/// - `Presenter` (scenes drawn and shown; the display handed over and taken back),
/// - and subscribers, the log and the service manager, told of events here (`report`).
final class Daemon {
    let loop: EventLoop
    let options: Options
    private(set) var lock: LockScreen
    let presenter: Presenter
    /// The other outputs: the same lock screen laid out for each one's size and density
    /// (`view`), drawn by its own presenter; touches come through the primary's layout.
    private var mirrors: [(presenter: Presenter, view: LockScreen)] = []
    private let config: Config
    /// Text measured as the renderers draw it, for the layout.
    private var textMeasure: DrawnTextMeasure { DrawnTextMeasure(theme: config.theme) }
    /// Every presenter, the primary's first.
    var presenters: [Presenter] { [presenter] + mirrors.map(\.presenter) }
    let store: StateStore
    private let verifier: Verifier
    /// One-time service codes: the device key and the codes used.
    let service: ServiceCodes
    /// The digits of a service code, when the device has service codes: the screen then
    /// offers their hidden entry.
    private var serviceDigits: Int? { service.available ? service.settings.digits : nil }
    /// The `service_unlock` request whose attempt is being counted and checked, answered
    /// with its outcome.
    private var serviceReply: ((Result<Status.State, ControlError>) -> Void)?
    private var inputs: Inputs?
    /// Told of every event (the control socket's subscribers).
    var onEvent: ((LockEvent) -> Void)?
    /// Told of each touch and key, with its time (logind's idle hint).
    var onActivity: ((Instant) -> Void)?
    /// Told when the screen blanks or the idle lock locks (logind's idle hint): the lock
    /// screen's `wentIdle`.
    var onIdle: (() -> Void)?
    /// What the daemon after this one starts from (locked or not, the VT to return to),
    /// kept beside the control socket; nil: not kept (`--once`).
    private let runtime: RuntimeFile?
    private var runtimeRecord: RuntimeRecord
    private var armedTimers: Set<Instant> = []
    /// The outputs are handed their scenes at the end of this turn (`scenesChanged`).
    private var scenesQueued = false
    /// The control client that asked for the enrollment on screen: if it goes away
    /// (touchlockctl gave up waiting), the enrollment is cancelled.
    private var enrollingClient: Int?
    /// Our virtual terminal, switched to for the lock screen and back after the unlock
    /// (by `covering`); read here for status and the runtime record.
    private let terminal: TerminalHandoff?
    /// What carries out the cover's actions: our VT, DRM master on the outputs, the grab.
    private let covering: any Covering
    /// Why there is no VT hand-off, when there is none.
    private let terminalAbsence: String?
    /// The way of covering in use (status's `cover`) and why (`cover_reason`).
    var coverInUse = (name: "vt", reason: "[display] cover = vt")
    /// Closes the DRM card the outputs are on, at shutdown.
    var closeCard: (() -> Void)?
    /// At a stop while locked: the card left as it is, the lock screen on it, for the
    /// daemon after this one (nothing torn down, nothing taken out of systemd's store).
    var keepCovered: (() -> Void)?
    /// At a system shutdown while locked: nothing of before put back on the screen.
    var forgetScreen: (() -> Void)?
    /// Whether the system is shutting down (touchlock-shutdown.service's marker), asked
    /// once, at the stop.
    private let systemStopping: () -> Bool
    /// Whether this stop is to give the screen back even while locked (the package being
    /// removed), asked once, at the stop.
    private let handBackAsked: () -> Bool
    /// The backlights that go off with the screen, by output (`[display] backlight`).
    var backlights: [String: Backlight] = [:]
    /// Counted since the start, for the metrics.
    private var tally = LockTally(lockedAt: EventLoop.now(), wall: WallClock.now())
    /// The node_exporter textfile, when `[metrics] textfile` names one.
    var textfile: MetricsTextfile?
    /// `lock` requests waiting for the display.
    private var lockReplies: [(Result<Status.State, ControlError>) -> Void] = []
    /// The failure count a damaged state file stands for.
    private let damagedCount: Int
    /// The start, from the first frame to READY=1 (`Startup` decides).
    private var startup = Startup()
    /// What waits for the first frame (input, the control socket), run at the startup's
    /// `openRest`.
    private var rest: (() -> Void)?
    /// The startup's grace timer.
    private var graceTimer: EventLoop.TimerID?
    /// The config files holding a hash that others can read (status `secrets_readable`).
    var secretsReadable: [String] = []

    /// The masks of the lock screen's text, read at start and written back once ready
    /// and at the end when text was drawn that they did not have.
    private let textImageFile: TextImageFile
    private let textImages: TextImages
    /// The clock and the message on the lock screen.
    let info: ScreenInfoKeeper
    /// Whether the screens are laid out with room for a message.
    private var laidOutWithMessage = false

    init(config: Config, options: Options, loop: EventLoop, display: Display, store: StateStore,
         terminal: TerminalHandoff? = nil, terminalAbsence: String? = nil, others: [Display] = [],
         runtime: RuntimeFile? = nil, runtimeRecord: RuntimeRecord = RuntimeRecord(),
         covering: (any Covering)? = nil) {
        self.config = config
        self.runtime = runtime
        if let runtime {
            // A marker left from a removal that did not happen is no longer asked for.
            // Markers left from a removal or a shutdown that did not happen count no more.
            for path in [runtime.handBackPath, runtime.shutdownPath] {
                do { try DurableFile.remove(path) } catch { Log.warning("\(error)") }
            }
            handBackAsked = { runtime.takeMarker(runtime.handBackPath) }
            systemStopping = { runtime.takeMarker(runtime.shutdownPath) }
        } else {
            handBackAsked = { false }
            systemStopping = { false }
        }
        var runtimeRecord = runtimeRecord
        runtimeRecord.ownVT = terminal?.number
        runtimeRecord.returnVT = terminal?.returnTarget ?? runtimeRecord.returnVT
        self.runtimeRecord = runtimeRecord
        // The masks of text beside an untrusted state file are neither read nor written.
        textImageFile = TextImageFile(statePath: config.statePath, trusted: store.untrusted == nil)
        textImages = textImageFile.load()
        TextSetter.shared.keepWidths(in: textImages)
        self.terminal = terminal
        self.terminalAbsence = terminalAbsence
        // Today's way of covering unless another is given (it then owns its own VT, if any).
        let ours: TerminalCovering?
        if let covering {
            self.covering = covering
            ours = nil
        } else {
            let made = TerminalCovering(terminal: terminal, once: options.once, loop: loop)
            self.covering = made
            ours = made
        }
        self.options = options
        self.loop = loop
        self.store = store
        verifier = Verifier(loop: loop, secrets: store, separateProcess: false)
        service = ServiceCodes(settings: config.service, statePath: store.path, stateUntrusted: store.untrusted != nil)
        let now = EventLoop.now()
        let stored = store.stored.lockout
        let record = store.untrusted != nil
            // No attempt at all: a wait longer than any schedule's, from now.
            ? LockoutRecord(failures: max(config.damagedCount, 1), deadline: now + Interval(microseconds: LockoutSchedule.forever * 1_000_000))
            : store.damage != nil
            ? LockoutRecord.damaged(readable: stored.failures, damagedCount: config.damagedCount,
                                    now: now, schedule: config.lockoutSchedule)
            : stored.restored(sameBoot: store.sameBoot, now: now, schedule: config.lockoutSchedule)
        damagedCount = config.damagedCount
        if stored.failures > 0 || stored.deadline != nil {
            let left = record.deadline.map { " \(($0 - now).countdown) left" } ?? ""
            Log.info("restored \(record.failures) failure(s) in a row\(store.sameBoot ? "" : " (after a reboot: full wait)")\(left)")
        }
        let density = Density(screen: display.size, physicalMillimetres: display.physicalSize, override: config.screens.dpi)
        Log.info("\(Int(density.dpi.rounded())) dpi: sizes scaled by \(density.scale)")
        info = ScreenInfoKeeper(config: config, loop: loop, trusted: store.untrusted == nil)
        laidOutWithMessage = info.message != nil
        lock = LockScreen.make(config: config, size: display.size, density: density,
                               shuffleSeed: Self.randomSeed(), at: now,
                               session: Session(restoring: record, at: now, errorHold: config.errorHold,
                                                schedule: config.lockoutSchedule),
                               message: laidOutWithMessage, measure: DrawnTextMeasure(theme: config.theme),
                               serviceDigits: service.available ? service.settings.digits : nil)
        if let cut = lock.builder.layout?.cutLabels, !cut.isEmpty {
            Log.warning("the switch's label is too long for the screen at 12 dp and is drawn cut: \(cut.map { "'\($0)'" }.joined(separator: ", "))")
        }
        if let left = lock.builder.layout?.infoLeftOut, !left.isEmpty {
            Log.warning("the screen has no room for the \(left.joined(separator: ", ")) of [screen]")
        }
        lock.recordFault = store.untrusted != nil ? .untrusted : store.damage != nil ? .damaged : nil
        lock.covers(coveredAtStart: self.covering.coveredAtStart)
        presenter = Presenter(display: display, loop: loop, shown: self.covering.presentsFromStart, textImages: textImages)
        presenter.onShown = { [unowned self] t in
            self.inputs?.frameShown(through: t)
            self.textfile?.changed()
        }
        // The frames counted: the textfile follows them with the next change, or within
        // its lazy interval (a countdown redraws every second).
        presenter.onPresented = { [unowned self] in self.textfile?.changedLazily() }
        watch(presenter.display)
        presenter.onFirstFrame = { [unowned self] in
            Log.info("first frame shown")
            self.startup(.firstFrameShown)
        }
        presenter.onFirstSubmit = { [unowned self] in self.startup(.firstFrameSubmitted) }
        ours?.presenters = { [unowned self] in self.presenters }
        ours?.inputs = { [unowned self] in self.inputs }
        ours?.closeCard = { [unowned self] in self.closeCard?() }
        ours?.keepCovered = { [unowned self] in self.keepCovered?() }
        // What the executor reports reaches the cover on the loop, after the call that
        // caused it has returned: never perform -> covering -> report -> perform in one call
        // stack, whichever way of covering it is.
        self.covering.report = { [unowned self] report in
            self.loop.deferred { [unowned self] in self.coverEvent(.reported(report)) }
        }
        terminal?.onReturnTargetChanged = { [unowned self] vt in
            self.runtimeRecord.returnVT = vt
            self.saveRuntime()
        }
        for d in others { addOutput(d) }
    }

    private func watch(_ display: Display) {
        display.onStateChanged = { [unowned self, unowned display] in
            let o = display.state
            Log.info("output \(o.name): \(o.phase.name)\(o.reason.map { " (\($0))" } ?? "")")
            self.textfile?.changed()
        }
    }

    /// The runtime record, for the daemon after this one; kept in memory if it cannot be
    /// written (the next daemon then starts locked, which is safe).
    private func saveRuntime() {
        guard let runtime else { return }
        if let error = runtime.save(runtimeRecord) {
            Log.warning("\(runtime.path): \(error)")
        }
    }

    /// The lock screen laid out for `display`'s size and density (its pads and text only:
    /// the lock's state is the primary's), with the density.
    private func layout(for display: Display) -> (view: LockScreen, density: Density) {
        let density = Density(screen: display.size, physicalMillimetres: display.physicalSize, override: config.screens.dpi)
        let view = LockScreen.make(config: config, size: display.size, density: density, shuffleSeed: 0,
                                   message: laidOutWithMessage, measure: textMeasure, serviceDigits: serviceDigits)
        return (view, density)
    }

    /// Shows the lock screen on one more output, laid out for its own size and density.
    func addOutput(_ display: Display) {
        let (view, density) = layout(for: display)
        let p = Presenter(display: display, loop: loop, shown: !presenter.isReleased || covering.presentsFromStart,
                          textImages: textImages)
        watch(display)
        mirrors.append((p, view))
        Log.info("output \(display.name): \(display.size.width)x\(display.size.height), \(Int(density.dpi.rounded())) dpi, shows the lock screen too")
        scenesChanged()
    }

    /// An output's size in pixels changed (its lock surface configured for a new mode or
    /// scale): its lock screen is laid out again for it, the primary's keeping its state
    /// (digits, a finger on its node), and drawn whole.
    func outputResized(_ display: Display) {
        let (view, density) = layout(for: display)
        if display === presenter.display {
            guard let relaid = lock.relaid(as: view) else {
                Log.bug("output \(display.name): the lock screen laid out again has other pads")
                return
            }
            lock = relaid
            presenter.resized()
        } else if let i = mirrors.firstIndex(where: { $0.presenter.display === display }) {
            mirrors[i].view = view
            mirrors[i].presenter.resized()
        } else {
            return
        }
        Log.info("output \(display.name): \(display.size.width)x\(display.size.height), \(Int(density.dpi.rounded())) dpi, the lock screen laid out again for it")
        scenesChanged()
        textfile?.changed()
    }

    /// The outputs a hotplug removed (already torn down by their card).
    func removeOutputs(_ displays: [Display]) {
        for d in displays {
            if d === presenter.display { Log.warning("output \(d.name): the primary output was unplugged; touches still map to its layout") }
            mirrors.removeAll { $0.presenter.display === d }
        }
    }

    /// Opens the input named by the options.
    func startInput(config: Config) throws(StartError) {
        // The compositor's seat brings them (`touched(_:onOutput:at:)`, `hardwareKey`).
        guard !covering.bringsInput else { return }
        inputs = try Inputs(options: options, config: config, loop: loop, screen: presenter.display.size,
                            rotation: presenter.display.rotation,
                            place: { [unowned self] device in self.place(device) },
                            holdsInput: { [unowned self] in self.lock.holdsInput },
                            touches: { [unowned self] touches, time in self.touched(touches, at: time) },
                            keys: { [unowned self] key, time in
                                self.perform(self.lock.hardwareKey(key, at: time), eventTime: time)
                                self.onActivity?(time)
                            })
        inputs?.onReplayedFrame = { [unowned self] time in self.reportShownIfNothingToDraw(time) }
    }

    /// Touches from the input, at their kernel time (tests bring their own).
    func touched(_ touches: [ScreenTouch], at time: Instant) {
        perform(lock.touches(onPrimary(touches), at: time), eventTime: time)
        onActivity?(time)
    }

    /// Touches on one output's lock surface (the compositor's seat), in its pixels: moved
    /// to the same place in the primary's layout, as a panel of that output's are.
    func touched(_ touches: [ScreenTouch], onOutput display: Display, at time: Instant) {
        let moved: [ScreenTouch]
        if display === presenter.display {
            moved = touches
        } else if let m = mirrors.first(where: { $0.presenter.display === display }) {
            moved = touches.map { t in
                var t = t
                t.point = lock.point(t.point, from: m.view)
                return t
            }
        } else {
            return
        }
        perform(lock.touches(moved, at: time), eventTime: time)
        onActivity?(time)
    }

    /// A key from a keypad or keyboard.
    func hardwareKey(_ key: KeyInput, at time: Instant) {
        perform(lock.hardwareKey(key, at: time), eventTime: time)
        onActivity?(time)
    }

    /// The output a touchscreen belongs to (its quirk's `output=`, else `[input] output`,
    /// else the one of its physical size, else the primary), with the size and rotation its
    /// touches are mapped to.
    private func place(_ device: DeviceDescription) -> (output: String, screen: Size, rotation: Rotation) {
        let displays = presenters.map(\.display)
        let outputs = displays.map { d in
            PanelPlacement.Output(name: d.name, millimetres: d.physicalSize.map { Size(width: $0.width, height: $0.height) })
        }
        let placed = PanelPlacement.output(for: device, quirks: config.inputQuirks, named: config.touchOutput, among: outputs)
        if let name = placed.unknown {
            Log.warning("input_quirk output=\(name) for \(device.name): no such connected output (yet); the panel goes by [input] output, its size, else the first")
        }
        let d = displays[placed.index]
        return (d.name, d.size, d.rotation)
    }

    /// Touches from a panel on another output, moved to the same place in the primary's
    /// layout (the one the lock screen takes input in): on the same node, key or switch.
    private func onPrimary(_ touches: [ScreenTouch]) -> [ScreenTouch] {
        guard !mirrors.isEmpty else { return touches }
        return touches.map { t in
            guard let name = inputs?.output(ofPanel: t.panel), name != presenter.display.name,
                  let m = mirrors.first(where: { $0.presenter.display.name == name }) else { return t }
            var moved = t
            moved.point = lock.point(t.point, from: m.view)
            return moved
        }
    }

    /// A replay paced by frames waits for each frame to be shown; input that changed
    /// nothing on the screen lets it go on at once (after the redraw this turn asked for).
    private func reportShownIfNothingToDraw(_ time: Instant) {
        guard inputs?.pacedByFrames == true else { return }
        loop.deferred { [unowned self] in
            if !self.presenter.awaits(time) { self.inputs?.frameShown(through: time) }
        }
    }

    /// 64 bits from the kernel's random source (the standard library's system generator
    /// reads getrandom), for the keypad's shuffle.
    static func randomSeed() -> UInt64 {
        var g = SystemRandomNumberGenerator()
        return g.next()
    }

    /// Shows the first frame; once it is submitted (or could not be, within the startup's
    /// grace), runs `rest` (what can wait: input, the control socket), starts the verifier
    /// and any replay. READY=1 goes out when `Startup` says.
    func start(then rest: @escaping () -> Void) {
        self.rest = rest
        info.show = { [unowned self] text in self.showInfo(text) }
        info.start()
        let now = EventLoop.now()
        defer { saveRuntime() }
        // Unlocked before this start (a restart, a crash, an upgrade while the app had the
        // screen): the app keeps it, nothing is taken. Only with a VT hand-off and our VT
        // not on screen; else (a restart between the unlock and the hand-back) it locks.
        if let (method, at) = runtimeRecord.unlocked, covering.mayStartHandedOver,
           let actions = lock.beginHandedOver(unlockedBy: method, since: at, at: now) {
            Log.info("unlocked before this start (by \(method.rawValue)): the screen stays the kiosk's")
            tally.startedUnlocked()
            perform(actions)
            showScenes()
            startup(.began(handedOver: true, at: now))
            return
        }
        perform(lock.begin(at: now))
        perform(lock.resume(at: now))
        startup(.began(handedOver: false, at: now))
        showScenes()
        coverEvent(.start)
    }

    /// Tells the startup what happened, and carries out what it asks.
    private func startup(_ event: Startup.Event) {
        let actions = startup.handle(event, cover: lock.cover.state, holdsDisplay: lock.hold != .released)
        for a in actions {
            switch a {
            case .armGrace(let t):
                graceTimer = loop.schedule(at: t) { [unowned self] _ in
                    self.graceTimer = nil
                    self.startup(.graceEnded)
                }
            case .cancelGrace:
                if let t = graceTimer { loop.cancel(t) }
                graceTimer = nil
            case .openRest:
                loop.deferred { [unowned self] in
                    self.rest?()
                    self.rest = nil
                    self.verifier.start()
                    self.inputs?.start()
                    self.startup(.restOpened)
                }
            case .ready(let unlocked):
                ServiceNotify.send(unlocked ? "READY=1\nSTATUS=unlocked" : "READY=1\nSTATUS=locked")
                textImageFile.save(textImages)
                Heap.trim()
            }
        }
    }

    // MARK: the VT hand-off

    /// Tells the lock screen's cover what the VT, the outputs or a client did.
    private func coverEvent(_ event: Cover.Event) {
        perform(lock.cover(event, at: EventLoop.now()))
        if startup.phase != .ready { startup(.coverMoved) }
    }

    /// Carries out what the cover asks: its requests by the way of covering, whose
    /// reports come back to it on the loop (`coverEvent`); the replies and the
    /// hand-over's news here.
    private func carryOut(_ action: Cover.Action) {
        switch action {
        case .ask(let request):
            covering.carryOut(request)
        case .displayTaken, .displayRefused, .lock:
            Log.bug("the cover's answer \(action) reached the daemon; the lock screen carries it out")
        case .answerLockRequests(let refusal):
            let replies = lockReplies
            lockReplies = []
            for r in replies {
                if let refusal {
                    r(.failure(ControlError(.displayBusy, "cannot take the display: \(refusal)")))
                } else {
                    r(.success(Status.State(lock.session.state)))
                }
            }
        case .handedOver:
            report(.handedOver)
        }
    }

    /// Whether the lock screen is on the display, for status.
    private var displayState: Cover.Display {
        lock.cover.display(outputLost: presenters.contains { $0.display.state.reason != nil })
    }

    // MARK: actions

    /// Carries out the lock screen's actions in order; results come back as events.
    func perform(_ actions: [LockScreen.Action], eventTime: Instant? = nil) {
        // Locked is kept before anything is taken, unlocked after it is told: a restart in
        // between comes back locked.
        if runtimeRecord.before(actions) { saveRuntime() }
        defer { if runtimeRecord.after(actions) { saveRuntime() } }
        for a in actions {
            switch a {
            case .verify(.service(let digits)):
                // On the next turn, as every check: the screen shows the attempt first.
                loop.deferred { [unowned self] in
                    let verdict = self.service.verify(digits)
                    SecretHash.wipeShared(digits)
                    self.perform(self.lock.verified(verdict, at: EventLoop.now()))
                }
            case .verify(let attempt):
                // A code of the service codes' length typed on the pad that is not the
                // owner's is checked as a service code too, in the same counted attempt.
                var typed: [UInt8]?
                if case .code(let c) = attempt, service.available, c.digits.count == service.settings.digits {
                    typed = c.digits.map { UInt8(ascii: "0") &+ $0 }
                }
                verifier.check(attempt) { [unowned self] verdict in
                    var verdict = verdict
                    if let digits = typed {
                        if case .wrong = verdict, case .match = self.service.verify(digits) { verdict = .service }
                        SecretHash.wipeShared(digits)
                    }
                    self.perform(self.lock.verified(verdict, at: EventLoop.now()))
                }
            case .store(let record):
                // On the next turn, so the screen shows the attempt being stored first.
                loop.deferred { [unowned self] in
                    var why: String?
                    do throws(StateStore.WriteError) { try self.store.store(record) } catch { why = "\(error)" }
                    self.perform(self.lock.stored(error: why, at: EventLoop.now()))
                }
            case .enroll(let method, let bytes):
                guard let kind = SecretKind(method) else {
                    Log.bug("lock screen: a \(method.rawValue) enrolled on the screen")
                    continue
                }
                verifier.hash(bytes) { [unowned self] result in
                    var failure: String?
                    switch result {
                    case .success(let hash):
                        do throws(StateStore.WriteError) { try self.store.setSecret(kind, hash: hash) } catch {
                            failure = self.controlError(error).message
                        }
                    case .failure(let why):
                        Log.error("cannot hash the enrolled \(method.rawValue): \(why)")
                        failure = "cannot hash it: \(why)"
                    }
                    self.perform(self.lock.enrollStored(method, error: failure, at: EventLoop.now()))
                }
            case .notify(let event):
                report(event)
            case .armTimer(let t):
                arm(t)
            case .redraw:
                scenesChanged(after: eventTime)
            case .cover(let action):
                carryOut(action)
            case .wentIdle:
                onIdle?()
            case .blankDisplay:
                for p in presenters {
                    p.blankScreen()
                    backlights[p.display.name]?.switchOff()
                }
                info.pause()
            case .wakeDisplay:
                for p in presenters {
                    backlights[p.display.name]?.switchOn()
                    p.wake()
                }
                info.resume()
            case .grabInput:
                covering.holdInput(true)
            case .releaseInput:
                covering.holdInput(false)
            }
        }
    }

    /// The lock screen changed: each output is handed its scene once, at the end of this
    /// turn of the loop, whatever else changes in it. `eventTime`: the input event behind
    /// the change, for the latency figures.
    private func scenesChanged(after eventTime: Instant? = nil) {
        presenter.sceneDue(after: eventTime)
        for m in mirrors { m.presenter.sceneDue(after: nil) }
        guard !scenesQueued else { return }
        scenesQueued = true
        loop.deferred { [unowned self] in
            self.scenesQueued = false
            self.showScenes()
        }
    }

    /// Hands each output the lock screen's scene, laid out for it.
    private func showScenes() {
        presenter.show(lock.scene)
        for m in mirrors { m.presenter.show(lock.scene(laidOutAs: m.view)) }
    }

    /// Tells the log, the service manager and subscribers, in that order.
    private func report(_ event: LockEvent) {
        tally.count(event, at: EventLoop.now(), wall: WallClock.now())
        switch event {
        case .unlocked(let m, _):
            Log.event(.unlocked, .notice, "unlocked by \(m.rawValue)", [.init("TOUCHLOCK_METHOD", m.rawValue)])
            if options.once { presenter.stopWhenShown() }
        case .duress(let m, _):
            Log.event(.duress, .warning, "duress \(m.rawValue) given", [.init("TOUCHLOCK_METHOD", m.rawValue)])
        case .failed(let m, let failures, let retry):
            Log.event(.wrongAttempt, .notice,
                      "wrong \(m.rawValue); \(failures) failure(s) in a row; next attempt in \(retry.milliseconds < 60_000 ? "\(retry.milliseconds) ms" : retry.countdown)",
                      [.init("TOUCHLOCK_METHOD", m.rawValue), .init("TOUCHLOCK_ATTEMPTS", "\(failures)")])
        case .storeFailed(let m, let reason):
            Log.event(.storeFailed, .error, "wrong \(m.rawValue), not stored (\(reason)); input stays blocked until it is",
                      [.init("TOUCHLOCK_METHOD", m.rawValue), .init("TOUCHLOCK_REASON", reason)])
        case .lockout(let until):
            let wait = until - EventLoop.now()
            Log.event(.lockoutStarted, .warning, "locked out for \(wait.countdown)",
                      [.init("TOUCHLOCK_ATTEMPTS", "\(lock.session.failures)"),
                       .init("TOUCHLOCK_LOCKOUT_SECONDS", "\((wait.milliseconds + 999) / 1000)")])
        case .locked:
            Log.info("locked")
        case .progress(let entered, let total):
            Log.debug("code: \(entered) of \(total) digits")
        case .enrolled(let m):
            Log.info("\(m.rawValue) enrolled")
            enrollingClient = nil
        case .enrollFailed(let m, let reason):
            Log.info("enrollment of a \(m.rawValue) failed: \(reason)")
            enrollingClient = nil
        case .handedOver:
            Log.debug("the display and the input are handed over")
        }
        switch event {
        case .unlocked: ServiceNotify.send("STATUS=unlocked")
        case .locked: ServiceNotify.send("STATUS=locked")
        case .lockout(let until): ServiceNotify.send("STATUS=locked out for \((until - EventLoop.now()).countdown)")
        case .failed(_, let n, _): ServiceNotify.send("STATUS=locked, \(n) failure(s) in a row")
        case .storeFailed(_, let reason): ServiceNotify.send("STATUS=locked, cannot store the attempt: \(reason)")
        case .duress, .progress, .enrolled, .enrollFailed, .handedOver: break
        }
        answerServiceReply(event)
        onEvent?(event)
        textfile?.changed()
    }

    /// A `service_unlock` request: the code is checked as an attempt of its own method,
    /// counted first; `done` gets the outcome (`answerServiceReply`).
    func serviceUnlock(_ code: String, by who: String, _ done: @escaping (Result<Status.State, ControlError>) -> Void) {
        guard service.available else {
            return done(.failure(ControlError(.noServiceKey, "no service codes on this device: \(service.absence ?? "no device key")")))
        }
        guard let digits = service.wellFormed(code) else {
            return done(.failure(ControlError(.badValue, "a service code here is \(service.settings.digits) digits")))
        }
        guard serviceReply == nil else { return done(.failure(ControlError(.busy, "another service code is being checked"))) }
        let now = EventLoop.now()
        let actions: [LockScreen.Action]
        do throws(LockScreen.ServiceRefusal) {
            actions = try lock.serviceCode(digits, at: now)
        } catch {
            switch error {
            case .unlocked: return done(.success(.unlocked))
            case .lockedOut(let wait):
                return done(.failure(ControlError(.lockedOut, "locked out for \(wait.countdown)",
                                                  retryAfterMs: (wait.microseconds + 999) / 1000)))
            case .busy(let why): return done(.failure(ControlError(.busy, "the lock screen is busy (\(why))")))
            }
        }
        Log.info("service code given by \(who)")
        serviceReply = done
        perform(actions)
    }

    /// Answers the `service_unlock` waiting with the outcome of its attempt.
    private func answerServiceReply(_ event: LockEvent) {
        guard let done = serviceReply else { return }
        switch event {
        case .unlocked(.service, _):
            serviceReply = nil
            done(.success(.unlocked))
        case .failed(.service, let failures, let retry):
            serviceReply = nil
            done(.failure(ControlError(.wrongCode, "wrong service code; \(failures) failure(s) in a row",
                                       retryAfterMs: (retry.microseconds + 999) / 1000)))
        case .storeFailed(.service, let reason):
            serviceReply = nil
            done(.failure(ControlError(.storeFailed, "the attempt could not be counted, so it was not checked: \(reason)")))
        case .unlocked, .duress, .failed, .storeFailed, .lockout, .locked, .progress, .enrolled, .enrollFailed, .handedOver:
            break
        }
    }

    private func arm(_ t: Instant) {
        guard armedTimers.insert(t).inserted else { return }
        loop.schedule(at: t) { [unowned self] now in
            self.armedTimers.remove(t)
            let before = Status.State(self.lock.session.state)
            self.perform(self.lock.timer(at: now))
            // A lockout's or an error's end changes the state with no event: the textfile
            // says so now, not at the next event.
            if Status.State(self.lock.session.state) != before { self.textfile?.changed() }
        }
    }

    // MARK: control requests

    var status: Status {
        var s = Status(lock, screen: presenter.display.size, now: EventLoop.now(), enrolled: store.enrolled)
        s.display = displayState
        if s.display == .notShown {
            s.displayReason = presenters.lazy.compactMap { p in p.display.state.reason.map { "output \(p.display.name): \($0)" } }.first ?? lock.cover.failure
        }
        s.vt = terminal?.number
        if lock.cover.lockPending { s.lockPending = true }
        if !secretsReadable.isEmpty { s.secretsReadable = secretsReadable }
        var sources: [String: Status.SecretSource] = [:]
        for m in [UnlockMethod.pattern, .code] { sources[m.rawValue] = store.source(for: m) }
        s.serviceCodes = service.available
        s.secretSource = sources
        if !store.shadowed.isEmpty { s.secretsShadowed = store.shadowed }
        s.vtReason = terminalAbsence
        s.cover = coverInUse.name
        s.coverReason = coverInUse.reason
        s.power = presenter.blank ? .blank : .awake
        s.message = info.message
        s.outputs = [Status.Output(presenter.display.state, screen: presenter.display.size, grid: lock.pattern?.grid,
                                   card: presenter.display.cardNode)]
            + mirrors.map { Status.Output($0.presenter.display.state, screen: $0.presenter.display.size, grid: $0.view.pattern?.grid,
                                          card: $0.presenter.display.cardNode) }
        if let u = store.untrusted {
            s.record = .untrusted
            s.reason = "the state file is not trusted (\(u)): no attempt is accepted until root puts it right and restarts touchlockd"
        } else if let d = store.damage {
            s.record = .damaged
            if s.reason == nil { s.reason = "the state file was damaged (\(d)); locked out as after \(damagedCount) failures" }
        }
        return s
    }

    /// The information area's new text; the screens are laid out again when a message
    /// comes or goes (a finger on the grid stays on its node).
    private func showInfo(_ text: InfoText) {
        if (text.message != nil) != laidOutWithMessage {
            laidOutWithMessage = text.message != nil
            if let l = lock.relaid(as: layout(for: presenter.display).view) { lock = l }
            for i in mirrors.indices {
                mirrors[i].view = layout(for: mirrors[i].presenter.display).view
            }
            Log.info("the screens are laid out again \(laidOutWithMessage ? "with" : "without") a message")
        }
        perform(lock.setInfo(text))
    }

    /// Root cleared the lockout on purpose (`reset_lockout`): stored first, then applied.
    func resetLockout(by who: String) -> Result<Status.State, ControlError> {
        guard lock.enrollment == nil else { return .failure(ControlError(.busy, "an enrollment is under way")) }
        var probe = lock
        do { _ = try probe.resetLockout(at: EventLoop.now()) } catch {
            return .failure(ControlError(.busy, "cannot reset the lockout now: \(error)"))
        }
        let failures = lock.session.failures
        do { try store.store(LockoutRecord()) } catch {
            return .failure(controlError(error))
        }
        Log.event(.lockoutReset, .notice, "lockout reset by \(who): \(failures) failure(s) cleared",
                  [.init("TOUCHLOCK_ATTEMPTS", "\(failures)")])
        do { perform(try lock.resetLockout(at: EventLoop.now())) } catch {
            Log.bug("lockout reset refused after it was stored: \(error)")
        }
        textfile?.changed()
        return .success(Status.State(lock.session.state))
    }

    /// A client asked to lock the device again; `done` is called once the lock screen is
    /// on the display (with `shown`, once its frame is on the screen of every output), or
    /// with why it cannot be.
    func lockRequested(shown: Bool = false, _ done: @escaping (Result<Status.State, ControlError>) -> Void) {
        if shown {
            lockReplies.append { [unowned self] result in
                guard case .success = result else { return done(result) }
                var waiting = self.presenters.count
                for p in self.presenters {
                    p.whenShown {
                        waiting -= 1
                        if waiting == 0 { done(result) }
                    }
                }
            }
        } else {
            lockReplies.append(done)
        }
        // An output lost while locked (another process took master) is tried again.
        for p in presenters { p.retry(.lockRequested) }
        // Locked, but the lock screen never made it to the display: tried again.
        coverEvent(.lockRequested)
        perform(lock.lock(at: EventLoop.now()))
        coverEvent(.settle)
    }

    var metrics: Metrics {
        var m = Metrics(eventToSubmit: .init(presenter.eventToSubmit), eventToShown: .init(presenter.eventToShown),
                        frames: presenter.framesPresented)
        m.unlocks = tally.unlocks
        m.failuresTotal = tally.failures
        m.lockoutsTotal = tally.lockouts
        m.lockedSeconds = tally.lockedSeconds
        m.inputDevices = inputs?.deviceCount ?? 0
        m.outputs = presenters.filter { !$0.isReleased && $0.display.state.isActive }.count
        m.lockedSince = tally.lockedSinceWall
        m.lastUnlock = tally.lastUnlockWall
        m.lastFailure = tally.lastFailureWall
        m.lockoutUntil = lock.session.lockedOutUntil == nil ? nil : tally.lockoutUntilWall
        m.version = TouchlockVersion.current
        return m
    }

    /// Stores (or with nil removes) the hash of the secret `kind`.
    func enroll(_ kind: SecretKind, _ hash: String?) -> ControlError? {
        if let hash, !SecretHash.isUsable(hash) {
            return ControlError(.badValue, "\"hash\" is not a crypt(5) hash libxcrypt can use")
        }
        // An enrolled secret the config files shadow would be stored and never count.
        if hash != nil, kind != .duress, let why = store.enrollmentShadowed(kind.method) {
            Log.warning("enrollment of a \(kind) refused: \(why)")
            return ControlError(.shadowed, why)
        }
        do { try store.setSecret(kind, hash: hash) } catch { return controlError(error) }
        return nil
    }

    /// A state file not written, as the control socket tells it.
    private func controlError(_ error: StateStore.WriteError) -> ControlError {
        ControlError(.storeFailed, "cannot write \(store.path): \(error)")
    }

    func clientGone(_ serial: Int) {
        guard serial == enrollingClient else { return }
        enrollingClient = nil
        perform(lock.cancelEnrollment(reason: "the client that asked for it went away", at: EventLoop.now()))
    }

    /// Shows the enrollment screen of `method`: allowed while unlocked (the display and
    /// the input are taken back until the enrollment ends), or while locked when no
    /// secret exists for it.
    func enrollOnScreen(_ method: UnlockMethod, client: Int? = nil) -> ControlError? {
        if let why = store.enrollmentShadowed(method) {
            Log.warning("enrollment of a \(method.rawValue) on the screen refused: \(why)")
            return ControlError(.shadowed, why)
        }
        let actions: [LockScreen.Action]
        do {
            // After a damaged record a secret may have been lost with it: no enrollment on
            // the locked screen until a whole record is written (a reset by root).
            let hasSecret = store.secretHash(for: method) != nil || store.damage != nil
            actions = try lock.beginEnrollment(method, hasSecret: hasSecret, at: EventLoop.now())
        } catch {
            Log.warning("enrollment of a \(method.rawValue) on the screen refused: \(error)")
            return ControlError(.busy, "cannot enroll on the screen: \(error)")
        }
        enrollingClient = client
        coverEvent(.enrollmentRequested)
        // A display refused is reported on a later turn: the client is told with
        // `enroll_failed`.
        perform(actions)
        return nil
    }

    func shutdown() {
        ServiceNotify.send("STOPPING=1")
        // A panel is never left dark by a daemon that is gone.
        for b in backlights.values { b.switchOn() }
        textfile?.flush()
        info.finish()
        textImageFile.save(textImages)
        // Locked: the screen stays covered through a stop, a restart, an upgrade, with
        // the outputs as they are (their last frame on the screen); only a removal of
        // the package asks for the hand-back.
        let exit = lock.cover.exit(handBackAsked: handBackAsked(), systemStopping: systemStopping())
        switch exit {
        case .stayCovered: Log.info("stopping while locked: the lock screen stays on the screen, VT switching locked")
        case .giveBack: Log.info("stopping: the display goes back")
        case .release: Log.info("stopping while locked for a system shutdown: the display is let go, VT switching unlocked")
        }
        // Released for a shutdown: the outputs, torn down, do not put back what was on the
        // CRTCs before us (the kiosk app's last frame).
        if exit == .release { forgetScreen?() }
        switch exit {
        case .giveBack, .release:
            // Torn down in reverse order of setup.
            for m in mirrors.reversed() { m.presenter.shutdown() }
            presenter.shutdown()
        case .stayCovered:
            for m in mirrors.reversed() { m.presenter.leaveOnScreen() }
            presenter.leaveOnScreen()
        }
        covering.shutdown(exit)
        verifier.shutdown()
    }
}

extension Daemon {
    /// Why a screen is stuck (for the watchdog), or nil.
    func stuck(at now: Instant) -> String? {
        presenters.lazy.compactMap { $0.stuck(at: now) }.first
    }

    /// The card's outputs changed on a hotplug (set up and torn down by it).
    func outputsChanged(added: [Display], removed: [Display]) {
        removeOutputs(removed)
        for d in added { addOutput(d) }
        textfile?.changed()
    }

    /// After a hotplug's probe, changed or not: inactive outputs try again.
    func hotplugged() {
        for p in presenters { p.retry(.hotplug) }
    }
}
