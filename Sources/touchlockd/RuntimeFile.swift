import TouchlockCore
import TouchlockSystem

/// The runtime record's file (`RuntimeRecord`), beside the control socket and named after
/// it (/run/touchlock/touchlock.sock: /run/touchlock/touchlock.runtime), one per daemon:
/// root's, 0600, on the tmpfs the socket is on, so it is gone at the next boot.
struct RuntimeFile {
    let path: String

    /// Beside `socketPath`.
    init(besideSocket socketPath: String) {
        path = (socketPath.hasSuffix(".sock") ? String(socketPath.dropLast(5)) : socketPath) + ".runtime"
    }

    /// The record the daemon before this one left; a missing, unreadable or untrusted one
    /// reads as locked.
    func load() -> RuntimeRecord {
        do {
            guard let (bytes, info) = try DurableFile.readWithOwner(path) else { return RuntimeRecord() }
            // Trusted as the state file is: root's or ours, and nobody else may write it.
            if let why = FileTrust.distrust(path, file: info) {
                Log.warning("\(why); starting locked")
                return RuntimeRecord()
            }
            return RuntimeRecord.read(bytes)
        } catch {
            Log.warning("\(error); starting locked")
            return RuntimeRecord()
        }
    }

    /// Writes `record`; the error, if it could not be.
    func save(_ record: RuntimeRecord) -> String? {
        do {
            try DurableFile.replace(path, with: Array(record.text.utf8))
            return nil
        } catch {
            return "\(error)"
        }
    }
}
