import CLinux
import Glibc
import TouchlockCore

/// Names appearing in and leaving one directory, through inotify on the event loop: how
/// the daemon sees input devices come and go without udev (it may run from an initramfs).
public final class DirectoryWatch {
    public enum Change: Equatable, Sendable {
        /// Created, moved in, or its attributes changed (udev fixing permissions).
        case appeared(String)
        case removed(String)
        /// Events were lost (the inotify queue overflowed): look at the whole directory.
        case rescan
    }

    public let directory: String
    private let fd: Int32
    private let loop: EventLoop
    private let onChange: (Change) -> Void

    public init(_ directory: String, loop: EventLoop, onChange: @escaping (Change) -> Void) throws(SystemError) {
        self.directory = directory
        self.loop = loop
        self.onChange = onChange
        fd = try SystemCall.check("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        do {
            let mask = UInt32(IN_CREATE | IN_ATTRIB | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)
            try SystemCall.check("inotify_add_watch", directory) { inotify_add_watch(fd, directory, mask) }
            try loop.register(fd, .readable) { [weak self] _ in self?.readable() }
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        loop.unregister(fd)
        close(fd)
    }

    private func readable() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let result = buffer.withUnsafeMutableBytes { b in
                Result { () throws(SystemError) in try IO.read(fd, into: b, "inotify \(directory)") }
            }
            let n: Int
            switch result {
            case .success(.bytes(let count)): n = count
            case .success(.wouldBlock), .success(.endOfFile): return
            case .failure(let error): Log.error("\(error)"); return
            }
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= n {
                let (mask, length) = buffer.withUnsafeBytes { raw -> (UInt32, Int) in
                    let e = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (e.mask, Int(e.len))
                }
                let nameBytes = buffer[(offset + headerSize)..<min(n, offset + headerSize + length)]
                let name = String(decoding: nameBytes.prefix(while: { $0 != 0 }), as: UTF8.self)
                offset += headerSize + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    Log.warning("inotify on \(directory): queue overflow; rescanning")
                    onChange(.rescan)
                    continue
                }
                if name.isEmpty { continue }
                if mask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                    onChange(.removed(name))
                } else {
                    onChange(.appeared(name))
                }
            }
        }
    }
}
