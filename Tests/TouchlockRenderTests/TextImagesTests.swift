import Glibc
import Testing
import TouchlockCore
import TouchlockSystem
@testable import TouchlockRender

@Suite struct TextImagesTests {
    /// Every scene of `scenes` drawn whole, one after the other, by one renderer.
    func draw(_ scenes: [Scene], size: Size, images: TextImages?) -> [[UInt32]] {
        let shadow = ShadowBuffer(size: size)
        let r = Renderer(shadow: shadow)
        if let images { r.textImages = images }
        return scenes.map { scene in
            r.draw(scene, damage: scene.damage(from: nil))
            return (0..<size.height).flatMap { y in (0..<size.width).map { x in shadow.pixel(x: x, y: y) & 0xffffff } }
        }
    }

    /// The previews of the golden images' table, and a code pad typed on (pressed keys in
    /// a dimmed ink, digits, dots, a wrong code's message, the switch to the pattern).
    var screens: [(Size, [Scene])] {
        get throws {
            var out: [(Size, [Scene])] = []
            for g in ScreensRenderTests.golden {
                var config = Config()
                try config.apply(settings: g.config)
                let lock = try Preview.lockScreen(config: config, screen: g.screen, state: g.state, size: g.size,
                                                  density: Density(dpi: g.dpi), measure: DrawnTextMeasure(theme: config.theme))
                out.append((g.size, [lock.scene]))
            }
            let size = Size(width: 480, height: 800)
            out.append((size, codeScenes(size: size)))
            return out
        }
    }

    @Test func textFromMasksKeptByAnEarlierStartIsPixelForPixelTextDrawnFromGlyphs() throws {
        try #require(access(Theme.defaultFontFile, R_OK) == 0, "fonts-dejavu-core is not installed")
        for (size, scenes) in try screens {
            // A first start: every text is drawn from its glyphs, and its mask kept.
            let kept = TextImages()
            let glyphs = draw(scenes, size: size, images: kept)
            #expect(kept.count > 0)
            // A later start: every text comes from a mask read back from the file (none is
            // added, so no glyph was drawn), and the pixels are the same.
            let read = try TextImages(decoding: kept.encoded())
            #expect(read.count == kept.count)
            let fromMasks = draw(scenes, size: size, images: read)
            #expect(!read.changed, "\(size): text was drawn from glyphs again")
            let differing = zip(fromMasks, glyphs).map { a, b in zip(a, b).filter { $0 != $1 }.count }
            #expect(differing.allSatisfy { $0 == 0 }, "\(size): pixels differ per scene: \(differing)")
            // And text there is: the same scenes without any differ.
            let blank = scenes.map { s -> Scene in
                var s = s
                s.prompt = ""
                return s
            }
            #expect(draw(blank, size: size, images: nil).first != glyphs.first)
        }
    }

    @Test func textInAFontFileThatChangedIsDrawnAfresh() throws {
        try #require(access(Theme.defaultFontFile, R_OK) == 0, "fonts-dejavu-core is not installed")
        var template = Array("/tmp/touchlock-font-XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        defer { unlink(dir + "/font.ttf"); rmdir(dir) }
        let font = dir + "/font.ttf"
        try DurableFile.replace(font, with: FileContents.bytes(Theme.defaultFontFile), mode: 0o644)
        var theme = Theme()
        theme.fontFile = font
        var scene = Scene(size: Size(width: 320, height: 80), theme: theme, prompt: "Draw your pattern",
                          promptBox: PixelRect(x: 0, y: 0, width: 320, height: 80),
                          nodes: [], path: [], pathColor: theme.path, tail: nil)
        scene.promptSize = 24
        let kept = TextImages()
        let first = draw([scene], size: scene.size, images: kept)
        #expect(kept.count == 1)
        let read = try TextImages(decoding: kept.encoded())
        _ = draw([scene], size: scene.size, images: read)
        #expect(!read.changed)
        // The same file, touched: its modification time is part of what a mask is kept under.
        var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 0), timespec(tv_sec: 1_000_000_000, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, font, &times, 0) == 0)
        let again = try TextImages(decoding: kept.encoded())
        #expect(draw([scene], size: scene.size, images: again) == first)
        #expect(again.changed)
        #expect(again.count == read.count + 1)
    }

    @Test func digitsTypedAreNeverKept() throws {
        try #require(access(Theme.defaultFontFile, R_OK) == 0, "fonts-dejavu-core is not installed")
        // Typed digits shown in clear (no secure dots), and revealed ones.
        for secure in [false, true] {
            let size = Size(width: 480, height: 800)
            var scenes = codeScenes(size: size)
            if !secure {
                scenes = scenes.map { s in
                    var s = s
                    s.boxes = s.boxes.enumerated().map { i, b in
                        var b = b
                        b.content = .digit(i % 10)
                        return b
                    }
                    return s
                }
            }
            let shown = scenes.flatMap { $0.boxes.filter { if case .digit = $0.content { true } else { false } } }
            #expect(!shown.isEmpty)
            let kept = TextImages()
            _ = draw(scenes, size: size, images: kept)
            #expect(kept.count > 0)  // the prompt and the keypad's labels
            for b in shown {
                let cx = Double(b.rect.x) + Double(b.rect.width) / 2
                let cy = Double(b.rect.y) + Double(b.rect.height) / 2 - b.underlineWidth
                let place = "|\(cx.bitPattern)|\(cy.bitPattern)|"
                #expect(!kept.keys.contains { $0.contains(place) }, "a typed digit's mask was kept")
            }
        }
    }

    @Test func aLockoutsCountdownDoesNotGrowTheMasksWithoutBound() throws {
        try #require(access(Theme.defaultFontFile, R_OK) == 0, "fonts-dejavu-core is not installed")
        let theme = Theme()
        func scene(_ prompt: String) -> Scene {
            var s = Scene(size: Size(width: 640, height: 80), theme: theme, prompt: prompt,
                          promptBox: PixelRect(x: 0, y: 0, width: 640, height: 80),
                          nodes: [], path: [], pathColor: theme.path, tail: nil)
            s.promptSize = 24
            return s
        }
        let shadow = ShadowBuffer(size: Size(width: 640, height: 80))
        let r = Renderer(shadow: shadow)
        let kept = r.textImages
        let first = scene("Draw your pattern")
        r.draw(first, damage: first.damage(from: nil))
        // Four hours of a countdown, a string a second: far more than is ever kept.
        for left in stride(from: 4 * 3600, to: 4 * 3600 - TextImages.capacity - 100, by: -1) {
            let s = scene("Too many attempts. Try again in \(left / 3600):\(left / 60 % 60):\(left % 60)")
            r.draw(s, damage: s.damage(from: nil))
        }
        let full = kept.count
        #expect(full <= TextImages.capacity)
        #expect(kept.bytes <= TextImages.byteBudget)
        #expect(kept.bytes > TextImages.byteBudget - 64 << 10)  // full: one more would not fit
        // The first text drawn is kept; one drawn when full is drawn all the same.
        #expect(kept.keys.contains { $0.hasSuffix("|Draw your pattern") })
        let late = scene("Too many attempts. Try again in 0:00:01")
        r.draw(late, damage: late.damage(from: nil))
        #expect(kept.count == full)
        #expect(!kept.keys.contains { $0.hasSuffix("|Too many attempts. Try again in 0:00:01") })
        let background = rgb(theme.background)
        let inked = (0..<80).flatMap { y in (0..<640).map { x in shadow.pixel(x: x, y: y) & 0xffffff } }
            .filter { $0 != background }.count
        #expect(inked > 500, "the text drawn when the masks are full is missing")
    }

    @Test func aDamagedFileIsRefusedWhole() throws {
        try #require(access(Theme.defaultFontFile, R_OK) == 0, "fonts-dejavu-core is not installed")
        let (size, scenes) = try #require(try screens.first)
        let kept = TextImages()
        _ = draw(scenes, size: size, images: kept)
        let good = kept.encoded()
        #expect(throws: Never.self) { try TextImages(decoding: good) }
        var flipped = good
        flipped[flipped.count / 2] ^= 0x40
        #expect(throws: TextImages.DecodeError.self) { try TextImages(decoding: flipped) }
        #expect(throws: TextImages.DecodeError.self) { try TextImages(decoding: Array(good.dropLast(9))) }
        #expect(throws: TextImages.DecodeError.self) { try TextImages(decoding: []) }
        var otherVersion = good
        otherVersion[TextImages.magic.count - 2] = UInt8(ascii: "9")
        #expect(throws: TextImages.DecodeError.self) { try TextImages(decoding: otherVersion) }
    }

    /// Widths measured in a face read from a font file are kept with the masks and read
    /// back; a file of the version before (masks only) is still read.
    @Test func theWidthsMeasuredAreKeptAndAFileOfMasksOnlyIsStillRead() throws {
        try #require(access(Theme.defaultFontFile, R_OK) == 0, "fonts-dejavu-core is not installed")
        let kept = TextImages()
        let setter = TextSetter()
        setter.keepWidths(in: kept)
        let w = setter.width("Draw your pattern to unlock", theme: Theme(), size: 20, bold: false)
        #expect(w > 100 && kept.changed)
        let read = try TextImages(decoding: kept.encoded())
        let later = TextSetter()
        later.keepWidths(in: read)
        #expect(later.width("Draw your pattern to unlock", theme: Theme(), size: 20, bold: false) == w)
        #expect(!read.changed, "a width read back was kept again")
        // Version 1: the masks and no widths section.
        var v1 = TextImages.magicMasksOnly
        withUnsafeBytes(of: UInt32(0).littleEndian) { v1 += $0 }
        withUnsafeBytes(of: CRC32.checksum(v1).littleEndian) { v1 += $0 }
        #expect(throws: Never.self) { try TextImages(decoding: v1) }
    }

    @Test func onlyTheMasksDrawnSinceTheyWereReadAreWrittenBack() throws {
        try #require(access(Theme.defaultFontFile, R_OK) == 0, "fonts-dejavu-core is not installed")
        let all = try screens
        let kept = TextImages()
        for (size, scenes) in all { _ = draw(scenes, size: size, images: kept) }
        let (size, scenes) = all[0]
        let read = try TextImages(decoding: kept.encoded())
        _ = draw(scenes, size: size, images: read)
        let alone = TextImages()
        _ = draw(scenes, size: size, images: alone)
        // Another layout's text is not carried on: the file follows what is drawn.
        #expect(try TextImages(decoding: read.encoded()).count == alone.count)
        #expect(alone.count < kept.count)
    }
}
