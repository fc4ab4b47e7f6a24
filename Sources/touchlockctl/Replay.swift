import Glibc
import TouchlockCommandLine
import TouchlockCore
import TouchlockSystem

/// `touchlockctl replay RECORDING [--desc DESCRIPTION] [--quirk QUIRK] --json`: decodes an
/// evemu recording through the daemon's frame assembler and prints what it saw.
func replayCommand(_ invocation: Invocation) throws(EarlyExit) -> Int32 {
    let p = invocation.parsed
    var quirks: [InputQuirk] = []
    for q in p.values("quirk") {
        do { quirks.append(try InputQuirk.parse(q)) } catch { throw invocation.usageError("--quirk: \(error)") }
    }
    let desc = p.value("desc")
    guard let recording = p.arguments.first else { throw invocation.usageError("no recording given") }
    guard p.flag("json") else { throw invocation.usageError("only --json output exists; add --json") }
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
