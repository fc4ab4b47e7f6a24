import Glibc
import TouchlockCore
import TouchlockSystem

/// The runtime record's file (`RuntimeRecord`), beside the control socket and named after
/// it (/run/touchlock/touchlock.sock: /run/touchlock/touchlock.runtime), one per daemon:
/// root's, 0600, on the tmpfs the socket is on, so it is gone at the next boot; written
/// with the boot's id, so that on a /run that is not a tmpfs the next boot reads none.
struct RuntimeFile {
    let path: String
    /// This boot's id, written in the record; a record with another is not read.
    let bootID: String?

    /// Beside `socketPath`.
    init(besideSocket socketPath: String, bootID: String? = BootID.current()) {
        path = (socketPath.hasSuffix(".sock") ? String(socketPath.dropLast(5)) : socketPath) + ".runtime"
        self.bootID = bootID
    }

    /// The hand-back marker, beside the record (/run/touchlock/touchlock.hand-back): the
    /// package's prerm makes it before a removal stops the daemon, which then gives the
    /// screen back even while locked (with no lock screen to come, a machine left with VT
    /// switching locked would stay unusable).
    var handBackPath: String { String(path.dropLast(".runtime".count)) + ".hand-back" }

    /// The shutdown marker, beside the record (/run/touchlock/touchlock.shutdown):
    /// touchlock-shutdown.service, stopped just before touchlockd at a system shutdown,
    /// makes it; the daemon then lets go of the screen while locked (`Cover.Exit.release`)
    /// so that the shutdown's splash can take it.
    var shutdownPath: String { String(path.dropLast(".runtime".count)) + ".shutdown" }

    /// Whether the marker at `markerPath` is there, root's and written by nobody else;
    /// taken away either way, so that it counts for one stop only.
    func takeMarker(_ markerPath: String) -> Bool {
        let info: FileContents.Info?
        do { info = try DurableFile.readWithOwner(markerPath)?.info } catch {
            Log.warning("\(error)")
            info = nil
        }
        do { try DurableFile.remove(markerPath) } catch { Log.warning("\(error)") }
        guard let info else { return false }
        if let why = FileTrust.distrust(markerPath, file: info) {
            Log.warning("\(why): not followed")
            return false
        }
        return true
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
            let boot = BootID.startedAt()
            return RuntimeRecord.read(bytes, thisBoot: bootID, writtenThisBoot: boot.map { info.changed >= $0 } ?? false)
        } catch {
            Log.warning("\(error); starting locked")
            return RuntimeRecord()
        }
    }

    /// Writes `record`; the error, if it could not be. The record before it is removed
    /// then (it may say unlocked where `record` says locked): with none, the next daemon
    /// starts locked. The error says whether that could be done.
    func save(_ record: RuntimeRecord) -> String? {
        var record = record
        record.bootID = bootID
        do {
            try DurableFile.replace(path, with: Array(record.text.utf8))
            return nil
        } catch {
            if SystemCalls.current.unlink(path) != 0 {
                let e = Errno.current
                if e != .noEntry { return "\(error), and the record before it cannot be removed (\(e)): a restart reads what it said" }
            }
            return "\(error); the record before it removed: a restart will start locked"
        }
    }
}
