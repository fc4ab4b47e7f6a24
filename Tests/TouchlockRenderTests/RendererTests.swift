import Glibc
import Testing
import TouchlockCore
@testable import TouchlockRender

func rgb(_ c: Color) -> UInt32 {
    let r = UInt32((c.red * 255).rounded()), g = UInt32((c.green * 255).rounded())
    let b = UInt32((c.blue * 255).rounded())
    return r << 16 | g << 8 | b
}

func close(_ a: UInt32, _ b: UInt32, within d: Int = 3) -> Bool {
    (0..<3).allSatisfy { (i: Int) -> Bool in
        let x = Int((a >> UInt32(8 * i)) & 0xff), y = Int((b >> UInt32(8 * i)) & 0xff)
        return abs(x - y) <= d
    }
}

/// A finger drawing 0 -> 1 -> 4 on the default layout, one scene per touch frame.
func dragScenes(size: Size) -> [Scene] {
    let grid = PatternGrid.layout(on: size)
    var lock = LockScreen(pads: .pattern(PatternLock(grid: grid)), session: Session(),
                          builder: SceneBuilder(theme: Theme(), size: size))
    var scenes = [lock.scene]
    var t: Int64 = 0
    func send(_ phase: TouchPhase, _ p: Point) {
        t += 8000
        _ = lock.touches([ScreenTouch(id: 1, phase: phase, point: p)], at: Instant(microseconds: t))
        scenes.append(lock.scene)
    }
    let a = grid.center(of: 0), b = grid.center(of: 1), c = grid.center(of: 4)
    send(.began, a)
    for i in 1...12 { send(.moved, Point(x: a.x + (b.x - a.x) * Double(i) / 12, y: a.y)) }
    for i in 1...12 { send(.moved, Point(x: b.x, y: b.y + (c.y - b.y) * Double(i) / 12)) }
    for i in 1...5 { send(.moved, Point(x: c.x - 7 * Double(i), y: c.y + 9 * Double(i))) }
    return scenes
}

/// The box around pixels whose colour differs by more than `tolerance` in a channel (the
/// unused X byte of XRGB is not compared).
func differences(_ a: ShadowBuffer, _ b: ShadowBuffer, tolerance: Int = 0) -> [PixelRect] {
    if memcmp(a.pixels, b.pixels, a.byteCount) == 0 { return [] }
    var box: PixelRect? = nil
    for y in 0..<a.size.height {
        for x in 0..<a.size.width where !close(a.pixel(x: x, y: y), b.pixel(x: x, y: y), within: tolerance) {
            let p = PixelRect(x: x, y: y, width: 1, height: 1)
            box = box.map { $0.union(p) } ?? p
        }
    }
    return box.map { [$0] } ?? []
}

@Suite struct RendererTests {
    let size = Size(width: 640, height: 400)

    @Test func nodesPathAndBackgroundHaveTheThemeColours() {
        let scenes = dragScenes(size: size)
        let shadow = ShadowBuffer(size: size)
        let r = Renderer(shadow: shadow)
        let scene = scenes.last!
        r.draw(scene, damage: scene.damage(from: nil))
        let theme = Theme()
        let grid = PatternGrid.layout(on: size)
        func at(_ p: Point) -> UInt32 { shadow.pixel(x: Int(p.x), y: Int(p.y)) & 0xffffff }
        #expect(close(at(grid.center(of: 0)), rgb(theme.nodeSelected)))
        #expect(close(at(grid.center(of: 4)), rgb(theme.nodeSelected)))
        #expect(close(at(grid.center(of: 8)), rgb(theme.node)))
        #expect(close(at(Point(x: 2, y: 398)), rgb(theme.background)))
        // Halfway between two nodes: the path, half transparent over the background.
        let mid = Point(x: grid.center(of: 0).x + grid.cell / 2, y: grid.center(of: 0).y)
        let bg = theme.background, p = theme.path
        func mix(_ f: Double, _ g: Double) -> Double { f * p.alpha + g * (1 - p.alpha) }
        let blend = Color(red: mix(p.red, bg.red), green: mix(p.green, bg.green), blue: mix(p.blue, bg.blue))
        #expect(close(at(mid), rgb(blend)))
    }

    @Test func drawingOnlyTheDamageGivesTheSamePixelsAsFullRedraws() {
        let scenes = dragScenes(size: size)
        let incremental = ShadowBuffer(size: size), full = ShadowBuffer(size: size)
        let ri = Renderer(shadow: incremental), rf = Renderer(shadow: full)
        var previous: Scene? = nil
        var damagedArea = 0
        for s in scenes {
            let d = s.damage(from: previous)
            ri.draw(s, damage: d)
            if previous != nil { damagedArea += d.area }
            previous = s
            rf.draw(s, damage: s.damage(from: nil))
            // cairo composites under a clip through another path that rounds the coverage of
            // antialiased edges differently, by up to 11 levels of 255 (a node's rim under
            // the clip of a fading tail); a region the damage missed differs by 38 or more
            // (a halo) up to 240 (a node).
            #expect(differences(incremental, full, tolerance: 12) == [], "after scene \(scenes.firstIndex(of: s)!)")
        }
        // Dragging repaints a small part of the screen per frame on average.
        #expect(damagedArea / (scenes.count - 1) < size.width * size.height / 10)
    }

    @Test func onlyDamagedRectanglesAreCopiedToTheScanoutBuffer() {
        let shadow = ShadowBuffer(size: Size(width: 8, height: 4))
        shadow.pixels.initializeMemory(as: UInt8.self, repeating: 0xab, count: shadow.byteCount)
        let stride = 64
        let dst = UnsafeMutableRawPointer.allocate(byteCount: stride * 4, alignment: 16)
        defer { dst.deallocate() }
        dst.initializeMemory(as: UInt8.self, repeating: 0, count: stride * 4)
        shadow.copy([PixelRect(x: 2, y: 1, width: 3, height: 2), PixelRect(x: 7, y: 3, width: 5, height: 5)], to: dst, stride: stride)
        var copied = 0
        for y in 0..<4 {
            for x in 0..<16 where dst.load(fromByteOffset: y * stride + x * 4, as: UInt32.self) != 0 {
                copied += 1
                #expect((2..<5).contains(x) && (1..<3).contains(y) || (x == 7 && y == 3))
            }
        }
        #expect(copied == 7)
    }
}

/// `font_file`: text is drawn from the file named, whatever fontconfig would pick.
@Suite struct FontFileTests {
    let size = Size(width: 320, height: 80)
    let dir = "/usr/share/fonts/truetype/dejavu/"

    func prompt(_ text: String, _ configure: (inout Theme) -> Void) -> ShadowBuffer {
        var theme = Theme()
        configure(&theme)
        var scene = Scene(size: size, theme: theme, prompt: text, promptBox: PixelRect(x: 0, y: 0, width: 320, height: 80),
                          nodes: [], path: [], pathColor: theme.path, tail: nil)
        scene.promptSize = 24
        let shadow = ShadowBuffer(size: size)
        Renderer(shadow: shadow).draw(scene, damage: scene.damage(from: nil))
        return shadow
    }

    @Test func theNamedFileIsDrawnNotTheFamilyFontconfigWouldPick() throws {
        try #require(access(dir + "DejaVuSerif.ttf", R_OK) == 0, "fonts-dejavu-core is not installed")
        let fromFile = prompt("Draw your pattern") { $0.fontFile = dir + "DejaVuSerif.ttf" }
        let serif = prompt("Draw your pattern") { $0.fontFamily = "DejaVu Serif" }
        let sans = prompt("Draw your pattern") { $0.fontFamily = "DejaVu Sans" }
        #expect(differences(fromFile, serif) == [])
        #expect(differences(fromFile, sans) != [])
    }

    @Test func theDefaultFamilyFromItsFileLooksAsThroughFontconfig() throws {
        try #require(access(Theme.defaultFontFile, R_OK) == 0, "fonts-dejavu-core is not installed")
        // A family name that only differs in case: fontconfig finds DejaVu Sans, the
        // renderer does not take it for the default family's file.
        let direct = prompt("Enter your code 0123456789") { _ in }
        let fontconfig = prompt("Enter your code 0123456789") { $0.fontFamily = "dejavu sans" }
        #expect(Theme().directFontFile == Theme.defaultFontFile)
        #expect(differences(direct, fontconfig) == [])
    }

    @Test func aFileThatIsNoFontLeavesTheTextToFontconfig() {
        let broken = prompt("Draw your pattern") { $0.fontFile = "/etc/hostname" }
        let fontconfig = prompt("Draw your pattern") { $0.fontFamily = "dejavu sans" }
        #expect(differences(broken, fontconfig) == [])
    }

    @Test func charactersTheFileLacksComeFromAFontThatHasThem() {
        // Chinese is not in DejaVu Sans: the text must look as fontconfig draws it.
        let direct = prompt("使用图案") { _ in }
        let fontconfig = prompt("使用图案") { $0.fontFamily = "dejavu sans" }
        #expect(differences(direct, fontconfig) == [])
        let blank = prompt("") { _ in }
        #expect(differences(direct, blank) != [])
    }
}
