import TouchlockCore
import TouchlockPixels
import TouchlockSystem

/// Where finished frames go: a KMS output, or PNG files when there is no display.
///
/// The owner renders into its shadow buffer, then calls `present` with the damage of that
/// frame. A display has at most one frame in flight: while `isBusy`, the owner keeps
/// accumulating damage and presents again from `onFrameComplete`.
public protocol Display: AnyObject {
    /// The logical size in pixels (the mode's, turned by `rotation`): the shadow buffer is
    /// made this size and the scene laid out in it.
    var size: Size { get }
    /// How the picture is turned on the panel; touch follows it.
    var rotation: Rotation { get }
    /// The panel's physical size in millimetres when the connector reports one.
    var physicalSize: (width: Int, height: Int)? { get }
    /// A frame was submitted and has not completed yet.
    var isBusy: Bool { get }
    /// A completed frame is held until the refresh period has passed (the flip completed
    /// at once): the owner may draw when it ends, from `onFrameComplete`.
    var isHoldingFrame: Bool { get }
    /// Called on the loop when a submitted frame is on screen (a page flip completed),
    /// with the completion time.
    var onFrameComplete: ((Instant) -> Void)? { get set }
    /// The output's name (the connector's, e.g. HDMI-A-1), for status and the log.
    var name: String { get }
    /// The DRM card it is on (its node's name, e.g. card1), for status; nil when it has none.
    var cardNode: String? { get }
    /// Shown, handed over, or lost and why.
    var state: OutputState { get }
    /// Called when `state` changes phase (status and metrics follow it).
    var onStateChanged: (() -> Void)? { get set }
    /// Called when the output needs the whole frame presented again (it is back, or it
    /// recovered from a flip that never completed).
    var onRedrawNeeded: (() -> Void)? { get set }

    /// Copies the damaged rectangles of `shadow` to the next scanout buffer and submits it.
    /// `damage` is the damage of this frame only; the display adds what its back buffer
    /// missed since it was last shown.
    func present(_ shadow: ShadowBuffer, damage: Damage) throws(SystemError)

    /// Gives the display up after an unlock (DRM master dropped) so another program can
    /// show; nothing is presented until `acquire`.
    func release() throws(SystemError)

    /// Takes the display back: DRM master, and a full mode set and redraw at the next
    /// present. Fails (EBUSY, EACCES, EINVAL) while another process holds DRM master.
    func acquire() throws(SystemError)

    /// Something that may have given a lost display back happened: an inactive output
    /// tries again (DRM master, events, a full mode set).
    func retry(_ trigger: OutputState.Trigger)

    /// Switches the screen off (blank) or on again; frames are not presented while off.
    func setPowered(_ on: Bool) throws(SystemError)

    /// Stops showing frames and gives the screen back (restores the saved CRTC, frees the
    /// buffers in reverse order). Safe to call twice.
    func shutdown()

    /// Stops showing frames and leaves the screen as it is, the last frame on it (a stop
    /// while locked, for the daemon after this one): nothing restored, nothing freed.
    func leaveOnScreen()

    /// Whether this output's card is ours to drive now, with nobody's consent (DRM master
    /// held): at start, the display nobody else drives (a boot splash that let it go).
    var holdsMaster: Bool { get }

    /// What is on the screen may not be ours any more though master is (a process that
    /// died on the VT we drew over forced the console's mode back): the next frame sets
    /// the mode again and is drawn whole; one is asked for (`onRedrawNeeded`).
    func showAgain()
}

extension Display {
    public var cardNode: String? { nil }
    public var rotation: Rotation { .degrees0 }
    /// A display that does not pace its frames never holds one.
    public var isHoldingFrame: Bool { false }
    /// Displays without a master to hand over (headless) keep showing.
    public func release() throws(SystemError) {}
    public func acquire() throws(SystemError) {}
    /// A display without power control stays on.
    public func setPowered(_ on: Bool) throws(SystemError) {}
    /// A display that cannot be lost has nothing to retry.
    public func retry(_ trigger: OutputState.Trigger) {}
    /// Displays without a master (headless) are not free for the taking: nothing to take.
    public var holdsMaster: Bool { false }
    /// Nothing but us draws on a display without a master.
    public func showAgain() {}
    /// A display nothing outlives (headless) just shuts down.
    public func leaveOnScreen() { shutdown() }
}
