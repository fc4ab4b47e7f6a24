import Glibc
import Synchronization
import TouchlockCore
import TouchlockSystem

/// Memory for a secret while it is hashed or compared: pages of its own, locked in RAM
/// (mlock) so they are never written to swap, left out of core dumps (MADV_DONTDUMP),
/// and zeroed before they are given back. swaylock keeps its password buffer the same
/// way. Where locking is refused (EPERM without CAP_IPC_LOCK, ENOMEM over
/// RLIMIT_MEMLOCK) the buffer still works, and the refusal is logged once per process.
public final class SecretBuffer {
    /// Bytes it can hold.
    public let capacity: Int
    /// Bytes it holds.
    public private(set) var count = 0
    /// Whether its pages are locked in RAM.
    public let isLocked: Bool
    private let base: UnsafeMutableRawPointer
    private let mapped: Int

    private static let refusalLogged = Atomic<Bool>(false)

    /// An empty buffer of at least `capacity` bytes (whole pages).
    public init(capacity: Int) throws(SystemError) {
        let page = max(4096, Int(sysconf(Int32(_SC_PAGESIZE))))
        mapped = max(1, (capacity + page - 1) / page) * page
        self.capacity = mapped
        guard let p = mmap(nil, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              p != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw SystemError("mmap", .current, "\(mapped) bytes for a secret")
        }
        base = p
        _ = madvise(p, mapped, MADV_DONTDUMP)
        if mlock(p, mapped) == 0 {
            isLocked = true
        } else {
            let why = Errno.current
            isLocked = false
            if !Self.refusalLogged.exchange(true, ordering: .relaxed) {
                Log.warning("cannot lock secret buffers in memory (mlock: \(why)); they may reach swap")
            }
        }
    }

    /// A buffer holding `secret`, which is wiped.
    public convenience init(taking secret: inout [UInt8], extra: Int = 0) throws(SystemError) {
        defer { SecretHash.wipe(&secret) }
        try self.init(capacity: secret.count + extra)
        append(secret)
    }

    deinit {
        explicit_bzero(base, mapped)
        if isLocked { munlock(base, mapped) }
        munmap(base, mapped)
    }

    /// Adds `bytes` at the end; what does not fit is dropped (the capacity is chosen
    /// for the secret, so this is a bug).
    public func append(_ bytes: some Collection<UInt8>) {
        for b in bytes {
            guard count < capacity else {
                Log.bug("secret buffer of \(capacity) bytes overflowed")
                return
            }
            base.storeBytes(of: b, toByteOffset: count, as: UInt8.self)
            count += 1
        }
    }

    /// The bytes held, for the duration of `body` only.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Its whole capacity, for a C function that writes a secret into it (recv); the
    /// bytes written are not counted in `count`.
    public func withUnsafeMutableStorage<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: base, count: capacity))
    }

    /// The whole buffer, for C functions that write into it.
    func withUnsafeMutableRaw<R, E: Error>(_ body: (UnsafeMutableRawPointer) throws(E) -> R) throws(E) -> R {
        try body(base)
    }

    /// Where it is, for checks of its mapping (`/proc/self/smaps`).
    public var address: UInt { UInt(bitPattern: base) }

    /// Zeroes it and empties it.
    public func wipe() {
        explicit_bzero(base, mapped)
        count = 0
    }
}
