import Foundation
import Testing
import TouchlockCore
import TouchlockSystem

@Suite struct HotplugTests {
    @Test func aNodeThatAppearsOrGoesIsSeenOnTheNextLoopTurn() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hotplug-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let loop = try EventLoop(signals: [])
        var changes: [DirectoryWatch.Change] = []
        let watch = try DirectoryWatch(dir.path, loop: loop) { changes.append($0); loop.stop() }
        loop.schedule(at: EventLoop.now() + .milliseconds(2000)) { _ in loop.stop() }

        close(open(dir.appendingPathComponent("event7").path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644))
        try loop.run()
        #expect(changes.first == .appeared("event7"))

        changes.removeAll()
        try FileManager.default.removeItem(at: dir.appendingPathComponent("event7"))
        try loop.run()
        #expect(changes == [.removed("event7")])
        _ = watch
    }
}
