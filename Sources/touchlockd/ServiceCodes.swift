import Glibc
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// One-time service codes on this device (docs/service-codes.md): the device key, read
/// once at start from its root-only file, and the record of the codes used, beside the
/// state file. A key file that is missing, not root's with mode 0600 (no bit for its
/// group or others), in a directory others could write, or not one line of 64 lowercase
/// hex digits leaves the device without service codes, said once in the log; nothing
/// else changes.
final class ServiceCodes {
    let settings: ServiceSettings
    /// The file of the highest time counter used.
    let usedPath: String
    private var key: [UInt8]?
    private var used = UsedServiceCodes()
    /// Why there are no service codes; nil when there are.
    private(set) var absence: String?

    var available: Bool { key != nil }

    init(settings: ServiceSettings, statePath: String, stateUntrusted: Bool) {
        self.settings = settings
        usedPath = ServiceSettings.usedPath(statePath: statePath)
        let path = settings.keyFile
        switch Self.loadKey(path) {
        case .success(let k):
            key = k
        case .failure(.missing):
            absence = "no device key (\(path) does not exist)"
            Log.info("service codes are off: \(path) does not exist")
            return
        case .failure(.refused(let why)):
            absence = "the device key is refused: \(why)"
            Log.error("service codes are off: the device key \(path) is refused: \(why)")
            return
        }
        if stateUntrusted {
            refuse("the state file's directory is not trusted, so used codes cannot be recorded")
            return
        }
        if let why = FileTrust.distrust(directoryOf: usedPath) {
            refuse("the used codes' record cannot be trusted: \(why)")
            return
        }
        do {
            guard let read = try DurableFile.readWithOwner(usedPath) else {
                Log.info("service codes are on (\(settings.digits) digits, \(settings.step) s steps, window ±\(settings.window)); none used yet")
                return
            }
            if let why = FileTrust.distrust(usedPath, file: read.info) {
                refuse("the used codes' record cannot be trusted: \(why)")
                return
            }
            switch UsedServiceCodes.read(read.bytes) {
            case .success(let u):
                used = u
                Log.info("service codes are on (\(settings.digits) digits, \(settings.step) s steps, window ±\(settings.window)); "
                         + "used up to time step \(u.highest.map(String.init) ?? "none")")
            case .failure(let e):
                refuse("the used codes' record \(usedPath) is damaged (\(e)): remove it to use service codes again")
            }
        } catch {
            refuse("the used codes' record cannot be read: \(error)")
        }
    }

    private func refuse(_ why: String) {
        if var k = key { SecretHash.wipe(&k) }
        key = nil
        absence = why
        Log.error("service codes are off: \(why)")
    }

    enum KeyProblem: Error { case missing, refused(String) }

    /// The key in the file at `path`, if the file may be trusted with it.
    static func loadKey(_ path: String) -> Result<[UInt8], KeyProblem> {
        let read: (bytes: [UInt8], info: FileContents.Info)?
        do { read = try DurableFile.readWithOwner(path) } catch { return .failure(.refused("\(error)")) }
        guard let read else { return .failure(.missing) }
        var bytes = read.bytes
        let info = read.info
        defer { SecretHash.wipe(&bytes) }
        let me = geteuid()
        if info.owner != 0 && info.owner != me {
            return .failure(.refused("\(path) is owned by uid \(info.owner), not root: it must be root's, mode 0600"))
        }
        if info.mode & 0o077 != 0 {
            return .failure(.refused("\(path) has mode \(String(info.mode & 0o7777, radix: 8)): it must be 0600 (no access for its group or others)"))
        }
        if let why = FileTrust.distrust(directoryOf: path) { return .failure(.refused(why)) }
        switch ServiceKey.parse(bytes) {
        case .success(let k): return .success(k)
        case .failure(let e): return .failure(.refused("\(path): \(e)"))
        }
    }

    /// Whether `text` has the form of a code here: the configured number of ASCII digits.
    func wellFormed(_ text: String) -> [UInt8]? {
        let bytes = Array(text.utf8)
        guard bytes.count == settings.digits, bytes.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return bytes
    }

    /// Checks `digits` (wiped) against the wall clock; a match is recorded durably
    /// before it is answered, and one that cannot be recorded is refused.
    func verify(_ digits: [UInt8]) -> Session.Verdict {
        var digits = digits
        defer { SecretHash.wipe(&digits) }
        guard let key else {
            Log.bug("service code checked with no device key")
            return .wrong(digest: nil)
        }
        let seconds = Int64(WallClock.now().rounded(.down))
        switch ServiceCrypto.check(digits, key: key, at: seconds, settings: settings, used: used) {
        case .match(let counter):
            let next = used.using(counter)
            do {
                try DurableFile.makeDirectory(DurableFile.directory(of: usedPath))
                try DurableFile.replace(usedPath, with: Array(next.text.utf8))
            } catch {
                Log.error("service code: cannot record it as used in \(usedPath) (\(error)); refused")
                return .wrong(digest: nil)
            }
            used = next
            Log.info("service code: accepted, time step \(counter) recorded as used")
            return .match(duress: false)
        case .used(let counter):
            Log.notice("service code: a code already used (time step \(counter), used up to \(used.highest.map(String.init) ?? "none")) refused")
            return .wrong(digest: nil)
        case .wrong:
            return .wrong(digest: nil)
        }
    }
}
