/// What the session tells the world: the log, the service manager and socket
/// subscribers, which get it as it is (TouchlockControl's `Event` is this type, encoded
/// there to the wire's fields).
public enum LockEvent: Hashable, Sendable {
    /// The session was unlocked at `at` (monotonic clock).
    case unlocked(method: UnlockMethod, at: Instant)
    /// The secret given was the duress code; sent just before `unlocked`.
    case duress(method: UnlockMethod, at: Instant)
    /// An attempt failed; input is accepted again after `retryAfter`.
    case failed(method: UnlockMethod, failures: Int, retryAfter: Interval)
    /// A wrong attempt could not be stored: input stays blocked until a retry stores it.
    /// Sent instead of `failed`, which always follows the stored record.
    case storeFailed(method: UnlockMethod, reason: String)
    /// No attempt is accepted before `until` (monotonic clock).
    case lockout(until: Instant)
    /// The session is locked again.
    case locked
    /// Digits entered on the code pad, of `total`: never the digits (the "uncompleted"
    /// callback of an N-digit code field).
    case progress(entered: Int, total: Int)
    /// A secret enrolled on the screen is stored (told once it is on disk).
    case enrolled(method: UnlockMethod)
    /// An enrollment on the screen ended without a new secret, for `reason`.
    case enrollFailed(method: UnlockMethod, reason: String)
    /// After an unlock, the screen and the input are the kiosk's again: DRM master
    /// dropped and, with a VT hand-off, the kiosk's VT shown. Told by the daemon once the
    /// hand-over is done, never by the lock screen.
    case handedOver
}

/// Why an enrollment on the screen cannot begin.
public enum EnrollRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The device is locked and a secret exists for the method: unlock first.
    case locked
    /// An attempt is being checked, shown as wrong, or waited out.
    case busy(String)
    /// Another enrollment is under way.
    case enrolling
    /// The screen has no pad for the method.
    case noPad(UnlockMethod)

    public var description: String {
        switch self {
        case .locked: "the device is locked and a secret exists: unlock it first"
        case .busy(let state): "the lock screen is busy (\(state))"
        case .enrolling: "an enrollment is already under way"
        case .noPad(.code): "the screen has no code pad"
        case .noPad(.pattern): "the screen has no pattern grid"
        case .noPad(.service): "service codes are given over the control socket, not enrolled"
        }
    }
}

/// The lock screen as one value: the pattern gesture and the code pad feeding the
/// session, and the scene that shows them. Every effect on the outside world is an
/// action the owner carries out (checking a secret, storing the record, taking or
/// handing over the display and the input, telling subscribers, arming the timer,
/// redrawing); results come back as events (`verified`, `stored`, `enrollStored`,
/// `displayTaken`, `displayRefused`). Time comes in with every event; the scene is drawn
/// as of the last.
public struct LockScreen: Sendable {
    public enum Action: Hashable, Sendable {
        /// Check an attempt against the secret of its method, then call `verified`.
        case verify(Attempt)
        /// Store the record durably, then call `stored`; nothing of the result is shown
        /// or told before.
        case store(LockoutRecord)
        /// A secret enrolled on the screen, given twice alike: hash and store it, wipe the
        /// bytes, then call `enrollStored`.
        case enroll(UnlockMethod, [UInt8])
        /// Tell subscribers, the log and the service manager.
        case notify(LockEvent)
        case armTimer(Instant)
        case redraw
        /// What the cover asks of its executor (a way of covering, the replies to `lock`);
        /// what comes of it is reported with `cover(_:at:)`. Taking the display back is
        /// `ask(.cover)`; handing it over once the frame being drawn is shown (it shows
        /// nothing of the secret) is `ask(.uncover)`.
        case cover(Cover.Action)
        /// Keep every touch and key from other programs (EVIOCGRAB).
        case grabInput
        /// Let other programs have the input again.
        case releaseInput
        /// Switch the screen off: locked and untouched for `blankAfter`.
        case blankDisplay
        /// Switch it on again: a touch or a key came (and is not taken as input).
        case wakeDisplay
        /// The device went idle (logind's idle hint): the screen is about to blank, or the
        /// idle lock is locking it, whatever the cover does before "locked" is told.
        case wentIdle

        /// Whether this takes the display or the input from the kiosk app (what must not
        /// happen before "locked" is on record).
        public var takesDisplayOrInput: Bool {
            switch self {
            case .grabInput: true
            case .cover(let a): a == .ask(.cover)
            case .verify, .store, .enroll, .notify, .armTimer, .redraw, .releaseInput, .blankDisplay, .wakeDisplay, .wentIdle: false
            }
        }
    }

    /// An attempt to check: the secret's bytes are in it, so it is wiped once checked.
    public enum Attempt: Hashable, Sendable, CustomStringConvertible {
        case pattern(Pattern)
        case code(Code)
        /// A one-time service code (ASCII digits), given through the control socket.
        case service([UInt8])

        public var method: UnlockMethod {
            switch self {
            case .pattern: .pattern
            case .code: .code
            case .service: .service
            }
        }

        /// The bytes that are hashed (see `Pattern.secretBytes`, `Code.secretBytes`).
        public var secretBytes: [UInt8] {
            switch self {
            case .pattern(let p): p.secretBytes
            case .code(let c): c.secretBytes
            case .service(let digits): digits
            }
        }

        /// Never the secret: the method and its size.
        public var description: String {
            switch self {
            case .pattern(let p): "pattern of \(p.nodes.count) nodes"
            case .code(let c): "code of \(c.digits.count) digits"
            case .service(let digits): "service code of \(digits.count) digits"
            }
        }
    }

    /// Who has the display and the input, as read off the cover. The lock screen holds
    /// them from the start; after an unlock they are handed over to the kiosk app, and
    /// asked back to lock again or to enroll a secret on the screen.
    public enum Hold: Hashable, Sendable {
        case held
        case released
        /// The display was asked back, for this purpose; the cover's `displayTaken` or
        /// `displayRefused` says how it went.
        case taking(Purpose)
    }

    public enum Purpose: Hashable, Sendable {
        case lock
        case enroll(UnlockMethod)
    }

    public private(set) var pads: Pads
    public private(set) var session: Session
    /// The attempt submitted whose count is being stored, before it is checked.
    private var waiting: [Attempt] = []
    public var builder: SceneBuilder
    /// Where the control that switches methods is (with both methods).
    public private(set) var toggleRect: PixelRect?
    /// How long an accepted pattern stays on screen before the unlocked screen.
    public var acceptHold = Interval.milliseconds(500)
    /// Whether the lock screen covers the screen, and what is under way: the one holder of
    /// that state (`hold` and `holdsInput` are read off it and the session).
    public private(set) var cover = Cover(coveredAtStart: true)
    /// Which contacts reach the pads: the first finger, palms, stuck contacts, the switch.
    public private(set) var fingers: Fingers
    /// The screen's power (blanking) and the idle lock.
    public private(set) var power = Power()
    /// What the prompt says besides the state's instruction.
    private var promptText = Prompt()
    /// The time of the last event: what the scene is drawn as of.
    public private(set) var now = Instant(microseconds: 0)
    /// An enrollment of a new secret under way: attempts are kept and compared, never
    /// verified, and never count as failures.
    public private(set) var enrollment: Enrollment?
    /// What the information area says now: the time and date (given by the daemon each
    /// minute), the message shown.
    public private(set) var info = InfoText()
    /// The hidden entry of one-time service codes (a long press on the prompt or the
    /// clock), when the device has service codes.
    public private(set) var serviceEntry: ServiceEntry?

    public init(pads: Pads, session: Session, builder: SceneBuilder, toggle: PixelRect? = nil) {
        self.pads = pads
        self.session = session
        self.builder = builder
        if case .both = pads { self.toggleRect = toggle } else { self.toggleRect = nil }
        fingers = Fingers(stillContacts: StillContacts(jitter: StillContacts.jitterDp * (builder.layout?.density.px ?? 1)))
    }

    public var pattern: PatternLock? { pads.pattern }
    public var code: CodePad? { pads.code }
    public var methods: ScreenSettings.Methods { pads.methods }
    /// The method of the owner's pad on screen.
    public var active: UnlockMethod { pads.showing }
    /// The method on screen: `service` while the service pad is open, else `active`.
    public var showing: UnlockMethod { serviceEntry?.isOpen == true ? .service : active }
    /// The code pad on screen: the service pad while it is open, else the owner's.
    public var shownCode: CodePad? { serviceEntry?.pad ?? code }

    /// The device has service codes: the screen offers their hidden entry, `entry` (nil:
    /// none). `LockScreen.make` gives it when told the codes' digits.
    public mutating func offerServiceEntry(_ entry: ServiceEntry?) {
        serviceEntry = entry
    }

    /// While unlocked and handed over, lock again after this long with no touch or key.
    public var idleLock: Interval? {
        get { power.idleLock }
        set { power.idleLock = newValue }
    }
    /// While locked and untouched this long, the screen is switched off (nil: never).
    public var blankAfter: Interval? {
        get { power.blankAfter }
        set { power.blankAfter = newValue }
    }
    /// The screen is off: nothing wakes the loop but the session's own deadline.
    public var blanked: Bool { power.blanked }
    /// Contacts the pads are given, followed to find those that rest without moving
    /// (`StillContacts`): ignored until they lift, and not counted as activity.
    public var stillContacts: StillContacts {
        get { fingers.stillContacts }
        set { fingers.stillContacts = newValue }
    }
    /// The lockout under way stands for a damaged or untrusted state file: the prompt
    /// says so (`Prompt.recordFault`) until the lockout ends or is reset.
    public var recordFault: RecordFault? {
        get { promptText.recordFault }
        set { promptText.recordFault = newValue }
    }

    public var scene: Scene {
        if let e = serviceEntry, let pad = e.pad { return serviceScene(e, pad) }
        var s: Scene
        // While enrolling, the screen takes input whatever the session's state.
        let shown = enrollment == nil ? session : Session()
        switch pads {
        case .pattern(let p), .both(let p, _, .pattern):
            s = builder.pattern(p, session: shown)
        case .code(let pad), .both(_, let pad, _):
            if case .unlocked = shown.state, pad.state == .entering {
                s = Scene(size: builder.size, theme: builder.theme, prompt: "",
                          promptBox: PixelRect(x: 0, y: 0, width: builder.size.width, height: builder.size.height),
                          nodes: [], path: [], pathColor: builder.theme.path, tail: nil)
            } else {
                s = builder.code(pad, session: shown, prompt: "", at: now)
            }
        }
        s.prompt = prompt
        if let l = builder.layout?.info, s.boxes.count + s.nodes.count > 0 {
            s.info = Scene.Info(layout: l, text: info, logo: builder.logo)
        }
        if let r = toggleRect, enrollment == nil, s.boxes.count + s.nodes.count > 0 {
            let label = active == .pattern ? builder.messages.useCode : builder.messages.usePattern
            s.toggle = builder.toggle(label, at: r, session: shown)
            s.toggle?.pressed = fingers.switchPressed
        }
        return s
    }
    /// The service pad in place of the owner's: its boxes and keypad, the prompt, the
    /// information area and Cancel, in the service layout.
    private func serviceScene(_ e: ServiceEntry, _ pad: CodePad) -> Scene {
        var b = builder
        b.layout = e.layout
        var s = b.code(pad, session: session, prompt: "", at: now)
        s.prompt = prompt
        if let l = e.layout.info { s.info = Scene.Info(layout: l, text: info, logo: builder.logo) }
        s.toggle = b.toggle(builder.messages.cancel, at: e.cancelRect, session: session)
        s.toggle?.pressed = fingers.switchPressed
        return s
    }

    /// This lock screen (its session, pads and prompt) drawn in the layout of `view`, the
    /// same lock screen made for another output's size and density.
    public func scene(laidOutAs view: LockScreen) -> Scene {
        guard let v = relaid(as: view) else {
            Log.bug("lock screen: a view with other pads")
            return view.scene
        }
        return v.scene
    }

    /// This lock screen (its session, pads, prompt and information) in the layout of
    /// `view`; nil if `view` has other pads.
    public func relaid(as view: LockScreen) -> LockScreen? {
        var v = self
        v.builder = view.builder
        v.toggleRect = view.toggleRect
        v.serviceEntry = serviceEntry.flatMap { e in view.serviceEntry.map { e.relaid(as: $0) } }
        switch (pads, view.pads) {
        case (.pattern(let p), .pattern(let q)):
            v.pads = .pattern(p.relaid(on: q.grid))
        case (.code(let c), .code(let d)):
            v.pads = .code(c.relaid(on: d.layout))
        case (.both(let p, let c, let m), .both(let q, let d, _)):
            v.pads = .both(p.relaid(on: q.grid), c.relaid(on: d.layout), showing: m)
        case (.pattern, _), (.code, _), (.both, _):
            return nil
        }
        return v
    }

    /// The information area says `text` from now on: redrawn unless the screen is off
    /// (waking draws it) or nothing changed.
    public mutating func setInfo(_ text: InfoText) -> [Action] {
        guard text != info else { return [] }
        info = text
        return power.blanked ? [] : [.redraw]
    }

    /// A point on `view` (another output's layout of this lock screen) at the same place
    /// on this one: on the grid, a key, the boxes or the switch; elsewhere scaled.
    public func point(_ p: Point, from view: LockScreen) -> Point {
        func within(_ r: PixelRect, _ to: PixelRect) -> Point {
            let fx = r.width > 0 ? (p.x - Double(r.x)) / Double(r.width) : 0.5
            let fy = r.height > 0 ? (p.y - Double(r.y)) / Double(r.height) : 0.5
            return Point(x: Double(to.x) + fx * Double(to.width), y: Double(to.y) + fy * Double(to.height))
        }
        func inside(_ r: PixelRect) -> Bool {
            p.x >= Double(r.x) && p.y >= Double(r.y) && p.x < Double(r.x + r.width) && p.y < Double(r.y + r.height)
        }
        if let e = serviceEntry, let f = view.serviceEntry, e.isOpen {
            if inside(f.cancelRect) { return within(f.cancelRect, e.cancelRect) }
            if let c = e.layout.pad, let d = f.layout.pad {
                for (i, k) in d.keys.enumerated() where i < c.keys.count && inside(k) { return within(k, c.keys[i]) }
                if inside(d.boxArea) { return within(d.boxArea, c.boxArea) }
            }
            let from = PixelRect(x: 0, y: 0, width: view.builder.size.width, height: view.builder.size.height)
            return within(from, PixelRect(x: 0, y: 0, width: builder.size.width, height: builder.size.height))
        }
        if let a = view.toggleRect, let b = toggleRect, inside(a) { return within(a, b) }
        switch (pads, view.pads) {
        case (.code(let c), .code(let d)), (.both(_, let c, .code), .both(_, let d, _)):
            for (i, k) in d.layout.keys.enumerated() where i < c.layout.keys.count && inside(k) { return within(k, c.layout.keys[i]) }
            if inside(d.layout.boxArea) { return within(d.layout.boxArea, c.layout.boxArea) }
        case (.pattern(let g), .pattern(let h)), (.both(let g, _, .pattern), .both(let h, _, _)):
            return h.grid.map(p, to: g.grid)
        case (.pattern, _), (.code, _), (.both, _):
            break
        }
        let from = PixelRect(x: 0, y: 0, width: view.builder.size.width, height: view.builder.size.height)
        return within(from, PixelRect(x: 0, y: 0, width: builder.size.width, height: builder.size.height))
    }

    /// What the prompt says now.
    public var prompt: String {
        let idle = serviceEntry?.pad.map { $0.state == .entering } ?? pads.idle
        return promptText.text(Prompt.Screen(session: session, enrollment: enrollment, showing: showing,
                                             padIdle: idle, now: now), builder.messages)
    }

    /// Who has the display, as the cover's state says.
    public var hold: Hold {
        switch cover.state {
        case .covering(.lockScreen(let purpose)): .taking(purpose)
        case .covering(.startup), .covering(.retry), .covered, .notCovered: .held
        case .uncovering, .uncovered: .released
        }
    }

    /// Whether touches and keys are kept from other programs (`grabInput`): while locked,
    /// and while a secret is enrolled on the screen.
    public var holdsInput: Bool { !isUnlocked || enrollment != nil }

    /// Whether the display is ours from the start, with nothing to ask (before `begin`):
    /// else it is asked for at start (our VT, a compositor's session lock).
    public mutating func covers(coveredAtStart: Bool) {
        cover = Cover(coveredAtStart: coveredAtStart)
    }

    /// Whether touches and keys reach the gesture machines.
    private var takesInput: Bool { enrollment != nil || session.acceptsInput }

    private var isUnlocked: Bool {
        if case .unlocked = session.state { return true }
        return false
    }

    /// A redraw, while the screen is on; while it is off nothing is drawn (waking draws
    /// the whole scene).
    private var redraw: [Action] { power.lit ? [.redraw] : [] }

    // MARK: events

    /// The screen is first shown at `now`: the input is taken and the prompt starts (the
    /// code pad's cursor starts blinking from here).
    public mutating func begin(at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        let prompt = active == .code ? apply(pads.onCode { $0.reset(at: now) }, at: now) : [.redraw]
        return [.grabInput] + prompt + apply(power.shownLocked(at: now), at: now)
    }

    /// Instead of `begin`, when the daemon before this one was unlocked and had handed the
    /// display over (its runtime record says so) and no failure is on record: the screen
    /// starts handed over, the input not taken, the idle lock armed. Nil (and nothing
    /// changed) when the session cannot resume unlocked: then `begin` locks as usual.
    public mutating func beginHandedOver(unlockedBy method: UnlockMethod, since unlockedAt: Instant,
                                         at now: Instant) -> [Action]? {
        self.now = max(self.now, now)
        guard enrollment == nil, session.resumeUnlocked(method, at: unlockedAt) else { return nil }
        cover = Cover(coveredAtStart: cover.coveredAtStart, uncovered: true)
        return [.redraw] + coverActions(cover.start(), for: nil, at: now) + apply(power.handedOver(at: now), at: now)
    }

    /// Resumes a session restored from storage: arms the lockout deadline and countdown.
    public mutating func resume(at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        guard let until = session.lockedOutUntil else { return [] }
        return [.notify(.lockout(until: until)), .armTimer(until), .redraw] + countdownTick()
    }

    public mutating func touches(_ touches: [ScreenTouch], at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        // A stale contact is gone for the screen until it lifts: its jitter wakes nothing.
        let touches = fingers.admit(touches)
        if touches.isEmpty { return [] }
        power.activity(at: now)
        var out = apply(fingers.rested(at: now), at: now)
        out += passTouches(touches, at: now)
        out += apply(fingers.timer(at: now), at: now)
        return out
    }

    private mutating func passTouches(_ touches: [ScreenTouch], at now: Instant) -> [Action] {
        if power.blanked {
            // The touch that wakes the screen is not input.
            fingers.woke(by: touches)
            return wake(at: now)
        }
        var out: [Action] = []
        // A touch retries a record that could not be stored.
        if enrollment == nil, case .storeFailed = session.state, touches.contains(where: { $0.phase == .began }) {
            out += sessionActions(session.retryStore(at: now), at: now)
        }
        let screen: Fingers.Screen
        if let pad = serviceEntry?.pad, let e = serviceEntry {
            // Cancel is where the switch is.
            screen = Fingers.Screen(takesInput: takesInput, toggle: e.cancelRect, switchable: pad.state == .entering,
                                    driverHasDrawn: false)
        } else {
            screen = Fingers.Screen(takesInput: takesInput, toggle: toggleRect,
                                    switchable: enrollment == nil && pads.idle, driverHasDrawn: pads.drawn)
        }
        return out + apply(fingers.touches(touches, on: screen, at: now), at: now)
    }

    /// A key of the code pad typed on a hardware keypad. It shows the code pad when both
    /// methods are offered.
    public mutating func key(_ k: CodePad.Key, at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        if serviceEntry?.isOpen == true {
            guard takesInput, var e = serviceEntry else { return [] }
            promptText.clear()
            let a = e.key(k, at: now)
            serviceEntry = e
            return apply(a, at: now)
        }
        guard code != nil, takesInput else { return [] }
        var out: [Action] = []
        if active == .pattern {
            guard enrollment == nil, pattern?.state == .idle else { return [] }
            out += switchMethod(at: now)
        }
        promptText.clear()
        return out + apply(pads.onCode { $0.key(k, at: now) }, at: now)
    }

    private mutating func switchMethod(at now: Instant) -> [Action] {
        promptText.clear()
        return apply(pads.switchMethod(at: now), at: now) + [.redraw]
    }

    /// A key from a hardware keypad or keyboard: digits, backspace and enter work the
    /// code pad as its own keys do; escape clears what was typed.
    public mutating func hardwareKey(_ key: KeyInput, at now: Instant) -> [Action] {
        power.activity(at: now)
        if power.blanked {
            self.now = max(self.now, now)
            return wake(at: now)  // the key wakes the screen and types nothing
        }
        switch key {
        case .digit(let d): return self.key(CodePad.Key.digit(d), at: now)
        case .backspace: return self.key(CodePad.Key.delete, at: now)
        case .enter: return self.key(CodePad.Key.ok, at: now)
        case .escape:
            self.now = max(self.now, now)
            if let pad = serviceEntry?.pad {
                // Back to the owner's screen, unless a code typed there is being checked.
                guard pad.state != .submitted else { return [] }
                return closeServiceEntry(at: now)
            }
            guard active == .code, takesInput else { return [] }
            return apply(pads.onCode { $0.reset(at: now) }, at: now) + [.redraw]
        }
    }

    public mutating func verified(_ match: Bool, at now: Instant) -> [Action] {
        verified(match ? .match(duress: false) : .wrong(digest: nil), at: now)
    }

    /// The verdict on the attempt asked for by `verify`.
    public mutating func verified(_ verdict: Session.Verdict, at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        return sessionActions(session.verified(verdict, at: now), at: now)
    }

    /// The record asked for by `store` is on disk (`error` nil), or could not be stored.
    public mutating func stored(error: String?, at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        return sessionActions(session.stored(error: error, at: now), at: now)
    }

    private mutating func sessionActions(_ actions: [Session.Action], at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in actions {
            switch a {
            case .store(let r): out.append(.store(r))
            case .unlocked(let m, let t, let duress):
                out += verdict(m, accepted: true, at: now)
                if duress { out.append(.notify(.duress(method: m, at: t))) }
                out.append(.notify(.unlocked(method: m, at: t)))
                // The kiosk app gets the touches at once; the display once the screen
                // shows nothing of the secret (after the accept hold).
                out.append(.releaseInput)
                out.append(.armTimer(now + acceptHold))
            case .failed(let m, let failures, let retry):
                out += verdict(m, accepted: false, at: now)
                out.append(.notify(.failed(method: m, failures: failures, retryAfter: retry)))
            case .storeFailed(let m, let reason):
                // Not counted, so never checked: the attempt is dropped.
                waiting = []
                out += verdict(m, accepted: false, at: now)
                out.append(.notify(.storeFailed(method: m, reason: reason)))
            case .lockout(let until):
                out.append(.notify(.lockout(until: until)))
            case .armTimer(let t): out.append(.armTimer(t))
            case .stateChanged: out += redraw
            case .verify(let m):
                if let a = waiting.first, a.method == m {
                    out.append(.verify(a))
                } else {
                    Log.bug("lock screen: session asked to verify a \(m.rawValue) and none is waiting")
                }
                waiting = []
            }
        }
        out += countdownTick()
        return out
    }

    /// Tells the machine of `m` the verdict on its submitted attempt. A verdict for an
    /// attempt no longer on screen (a failure stored after a retry) changes nothing.
    private mutating func verdict(_ m: UnlockMethod, accepted: Bool, at now: Instant) -> [Action] {
        if m == .service, var e = serviceEntry, e.submitted {
            let a = e.verdict(accepted: accepted, at: now, errorHold: session.errorHold)
            serviceEntry = e
            return apply(a, at: now)
        }
        // A service code typed on the owner's code pad: that pad has the verdict.
        if m == .service, pads.submitted(.code) { return verdict(.code, accepted: accepted, at: now) }
        guard pads.submitted(m) else { return [] }
        return apply(pads.verdict(m, accepted: accepted, at: now, errorHold: session.errorHold), at: now)
    }

    /// During a lockout the countdown changes every second: wake at the next whole second
    /// (while the screen is on: off, only the lockout's end wakes it). An untrusted record's
    /// lockout has no countdown.
    private func countdownTick() -> [Action] {
        guard power.lit, promptText.recordFault != .untrusted, case .lockout(let until) = session.state, now < until else {
            return []
        }
        let left = (until - now).microseconds
        let step = left % 1_000_000 == 0 ? 1_000_000 : left % 1_000_000
        return [.armTimer(now + Interval(microseconds: step))]
    }

    /// The timer reached `now`. Whether the screen goes off is settled first: from then
    /// on nothing is redrawn, and nothing but the session's deadline is armed.
    public mutating func timer(at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        let blank = power.blankTimer(at: now, shownLocked: hold == .held && enrollment == nil && !isUnlocked)
        var out = apply(fingers.rested(at: now), at: now)
        if power.lit { out += apply(fingers.timer(at: now), at: now) }
        let wasLockout: Bool
        if case .lockout = session.state { wasLockout = true } else { wasLockout = false }
        for a in session.timerFired(at: now) {
            switch a {
            case .armTimer(let t): out.append(.armTimer(t))
            case .stateChanged: out += redraw
            case .verify, .store, .unlocked, .failed, .storeFailed, .lockout:
                Log.bug("lock screen: session action \(a) on a timer")
            }
        }
        if wasLockout {
            if session.lockedOutUntil == nil { promptText.recordFault = nil }
            out += redraw
            out += countdownTick()
        }
        out += serviceTimer(at: now)
        if case .unlocked(_, let at) = session.state, now >= at + acceptHold {
            if serviceEntry?.isOpen == true { out += closeServiceEntry(at: now) }
            if case .accepted = pattern?.state { out += apply(pads.onPattern { $0.reset() }, at: now) }
            if code?.state == .accepted {
                // Nothing of the code stays on screen; nothing blinks, nothing is announced.
                out += apply(pads.onCode { $0.clear(at: now) }, at: now)
            }
            if hold == .held, enrollment == nil {
                // The screen is cleared: hand it over.
                out += handOver(at: now)
            }
        }
        out += apply(blank, at: now)
        if power.blanked, serviceEntry?.isOpen == true, serviceEntry?.submitted == false {
            // The screen went off: it wakes on the owner's screen.
            out += closeServiceEntry(at: now)
        }
        out += apply(power.idleTimer(at: now, handedOver: hold == .released && isUnlocked), at: now)
        // Only the pad on screen animates, and only while it takes input and the screen is
        // on: a hidden pad, one waiting out a lockout, or a dark screen has no cursor and
        // needs no wake-ups.
        let serviceOpen = serviceEntry?.isOpen == true
        out += apply(pads.timerFired(at: now, codeWakes: !serviceOpen && active == .code && takesInput && power.lit), at: now)
        if wasLockout, enrollment == nil, !serviceOpen, active == .code, session.acceptsInput {
            // The lockout is over: the cursor blinks again from now (or from waking).
            out += apply(pads.onCode { $0.reset(at: now, wakes: power.lit) }, at: now)
        }
        return out
    }

    /// The screen comes back on: the countdown and the cursor go on from now.
    private mutating func wake(at now: Instant) -> [Action] {
        var out = apply(power.wake(at: now), at: now)
        out.append(.redraw)
        out += countdownTick()
        if serviceEntry?.isOpen == true {
            out += serviceTimer(at: now)
        } else if active == .code && takesInput {
            out += apply(pads.onCode { $0.timerFired(at: now) }, at: now)
        }
        return out
    }

    // MARK: the display and the input

    /// A client asked to lock the device again. After a hand-over the display is asked
    /// back first; the screen locks once it is taken (`displayTaken`).
    public mutating func lock(at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        switch hold {
        case .held:
            return lockNow(at: now)
        case .released:
            return coverActions(cover.coverAsked(for: .lock), for: .lock, at: now)
        case .taking(.lock):
            return []
        case .taking(.enroll(let m)):
            // The enrollment waiting for the display gives way to the lock.
            cover.coverRetargeted(to: .lock)
            return [.notify(.enrollFailed(method: m, reason: "cancelled by a lock request"))]
        }
    }

    private mutating func lockNow(at now: Instant) -> [Action] {
        guard case .unlocked = session.state else {
            // Already locked: only an enrollment under way is cancelled.
            return cancelEnrollment(reason: "cancelled by a lock request", at: now)
        }
        _ = session.lock()
        _ = serviceEntry?.close()
        var out = cancelEnrollment(reason: "cancelled by a lock request", at: now)
        out += apply(pads.reset(at: now, codeWakes: true), at: now)
        out += [.grabInput, .redraw, .notify(.locked)]
        return out + apply(power.shownLocked(at: now), at: now)
    }

    /// What the cover's executor reports (a way of covering), and the requests that
    /// reach the cover from outside (a client's `lock`, an enrollment asked for): the
    /// cover's answers to the lock screen are carried out here, the rest returned as
    /// `.cover` actions for the executor.
    public mutating func cover(_ event: Cover.Event, at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        // The purpose the cover was asked for, before it settles.
        let purpose: Purpose? = if case .taking(let p) = hold { p } else { nil }
        return coverActions(cover.handle(event), for: purpose, at: now)
    }

    private mutating func coverActions(_ actions: [Cover.Action], for purpose: Purpose?, at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in actions {
            switch a {
            case .displayTaken:
                out += displayTaken(purpose, at: now)
            case .displayRefused(let why):
                out += displayRefused(purpose, why, at: now)
            case .lock:
                out += lock(at: now)
            case .ask, .answerLockRequests, .handedOver:
                out.append(.cover(a))
            }
        }
        return out
    }

    /// The display asked back is ours again (it is drawn whole).
    private mutating func displayTaken(_ purpose: Purpose?, at now: Instant) -> [Action] {
        guard let purpose else {
            Log.bug("lock screen: display taken while \(hold)")
            return []
        }
        switch purpose {
        case .lock:
            return lockNow(at: now)
        case .enroll(let method):
            return startEnrollment(method, at: now)
        }
    }

    /// The display could not be taken back (another program holds it): the device stays
    /// as it was, handed over.
    private mutating func displayRefused(_ purpose: Purpose?, _ reason: String, at now: Instant) -> [Action] {
        guard let purpose else {
            Log.bug("lock screen: display refused while \(hold)")
            return []
        }
        switch purpose {
        case .lock:
            return []
        case .enroll(let method):
            return [.notify(.enrollFailed(method: method, reason: "the display is busy: \(reason)"))]
        }
    }

    /// The display goes to the kiosk app; the idle time counts from here.
    private mutating func handOver(at now: Instant) -> [Action] {
        coverActions(cover.uncoverAsked(), for: nil, at: now) + apply(power.handedOver(at: now), at: now)
    }

    /// Root cleared the lockout on purpose (`touchlockctl lockout --reset`): no failures,
    /// input taken again. Refused while an attempt is being checked or stored.
    public mutating func resetLockout(at now: Instant) throws(EnrollRefusal) -> [Action] {
        self.now = max(self.now, now)
        guard session.resetLockout() else { throw .busy(session.state.name) }
        promptText.recordFault = nil
        var out: [Action] = [.redraw]
        if enrollment == nil, active == .code, session.acceptsInput {
            out += apply(pads.onCode { $0.reset(at: now) }, at: now)
        }
        return out
    }

    // MARK: what the parts ask for

    private mutating func apply(_ actions: [Fingers.Action], at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in actions {
            switch a {
            case .redrawSwitch:
                out.append(.redraw)
            case .switchReleased:
                if let pad = serviceEntry?.pad {
                    if pad.state == .entering { out += closeServiceEntry(at: now) }
                } else if pads.idle && takesInput {
                    out += switchMethod(at: now)
                }
            case .gaveWay(let id, let p):
                // Lifted where it is on the grid (it chose nothing), off the keys on the pad.
                let at = active == .pattern && serviceEntry?.isOpen != true ? p : Point(x: -1, y: -1)
                out += pass([ScreenTouch(id: id, phase: .ended, point: at)], at: now)
            case .rested(let id):
                // Lifted where nothing is chosen or pressed: a pattern it started is
                // dropped, not submitted.
                if case .drawing(let touch, _, _)? = pattern?.state, touch == id, active == .pattern, serviceEntry?.isOpen != true {
                    out += apply(pads.onPattern { $0.reset() }, at: now)
                }
                out += pass([ScreenTouch(id: id, phase: .ended, point: Point(x: -1, y: -1))], at: now)
            case .pass(let touches):
                if touches.contains(where: { $0.phase == .began }), promptText.clear() { out.append(.redraw) }
                out += pass(touches, at: now)
            case .armTimer(let t):
                out.append(.armTimer(t))
            }
        }
        return out
    }

    /// Touches for the pad on screen: the service pad while it is open; else the owner's,
    /// watched for the long press that opens the service pad.
    private mutating func pass(_ touches: [ScreenTouch], at now: Instant) -> [Action] {
        guard var e = serviceEntry else { return apply(pads.handle(touches, at: now), at: now) }
        if e.isOpen {
            let a = e.handle(touches, at: now)
            serviceEntry = e
            return apply(a, at: now)
        }
        // Whether a press may begin, as the screen was before these touches.
        let eligible = serviceEntryTakes && pads.idle && (code?.entered ?? 0) == 0
        let band = serviceBand
        var out = apply(pads.handle(touches, at: now), at: now)
        var watched = e.watch(touches, band: band, eligible: eligible, fingers: fingers.downCount, at: now)
        if pads.drawn || !serviceEntryTakes {
            e.cancelPress("the owner's pad is used")
            watched = []
        }
        serviceEntry = e
        out += apply(watched, at: now)
        return out
    }

    /// Whether the service pad may be opened now: locked and taking input, nothing
    /// enrolled, the screen ours and on.
    private var serviceEntryTakes: Bool {
        enrollment == nil && session.acceptsInput && hold == .held && power.lit
    }

    /// Where the long press that opens the service pad is taken: the prompt of the pad on
    /// screen and the information area (the clock) above it.
    public var serviceBand: [PixelRect] {
        guard let l = builder.layout else { return [] }
        var band: [PixelRect] = []
        if let i = l.info { band.append(i.area) }
        switch active {
        case .pattern: band.append(l.patternPrompt)
        case .code: if let p = l.pad { band.append(p.promptBox) }
        case .service: break
        }
        return band.filter { $0.width > 0 && $0.height > 0 }
    }

    /// The service entry's timer: the press held, the pad untouched, its cursor.
    private mutating func serviceTimer(at now: Instant) -> [Action] {
        guard var e = serviceEntry else { return [] }
        if case .pressing = e.state, !serviceEntryTakes || pads.drawn {
            e.cancelPress("input not taken")
            serviceEntry = e
            return []
        }
        let a = e.timerFired(at: now, wakes: takesInput && power.lit)
        serviceEntry = e
        return apply(a, at: now)
    }

    /// Back to the owner's screen from the service pad.
    private mutating func closeServiceEntry(at now: Instant) -> [Action] {
        guard var e = serviceEntry else { return [] }
        let a = e.close()
        serviceEntry = e
        return apply(a, at: now)
    }

    private mutating func apply(_ actions: [ServiceEntry.Action], at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in actions {
            switch a {
            case .opened:
                // The owner's pads start over, hidden: nothing of them blinks or is drawn.
                promptText.clear()
                out += apply(pads.reset(at: now, codeWakes: false), at: now)
                out += redraw
            case .closed:
                promptText.clear()
                out += apply(pads.reset(at: now, codeWakes: active == .code && takesInput && power.lit), at: now)
                out += redraw
            case .armTimer(let t), .pad(.armTimer(let t)):
                out.append(.armTimer(t))
            case .pad(.redraw):
                out += redraw
            case .pad(.progress(let e, let n)):
                out.append(.notify(.progress(entered: e, total: n)))
            case .pad(.incomplete(_, let n)):
                promptText.show(Messages.fill(builder.messages.codeIncomplete, ["n": n]))
                out += redraw
            case .pad(.submit(let c)):
                // Checked only as a service code: the owner's secret is never taken here.
                Log.info("lock screen: a service code of \(c.digits.count) digits typed on the service pad")
                out += submit(.service(c.digits.map { UInt8(ascii: "0") &+ $0 }), at: now)
            }
        }
        return out
    }

    private mutating func apply(_ actions: [Power.Action], at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in actions {
            switch a {
            case .blank: out += [.wentIdle, .blankDisplay]
            case .wake: out.append(.wakeDisplay)
            case .lock: out += [.wentIdle] + lock(at: now)
            case .armTimer(let t): out.append(.armTimer(t))
            }
        }
        return out
    }

    private mutating func apply(_ actions: [Pads.Action], at now: Instant) -> [Action] {
        var out: [Action] = []
        for a in actions {
            switch a {
            case .pattern(.redraw), .code(.redraw): out += redraw
            case .pattern(.armTimer(let t)), .code(.armTimer(let t)): out.append(.armTimer(t))
            case .pattern(.tooShort(let n, let minimum)):
                promptText.show(Messages.fill(builder.messages.tooShort, ["min": minimum, "n": n]))
                out += redraw
            case .code(.incomplete(_, let n)):
                promptText.show(Messages.fill(builder.messages.codeIncomplete, ["n": n]))
                out += redraw
            case .code(.progress(let e, let n)):
                // Subscribers follow unlock attempts, not a new secret being typed.
                if enrollment == nil { out.append(.notify(.progress(entered: e, total: n))) }
            case .pattern(.submit(let p)):
                if enrollment != nil {
                    var bytes = p.secretBytes
                    out += enrollAttempt(.pattern, &bytes, at: now)
                } else {
                    out += submit(.pattern(p), at: now)
                }
            case .code(.submit(let c)):
                if enrollment != nil {
                    var bytes = c.secretBytes
                    out += enrollAttempt(.code, &bytes, at: now)
                } else {
                    out += submit(.code(c), at: now)
                }
            }
        }
        return out
    }

    /// An attempt for the session: it waits here while its count is stored (a persistent
    /// session counts it first), then goes out with `verify`.
    private mutating func submit(_ attempt: Attempt, at now: Instant) -> [Action] {
        waiting = [attempt]
        return sessionActions(session.submit(attempt.method, at: now), at: now)
    }

    /// Why a service code is not taken now.
    public enum ServiceRefusal: Error, Hashable, Sendable {
        /// No attempt is allowed before the wait is over.
        case lockedOut(Interval)
        /// Unlocked already: nothing to unlock, nothing checked or counted.
        case unlocked
        /// An attempt is being counted, checked or shown as wrong, a store failed, or
        /// a secret is being enrolled on the screen.
        case busy(String)
    }

    /// A one-time service code given through the control socket: an attempt of its own
    /// method (`service`) whatever pad is on the screen, counted before it is checked as
    /// every attempt is.
    public mutating func serviceCode(_ digits: [UInt8], at now: Instant) throws(ServiceRefusal) -> [Action] {
        self.now = max(self.now, now)
        if enrollment != nil { throw .busy("an enrollment is under way") }
        switch session.state {
        case .locked:
            return submit(.service(digits), at: now)
        case .lockout(let until):
            throw .lockedOut(until - now)
        case .unlocked:
            throw .unlocked
        case .verifying, .storing, .wrong, .storeFailed:
            throw .busy(session.state.name)
        }
    }

    // MARK: enrollment

    /// Shows the enrollment screen of `method`: the new secret is drawn (or typed) twice.
    /// Allowed while unlocked, or while locked when no secret exists for `method`
    /// (`hasSecret`, which the owner knows). After a hand-over the display is asked back
    /// first (the cover's `coverAsked`); the enrollment starts once it is taken.
    public mutating func beginEnrollment(_ method: UnlockMethod, hasSecret: Bool,
                                         at now: Instant) throws(EnrollRefusal) -> [Action] {
        self.now = max(self.now, now)
        if enrollment != nil { throw .enrolling }
        if let refusal = Enrollment.refusal(method, offered: pads.offers(method), session: session.state,
                                            hasSecret: hasSecret) {
            throw refusal
        }
        switch hold {
        case .held:
            return startEnrollment(method, at: now)
        case .released:
            return coverActions(cover.coverAsked(for: .enroll(method)), for: .enroll(method), at: now)
        case .taking:
            throw .busy("taking the display back")
        }
    }

    private mutating func startEnrollment(_ method: UnlockMethod, at now: Instant) -> [Action] {
        serviceEntry?.cancelPress("an enrollment")
        _ = serviceEntry?.close()
        enrollment = Enrollment(method: method, returnTo: active)
        promptText.clear()
        Log.info("lock screen: enrolling a \(method.rawValue)")
        var out: [Action] = []
        if case .unlocked = session.state { out.append(.grabInput) }
        out += apply(pads.reset(at: now, codeWakes: method == .code), at: now)
        pads.show(method)
        return out + [.redraw]
    }

    /// Ends an enrollment under way without a new secret (nothing when none is).
    public mutating func cancelEnrollment(reason: String, at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        guard let method = enrollment?.method else { return [] }
        Log.info("lock screen: enrollment of a \(method.rawValue) cancelled: \(reason)")
        return endEnrollment(at: now) + [.notify(.enrollFailed(method: method, reason: reason))]
    }

    /// The secret handed over by `enroll` is stored (`error` nil), or could not be.
    public mutating func enrollStored(_ method: UnlockMethod, error: String?, at now: Instant) -> [Action] {
        self.now = max(self.now, now)
        if let error { return [.notify(.enrollFailed(method: method, reason: error))] }
        return [.notify(.enrolled(method: method))]
    }

    /// Back to the screen shown before; the kept attempt is wiped. While unlocked, the
    /// display and the input are handed over again.
    private mutating func endEnrollment(at now: Instant) -> [Action] {
        // Wiped in place: a copy of the enrollment would keep the first attempt.
        enrollment?.restart()
        guard let back = enrollment?.returnTo else { return [] }
        enrollment = nil
        promptText.clear()
        pads.show(back)
        // The pad starts a new prompt; it blinks only if it is shown and takes input.
        var out = apply(pads.reset(at: now, codeWakes: active == .code && session.acceptsInput), at: now)
        out.append(.redraw)
        if case .unlocked = session.state, hold == .held {
            out.append(.releaseInput)
            out += handOver(at: now)
        }
        return out
    }

    /// An attempt made while enrolling (`secret` is wiped or handed over): the first is
    /// kept, the second compared with it.
    private mutating func enrollAttempt(_ method: UnlockMethod, _ secret: inout [UInt8], at now: Instant) -> [Action] {
        // Worked on in place: a copy of the enrollment would keep the first attempt from
        // being wiped.
        guard enrollment?.method == method, let outcome = enrollment?.attempt(&secret) else {
            Log.bug("lock screen: a \(method.rawValue) attempt while enrolling \(enrollment?.method.rawValue ?? "nothing")")
            Enrollment.wipe(&secret)
            return []
        }
        switch outcome {
        case .kept:
            promptText.clear()
            return apply(pads.reset(method, at: now), at: now) + [.redraw]
        case .confirmed(let bytes):
            // Stored first; the hand-over (if unlocked) follows the screen's return.
            return [.enroll(method, bytes)] + endEnrollment(at: now)
        case .differ:
            promptText.show(builder.messages.enrollMismatch)
            return apply(pads.verdict(method, accepted: false, at: now, errorHold: session.errorHold), at: now)
        }
    }
}
