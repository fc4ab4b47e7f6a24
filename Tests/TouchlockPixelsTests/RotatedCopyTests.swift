import Glibc
import Testing
import TouchlockCore
import TouchlockPixels

/// A logical picture whose every pixel differs from every other (its coordinates), so a
/// pixel landing in the wrong place shows.
private func numbered(_ size: Size) -> ShadowBuffer {
    let b = ShadowBuffer(size: size)
    for y in 0..<size.height {
        for x in 0..<size.width {
            b.pixels.storeBytes(of: UInt32(y << 16 | x) | 0x8000_0000, toByteOffset: y * b.stride + x * 4, as: UInt32.self)
        }
    }
    return b
}

/// The whole logical picture turned the obvious way, pixel by pixel, by where each logical
/// pixel must land: (x, y) goes to the panel pixel the picture's turn takes it to.
private func naive(_ b: ShadowBuffer, _ rotation: Rotation) -> (pixels: [UInt32], panel: Size) {
    let w = b.size.width, h = b.size.height
    let panel = rotation.swapsAxes ? Size(width: h, height: w) : b.size
    var out = [UInt32](repeating: 0, count: w * h)
    for y in 0..<h {
        for x in 0..<w {
            let (px, py): (Int, Int) = switch rotation {
            case .degrees0: (x, y)
            case .degrees90: (h - 1 - y, x)             // clockwise: the top row becomes the right column
            case .degrees180: (w - 1 - x, h - 1 - y)
            case .degrees270: (y, w - 1 - x)            // counter-clockwise: the top row becomes the left column
            }
            out[py * panel.width + px] = b.pixel(x: x, y: y)
        }
    }
    return (out, panel)
}

/// A panel buffer with a stride wider than its rows (as dumb buffers may have), filled
/// with a marker that no copied pixel has.
private final class PanelBuffer {
    let size: Size
    let stride: Int
    let memory: UnsafeMutableRawPointer
    static let untouched: UInt32 = 0x0bad_f00d

    init(_ size: Size) {
        self.size = size
        stride = (size.width + 13) * 4
        memory = .allocate(byteCount: stride * size.height, alignment: 64)
        for i in 0..<(stride * size.height / 4) { memory.storeBytes(of: Self.untouched, toByteOffset: i * 4, as: UInt32.self) }
    }
    deinit { memory.deallocate() }
    func pixel(_ x: Int, _ y: Int) -> UInt32 { memory.load(fromByteOffset: y * stride + x * 4, as: UInt32.self) }
}

@Suite struct RotatedCopyTests {
    static let sizes = [Size(width: 241, height: 319), Size(width: 64, height: 48), Size(width: 1, height: 7), Size(width: 33, height: 1)]

    @Test(arguments: Rotation.allCases, sizes)
    func aFullFrameCopyEqualsTheNaiveRotation(rotation: Rotation, size: Size) {
        let logical = numbered(size)
        let (expected, panelSize) = naive(logical, rotation)
        #expect(rotation.panelSize(logical: size) == panelSize)
        let panel = PanelBuffer(panelSize)
        logical.copy([PixelRect(x: 0, y: 0, width: size.width, height: size.height)], to: panel.memory,
                     stride: panel.stride, rotation: rotation)
        var wrong = 0
        for y in 0..<panelSize.height {
            for x in 0..<panelSize.width where panel.pixel(x, y) != expected[y * panelSize.width + x] { wrong += 1 }
        }
        #expect(wrong == 0, "\(rotation) \(size.width)x\(size.height): \(wrong) pixels wrong")
        // Nothing is written past a row's end (the stride's padding).
        for y in 0..<panelSize.height {
            for x in panelSize.width..<(panel.stride / 4) where panel.pixel(x, y) != PanelBuffer.untouched {
                Issue.record("padding written at (\(x), \(y))")
                return
            }
        }
    }

    /// Damaged rectangles at the edges and corners, crossing them, of one pixel, and
    /// lying outside: each panel pixel is then either the naive rotation's (inside the
    /// image of a rectangle) or untouched (outside every image).
    @Test(arguments: Rotation.allCases)
    func damagedRectanglesAtTheEdgesLandExactlyWhereTheNaiveRotationPutsThem(rotation: Rotation) {
        let size = Size(width: 241, height: 319)
        let logical = numbered(size)
        let (expected, panelSize) = naive(logical, rotation)
        let w = size.width, h = size.height
        let rects = [
            PixelRect(x: 0, y: 0, width: 17, height: 9),            // top left
            PixelRect(x: w - 5, y: 0, width: 5, height: 40),        // top right
            PixelRect(x: 0, y: h - 1, width: 1, height: 1),         // bottom left pixel
            PixelRect(x: w - 70, y: h - 33, width: 70, height: 33), // bottom right
            PixelRect(x: -10, y: 100, width: 30, height: 50),       // crossing the left edge
            PixelRect(x: 120, y: h - 4, width: 40, height: 20),     // crossing the bottom edge
            PixelRect(x: 100, y: 100, width: 1, height: 90),        // one column
            PixelRect(x: 50, y: 200, width: 101, height: 1),        // one row
            PixelRect(x: w + 5, y: 0, width: 10, height: 10),       // outside
        ]
        let panel = PanelBuffer(panelSize)
        logical.copy(rects, to: panel.memory, stride: panel.stride, rotation: rotation)
        var covered = Set<Int>()
        var whereNaive: [UInt32: Int] = [:]
        for (i, v) in expected.enumerated() { whereNaive[v] = i }
        let bounds = PixelRect(x: 0, y: 0, width: w, height: h)
        for r in rects {
            let c = r.intersection(bounds)
            if c.isEmpty { continue }
            for y in c.y..<c.maxY {
                for x in c.x..<c.maxX {
                    covered.insert(whereNaive[logical.pixel(x: x, y: y)]!)
                }
            }
        }
        var wrong = 0, stray = 0
        for y in 0..<panelSize.height {
            for x in 0..<panelSize.width {
                let i = y * panelSize.width + x
                if covered.contains(i) {
                    if panel.pixel(x, y) != expected[i] { wrong += 1 }
                } else if panel.pixel(x, y) != PanelBuffer.untouched {
                    stray += 1
                }
            }
        }
        #expect(wrong == 0 && stray == 0, "\(rotation): \(wrong) wrong, \(stray) written outside the damage")
        // The images of the rectangles are where Rotation.panelRect says (the display's
        // damage bookkeeping relies on it).
        for r in rects {
            let c = r.intersection(bounds)
            if c.isEmpty { continue }
            let p = rotation.panelRect(c, panel: panelSize)
            #expect(p.area == c.area)
            #expect(p.intersection(PixelRect(x: 0, y: 0, width: panelSize.width, height: panelSize.height)) == p)
        }
    }

    /// The corners go where a clockwise turn takes them, named plainly.
    @Test func aQuarterTurnPutsTheTopLeftCornerTopRight() {
        let logical = numbered(Size(width: 3, height: 2))
        let panel = PanelBuffer(Size(width: 2, height: 3))
        logical.copy([PixelRect(x: 0, y: 0, width: 3, height: 2)], to: panel.memory, stride: panel.stride, rotation: .degrees90)
        #expect(panel.pixel(1, 0) == logical.pixel(x: 0, y: 0))  // top left -> top right
        #expect(panel.pixel(1, 2) == logical.pixel(x: 2, y: 0))  // top right -> bottom right
        #expect(panel.pixel(0, 0) == logical.pixel(x: 0, y: 1))  // bottom left -> top left
    }
}
