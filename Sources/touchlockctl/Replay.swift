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

func readText(_ path: String) throws(SystemError) -> String {
    try FileContents.text(path)
}
