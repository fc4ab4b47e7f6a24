/// What touchlockd keeps for the daemon after it within one boot, beside the control
/// socket (/run/touchlock/touchlock.runtime: a tmpfs, gone at the next boot; the boot's
/// id in it for a /run that is not): whether the device
/// was locked, and the VT the screen goes back to after the unlock. A restart, a crash or
/// the watchdog's kill then comes back as it was: locked if it was (the lock screen over
/// the app again, handing back to the right VT), unlocked if it was (the app left alone).
///
///     # touchlock runtime record: written by touchlockd
///     locked = no
///     unlocked_by = pattern
///     unlocked_at_us = 812345678      CLOCK_MONOTONIC, microseconds
///     return_vt = 1
///     vt = 8                          the daemon's own VT
///     boot_id = 0c4f…                 the kernel's id of the boot it was written in
///
/// Anything missing, unreadable or unknown reads as locked: the record can only ever
/// make a daemon start locked, or start unlocked where the one before it was unlocked.
/// A record of another boot, or with no boot id, is no record at all.
public struct RuntimeRecord: Hashable, Sendable {
    /// Unlocked since `at` by `method`; nil: locked (or not known to be unlocked).
    public var unlocked: (method: UnlockMethod, at: Instant)? {
        get { unlockedBy.flatMap { m in unlockedAt.map { (m, $0) } } }
        set {
            unlockedBy = newValue?.method
            unlockedAt = newValue?.at
        }
    }
    private var unlockedBy: UnlockMethod?
    private var unlockedAt: Instant?
    /// The VT the screen goes back to at the hand-back.
    public var returnVT: Int?
    /// The daemon's own VT: the one after it takes the same (with `[display] vt = auto` the
    /// first free VT could be another once the one before it has exited).
    public var ownVT: Int?
    /// The boot it was written in (/proc/sys/kernel/random/boot_id).
    public var bootID: String?

    public init(unlocked: (method: UnlockMethod, at: Instant)? = nil, returnVT: Int? = nil, ownVT: Int? = nil,
                bootID: String? = nil) {
        self.unlocked = unlocked
        self.returnVT = returnVT
        self.ownVT = ownVT
        self.bootID = bootID
    }

    public var text: String {
        var out = "# touchlock runtime record: written by touchlockd\n"
        if let (m, at) = unlocked {
            out += "locked = no\nunlocked_by = \(m.rawValue)\nunlocked_at_us = \(at.microseconds)\n"
        } else {
            out += "locked = yes\n"
        }
        if let vt = returnVT { out += "return_vt = \(vt)\n" }
        if let vt = ownVT { out += "vt = \(vt)\n" }
        if let bootID { out += "boot_id = \(bootID)\n" }
        return out
    }

    /// The record in `bytes`, written in the boot `thisBoot`; a line it does not know makes
    /// it read as locked, with the VT kept if its line was whole. A record of another boot
    /// (or when this boot's is not known) reads as no record: locked, no VT (the numbers of
    /// the boot before say nothing of this one's). A record with no boot id, as a daemon
    /// before boot ids wrote it, is read only when its file is known to have been written
    /// in this boot (`writtenThisBoot`: it changed after the boot began): an upgrade of an
    /// unlocked device then does not lock it, and an old record on a /run that outlived a
    /// reboot still reads as none.
    public static func read(_ bytes: [UInt8], thisBoot: String?, writtenThisBoot: Bool = false) -> RuntimeRecord {
        var r = RuntimeRecord()
        var locked: Bool?
        var doubt = false
        for raw in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let line = raw.trimmingBlanks
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingBlanks }
            guard parts.count == 2 else { doubt = true; continue }
            let (key, value) = (parts[0], parts[1])
            switch key {
            case "locked":
                switch value {
                case "yes": locked = true
                case "no": locked = false
                default: doubt = true
                }
            case "unlocked_by": r.unlockedBy = UnlockMethod(rawValue: value)
            case "unlocked_at_us": r.unlockedAt = Int64(value).map { Instant(microseconds: $0) }
            case "return_vt": r.returnVT = Int(value).flatMap { (1...63).contains($0) ? $0 : nil }
            case "vt": r.ownVT = Int(value).flatMap { (1...63).contains($0) ? $0 : nil }
            case "boot_id": r.bootID = value
            default: doubt = true
            }
        }
        switch r.bootID {
        case nil:
            guard writtenThisBoot else { return RuntimeRecord() }
        case let id?:
            guard let thisBoot, id == thisBoot else { return RuntimeRecord() }
        }
        if locked != false || doubt || r.unlocked == nil {
            r.unlockedBy = nil
            r.unlockedAt = nil
        }
        return r
    }
}

extension Substring {
    fileprivate var trimmingBlanks: String {
        String(drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed().drop { $0 == " " || $0 == "\t" || $0 == "\r" }.reversed())
    }
}

extension RuntimeRecord {
    /// Before the lock screen's `actions` are carried out: locked is on record before
    /// anything is taken from the kiosk. True if the record changed (to be written now).
    public mutating func before(_ actions: [LockScreen.Action]) -> Bool {
        guard unlocked != nil, actions.contains(where: \.takesDisplayOrInput) else { return false }
        unlocked = nil
        return true
    }

    /// After them: unlocked is on record once it has been told, so a restart in between
    /// comes back locked. True if the record changed (to be written now).
    public mutating func after(_ actions: [LockScreen.Action]) -> Bool {
        var changed = false
        for case .notify(.unlocked(let m, let at)) in actions {
            unlocked = (m, at)
            changed = true
        }
        return changed
    }
}
