import Glibc
import TouchlockCore
import TouchlockSystem

/// Keeps a node_exporter textfile (`[metrics] textfile`, e.g.
/// /var/lib/prometheus/node-exporter/touchlock.prom) up to date: written when the
/// figures change, never more often than once per `minimumInterval`, and atomically
/// (DurableFile: a temporary file beside it, renamed over it), so the collector never
/// reads half a file. A change within the interval of the last write is written when
/// the interval is up, once, with the figures of that moment.
public final class MetricsTextfile {
    public let path: String
    public let minimumInterval: Interval
    private let loop: EventLoop
    private let render: () -> String
    private var pending: EventLoop.TimerID?
    private var lastError: String?

    /// Writes made so far, and when the last one was.
    public private(set) var writes = 0
    public private(set) var lastWrite: Instant?

    /// `render` gives the file's text (`MetricsExposition.render(..., format:
    /// .prometheusText)`) when it is written.
    public init(path: String, loop: EventLoop, minimumInterval: Interval = .milliseconds(1000),
                render: @escaping () -> String) {
        self.path = path
        self.loop = loop
        self.minimumInterval = minimumInterval
        self.render = render
    }

    deinit { if let pending { loop.cancel(pending) } }

    /// The figures changed.
    public func changed() {
        guard pending == nil else { return }  // already due
        let now = EventLoop.now()
        if let last = lastWrite, now < last + minimumInterval {
            pending = loop.schedule(at: last + minimumInterval) { [weak self] _ in
                self?.pending = nil
                self?.write()
            }
        } else {
            write()
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
