import Glibc
import TouchlockCommandLine
import TouchlockConfig
import TouchlockCore
import TouchlockRender
import TouchlockSystem

/// `touchlockctl preview --screen pattern|code --state STATE --size WxH --out FILE.png
/// [-C FILE]... [--dpi N]`: draws a lock screen in a given state with the configured
/// theme, without a display, a touchscreen or a daemon.
func previewCommand(_ invocation: Invocation) throws(EarlyExit) -> Int32 {
    let p = invocation.parsed
    let screen = try invocation.value("screen") { v throws(UsageError) in
        guard let s = Preview.Screen(rawValue: v) else { throw UsageError("expected pattern or code, found '\(v)'") }
        return s
    } ?? .pattern
    let state = p.value("state") ?? "idle"
    let size = try invocation.value("size", Commands.size) ?? Size(width: 1280, height: 800)
    let configFiles = p.values("config")
    let dpi = try invocation.value("dpi") { v throws(UsageError) in
        guard let d = Double(v), (30...1000).contains(d) else { throw UsageError("expected 30 to 1000, found '\(v)'") }
        return d
    }
    guard let out = p.value("out") else { throw invocation.usageError("--out FILE.png is required") }
    var config = Config()
    do { try ConfigFiles.load(configFiles, into: &config) } catch {
        StandardStreams.error("touchlockctl: preview: \(error)")
        return 1
    }
    let density = Density(screen: size, physicalMillimetres: nil, override: dpi ?? config.screens.dpi)
    let lock: LockScreen
    do { lock = try Preview.lockScreen(config: config, screen: screen, state: state, size: size, density: density) } catch {
        throw invocation.usageError("\(error)")
    }
    let shadow = ShadowBuffer(size: size)
    let renderer = Renderer(shadow: shadow)
    let scene = lock.scene
    renderer.draw(scene, damage: scene.damage(from: nil))
    do { try renderer.writePNG(to: out) } catch {
        StandardStreams.error("touchlockctl: preview: \(error)")
        return 1
    }
    return 0
}
