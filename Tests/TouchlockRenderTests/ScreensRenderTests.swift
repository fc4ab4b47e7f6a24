import Foundation
import Glibc
import Testing
import TouchlockCore
@testable import TouchlockRender

/// A code pad typed on through its keypad, one scene per event, with the cursor's blink,
/// a pressed key, the last digit revealed then dotted, a wrong code, and a switch to the
/// pattern and back.
func codeScenes(size: Size) -> [Scene] {
    var c = Config()
    c.screens.methods = .both
    c.screens.codeSecure = true
    c.screens.codeReveal = .milliseconds(1300)
    var s = LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 3)
    var scenes: [Scene] = []
    var t: Int64 = 0
    func step(_ f: (inout LockScreen, Instant) -> Void) {
        t += 40_000
        f(&s, Instant(microseconds: t))
        scenes.append(s.scene)
    }
    let toggle = s.toggleRect!.centre
    step { s, now in _ = s.touches([ScreenTouch(id: 1, phase: .began, point: toggle)], at: now) }
    step { s, now in _ = s.touches([ScreenTouch(id: 1, phase: .ended, point: toggle)], at: now) }
    for (i, slot) in [0, 4, 8].enumerated() {
        let key = s.code!.layout.keys[slot].centre
        step { s, now in _ = s.touches([ScreenTouch(id: 10 + i, phase: .began, point: key)], at: now) }
        step { s, now in _ = s.touches([ScreenTouch(id: 10 + i, phase: .moved, point: Point(x: key.x + 200, y: key.y))], at: now) }
        step { s, now in _ = s.touches([ScreenTouch(id: 10 + i, phase: .moved, point: key)], at: now) }
        step { s, now in _ = s.touches([ScreenTouch(id: 10 + i, phase: .ended, point: key)], at: now) }
    }
    // The blink and the reveal run out.
    for dt: Int64 in [600_000, 625_000, 650_000, 675_000, 1_500_000, 2_000_000] {
        let when = Instant(microseconds: t + dt)
        scenes.append({ _ = s.timer(at: when); return s.scene }())
    }
    t += 2_000_000
    step { s, now in _ = s.key(.delete, at: now) }
    step { s, now in _ = s.key(.digit(7), at: now) }
    step { s, now in _ = s.key(.digit(1), at: now) }
    step { s, now in _ = s.verified(false, at: now) }
    t += 500_000
    step { s, now in _ = s.timer(at: now) }
    step { s, now in _ = s.touches([ScreenTouch(id: 40, phase: .began, point: Point(x: 2, y: 2))], at: now) }
    step { s, now in _ = s.touches([ScreenTouch(id: 40, phase: .ended, point: Point(x: 2, y: 2))], at: now) }
    step { s, now in _ = s.touches([ScreenTouch(id: 41, phase: .began, point: toggle)], at: now) }
    return scenes
}

/// How a drawn screen differs from its golden image, region by region: the screen is cut
/// into square tiles of `tile` pixels (16, whatever the screen's size), and a tile fails
/// when more than `allowed` of its pixels (4 of 256) differ by more than `tolerance` (24
/// of 255) in some channel. Antialiasing and hinting differences between cairo and
/// FreeType builds move a few pixels' shades along edges, within the channel delta; a
/// wrong digit, a missing node, a box moved by a pixel or a wrong colour changes whole
/// runs of pixels in the tiles it crosses. Tiles of a fixed size keep that true at 4K: a
/// bound on the whole screen's pixels, or on tiles that grow with the screen, dilutes a
/// wrong digit (under 1/500 of the pixels of a 3840x2160 screen).
struct GoldenDifference: CustomStringConvertible {
    static let tile = 16
    static let allowed = 4
    static let tolerance = 24

    /// The failing tiles: their origin and how many of their pixels differ.
    var failing: [(x: Int, y: Int, differing: Int)] = []
    var size: Size
    var sizeMismatch: Size? = nil

    init(_ drawn: ShadowBuffer, _ golden: ShadowBuffer) {
        size = drawn.size
        guard drawn.size == golden.size else {
            sizeMismatch = golden.size
            return
        }
        let tile = Self.tile, tolerance = Int32(Self.tolerance)
        let columns = (size.width + tile - 1) / tile
        var counts = [Int](repeating: 0, count: columns)
        for y in 0..<size.height {
            let a = drawn.pixels + y * drawn.stride, b = golden.pixels + y * golden.stride
            if memcmp(a, b, size.width * 4) != 0 {
                for x in 0..<size.width {
                    let p = a.load(fromByteOffset: x * 4, as: UInt32.self), q = b.load(fromByteOffset: x * 4, as: UInt32.self)
                    if p & 0xffffff == q & 0xffffff { continue }
                    var over = false
                    for shift: UInt32 in [0, 8, 16] {
                        let d = Int32((p >> shift) & 0xff) - Int32((q >> shift) & 0xff)
                        if d > tolerance || d < -tolerance { over = true }
                    }
                    if over { counts[x / tile] += 1 }
                }
            }
            if y % tile == tile - 1 || y == size.height - 1 {
                for (c, n) in counts.enumerated() where n > Self.allowed {
                    failing.append((c * tile, y - y % tile, n))
                }
                for c in counts.indices { counts[c] = 0 }
            }
        }
    }

    var matches: Bool { failing.isEmpty && sizeMismatch == nil }

    var description: String {
        if let s = sizeMismatch { return "drawn \(size.width)x\(size.height), golden \(s.width)x\(s.height)" }
        if failing.isEmpty { return "every \(Self.tile) px tile matches" }
        let shown = failing.prefix(4).map { "(\($0.x), \($0.y)): \($0.differing) px" }.joined(separator: ", ")
        return "\(failing.count) tile(s) of \(Self.tile) px differ: \(shown)\(failing.count > 4 ? ", ..." : "")"
    }
}

/// The golden images, per release of the font stack that draws them. Golden/ holds those
/// drawn on Debian 12 (cairo 1.16, FreeType 2.12, HarfBuzz 6); a release whose cairo and
/// FreeType draw text a pixel apart has its own images of the same screens in
/// Golden/ID-VERSION/ (os-release's ID and VERSION_ID: Golden/debian-13/, cairo 1.18,
/// FreeType 2.13, HarfBuzz 10), used there for every image it holds. Between the two the
/// glyphs' edges move by a pixel across whole words, as a box moved by a pixel does, so no
/// tolerance could take both and still see that (the figures are in docs/platforms.md).
enum GoldenImages {
    static let directory = String(#filePath.dropLast("ScreensRenderTests.swift".count)) + "Golden/"

    /// This system's release, "debian-13", from /etc/os-release (nil if it has none).
    static let release: String? = {
        guard let text = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) else { return nil }
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            fields[String(parts[0])] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"'"))
        }
        guard let id = fields["ID"], let version = fields["VERSION_ID"] else { return nil }
        return "\(id)-\(version)"
    }()

    /// The golden image of `name` for this release: its own if its directory holds one,
    /// else the one in Golden/. When the images are written anew on a release that has a
    /// directory of its own, a new image goes there, never over Golden/'s.
    static func path(_ name: String) -> String {
        if let release {
            let ownDirectory = directory + release + "/"
            let own = ownDirectory + name + ".png"
            if FileManager.default.fileExists(atPath: own) { return own }
            if updatingGoldenImages && FileManager.default.fileExists(atPath: ownDirectory) { return own }
        }
        return directory + name + ".png"
    }
}

/// TOUCHLOCK_UPDATE_GOLDEN set: the golden images are written anew instead of compared.
var updatingGoldenImages: Bool { getenv("TOUCHLOCK_UPDATE_GOLDEN") != nil }

/// Compares `drawn` with the golden image at `path` and records an issue unless they
/// match. With TOUCHLOCK_UPDATE_GOLDEN set it compares nothing: it writes `drawn` there
/// and records a warning saying so, with how the image before (if any) differed, so an
/// update never passes as a match and never compares an image with itself. Returns the
/// golden image as it now is on disk, for further checks against it.
@discardableResult
func expectGoldenImage(_ drawn: ShadowBuffer, at path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> ShadowBuffer {
    let name = String(path.split(separator: "/").last ?? "")
    let before = ShadowBuffer.readPNG(path)
    if updatingGoldenImages {
        try drawn.writePNG(to: path)
        let change = before.map { "the image before: \(GoldenDifference(drawn, $0))" } ?? "a new image"
        // Swift Testing has warnings from Swift 6.3 on; before, the update is a failure.
        #if compiler(>=6.3)
        Issue.record("\(name): written anew, not compared (\(change))", severity: .warning, sourceLocation: sourceLocation)
        #else
        Issue.record("\(name): written anew, not compared (\(change))", sourceLocation: sourceLocation)
        #endif
        return drawn
    }
    let golden = try #require(before, "missing \(path) (TOUCHLOCK_UPDATE_GOLDEN=1 writes it)", sourceLocation: sourceLocation)
    let d = GoldenDifference(drawn, golden)
    #expect(d.matches, "\(name): \(d)", sourceLocation: sourceLocation)
    return golden
}

@Suite struct ScreensRenderTests {
    @Test(arguments: [Size(width: 480, height: 800), Size(width: 1280, height: 800)])
    func drawingOnlyTheDamageOfTheCodePadGivesTheSamePixelsAsFullRedraws(size: Size) {
        let scenes = codeScenes(size: size)
        #expect(scenes.contains { $0.keys.contains(where: \.pressed) })
        #expect(scenes.contains { $0.boxes.contains { $0.cursor.map { $0.opacity > 0 && $0.opacity < 1 } ?? false } })
        #expect(scenes.contains { $0.boxes.contains { $0.content == .digit(7) } })
        let incremental = ShadowBuffer(size: size), full = ShadowBuffer(size: size)
        let ri = Renderer(shadow: incremental), rf = Renderer(shadow: full)
        var previous: Scene? = nil
        for (i, s) in scenes.enumerated() {
            ri.draw(s, damage: s.damage(from: previous))
            previous = s
            rf.draw(s, damage: s.damage(from: nil))
            #expect(differences(incremental, full, tolerance: 12) == [], "after scene \(i)")
        }
    }

    @Test func twelveDigitsOnANarrowPortraitScreenStayInsideTheirBoxes() throws {
        let size = Size(width: 360, height: 640)
        var c = Config()
        try c.apply(settings: "unlock_method = code\ncode_length = 12\nmessage_code_prompt = Enter the twelve digits of your code to unlock this device\n")
        var s = LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 0)
        let incremental = ShadowBuffer(size: size), full = ShadowBuffer(size: size)
        let ri = Renderer(shadow: incremental), rf = Renderer(shadow: full)
        var previous: Scene? = nil
        for i in 0..<11 {
            _ = s.key(.digit((i * 3) % 10), at: Instant(microseconds: Int64(i) * 50_000))
            let scene = s.scene
            ri.draw(scene, damage: scene.damage(from: previous))
            rf.draw(scene, damage: scene.damage(from: nil))
            previous = scene
            #expect(differences(incremental, full, tolerance: 12) == [], "after digit \(i + 1)")
        }
        _ = s.key(.delete, at: Instant(microseconds: 600_000))
        ri.draw(s.scene, damage: s.scene.damage(from: previous))
        rf.draw(s.scene, damage: s.scene.damage(from: nil))
        #expect(differences(incremental, full, tolerance: 12) == [], "after delete")
    }

    @Test func aBlinkStepRepaintsOnlyTheCursorsBox() {
        let size = Size(width: 480, height: 800)
        var c = Config()
        c.screens.methods = .code
        var s = LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 0)
        _ = s.key(.digit(1), at: Instant(microseconds: 0))
        let before = s.scene
        _ = s.timer(at: Instant(microseconds: 675_000))
        let d = s.scene.damage(from: before)
        let box = s.code!.layout.boxes[1]
        #expect(!d.isEmpty)
        #expect(d.rects.allSatisfy { box.union($0).area <= (box.width + 6) * (box.height + 6) })
    }

    @Test func aBackgroundImageCoversTheScreenBehindTheBoxes() throws {
        // A 4x2 PNG, left half red, right half green, scaled to cover a 400x400 screen:
        // the middle 200 px of it show, red on the left, green on the right.
        let img = ShadowBuffer(size: Size(width: 4, height: 2))
        for y in 0..<2 {
            for x in 0..<4 {
                img.pixels.storeBytes(of: x < 2 ? UInt32(0xff0000) : UInt32(0x00ff00), toByteOffset: y * img.stride + x * 4, as: UInt32.self)
            }
        }
        let path = "/tmp/touchlock-test-background-\(getpid()).png"
        defer { unlink(path) }
        try Renderer(shadow: img).writePNG(to: path)
        var c = Config()
        try c.apply(settings: "unlock_method = code\nbackground_image = \(path)\nbackground_dim = 0\n")
        let size = Size(width: 400, height: 400)
        let lock = LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 0)
        let shadow = ShadowBuffer(size: size)
        Renderer(shadow: shadow).draw(lock.scene, damage: lock.scene.damage(from: nil))
        #expect(close(shadow.pixel(x: 2, y: 2) & 0xffffff, 0xff0000, within: 8))
        #expect(close(shadow.pixel(x: 397, y: 397) & 0xffffff, 0x00ff00, within: 8))
        // A scrim of the background colour, half opaque: red half covered by #000000.
        try c.apply(settings: "background = #000000\nbackground_dim = 0.5\n")
        let dimmed = LockScreen.make(config: c, size: size, density: Density(screen: size, physicalMillimetres: nil), shuffleSeed: 0)
        Renderer(shadow: shadow).draw(dimmed.scene, damage: dimmed.scene.damage(from: nil))
        #expect(close(shadow.pixel(x: 2, y: 2) & 0xffffff, 0x800000, within: 8))
    }

    /// Pixels of `shadow` inside `r` within `d` of `colour`.
    func count(_ shadow: ShadowBuffer, in r: PixelRect, near colour: UInt32, within d: Int = 40) -> Int {
        var n = 0
        for y in r.y..<r.maxY { for x in r.x..<r.maxX where close(shadow.pixel(x: x, y: y) & 0xffffff, colour, within: d) { n += 1 } }
        return n
    }

    @Test func theHighContrastThemeDrawsAPressedKeysDigitDarkOnYellowAndOutlinesTheKeys() throws {
        var c = Config()
        try c.apply(settings: "theme = high-contrast\n")
        #expect(c.theme.background == Color(hex: "#000000") && c.theme.keyPressedText == Color(hex: "#000000"))
        let size = Size(width: 480, height: 800)
        let lock = try Preview.lockScreen(config: c, screen: .code, state: "pressed", size: size, density: Density(dpi: 187))
        let shadow = ShadowBuffer(size: size)
        Renderer(shadow: shadow).draw(lock.scene, damage: lock.scene.damage(from: nil))
        let pressed = try #require(lock.scene.keys.first { $0.pressed })
        let r = pressed.rect
        let middle = PixelRect(x: r.x + r.width / 4, y: r.y + r.height / 4, width: r.width / 2, height: r.height / 2)
        // The yellow fill, and the digit in black on it (not white, which vanished on yellow).
        #expect(count(shadow, in: middle, near: 0xffd600) > middle.area / 3)
        #expect(count(shadow, in: middle, near: 0x000000) > 20)
        #expect(count(shadow, in: middle, near: 0xffffff) == 0)
        // An unpressed black key on black shows its white outline.
        let other = try #require(lock.scene.keys.first { !$0.pressed }).rect
        let edge = PixelRect(x: other.x + other.width / 2 - 2, y: other.y, width: 4, height: 4)
        #expect(count(shadow, in: edge, near: 0xffffff) > 0)
    }

    @Test func keysAsDarkAsTheBackgroundGetAnOutlineOfTheirOwn() throws {
        var c = Config()
        try c.apply(settings: "unlock_method = code\nbackground = #101010\nkey_color = #101010\nunderline_color = #808080\n")
        #expect(c.theme.effectiveKeyOutline == Color(hex: "#808080"))
        var plain = Config()
        try plain.apply(settings: "unlock_method = code\n")
        #expect(plain.theme.effectiveKeyOutline == nil)
        let size = Size(width: 480, height: 800)
        let lock = LockScreen.make(config: c, size: size, density: Density(dpi: 187), shuffleSeed: 0)
        let shadow = ShadowBuffer(size: size)
        Renderer(shadow: shadow).draw(lock.scene, damage: lock.scene.damage(from: nil))
        let k = lock.scene.keys[0].rect
        #expect(count(shadow, in: PixelRect(x: k.x + k.width / 2 - 2, y: k.y, width: 4, height: 4), near: 0x808080) > 0)
    }

    @Test func secureDotsAreSizedInDpEvenWithTwelveDigitsOnANarrowScreen() throws {
        var c = Config()
        try c.apply(settings: "unlock_method = code\ncode_length = 12\ncode_secure = true\n")
        let size = Size(width: 320, height: 480)
        let lock = try Preview.lockScreen(config: c, screen: .code, state: "secure:11", size: size, density: Density(dpi: 160))
        let dots = lock.scene.boxes.filter { $0.content == .dot }
        #expect(dots.count == 11)
        #expect(dots.allSatisfy { $0.dotRadius >= 4 && $0.dotRadius * 2 <= Double($0.rect.width) })
    }

    static let golden: [(name: String, screen: Preview.Screen, state: String, size: Size, dpi: Double, config: String)] = [
        // Landscape, portrait, small, 4K (the sizes and densities of real panels).
        ("pattern-drawing-1280x800", .pattern, "drawing", Size(width: 1280, height: 800), 102, "unlock_method = both\n"),
        ("pattern-error-480x800", .pattern, "error", Size(width: 480, height: 800), 187, ""),
        ("code-digits-480x800", .code, "digits:2", Size(width: 480, height: 800), 187, ""),
        ("code-secure-1280x800", .code, "reveal:3", Size(width: 1280, height: 800), 160, ""),
        ("code-zh-480x800", .code, "pressed", Size(width: 480, height: 800), 187,
         "message_code_prompt = 请输入验证码\nlabel_use_pattern = 使用图案\n"),
        ("code-lockout-240x320", .code, "lockout", Size(width: 240, height: 320), 143, "unlock_method = both\n"),
        ("pattern-idle-320x240", .pattern, "idle", Size(width: 320, height: 240), 114, "unlock_method = both\n"),
        ("code-digits-3840x2160", .code, "digits:3", Size(width: 3840, height: 2160), 160, "unlock_method = both\n"),
        // Right to left: shaped Arabic and Hebrew, the columns traded (ShapingTests checks
        // the glyphs against hb-shape's).
        ("pattern-ar-1280x800", .pattern, "drawing", Size(width: 1280, height: 800), 160, ScreensRenderTests.arabic),
        ("code-he-800x480", .code, "digits:2", Size(width: 800, height: 480), 187, ScreensRenderTests.hebrew),
        ("code-ar-480x800", .code, "error", Size(width: 480, height: 800), 187, ScreensRenderTests.arabic),
        // The service pad a long press on a pattern-only screen's prompt opens.
        ("service-digits-480x800", .service, "digits:2", Size(width: 480, height: 800), 187, ""),
    ]

    static let arabic = """
        unlock_method = both
        message_pattern_prompt = ارسم النقش لفتح القفل
        message_code_prompt = أدخل الرمز المكون من 4 أرقام
        message_wrong_code = رمز خاطئ، حاول مرة أخرى
        label_use_pattern = استخدم النقش
        label_use_code = استخدم الرمز

        """
    static let hebrew = """
        unlock_method = both
        message_pattern_prompt = צייר את הדפוס כדי לבטל את הנעילה
        message_code_prompt = הזן את הקוד בן 4 הספרות
        label_use_pattern = השתמש בדפוס
        label_use_code = השתמש בקוד

        """

    /// Previews on panels of the layout table (landscape, portrait, small, 4K) against
    /// images in Golden/. TOUCHLOCK_UPDATE_GOLDEN=1 writes them anew, each with a warning
    /// instead of a comparison (then look at them before committing).
    @Test(arguments: 0..<golden.count)
    func previewsMatchTheGoldenImages(index: Int) throws {
        let g = Self.golden[index]
        var config = Config()
        try config.apply(settings: g.config)
        let lock = try Preview.lockScreen(config: config, screen: g.screen, state: g.state, size: g.size,
                                          density: Density(dpi: g.dpi), measure: DrawnTextMeasure(theme: config.theme))
        let shadow = ShadowBuffer(size: g.size)
        let r = Renderer(shadow: shadow)
        r.draw(lock.scene, damage: lock.scene.damage(from: nil))
        let expected = try expectGoldenImage(shadow, at: GoldenImages.path(g.name))
        #expect(expected.size == g.size)
    }

    /// The comparison can fail where a user would see it, at any size: the screen drawn
    /// again unchanged matches its golden image (and itself, tile for tile), and one digit
    /// changed, one node left out or one box moved by two pixels fails it, on the 4K code
    /// pad as on the small screens.
    @Test(arguments: [
        ("code-digits-3840x2160", "digit"), ("code-digits-3840x2160", "box"), ("code-digits-480x800", "digit"),
        ("code-secure-1280x800", "box"), ("code-lockout-240x320", "box"), ("pattern-drawing-1280x800", "node"),
        ("pattern-idle-320x240", "node"), ("code-digits-3840x2160", "lower box"), ("code-lockout-240x320", "lower box"),
    ])
    func aChangedDigitNodeOrBoxFailsTheGoldenComparisonAndTheSameScreenPasses(name: String, change: String) throws {
        let g = try #require(Self.golden.first { $0.name == name })
        var config = Config()
        try config.apply(settings: g.config)
        let lock = try Preview.lockScreen(config: config, screen: g.screen, state: g.state, size: g.size,
                                          density: Density(dpi: g.dpi), measure: DrawnTextMeasure(theme: config.theme))
        let golden = try #require(ShadowBuffer.readPNG(GoldenImages.path(name)))
        func draw(_ scene: Scene) -> ShadowBuffer {
            let shadow = ShadowBuffer(size: g.size)
            Renderer(shadow: shadow).draw(scene, damage: scene.damage(from: nil))
            return shadow
        }
        let same = draw(lock.scene), again = draw(lock.scene)
        #expect(GoldenDifference(same, golden).matches, "\(name) drawn unchanged")
        #expect(GoldenDifference(same, again).matches)
        var scene = lock.scene
        switch change {
        case "digit":
            let i = try #require(scene.boxes.firstIndex { if case .digit = $0.content { true } else { false } })
            guard case .digit(let d) = scene.boxes[i].content else { return }
            scene.boxes[i].content = .digit(d == 8 ? 3 : 8)
        case "box":
            let i = try #require(scene.boxes.indices.last)
            scene.boxes[i].rect.x += 2
        case "lower box":
            let i = try #require(scene.boxes.indices.last)
            scene.boxes[i].rect.y += 1
        default:
            #expect(scene.nodes.count > 1)
            scene.nodes.removeLast()
        }
        #expect(scene != lock.scene)
        let d = GoldenDifference(draw(scene), golden)
        #expect(!d.matches, "\(name) with a \(change) changed still matches its golden image")
    }

    /// Noise within the channel delta passes everywhere; a few pixels off in a tile pass,
    /// one more fails it, wherever the tile is and however large the screen.
    @Test func theComparisonAllowsShadeNoiseAndAFewPixelsPerTileButNoMore() {
        let size = Size(width: 3840, height: 2160)
        let golden = ShadowBuffer(size: size), drawn = ShadowBuffer(size: size)
        func set(_ b: ShadowBuffer, _ x: Int, _ y: Int, _ v: UInt32) {
            b.pixels.storeBytes(of: v, toByteOffset: y * b.stride + x * 4, as: UInt32.self)
        }
        for y in 0..<size.height {
            for x in 0..<size.width {
                let v = UInt32((x * 7 + y * 3) % 200)
                set(golden, x, y, v << 16 | v << 8 | v)
                let w = v + UInt32((x + y) % 2 * GoldenDifference.tolerance)
                set(drawn, x, y, w << 16 | v << 8 | w)
            }
        }
        #expect(GoldenDifference(drawn, golden).matches)
        // A few pixels of one tile (and of the last, partial row of tiles) wrong.
        for i in 0..<GoldenDifference.allowed {
            set(drawn, 2000 + i, 1000, 0xff00ff)
            set(drawn, 3839 - i, 2159, 0xff00ff)
        }
        #expect(GoldenDifference(drawn, golden).matches)
        set(drawn, 2000, 1001, 0xff00ff)
        let d = GoldenDifference(drawn, golden)
        #expect(d.failing.map(\.x) == [2000 / 16 * 16] && d.failing.map(\.y) == [1000 / 16 * 16], "\(d)")
        #expect(!GoldenDifference(ShadowBuffer(size: Size(width: 3840, height: 2161)), golden).matches)
    }

    /// A portrait screen on a landscape panel turned a quarter clockwise (800x480, as
    /// `touchlockctl preview --size 800x480 --rotation 90` draws it): the golden image is
    /// the panel's picture, and turned back (a quarter counter-clockwise) it is the upright
    /// 480x800 screen of the unrotated golden image.
    @Test func aRotatedPreviewMatchesItsGoldenImageAndTurnedBackTheUprightOne() throws {
        let panel = Size(width: 800, height: 480)
        let logical = Rotation.degrees90.logicalSize(panel: panel)
        #expect(logical == Size(width: 480, height: 800))
        let lock = try Preview.lockScreen(config: Config(), screen: .code, state: "digits:2", size: logical,
                                          density: Density(dpi: 187), measure: DrawnTextMeasure(theme: Config().theme))
        let shadow = ShadowBuffer(size: logical)
        Renderer(shadow: shadow).draw(lock.scene, damage: lock.scene.damage(from: nil))
        let picture = ShadowBuffer(size: panel)
        shadow.copy([PixelRect(x: 0, y: 0, width: logical.width, height: logical.height)], to: picture.pixels,
                    stride: picture.stride, rotation: .degrees90)
        let expected = try expectGoldenImage(picture, at: GoldenImages.path("code-digits-800x480-rotation-90"))
        #expect(expected.size == panel)
        // Turned back: the upright golden image of the same screen.
        let back = ShadowBuffer(size: logical)
        expected.copy([PixelRect(x: 0, y: 0, width: panel.width, height: panel.height)], to: back.pixels,
                      stride: back.stride, rotation: .degrees270)
        let upright = try #require(ShadowBuffer.readPNG(GoldenImages.path("code-digits-480x800")))
        let u = GoldenDifference(back, upright)
        #expect(u.matches, "turned back, against the upright screen: \(u)")
    }
}

@Suite struct TextMetricsTests {
    /// The layout checks text against TextMetrics's estimate: it must not be below what
    /// cairo measures for any text the screens show, in Latin and in Chinese.
    @Test func theEstimateIsNeverNarrowerThanTheTextAsDrawn() {
        let m = Messages()
        var texts = [m.patternPrompt, m.codePrompt, m.wrongPattern, m.wrongCode, m.unlocked, m.useCode, m.usePattern,
                     m.enrollPattern, m.enrollPatternAgain, m.enrollCode, m.enrollCodeAgain, m.enrollMismatch,
                     Messages.fill(m.tooShort, ["min": 4, "n": 2]), Messages.fill(m.codeIncomplete, ["n": 12]),
                     m.lockout(left: .milliseconds(5_999_000)), m.lockout(left: .milliseconds(88_000_000)),
                     "OK", "请输入验证码", "使用图案", "验证码错误", "Locked: cannot record the attempt (No space left on device). Touch to retry"]
        texts += (0...9).map(String.init)
        let r = Renderer(shadow: ShadowBuffer(size: Size(width: 8, height: 8)))
        for t in texts {
            for size in [12.0, 28.0, 64.0] {
                let drawn = r.textWidth(t, theme: Theme(), size: size)
                let estimate = TextMetrics.estimatedWidth(t, size: size)
                #expect(drawn <= estimate, "'\(t)' at \(size) px: drawn \(drawn) px, estimated \(estimate) px")
            }
        }
    }
}

/// The clock, the message and the logo: golden images, and the damage of a new minute.
@Suite struct InfoRenderTests {
    static let dir = String(#filePath.dropLast("ScreensRenderTests.swift".count)) + "Golden/"

    static let golden: [(name: String, screen: Preview.Screen, state: String, size: Size, dpi: Double,
                         settings: String, screenKeys: [(String, String)])] = [
        ("info-clock-480x800", .pattern, "idle", Size(width: 480, height: 800), 187, "", [("clock", "date-time")]),
        ("info-message-1280x800", .code, "digits:2", Size(width: 1280, height: 800), 160, "unlock_method = both\n",
         [("clock", "time"), ("message", "Property of the Riverside clinic. If found, please call 555 0100.")]),
        ("info-logo-320x240", .pattern, "drawing", Size(width: 320, height: 240), 114, "unlock_method = both\n",
         [("clock", "date-time"), ("clock_hours", "12"), ("message", "Ward 3, bed 12"), ("logo", dir + "logo.png")]),
    ]

    static func lock(_ index: Int) throws -> LockScreen {
        let g = golden[index]
        var config = Config()
        try config.apply(settings: g.settings)
        for (k, v) in g.screenKeys { try config.set(section: "screen", key: k, value: v) }
        return try Preview.lockScreen(config: config, screen: g.screen, state: g.state, size: g.size, density: Density(dpi: g.dpi),
                                      measure: DrawnTextMeasure(theme: config.theme))
    }

    /// TOUCHLOCK_UPDATE_GOLDEN=1 writes them anew, each with a warning instead of a
    /// comparison (then look at them before committing).
    @Test(arguments: 0..<golden.count)
    func theClockTheMessageAndTheLogoMatchTheirGoldenImages(index: Int) throws {
        let g = Self.golden[index]
        let lock = try Self.lock(index)
        let scene = lock.scene
        let info = try #require(scene.info)
        #expect(info.text.time?.hasPrefix("10:09") == true)
        let shadow = ShadowBuffer(size: g.size)
        Renderer(shadow: shadow).draw(scene, damage: scene.damage(from: nil))
        let expected = try expectGoldenImage(shadow, at: GoldenImages.path(g.name))
        // Without the information, the same screen does not match: the test sees it.
        var bare = scene
        bare.info = nil
        let without = ShadowBuffer(size: g.size)
        Renderer(shadow: without).draw(bare, damage: bare.damage(from: nil))
        #expect(!GoldenDifference(without, expected).matches, "\(g.name) matches without its clock")
    }

    /// A new minute repaints the time's box and nothing else, and the pixels are those of
    /// a full redraw; a new message likewise its box.
    @Test func aNewMinuteRepaintsOnlyTheTimeAndGivesThePixelsOfAFullRedraw() throws {
        var lock = try Self.lock(1)
        let before = lock.scene
        let layout = try #require(before.info?.layout)
        let shadow = ShadowBuffer(size: before.size), full = ShadowBuffer(size: before.size)
        let r = Renderer(shadow: shadow)
        r.draw(before, damage: before.damage(from: nil))
        var text = lock.info
        text.time = "10:10"
        #expect(lock.setInfo(text) == [.redraw])
        #expect(lock.setInfo(text) == [])
        let after = lock.scene
        let damage = after.damage(from: before)
        #expect(damage.rects == [layout.time!])
        r.draw(after, damage: damage)
        Renderer(shadow: full).draw(after, damage: after.damage(from: nil))
        #expect(differences(shadow, full, tolerance: 12) == [])
        text.message = "Back at 3 pm"
        _ = lock.setInfo(text)
        let third = lock.scene
        #expect(third.damage(from: after).rects == [layout.message!])
    }
}
