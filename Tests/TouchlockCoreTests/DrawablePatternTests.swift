import Testing
@testable import TouchlockCore

private func refusal(_ text: String, rows: Int = 3, columns: Int = 3, min: Int = 4) -> Pattern.Undrawable? {
    do {
        _ = try Pattern.drawable(text, on: .unit(rows: rows, columns: columns), minimumLength: min)
        return nil
    } catch {
        return error
    }
}

@Suite struct DrawablePatternTests {
    @Test func aPatternTheFingerCannotDrawAsWrittenIsRefusedNamingWhatItDraws() {
        let p = { (nodes: [Int]) in Pattern(rows: 3, columns: 3, nodes: nodes) }
        #expect(refusal("0-2-5-8") == .passesOver(from: 0, to: 2, over: 1, drawn: p([0, 1, 2, 5, 8])))
        #expect(refusal("0-2-5-8")?.description.contains("drawn, this is 0-1-2-5-8") == true)
        // From 0 to 2 the finger passes over 1, which joins there and cannot come again.
        #expect(refusal("0-2-1-3") == .passesOver(from: 0, to: 2, over: 1, drawn: p([0, 1, 2, 3])))
        #expect(refusal("0-1-0-3") == .repeatedNode(0, drawn: p([0, 1, 3])))
        #expect(refusal("0-1-0-3")?.description == "node 0 is used twice, and a node joins once: drawn, this is 0-1-3")
        #expect(refusal("1-2") == .tooShort(2, minimum: 4))
        #expect(refusal("1-2", min: 2) == nil)
        #expect(refusal("0-1-2-3", min: 10) == .gridTooSmall(nodes: 9, minimum: 10))
        #expect(refusal("0-9-1-2") == .unreadable(.nodeOutOfRange(9)))
        // On a 4x4 grid 0 to 3 passes over 1 and 2; 0 to 6 is a knight move past nothing;
        // 14 to 0 passes within the hit radius of 9 (and 5), off the line: they join too.
        #expect(refusal("0-3-7-11", rows: 4, columns: 4)?.description.contains("drawn, this is 0-1-2-3-7-11") == true)
        #expect(refusal("0-6-7-11", rows: 4, columns: 4) == nil)
        #expect(refusal("14-0-1-2", rows: 4, columns: 4)?.description.hasPrefix("from 14 to 0 the finger passes over 9") == true)
    }

    @Test func whatTheFingerDrawsIsAccepted() {
        for text in ["0-1-2-5-8", "1-0-2-5", "0-5-6-1", "0-4-8-5", "6-4-2-5-8-7", "2-1-0-3-4-5-8-7-6"] {
            #expect(refusal(text) == nil, "\(text)")
        }
        // Once 1 is chosen, 0 to 2 passes over nothing new.
        #expect(try! Pattern.drawable("1-0-2-5", on: .unit(rows: 3, columns: 3), minimumLength: 4).nodes == [1, 0, 2, 5])
    }

    /// The rule the tools apply is the screen's: the machine fed a finger going from node
    /// centre to node centre submits `drawn`, for every sequence tried.
    @Test func drawnIsWhatTheLockScreenProduces() {
        var rng = SplitMix(seed: 23)
        for grid in [grid3, PatternGrid(rows: 4, columns: 4, origin: Point(x: 0, y: 0), cell: 100),
                     PatternGrid(rows: 3, columns: 5, origin: Point(x: 0, y: 0), cell: 100)] {
            for _ in 0..<400 {
                let n = 2 + Int(rng.next() % 7)
                let nodes = (0..<n).map { _ in Int(rng.next() % UInt64(grid.count)) }
                var lock = PatternLock(grid: grid, minimumLength: 1)
                var finger = Finger()
                let out = finger.stroke(&lock, nodes.map { grid.center(of: $0) })
                let want = Pattern(rows: grid.rows, columns: grid.columns, nodes: nodes).drawn(on: grid)
                #expect(submitted(out) == want.nodes, "\(nodes) on \(grid.rows)x\(grid.columns)")
                // On 3x3, what it draws is drawable as written. (On larger grids a straight
                // stroke between far nodes can cross the hit circle of a node off the line,
                // so the form named follows the route given.)
                if grid.rows == 3 && grid.columns == 3 {
                    #expect((try? want.checkDrawable(on: grid, minimumLength: 1)) != nil, "\(nodes) -> \(want.nodes)")
                }
            }
        }
    }
}

/// A small deterministic generator for the property test.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
