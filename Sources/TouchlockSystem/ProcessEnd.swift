import CLinux
import Glibc
import TouchlockCore

/// Tells once, from the loop, that another process has ended: a pidfd (pidfd_open(2)),
/// readable when the process exits, registered on `loop`. Unregistered and closed when it
/// fires or when the watch goes away, whichever comes first.
public final class ProcessEndWatch {
    public let pid: Int32
    private var descriptor: FileDescriptor?
    private let loop: EventLoop

    /// Watches process `pid`. Throws if it cannot be opened (ESRCH: already gone; ENOSYS:
    /// a kernel before 5.3) or registered.
    public init(pid: Int32, loop: EventLoop, onEnd: @escaping () -> Void) throws(SystemError) {
        self.pid = pid
        self.loop = loop
        let fd = try SystemCall.check("pidfd_open", "process \(pid)") { clinux_pidfd_open(pid) }
        let descriptor = FileDescriptor(adopting: fd)
        try loop.register(fd, .readable) { [weak self] _ in
            guard let self, self.descriptor != nil else { return }
            self.stop()
            onEnd()
        }
        self.descriptor = consume descriptor
    }

    deinit { stop() }

    private func stop() {
        guard let d = descriptor.take() else { return }
        loop.unregister(d.rawValue)
        // `d` closes itself here.
    }
}
