import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

/// Checks attempts against the secrets and hashes new ones. Each result comes back on a
/// later turn of the loop, so the screen shows the attempt being checked before yescrypt
/// runs (the redraw asked for with the attempt is drawn first).
final class Verifier {
    private let loop: EventLoop
    private let secrets: StateStore
    private let digester: GuessDigester?

    init(loop: EventLoop, secrets: StateStore) {
        self.loop = loop
        self.secrets = secrets
        do { digester = try GuessDigester() } catch {
            Log.error("cannot make guess digests (\(error)); every wrong guess counts")
            digester = nil
        }
    }

    /// Checks `attempt` (its bytes are wiped) and calls `done` with the verdict.
    func check(_ attempt: LockScreen.Attempt, done: @escaping (Session.Verdict) -> Void) {
        loop.deferred { [self] in
            var bytes = attempt.secretBytes
            let verdict = verify(attempt.method, &bytes)
            Log.debug("\(attempt) checked")
            done(verdict)
        }
    }

    /// Hashes a new secret (`bytes` are wiped, shared copies too) and calls `done` with the
    /// hash, or with why it could not be made.
    func hash(_ bytes: [UInt8], done: @escaping (Result<String, SecretHash.Failure>) -> Void) {
        loop.deferred {
            defer { SecretHash.wipeShared(bytes) }
            var secret = bytes
            let result: Result<String, SecretHash.Failure>
            do throws(SecretHash.Failure) { result = .success(try SecretHash.make(&secret)) } catch { result = .failure(error) }
            done(result)
        }
    }

    /// The method's secret, and for codes the duress code too, always both so the time
    /// taken does not tell which matched. `secret` is wiped.
    private func verify(_ method: UnlockMethod, _ secret: inout [UInt8]) -> Session.Verdict {
        defer { SecretHash.wipe(&secret) }
        var a = secret
        let match = secrets.secretHash(for: method).map { SecretHash.verify(&a, against: $0) } ?? false
        var duress = false
        if method == .code, let d = secrets.duressHash {
            var b = secret
            duress = SecretHash.verify(&b, against: d)
        }
        if match { return .match(duress: false) }
        if duress { return .match(duress: true) }
        var c = secret
        return .wrong(digest: digester?.digest(&c))
    }
}
