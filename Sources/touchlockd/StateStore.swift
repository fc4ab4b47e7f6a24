import Glibc
import TouchlockControl
import TouchlockCore
import TouchlockSystem

/// What is kept across restarts, in one file written durably: the lockout record and the
/// enrolled secrets. It is also where the secrets attempts are checked against are owned,
/// with their precedence stated once (see `secretHash`).
final class StateStore {
    let path: String
    private let bootID: String?
    /// As last stored.
    private(set) var stored: StoredState
    private let configuredPattern: String?
    private let configuredCode: String?
    /// Why the file was refused at start-up (damaged or unreadable), until a whole
    /// record is written.
    private(set) var damage: String?

    /// Why the file or its directory is not trusted (owned by another user, or writable
    /// by others: anyone who can write it can forge a record): nothing read from it is
    /// used, no attempt is accepted and nothing is written there until root puts it right
    /// and restarts the daemon.
    let untrusted: String?

    init(path: String, bootID: String?, stored: StoredState, config: Config, damage: String? = nil,
         untrusted: String? = nil) {
        self.untrusted = untrusted
        self.path = path
        self.bootID = bootID
        self.stored = stored
        self.damage = damage
        configuredPattern = config.patternHash
        configuredCode = config.screens.codeHash
    }

    /// Whether the stored record was written during this boot (its deadline is on this
    /// boot's monotonic clock).
    var sameBoot: Bool { stored.bootID != nil && stored.bootID == bootID }

    /// The hash an attempt by `method` is checked against. The config files are the
    /// fleet's source of truth (secrets.conf, pushed by configuration management): a
    /// secret there wins over one enrolled (stored in the state file), which is then
    /// shadowed (`shadowed`: logged at start and at its enrollment, and in status).
    func secretHash(for method: UnlockMethod) -> String? {
        switch source(for: method) {
        case .config: configured(method)
        case .enrolled: enrolled(method)
        case nil: nil
        }
    }

    /// Where the secret of `method` that counts comes from; nil: there is none.
    func source(for method: UnlockMethod) -> Status.SecretSource? {
        if configured(method) != nil { return .config }
        if enrolled(method) != nil { return .enrolled }
        return nil
    }

    /// Why a secret of `method` enrolled now would not count (the config files set one,
    /// which wins); nil when it would.
    func enrollmentShadowed(_ method: UnlockMethod) -> String? {
        guard configured(method) != nil else { return nil }
        return "the config files set the \(method.rawValue) (secrets.conf), which wins over an enrolled one: set it there (touchlockctl set-secret) or remove it there first"
    }

    /// The methods whose enrolled secret does not count: the config files set one too.
    var shadowed: [UnlockMethod] {
        [UnlockMethod.pattern, .code].filter { configured($0) != nil && enrolled($0) != nil }
    }

    /// Says that the enrolled secret of `method` does not count, if so.
    func logShadowed(_ method: UnlockMethod) {
        guard shadowed.contains(method) else { return }
        Log.event(.secretShadowed, .warning,
                  "the \(method.rawValue) enrolled in \(path) does not count: the config files set one, which wins (remove it there to use the enrolled one)",
                  [.init("TOUCHLOCK_METHOD", method.rawValue), .init("TOUCHLOCK_SOURCE", Status.SecretSource.config.rawValue)])
    }

    private func configured(_ method: UnlockMethod) -> String? {
        switch method {
        case .pattern: configuredPattern
        case .code: configuredCode
        case .service: nil
        }
    }

    private func enrolled(_ method: UnlockMethod) -> String? {
        switch method {
        case .pattern: stored.patternHash
        case .code: stored.codeHash
        case .service: nil
        }
    }

    /// The duress code's hash: enrolled only, never in the config files.
    var duressHash: String? { stored.duressHash }

    /// The secrets an attempt by `method` is checked against, each with its hash (nil:
    /// none): the method's own, and on the code pad the duress code too.
    func candidates(for method: UnlockMethod) -> [(kind: SecretKind, hash: String?)] {
        switch method {
        case .pattern: [(.pattern, secretHash(for: .pattern))]
        case .code: [(.code, secretHash(for: .code)), (.duress, duressHash)]
        case .service: []  // checked against the device key (ServiceCodes), never here
        }
    }

    /// The methods with a secret.
    var enrolled: [UnlockMethod] {
        [UnlockMethod.pattern, .code].filter { secretHash(for: $0) != nil }
    }

    /// Why the state file was not written; what was stored before stays as it was.
    enum WriteError: Error, Equatable, CustomStringConvertible {
        /// The file or its directory is not trusted (`untrusted` says why): nothing is
        /// written there.
        case untrusted(String)
        /// Making the directory, writing, syncing or renaming failed.
        case failed(Errno)

        var description: String {
            switch self {
            case .untrusted(let why): "the state file is not trusted: \(why)"
            case .failed(let errno): "\(errno)"
            }
        }
    }

    /// Writes the state file with `record`, or says why it is not on disk.
    func store(_ record: LockoutRecord) throws(WriteError) {
        var next = stored
        next.lockout = record
        do { try write(next) } catch {
            Log.error("cannot store \(record.failures) failure(s) in \(path): \(error); input stays blocked")
            throw error
        }
    }

    /// Stores (or with nil removes) the hash of the secret `kind`.
    func setSecret(_ kind: SecretKind, hash: String?) throws(WriteError) {
        var next = stored
        switch kind {
        case .pattern: next.patternHash = hash
        case .code: next.codeHash = hash
        case .duress: next.duressHash = hash
        }
        do { try write(next) } catch {
            Log.error("cannot store the \(kind.rawValue) secret in \(path): \(error)")
            throw error
        }
        switch kind {
        case .pattern: logShadowed(.pattern)
        case .code: logShadowed(.code)
        case .duress: break
        }
    }

    /// Writes `state` durably and keeps it.
    private func write(_ state: StoredState) throws(WriteError) {
        if let untrusted { throw .untrusted(untrusted) }
        var state = state
        state.bootID = bootID
        do {
            try DurableFile.makeDirectory(DurableFile.directory(of: path))
            try DurableFile.replace(path, with: Array(state.text.utf8))
        } catch {
            throw .failed(error.errno)
        }
        stored = state
        damage = nil
    }
}
