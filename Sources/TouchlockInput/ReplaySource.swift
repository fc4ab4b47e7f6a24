import TouchlockCore
import TouchlockSystem

/// Plays an evemu recording into the input path, one kernel frame at a time, with the
/// recording's timing, on the event loop's timer. Timestamps are moved onto the
/// monotonic clock so the events look as if a panel had just sent them.
public final class ReplaySource {
    public let recording: EvemuRecording
    private let loop: EventLoop
    private let sink: (InputEvent) -> Void
    private var index = 0
    private var offset = Interval(microseconds: 0)
    public var onFinished: (() -> Void)?

    public init(recording: EvemuRecording, loop: EventLoop, sink: @escaping (InputEvent) -> Void) {
        self.recording = recording
        self.loop = loop
        self.sink = sink
    }

    /// Starts playing after `delay`.
    public func start(after delay: Interval = .milliseconds(0)) {
        guard let first = recording.events.first else { onFinished?(); return }
        offset = (EventLoop.now() + delay) - first.time
        loop.schedule(at: first.time + offset) { [weak self] _ in self?.playFrame() }
    }

    private func playFrame() {
        let events = recording.events
        // The frame's events carry the moment they are handed over, as a panel's carry
        // the moment the kernel read them: latency figures then count our work only.
        let now = EventLoop.now()
        while index < events.count {
            var e = events[index]
            index += 1
            e.time = now
            sink(e)
            if e.type == EventCode.EV_SYN && e.code == EventCode.SYN_REPORT { break }
        }
        if index < events.count {
            loop.schedule(at: events[index].time + offset) { [weak self] _ in self?.playFrame() }
        } else {
            onFinished?()
        }
    }
}
