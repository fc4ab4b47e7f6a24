import Glibc
import Testing
import CCairo
import TouchlockCore
@testable import TouchlockRender

/// A background image is checked from its header, decoded once and scaled once to the
/// screen: each frame copies what its damage covers.
@Suite struct BackgroundImageTests {
    /// A `w` x `h` PNG, a horizontal ramp, written by cairo.
    func writeImage(_ w: Int, _ h: Int, to path: String) throws {
        let img = ShadowBuffer(size: Size(width: w, height: h))
        for y in 0..<h {
            for x in 0..<w {
                let v = UInt32(x * 255 / max(w - 1, 1))
                img.pixels.storeBytes(of: v << 16 | (255 - v) << 8 | 0x40, toByteOffset: y * img.stride + x * 4, as: UInt32.self)
            }
        }
        try Renderer(shadow: img).writePNG(to: path)
    }

    @Test func thePixelLimitIsReadFromTheHeaderBeforeDecoding() throws {
        let path = "/tmp/touchlock-test-bg-limit-\(getpid()).png"
        defer { unlink(path) }
        try writeImage(64, 48, to: path)
        let ok = try PNGImage.decode(path, pixelLimit: 64 * 48)
        #expect(ok.width == 64 && ok.height == 48)
        cairo_surface_destroy(ok.surface)
        #expect(throws: PNGImage.Refusal.self) { try PNGImage.decode(path, pixelLimit: 64 * 48 - 1) }
        do { _ = try PNGImage.decode(path, pixelLimit: 64 * 48 - 1) } catch {
            #expect(error.description == "\(path): 64x48 pixels, more than the 3071 (or 16384 on a side) allowed")
        }
        #expect(PNGImage.size(pngHeaderBytes(20000, 20000))! == (20000, 20000))
        #expect(PNGImage.size(Array("not a png at all, longer than 24 bytes".utf8)) == nil)
    }

    @Test func aDamagedRectangleRedrawnShowsWhatTheWholeScreenDrawnShows() throws {
        let path = "/tmp/touchlock-test-bg-scaled-\(getpid()).png"
        defer { unlink(path) }
        try writeImage(1000, 300, to: path)   // wider than the screen: cropped, scaled down
        var c = Config()
        try c.apply(settings: "background_image = \(path)\nbackground_dim = 0.3\n")
        let size = Size(width: 320, height: 200)
        let lock = LockScreen.make(config: c, size: size, density: Density(dpi: 160), shuffleSeed: 0)
        let whole = ShadowBuffer(size: size)
        Renderer(shadow: whole).draw(lock.scene, damage: lock.scene.damage(from: nil))
        // Drawn in pieces by one renderer, the pixels are the same.
        let pieces = ShadowBuffer(size: size)
        let r = Renderer(shadow: pieces)
        for x in stride(from: 0, to: 320, by: 80) {
            var d = Damage(bounds: size)
            d.add(PixelRect(x: x, y: 0, width: 80, height: 200))
            r.draw(lock.scene, damage: d)
        }
        var differ = 0
        for y in 0..<200 { for x in 0..<320 where whole.pixel(x: x, y: y) != pieces.pixel(x: x, y: y) { differ += 1 } }
        #expect(differ == 0)
        // The ramp covers the screen (the middle of the image shows, green to red, dimmed).
        let left = whole.pixel(x: 1, y: 100), right = whole.pixel(x: 318, y: 100)
        #expect(left >> 16 & 0xff < right >> 16 & 0xff && left >> 8 & 0xff > right >> 8 & 0xff)
    }
}

func pngHeaderBytes(_ w: UInt32, _ h: UInt32) -> [UInt8] {
    func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)] }
    // Appended piece by piece: Swift 6.0 gives up type-checking the sum in one expression.
    var bytes: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
    bytes += be(13)
    bytes += Array("IHDR".utf8)
    bytes += be(w)
    bytes += be(h)
    bytes += [8, 0, 0, 0, 0]
    return bytes
}
