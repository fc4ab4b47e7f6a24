/// The daemon's start, from its first frame to READY=1. The lock screen is drawn first;
/// what can wait (the input, the control socket, the verifier: "the rest") opens once the
/// first frame is submitted, or after `grace` if none can be (a VT switch that does not
/// complete, a display that refuses frames). READY=1 goes out once the rest is open and
/// the lock screen is on the screen, or at once after the rest when the start is handed
/// over (unlocked before it: nothing is drawn). Not while the cover is still at its start,
/// though: a first frame drawn on a boot splash's VT before the switch to ours is not the
/// end of the start (plymouth is told to quit at READY=1, and must not while its VT is on
/// screen: its text mode would bring the console back over ours).
///
///              began(handed over)                         restOpened
///     (idle) -------------------> opening ------------------------------> open
///        |                          ^                                     |
///        | began                    | firstFrameSubmitted / graceEnded    | the first frame
///        v                          |                                     | shown (or handed
///     drawing ----------------------+                                     | over), the cover
///                                                                         v past its start
///                                                                       ready
///
/// The executor carries out the actions and reports the events; the cover's state and
/// whether the lock screen holds the display are read at each event.
public struct Startup: Hashable, Sendable {
    public enum Phase: Hashable, Sendable {
        /// Not begun.
        case idle
        /// The first frame is being drawn; the grace timer runs.
        case drawing
        /// The rest is being opened.
        case opening
        /// The rest is open: waiting for the lock screen to be on the screen.
        case open
        /// READY=1 was sent.
        case ready
    }

    public enum Event: Hashable, Sendable {
        /// The start: `handedOver` when the kiosk keeps the screen (nothing is drawn).
        case began(handedOver: Bool, at: Instant)
        /// The first frame went to the display.
        case firstFrameSubmitted
        /// The grace timer fired.
        case graceEnded
        /// The rest is open.
        case restOpened
        /// The first frame is on the screen.
        case firstFrameShown
        /// The cover moved on (our VT shown, the display taken or refused).
        case coverMoved
    }

    public enum Action: Hashable, Sendable {
        /// Call `graceEnded` at this time unless cancelled.
        case armGrace(Instant)
        case cancelGrace
        /// Open the rest on a later turn of the loop; `restOpened` follows.
        case openRest
        /// Tell the service manager the start is over: READY=1, the status unlocked (the
        /// kiosk keeps the screen) or locked. What start-up freed goes back to the system.
        case ready(unlocked: Bool)
    }

    /// Within this of the start the first frame is submitted, or the rest opens anyway.
    public static let grace = Interval.milliseconds(1000)

    public private(set) var phase: Phase = .idle
    public private(set) var firstFrameShown = false
    /// The start was handed over: no frame is waited for.
    public private(set) var handedOver = false

    public init() {}

    /// Carries out `event`; `cover` is the cover's state now and `holdsDisplay` whether
    /// the lock screen holds the display (for READY=1's status).
    public mutating func handle(_ event: Event, cover: Cover.State, holdsDisplay: Bool) -> [Action] {
        switch event {
        case .began(let handedOver, let now):
            guard phase == .idle else {
                Log.bug("startup: began again while \(phase)")
                return []
            }
            self.handedOver = handedOver
            if handedOver {
                phase = .opening
                return [.openRest]
            }
            phase = .drawing
            return [.armGrace(now + Self.grace)]
        case .firstFrameSubmitted:
            guard phase == .drawing else { return [] }
            phase = .opening
            return [.cancelGrace, .openRest]
        case .graceEnded:
            guard phase == .drawing else { return [] }
            Log.info("no frame submitted within \(Self.grace.milliseconds) ms of the start: the rest opens anyway")
            phase = .opening
            return [.openRest]
        case .restOpened:
            guard phase == .opening else {
                Log.bug("startup: the rest opened while \(phase)")
                return []
            }
            phase = .open
            return readyIfDue(cover: cover, holdsDisplay: holdsDisplay)
        case .firstFrameShown:
            firstFrameShown = true
            return readyIfDue(cover: cover, holdsDisplay: holdsDisplay)
        case .coverMoved:
            return readyIfDue(cover: cover, holdsDisplay: holdsDisplay)
        }
    }

    private mutating func readyIfDue(cover: Cover.State, holdsDisplay: Bool) -> [Action] {
        guard phase == .open, firstFrameShown || handedOver else { return [] }
        if case .covering(.startup) = cover { return [] }
        phase = .ready
        return [.ready(unlocked: handedOver && !holdsDisplay)]
    }
}
