import TouchlockCore
import TouchlockDisplay
import TouchlockRender
import TouchlockSystem

/// Draws the scenes it is handed into the shadow buffer and shows them: only the damage is
/// drawn, at most one frame is in flight, and damage that arrives meanwhile is shown by the
/// next. It also hands the display over (after the frame that clears the screen) and takes
/// it back. It never asks for a scene: the daemon says one is due (`sceneDue`) and hands
/// it over at the end of the loop's turn (`show`).
final class Presenter {
    let display: Display
    private(set) var shadow: ShadowBuffer
    private var renderer: Renderer
    private let loop: EventLoop
    /// The scene to show now: the last one handed over.
    private var scene: Scene?
    private var drawnScene: Scene?
    /// The masks of text drawn before, shared by every output's renderer.
    private let textImages: TextImages
    /// A new scene is due on this turn of the loop (`sceneDue`, then `show`).
    private var sceneComing = false
    /// Damage drawn into the shadow buffer and not yet presented.
    private var unpresented: Damage
    private var redrawQueued = false
    /// The display holds a frame until the next refresh: the scene is drawn when it ends.
    private var drawHeld = false
    /// Handed over: frames are drawn in memory but not shown until `take`.
    private var released = false
    /// Hand the display over once the frame being drawn is shown.
    private var releasePending = false
    /// The screen is switched off: frames wait in memory until it is on again.
    private(set) var blank = false
    /// Stop the loop once the frame being drawn is shown (`--once`).
    private var stopPending = false
    private var firstFrameShown = false
    /// Called once, when the first frame is on the screen.
    var onFirstFrame: (() -> Void)?
    /// Called once, when the first frame has been submitted to the display.
    var onFirstSubmit: (() -> Void)?
    /// Called when the display has been handed over (DRM master dropped).
    var onReleased: (() -> Void)?
    /// Called when a frame is shown, with the newest input event it reflects.
    var onShown: ((Instant) -> Void)?
    /// Called when a frame has been submitted (counted in `framesPresented`).
    var onPresented: (() -> Void)?
    /// Time of the input event whose effect is waiting to be presented.
    private var pendingEventTime: Instant?
    /// The input event behind the frame in flight, for event-to-shown latency.
    private var inFlightEventTime: Instant?
    /// Input event (kernel timestamp) to frame submission.
    private(set) var eventToSubmit = LatencyEstimator()
    /// From the input event that completed a frame to the frame being shown (the page
    /// flip's completion; the next loop turn when headless).
    private(set) var eventToShown = LatencyEstimator()
    private(set) var framesPresented = 0
    /// Waiting for what is drawn now to be on the screen (`whenShown`).
    private var shownWaiters: [() -> Void] = []

    /// `shown`: the display is ours from the start; else nothing is shown before `take`
    /// (a VT switch brings it).
    /// `textImages`: the masks of text drawn before, shared by every output.
    init(display: Display, loop: EventLoop, shown: Bool, textImages: TextImages) {
        self.textImages = textImages
        self.display = display
        released = !shown
        self.loop = loop
        shadow = ShadowBuffer(size: display.size)
        renderer = Renderer(shadow: shadow)
        renderer.textImages = textImages
        unpresented = Damage(bounds: display.size)
        display.onFrameComplete = { [unowned self] t in self.frameComplete(at: t) }
        display.onRedrawNeeded = { [unowned self] in self.presentAll() }
    }

    /// A new scene comes on this turn of the loop (`show`): until it has, nothing counts as
    /// shown. `eventTime` is the input event that changed it, for the latency figures.
    func sceneDue(after eventTime: Instant?) {
        if pendingEventTime == nil { pendingEventTime = eventTime }
        sceneComing = true
    }

    /// The display's size changed (a lock surface configured anew): a shadow buffer of
    /// the new size, drawn whole from the next scene (which the daemon lays out for it).
    func resized() {
        shadow = ShadowBuffer(size: display.size)
        renderer = Renderer(shadow: shadow)
        renderer.textImages = textImages
        drawnScene = nil
        unpresented = Damage(bounds: display.size)
    }

    /// Draws `scene`, the damage from the one drawn before, and presents it.
    func show(_ scene: Scene) {
        self.scene = scene
        sceneComing = false
        draw()
    }

    /// Draws the scene it has again, on this loop turn's end (the output taken back, or
    /// given a new buffer).
    func redraw() {
        if redrawQueued { return }
        redrawQueued = true
        loop.deferred { [unowned self] in
            self.redrawQueued = false
            self.draw()
        }
    }

    /// Draws the damaged part of the current scene into the shadow buffer, and presents
    /// it unless a frame is already in flight (then the next completion presents it).
    private func draw() {
        guard let scene else { return }
        if display.isHoldingFrame {
            drawHeld = true
            return
        }
        drawHeld = false
        let damage = scene.damage(from: drawnScene)
        drawnScene = scene
        if !damage.isEmpty {
            renderer.draw(scene, damage: damage)
            unpresented.formUnion(damage)
        } else if unpresented.isEmpty {
            // The input changed nothing on the screen: no frame will show it, and the
            // next one (a blink seconds later) must not be counted as its latency.
            pendingEventTime = nil
        }
        presentIfIdle()
    }

    /// Takes the display back: DRM master, then a full redraw. A hand-over still waiting
    /// for its frame is called off instead.
    func take() throws(SystemError) {
        if releasePending {
            releasePending = false
            return
        }
        guard released else { return }
        try display.acquire()
        released = false
        drawnScene = nil  // everything is drawn again
    }

    /// The display is handed over (or not yet taken): frames stay in memory.
    var isReleased: Bool { released }

    /// Hands the display over once the frame being drawn is shown.
    func releaseWhenShown() {
        releasePending = true
        settle()
    }

    /// Hands the display over at once, nothing shown (it never was: a start handed over).
    func letGo() {
        releasePending = false
        do { try display.release() } catch { Log.warning("cannot drop DRM master: \(error)") }
        released = true
    }

    /// Runs `f` once what is drawn now is on the screen: at once when nothing waits to be
    /// shown, or nothing can be (handed over, blank, the output lost).
    func whenShown(_ f: @escaping () -> Void) {
        shownWaiters.append(f)
        runShownWaiters()
    }

    private func runShownWaiters() {
        guard !shownWaiters.isEmpty else { return }
        let waiting = !released && !blank && display.state.isActive
            && (redrawQueued || sceneComing || drawHeld || display.isBusy || !unpresented.isEmpty)
        guard !waiting else { return }
        let run = shownWaiters
        shownWaiters = []
        for f in run { f() }
    }

    /// Stops the loop once the frame being drawn is shown.
    func stopWhenShown() {
        stopPending = true
        settle()
    }

    /// Switches the screen off (DPMS); nothing is presented until `wake`.
    func blankScreen() {
        do {
            try display.setPowered(false)
            blank = true
        } catch {
            Log.warning("cannot blank the screen: \(error)")
        }
    }

    /// Switches the screen on and shows what was drawn meanwhile.
    func wake() {
        guard blank else { return }
        blank = false
        do { try display.setPowered(true) } catch { Log.warning("cannot switch the screen on: \(error)") }
        presentIfIdle()
    }

    /// The output lost what it showed (it is back, or a stuck flip was abandoned): the
    /// whole shadow buffer is presented again.
    private func presentAll() {
        unpresented.addAll()
        presentIfIdle()
    }

    /// Tries a lost output again (it may be back after a VT switch, a `lock`, a hotplug).
    func retry(_ trigger: OutputState.Trigger) {
        display.retry(trigger)
    }

    private func presentIfIdle() {
        guard !released, !blank, display.state.isActive, !display.isBusy, !unpresented.isEmpty else {
            settle()
            return
        }
        do {
            try display.present(shadow, damage: unpresented)
        } catch {
            // The output went inactive (status says why) or the frame is tried again.
            Log.error("output \(display.name): cannot show a frame: \(error)")
            settle()
            return
        }
        unpresented.removeAll()
        framesPresented += 1
        if framesPresented == 1 { onFirstSubmit?() }
        onPresented?()
        if let t = pendingEventTime {
            eventToSubmit.record(EventLoop.now() - t)
            inFlightEventTime = t
            pendingEventTime = nil
        }
    }

    /// With nothing in flight and nothing left to draw, a pending stop or hand-over is
    /// carried out.
    private func settle() {
        defer { runShownWaiters() }
        // A lost output shows nothing of the secret either: it does not hold a hand-over up.
        guard !redrawQueued, !sceneComing, (!display.isBusy && unpresented.isEmpty) || !display.state.isActive else { return }
        if stopPending {
            stopPending = false
            loop.stop()
            return
        }
        if releasePending {
            // The screen shows nothing of the secret: hand the display over.
            releasePending = false
            do {
                try display.release()
                released = true
                onReleased?()
            } catch {
                Log.warning("cannot drop DRM master: \(error)")
            }
        }
    }

    /// Whether input up to `eventTime` still waits to be drawn or shown.
    func awaits(_ eventTime: Instant) -> Bool {
        if let p = pendingEventTime, p <= eventTime, redrawQueued || sceneComing || drawHeld || !unpresented.isEmpty { return true }
        if let f = inFlightEventTime, f >= eventTime { return true }
        return false
    }

    /// Why the screen is stuck at `now` (a frame submitted and never shown), or nil while
    /// frames complete or nothing needs drawing.
    func stuck(at now: Instant) -> String? {
        display.state.stuck(at: now)
    }

    private func frameComplete(at t: Instant) {
        if let e = inFlightEventTime {
            eventToShown.record(t - e)
            inFlightEventTime = nil
            onShown?(e)
        }
        if !firstFrameShown {
            firstFrameShown = true
            onFirstFrame?()
        }
        if drawHeld { draw() } else { presentIfIdle() }
        runShownWaiters()
    }

    /// Stops drawing, the last frame left on the screen (a stop while locked).
    func leaveOnScreen() {
        display.leaveOnScreen()
        let run = shownWaiters
        shownWaiters = []
        for f in run { f() }
    }

    func shutdown() {
        if eventToSubmit.count > 0 {
            // A headless display writing PNG files presents a frame by encoding it: the
            // figures are then the files' time, not a display's (docs/benchmarks.md has those).
            let files = (display as? HeadlessDisplay)?.writesFiles == true
                ? " (each frame encoded and written as a PNG file first; on a display: docs/benchmarks.md)" : ""
            Log.info("latency from input event to frame submitted: \(eventToSubmit.summary)\(files)")
            Log.info("latency from input event to frame shown: \(eventToShown.summary)\(files)")
        }
        display.shutdown()
        let run = shownWaiters
        shownWaiters = []
        for f in run { f() }
    }
}
