import Glibc
import TouchlockCore

/// The frame in system memory that every drawing goes to (XRGB8888, the layout of
/// cairo's RGB24 and of DRM_FORMAT_XRGB8888 on little-endian machines). Scanout memory
/// is only ever written, by copying damaged rectangles out of this buffer.
public final class ShadowBuffer {
    public let size: Size
    /// Bytes per row (a multiple of 4, as cairo requires).
    public let stride: Int
    public let pixels: UnsafeMutableRawPointer

    public init(size: Size) {
        precondition(size.width > 0 && size.height > 0, "empty shadow buffer")
        self.size = size
        self.stride = size.width * 4
        // Pages of its own from the kernel: page-aligned and already zero, so nothing
        // is written twice before the first frame (which paints every pixel anyway).
        let p = mmap(nil, stride * size.height, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        precondition(p != MAP_FAILED && p != nil, "out of memory for a \(size.width)x\(size.height) shadow buffer")
        pixels = p!
    }

    deinit { munmap(pixels, byteCount) }

    public var byteCount: Int { stride * size.height }

    /// Copies `rects` (clipped to the buffer) into `destination`, a buffer of the same
    /// size with its own stride. Reads only from the shadow, never from the destination.
    public func copy(_ rects: [PixelRect], to destination: UnsafeMutableRawPointer, stride dstStride: Int) {
        let bounds = PixelRect(x: 0, y: 0, width: size.width, height: size.height)
        for r in rects {
            let c = r.intersection(bounds)
            if c.isEmpty { continue }
            let rowBytes = c.width * 4
            if c.x == 0 && c.width == size.width && dstStride == stride {
                memcpy(destination + c.y * stride, pixels + c.y * stride, rowBytes * c.height)
                continue
            }
            for y in c.y..<c.maxY {
                memcpy(destination + y * dstStride + c.x * 4, pixels + y * stride + c.x * 4, rowBytes)
            }
        }
    }

    /// The pixel at (x, y) as 0xAARRGGBB (alpha is undefined in XRGB).
    public func pixel(x: Int, y: Int) -> UInt32 {
        pixels.load(fromByteOffset: y * stride + x * 4, as: UInt32.self)
    }
}
