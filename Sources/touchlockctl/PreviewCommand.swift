import Glibc
import TouchlockConfig
import TouchlockCore
import TouchlockRender
import TouchlockSystem

/// `touchlockctl preview --screen pattern|code --state STATE --size WxH --out FILE.png
/// [-C FILE]... [--dpi N]`: draws a lock screen in a given state with the configured
/// theme, without a display, a touchscreen or a daemon.
func previewCommand(_ args: [String]) -> Int32 {
    func usage(_ why: String) -> Int32 {
        StandardStreams.error("""
            touchlockctl: preview: \(why)
            usage: touchlockctl preview --screen pattern|code --state STATE --size WxH --out FILE.png [-C FILE]... [--dpi N]
              pattern states: \(Preview.states(of: .pattern).joined(separator: ", "))
              code states:    \(Preview.states(of: .code).joined(separator: ", ")) (K: digits entered)
            """)
        return 64
    }
    var screen = Preview.Screen.pattern
    var state = "idle"
    var size = Size(width: 1280, height: 800)
    var out: String?
    var configFiles: [String] = []
    var dpi: Double?
    var i = 0
    while i < args.count {
        let a = args[i]
        guard i + 1 < args.count else { return usage("\(a) needs a value") }
        let v = args[i + 1]
        switch a {
        case "--screen":
            guard let s = Preview.Screen(rawValue: v) else { return usage("--screen: expected pattern or code, found '\(v)'") }
            screen = s
        case "--state": state = v
        case "--size":
            let p = v.split(separator: "x")
            guard p.count == 2, let w = Int(p[0]), let h = Int(p[1]), (64...8192).contains(w), (64...8192).contains(h) else {
                return usage("--size: expected WxH, found '\(v)'")
            }
            size = Size(width: w, height: h)
        case "--out": out = v
        case "-C", "--config": configFiles.append(v)
        case "--dpi":
            guard let d = Double(v), (30...1000).contains(d) else { return usage("--dpi: expected 30 to 1000, found '\(v)'") }
            dpi = d
        default: return usage("unknown option '\(a)'")
        }
        i += 2
    }
    guard let out else { return usage("--out FILE.png is required") }
    var config = Config()
    do { try ConfigFiles.load(configFiles, into: &config) } catch {
        StandardStreams.error("touchlockctl: preview: \(error)")
        return 1
    }
    let density = Density(screen: size, physicalMillimetres: nil, override: dpi ?? config.screens.dpi)
    let lock: LockScreen
    do { lock = try Preview.lockScreen(config: config, screen: screen, state: state, size: size, density: density) } catch {
        return usage("\(error)")
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
