import Testing
import TouchlockCore

/// Real fingers on real panels (the fixtures' one-finger drags up and down), replayed onto
/// a grid covering the panel: under `repeat = allowed`, going back over chosen nodes
/// adds none of them, however the finger wobbles; only the chosen node it lifts on joins
/// again. (Measured: the 14 passes over a chosen node below turn 0.2 to 4.6 degrees, far
/// from the 45 that choose a node again.)
@Suite struct PatternRepeatRecordingTests {
    func paths(_ name: String, columns: Int, hitFactor: Double) throws -> [PatternRepeat: [Int]] {
        let rec = try EvemuRecording(parsing: try fixture(name))
        let screen = Size(width: 300, height: 300)
        let mapping = ScreenMapping(x: rec.xRange!, y: rec.yRange!, screen: screen)
        let grid = PatternGrid(rows: columns, columns: columns, origin: Point(x: 0, y: 0), cell: 300 / Double(columns),
                               hitFactor: hitFactor)
        var out: [PatternRepeat: [Int]] = [:]
        for repeats in PatternRepeat.allCases {
            var lock = PatternLock(grid: grid, minimumLength: 1, repeats: repeats)
            for frame in assemble(rec) {
                let touches = frame.touches.map { ScreenTouch(id: $0.id, phase: $0.phase, point: mapping.map($0.position!)) }
                for case .submit(let p) in lock.handle(touches, at: frame.time) { out[repeats] = p.nodes }
            }
        }
        return out
    }

    @Test func aRealDragBackOverChosenNodesAddsOnlyTheOneItLiftsOn() throws {
        // Atmel: up the middle column from 7 to 1, back down over 4, lifting on 7.
        var p = try paths("atmel-maxtouch-i2c-one-finger-drag-up-down.evemu", columns: 3, hitFactor: 0.6)
        #expect(p[.never] == [7, 4, 1] && p[.allowed] == [7, 4, 1, 7], "\(p)")
        // EDT: down from 1 to 7, back up over 4, lifting on 1.
        p = try paths("edt-ep0430m09-one-finger-drag-up-down.evemu", columns: 3, hitFactor: 0.6)
        #expect(p[.never] == [1, 4, 7] && p[.allowed] == [1, 4, 7, 1], "\(p)")
        // On 5x5 with the largest circles: three chosen nodes passed over on the way back.
        p = try paths("edt-ep0430m09-one-finger-drag-up-down.evemu", columns: 5, hitFactor: 1.0)
        #expect(p[.never] == [2, 7, 12, 17, 22] && p[.allowed] == [2, 7, 12, 17, 22, 2], "\(p)")
        // Lifting on a node not chosen yet: the same under both.
        p = try paths("atmel-maxtouch-i2c-one-finger-drag-up-down.evemu", columns: 5, hitFactor: 1.0)
        #expect(p[.never] == [17, 12, 7, 2, 22] && p[.allowed] == [17, 12, 7, 2, 22], "\(p)")
    }
}
