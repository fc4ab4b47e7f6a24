import CLinux
import Glibc
import TouchlockCore

/// The kernel's uevents (a NETLINK_KOBJECT_UEVENT socket bound to the kernel's multicast
/// group) on the event loop: how the daemon sees displays connected and disconnected
/// without a udev daemon. Each datagram is one event; what is not one is skipped.
public final class UeventSocket {
    private let source: ReadableSource

    public init(loop: EventLoop, onEvent: @escaping (Uevent) -> Void) throws(SystemError) {
        let fd = FileDescriptor(adopting: try SystemCall.check("socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)") {
            socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                   NETLINK_KOBJECT_UEVENT)
        })
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(AF_NETLINK)
        address.nl_groups = 1  // the kernel's events (udev's own are group 2)
        try SystemCall.check("bind(NETLINK_KOBJECT_UEVENT)") {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd.rawValue, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
                }
            }
        }
        source = try ReadableSource(fd, loop: loop, bufferSize: 8192,
            read: { fd, buffer throws(SystemError) in try IO.receive(fd, into: buffer, flags: 0, "uevent socket") },
            onError: { error in
                // ENOBUFS: events were lost; the owner probes on the next one.
                Log.warning("\(error)")
                return error.errno == Errno(rawValue: ENOBUFS) ? .keepReading : .stop
            },
            onBytes: { bytes in if let event = Uevent(bytes) { onEvent(event) } })
    }
}
