import Glibc
import TouchlockCore
import TouchlockInput
import TouchlockSystem

/// Where touches and keys come from: the kernel's devices, or a recording replayed when
/// asked for (`--input replay`, `--replay FILE`). A lock daemon never falls back to
/// replayed input on its own: with no touchscreen it waits for one to be plugged in.
final class Inputs {
    private var evdev: EvdevInputs?
    private var replay: ReplaySource?

    /// `screen`: the logical size; `rotation`: the display's, which touch follows.
    /// `place`: where each touchscreen belongs, when there are several outputs.
    /// `holdsInput`: whether the devices are kept from other programs now, asked as each opens.
    init(options: Options, config: Config, loop: EventLoop, screen: Size, rotation: Rotation = .degrees0,
         place: ((DeviceDescription) -> (output: String, screen: Size, rotation: Rotation))? = nil,
         holdsInput: @escaping () -> Bool = { true },
         touches: @escaping ([ScreenTouch], Instant) -> Void,
         keys: @escaping (KeyInput, Instant) -> Void) throws(StartError) {
        let settings = InputSettings(quirks: config.inputQuirks, orientation: config.touchOrientation,
                                     displayRotation: rotation, seat: config.logindSeat)
        switch options.input {
        case .auto, .evdev:
            let inputs = EvdevInputs(loop: loop, screen: screen, settings: settings, deliver: touches, deliverKey: keys)
            inputs.place = place
            inputs.holdsInput = holdsInput
            // Watched before the devices there are listed: a node created in between is seen
            // (the watch's events come once the loop runs; a node already open is skipped).
            inputs.watchForHotplug()
            inputs.openAll()
            if inputs.count == 0 { Log.warning("no touchscreen found under /dev/input yet; waiting for one") }
            evdev = inputs
        case .replay:
            guard let path = options.replayPath ?? Self.bundledReplay() else {
                throw StartError("no recording to replay (--replay FILE)")
            }
            let text: String
            do { text = try FileContents.text(path) } catch { throw StartError("\(error)") }
            let rec: EvemuRecording
            do { rec = try EvemuRecording(parsing: text) } catch { throw StartError("\(path):\(error.line): \(error.message)") }
            guard let device = rec.description else { throw StartError("\(path): the recording holds no device description") }
            let input: TouchInput
            switch TouchInput.make(label: path, device: device, settings: settings, screen: screen, deliver: touches) {
            case .success(let t): input = t
            case .failure(let why): throw StartError("\(path): not a touchscreen: \(why)")
            }
            let source = ReplaySource(recording: rec, loop: loop, pace: options.replayPace) { [weak self] e in
                input.feed(e)
                if let k = KeyInput(e) { keys(k, e.time) }
                if e.type == EventCode.EV_SYN && e.code == EventCode.SYN_REPORT { self?.onReplayedFrame?(e.time) }
            }
            source.onFinished = {
                // The recording's events are gone: their pages go back to the system.
                Heap.trim()
                Log.info("replay of \(path) finished")
            }
            replay = source
            Log.info("replaying \(path): \(rec.events.count) events")
        }
    }

    static func bundledReplay() -> String? {
        let p = Paths.demoRecording
        return access(p, R_OK) == 0 ? p : nil
    }

    /// The output a panel's touches belong to (nil: the primary's).
    func output(ofPanel panel: Int) -> String? { evdev?.outputOfPanel[panel] }

    /// Starts a replay, if there is one.
    func start() {
        replay?.start(after: .milliseconds(300))
    }

    /// Input devices in use (a replay counts as one).
    var deviceCount: Int { (evdev?.deviceCount ?? 0) + (replay == nil ? 0 : 1) }

    /// Called after each replayed frame has been handed to the lock screen.
    var onReplayedFrame: ((Instant) -> Void)?

    /// Whether a replay waits for each frame to be shown (`--replay-pace frames`).
    var pacedByFrames: Bool { replay?.pace == .frames }

    /// A frame drawn from input up to `eventTime` is shown (or that input needed none):
    /// a replay paced by frames plays its next one.
    func frameShown(through eventTime: Instant) {
        replay?.frameShown(through: eventTime)
    }

    /// Keeps every touch and key from other programs (on), or lets them have them again.
    func grab(_ on: Bool) {
        evdev?.grab(on)
    }
}

struct StartError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
