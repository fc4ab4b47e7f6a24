import Testing
@testable import TouchlockCore

/// The finger's samples along straight strokes through `corners`, about `step` pixels
/// apart (a touch panel's frames at a moderate speed), the corners themselves included.
private func samples(_ corners: [Point], step: Double = 7) -> [Point] {
    var out = [corners[0]]
    for (a, b) in zip(corners, corners.dropFirst()) {
        let n = max(1, Int((a.distance(to: b) / step).rounded(.up)))
        for i in 1...n {
            let f = Double(i) / Double(n)
            out.append(Point(x: a.x + (b.x - a.x) * f, y: a.y + (b.y - a.y) * f))
        }
    }
    return out
}

/// What a lock on `grid3` under `repeats` submits for a finger through these samples.
private func drawn(_ points: [Point], _ repeats: PatternRepeat, minimum: Int = 1) -> [Int]? {
    var lock = PatternLock(grid: grid3, minimumLength: minimum, repeats: repeats)
    var f = Finger()
    return submitted(f.stroke(&lock, points))
}

private func c(_ n: Int) -> Point { grid3.center(of: n) }

/// Nodes 0 1 2 / 3 4 5 / 6 7 8 on 100 px cells, hit radius 30 px.
@Suite struct PatternRepeatTests {
    @Test func aFingerComingBackOntoAChosenNodeChoosesItAgainOnlyWhenRepeatsAreAllowed() {
        // Along the top row, back to 1, then down through 4 to 7: a right-angle turn on 1.
        let corners = [c(0), c(1), c(2), c(1), c(4), c(7)]
        for step in [3.0, 7, 19, 100] {
            #expect(drawn(samples(corners, step: step), .allowed) == [0, 1, 2, 1, 4, 7], "samples \(step) px apart")
            #expect(drawn(samples(corners, step: step), .never) == [0, 1, 2, 4, 7], "samples \(step) px apart")
        }
        // Back onto 0 and down: 0 is chosen again too.
        #expect(drawn(samples([c(0), c(1), c(0), c(3)]), .allowed) == [0, 1, 0, 3])
        #expect(drawn(samples([c(0), c(1), c(0), c(3)]), .never) == [0, 1, 3])
    }

    @Test func aFingerLiftingOnAChosenNodeChoosesIt() {
        #expect(drawn(samples([c(0), c(1), c(2), c(1)]), .allowed) == [0, 1, 2, 1])
        #expect(drawn(samples([c(0), c(1), c(2), c(1)]), .never) == [0, 1, 2])
        // It lifts within the hit circle, off the centre.
        #expect(drawn(samples([c(0), c(1), c(2), Point(x: 170, y: 60)]), .allowed) == [0, 1, 2, 1])
        // Lifting just outside it chooses nothing.
        #expect(drawn(samples([c(0), c(1), c(2), Point(x: 185, y: 50)]), .allowed) == [0, 1, 2])
    }

    @Test func aFingerPassingOverAChosenNodeAddsNothingHoweverSlowly() {
        // 1, 4, 3, then straight on from 3 over 4 to 5.
        let corners = [c(1), c(4), c(3), c(5)]
        #expect(drawn(samples(corners), .allowed) == [1, 4, 3, 5])
        #expect(drawn(samples(corners), .never) == [1, 4, 3, 5])
        // The finger stops on 4 for a second (125 frames, trembling a pixel or two),
        // then goes on straight: still passing over.
        var slow = samples([c(1), c(4), c(3), c(4)])
        for i in 0..<125 { slow.append(Point(x: 150 + Double(i % 3) - 1, y: 150 + Double(i % 5) / 2 - 1)) }
        slow += samples([c(4), c(5)]).dropFirst()
        #expect(drawn(slow, .allowed) == [1, 4, 3, 5])
        // Off the centre, grazing 4's hit circle on a straight line from 3 to 5.
        #expect(drawn(samples([c(1), c(4), c(3), Point(x: 50, y: 175), Point(x: 250, y: 175), c(5)]), .allowed)
                == [1, 4, 3, 5])
    }

    @Test func aNodeJoinsAgainWhereTheStrokeTurnsByFortyFiveDegreesOrMore() {
        // 1, 4, 3, back to 4, then off at 30 degrees below the way in: a curve, passing
        // over; at 60 degrees: a corner, 4 joins again. The ends touch no node.
        let thirty = Point(x: 150 + 100 * 0.866, y: 150 + 100 * 0.5)
        let sixty = Point(x: 150 + 100 * 0.5, y: 150 + 100 * 0.866)
        #expect(grid3.node(at: thirty) == nil && grid3.node(at: sixty) == nil)
        #expect(drawn(samples([c(1), c(4), c(3), c(4), thirty]), .allowed) == [1, 4, 3])
        #expect(drawn(samples([c(1), c(4), c(3), c(4), sixty]), .allowed) == [1, 4, 3, 4])
        // A turn back the way it came, on the rim of the circle (the finger dips 8 px in).
        #expect(drawn(samples([c(1), c(4), c(3), Point(x: 128, y: 150), Point(x: 100, y: 150)], step: 2), .allowed)
                == [1, 4, 3, 4])
    }

    @Test func aNodeNeverFollowsItself() {
        // Off node 1 and back onto it, then on to 2: 1 once.
        let out = [c(0), c(1), Point(x: 150, y: 100), c(1), c(2)]
        #expect(drawn(samples(out), .allowed) == [0, 1, 2])
        // Off it and back, lifting on it.
        #expect(drawn(samples([c(0), c(1), Point(x: 150, y: 100), c(1)]), .allowed) == [0, 1])
        // A finger landing on a node, leaving it and coming back.
        #expect(drawn(samples([c(4), Point(x: 150, y: 210), c(4), Point(x: 150, y: 90)]), .allowed) == [4])
    }

    @Test func theNodesBetweenStillJoinOnTheWayBackAndChosenOnesArePassedOver() {
        // 3, 4, then up to 1, then back down through 4 to 7, left to 6 and up over 3 to 0:
        // 4 is passed over (straight), 3 too, 0 joins new.
        #expect(drawn(samples([c(3), c(4), c(1), c(7), c(6), c(0)]), .allowed) == [3, 4, 1, 7, 6, 0])
        // From 8 straight back to 0 across 4, chosen: 4 is passed over; 0 joins at the lift.
        #expect(drawn(samples([c(0), c(4), c(5), c(8), c(0)]), .allowed) == [0, 4, 5, 8, 0])
    }

    @Test func theMinimumLengthCountsARepeatedNodeEachTime() {
        var lock = PatternLock(grid: grid3, minimumLength: 4, repeats: .allowed)
        var f = Finger()
        #expect(submitted(f.stroke(&lock, samples([c(0), c(1), c(0), c(1)]))) == [0, 1, 0, 1])
        var never = PatternLock(grid: grid3, minimumLength: 4)
        f = Finger()
        #expect(f.stroke(&never, samples([c(0), c(1), c(0), c(1)])).contains(.tooShort(nodes: 2, minimum: 4)))
    }

    @Test func aLockRelaidWhileTheFingerIsOnAChosenNodeKeepsIt() {
        var lock = PatternLock(grid: grid3, minimumLength: 1, repeats: .allowed)
        var t: Int64 = 0
        let pts = samples([c(0), c(1), c(2), c(1)])
        for (i, p) in pts.enumerated() {
            t += 8_000
            _ = lock.handle([ScreenTouch(id: 1, phase: i == 0 ? .began : .moved, point: p)], at: at(t))
        }
        let other = PatternGrid(rows: 3, columns: 3, origin: Point(x: 400, y: 0), cell: 50)
        var moved = lock.relaid(on: other)
        #expect(moved.repeats == .allowed)
        // Down off 1 on the other grid: a right-angle turn there.
        let out = moved.handle([ScreenTouch(id: 1, phase: .moved, point: Point(x: 475, y: 75))], at: at(t + 8_000))
            + moved.handle([ScreenTouch(id: 1, phase: .ended, point: other.center(of: 4))], at: at(t + 16_000))
        #expect(submitted(out) == [0, 1, 2, 1, 4])
    }

    @Test func aFingerAlreadyInsideANodeNotChosenYetChoosesItOnItsNextMove() {
        // As after a relayout put the finger inside node 1 without a move into it.
        for repeats in PatternRepeat.allCases {
            var path = [0]
            var revisit: PatternGrid.Revisit?
            grid3.extend(&path, revisit: &revisit, from: Point(x: 160, y: 55), to: Point(x: 165, y: 60), repeats: repeats)
            #expect(path == [0, 1], "\(repeats)")
        }
    }

    /// The tools' rule is the screen's under `allowed` too: a finger from node centre to
    /// node centre submits `drawn(on:repeats:)`, and what it draws can be hashed.
    @Test func drawnIsWhatTheLockScreenProducesWithRepeats() {
        var rng = UInt64(41)
        func next() -> UInt64 {
            rng = rng &* 6364136223846793005 &+ 1442695040888963407
            return rng >> 33
        }
        for grid in [grid3, PatternGrid(rows: 4, columns: 4, origin: Point(x: 0, y: 0), cell: 100)] {
            for _ in 0..<400 {
                var nodes = [Int(next() % UInt64(grid.count))]
                for _ in 0..<(1 + Int(next() % 8)) {
                    var n = Int(next() % UInt64(grid.count))
                    if n == nodes.last! { n = (n + 1) % grid.count }
                    nodes.append(n)
                }
                var lock = PatternLock(grid: grid, minimumLength: 1, repeats: .allowed)
                var finger = Finger()
                let out = finger.stroke(&lock, samples(nodes.map { grid.center(of: $0) }, step: 9))
                let want = Pattern(rows: grid.rows, columns: grid.columns, nodes: nodes).drawn(on: grid, repeats: .allowed)
                #expect(submitted(out) == want.nodes, "\(nodes) on \(grid.rows)x\(grid.columns)")
                if grid.rows == 3 {
                    #expect((try? want.checkDrawable(on: grid, minimumLength: 1, repeats: .allowed)) != nil, "\(nodes) -> \(want.nodes)")
                }
            }
        }
    }
}

private func refusal(_ text: String, _ repeats: PatternRepeat, rows: Int = 3, columns: Int = 3, min: Int = 4) -> Pattern.Undrawable? {
    do {
        _ = try Pattern.drawable(text, on: .unit(rows: rows, columns: columns), minimumLength: min, repeats: repeats)
        return nil
    } catch {
        return error
    }
}

@Suite struct DrawableRepeatTests {
    let p = { (nodes: [Int]) in Pattern(rows: 3, columns: 3, nodes: nodes) }

    @Test func aRepeatedNodeIsAcceptedOnlyWhenAllowed() {
        for text in ["0-1-2-1", "0-1-2-1-4-7", "0-1-0-3", "0-1-0-1", "1-4-0-4-5", "2-1-0-3-4-1-2"] {
            #expect(refusal(text, .allowed) == nil, "\(text)")
            #expect(refusal(text, .never).map { if case .repeatedNode = $0 { true } else { false } } == true, "\(text)")
        }
        #expect(refusal("0-1-2-1", .never) == .repeatedNode(1, drawn: p([0, 1, 2])))
        // What was drawable stays so.
        for text in ["0-1-2-5-8", "1-0-2-5", "0-5-6-1", "6-4-2-5-8-7"] {
            #expect(refusal(text, .allowed) == nil, "\(text)")
        }
    }

    @Test func aRepeatTheFingerPassesOverOrThatFollowsItselfIsRefusedSayingWhy() {
        #expect(refusal("0-1-1-2", .allowed) == .followsItself(1))
        #expect(refusal("0-1-1-2", .allowed)?.description == "node 1 follows itself: a node comes again only after another")
        // 3 to 5 over 4 is straight on: 4 does not join again.
        #expect(refusal("1-4-3-4-5", .allowed) == .goesStraightOn(from: 3, over: 4, to: 5, drawn: p([1, 4, 3, 5])))
        #expect(refusal("1-4-3-4-5", .allowed)?.description
                == "from 3 through 4 to 5 the finger turns less than 45 degrees at 4, so it passes over 4, "
                   + "which joins again only where the stroke turns or ends: drawn, this is 1-4-3-5")
        #expect(refusal("1-4-0-4-8", .allowed) == .goesStraightOn(from: 0, over: 4, to: 8, drawn: p([1, 4, 0, 8])))
        // A node not chosen yet on the way still joins there.
        // (Then 1 comes again, turned on: the finger draws 0-1-2-1-3.)
        #expect(refusal("0-2-1-3", .allowed) == .passesOver(from: 0, to: 2, over: 1, drawn: p([0, 1, 2, 1, 3])))
        #expect(refusal("0-1-2-0-3", .allowed) == nil)
        #expect(refusal("5-0-2-3", .allowed) == .passesOver(from: 0, to: 2, over: 1, drawn: p([5, 0, 1, 2, 3])))
    }

    @Test func theMinimumLengthCountsRepeatsAndMayExceedTheGrid() {
        #expect(refusal("0-1-0", .allowed) == .tooShort(3, minimum: 4))
        #expect(refusal("0-1-0-1", .allowed) == nil)
        #expect(refusal("0-1-3-0-1", .allowed, rows: 2, columns: 2, min: 5) == nil)
        #expect(refusal("0-1-3-2", .never, rows: 2, columns: 2, min: 5) == .gridTooSmall(nodes: 4, minimum: 5))
    }

    @Test func aRepeatedPatternHashesToItsSequence() {
        let a = try! Pattern.drawable("0-1-2-1", on: .unit(rows: 3, columns: 3), minimumLength: 4, repeats: .allowed)
        #expect(a.canonical == "3x3:0-1-2-1")
        #expect(a.secretBytes == Array("pattern:3x3:0-1-2-1".utf8))
        #expect(a.secretBytes != Pattern(rows: 3, columns: 3, nodes: [0, 1, 2]).secretBytes)
    }
}

@Suite struct PatternRepeatScreenTests {
    func screen(_ repeats: PatternRepeat) -> LockScreen {
        var config = Config()
        config.patternRepeat = repeats
        return LockScreen.make(config: config, size: Size(width: 800, height: 480), density: Density(dpi: 160), shuffleSeed: 1)
    }

    @Test func theConfigsPolicyReachesTheLockScreen() throws {
        var config = Config()
        #expect(config.patternRepeat == .never)
        #expect(Config().text.contains("[pattern]\ngrid = 3x3\nmin_length = 4\nhit_factor = 0.6\nrepeat = never\n"))
        try config.set(section: "pattern", key: "repeat", value: "allowed  # comes back")
        #expect(config.patternRepeat == .allowed)
        #expect(config.text.contains("repeat = allowed"))
        #expect(screen(.allowed).pattern?.repeats == .allowed)
        #expect(screen(.never).pattern?.repeats == .never)
        #expect(throws: Config.BadValue(message: "[pattern] repeat: expected never or allowed, found 'twice'")) {
            try config.set(section: "pattern", key: "repeat", value: "twice")
        }
        // Only in [pattern]: it has no flat name.
        #expect(throws: Config.BadValue(message: "unknown key 'repeat'")) { try config.set(section: "", key: "repeat", value: "never") }
    }

    @Test func aPatternWithARepeatUnlocksAndEnrollsUnderAllowed() throws {
        for repeats in PatternRepeat.allCases {
            var s = screen(repeats)
            let g = s.pattern!.grid
            var t: Int64 = 0
            func draw(_ nodes: [Int], id: Int) -> [LockScreen.Action] {
                var out: [LockScreen.Action] = []
                let pts = samples(nodes.map(g.center(of:)), step: 12)
                for (i, p) in pts.enumerated() {
                    t += 8_000
                    out += s.touches([ScreenTouch(id: id, phase: i == 0 ? .began : .moved, point: p)], at: at(t))
                }
                t += 8_000
                out += s.touches([ScreenTouch(id: id, phase: .ended, point: pts.last!)], at: at(t))
                return out
            }
            let want = repeats == .allowed ? [0, 1, 2, 1, 4] : [0, 1, 2, 4]
            let attempt = draw([0, 1, 2, 1, 4], id: 1)
            #expect(verification(attempt)?.nodes == want, "\(repeats)")
            // The scene: a segment back to 1, and 1 still marked.
            #expect(s.scene.path == want.map(g.center(of:)), "\(repeats)")
            #expect(s.scene.nodes[1].state == .selected)
            _ = s.verified(true, at: at(t + 1))
            t += 600_000
            _ = s.timer(at: at(t))
            t += 100_000
            _ = try s.enrollAfterHandOver(.pattern, at: at(t))
            _ = draw([0, 1, 2, 1, 4], id: 2)
            t += 100_000
            let second = draw([0, 1, 2, 1, 4], id: 3)
            #expect(enrolled(second)?.1 == Pattern(rows: 3, columns: 3, nodes: want).secretBytes, "\(repeats)")
        }
    }
}
