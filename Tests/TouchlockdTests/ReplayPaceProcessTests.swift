import Foundation
import Glibc
import Testing
import TouchlockCommandLine
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
    /// The python3 the tests run with (`scripts/setup --test` installs Debian's prometheus_client).
    /// Debian's python3, which has the python3-prometheus-client scripts/setup installs
    /// (not whichever python3 comes first on PATH).
    static var python: String? {
        access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : nil
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

    static func onPath(_ name: String) -> Bool {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(name)", X_OK) == 0 }
    }

    /// The textfile as a fleet reads it: a real node_exporter's textfile collector serves
    /// the directory on 127.0.0.1 (as --collector.textfile.directory), the scrape has no
    /// textfile error, promtool finds nothing wrong with touchlock's samples, and the
    /// figures and timestamps are there.
    @Test(.enabled(if: python != nil && onPath("prometheus-node-exporter") && onPath("promtool"),
                   "node_exporter and promtool (Debian's prometheus-node-exporter, prometheus) are installed by scripts/setup --test"))
    func aRealNodeExporterServesTheTextfileAndPromtoolPassesIt() throws {
        let root = String(#filePath).components(separatedBy: "/Tests/")[0]
        let d = try DaemonProcess(config: "")
        var z = Pattern(rows: 3, columns: 3, nodes: [0, 1, 2, 4, 6, 7, 8]).secretBytes
        let hash = try SecretHash.make(&z)
        let textfiles = d.dir + "/textfiles"
        try DurableFile.makeDirectory(textfiles, mode: 0o755)
        try DurableFile.replace(d.configPath, with: Array("pattern_hash = \(hash)\n[metrics]\ntextfile = \(textfiles)/touchlock.prom\n".utf8), mode: 0o644)
        let r = try run([DaemonProcess.binary, "--config-root", d.dir, "-C", d.configPath, "--display", "headless",
                         "--socket", d.socketPath, "--state", d.statePath,
                         "--replay", root + "/data/demo-pattern.evemu", "--replay-pace", "frames", "--once"], in: d.dir)
        #expect(r.status == 0, "\(r.output)")
        let check = try run([Self.python!, root + "/Tests/TouchlockdTests/node_exporter_check.py", textfiles,
                             "touchlock_unlocks_total{method=pattern}=1", "touchlock_failures_total=1",
                             "touchlock_locked=0", "touchlock_state{state=unlocked}=1",
                             "touchlock_build_info{version=\(TouchlockVersion.current)}=1"], in: d.dir)
        #expect(check.status == 0, "\(check.output)")
        let text = (try DurableFile.read(textfiles + "/touchlock.prom")).map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(text.contains("touchlock_last_unlock_timestamp_seconds "), "\(text)")
        #expect(text.contains("touchlock_last_failure_timestamp_seconds "), "\(text)")
        #expect(!text.contains("touchlock_locked_since_timestamp_seconds"), "unlocked, yet: \(text)")
    }
}
