// libFuzzer target: the config path as the daemon takes it: a file read by libinih into
// the settings (ConfigFiles, Config), then the lock screen they describe laid out and
// drawn as a scene (LockScreen.make) on a few screen sizes and densities.
//
// Properties: no input crashes; the settings written back as text (what
// `touchlockd --check-config` prints) read back to the same text.
// Input: the text of a config file. Built by scripts/fuzz with TouchlockConfig and
// TouchlockCore, linked with libinih.
import TouchlockConfig
import TouchlockCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var config = Config()
    do throws(Config.Error) {
        try ConfigFiles.apply(contents: Array(UnsafeBufferPointer(start: data, count: size)), named: "fuzz.conf", to: &config)
    } catch {
        return 0
    }
    let text = config.text
    var again = Config()
    do throws(Config.Error) {
        try ConfigFiles.apply(contents: Array(text.utf8), named: "again.conf", to: &again)
    } catch {
        fatalError("contract: the settings written back are refused: \(error)\n\(text)")
    }
    if again.text != text { fatalError("contract: the settings written back read differently:\n\(text)\n---\n\(again.text)") }

    let sizes = [Size(width: 800, height: 480), Size(width: 1080, height: 1920), Size(width: 64, height: 64)]
    let s = sizes[size % sizes.count]
    let density = Density(screen: s, physicalMillimetres: size % 2 == 0 ? (154, 86) : nil)
    var screen = LockScreen.make(config: config, size: s, density: density, shuffleSeed: UInt64(size))
    _ = screen.begin(at: Instant(microseconds: 0))
    _ = screen.scene
    _ = screen.prompt
    return 0
}
