import Testing
@testable import TouchlockSecrets

@Suite struct VerifierMessagesTests {
    @Test func requestsAndRepliesSurviveTheWire() {
        let requests: [VerifierRequest] = [
            .verify(id: 1, hashes: ["$y$j9T$abc$def", nil], secret: Array("code:1234".utf8)),
            .verify(id: 0xFFFF_FFFE, hashes: [], secret: []),
            .hash(id: 7, secret: Array("pattern:3x3:0-1-2-5".utf8)),
        ]
        for r in requests { #expect(VerifierRequest.decode(r.encoded()) == r) }
        let replies: [VerifierReply] = [
            .verified(id: 1, matched: nil, digest: Array("xyz".utf8)),
            .verified(id: 2, matched: 1, digest: []),
            .hashed(id: 3, .success("$y$j9T$salt$hash")),
            .hashed(id: 4, .failure(.init("crypt_r: no"))),
        ]
        for r in replies { #expect(VerifierReply.decode(r.encoded()) == r) }
    }

    @Test func cutOrPaddedRequestsAreRefused() {
        let whole = VerifierRequest.verify(id: 9, hashes: ["$y$j9T$abc$def"], secret: Array("code:1234".utf8)).encoded()
        for n in 0..<whole.count { #expect(VerifierRequest.decode(Array(whole.prefix(n))) == nil, "cut at \(n)") }
        #expect(VerifierRequest.decode(whole + [0]) == nil)
        #expect(VerifierRequest.decode([9, 0, 0, 0, 0]) == nil)
    }

    @Test func theVerifierTellsWhichHashMatchedAndDigestsAWrongGuess() throws {
        var a = Array("code:2468".utf8), d = Array("code:1357".utf8)
        let code = try SecretHash.make(&a), duress = try SecretHash.make(&d)
        let digester = try GuessDigester()
        let right = serve(.verify(id: 1, hashes: [code, duress], secret: Array("code:2468".utf8)), digester: digester)
        #expect(right == .verified(id: 1, matched: 0, digest: []))
        let forced = serve(.verify(id: 2, hashes: [code, duress], secret: Array("code:1357".utf8)), digester: digester)
        #expect(forced == .verified(id: 2, matched: 1, digest: []))
        let wrong = serve(.verify(id: 3, hashes: [code, duress], secret: Array("code:0000".utf8)), digester: digester)
        let again = serve(.verify(id: 4, hashes: [code, duress], secret: Array("code:0000".utf8)), digester: digester)
        guard case .verified(_, nil, let d1) = wrong, case .verified(_, nil, let d2) = again else {
            Issue.record("\(wrong) \(again)")
            return
        }
        #expect(!d1.isEmpty && d1 == d2)  // the same wrong guess is recognised
        #expect(!String(decoding: d1, as: UTF8.self).contains("0000"))
        guard case .hashed(5, .success(let h)) = serve(.hash(id: 5, secret: Array("code:9999".utf8)), digester: nil) else {
            Issue.record("no hash")
            return
        }
        var check = Array("code:9999".utf8)
        #expect(SecretHash.verify(&check, against: h))
    }
}
