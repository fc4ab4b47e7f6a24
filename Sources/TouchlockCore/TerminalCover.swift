/// How the VT hand-off carries out what the cover asks (`Cover.Request`): our VT shown
/// (its owner drops DRM master), then DRM master taken on every output and the lock screen
/// drawn whole; given back in reverse, the outputs handed over once their frame clearing
/// the screen is shown, then the kiosk's VT shown again. What comes of it goes back to
/// the cover as a `Cover.Report`. The VT hand-off's executor (`TerminalCovering`) holds it
/// and carries out its actions; the VT's own switch is `TerminalSwitch`'s.
///
///              cover                shown                 outputsTaken
///     idle ------------> showing ----------> taking ------------------> idle, covered
///       |                  | showFailed:        | outputsRefused: refused (our VT
///       |                  | refused            | goes back unless the outputs were held)
///       | uncover          v
///       +-----------> releasing --outputsReleased--> handingBack --handedBack--> idle, uncovered
///
/// At the first cover with the display free (DRM master ours on the primary output and
/// another VT on screen: a boot splash that let the display go, a text console) the
/// outputs are taken first on the VT on screen (`takingInPlace`) and ours is asked for
/// once the lock screen is drawn there; the outputs are taken again on ours once it is
/// shown. A cover asked while a hand-over waits for its clearing frame takes the outputs
/// back with no VT switch (the release is called off). Our VT shown when nothing asked
/// for it (late, after a refusal) is `available`: the cover decides.
public struct TerminalCover: Hashable, Sendable {
    public enum Phase: Hashable, Sendable {
        case idle
        /// Our VT asked for.
        case showing
        /// At the first cover, the outputs being taken on the VT on screen.
        case takingInPlace
        /// The outputs being taken (our VT on screen, or them held already).
        case taking
        /// The outputs handed over once their clearing frame is shown.
        case releasing
        /// The kiosk's VT asked for; `uncovered` follows.
        case handingBack
        /// Our VT going back after a refusal: nothing to report when it has.
        case returning
    }

    public enum Event: Hashable, Sendable {
        /// The cover's request; `displayFree`: DRM master is ours on the primary output and
        /// another VT is on screen (read when the cover is asked).
        case asked(Cover.Request, displayFree: Bool)
        case shown
        case showFailed(String)
        case outputsTaken
        case outputsRefused(String)
        case outputsReleased
        case handedBack
    }

    public enum Action: Hashable, Sendable {
        /// Switch to our VT; `shown` or `showFailed(why)` follows.
        case show
        /// DRM master on every output and a full redraw; `outputsTaken` or
        /// `outputsRefused(why)` follows.
        case takeOutputs
        /// Each output hands over once its frame clearing the screen is shown;
        /// `outputsReleased` follows when all have.
        case releaseOutputs
        /// Never covered (a start handed over): DRM master, which opening the card gives
        /// when nobody holds it, dropped at once, no frame shown. Nothing follows.
        case letOutputsGo
        /// Show the kiosk's VT again; `handedBack` follows.
        case handBack
        /// What came of the cover's request.
        case report(Cover.Report)
    }

    public private(set) var phase: Phase = .idle
    /// Whether the outputs are ours (DRM master held, frames shown): from `outputsTaken`
    /// to `outputsReleased`. A hand-over waiting for its clearing frame still holds them.
    public private(set) var outputsHeld = false
    /// Nothing was covered yet: only the first cover may start in place.
    private var firstCover = true

    /// `outputsHeld`: the outputs are ours from the start (no VT to switch to).
    public init(outputsHeld: Bool = false) {
        self.outputsHeld = outputsHeld
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .asked(.cover, let displayFree): return cover(displayFree: displayFree)
        case .asked(.uncover, _): return uncover()
        case .asked(.letGo, _):
            // A start handed over: a later cover goes the usual way, through our VT.
            outputsHeld = false
            firstCover = false
            return [.letOutputsGo]
        case .shown: return shown()
        case .showFailed(let why): return showFailed(why)
        case .outputsTaken: return outputsTaken()
        case .outputsRefused(let why): return outputsRefused(why)
        case .outputsReleased: return outputsReleased()
        case .handedBack: return handedBack()
        }
    }

    private mutating func cover(displayFree: Bool) -> [Action] {
        defer { firstCover = false }
        switch phase {
        case .releasing:
            // The clearing frame is not shown yet: the outputs were never let go.
            move(to: .taking, "cover asked during the hand-over")
            return [.takeOutputs]
        case .idle, .handingBack, .returning:
            if firstCover, displayFree, !outputsHeld {
                Log.info("DRM master is free on the VT on screen: the lock screen is drawn there before the VT switch")
                move(to: .takingInPlace, "cover asked, the display free")
                return [.takeOutputs]
            }
            move(to: .showing, "cover asked")
            return [.show]
        case .showing, .takingInPlace, .taking:
            Log.bug("VT cover: cover asked while \(phase)")
            return []
        }
    }

    private mutating func uncover() -> [Action] {
        switch phase {
        case .idle, .showing, .taking, .takingInPlace, .returning:
            // Outputs being taken are released too: whatever the take did is undone.
            guard outputsHeld || phase == .taking || phase == .takingInPlace else {
                // Nothing of ours on the outputs: only the VT goes back.
                move(to: .handingBack, "uncover asked, the outputs not held")
                return [.handBack]
            }
            move(to: .releasing, "uncover asked")
            return [.releaseOutputs]
        case .releasing, .handingBack:
            Log.bug("VT cover: uncover asked while \(phase)")
            return []
        }
    }

    private mutating func shown() -> [Action] {
        switch phase {
        case .showing:
            move(to: .taking, "our VT shown")
            return [.takeOutputs]
        case .idle:
            // Shown with nothing under way: the VT owner let ours go after a refusal.
            return [.report(.available)]
        case .takingInPlace, .taking, .releasing, .handingBack, .returning:
            // Asked before and overtaken (a hand-back follows it, or the outputs are being
            // taken already).
            Log.info("VT cover: our VT shown while \(phase)")
            return []
        }
    }

    private mutating func showFailed(_ why: String) -> [Action] {
        guard phase == .showing else {
            Log.info("VT cover: the switch to our VT failed while \(phase): \(why)")
            return []
        }
        // The lock screen stays where it is if it was drawn in place.
        move(to: .idle, "the switch failed")
        return [.report(.refused(why))]
    }

    private mutating func outputsTaken() -> [Action] {
        switch phase {
        case .takingInPlace:
            // On the screen over the VT shown now: ours next, and the outputs are taken
            // again (kept, redrawn) once it is shown.
            outputsHeld = true
            Log.info("VT cover: the lock screen is on the display before the VT switch")
            move(to: .showing, "outputs taken in place")
            return [.show]
        case .taking:
            outputsHeld = true
            move(to: .idle, "outputs taken")
            return [.report(.covered)]
        case .releasing:
            // Taken just before an uncover overtook it: the release follows.
            outputsHeld = true
            Log.info("VT cover: outputs taken while releasing them")
            return []
        case .idle, .showing, .handingBack, .returning:
            Log.bug("VT cover: outputs taken while \(phase)")
            return []
        }
    }

    private mutating func outputsRefused(_ why: String) -> [Action] {
        switch phase {
        case .takingInPlace:
            // Taken by another process since: the usual way, through our VT.
            Log.info("VT cover: the display cannot be taken before the VT switch (\(why)); switching first")
            move(to: .showing, "refused in place")
            return [.show]
        case .taking:
            // Our VT stays no longer than the display it was shown for.
            guard !outputsHeld else {
                move(to: .idle, "outputs refused")
                return [.report(.refused(why))]
            }
            move(to: .returning, "outputs refused")
            return [.handBack, .report(.refused(why))]
        case .releasing:
            // Refused just before an uncover overtook it: the release follows all the same.
            Log.info("VT cover: outputs refused while releasing them: \(why)")
            return []
        case .idle, .showing, .handingBack, .returning:
            Log.bug("VT cover: outputs refused while \(phase): \(why)")
            return []
        }
    }

    private mutating func outputsReleased() -> [Action] {
        guard phase == .releasing else {
            // A release called off by a cover: the Presenter never reports it; a late one
            // changes nothing.
            Log.info("VT cover: outputs released while \(phase)")
            return []
        }
        outputsHeld = false
        move(to: .handingBack, "outputs released")
        return [.handBack]
    }

    private mutating func handedBack() -> [Action] {
        switch phase {
        case .handingBack:
            move(to: .idle, "handed back")
            return [.report(.uncovered)]
        case .returning:
            move(to: .idle, "our VT given back after a refusal")
            return []
        case .idle, .showing, .takingInPlace, .taking, .releasing:
            Log.info("VT cover: the kiosk's VT shown while \(phase)")
            return []
        }
    }

    private mutating func move(to new: Phase, _ event: String) {
        Log.debug("VT cover: \(phase) -> \(event) -> \(new)")
        phase = new
    }
}
