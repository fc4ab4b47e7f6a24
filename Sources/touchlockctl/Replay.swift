import Glibc
import TouchlockCore
import TouchlockSystem

/// `touchlockctl replay RECORDING [--desc DESCRIPTION] [--quirk QUIRK] --json`: decodes an
/// evemu recording through the daemon's frame assembler and prints what it saw.
func replayCommand(_ args: [String]) -> Int32 {
    var recording: String?
    var desc: String?
    var quirks: [InputQuirk] = []
    var json = false
    var i = 0
    func usage(_ m: String) -> Int32 {
        StandardStreams.error("touchlockctl: replay: \(m)\nusage: touchlockctl replay RECORDING [--desc DESCRIPTION] [--quirk QUIRK] --json")
        return Exit.usage
    }
    while i < args.count {
        let a = args[i]
        switch a {
        case "--json": json = true
        case "--desc", "--quirk":
            guard i + 1 < args.count else { return usage("\(a) needs a value") }
            i += 1
            if a == "--desc" { desc = args[i] } else {
                do { quirks.append(try InputQuirk.parse(args[i])) } catch { return usage("--quirk: \(error)") }
            }
        case _ where a.hasPrefix("-"): return usage("unknown option '\(a)'")
        default:
            if recording != nil { return usage("unexpected argument '\(a)'") }
            recording = a
        }
        i += 1
    }
    guard let recording else { return usage("no recording given") }
    guard json else { return usage("only --json output exists; add --json") }
    do {
        let summary = try ReplaySummary.replay(recording: try readText(recording),
                                               description: try desc.map(readText), quirks: quirks)
        StandardStreams.output(summary.json)
        return Exit.ok
    } catch let e as ReplaySummary.Failure {
        StandardStreams.error("touchlockctl: replay: \(e)")
    } catch {
        StandardStreams.error("touchlockctl: replay: \(error)")
    }
    return Exit.failure
}

struct ReadError: Error, CustomStringConvertible { var description: String }

func readText(_ path: String) throws -> String {
    let f: UnsafeMutablePointer<FILE>
    do { f = try SystemCall.checkPointer("fopen", path) { fopen(path, "re") } } catch { throw ReadError(description: "\(error)") }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        bytes.append(contentsOf: buf[0..<n])
        if n < buf.count {
            if ferror(f) != 0 { throw ReadError(description: "\(path): read error") }
            break
        }
    }
    guard let s = String(validating: bytes, as: UTF8.self) else { throw ReadError(description: "\(path): not UTF-8 text") }
    return s
}
