import Glibc
import TouchlockCommandLine
import TouchlockConfig
import TouchlockCore
import TouchlockRender
import TouchlockSystem

/// `touchlockctl preview --screen pattern|code|service --state STATE --size WxH --out FILE.png
/// [-C FILE]... [--dpi N] [--rotation DEG]`: draws a lock screen in a given state with the
/// configured theme, without a display, a touchscreen or a daemon. `--size` is the panel's;
/// with a rotation the screen is laid out in the turned (logical) size and the picture
/// written is the panel's, turned as the daemon's copy to scanout turns it.
func previewCommand(_ invocation: Invocation) throws(EarlyExit) -> Int32 {
    let p = invocation.parsed
    let screen = try invocation.value("screen") { v throws(UsageError) in
        guard let s = Preview.Screen(rawValue: v) else { throw UsageError("expected pattern, code or service, found '\(v)'") }
        return s
    } ?? .pattern
    let state = p.value("state") ?? "idle"
    let size = try invocation.value("size", Commands.size) ?? Size(width: 1280, height: 800)
    let configFiles = p.values("config")
    let dpi = try invocation.value("dpi") { v throws(UsageError) in
        guard let d = Double(v), (30...1000).contains(d) else { throw UsageError("expected 30 to 1000, found '\(v)'") }
        return d
    }
    let rotation = try invocation.value("rotation") { v throws(UsageError) in
        guard let d = Int(v), let r = Rotation(degrees: d) else { throw UsageError("expected 0, 90, 180 or 270, found '\(v)'") }
        return r
    }
    guard let out = p.value("out") else { throw invocation.usageError("--out FILE.png is required") }
    var config = Config()
    do { try ConfigFiles.load(configFiles, into: &config) } catch {
        StandardStreams.error("touchlockctl: preview: \(error)")
        return 1
    }
    let turn = rotation ?? config.displayRotation ?? .degrees0
    let logical = turn.logicalSize(panel: size)
    let density = Density(screen: logical, physicalMillimetres: nil, override: dpi ?? config.screens.dpi)
    let lock: LockScreen
    do { lock = try Preview.lockScreen(config: config, screen: screen, state: state, size: logical, density: density,
                                            measure: DrawnTextMeasure(theme: config.theme)) } catch {
        throw invocation.usageError("\(error)")
    }
    let shadow = ShadowBuffer(size: logical)
    let renderer = Renderer(shadow: shadow)
    let scene = lock.scene
    renderer.draw(scene, damage: scene.damage(from: nil))
    var picture = shadow
    if turn != .degrees0 {
        picture = ShadowBuffer(size: size)
        shadow.copy([PixelRect(x: 0, y: 0, width: logical.width, height: logical.height)], to: picture.pixels,
                    stride: picture.stride, rotation: turn)
    }
    do { try picture.writePNG(to: out) } catch {
        StandardStreams.error("touchlockctl: preview: \(error)")
        return 1
    }
    return 0
}
