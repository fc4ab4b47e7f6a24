import Foundation
import Glibc
import Testing
import TouchlockCore
import TouchlockSecrets
import TouchlockSystem

@Suite struct ReplayPaceProcessTests {
    /// The demo (`scripts/run` on a machine without a panel): paced by frames, the same
    /// recording writes the same frames, byte for byte, every time.
    @Test func theDemoPacedByFramesWritesTheSameFramesEveryRun() throws {
        let root = String(#filePath).components(separatedBy: "/Tests/")[0]
        let d = try DaemonProcess(config: "")
        var z = Pattern(rows: 3, columns: 3, nodes: [0, 1, 2, 4, 6, 7, 8]).secretBytes
        let hash = try SecretHash.make(&z)
        try DurableFile.replace(d.configPath, with: Array("pattern_hash = \(hash)\nerror_hold_ms = 500\n".utf8), mode: 0o644)
        var runs: [[String: [UInt8]]] = []
        for n in 0..<2 {
            let out = d.dir + "/out\(n)"
            try DurableFile.makeDirectory(out)
            unlink(d.statePath)
            let r = try run([DaemonProcess.binary, "--config-root", d.dir, "-C", d.configPath, "--display", "headless",
                             "--socket", d.socketPath + "\(n)", "--state", d.statePath,
                             "--replay", root + "/data/demo-pattern.evemu", "--replay-pace", "frames",
                             "--out", out, "--once"], in: d.dir)
            #expect(r.status == 0, "\(r.output)")
            #expect(r.output.contains("unlocked by pattern"), "\(r.output)")
            var frames: [String: [UInt8]] = [:]
            guard let dir = opendir(out) else { throw SystemError("opendir", .current, out) }
            while let e = readdir(dir) {
                let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasSuffix(".png") { frames[name] = try DurableFile.read(out + "/" + name) ?? [] }
            }
            closedir(dir)
            runs.append(frames)
        }
        #expect(runs[0].count > 20, "\(runs[0].count) frames")
        #expect(runs[0].keys.sorted() == runs[1].keys.sorted())
        #expect(runs[0] == runs[1], "the frames differ between runs")
    }

    /// `[metrics] textfile`: what node_exporter reads, parsed by Prometheus' own parser.
    /// The python3 the tests run with (scripts/setup installs prometheus_client for it).
    static var python: String? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/python3" }.first { access($0, X_OK) == 0 }
    }

    @Test(.enabled(if: python != nil))
    func theMetricsTextfileCountsTheDemosFailureAndUnlock() throws {
        let root = String(#filePath).components(separatedBy: "/Tests/")[0]
        let d = try DaemonProcess(config: "")
        var z = Pattern(rows: 3, columns: 3, nodes: [0, 1, 2, 4, 6, 7, 8]).secretBytes
        let hash = try SecretHash.make(&z)
        let prom = d.dir + "/touchlock.prom"
        try DurableFile.replace(d.configPath, with: Array("pattern_hash = \(hash)\n[metrics]\ntextfile = \(prom)\n".utf8), mode: 0o644)
        let r = try run([DaemonProcess.binary, "--config-root", d.dir, "-C", d.configPath, "--display", "headless",
                         "--socket", d.socketPath, "--state", d.statePath,
                         "--replay", root + "/data/demo-pattern.evemu", "--replay-pace", "frames", "--once"], in: d.dir)
        #expect(r.status == 0, "\(r.output)")
        let check = try run([Self.python!, root + "/Tests/TouchlockdTests/promcheck.py", prom,
                             "touchlock_unlocks{method=pattern}=1", "touchlock_failures=1", "touchlock_lockouts=0",
                             "touchlock_input_devices=1"], in: d.dir)
        #expect(check.status == 0, "\(check.output)\n\((try? DurableFile.read(prom)).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } ?? "no file")")
    }
}
