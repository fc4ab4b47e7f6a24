import Glibc
import TouchlockCore
import TouchlockSystem

/// Keeps a node_exporter textfile (`[metrics] textfile`, e.g.
/// /var/lib/prometheus/node-exporter/touchlock.prom) up to date: written when the
/// figures change, never more often than once per `minimumInterval`, and atomically
/// (DurableFile: a temporary file beside it, renamed over it), so the collector never
/// reads half a file. A change within the interval of the last write is written when
/// the interval is up, once, with the figures of that moment.
///
/// Counters that move with every frame (frames, latencies) are written with the next
/// change, or `lazyInterval` after the last write at the latest (`changedLazily`): a
/// lockout's countdown redraws every second for hours, and the file is not rewritten
/// (and synced to flash) every second for it.
public final class MetricsTextfile {
    public let path: String
    public let minimumInterval: Interval
    public let lazyInterval: Interval
    private let loop: EventLoop
    private let render: () -> String
    private var pending: EventLoop.TimerID?
    /// The write pending is only for counters (`changedLazily`): a change brings it forward.
    private var pendingIsLazy = false
    private var lastError: String?

    /// Writes made so far, and when the last one was.
    public private(set) var writes = 0
    public private(set) var lastWrite: Instant?

    /// `render` gives the file's text (`MetricsExposition.render(..., format:
    /// .prometheusText)`) when it is written.
    public init(path: String, loop: EventLoop, minimumInterval: Interval = .milliseconds(1000),
                lazyInterval: Interval = .milliseconds(15_000), render: @escaping () -> String) {
        self.path = path
        self.loop = loop
        self.minimumInterval = minimumInterval
        self.lazyInterval = max(lazyInterval, minimumInterval)
        self.render = render
    }

    deinit { if let pending { loop.cancel(pending) } }

    /// The figures changed.
    public func changed() {
        if let p = pending {
            guard pendingIsLazy else { return }  // already due
            loop.cancel(p)
            pending = nil
        }
        let now = EventLoop.now()
        if let last = lastWrite, now < last + minimumInterval {
            schedule(at: last + minimumInterval, lazy: false)
        } else {
            write()
        }
    }

    /// Only counters that move with every frame changed: written with the next change,
    /// or `lazyInterval` after the last write.
    public func changedLazily() {
        guard pending == nil else { return }
        guard let last = lastWrite else { return write() }
        schedule(at: max(last + lazyInterval, EventLoop.now()), lazy: true)
    }

    private func schedule(at t: Instant, lazy: Bool) {
        pendingIsLazy = lazy
        pending = loop.schedule(at: t) { [weak self] _ in
            self?.pending = nil
            self?.write()
        }
    }

    /// Writes a change still waiting for its interval now (on the way out).
    public func flush() {
        guard let p = pending else { return }
        loop.cancel(p)
        pending = nil
        write()
    }

    private func write() {
        lastWrite = EventLoop.now()
        do {
            // World-readable: the collector runs as its own user.
            try DurableFile.replace(path, with: Array(render().utf8), mode: 0o644)
            writes += 1
            lastError = nil
        } catch {
            // Said once per kind of failure, not once a second.
            let text = "\(error)"
            if text != lastError { Log.warning("metrics textfile \(path): \(text)") }
            lastError = text
        }
    }
}
