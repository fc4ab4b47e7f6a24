import Testing
import TouchlockCore

/// One lock screen on two outputs of different sizes and densities: each drawn in its own
/// layout, both showing the same state.
struct OutputViewTests {
    private func make(_ config: Config, _ size: Size, mm: (width: Int, height: Int)) -> LockScreen {
        LockScreen.make(config: config, size: size, density: Density(screen: size, physicalMillimetres: mm), shuffleSeed: 7)
    }

    @Test func aPatternBeingDrawnShowsOnTheOtherOutputInItsOwnLayout() throws {
        let config = Config()
        var lock = make(config, Size(width: 1280, height: 800), mm: (320, 200))
        let view = make(config, Size(width: 3840, height: 2160), mm: (600, 340))
        let grid = try #require(lock.pattern?.grid)
        let viewGrid = try #require(view.pattern?.grid)
        #expect(grid != viewGrid)
        let t = Instant(microseconds: 1_000_000)
        _ = lock.touches([ScreenTouch(id: 1, phase: .began, point: grid.center(of: 0))], at: t)
        _ = lock.touches([ScreenTouch(id: 1, phase: .moved, point: grid.center(of: 1))], at: t + .milliseconds(20))
        let here = lock.scene
        let there = lock.scene(laidOutAs: view)
        #expect(there.size == Size(width: 3840, height: 2160))
        #expect(there.nodes.map(\.center) == (0..<9).map { viewGrid.center(of: $0).rounded })
        #expect(there.nodes.map(\.state) == here.nodes.map(\.state))
        #expect(there.prompt == here.prompt)
        // The finger's end of the path sits on node 1 of the other layout too.
        let tail = try #require(there.tail)
        #expect(abs(tail.x - viewGrid.center(of: 1).x) < 0.5 && abs(tail.y - viewGrid.center(of: 1).y) < 0.5)
    }

    @Test func digitsTypedShowOnTheOtherOutputsPad() throws {
        var config = Config()
        config.screens.methods = .code
        var lock = make(config, Size(width: 800, height: 480), mm: (154, 86))
        let view = make(config, Size(width: 1920, height: 1080), mm: (476, 268))
        _ = lock.key(.digit(3), at: Instant(microseconds: 5))
        _ = lock.key(.digit(4), at: Instant(microseconds: 6))
        let there = lock.scene(laidOutAs: view)
        #expect(there.size == Size(width: 1920, height: 1080))
        #expect(there.boxes.count == lock.scene.boxes.count)
        #expect(there.boxes.map(\.content) == lock.scene.boxes.map(\.content))
        #expect(there.boxes.map(\.rect) == view.code?.layout.boxes)
    }
}
