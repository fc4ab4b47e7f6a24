import Testing
import TouchlockCore

private let hashA = "$y$j9T$abcdefghijklmnop$qrstuvwxyz0123456789"
private let hashB = "$y$j9T$ponmlkjihgfedcba$9876543210zyxwvutsrq"
private let now = Instant(microseconds: 5_000_000_000)

private func record(failures: Int, deadline: Bool, hashes: Bool) -> StoredState {
    var s = StoredState()
    s.bootID = "5b0c6a4e-1111-2222-3333-444455556666"
    s.lockout = LockoutRecord(failures: failures, deadline: deadline ? Instant(microseconds: 9_999_000_000) : nil)
    if hashes { s.patternHash = hashA; s.codeHash = hashB; s.duressHash = hashA }
    return s
}

/// The failure count the daemon starts from for a reading (same boot).
private func startingFailures(_ r: StoredState.Reading, damagedCount: Int = 10) -> Int {
    switch r {
    case .missing: 0
    case .whole(let s): s.lockout.restored(sameBoot: true, now: now, schedule: .gatekeeper).failures
    case .damaged(_, let salvaged):
        LockoutRecord.damaged(readable: salvaged.lockout.failures, damagedCount: damagedCount, now: now,
                              schedule: .gatekeeper).failures
    }
}

@Suite struct StoredStateTests {
    @Test func aRecordCutAtAnyByteNeverYieldsFewerFailuresThanTheWholeRecord() {
        for failures in [0, 1, 4, 5, 9, 10, 12, 19, 25] {
            for (deadline, hashes) in [(false, false), (true, false), (false, true), (true, true)] {
                let whole = record(failures: failures, deadline: deadline, hashes: hashes)
                let bytes = Array(whole.text.utf8)
                guard case .whole(let back) = StoredState.read(bytes) else {
                    Issue.record("the whole record was refused: \(whole.text)")
                    continue
                }
                #expect(back == whole)
                let failuresLineEnd = bytes.count - Array(whole.text.utf8.split(separator: UInt8(ascii: "\n"),
                    omittingEmptySubsequences: false).drop { !$0.starts(with: Array("failures".utf8)) }
                    .dropFirst().joined(separator: [UInt8(ascii: "\n")])).count
                for cut in 0..<bytes.count {
                    let reading = StoredState.read(Array(bytes[..<cut]))
                    guard case .damaged(_, let salvaged) = reading else {
                        Issue.record("a record cut at byte \(cut) of \(bytes.count) was read as \(reading)")
                        continue
                    }
                    // The check fails, so no secret of a cut record is used.
                    #expect(salvaged.enrolled.isEmpty && salvaged.duressHash == nil)
                    let n = startingFailures(reading)
                    #expect(n >= 10, "cut at \(cut): \(n) failures")
                    if failures <= 10 { #expect(n >= failures, "cut at \(cut): \(n) < \(failures)") }
                    // A count above damaged_count survives when its line is whole.
                    if cut >= failuresLineEnd { #expect(n >= failures, "cut at \(cut) after the count: \(n) < \(failures)") }
                }
            }
        }
    }

    @Test func anyChangedByteIsDamage() {
        let bytes = Array(record(failures: 7, deadline: true, hashes: true).text.utf8)
        for i in bytes.indices {
            for flip: UInt8 in [0x01, 0x20, 0x80] {
                var changed = bytes
                changed[i] ^= flip
                guard case .damaged = StoredState.read(changed) else {
                    Issue.record("byte \(i) (\(bytes[i])) ^ \(flip) went unnoticed")
                    continue
                }
            }
        }
    }

    @Test func onlyAMissingFileStartsFromZero() {
        #expect(StoredState.read(nil) == .missing)
        #expect(startingFailures(.missing) == 0)
        let empty = StoredState.read([])
        guard case .damaged(let why, _) = empty else { Issue.record("an empty file was read as \(empty)"); return }
        #expect(why.contains("empty"))
        #expect(startingFailures(empty) == 10)
        // A smaller damaged_count is still never zero.
        #expect(startingFailures(empty, damagedCount: 1) == 1)
    }

    @Test func aRecordOfTheOldFormatIsDamageAndItsSecretsAreNotUsed() {
        let old = "# touchlock state: written by touchlockd; do not edit while it runs\nversion = 1\nfailures = 3\npattern_hash = \(hashA)\n"
        let r = StoredState.read(Array(old.utf8))
        guard case .damaged(let why, let salvaged) = r else { Issue.record("read as \(r)"); return }
        #expect(why.contains("version 1"))
        #expect(salvaged.patternHash == nil)
        #expect(salvaged.lockout.failures == 3)
        #expect(startingFailures(r) == 10)
    }

    @Test func aSealedRecordOfAnUnknownVersionKeepsItsSecretsButNotItsCount() {
        let text = StoredState.sealed("version = 3\nfailures = 2\npattern_hash = \(hashA)\nwhatever = 1\n")
        let r = StoredState.read(Array(text.utf8))
        guard case .damaged(let why, let salvaged) = r else { Issue.record("read as \(r)"); return }
        #expect(why.contains("unknown version 3"))
        #expect(salvaged.patternHash == hashA)
        #expect(startingFailures(r) == 10)
    }

    @Test func requiredLinesAndOrder() {
        func damaged(_ content: String) -> String? {
            if case .damaged(let why, _) = StoredState.read(Array(StoredState.sealed(content).utf8)) { return why }
            return nil
        }
        #expect(damaged("version = 2\n")?.contains("no failures line") == true)
        #expect(damaged("failures = 2\nversion = 2\n")?.contains("the version must come first") == true)
        #expect(damaged("# just a comment\n")?.contains("no version line") == true)
        #expect(damaged("version = 2\nfailures = -1\n")?.contains("not a count") == true)
        #expect(damaged("version = 2\nfailures = 0\n") == nil)
        // Anything after the check is damage too.
        let trailing = StoredState.sealed("version = 2\nfailures = 0\n") + "failures = 0\n"
        if case .whole = StoredState.read(Array(trailing.utf8)) { Issue.record("a line after the check was accepted") }
    }

    @Test func aCountBeyondTheLargestReadsAsTheLargest() throws {
        let big = try StoredState(parsing: StoredState.sealed("version = 2\nfailures = 99999999999999999999999\n"))
        #expect(big.lockout.failures == LockoutRecord.maximumFailures)
        let max = try StoredState(parsing: StoredState.sealed("version = 2\nfailures = 9223372036854775807\n"))
        #expect(max.lockout.failures == Int.max)
        // Damaged, the salvaged count is read the same way.
        guard case .damaged(_, let salvaged) = StoredState.read(Array("version = 2\nfailures = 123456789012345678901234567890\n".utf8)) else {
            Issue.record("an unchecked file was taken whole")
            return
        }
        #expect(salvaged.lockout.failures == Int.max)
        #expect(LockoutRecord.damaged(readable: Int.max, damagedCount: 10, now: now, schedule: .gatekeeper).failures == Int.max)
    }

    @Test func aRecordOfTheSameBootWithFailuresButNoDeadlineArmsTheFullWait() {
        let r = LockoutRecord(failures: 5, deadline: nil).restored(sameBoot: true, now: now, schedule: .gatekeeper)
        #expect(r == LockoutRecord(failures: 5, deadline: now + .milliseconds(60_000)))
        // With its deadline the remaining wait is kept, and a past one is over.
        let ahead = LockoutRecord(failures: 5, deadline: now + .milliseconds(10_000))
        #expect(ahead.restored(sameBoot: true, now: now, schedule: .gatekeeper) == ahead)
        let past = LockoutRecord(failures: 5, deadline: Instant(microseconds: 1))
        #expect(past.restored(sameBoot: true, now: now, schedule: .gatekeeper) == LockoutRecord(failures: 5))
        // Free failures have no wait to arm.
        #expect(LockoutRecord(failures: 3).restored(sameBoot: true, now: now, schedule: .gatekeeper) == LockoutRecord(failures: 3))
    }

    @Test func theDefaultDamagedCountIsAFourHourWait() throws {
        var c = Config()
        #expect(c.damagedCount == 10)
        #expect(c.lockoutSchedule.wait(after: c.damagedCount) == .milliseconds(14_580_000))  // 4 h 3 min
        try c.set(section: "lockout", key: "damaged_count", value: "12")
        #expect(c.damagedCount == 12)
        #expect(throws: Config.BadValue.self) { try c.set(section: "lockout", key: "damaged_count", value: "0") }
        #expect(c.text.contains("damaged_count = 12"))
    }

    @Test func theCrcIsZlibs() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
    }
}

@Suite struct HostileInputTests {
    @Test func aQuirkOptionStartingWithEqualsIsAnErrorNotATrap() {
        for text in ["\"panel\" =", "\"panel\" =x", "0eef:0001 = swap_xy", "\"panel\" x= ==", "\"panel\" calibration="] {
            #expect(throws: InputQuirk.ParseError.self, "\(text)") { try InputQuirk.parse(text) }
        }
        var c = Config()
        #expect(throws: Config.BadValue.self) { try c.apply(settings: "input_quirk = \"panel\"=\n") }
    }

    @Test func anEvemuTimeOutOfRangeIsAnErrorNamingItsLine() {
        for time in ["99999999999999.000000", "9223372036854.775808", "-1.000000", "1.1000000", "1.", ".5", "1.-5"] {
            let text = "# EVEMU 1.3\nE: 0.000001 0000 0000 0\nE: \(time) 0000 0000 0\n"
            #expect(throws: EvemuRecording.ParseError.self, "\(time)") { try EvemuRecording(parsing: text) }
            do { _ = try EvemuRecording(parsing: text) } catch { #expect(error.line == 3) }
        }
        // The largest time that fits still reads.
        let edge = try? EvemuRecording(parsing: "E: 9223372036854.775806 0000 0000 0\n")
        #expect(edge?.events.first?.time == Instant(microseconds: Int64.max - 1))
    }

    @Test func aMaskLongerThanAnyCodeIsAnError() {
        let long = "B: 01 " + Array(repeating: "ff", count: 8200).joined(separator: " ") + "\n"
        #expect(throws: EvemuRecording.ParseError.self) { try EvemuRecording(parsing: long) }
    }

    @Test func aDescriptionClaimingBillionsOfSlotsGetsAFewHundred() throws {
        let rec = try EvemuRecording(parsing: "N: panel\nA: 2f 0 2147483647 0 0 0\nA: 35 0 100 0 0 0\nA: 36 0 100 0 0 0\n")
        #expect(rec.slotCount == DeviceDescription.maxSlots)
        #expect(rec.description?.slotCount == DeviceDescription.maxSlots)
        let negative = try EvemuRecording(parsing: "N: panel\nA: 2f 0 -5 0 0 0\n")
        #expect(negative.slotCount == 1)
    }

    @Test func timeArithmeticSaturates() {
        let far = Instant(microseconds: Int64.max - 5)
        #expect(far + .milliseconds(1000) == Instant(microseconds: Int64.max))
        #expect(Instant(microseconds: Int64.min + 5) - Instant(microseconds: 10) == Interval(microseconds: Int64.min))
        #expect(Interval.milliseconds(Int64.max / 10).microseconds == Int64.max)
        #expect(Instant(seconds: Int.max, microseconds: 0).microseconds == Int64.max)
        #expect(Interval(microseconds: Int64.max).countdown.hasSuffix("h"))
    }

    @Test func brokenAxisRangesAndWildCalibrationsMapToFinitePoints() {
        let screen = Size(width: 800, height: 480)
        let inverted = AxisRange(minimum: 0, maximum: -1)
        for (range, cal) in [(inverted, nil), (AxisRange(minimum: Int32.min, maximum: Int32.max), AffineMatrix(1e308, 1e308, 0, 0, 1, 0)),
                             (AxisRange(minimum: 5, maximum: 5), AffineMatrix(.nan, 0, 0, 0, 1, 0))] as [(AxisRange, AffineMatrix?)] {
            let t = TouchTransform(x: range, y: range, screen: screen, calibration: cal)
            for v in [Int32.min, -1, 0, 5, Int32.max] {
                let p = t.map(DevicePoint(x: v, y: v))
                #expect(p.x.isFinite && p.y.isFinite, "\(range) \(String(describing: cal)) \(v): \(p)")
            }
        }
    }

    @Test func previewStatesThatAreNotStatesAreErrors() {
        let density = Density(screen: Size(width: 640, height: 400), physicalMillimetres: nil, override: nil)
        for state in ["", ":", "error:-3", "lockout:x"] {
            #expect(throws: Preview.Failure.self, "\(state)") {
                try Preview.lockScreen(config: Config(), screen: .code, state: state, size: Size(width: 640, height: 400), density: density)
            }
        }
    }
}
