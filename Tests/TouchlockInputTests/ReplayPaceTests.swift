import Testing
import TouchlockCore
import TouchlockSystem
@testable import TouchlockInput

/// The replay's two paces against a display slower than the recording (as the headless
/// display is while it encodes PNGs): on the recording's clock frames come while the
/// previous one is still being shown; paced by frames, each comes only once the
/// previous one is on the screen, and no sooner than the recording's gap after it.
@Suite struct ReplayPaceTests {
    /// One finger moving right, `frames` kernel frames `gapMs` apart.
    static func recording(frames: Int, gapMs: Int) throws -> EvemuRecording {
        var text = """
            N: test panel
            I: 0006 0000 0000 0000
            P: 02 00 00 00 00 00 00 00
            B: 00 0b 00 00 00 00 00 00 00
            B: 01 00 00 00 00 00 00 00 00
            B: 01 00 00 00 00 00 00 00 00
            B: 01 00 00 00 00 00 00 00 00
            B: 01 00 00 00 00 00 00 00 00
            B: 01 00 00 00 00 00 00 00 00
            B: 01 00 04 00 00 00 00 00 00
            B: 03 03 00 00 00 00 80 60 02
            A: 00 0 32767 0 0 0
            A: 01 0 32767 0 0 0
            A: 2f 0 9 0 0 0
            A: 35 0 32767 0 0 0
            A: 36 0 32767 0 0 0
            A: 39 0 65535 0 0 0

            """
        for k in 0..<frames {
            let t = String(format: "%d.%06d", (k * gapMs) / 1000, (k * gapMs % 1000) * 1000)
            if k == 0 { text += "E: \(t) 0003 0039 0001\nE: \(t) 0001 014a 0001\n" }
            text += "E: \(t) 0003 0035 \(1000 + 100 * k)\nE: \(t) 0003 0036 5000\nE: \(t) 0000 0000 0000\n"
        }
        return try EvemuRecording(parsing: text)
    }

    struct Run {
        /// When each frame was handed over, and when the display reported it shown.
        var played: [Instant] = []
        var shown: [Instant] = []
        var finished = false
    }

    /// Replays `frames` frames 5 ms apart into a display that takes `displayMs` to show
    /// each one. At each frame the display also reports at once a frame of older input
    /// (a blink), which must not count.
    static func run(_ pace: ReplaySource.Pace, frames: Int = 12, displayMs: Int64 = 30) throws -> Run {
        let loop = try EventLoop(signals: [])
        var run = Run()
        var source: ReplaySource!
        source = ReplaySource(recording: try recording(frames: frames, gapMs: 5), loop: loop, pace: pace) { e in
            guard e.type == EventCode.EV_SYN && e.code == EventCode.SYN_REPORT else { return }
            let handedOver = e.time
            run.played.append(handedOver)
            source.frameShown(through: Instant(microseconds: handedOver.microseconds - 1))
            loop.schedule(at: EventLoop.now() + .milliseconds(displayMs)) { now in
                run.shown.append(now)
                source.frameShown(through: handedOver)
                if run.finished && run.shown.count == run.played.count { loop.stop() }
            }
        }
        source.onFinished = {
            run.finished = true
            // A finished replay holds no events (the daemon's memory after a replay is
            // a panel's daemon's); the device description stays.
            #expect(source.recording.events.isEmpty)
            #expect(source.recording.name == "test panel")
        }
        loop.schedule(at: EventLoop.now() + .milliseconds(10_000)) { _ in loop.stop() }
        source.start()
        try loop.run()
        #expect(source.framesPlayed == frames)
        return run
    }

    @Test func pacedByFramesEachFrameWaitsForThePreviousToBeShown() throws {
        let r = try Self.run(.frames)
        #expect(r.finished)
        #expect(r.played.count == 12 && r.shown.count == 12)
        for k in 1..<min(r.played.count, r.shown.count) {
            // Not before the previous frame was shown, and then the recording's 5 ms.
            #expect(r.played[k] >= r.shown[k - 1] + .milliseconds(5), "frame \(k) played before frame \(k - 1) was shown")
        }
    }

    @Test func onTheRecordingsClockFramesDoNotWait() throws {
        let r = try Self.run(.recording)
        #expect(r.finished)
        #expect(r.played.count == 12)
        // The second frame is due 5 ms after the first, long before it is shown (30 ms).
        #expect(r.played[1] < r.shown[0])
        // The whole recording (55 ms) is played well before the display is through.
        #expect(r.played[11] + .milliseconds(25) < r.shown[11])
    }
}
