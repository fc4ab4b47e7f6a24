import TouchlockCore
import TouchlockSystem

/// Plays an evemu recording into the input path, one kernel frame at a time, on the
/// event loop's timer. Timestamps are moved onto the monotonic clock so the events look
/// as if a panel had just sent them.
///
/// Two paces:
/// - `.recording`: each frame at its time in the recording (the wall clock). A frame
///   that comes while the previous one is still being shown replaces it on the screen,
///   so a slow display (PNG encoding) shows fewer frames, and not the same ones twice.
/// - `.frames`: each frame waits until its owner says the previous one has been shown
///   (`frameShown(through:)`), then the recording's gap between the two: the same
///   recording always gives the same frames, and never less time between them than
///   recorded (so timers such as the error hold see what the recording meant).
public final class ReplaySource {
    public enum Pace: String, Sendable, CaseIterable {
        case recording, frames
    }

    /// The recording; its events are let go of once the last frame is played (a panel's
    /// daemon holds none: a long replay's events would otherwise stay in memory for good).
    public private(set) var recording: EvemuRecording
    public let pace: Pace
    private let loop: EventLoop
    private let sink: (InputEvent) -> Void
    private var index = 0
    private var offset = Interval(microseconds: 0)
    /// `.frames`: the time stamped on the frame waiting to be shown, and the recording's
    /// gap to the next one.
    private var waiting: (handedOver: Instant, gap: Interval)?
    public var onFinished: (() -> Void)?

    public init(recording: EvemuRecording, loop: EventLoop, pace: Pace = .recording,
                sink: @escaping (InputEvent) -> Void) {
        self.recording = recording
        self.loop = loop
        self.pace = pace
        self.sink = sink
    }

    /// Frames handed over so far.
    public private(set) var framesPlayed = 0

    /// `.frames`: whether a frame handed over waits to be reported shown.
    public var isWaitingForShow: Bool { waiting != nil }

    /// Starts playing after `delay`.
    public func start(after delay: Interval = .milliseconds(0)) {
        guard let first = recording.events.first else { onFinished?(); return }
        offset = (EventLoop.now() + delay) - first.time
        loop.schedule(at: first.time + offset) { [weak self] _ in self?.playFrame() }
    }

    /// `.frames`: the owner has shown a frame drawn from input up to `eventTime` (the
    /// time stamped on the newest event it reflects), or found that the input up to
    /// then needs no new frame. If that covers the frame handed over last, the next one
    /// is played after the recording's gap. Frames reflecting older input (a timer's,
    /// a blink) do not count; with `.recording` nothing waits and this does nothing.
    public func frameShown(through eventTime: Instant) {
        guard pace == .frames, let w = waiting, eventTime >= w.handedOver else { return }
        waiting = nil
        loop.schedule(at: EventLoop.now() + w.gap) { [weak self] _ in self?.playFrame() }
    }

    private func playFrame() {
        let events = recording.events
        // The frame's events carry the moment they are handed over, as a panel's carry
        // the moment the kernel read them: latency figures then count our work only.
        let now = EventLoop.now()
        let recordedAt = events[index].time
        while index < events.count {
            var e = events[index]
            index += 1
            e.time = now
            sink(e)
            if e.type == EventCode.EV_SYN && e.code == EventCode.SYN_REPORT { break }
        }
        framesPlayed += 1
        guard index < events.count else {
            recording.events = []
            onFinished?()
            return
        }
        switch pace {
        case .recording:
            loop.schedule(at: events[index].time + offset) { [weak self] _ in self?.playFrame() }
        case .frames:
            waiting = (now, events[index].time - recordedAt)
        }
    }
}
