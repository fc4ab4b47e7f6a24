import Glibc
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

/// The flags and locked size of the mapping holding `address`, from /proc/self/smaps.
private func mapping(containing address: UInt) -> (flags: [String], lockedKB: Int)? {
    guard let f = fopen("/proc/self/smaps", "re") else { return nil }
    defer { fclose(f) }
    var line = [CChar](repeating: 0, count: 4096)
    var inside = false
    var locked = 0
    while fgets(&line, Int32(line.count), f) != nil {
        let text = String(cString: line).trimmingCharacters(in: "\n")
        let fields = text.split(separator: " ", omittingEmptySubsequences: true)
        if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
            let ends = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
            inside = ends.count == 2 && ends[0] <= address && address < ends[1]
            continue
        }
        guard inside else { continue }
        if fields.first == "Locked:", fields.count > 1 { locked = Int(fields[1]) ?? 0 }
        if fields.first == "VmFlags:" { return (fields.dropFirst().map(String.init), locked) }
    }
    return nil
}

private extension String {
    func trimmingCharacters(in set: Character) -> String { String(filter { $0 != set }) }
}

@Suite struct SecretBufferTests {
    @Test func aSecretBufferIsLockedInMemoryAndLeftOutOfCoreDumpsWhileItLives() throws {
        var secret = Array("code:2468".utf8)
        var address: UInt = 0
        do {
            let buffer = try SecretBuffer(taking: &secret)
            address = buffer.address
            #expect(secret.isEmpty)  // the array was wiped
            #expect(buffer.withUnsafeBytes { Array($0) } == Array("code:2468".utf8))
            let m = mapping(containing: address)
            #expect(m?.flags.contains("dd") == true, "\(String(describing: m))")
            if getuid() == 0 {
                // Root has CAP_IPC_LOCK: the pages are locked, never swapped out.
                #expect(buffer.isLocked)
                #expect(m?.flags.contains("lo") == true, "\(String(describing: m))")
                #expect((m?.lockedKB ?? 0) >= 4)
            }
            buffer.wipe()
            #expect(buffer.count == 0)
            #expect(buffer.withUnsafeBytes { $0.count } == 0)
        }
        // Once released its pages are unmapped; that is not checked here, since tests
        // running at the same time may map a buffer of their own at the same address.
        _ = address
    }

    @Test func hashingAndCheckingFromALockedBufferMatchTheArrayForm() throws {
        var a = Array("pattern:3x3:0-4-8-5".utf8)
        let hash = try SecretHash.make(&a)
        var b = Array("pattern:3x3:0-4-8-5".utf8)
        let locked = try SecretBuffer(taking: &b)
        #expect(SecretHash.verify(locked, against: hash))
        #expect(SecretHash.verify(locked, against: hash))  // left as it is: checked twice
        var wrong = Array("pattern:3x3:0-4-8-7".utf8)
        #expect(!SecretHash.verify(try SecretBuffer(taking: &wrong), against: hash))
        let digester = try GuessDigester()
        var c = Array("pattern:3x3:0-4-8-5".utf8)
        #expect(digester.digest(locked) == digester.digest(&c))
        #expect(!digester.digest(locked).isEmpty)
    }
}
