/// Whether the lock screen covers the screen, and what is under way to cover or uncover
/// it: the one place the daemon keeps that state. The lock screen (`LockScreen`) holds it
/// as a part, asks it to cover (`coverAsked`) and to uncover (`uncoverAsked`) and is told
/// `displayTaken` or `displayRefused`; what executes it (our VT, DRM master on each
/// output) reports back here through the lock screen (`Event`), and `lock` requests wait
/// here for their answer. Status's `display`, `display_reason` and `lock_pending` come
/// from it, and the lock screen's `hold` is read off it. The diagram in
/// docs/state-machines.md changes with it.
///
///                 start (a VT)          terminalShown             outputsTaken
///     (start) -------------------> covering --------> takeOutputs -----------> covered
///        |  start (no VT)             ^   | refused / VT failed:                  |
///        |  -------------------------/    |  notCovered(why) at start,           | uncoverAsked
///        |                                |  uncovered (lock kept pending)       v
///        | start (unlocked before)        |                                  uncovering
///        +------------------------> uncovered <--- terminalHandedBack (or, with no VT,
///                                      |             outputsReleased) ------------+
///                                      +-- coverAsked --> covering
///
/// A late `terminalShown` (the VT owner let our VT go after a refusal) carries out the
/// lock kept pending, or else hands the VT straight back.
///
/// At start with the display free (nobody DRM master: a boot splash that let it go, a
/// text console) the outputs are taken first on the VT that is on screen, and ours is
/// asked for once the lock screen is drawn there: whatever happens to that VT's owner
/// during the switch (plymouthd dying in the middle of it), the lock screen is on the
/// screen from the first frame, and the cover is `covering(.startup)` until ours is shown.
public struct Cover: Sendable {
    /// What a cover under way is for.
    public enum Purpose: Hashable, Sendable {
        /// The first frame, at start.
        case startup
        /// The lock screen asked for the display: to lock, or to enroll a secret on it.
        case lockScreen(LockScreen.Purpose)
        /// Locked, but the display was never taken: tried again (a `lock` request, our VT
        /// shown late).
        case retry
    }

    public enum State: Hashable, Sendable, CustomStringConvertible {
        /// Our VT asked for, or the outputs being taken.
        case covering(Purpose)
        /// The lock screen is on the display (an output may still be lost: `OutputState`).
        case covered
        /// Locked, but the display could not be taken, for this reason.
        case notCovered(String)
        /// After an unlock: the outputs are being handed over and the VT switched back.
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
        /// Switch to our VT; `terminalShown` or `terminalFailed` follows.
        case showTerminal
        /// DRM master on every output and a full redraw; `outputsTaken` or `outputsRefused`.
        case takeOutputs
        /// Each output hands over once its frame clearing the screen is shown;
        /// `outputsReleased` follows when all have.
        case releaseOutputs
        /// Show the kiosk's VT again; `terminalHandedBack` follows.
        case handBackTerminal
        /// Tell the lock screen its `coverAsked` was carried out, or refused.
        case displayTaken
        case displayRefused(String)
        /// Carry out the lock kept pending (the lock screen's `lock`).
        case lock
        /// Answer the `lock` requests waiting: with this refusal, or with the state.
        case answerLockRequests(refusal: String?)
        /// Tell subscribers the screen is the kiosk's again.
        case handedOver
        /// The outputs were never taken (a start handed over): DRM master, which opening
        /// the card gives when nobody holds it, is dropped at once, with no frame shown.
        case letOutputsGo
    }

    /// What the cover asks of whatever covers the screen: the contract every way of
    /// covering carries out (the VT hand-off, a compositor's session lock, any other), in
    /// words of neither VT nor DRM. `Action.request` says which action asks which.
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
    /// request it answers (`Event(_:)`).
    public enum Report: Hashable, Sendable {
        case covered
        case refused(String)
        case uncovered
        /// The cover ended unasked (the compositor ended its session lock, or went away),
        /// for this reason.
        case lost(String)
    }

    /// The steps of a VT hand-off that the cover still orders between its requests (our
    /// VT shown before a `cover`, the kiosk's shown again after an `uncover`): asked only
    /// of a way of covering that goes through a VT switch of our own.
    public enum TerminalStep: Hashable, Sendable {
        /// Switch to our VT; `shown` or `failed(why)` follows.
        case show
        /// Show the kiosk's VT again; `handedBack` follows.
        case handBack
    }

    /// What comes back from a VT hand-off's steps.
    public enum TerminalReport: Hashable, Sendable {
        case shown
        case failed(String)
        case handedBack
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

    /// What the executor reports, and the requests that reach the cover from outside the
    /// lock screen: one case per method below, for the lock screen to pass on.
    public enum Event: Hashable, Sendable {
        /// `inPlace`: the display is free now, so it is taken before the VT switch.
        case start(inPlace: Bool)
        case terminalShown
        case terminalFailed(String)
        case outputsTaken
        case outputsRefused(String)
        case outputsReleased
        case terminalHandedBack
        case lockRequested
        case enrollmentRequested
        case settle
        /// The cover ended without being asked (the compositor ended its session lock, or
        /// went away), for this reason.
        case lost(String)
    }

    /// Whether covering goes through a VT switch of our own.
    public let hasTerminal: Bool
    /// Without a VT: whether the display is asked for at start too (`takeOutputs`), as a
    /// compositor's session lock is, rather than ours from the start.
    public let asksAtStart: Bool
    public private(set) var state: State
    /// Whether the outputs are ours (DRM master held, frames shown): from `outputsTaken`
    /// (or the start, with no VT) to `outputsReleased`. A hand-over waiting for its
    /// clearing frame still holds them, so a cover asked meanwhile takes them back with
    /// no VT switch.
    public private(set) var outputsHeld: Bool
    /// A lock (or the idle lock) was refused because the display could not be taken: it is
    /// carried out once our VT is shown after all, or at the next `lock` request.
    public private(set) var lockPending = false
    /// Why the last cover failed, while a request that asked for it is answered.
    public private(set) var refusal: String?
    /// Why the lock screen is not on the display, since the last cover failed.
    public private(set) var failure: String?
    private var waitingReplies = 0
    /// At start: the outputs are being taken on the VT on screen, before ours is asked for.
    private var takingInPlace = false

    /// `uncovered`: the daemon before this one was unlocked (the kiosk keeps the screen).
    public init(hasTerminal: Bool, asksAtStart: Bool = false, uncovered: Bool = false) {
        self.hasTerminal = hasTerminal
        self.asksAtStart = asksAtStart && !hasTerminal
        state = uncovered ? .uncovered : .covering(.startup)
        outputsHeld = !hasTerminal && !self.asksAtStart && !uncovered
    }

    /// Carries out `event` by its method.
    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start(let inPlace): return start(inPlace: inPlace)
        case .terminalShown: return terminalShown()
        case .terminalFailed(let why): return terminalFailed(why)
        case .outputsTaken: return outputsTaken()
        case .outputsRefused(let why): return outputsRefused(why)
        case .outputsReleased: return outputsReleased()
        case .terminalHandedBack: return terminalHandedBack()
        case .lockRequested: return lockRequested()
        case .enrollmentRequested:
            enrollmentRequested()
            return []
        case .settle: return settle()
        case .lost(let why): return lost(why)
        }
    }

    /// The first frame is drawn: with a VT, ours is asked for (`inPlace`: after the
    /// outputs are taken on the VT on screen); without, the display is ours from the start.
    /// Started handed over (unlocked before this start): the outputs are let go, so a
    /// daemon that does not cover holds no DRM master (the kiosk's compositor, started
    /// later, must be able to take the card).
    public mutating func start(inPlace: Bool = false) -> [Action] {
        if case .uncovered = state, !outputsHeld { return [.letOutputsGo] }
        guard case .covering(.startup) = state else { return [] }
        guard hasTerminal else {
            if asksAtStart { return [.takeOutputs] }
            transition(to: .covered, "start without a VT")
            return []
        }
        if inPlace, !outputsHeld {
            takingInPlace = true
            return [.takeOutputs]
        }
        return [.showTerminal]
    }

    /// The lock screen asks for the display, for `purpose`: with a VT, ours first once
    /// every output is handed over (its owner drops master, the outputs follow); a
    /// hand-over still under way is called off by taking them.
    public mutating func coverAsked(for purpose: LockScreen.Purpose) -> [Action] {
        transition(to: .covering(.lockScreen(purpose)), "cover asked")
        return hasTerminal && !outputsHeld ? [.showTerminal] : [.takeOutputs]
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
            return [.releaseOutputs]
        case .uncovering, .uncovered:
            Log.bug("cover: uncover asked while \(state)")
            return []
        }
    }

    /// Our VT is on screen.
    public mutating func terminalShown() -> [Action] {
        switch state {
        case .covering:
            return [.takeOutputs]
        case .covered, .notCovered:
            // Shown again while locked (a retry, or a late switch after a failed start).
            transition(to: .covering(.retry), "VT shown")
            return [.takeOutputs]
        case .uncovered, .uncovering:
            // Shown late: the owner of the kiosk's VT let it go after all.
            if lockPending {
                Log.info("our VT is shown after all: the refused lock is carried out")
                lockPending = false
                return [.lock]
            }
            transition(to: .uncovering, "VT shown unasked")
            return [.handBackTerminal]
        }
    }

    /// The switch to our VT did not complete.
    public mutating func terminalFailed(_ why: String) -> [Action] {
        guard case .covering(let purpose) = state else {
            Log.info("cover: the VT switch failed while \(state): \(why)")
            return []
        }
        return failed(why, purpose, handBack: false)
    }

    /// Every output is ours again (master taken, to be drawn whole).
    public mutating func outputsTaken() -> [Action] {
        guard case .covering(let purpose) = state else {
            Log.bug("cover: outputs taken while \(state)")
            return []
        }
        if takingInPlace {
            // On the screen over the VT shown now: ours next, and the outputs are taken
            // again (kept, redrawn) once it is shown.
            takingInPlace = false
            outputsHeld = true
            Log.info("cover: the lock screen is on the display before the VT switch")
            return [.showTerminal]
        }
        transition(to: .covered, "outputs taken")
        outputsHeld = true
        failure = nil
        var out: [Action] = []
        if case .lockScreen = purpose { out.append(.displayTaken) }
        return out + answer()
    }

    /// The outputs could not be taken (`why`): while they are still handed over, our VT
    /// goes back too.
    public mutating func outputsRefused(_ why: String) -> [Action] {
        guard case .covering(let purpose) = state else {
            Log.bug("cover: outputs refused while \(state)")
            return []
        }
        if takingInPlace {
            // Taken by another process since: the usual way, through our VT.
            takingInPlace = false
            Log.info("cover: the display cannot be taken before the VT switch (\(why)); switching first")
            return [.showTerminal]
        }
        return failed(why, purpose, handBack: !outputsHeld && hasTerminal)
    }

    private mutating func failed(_ why: String, _ purpose: Purpose, handBack: Bool) -> [Action] {
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
        // Our VT stays no longer than the display it was shown for.
        if handBack { out.append(.handBackTerminal) }
        return out + answer()
    }

    /// Every output has been handed over (DRM master dropped).
    public mutating func outputsReleased() -> [Action] {
        guard case .uncovering = state else { return [] }
        outputsHeld = false
        if hasTerminal { return [.handBackTerminal] }
        transition(to: .uncovered, "outputs released")
        return [.handedOver]
    }

    /// The kiosk's VT is on screen again.
    public mutating func terminalHandedBack() -> [Action] {
        guard case .uncovering = state else { return [] }
        transition(to: .uncovered, "handed back")
        return [.handedOver]
    }

    /// A client asked to lock. Locked but never shown: our VT is asked for again. The lock
    /// screen's `lock` follows; `settle` then answers it if nothing is under way.
    public mutating func lockRequested() -> [Action] {
        if waitingReplies == 0 { refusal = nil }
        waitingReplies += 1
        lockPending = false
        if case .notCovered = state, hasTerminal || asksAtStart {
            transition(to: .covering(.retry), "lock requested")
            return hasTerminal ? [.showTerminal] : [.takeOutputs]
        }
        return []
    }

    /// The cover ended unasked (`why`): locked, the lock screen is no longer on the display
    /// (status says why) until a `lock` request takes it again; after an unlock, nothing
    /// changes. A cover under way counts it as refused.
    public mutating func lost(_ why: String) -> [Action] {
        switch state {
        case .covering:
            return outputsRefused(why)
        case .covered:
            outputsHeld = false
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


extension Cover.Action {
    /// What this action asks of the way of covering, if it is one of the contract's
    /// requests.
    public var request: Cover.Request? {
        switch self {
        case .takeOutputs: .cover
        case .releaseOutputs: .uncover
        case .letOutputsGo: .letGo
        case .showTerminal, .handBackTerminal, .displayTaken, .displayRefused, .lock, .answerLockRequests, .handedOver: nil
        }
    }

    /// The VT hand-off's step this action asks for, if it is one.
    public var terminalStep: Cover.TerminalStep? {
        switch self {
        case .showTerminal: .show
        case .handBackTerminal: .handBack
        case .takeOutputs, .releaseOutputs, .letOutputsGo, .displayTaken, .displayRefused, .lock, .answerLockRequests, .handedOver: nil
        }
    }
}

extension Cover.Event {
    /// What a way of covering reported, as the cover takes it.
    public init(_ report: Cover.Report) {
        switch report {
        case .covered: self = .outputsTaken
        case .refused(let why): self = .outputsRefused(why)
        case .uncovered: self = .outputsReleased
        case .lost(let why): self = .lost(why)
        }
    }

    /// What a VT hand-off's step reported, as the cover takes it.
    public init(_ report: Cover.TerminalReport) {
        switch report {
        case .shown: self = .terminalShown
        case .failed(let why): self = .terminalFailed(why)
        case .handedBack: self = .terminalHandedBack
        }
    }
}
