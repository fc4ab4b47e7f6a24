import Testing
@testable import TouchlockCore

/// Every node strictly inside the segment between two nodes, found by brute force: the
/// reference the gcd rule is checked against.
func collinearBetween(_ a: Int, _ b: Int, columns: Int, count: Int) -> [Int] {
    let (ar, ac) = (a / columns, a % columns), (br, bc) = (b / columns, b % columns)
    var found: [(t: Double, n: Int)] = []
    for m in 0..<count where m != a && m != b {
        let (mr, mc) = (m / columns, m % columns)
        // On the line: the cross product is zero; between: the dot products are positive.
        let cross = (br - ar) * (mc - ac) - (bc - ac) * (mr - ar)
        let d1 = (mr - ar) * (br - ar) + (mc - ac) * (bc - ac)
        let d2 = (br - mr) * (br - ar) + (bc - mc) * (bc - ac)
        if cross == 0 && d1 > 0 && d2 > 0 {
            let len2 = Double((br - ar) * (br - ar) + (bc - ac) * (bc - ac))
            found.append((Double(d1) / len2, m))
        }
    }
    return found.sorted { $0.t < $1.t }.map(\.n)
}

@Suite struct GcdRuleTests {
    @Test(arguments: [(3, 3), (4, 4), (3, 5), (5, 3), (2, 9), (9, 9)])
    func everyPairOfNodesGetsExactlyTheNodesOnTheLineBetweenThem(rows: Int, columns: Int) {
        let g = PatternGrid(rows: rows, columns: columns, origin: Point(x: 0, y: 0), cell: 100)
        for a in 0..<g.count {
            for b in 0..<g.count where a != b {
                #expect(g.nodes(between: a, b) == collinearBetween(a, b, columns: columns, count: g.count),
                        "\(rows)x\(columns): \(a) -> \(b)")
            }
        }
    }

    @Test func aStrokeFromCornerToCornerOfA4x4GridPicksUpTheDiagonal() {
        let g = PatternGrid(rows: 4, columns: 4, origin: Point(x: 0, y: 0), cell: 100)
        var lock = PatternLock(grid: g, minimumLength: 4)
        var f = Finger()
        // The finger goes from node 0 around the diagonal (below it, between the nodes) to node 15.
        let actions = f.stroke(&lock, [g.center(of: 0), Point(x: 100, y: 100), Point(x: 100, y: 395), Point(x: 300, y: 395), g.center(of: 15)])
        #expect(submitted(actions) == [0, 5, 10, 15])
    }

    @Test func onA3x5GridAStepOfTwoRowsAndFourColumnsPassesTheMiddleNode() {
        let g = PatternGrid(rows: 3, columns: 5, origin: Point(x: 0, y: 0), cell: 100)
        var lock = PatternLock(grid: g, minimumLength: 3)
        var f = Finger()
        // 1 -> 0, then to 14 the long way round, below every node, missing node 7.
        let actions = f.stroke(&lock, [g.center(of: 1), g.center(of: 0), Point(x: 5, y: 100), Point(x: 5, y: 295), Point(x: 450, y: 295), g.center(of: 14)])
        #expect(submitted(actions) == [1, 0, 7, 14])
    }

    @Test func aNodeAlreadyUsedIsNotAddedTwiceByTheGcdRule() {
        var lock = PatternLock(grid: grid3, minimumLength: 3)
        var f = Finger()
        // 1, 0, then 2: node 1 lies between 0 and 2 but is already in the path.
        let actions = f.stroke(&lock, [grid3.center(of: 1), grid3.center(of: 0), Point(x: 150, y: 10), grid3.center(of: 2)])
        #expect(submitted(actions) == [1, 0, 2])
    }

    @Test func aFastSwipeOnA4x4GridIsHitTestedAlongTheSegment() {
        let g = PatternGrid(rows: 4, columns: 4, origin: Point(x: 0, y: 0), cell: 100)
        var lock = PatternLock(grid: g, minimumLength: 4)
        var f = Finger()
        // Two samples only: the left column top to bottom.
        #expect(submitted(f.stroke(&lock, [Point(x: 50, y: 40), Point(x: 50, y: 395)])) == [0, 4, 8, 12])
    }

    @Test func theHitRadiusIsTheFactorTimesHalfACell() {
        let g = PatternGrid(rows: 3, columns: 3, origin: Point(x: 0, y: 0), cell: 100, hitFactor: 0.9)
        #expect(g.hitRadius == 45)
        #expect(g.node(at: Point(x: 94, y: 50)) == 0)
        #expect(grid3.node(at: Point(x: 94, y: 50)) == nil)
    }
}

@Suite struct PatternDrawingTests {
    func screen(stealth: Bool = false) -> LockScreen {
        LockScreen(pads: .pattern(PatternLock(grid: grid3, minimumLength: 3)), session: Session(),
                   builder: SceneBuilder(theme: Theme(), size: Size(width: 300, height: 300), stealth: stealth))
    }

    @Test func theTailFadesInAsTheFingerLeavesTheLastNode() {
        var s = screen()
        let c = grid3.center(of: 0)
        _ = s.touches([ScreenTouch(id: 1, phase: .began, point: c)], at: at(0))
        func alpha(at dx: Double) -> Double {
            _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: Point(x: c.x, y: c.y + dx))], at: at(1))
            return s.scene.tailAlpha
        }
        // The cell is 100 px: invisible up to 30 px, opaque from 55 px.
        #expect(alpha(at: 10) == 0)
        #expect(alpha(at: 30) == 0)
        #expect(abs(alpha(at: 42.5) - 0.5) < 1e-9)
        #expect(alpha(at: 55) == 1)
        #expect(alpha(at: 69) == 1)
        #expect(s.scene.tail == Point(x: c.x, y: c.y + 69))
    }

    @Test func theTailGoesAtRelease() {
        var s = screen()
        let (_, _) = s.draw([0, 1, 2], id: 1, from: 0)
        #expect(s.scene.tail == nil)
        #expect(s.scene.path.count == 3)
    }

    @Test func stealthModeShowsNeitherPathNorChosenNodes() {
        var s = screen(stealth: true)
        let c = grid3.center(of: 0)
        _ = s.touches([ScreenTouch(id: 1, phase: .began, point: c)], at: at(0))
        _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: grid3.center(of: 4))], at: at(8_000))
        #expect(s.pattern!.path == [0, 4])
        #expect(s.scene.path.isEmpty && s.scene.tail == nil)
        #expect(s.scene.nodes.allSatisfy { $0.state == .normal })
        _ = s.touches([ScreenTouch(id: 1, phase: .moved, point: grid3.center(of: 8))], at: at(16_000))
        let end: Int64 = 24_000
        _ = s.touches([ScreenTouch(id: 1, phase: .ended, point: grid3.center(of: 8))], at: at(end))
        _ = s.verified(false, at: at(end + 10))
        // A wrong attempt is told by the message alone (every node dimmed alike for the hold).
        #expect(s.scene.nodes.allSatisfy { $0.state == .disabled })
        #expect(s.scene.prompt == "Wrong pattern, try again")
    }

    @Test func theErrorHoldIsConfigurable() throws {
        var c = Config()
        try c.apply(settings: "error_hold_ms = 1200\n")
        var s = LockScreen(pads: .pattern(PatternLock(grid: grid3, minimumLength: 3)),
                           session: Session(errorHold: c.errorHold),
                           builder: SceneBuilder(theme: Theme(), size: Size(width: 300, height: 300)))
        let (_, end) = s.draw([0, 1, 2], id: 1, from: 0)
        let a = s.verified(false, at: at(end))
        #expect(a.contains(.armTimer(at(end + 1_200_000))))
        _ = s.timer(at: at(end + 1_199_999))
        #expect(s.session.state != .locked)
        _ = s.timer(at: at(end + 1_200_000))
        #expect(s.session.state == .locked && s.pattern!.state == .idle)
    }
}
