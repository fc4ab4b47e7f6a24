import Glibc
import TouchlockControl
import TouchlockCore
import TouchlockDisplay
import TouchlockInput
import TouchlockRender
import TouchlockSecrets
import TouchlockSystem

/// Owns all state and runs it on one event loop: input -> lock screen -> scene ->
/// shadow buffer -> display; lock screen -> socket events.
final class Daemon {
    let loop: EventLoop
    let config: Config
    let options: Options
    let display: Display
    let shadow: ShadowBuffer
    let renderer: Renderer
    var lock: LockScreen
    private var evdev: EvdevInputs?
    private var replay: ReplaySource?
    private var drawnScene: Scene?
    /// Damage drawn into the shadow buffer and not yet presented.
    private var unpresented: Damage
    private var redrawQueued = false
    private var armedTimers: Set<Instant> = []
    private var firstFrameShown = false
    private var stopAfterPresent = false
    /// After an unlock: drop DRM master once the cleared screen is shown.
    private var releaseWhenCleared = false
    /// Time of the input event whose effect is waiting to be presented.
    private var pendingEventTime: Instant?
    /// The input event behind the frame in flight, for event-to-shown latency.
    private var inFlightEventTime: Instant?
    /// From the input event that completed a frame to the frame being shown (the page
    /// flip's completion; the next loop turn when headless).
    private(set) var eventToShown = LatencyEstimator()
    var onEvent: ((LockEvent) -> Void)?
    /// What is kept across restarts (lockout record, secrets), as last stored.
    private(set) var stored: StoredState
    /// Input event (kernel timestamp) to frame submission.
    private(set) var eventToSubmit = LatencyEstimator()
    private(set) var framesPresented = 0
    let statePath: String
    private let bootID: String?
    private let digester: GuessDigester?

    init(config: Config, options: Options, loop: EventLoop, display: Display, stored: StoredState,
         statePath: String, bootID: String?) {
        self.config = config
        self.options = options
        self.loop = loop
        self.display = display
        self.stored = stored
        self.statePath = statePath
        self.bootID = bootID
        do { digester = try GuessDigester() } catch {
            Log.error("cannot make guess digests (\(error)); every wrong guess counts")
            digester = nil
        }
        shadow = ShadowBuffer(size: display.size)
        renderer = Renderer(shadow: shadow)
        unpresented = Damage(bounds: display.size)
        let now = EventLoop.now()
        let record = stored.lockout.restored(sameBoot: stored.bootID != nil && stored.bootID == bootID,
                                             now: now, schedule: config.lockoutSchedule)
        if stored.lockout.failures > 0 || stored.lockout.deadline != nil {
            let left = record.deadline.map { " \(($0 - now).countdown) left" } ?? ""
            Log.info("restored \(record.failures) failure(s) in a row\(stored.bootID == bootID ? "" : " (after a reboot: full wait)")\(left)")
        }
        let density = Density(screen: display.size, physicalMillimetres: display.physicalSize, override: config.screens.dpi)
        Log.info("\(Int(density.dpi.rounded())) dpi: sizes scaled by \(density.scale)")
        lock = LockScreen.make(config: config, size: display.size, density: density,
                               shuffleSeed: Self.randomSeed(), at: now,
                               session: Session(restoring: record, at: now, errorHold: config.errorHold,
                                                schedule: config.lockoutSchedule))
        display.onFrameComplete = { [unowned self] t in self.frameComplete(at: t) }
    }

    /// Opens the input named by the options.
    func startInput() throws(StartError) {
        let deliver: ([ScreenTouch], Instant) -> Void = { [unowned self] touches, time in
            self.perform(self.lock.touches(touches, at: time), eventTime: time)
        }
        let deliverKey: (KeyInput, Instant) -> Void = { [unowned self] key, time in
            self.perform(self.lock.hardwareKey(key, at: time), eventTime: time)
        }
        let settings = InputSettings(quirks: config.inputQuirks, orientation: config.touchOrientation)
        var useReplay = options.input == .replay
        if options.input != .replay {
            let inputs = EvdevInputs(loop: loop, screen: display.size, settings: settings,
                                     deliver: deliver, deliverKey: deliverKey)
            inputs.openAll()
            if inputs.count > 0 || options.input == .evdev {
                if inputs.count == 0 { Log.warning("no touchscreen found under /dev/input yet; waiting for one") }
                inputs.watchForHotplug()
                evdev = inputs
            } else {
                useReplay = true
            }
        }
        if useReplay {
            guard let path = options.replayPath ?? Self.bundledReplay() else {
                throw StartError("no touchscreen found and no recording to replay (--replay FILE)")
            }
            let text: String
            do { text = try FileContents.text(path) } catch { throw StartError("\(error)") }
            let rec: EvemuRecording
            do { rec = try EvemuRecording(parsing: text) } catch { throw StartError("\(path):\(error.line): \(error.message)") }
            guard let device = rec.description else { throw StartError("\(path): the recording holds no device description") }
            let input: TouchInput
            switch TouchInput.make(label: path, device: device, settings: settings, screen: display.size, deliver: deliver) {
            case .success(let t): input = t
            case .failure(let why): throw StartError("\(path): not a touchscreen: \(why)")
            }
            let source = ReplaySource(recording: rec, loop: loop) { e in
                input.feed(e)
                if let k = KeyInput(e) { deliverKey(k, e.time) }
            }
            source.onFinished = { Log.info("replay of \(path) finished") }
            replay = source
            Log.info("replaying \(path): \(rec.events.count) events")
        }
    }

    /// 64 bits from the kernel's random source (the standard library's system generator
    /// reads getrandom), for the keypad's shuffle.
    static func randomSeed() -> UInt64 {
        var g = SystemRandomNumberGenerator()
        return g.next()
    }

    static func bundledReplay() -> String? {
        let p = "/usr/share/touchlock/demo-pattern.evemu"
        return access(p, R_OK) == 0 ? p : nil
    }

    /// Shows the first frame and starts any replay.
    func start() {
        perform(lock.begin(at: EventLoop.now()))
        perform(lock.resume(at: EventLoop.now()))
        redraw()
        replay?.start(after: .milliseconds(300))
    }

    // MARK: actions

    func perform(_ actions: [LockScreen.Action], eventTime: Instant? = nil) {
        for a in actions {
            switch a {
            case .verify(let attempt):
                var bytes = attempt.secretBytes
                let verdict = verify(.pattern, &bytes)
                Log.info("pattern attempt of \(attempt.nodes.count) nodes: \(verdict.isMatch ? "accepted" : "rejected")")
                perform(lock.verified(verdict, at: EventLoop.now()))
            case .verifyCode(let attempt):
                var bytes = attempt.secretBytes
                let verdict = verify(.code, &bytes)
                Log.info("code attempt of \(attempt.digits.count) digits: \(verdict.isMatch ? "accepted" : "rejected")")
                perform(lock.verified(verdict, at: EventLoop.now()))
            case .store(let record):
                let error = store(record)
                perform(lock.stored(error: error, at: EventLoop.now()))
            case .enroll(let method, let bytes):
                enrolledOnScreen(method, bytes)
            case .emit(let event):
                emit(event)
            case .armTimer(let t):
                arm(t)
            case .redraw:
                if pendingEventTime == nil { pendingEventTime = eventTime }
                queueRedraw()
            }
        }
    }

    /// Checks an attempt (`secret` is wiped): the method's secret, and for codes the
    /// duress code too, always both so the time taken does not tell which matched.
    func verify(_ method: UnlockMethod, _ secret: inout [UInt8]) -> Session.Verdict {
        defer { SecretHash.wipe(&secret) }
        var a = secret
        let match = secretHash(for: method).map { SecretHash.verify(&a, against: $0) } ?? false
        var duress = false
        if method == .code, let d = stored.duressHash {
            var b = secret
            duress = SecretHash.verify(&b, against: d)
        }
        if match { return .match(duress: false) }
        if duress { return .match(duress: true) }
        var c = secret
        return .wrong(digest: digester?.digest(&c))
    }

    /// The methods with a secret (enrolled, or in the config files).
    var enrolled: [UnlockMethod] {
        [UnlockMethod.pattern, .code].filter { secretHash(for: $0) != nil }
    }

    /// The hash an attempt by `method` is checked against: the enrolled one, else the
    /// one in the config files.
    func secretHash(for method: UnlockMethod) -> String? {
        stored.hash(for: method) ?? (method == .pattern ? config.patternHash : config.screens.codeHash)
    }

    /// Writes the state file with `record`; nil when it is on disk, else why not.
    private func store(_ record: LockoutRecord) -> String? {
        var next = stored
        next.lockout = record
        if let error = writeState(next) {
            Log.error("cannot store \(record.failures) failure(s) in \(statePath): \(error); input stays blocked")
            return error
        }
        return nil
    }

    /// Writes `state` durably and keeps it; nil on success, else the reason.
    func writeState(_ state: StoredState) -> String? {
        var state = state
        state.bootID = bootID
        do {
            try DurableFile.makeDirectory(DurableFile.directory(of: statePath))
            try DurableFile.replace(statePath, with: Array(state.text.utf8))
        } catch {
            return "\(error.errno)"
        }
        stored = state
        return nil
    }

    /// A client asked to lock the device again.
    func lockRequested() -> Result<Status.State, ControlError> {
        releaseWhenCleared = false
        if case .unlocked = lock.session.state {
            do { try display.acquire() } catch {
                Log.warning("cannot take the display back: \(error)")
                return .failure(ControlError(.displayBusy, "cannot take the display back: \(error)"))
            }
            drawnScene = nil  // everything is drawn again
        }
        perform(lock.lock(at: EventLoop.now()))
        return .success(Status.State(lock.session.state))
    }

    var metrics: Metrics {
        Metrics(eventToSubmit: .init(eventToSubmit), eventToShown: .init(eventToShown), frames: framesPresented)
    }

    /// Stores (or with nil removes) the hash of the secret named by `method`.
    func enroll(_ method: String, _ hash: String?) -> ControlError? {
        if let hash, !SecretHash.isUsable(hash) {
            return ControlError(.badValue, "\"hash\" is not a crypt(5) hash libxcrypt can use")
        }
        var next = stored
        switch method {
        case "pattern": next.patternHash = hash
        case "code": next.codeHash = hash
        case "duress": next.duressHash = hash
        default: return ControlError(.badValue, "unknown method \"\(method)\" (pattern, code, duress)")
        }
        if let error = writeState(next) {
            Log.error("cannot store the \(method) secret in \(statePath): \(error)")
            return ControlError(.storeFailed, "cannot write \(statePath): \(error)")
        }
        return nil
    }

    /// Shows the enrollment screen of `method`: allowed while unlocked, or while locked
    /// when no secret exists for it. When unlocked, the display and the input are taken
    /// back until the enrollment ends.
    /// The control client that asked for the enrollment on screen: if it goes away
    /// (touchlockctl gave up waiting), the enrollment is cancelled.
    private var enrollingClient: Int?

    func clientGone(_ serial: Int) {
        guard serial == enrollingClient else { return }
        enrollingClient = nil
        perform(lock.cancelEnrollment(reason: "the client that asked for it went away", at: EventLoop.now()))
    }

    func enrollOnScreen(_ method: UnlockMethod, client: Int? = nil) -> ControlError? {
        let now = EventLoop.now()
        var wasUnlocked = false
        if case .unlocked = lock.session.state { wasUnlocked = true }
        let actions: [LockScreen.Action]
        do { actions = try lock.beginEnrollment(method, hasSecret: secretHash(for: method) != nil, at: now) } catch {
            Log.warning("enrollment of a \(method.rawValue) on the screen refused: \(error)")
            return ControlError(.busy, "cannot enroll on the screen: \(error)")
        }
        if wasUnlocked {
            releaseWhenCleared = false
            do { try display.acquire() } catch {
                Log.warning("cannot take the display back: \(error)")
                perform(lock.cancelEnrollment(reason: "the display is busy", at: now))
                return ControlError(.displayBusy, "cannot take the display back: \(error)")
            }
            drawnScene = nil  // everything is drawn again
            evdev?.grab(true)
        }
        enrollingClient = client
        perform(actions)
        return nil
    }

    /// The secret was given twice alike on the screen: hash it, store it, tell
    /// subscribers. `bytes` is wiped, with the action that carried it.
    private func enrolledOnScreen(_ method: UnlockMethod, _ bytes: [UInt8]) {
        defer { SecretHash.wipeShared(bytes) }
        var secret = bytes
        let hash: String
        do { hash = try SecretHash.make(&secret) } catch {
            Log.error("cannot hash the enrolled \(method.rawValue): \(error)")
            emit(.enrollFailed(method, reason: "cannot hash it: \(error)"))
            afterEnrollment()
            return
        }
        if let e = enroll(method.rawValue, hash) {
            emit(.enrollFailed(method, reason: e.message))
        } else {
            Log.info("\(method.rawValue) enrolled on the screen")
            emit(.enrolled(method))
        }
        afterEnrollment()
    }

    /// When unlocked, the display and the input are handed over again.
    private func afterEnrollment() {
        if case .unlocked = lock.session.state {
            evdev?.grab(false)
            releaseWhenCleared = true
        }
    }

    private func emit(_ event: LockEvent) {
        switch event {
        case .unlocked(let m, _):
            Log.info("unlocked by \(m.rawValue)")
            evdev?.grab(false)
            if options.once { stopAfterPresent = true } else { releaseWhenCleared = true }
        case .duress(let m, _):
            Log.info("duress \(m.rawValue) given")
        case .failed(let m, let failures, let retry):
            Log.info("wrong \(m.rawValue); \(failures) failure(s) in a row; next attempt in \(retry.milliseconds < 60_000 ? "\(retry.milliseconds) ms" : retry.countdown)")
        case .lockout(let until):
            Log.info("locked out for \((until - EventLoop.now()).countdown)")
        case .locked:
            Log.info("locked")
            evdev?.grab(true)
        case .progress(let entered, let total):
            Log.debug("code: \(entered) of \(total) digits")
        case .enrolled(let m):
            Log.info("\(m.rawValue) enrolled")
            enrollingClient = nil
        case .enrollFailed(let m, let reason):
            Log.info("enrollment of a \(m.rawValue) failed: \(reason)")
            enrollingClient = nil
        }
        switch event {
        case .unlocked: ServiceNotify.send("STATUS=unlocked")
        case .locked: ServiceNotify.send("STATUS=locked")
        case .lockout(let until): ServiceNotify.send("STATUS=locked out for \((until - EventLoop.now()).countdown)")
        case .failed(_, let n, _): ServiceNotify.send("STATUS=locked, \(n) failure(s) in a row")
        case .duress, .progress, .enrolled, .enrollFailed: break
        }
        onEvent?(event)
    }

    private func arm(_ t: Instant) {
        guard armedTimers.insert(t).inserted else { return }
        loop.schedule(at: t) { [unowned self] now in
            self.armedTimers.remove(t)
            self.perform(self.lock.timer(at: now))
        }
    }

    // MARK: drawing

    private func queueRedraw() {
        if redrawQueued { return }
        redrawQueued = true
        loop.deferred { [unowned self] in
            self.redrawQueued = false
            self.redraw()
        }
    }

    /// Draws the damaged part of the current scene into the shadow buffer, and presents
    /// it unless a frame is already in flight (then the next completion presents it).
    private func redraw() {
        let scene = lock.scene
        let damage = scene.damage(from: drawnScene)
        drawnScene = scene
        if damage.isEmpty { return }
        renderer.draw(scene, damage: damage)
        unpresented.formUnion(damage)
        presentIfIdle()
    }

    private func presentIfIdle() {
        guard !display.isBusy, !unpresented.isEmpty else { return }
        do {
            try display.present(shadow, damage: unpresented)
        } catch {
            Log.error("cannot show a frame: \(error)")
            return
        }
        unpresented.removeAll()
        framesPresented += 1
        if let t = pendingEventTime {
            eventToSubmit.record(EventLoop.now() - t)
            inFlightEventTime = t
            pendingEventTime = nil
        }
    }

    private func frameComplete(at t: Instant) {
        if let e = inFlightEventTime {
            eventToShown.record(t - e)
            inFlightEventTime = nil
        }
        if !firstFrameShown {
            firstFrameShown = true
            Log.info("first frame shown")
            ServiceNotify.send("READY=1\nSTATUS=locked")
        }
        if stopAfterPresent && unpresented.isEmpty {
            loop.stop()
            return
        }
        if releaseWhenCleared && unpresented.isEmpty, case .unlocked = lock.session.state, lock.scene.nodes.isEmpty {
            // The screen shows nothing of the secret: hand the display over.
            releaseWhenCleared = false
            do { try display.release() } catch { Log.warning("cannot drop DRM master: \(error)") }
            return
        }
        presentIfIdle()
    }

    func shutdown() {
        ServiceNotify.send("STOPPING=1")
        if eventToSubmit.count > 0 {
            Log.info("latency from input event to frame submitted: \(eventToSubmit.summary)")
            Log.info("latency from input event to frame shown: \(eventToShown.summary)")
        }
        display.shutdown()
    }
}

struct StartError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}


extension Session.Verdict {
    var isMatch: Bool {
        switch self {
        case .match: true
        case .wrong: false
        }
    }
}
