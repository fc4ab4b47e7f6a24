import Testing
import TouchlockCore
@testable import TouchlockRender

/// A pattern that comes back onto a node, as the renderer draws it.
@Suite struct RepeatedPathRenderTests {
    let size = Size(width: 640, height: 400)

    /// The scenes of a finger drawing 0 -> 1 -> 4 and back onto 0, lifting there.
    func scenes(_ repeats: PatternRepeat) -> [Scene] {
        let grid = PatternGrid.layout(on: size)
        var lock = LockScreen(pads: .pattern(PatternLock(grid: grid, minimumLength: 3, repeats: repeats)), session: Session(),
                              builder: SceneBuilder(theme: Theme(), size: size))
        var out = [lock.scene]
        var t: Int64 = 0
        func send(_ phase: TouchPhase, _ p: Point) {
            t += 8000
            _ = lock.touches([ScreenTouch(id: 1, phase: phase, point: p)], at: Instant(microseconds: t))
            out.append(lock.scene)
        }
        let corners = [0, 1, 4, 0].map(grid.center(of:))
        send(.began, corners[0])
        for (a, b) in zip(corners, corners.dropFirst()) {
            for i in 1...10 { send(.moved, Point(x: a.x + (b.x - a.x) * Double(i) / 10, y: a.y + (b.y - a.y) * Double(i) / 10)) }
        }
        send(.ended, corners[3])
        return out
    }

    @Test func theSegmentBackToARepeatedNodeIsDrawnAndItsMarkStays() {
        let theme = Theme()
        let grid = PatternGrid.layout(on: size)
        let bg = theme.background, p = theme.path
        func mix(_ f: Double, _ g: Double) -> Double { f * p.alpha + g * (1 - p.alpha) }
        let blend = rgb(Color(red: mix(p.red, bg.red), green: mix(p.green, bg.green), blue: mix(p.blue, bg.blue)))
        // Halfway from 4 back to 0.
        let back = Point(x: grid.center(of: 0).x + grid.cell / 2, y: grid.center(of: 0).y + grid.cell / 2)
        for repeats in PatternRepeat.allCases {
            let all = scenes(repeats)
            #expect(all.last!.path.count == (repeats == .allowed ? 4 : 3))
            let incremental = ShadowBuffer(size: size), full = ShadowBuffer(size: size)
            let ri = Renderer(shadow: incremental), rf = Renderer(shadow: full)
            var previous: Scene? = nil
            for s in all {
                ri.draw(s, damage: s.damage(from: previous))
                previous = s
                rf.draw(s, damage: s.damage(from: nil))
                // As in RendererTests: antialiased edges under another clip differ by 11 at most.
                #expect(differences(incremental, full, tolerance: 12) == [], "\(repeats), scene \(all.firstIndex(of: s)!)")
            }
            func at(_ q: Point) -> UInt32 { full.pixel(x: Int(q.x), y: Int(q.y)) & 0xffffff }
            #expect(close(at(grid.center(of: 0)), rgb(theme.nodeSelected)), "\(repeats)")
            #expect(close(at(grid.center(of: 4)), rgb(theme.nodeSelected)), "\(repeats)")
            #expect(close(at(back), repeats == .allowed ? blend : rgb(bg)), "\(repeats): \(String(at(back), radix: 16))")
        }
    }
}
