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
    /// Time of the input event whose effect is waiting to be presented.
    private var pendingEventTime: Instant?
    /// The input event behind the frame in flight, for event-to-shown latency.
    private var inFlightEventTime: Instant?
    /// From the input event that completed a frame to the frame being submitted, and to
    /// it being shown (the page flip's completion; the next loop turn when headless).
    private(set) var submitLatency = LatencyStats()
    private(set) var shownLatency = LatencyStats()
    var onEvent: ((LockEvent) -> Void)?

    init(config: Config, options: Options, loop: EventLoop, display: Display) {
        self.config = config
        self.options = options
        self.loop = loop
        self.display = display
        shadow = ShadowBuffer(size: display.size)
        renderer = Renderer(shadow: shadow)
        unpresented = Damage(bounds: display.size)
        let density = Density(screen: display.size, physicalMillimetres: display.physicalSize, override: config.screens.dpi)
        Log.info("\(Int(density.dpi.rounded())) dpi: sizes scaled by \(density.scale)")
        lock = LockScreen.make(config: config, size: display.size, density: density,
                               shuffleSeed: Self.randomSeed(), at: EventLoop.now())
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
            do { text = try readFile(path) } catch { throw StartError("\(error)") }
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
        redraw()
        replay?.start(after: .milliseconds(300))
    }

    // MARK: actions

    func perform(_ actions: [LockScreen.Action], eventTime: Instant? = nil) {
        for a in actions {
            switch a {
            case .verify(let attempt):
                var bytes = attempt.secretBytes
                let match = config.patternHash.map { SecretHash.verify(&bytes, against: $0) } ?? false
                SecretHash.wipe(&bytes)
                Log.info("pattern attempt of \(attempt.nodes.count) nodes: \(match ? "accepted" : "rejected")")
                perform(lock.verified(match, at: EventLoop.now()))
            case .verifyCode(let attempt):
                var bytes = attempt.secretBytes
                let match = config.screens.codeHash.map { SecretHash.verify(&bytes, against: $0) } ?? false
                SecretHash.wipe(&bytes)
                Log.info("code attempt of \(attempt.digits.count) digits: \(match ? "accepted" : "rejected")")
                perform(lock.verified(match, at: EventLoop.now()))
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

    private func emit(_ event: LockEvent) {
        switch event {
        case .unlocked(let m, _):
            Log.info("unlocked by \(m.rawValue)")
            evdev?.grab(false)
            if options.once { stopAfterPresent = true }
        case .failed(let m, let failures, _):
            Log.info("wrong \(m.rawValue); \(failures) failure(s) in a row")
        case .locked:
            Log.info("locked")
            evdev?.grab(true)
        case .progress(let entered, let total):
            Log.debug("code: \(entered) of \(total) digits")
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
        if let t = pendingEventTime {
            submitLatency.record(EventLoop.now() - t)
            inFlightEventTime = t
            pendingEventTime = nil
        }
    }

    private func frameComplete(at t: Instant) {
        if let e = inFlightEventTime {
            shownLatency.record(t - e)
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
        presentIfIdle()
    }

    func shutdown() {
        ServiceNotify.send("STOPPING=1")
        if submitLatency.count > 0 {
            Log.info("latency from input event to frame submitted: \(submitLatency.summary)")
            Log.info("latency from input event to frame shown: \(shownLatency.summary)")
        }
        display.shutdown()
    }
}

struct StartError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// Reads a whole file (config, recording) as UTF-8.
func readFile(_ path: String) throws(StartError) -> String {
    guard let f = fopen(path, "re") else {
        throw StartError("cannot read \(path): \(String(cString: strerror(errno)))")
    }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n > 0 { bytes.append(contentsOf: buf[0..<n]) }
        if n < buf.count {
            if ferror(f) != 0 { throw StartError("cannot read \(path): \(String(cString: strerror(errno)))") }
            break
        }
    }
    guard let s = String(validating: bytes, as: UTF8.self) else { throw StartError("\(path): not UTF-8 text") }
    return s
}
