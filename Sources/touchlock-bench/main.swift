import Glibc
import TouchlockCore
import TouchlockInput
import TouchlockRender
import TouchlockSystem

// touchlock-bench: measures touchlock against the physical limits of the machine it runs
// on, each figure next to its floor (the same work with nothing of ours in it) and its
// target. Figures are printed, never asserted.
//
//   swift run -c release touchlock-bench [--tiny] [--recordings DIR] [--only input|frames|daemon|messages]

struct BenchOptions {
    var tiny = false
    /// Sections to run (1-2 input and frames, 4-5 the daemon); all when empty.
    var only: Set<String> = []
    var recordings = "Tests/TouchlockInputTests/Fixtures"
}

func parseOptions() -> BenchOptions {
    var o = BenchOptions()
    var args = CommandLine.arguments.dropFirst()
    while let a = args.popFirst() {
        switch a {
        case "--tiny": o.tiny = true
        case "--only":
            guard let v = args.popFirst() else { StandardStreams.error("--only needs input, frames, daemon or messages"); exit(2) }
            o.only.insert(v)
        case "--recordings":
            guard let v = args.popFirst() else { StandardStreams.error("--recordings needs a folder"); exit(2) }
            o.recordings = v
        default:
            StandardStreams.error("usage: touchlock-bench [--tiny] [--recordings DIR] [--only input|frames|daemon|messages]...")
            exit(2)
        }
    }
    return o
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func cpuName() -> String {
    guard let f = fopen("/proc/cpuinfo", "r") else { return "unknown CPU" }
    defer { fclose(f) }
    var line = [CChar](repeating: 0, count: 512)
    while fgets(&line, Int32(line.count), f) != nil {
        let s = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if s.hasPrefix("model name") { return s.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters() } ?? s }
    }
    return "unknown CPU"
}

extension Substring {
    func trimmingCharacters() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\n" }).reversed())
    }
}

func readText(_ path: String) -> String? {
    // /proc files report no size: read until the end, as FileContents does.
    try? FileContents.text(path)
}

func fmt(_ v: Double, _ digits: Int = 2) -> String {
    var buf = [CChar](repeating: 0, count: 64)
    _ = withVaList([v]) { vsnprintf(&buf, buf.count, "%.\(digits)f", $0) }
    return String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

func row(_ cells: String...) { StandardStreams.output("| " + cells.joined(separator: " | ") + " |") }

// MARK: 1. input rate

/// The recordings the input stream is built from: the 10-finger 3M session and the EDT drags.
let inputRecordings = [
    "3m-microtouch-0596-0502-22in-ten-finger-session.evemu",
    "edt-ep0430m09-one-finger-drag-up-down.evemu",
    "edt-ep0430m09-four-finger-drag-down.evemu",
]

func benchInput(_ o: BenchOptions) {
    var streams: [(EvemuRecording, String)] = []
    for name in inputRecordings {
        guard let text = readText("\(o.recordings)/\(name)") else {
            StandardStreams.output("input: \(name) not found in \(o.recordings); skipped")
            continue
        }
        do { streams.append((try EvemuRecording(parsing: text), name)) } catch {
            StandardStreams.output("input: \(name): \(error)")
        }
    }
    guard !streams.isEmpty else { return }
    let target = o.tiny ? 200_000 : 40_000_000
    let perPass = streams.reduce(0) { $0 + $1.0.events.count }
    let passes = max(1, target / perPass)
    let total = passes * perPass
    let screen = Size(width: 1920, height: 1080)

    // The floor: a loop that only reads every event.
    var sink: Int64 = 0
    var t0 = now()
    for _ in 0..<passes {
        for (rec, _) in streams {
            rec.events.withUnsafeBufferPointer { evs in
                for e in evs { sink &+= Int64(e.value) &+ Int64(e.code) &+ e.time.microseconds }
            }
        }
    }
    let floor = now() - t0

    // Ours: frame assembler, mapping to the screen and the pattern machine.
    var frames = 0
    var submitted = 0
    t0 = now()
    for _ in 0..<passes {
        for (rec, _) in streams {
            guard let desc = rec.description, case .success(let mode) = desc.touchMode(),
                  let axes = desc.positionAxes(mode) else { continue }
            var assembler = TouchFrameAssembler(mode: mode)
            let mapping = ScreenMapping(x: axes.x, y: axes.y, screen: screen)
            var lock = PatternLock(grid: .layout(on: screen), minimumLength: 1)
            var touches: [ScreenTouch] = []
            touches.reserveCapacity(16)
            for e in rec.events {
                guard let f = assembler.feed(e) else { continue }
                frames += 1
                touches.removeAll(keepingCapacity: true)
                for t in f.touches {
                    guard let p = t.position else { continue }
                    touches.append(ScreenTouch(id: t.id, phase: t.phase, point: mapping.map(p)))
                }
                for a in lock.handle(touches, at: f.time) {
                    if case .submit = a { submitted += 1; _ = lock.verdict(accepted: false, at: f.time, errorHold: Interval(microseconds: 0)); _ = lock.timerFired(at: f.time) }
                }
            }
        }
    }
    let ours = now() - t0
    StandardStreams.output("")
    StandardStreams.output("## 1. Input: events per second on one core (\(total) events, \(frames) frames, \(submitted) patterns)")
    StandardStreams.output("")
    row("path", "events/s", "target")
    row("---", "---", "---")
    row("floor: a loop reading the events", fmt(Double(total) / floor / 1e6, 1) + " M", "")
    row("frame assembler + mapping + pattern machine", fmt(Double(total) / ours / 1e6, 1) + " M", ">= 20 M")
    if sink == 42 { StandardStreams.output("") }  // keeps the floor loop from being optimized away
}

// MARK: 2. frame cost

/// A finger dragging the path across the grid, one scene per touch frame.
func dragScenes(_ screen: Size, frames: Int) -> [Scene] {
    let grid = PatternGrid.layout(on: screen)
    var lock = LockScreen(pads: .pattern(PatternLock(grid: grid)), session: Session(),
                          builder: SceneBuilder(theme: Theme(), size: screen))
    var scenes: [Scene] = []
    let order = [0, 1, 2, 5, 4, 3, 6, 7, 8]
    var t: Int64 = 0
    let a = grid.center(of: order[0])
    _ = lock.touches([ScreenTouch(id: 1, phase: .began, point: a)], at: Instant(microseconds: t))
    scenes.append(lock.scene)
    let perLeg = max(1, frames / (order.count - 1))
    for (from, to) in zip(order, order.dropFirst()) {
        let p = grid.center(of: from), q = grid.center(of: to)
        for i in 1...perLeg {
            t += 8000
            let s = Double(i) / Double(perLeg)
            _ = lock.touches([ScreenTouch(id: 1, phase: .moved, point: Point(x: p.x + (q.x - p.x) * s, y: p.y + (q.y - p.y) * s))],
                             at: Instant(microseconds: t))
            scenes.append(lock.scene)
        }
    }
    return scenes
}

/// The time to build one scene from the lock screen's state while dragging.
func sceneBuildTime(_ screen: Size) -> Double {
    let grid = PatternGrid.layout(on: screen)
    var lock = LockScreen(pads: .pattern(PatternLock(grid: grid)), session: Session(),
                          builder: SceneBuilder(theme: Theme(), size: screen))
    _ = lock.touches([ScreenTouch(id: 1, phase: .began, point: grid.center(of: 0))], at: Instant(microseconds: 0))
    let n = 2000
    var sink = 0
    let t0 = now()
    for i in 0..<n {
        _ = lock.touches([ScreenTouch(id: 1, phase: .moved, point: Point(x: grid.center(of: 0).x + Double(i % 50), y: grid.center(of: 0).y))],
                         at: Instant(microseconds: Int64(i + 1) * 1000))
        sink &+= lock.scene.nodes.count
    }
    let t = (now() - t0) / Double(n)
    if sink == -1 { print(sink) }
    return t
}

func benchFrames(_ o: BenchOptions) {
    StandardStreams.output("")
    StandardStreams.output("## 2. Frames: time of one frame, copied to a buffer standing in for scanout")
    StandardStreams.output("")
    row("size", "memcpy of a frame", "incremental (drag)", "ratio", "full redraw", "ratio", "mean damage", "targets")
    row("---", "---", "---", "---", "---", "---", "---", "---")
    let sizes = o.tiny ? [Size(width: 320, height: 200)] : [Size(width: 1920, height: 1080), Size(width: 3840, height: 2160)]
    for size in sizes {
        let shadow = ShadowBuffer(size: size)
        let renderer = Renderer(shadow: shadow)
        let scanout = ShadowBuffer(size: size)
        let scenes = dragScenes(size, frames: o.tiny ? 16 : 400)
        let full = [PixelRect(x: 0, y: 0, width: size.width, height: size.height)]

        let reps = o.tiny ? 5 : 200
        var t0 = now()
        for _ in 0..<reps { memcpy(scanout.pixels, shadow.pixels, shadow.byteCount) }
        let copy = (now() - t0) / Double(reps)

        renderer.draw(scenes[0], damage: scenes[0].damage(from: nil))
        var damageArea = 0
        t0 = now()
        for i in 1..<scenes.count {
            let d = scenes[i].damage(from: scenes[i - 1])
            damageArea += d.area
            renderer.draw(scenes[i], damage: d)
            shadow.copy(d.rects, to: scanout.pixels, stride: scanout.stride)
        }
        let incremental = (now() - t0) / Double(scenes.count - 1)
        let sceneCost = sceneBuildTime(size)

        let fullReps = o.tiny ? 3 : 30
        t0 = now()
        for i in 0..<fullReps {
            let s = scenes[i * (scenes.count - 1) / max(1, fullReps - 1)]
            renderer.draw(s, damage: s.damage(from: nil))
            shadow.copy(full, to: scanout.pixels, stride: scanout.stride)
        }
        let redraw = (now() - t0) / Double(fullReps)
        let meanDamage = Double(damageArea) / Double(scenes.count - 1)
        let side = Int(meanDamage.squareRoot())
        row("\(size.width)x\(size.height)", fmt(copy * 1e3, 3) + " ms", fmt(incremental * 1e3, 3) + " ms",
            fmt(incremental / copy, 3) + "x", fmt(redraw * 1e3, 2) + " ms", fmt(redraw / copy, 2) + "x",
            "\(Int(meanDamage)) px (~\(side)x\(side))", "incremental <= 0.1x, full <= 3x")
        StandardStreams.output("(a touch frame through the lock screen and a scene built from it: \(fmt(sceneCost * 1e6, 1)) µs)")
    }
}

/// The copy to scanout of a whole frame turned for a rotated panel, against memcpy of the
/// same bytes (the floor) and the unrotated copy.
func benchRotation(_ o: BenchOptions) {
    StandardStreams.output("")
    StandardStreams.output("## 2b. Rotation: a whole frame copied to scanout, turned")
    StandardStreams.output("")
    row("panel", "rotation", "copy (best of \(o.tiny ? 3 : 100))", "memcpy of the frame", "ratio", "target")
    row("---", "---", "---", "---", "---", "---")
    let panel = o.tiny ? Size(width: 320, height: 200) : Size(width: 1920, height: 1080)
    let reps = o.tiny ? 3 : 100
    let scanout = ShadowBuffer(size: panel)
    for rotation in Rotation.allCases {
        let logical = rotation.logicalSize(panel: panel)
        let shadow = ShadowBuffer(size: logical)
        for i in 0..<(shadow.byteCount / 4) { shadow.pixels.storeBytes(of: UInt32(truncatingIfNeeded: i &* 2654435761), toByteOffset: i * 4, as: UInt32.self) }
        let full = [PixelRect(x: 0, y: 0, width: logical.width, height: logical.height)]
        // The best of the repetitions: the machine may be shared, and the copy's cost is
        // its best case (a cold cache is the same for both).
        func best(_ body: () -> Void) -> Double {
            var m = Double.infinity
            for _ in 0..<reps { let t0 = now(); body(); m = min(m, now() - t0) }
            return m
        }
        let floor = best { memcpy(scanout.pixels, shadow.pixels, shadow.byteCount) }
        let copy = best { shadow.copy(full, to: scanout.pixels, stride: scanout.stride, rotation: rotation) }
        row("\(panel.width)x\(panel.height)", "\(rotation)", fmt(copy * 1e3, 3) + " ms", fmt(floor * 1e3, 3) + " ms",
            fmt(copy / floor, 2) + "x", "<= 4x")
    }
}

let options = parseOptions()
StandardStreams.output("# touchlock-bench\(options.tiny ? " (tiny: proves it runs; figures mean nothing)" : "")")
StandardStreams.output("")
#if DEBUG
let buildKind = "debug"
#else
let buildKind = "release"
#endif
StandardStreams.output("CPU: \(cpuName()); one core; build: \(buildKind)")
if options.only.isEmpty || options.only.contains("input") { benchInput(options) }
if options.only.isEmpty || options.only.contains("frames") { benchFrames(options) }
if options.only.isEmpty || options.only.contains("frames") { benchRotation(options) }

// MARK: 4 and 5. the running daemon: idle wake-ups and memory

/// A touchlockd child process on the headless display.
final class DaemonProcess {
    let pid: pid_t
    let dir: String

    init?(daemon: String, extra: [String], dir: String, settings: String = "") {
        self.dir = dir
        let conf = "\(dir)/bench.conf"
        // Well-formed hashes that no attempt matches: attempts are simply rejected.
        let hash = "$y$j9T$benchbenchbenchbench$benchbenchbenchbenchbenchbenchbenchbenchbe"
        // Its own state file, fresh for every daemon: the failures of one run (every replayed
        // drag is a wrong attempt) must not lock out the next, nor touch /var/lib/touchlock.
        unlink("\(dir)/state")
        // The socket's group is one that exists, as the package's own group does where
        // touchlock is installed: a missing one sends the lookup past /etc/group to the
        // other name services, whose modules (libnss_systemd here) would count in the
        // daemon's memory though no installed daemon loads them.
        let group = getgrgid(getgid()).map { String(cString: $0.pointee.gr_name) } ?? "root"
        let text = "pattern_hash = \(hash)\ncode_hash = \(hash)\nsocket = \(dir)/bench.sock\nstate_file = \(dir)/state\n"
            + "socket_group = \(group)\n" + settings
        guard let f = fopen(conf, "w") else { return nil }
        fputs(text, f)
        fclose(f)
        let args = [daemon, "-C", conf, "--display", "headless", "--size", "1920x1080"] + extra
        var cargs = args.map { strdup($0) } + [nil]
        defer { for a in cargs { free(a) } }
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        posix_spawn_file_actions_addopen(&fileActions, 2, "\(dir)/daemon.log", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        var p: pid_t = 0
        guard posix_spawn(&p, daemon, &fileActions, nil, &cargs, environ) == 0 else { return nil }
        pid = p
    }

    /// A field of /proc/PID/status, in its own unit (kB for memory).
    func status(_ field: String) -> Int {
        guard let text = readText("/proc/\(pid)/status") else { return -1 }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let words = line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" })
            return words.first.flatMap { Int($0) } ?? -1
        }
        return -1
    }

    func contextSwitches() -> Int { status("voluntary_ctxt_switches") + status("nonvoluntary_ctxt_switches") }

    /// Waits until the daemon's log has `text` (a start-up line), up to `seconds`.
    func waitForLog(_ text: String, seconds: Double) -> Bool {
        let end = now() + seconds
        while now() < end {
            if let log = readText("\(dir)/daemon.log"), log.contains(text) { return true }
            usleep(20_000)
        }
        return false
    }

    func stop() {
        kill(pid, SIGTERM)
        var st: Int32 = 0
        waitpid(pid, &st, 0)
    }
}

/// The shape of a replayed drag.
enum DragShape: String {
    /// Node to node over the default 3x3 grid of a 1920x1080 screen, as a pattern is
    /// drawn: the tail to the finger stays under a cell long.
    case pattern
    /// Circles far from the nodes, 500 px across: a tail several cells long, the worst case.
    case circles
}

/// Writes an evemu recording of one finger dragging for `frames` frames, `intervalUs`
/// apart, lifting and touching again every 500 frames.
func writeDragRecording(_ path: String, shape: DragShape, frames: Int, intervalUs: Int) {
    guard let f = fopen(path, "w") else { return }
    defer { fclose(f) }
    fputs("""
    # EVEMU 1.3
    N: touchlock bench panel
    I: 0006 0000 0000 0000
    P: 02 00 00 00 00 00 00 00
    A: 00 0 32767 0 0 0
    A: 01 0 32767 0 0 0
    A: 2f 0 9 0 0 0
    A: 35 0 32767 0 0 0
    A: 36 0 32767 0 0 0
    A: 39 0 65535 0 0 0

    """, f)
    var t = 1
    func line(_ type: Int, _ code: Int, _ value: Int) {
        fputs("E: \(t / 1_000_000).\(String(t % 1_000_000).leftPadded(6)) \(hex4(type)) \(hex4(code)) \(value)\n", f)
    }
    let screen = Size(width: 1920, height: 1080)
    let grid = PatternGrid.layout(on: screen)
    let order = [0, 1, 2, 5, 4, 3, 6, 7, 8, 4, 0]
    let perLeg = 40
    func position(_ i: Int) -> (Int, Int) {
        switch shape {
        case .circles:
            let a = Double(i % 500) / 500 * 2 * Double.pi
            return (16384 + Int(9000 * cos(a)), 16384 + Int(9000 * sin(a)))
        case .pattern:
            let k = i % 500
            let leg = (k / perLeg) % (order.count - 1), s = Double(k % perLeg) / Double(perLeg)
            let a = grid.center(of: order[leg]), b = grid.center(of: order[leg + 1])
            let x = a.x + (b.x - a.x) * s, y = a.y + (b.y - a.y) * s
            return (Int(x * 32768 / Double(screen.width)), Int(y * 32768 / Double(screen.height)))
        }
    }
    var id = 1
    for i in 0..<frames {
        if i % 500 == 0 { line(3, 0x2f, 0); line(3, 0x39, id); id += 1 }
        let (x, y) = position(i)
        line(3, 0x35, x)
        line(3, 0x36, y)
        line(0, 0, 0)
        t += intervalUs
        if i % 500 == 499 { line(3, 0x39, -1); line(0, 0, 0); t += intervalUs }
    }
}

extension String {
    /// What follows the first `marker` in the string.
    func components(after marker: String) -> String? {
        let chars = Array(self), m = Array(marker)
        guard m.count <= chars.count else { return nil }
        for i in 0...(chars.count - m.count) where Array(chars[i..<(i + m.count)]) == m {
            return String(chars[(i + m.count)...])
        }
        return nil
    }
}

func hex4(_ v: Int) -> String { String(String(v, radix: 16).leftPadded(4)) }
extension String {
    func leftPadded(_ n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }
}

func benchDaemon(_ o: BenchOptions) {
    let own = CommandLine.arguments[0]
    let binDir = own.contains("/") ? String(own[..<own.lastIndex(of: "/")!]) : "."
    let daemon = "\(binDir)/touchlockd"
    guard access(daemon, X_OK) == 0 else {
        StandardStreams.output("\n(touchlockd not found beside touchlock-bench: daemon figures skipped)")
        return
    }
    var template = Array("/tmp/touchlock-bench-XXXXXX".utf8CString)
    guard let d = mkdtemp(&template) else { return }
    let dir = String(cString: d)

    // The drags first (latency and memory), then the idle daemon; printed in that order too.
    let frames = o.tiny ? 200 : 10_000
    let rec = "\(dir)/drag.evemu"
    var latencies: [(DragShape, String)] = []
    var memoryRows: [[String]] = []
    // The node-to-node drag is played twice: the first daemon keeps the masks of the text it
    // draws beside its state file, as a device's first start after installing does; the
    // figures are those of the second, a start like every later one.
    for (shape, measured) in [(DragShape.pattern, false), (.pattern, true), (.circles, true)] {
        writeDragRecording(rec, shape: shape, frames: frames, intervalUs: 1000)
        if !measured {
            if let p = DaemonProcess(daemon: daemon, extra: ["--input", "replay", "--replay", rec], dir: dir,
                                     settings: "error_hold_ms = 0\n") {
                _ = p.waitForLog("finished", seconds: 60)
                p.stop()
            }
            continue
        }
        // The executable read from disk, as at a device's boot. Left as it is, the page
        // cache holds the file in the pieces its last writer or reader made (a linker
        // writes it in large ones), and the kernel maps a whole cached piece, or 64 kB,
        // around each page the daemon touches: the same binary then shows 4.7 to 6.7 MB of
        // executable resident from one run to the next.
        do {
            try FileContents.dropFromPageCache(daemon)
        } catch {
            StandardStreams.output("(\(error): memory figures with the executable as the page cache held it)")
        }
        let t0 = now()
        // No error hold: every attempt's frames count, none is blocked.
        guard let p = DaemonProcess(daemon: daemon, extra: ["--input", "replay", "--replay", rec], dir: dir,
                                    settings: "error_hold_ms = 0\n") else { continue }
        if p.waitForLog("first frame shown", seconds: 10) {
            let firstFrame = now() - t0
            let startRSS = p.status("VmRSS")
            _ = p.waitForLog("finished", seconds: 60)
            let endRSS = p.status("VmRSS"), hwm = p.status("VmHWM")
            let buffers = 1920 * 1080 * 4 / 1024
            if shape == .pattern {
                memoryRows = [
                    ["exec to first frame shown", fmt(firstFrame * 1000, 1) + " ms", ""],
                    ["VmRSS after start", "\(startRSS) kB", ""],
                    ["VmRSS after \(frames) drag frames", "\(endRSS) kB", ""],
                    ["VmHWM (peak)", "\(hwm) kB", ""],
                    ["of which the shadow buffer", "\(buffers) kB", ""],
                    ["resident apart from the shadow buffer", "\(endRSS - buffers) kB", "<= 8192 kB"],
                ]
            }
        }
        p.stop()
        // The daemon reports its latencies as it stops.
        latencies.append((shape, readText("\(dir)/daemon.log") ?? ""))
    }
    StandardStreams.output("")
    StandardStreams.output("## 3. Latency over \(frames) replayed drag frames (headless display)")
    StandardStreams.output("")
    row("drag", "from the input event to", "p50 / p99 / max", "targets")
    row("---", "---", "---", "---")
    for (shape, log) in latencies {
        for (what, key, target) in [("the frame submitted", "frame submitted: ", "p50 <= 100 µs, p99 <= 1000 µs"),
                                    ("the frame shown (next loop turn)", "frame shown: ", "")] {
            let line = log.split(separator: "\n").first { $0.contains(key) }.map(String.init)
            let figures = line.flatMap { l in l.components(after: key) } ?? "not reported"
            row(shape == .pattern ? "node to node" : "circles, long tail", what, figures, target)
        }
    }

    StandardStreams.output("")
    StandardStreams.output("## 4. Idle: wake-ups of the running daemon with nothing touched")
    StandardStreams.output("")
    row("screen", "seconds", "context switches", "per second", "target")
    row("---", "---", "---", "---", "---")
    let idleSeconds = o.tiny ? 1.0 : 10.0
    for (screen, settings, target) in [("pattern", "", "0"), ("code pad, cursor blinking", "unlock_method = code\n", "<= 2")] {
        guard let p = DaemonProcess(daemon: daemon, extra: ["--input", "evdev"], dir: dir, settings: settings) else { continue }
        if p.waitForLog("first frame shown", seconds: 10) {
            usleep(300_000)
            let c0 = p.contextSwitches()
            usleep(UInt32(idleSeconds * 1e6))
            let c1 = p.contextSwitches()
            row(screen, fmt(idleSeconds, 0), "\(c1 - c0)", fmt(Double(c1 - c0) / idleSeconds, 1), target)
        }
        p.stop()
    }

    StandardStreams.output("")
    StandardStreams.output("## 5. Memory and start-up (1920x1080, headless display, node-to-node drag, the executable read from disk)")
    StandardStreams.output("")
    row("measure", "value", "target")
    row("---", "---", "---")
    for r in memoryRows { row(r[0], r[1], r[2]) }
    if getenv("TOUCHLOCK_BENCH_KEEP") == nil { unlink("\(dir)/bench.conf"); unlink("\(dir)/daemon.log"); unlink(rec); unlink("\(dir)/bench.sock"); unlink("\(dir)/state"); rmdir(dir) }
}

if options.only.isEmpty || options.only.contains("daemon") { benchDaemon(options) }

// MARK: 6. the lock screen's message

/// Resident memory of a daemon shown 4,000 messages one after another over its socket,
/// each with characters no message before had together (eight CJK characters, found
/// through fontconfig), each waited for.
func benchMessages(_ o: BenchOptions) {
    let own = CommandLine.arguments[0]
    let binDir = own.contains("/") ? String(own[..<own.lastIndex(of: "/")!]) : "."
    let daemon = "\(binDir)/touchlockd"
    guard access(daemon, X_OK) == 0 else { return }
    var template = Array("/tmp/touchlock-bench-XXXXXX".utf8CString)
    guard let d = mkdtemp(&template) else { return }
    let dir = String(cString: d)
    defer { _ = system("rm -rf '\(dir)'") }
    guard let p = DaemonProcess(daemon: daemon, extra: ["--input", "evdev"], dir: dir) else { return }
    defer { p.stop() }
    guard p.waitForLog("first frame shown", seconds: 10) else { return }
    let fd: Int32
    do {
        fd = try UnixSocket.make(nonBlocking: false)
        try UnixSocket.connect(fd, to: "\(dir)/bench.sock")
    } catch {
        StandardStreams.output("(\(error): message figures skipped)")
        return
    }
    defer { UnixSocket.close(fd) }
    var buffer = [UInt8](repeating: 0, count: 4096)
    /// Sends one request line and waits for its reply line.
    func ask(_ line: String) -> Bool {
        guard (try? UnixSocket.send(fd, Array((line + "\n").utf8), blocking: true)) != nil else { return false }
        while true {
            guard let n = try? UnixSocket.receive(fd, into: &buffer, blocking: true), n > 0 else { return false }
            if buffer[n - 1] == UInt8(ascii: "\n") { return true }
        }
    }
    let count = o.tiny ? 400 : 4000
    var rows: [[String]] = [["after start", "\(p.status("VmRSS")) kB"]]
    for i in 0..<count {
        let chars = (0..<8).map { k in String(Character(Unicode.Scalar(0x4E00 + (i * 8 + k * 977) % 20000)!)) }.joined()
        guard ask(#"{"id":\#(i + 1),"request":"message","text":"Notice \#(i): \#(chars) closed"}"#) else { return }
        if (i + 1) % (count / 4) == 0 { rows.append(["after \(i + 1) messages", "\(p.status("VmRSS")) kB"]) }
    }
    StandardStreams.output("")
    StandardStreams.output("## 6. The lock screen's message: VmRSS over \(count) messages of new characters (1920x1080, headless)")
    StandardStreams.output("")
    row("daemon", "VmRSS")
    row("---", "---")
    for r in rows { row(r[0], r[1]) }
}

if options.only.isEmpty || options.only.contains("messages") { benchMessages(options) }
