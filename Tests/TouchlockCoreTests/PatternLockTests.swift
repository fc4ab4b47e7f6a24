import Testing
@testable import TouchlockCore

/// A 3x3 grid of 100 px cells from the origin: node n is at (50 + 100 col, 50 + 100 row),
/// hit radius 30 px.
let grid3 = PatternGrid(rows: 3, columns: 3, origin: Point(x: 0, y: 0), cell: 100)

func at(_ us: Int64) -> Instant { Instant(microseconds: us) }

/// Drives a pattern machine with one finger through the given points.
struct Finger {
    var id = 1
    var time: Int64 = 0
    func touch(_ phase: TouchPhase, _ p: Point) -> [ScreenTouch] { [ScreenTouch(id: id, phase: phase, point: p)] }

    mutating func stroke(_ lock: inout PatternLock, _ points: [Point]) -> [PatternLock.Action] {
        var actions: [PatternLock.Action] = []
        for (i, p) in points.enumerated() {
            time += 8_000
            let phase: TouchPhase = i == 0 ? .began : .moved
            actions += lock.handle(touch(phase, p), at: at(time))
        }
        time += 8_000
        actions += lock.handle(touch(.ended, points.last!), at: at(time))
        return actions
    }
}

func submitted(_ actions: [PatternLock.Action]) -> [Int]? {
    for case .submit(let p) in actions { return p.nodes }
    return nil
}

@Suite struct PatternGridTests {
    @Test func nodesLieOnTheLineBetweenTwoNodesByTheGcdRule() {
        #expect(grid3.nodes(between: 0, 2) == [1])
        #expect(grid3.nodes(between: 0, 8) == [4])
        #expect(grid3.nodes(between: 6, 2) == [4])
        #expect(grid3.nodes(between: 0, 1) == [])
        #expect(grid3.nodes(between: 0, 5) == [])   // a knight move adds nothing
        #expect(grid3.nodes(between: 0, 7) == [])

        let g4 = PatternGrid(rows: 4, columns: 4, origin: Point(x: 0, y: 0), cell: 100)
        #expect(g4.nodes(between: 0, 15) == [5, 10])
        #expect(g4.nodes(between: 3, 12) == [6, 9])
        #expect(g4.nodes(between: 0, 3) == [1, 2])
        #expect(g4.nodes(between: 0, 9) == [])      // (2, 1): coprime

        let g35 = PatternGrid(rows: 3, columns: 5, origin: Point(x: 0, y: 0), cell: 100)
        #expect(g35.nodes(between: 0, 4) == [1, 2, 3])
        #expect(g35.nodes(between: 0, 14) == [7])   // (2, 4) steps by (1, 2)
        #expect(g35.nodes(between: 10, 4) == [7])
        #expect(g35.nodes(between: 0, 11) == [])
    }

    @Test func hitTestingUsesTheRadiusAroundEachCentre() {
        #expect(grid3.hitRadius == 30)
        #expect(grid3.node(at: Point(x: 50, y: 50)) == 0)
        #expect(grid3.node(at: Point(x: 79, y: 50)) == 0)
        #expect(grid3.node(at: Point(x: 81, y: 50)) == nil)
        #expect(grid3.node(at: Point(x: 250, y: 250)) == 8)
        #expect(grid3.node(at: Point(x: -5, y: 50)) == nil)
    }

    @Test func theDefaultLayoutPutsTheGridInTheRightColumnInLandscapeAndBelowThePromptInPortrait() {
        // 1280x800 at 160 dpi: cells of 120 dp (the most before zoom), the grid centred
        // vertically in the right one of two 440 dp columns 16 dp apart.
        let g = PatternGrid.layout(on: Size(width: 1280, height: 800))
        #expect(g.cell == 120)
        #expect(g.center(of: 0) == Point(x: 748, y: 280))
        #expect(g.center(of: 8) == Point(x: 988, y: 520))
        let portrait = PatternGrid.layout(on: Size(width: 480, height: 800))
        #expect(portrait.center(of: 4).x == 240)
        #expect(portrait.center(of: 2).x + portrait.cell / 2 <= 480)
    }

    @Test func patternsHaveOneUnambiguousTextForAnyGridSize() throws {
        #expect(Pattern(rows: 3, columns: 3, nodes: [0, 1, 2, 5, 8]).canonical == "3x3:0-1-2-5-8")
        // On a 4x4 grid, node 12 is not nodes 1 and 2.
        #expect(Pattern(rows: 4, columns: 4, nodes: [12]).canonical != Pattern(rows: 4, columns: 4, nodes: [1, 2]).canonical)
        #expect(try Pattern(parsing: "0,4,8", rows: 3, columns: 3).nodes == [0, 4, 8])
        #expect(throws: Pattern.ParseError.repeatedNode(4)) { try Pattern(parsing: "4-5-4", rows: 3, columns: 3) }
        #expect(throws: Pattern.ParseError.nodeOutOfRange(9)) { try Pattern(parsing: "0-9", rows: 3, columns: 3) }
    }
}

@Suite struct PatternLockTests {
    @Test func aFingerThatHasChosenNoNodeAsksForNoFrameUntilItDoes() {
        var lock = PatternLock(grid: grid3)
        let f = Finger()
        // Between the nodes of the top row, then onto node 1.
        #expect(lock.handle(f.touch(.began, Point(x: 100, y: 10)), at: at(1000)).contains(.redraw))
        for x in stride(from: 100.0, through: 120, by: 5) {
            #expect(lock.handle(f.touch(.moved, Point(x: x, y: 10)), at: at(2000)).isEmpty)
        }
        #expect(lock.handle(f.touch(.moved, Point(x: 150, y: 50)), at: at(3000)) == [.redraw])
        #expect(lock.handle(f.touch(.moved, Point(x: 160, y: 60)), at: at(4000)) == [.redraw])
    }

    @Test func aSlowStrokeThroughTheTopRowAndDownTheRightSubmitsItsNodesInOrder() {
        var lock = PatternLock(grid: grid3)
        var f = Finger()
        var pts: [Point] = []
        var x = 40.0
        while x <= 250 { pts.append(Point(x: x, y: 52)); x += 7 }
        var y = 52.0
        while y <= 250 { pts.append(Point(x: 250, y: y)); y += 7 }
        #expect(submitted(f.stroke(&lock, pts)) == [0, 1, 2, 5, 8])
        #expect(lock.state == .submitted(path: [0, 1, 2, 5, 8]))
    }

    @Test func aFastDiagonalSwipeBetweenTwoSamplesSkipsNoNode() {
        var lock = PatternLock(grid: grid3, minimumLength: 3)
        var f = Finger()
        // One sample on node 0, the next already past node 8: nodes 4 and 8 lie between.
        let actions = f.stroke(&lock, [Point(x: 45, y: 45), Point(x: 290, y: 290)])
        #expect(submitted(actions) == [0, 4, 8])
    }

    @Test func aFastSwipeAcrossTheGridCrossesNodesInTheOrderItMeetsThem() {
        var lock = PatternLock(grid: grid3, minimumLength: 3)
        var f = Finger()
        let actions = f.stroke(&lock, [Point(x: 290, y: 250), Point(x: 50, y: 250), Point(x: 50, y: 10)])
        #expect(submitted(actions) == [8, 7, 6, 3, 0])
    }

    @Test func aNodeOnTheLineBetweenTwoChosenNodesJoinsEvenIfTheFingerWentAroundIt() {
        var lock = PatternLock(grid: grid3, minimumLength: 3)
        var f = Finger()
        let actions = f.stroke(&lock, [Point(x: 50, y: 50), Point(x: 150, y: 100), Point(x: 250, y: 50)])
        #expect(submitted(actions) == [0, 1, 2])
    }

    @Test func aKnightMoveAddsNoNode() {
        var lock = PatternLock(grid: grid3, minimumLength: 2)
        var f = Finger()
        // 0 then 5 (one row down, two columns right), passing between 1, 2 and 4.
        let actions = f.stroke(&lock, [Point(x: 50, y: 50), Point(x: 150, y: 100), Point(x: 250, y: 150)])
        #expect(submitted(actions) == [0, 5])
    }

    @Test func eachNodeJoinsThePathOnce() {
        var lock = PatternLock(grid: grid3, minimumLength: 2)
        var f = Finger()
        let actions = f.stroke(&lock, [Point(x: 50, y: 50), Point(x: 150, y: 50), Point(x: 50, y: 50), Point(x: 50, y: 150)])
        #expect(submitted(actions) == [0, 1, 3])
    }

    @Test func onlyTheFirstFingerDraws() {
        var lock = PatternLock(grid: grid3, minimumLength: 1)
        _ = lock.handle([ScreenTouch(id: 1, phase: .began, point: Point(x: 50, y: 50))], at: at(1))
        _ = lock.handle([ScreenTouch(id: 2, phase: .began, point: Point(x: 250, y: 250))], at: at(2))
        _ = lock.handle([ScreenTouch(id: 2, phase: .moved, point: Point(x: 150, y: 250))], at: at(3))
        _ = lock.handle([ScreenTouch(id: 2, phase: .ended, point: Point(x: 150, y: 250))], at: at(4))
        #expect(lock.path == [0])
        let a = lock.handle([ScreenTouch(id: 1, phase: .ended, point: Point(x: 50, y: 50))], at: at(5))
        #expect(submitted(a) == [0])
    }

    @Test func aPatternShorterThanTheMinimumIsNotSubmitted() {
        var lock = PatternLock(grid: grid3, minimumLength: 4)
        var f = Finger()
        let actions = f.stroke(&lock, [Point(x: 50, y: 50), Point(x: 250, y: 50)])
        #expect(submitted(actions) == nil)
        #expect(actions.contains(.tooShort(nodes: 3, minimum: 4)))
        #expect(lock.state == .idle)
    }

    @Test func aStrokeThatTouchesNoNodeSubmitsNothing() {
        var lock = PatternLock(grid: grid3)
        var f = Finger()
        let actions = f.stroke(&lock, [Point(x: 100, y: 100), Point(x: 200, y: 100)])
        #expect(submitted(actions) == nil)
        #expect(lock.state == .idle)
    }

    @Test func aWrongPatternShowsTheErrorBlocksInputThenResets() {
        var lock = PatternLock(grid: grid3, minimumLength: 2)
        var f = Finger()
        _ = f.stroke(&lock, [Point(x: 50, y: 50), Point(x: 50, y: 250)])
        let v = lock.verdict(accepted: false, at: at(100_000), errorHold: .milliseconds(500))
        #expect(v == [.redraw, .armTimer(at(600_000))])
        #expect(lock.state == .rejected(path: [0, 3, 6], until: at(600_000)))
        // Input is blocked while the error shows, and a finger that landed then stays ignored.
        _ = lock.handle([ScreenTouch(id: 9, phase: .began, point: Point(x: 150, y: 150))], at: at(200_000))
        #expect(lock.timerFired(at: at(599_999)) == [.armTimer(at(600_000))])
        #expect(lock.timerFired(at: at(600_000)) == [.redraw])
        #expect(lock.state == .idle)
        _ = lock.handle([ScreenTouch(id: 9, phase: .moved, point: Point(x: 250, y: 250))], at: at(700_000))
        #expect(lock.state == .idle)
        _ = lock.handle([ScreenTouch(id: 9, phase: .ended, point: Point(x: 250, y: 250))], at: at(710_000))
        _ = lock.handle([ScreenTouch(id: 10, phase: .began, point: Point(x: 250, y: 250))], at: at(720_000))
        #expect(lock.path == [8])
    }

    @Test func aVerdictWithoutASubmittedPatternIsABugNotACrash() {
        var lock = PatternLock(grid: grid3)
        #expect(lock.verdict(accepted: true, at: at(0), errorHold: .milliseconds(500)) == [])
        #expect(lock.state == .idle)
    }
}
