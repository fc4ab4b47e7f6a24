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
    private let source: ReadableSource

    public init(_ directory: String, loop: EventLoop, onChange: @escaping (Change) -> Void) throws(SystemError) {
        self.directory = directory
        let fd = FileDescriptor(adopting: try SystemCall.check("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) })
        let mask = UInt32(IN_CREATE | IN_ATTRIB | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM)
        try SystemCall.check("inotify_add_watch", directory) { inotify_add_watch(fd.rawValue, directory, mask) }
        source = try ReadableSource(fd, loop: loop, bufferSize: 4096,
            read: { fd, buffer throws(SystemError) in try IO.read(fd, into: buffer, "inotify \(directory)") },
            onError: { error in Log.error("\(error)"); return .stop },
            onBytes: { bytes in Self.changes(in: bytes, directory: directory, onChange) })
    }

    /// The changes in one read of inotify events, told to `onChange` in order.
    private static func changes(in bytes: ArraySlice<UInt8>, directory: String, _ onChange: (Change) -> Void) {
        let n = bytes.endIndex
        var offset = bytes.startIndex
        let headerSize = MemoryLayout<inotify_event>.size
        while offset + headerSize <= n {
            let (mask, length) = bytes.withUnsafeBytes { raw -> (UInt32, Int) in
                let e = raw.loadUnaligned(fromByteOffset: offset - bytes.startIndex, as: inotify_event.self)
                return (e.mask, Int(e.len))
            }
            let nameBytes = bytes[(offset + headerSize)..<min(n, offset + headerSize + length)]
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
