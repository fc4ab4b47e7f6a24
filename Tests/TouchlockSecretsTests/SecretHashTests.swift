import Testing
import TouchlockCore
@testable import TouchlockSecrets

@Suite struct SecretHashTests {
    @Test func aPatternHashesToASaltedYescryptHashThatOnlyItMatches() throws {
        let right = Pattern(rows: 3, columns: 3, nodes: [0, 1, 2, 5, 8])
        var b1 = right.secretBytes, b2 = right.secretBytes
        let h1 = try SecretHash.make(&b1), h2 = try SecretHash.make(&b2)
        #expect(h1.hasPrefix("$y$"))
        #expect(h1 != h2)                      // a fresh salt each time
        #expect(!h1.contains("0-1-2-5-8"))
        #expect(b1.isEmpty)                    // the secret was wiped
        var again = right.secretBytes
        #expect(SecretHash.verify(&again, against: h1))
        var wrong = Pattern(rows: 3, columns: 3, nodes: [0, 1, 2, 5, 7]).secretBytes
        #expect(!SecretHash.verify(&wrong, against: h1))
        // The same nodes on another grid are another secret.
        var otherGrid = Pattern(rows: 4, columns: 4, nodes: [0, 1, 2, 5, 8]).secretBytes
        #expect(!SecretHash.verify(&otherGrid, against: h1))
        var garbage = right.secretBytes
        #expect(!SecretHash.verify(&garbage, against: "not a hash"))
    }

    @Test func aSharedWipeZeroesEveryCopy() {
        let handed: [UInt8] = Array("pattern:3x3:0-4-8-5".utf8)
        let kept = handed  // another holder of the same storage, as in an action list
        SecretHash.wipeShared(handed)
        #expect(kept.count == 19 && kept.allSatisfy { $0 == 0 })
    }

    @Test func constantTimeComparisonComparesWholeValues() {
        #expect(SecretHash.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!SecretHash.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!SecretHash.constantTimeEqual([1, 2], [1, 2, 0]))
    }
}
