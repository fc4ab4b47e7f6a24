import Glibc
import Testing
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

@Suite struct RotationProcessTests {
    /// `[display] rotation = 90` on a headless 1280x800 panel: the screen is laid out
    /// 800x1280 (status says so), every frame written is the panel's 1280x800 picture, and
    /// a pattern drawn by a finger on the panel where the turned nodes are shown unlocks.
    @Test func aTurnedPanelShowsThePortraitScreenAndTheFingerOnItUnlocks() throws {
        let d = try DaemonProcess(config: "")
        var z = Pattern(rows: 3, columns: 3, nodes: [0, 1, 2, 4, 6, 7, 8]).secretBytes
        let hash = try SecretHash.make(&z)
        try DurableFile.replace(d.configPath, with: Array("pattern_hash = \(hash)\n[display]\nrotation = 90\n".utf8), mode: 0o644)
        let logical = Size(width: 800, height: 1280)
        let rec = d.dir + "/turned.evemu"
        try DurableFile.replace(rec, with: Array(recording(of: [[0, 1, 2, 4, 6, 7, 8]], on: logical, rotation: .degrees90).utf8),
                                mode: 0o644)
        let out = d.dir + "/out"
        try DurableFile.makeDirectory(out)
        let r = try run([DaemonProcess.binary, "--config-root", d.dir, "-C", d.configPath, "--display", "headless",
                         "--size", "1280x800", "--socket", d.socketPath, "--state", d.statePath,
                         "--replay", rec, "--replay-pace", "frames", "--out", out, "--once"], in: d.dir)
        #expect(r.status == 0, "\(r.output)")
        #expect(r.output.contains("unlocked by pattern"), "\(r.output)")
        // The PNG's header: width and height, big-endian, at bytes 16 and 20.
        let png = try #require(try DurableFile.read(out + "/frame-00001.png"))
        let be = { (i: Int) in png[i..<(i + 4)].reduce(0) { $0 << 8 | Int($1) } }
        #expect((be(16), be(20)) == (1280, 800), "the frame is \(be(16))x\(be(20))")
    }
}
