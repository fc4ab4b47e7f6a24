/// Whether the lock screen covers the screen, and what is under way to cover or uncover
/// it: the one place the daemon keeps that state. The lock screen (`LockScreen`) holds it
/// as a part, asks it to cover (`coverAsked`) and to uncover (`uncoverAsked`) and is told
/// `displayTaken` or `displayRefused`; `lock` requests wait here for their answer. It
/// speaks neither VT nor DRM: it asks a way of covering (`Request`: cover, uncover, let
/// go) and is told what came of it (`Report`: covered, refused, uncovered, lost,
/// available), whichever way that is (the VT hand-off, whose own steps are
/// `TerminalCover`'s; a compositor's session lock). Status's `display`, `display_reason`
/// and `lock_pending` come from it, and the lock screen's `hold` is read off it. The
/// diagram in docs/state-machines.md changes with it.
///
///                  start                        covered
///     (start) -------------> covering(startup) ---------> covered
///        |  start (ours from   ^   | refused: notCovered(why) at start,   |
///        |  the start) -------/    |  uncovered (a lock kept pending)     | uncoverAsked
///        |                         |                                      v
///        | start (unlocked before) |                                  uncovering
///        +-----------------> uncovered <--------- uncovered -------------+
///                                |
///                                +-- coverAsked --> covering
///
/// `available` (the way of covering can cover again unasked: our VT shown late, after a
/// refusal) carries out the lock kept pending, tries again while locked, or else gives
/// the screen straight back.
public struct Cover: Sendable {
    /// What a cover under way is for.
    public enum Purpose: Hashable, Sendable {
        /// The first frame, at start.
        case startup
        /// The lock screen asked for the display: to lock, or to enroll a secret on it.
        case lockScreen(LockScreen.Purpose)
        /// Locked, but the display was never taken: tried again (a `lock` request, the
        /// display available late).
        case retry
    }

    public enum State: Hashable, Sendable, CustomStringConvertible {
        /// A cover asked for and not yet reported.
        case covering(Purpose)
        /// The lock screen is on the display (an output may still be lost: `OutputState`).
        case covered
        /// Locked, but the display could not be taken, for this reason.
        case notCovered(String)
        /// After an unlock: the screen is being given back.
        case uncovering
        /// The kiosk app has the screen.
        case uncovered

        public var description: String {
            switch self {
            case .covering(let p): "covering(\(p))"
            case .covered: "covered"
            case .notCovered(let why): "not covered (\(why))"
            case .uncovering: "uncovering"
            case .uncovered: "uncovered"
            }
        }
    }

    public enum Action: Hashable, Sendable {
        /// Ask the way of covering; what comes of it is reported (`Event.reported`).
        case ask(Request)
        /// Tell the lock screen its `coverAsked` was carried out, or refused.
        case displayTaken
        case displayRefused(String)
        /// Carry out the lock kept pending (the lock screen's `lock`).
        case lock
        /// Answer the `lock` requests waiting: with this refusal, or with the state.
        case answerLockRequests(refusal: String?)
        /// Tell subscribers the screen is the kiosk's again.
        case handedOver
    }

    /// What the cover asks of whatever covers the screen: the contract every way of
    /// covering carries out (the VT hand-off, a compositor's session lock, any other), in
    /// words of neither VT nor DRM.
    public enum Request: Hashable, Sendable {
        /// Cover the screen: the lock screen on every output, drawn whole, nothing else
        /// shown or fed; `covered` or `refused(why)` follows.
        case cover
        /// Give the screen back once each output's frame clearing it is shown; `uncovered`
        /// follows.
        case uncover
        /// Never covered (a start handed over): whatever opening the display gave is let go
        /// at once, nothing shown; nothing follows.
        case letGo
    }

    /// What comes back from a way of covering, on a later turn of the loop than the
    /// request it answers.
    public enum Report: Hashable, Sendable {
        case covered
        case refused(String)
        case uncovered
        /// The cover ended unasked (the compositor ended its session lock, or went away),
        /// for this reason.
        case lost(String)
        /// The screen can be covered now though no cover is under way: what refused it
        /// before let go late (the owner of the VT on screen let ours be shown after all).
        case available
    }

    /// What a daemon stopping now leaves behind (`exit`).
    public enum Exit: Hashable, Sendable {
        /// The lock screen stays until the daemon after this one takes it over: VT
        /// switching stays locked (the kernel keeps it after the process), and the card,
        /// with DRM master and the last frame, stays in systemd's descriptor store.
        case stayCovered
        /// The screen goes back to the kiosk: the card closed and taken out of the store,
        /// VT switching unlocked.
        case giveBack
        /// The system is shutting down while locked: no daemon follows, and the shutdown's
        /// splash (plymouth) must be able to take the screen. Our VT stays shown with
        /// nothing of the kiosk put back, but VT switching is unlocked and the card closed.
        case release
    }

    /// What reaches the cover from outside the lock screen: one case per method below,
    /// for the lock screen to pass on.
    public enum Event: Hashable, Sendable {
        case start
        /// What a way of covering reported.
        case reported(Report)
        case lockRequested
        case enrollmentRequested
        case settle
    }

    /// The display is ours from the start, with nothing to ask (no VT to switch to, no
    /// compositor): headless, `--vt none`.
    public let coveredAtStart: Bool
    public private(set) var state: State
    /// A lock (or the idle lock) was refused because the display could not be taken: it is
    /// carried out once the display is available after all, or at the next `lock` request.
    public private(set) var lockPending = false
    /// Why the last cover failed, while a request that asked for it is answered.
    public private(set) var refusal: String?
    /// Why the lock screen is not on the display, since the last cover failed.
    public private(set) var failure: String?
    private var waitingReplies = 0

    /// `uncovered`: the daemon before this one was unlocked (the kiosk keeps the screen).
    public init(coveredAtStart: Bool = false, uncovered: Bool = false) {
        self.coveredAtStart = coveredAtStart
        state = uncovered ? .uncovered : .covering(.startup)
    }

    /// Carries out `event` by its method.
    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start: return start()
        case .reported(.covered): return covered()
        case .reported(.refused(let why)): return refused(why)
        case .reported(.uncovered): return uncovered()
        case .reported(.lost(let why)): return lost(why)
        case .reported(.available): return available()
        case .lockRequested: return lockRequested()
        case .enrollmentRequested:
            enrollmentRequested()
            return []
        case .settle: return settle()
        }
    }

    /// The first frame is drawn: the screen is asked for, unless it is ours from the
    /// start. Started handed over (unlocked before this start): whatever opening the
    /// display gave is let go, so a daemon that does not cover holds no DRM master (the
    /// kiosk's compositor, started later, must be able to take the card).
    public mutating func start() -> [Action] {
        if case .uncovered = state { return [.ask(.letGo)] }
        guard case .covering(.startup) = state else {
            Log.bug("cover: started while \(state)")
            return []
        }
        if coveredAtStart {
            transition(to: .covered, "start, the display ours")
            return []
        }
        return [.ask(.cover)]
    }

    /// The lock screen asks for the display, for `purpose`. A hand-over still under way is
    /// called off by the way of covering.
    public mutating func coverAsked(for purpose: LockScreen.Purpose) -> [Action] {
        transition(to: .covering(.lockScreen(purpose)), "cover asked")
        return [.ask(.cover)]
    }

    /// A cover under way for the lock screen is now for `purpose` (a lock overtaking an
    /// enrollment that waits for the display).
    public mutating func coverRetargeted(to purpose: LockScreen.Purpose) {
        guard case .covering(.lockScreen) = state else {
            Log.bug("cover: retargeted to \(purpose) while \(state)")
            return
        }
        transition(to: .covering(.lockScreen(purpose)), "retargeted")
    }

    /// The lock screen hands the display over (after an unlock).
    public mutating func uncoverAsked() -> [Action] {
        switch state {
        case .covered, .notCovered, .covering:
            transition(to: .uncovering, "uncover asked")
            return [.ask(.uncover)]
        case .uncovering, .uncovered:
            Log.bug("cover: uncover asked while \(state)")
            return []
        }
    }

    /// The way of covering covered the screen (drawn whole).
    public mutating func covered() -> [Action] {
        guard case .covering(let purpose) = state else {
            Log.bug("cover: covered while \(state)")
            return []
        }
        transition(to: .covered, "covered")
        failure = nil
        var out: [Action] = []
        if case .lockScreen = purpose { out.append(.displayTaken) }
        return out + answer()
    }

    /// The way of covering could not cover the screen (`why`).
    public mutating func refused(_ why: String) -> [Action] {
        guard case .covering(let purpose) = state else {
            Log.info("cover: refused while \(state): \(why)")
            return []
        }
        failure = why
        refusal = why
        var out: [Action] = []
        switch purpose {
        case .lockScreen(let p):
            // The device stays as it was, handed over; a lock is kept for later.
            if p == .lock { lockPending = true }
            transition(to: .uncovered, "refused")
            out.append(.displayRefused(why))
        case .startup, .retry:
            transition(to: .notCovered(why), "refused")
        }
        return out + answer()
    }

    /// The screen is the kiosk's again.
    public mutating func uncovered() -> [Action] {
        guard case .uncovering = state else {
            Log.info("cover: uncovered while \(state)")
            return []
        }
        transition(to: .uncovered, "uncovered")
        return [.handedOver]
    }

    /// The screen can be covered now, unasked (our VT shown late, after a refusal):
    /// locked, it is covered (tried again); after a refused lock, that lock is carried
    /// out; else the screen goes straight back.
    public mutating func available() -> [Action] {
        switch state {
        case .covering:
            Log.info("cover: available while \(state)")
            return []
        case .covered, .notCovered:
            transition(to: .covering(.retry), "available")
            return [.ask(.cover)]
        case .uncovered:
            if lockPending {
                Log.info("cover: the display is available after all: the refused lock is carried out")
                lockPending = false
                return [.lock]
            }
            transition(to: .uncovering, "available unasked")
            return [.ask(.uncover)]
        case .uncovering:
            return []
        }
    }

    /// A client asked to lock. Locked but never shown: the display is asked for again.
    /// The lock screen's `lock` follows; `settle` then answers it if nothing is under way.
    public mutating func lockRequested() -> [Action] {
        if waitingReplies == 0 { refusal = nil }
        waitingReplies += 1
        lockPending = false
        if case .notCovered = state {
            transition(to: .covering(.retry), "lock requested")
            return [.ask(.cover)]
        }
        return []
    }

    /// The cover ended unasked (`why`): locked, the lock screen is no longer on the display
    /// (status says why) until a `lock` request takes it again; after an unlock, nothing
    /// changes. A cover under way counts it as refused.
    public mutating func lost(_ why: String) -> [Action] {
        switch state {
        case .covering:
            return refused(why)
        case .covered:
            failure = why
            transition(to: .notCovered(why), "lost")
            return []
        case .notCovered, .uncovering, .uncovered:
            Log.info("cover: lost while \(state): \(why)")
            return []
        }
    }

    /// An enrollment on the screen is asked for: a refusal it meets is its own.
    public mutating func enrollmentRequested() {
        refusal = nil
    }

    /// Answers the waiting `lock` requests if no cover is under way.
    public mutating func settle() -> [Action] {
        answer()
    }

    private mutating func answer() -> [Action] {
        guard waitingReplies > 0 else { return [] }
        if case .covering = state { return [] }
        waitingReplies = 0
        let r = refusal
        refusal = nil
        return [.answerLockRequests(refusal: r)]
    }

    /// Whether a daemon stopping now leaves the screen covered (locked: nothing of the
    /// app shows through a restart) or gives it back.
    public var keepsCoveredAtExit: Bool {
        switch state {
        case .covering, .covered, .notCovered: true
        case .uncovering, .uncovered: false
        }
    }

    /// What a stop leaves (physlock's rule): locked, the screen stays covered through a
    /// stop, a restart or an upgrade, whether another daemon follows or not; only an
    /// explicit hand-back (`handBackAsked`: the package being removed) gives it back.
    /// `systemStopping`: the system is shutting down (touchlock-shutdown.service said so):
    /// locked, the screen is let go without being handed back.
    public func exit(handBackAsked: Bool, systemStopping: Bool = false) -> Exit {
        guard keepsCoveredAtExit, !handBackAsked else { return .giveBack }
        return systemStopping ? .release : .stayCovered
    }

    /// Whether the lock screen is on the display, as status's `display` gives it (the raw
    /// values are the wire's words).
    public enum Display: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
        case shown, taking
        case handingOver = "handing_over"
        case handedOver = "handed_over"
        case notShown = "not_shown"
    
        public var description: String { rawValue }
    }

    /// Status's `display`: `taking`, `shown`, `not_shown`, `handing_over` or `handed_over`;
    /// `outputLost`: an output is inactive (master taken by another process, say), which
    /// is `not_shown` whatever else holds, a cover under way apart.
    public func display(outputLost: Bool) -> Display {
        if case .covering = state { return .taking }
        if outputLost { return .notShown }
        switch state {
        case .covering: return .taking
        case .covered: return .shown
        case .notCovered: return .notShown
        case .uncovering: return .handingOver
        case .uncovered: return .handedOver
        }
    }

    private mutating func transition(to new: State, _ event: String) {
        Log.debug("cover: \(state) -> \(event) -> \(new)")
        state = new
    }
}


