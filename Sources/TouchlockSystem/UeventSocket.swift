import CLinux
import Glibc
import TouchlockCore

/// The kernel's uevents (a NETLINK_KOBJECT_UEVENT socket bound to the kernel's multicast
/// group) on the event loop: how the daemon sees displays connected and disconnected
/// without a udev daemon. Each datagram is one event; what is not one is skipped.
public final class UeventSocket {
    private let fd: Int32
    private let loop: EventLoop
    private let onEvent: (Uevent) -> Void

    public init(loop: EventLoop, onEvent: @escaping (Uevent) -> Void) throws(SystemError) {
        self.loop = loop
        self.onEvent = onEvent
        fd = try SystemCall.check("socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)") {
            socket(AF_NETLINK, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
                   NETLINK_KOBJECT_UEVENT)
        }
        do {
            var address = sockaddr_nl()
            address.nl_family = sa_family_t(AF_NETLINK)
            address.nl_groups = 1  // the kernel's events (udev's own are group 2)
            try SystemCall.check("bind(NETLINK_KOBJECT_UEVENT)") {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_nl>.size)) }
                }
            }
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
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let result = buffer.withUnsafeMutableBytes { b in
                Result { () throws(SystemError) in try IO.receive(fd, into: b, flags: 0, "uevent socket") }
            }
            switch result {
            case .success(.bytes(let n)):
                if let event = Uevent(buffer[..<n]) { onEvent(event) }
            case .success(.wouldBlock), .success(.endOfFile):
                return
            case .failure(let error):
                // ENOBUFS: events were lost; the owner probes on the next one.
                Log.warning("\(error)")
                if error.errno != Errno(rawValue: ENOBUFS) { return }
            }
        }
    }
}
