import CCairo
import Glibc
import TouchlockSystem

/// A PNG file decoded by cairo, its size checked first: the file is read through
/// `FileContents` (a regular file, at most `Renderer.backgroundFileLimit` bytes), and
/// its width and height are read from the IHDR chunk before a pixel is decoded, so a
/// small file of a huge picture (a 1.2 MB 20000x20000 PNG decodes to 1.6 GB) is refused
/// at the cost of its header.
struct PNGImage {
    let surface: OpaquePointer
    let width: Int
    let height: Int

    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// The width and height a PNG's header gives; nil if `bytes` does not start as a PNG.
    static func size(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        let signature: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
        guard bytes.count >= 24, Array(bytes[0..<8]) == signature, Array(bytes[12..<16]) == Array("IHDR".utf8) else { return nil }
        func be32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (be32(16), be32(20))
    }

    static func decode(_ path: String, pixelLimit: Int = Renderer.backgroundPixelLimit,
                       sideLimit: Int = Renderer.backgroundSideLimit) throws(Refusal) -> PNGImage {
        let bytes: [UInt8]
        do { bytes = try FileContents.bytes(path, limit: Renderer.backgroundFileLimit) } catch {
            throw Refusal(description: "cannot read \(path): \(error.reason(reading: path))")
        }
        guard let (w, h) = size(bytes) else { throw Refusal(description: "\(path): not a PNG file") }
        guard w > 0, h > 0, w <= sideLimit, h <= sideLimit, w * h <= pixelLimit else {
            throw Refusal(description: "\(path): \(w)x\(h) pixels, more than the \(pixelLimit) (or \(sideLimit) on a side) allowed")
        }
        final class Reader {
            let bytes: [UInt8]
            var at = 0
            init(_ b: [UInt8]) { bytes = b }
        }
        let reader = Reader(bytes)
        let read: cairo_read_func_t = { closure, data, length in
            let r = Unmanaged<Reader>.fromOpaque(closure!).takeUnretainedValue()
            let n = Int(length)
            guard let data, r.bytes.count - r.at >= n else { return CAIRO_STATUS_READ_ERROR }
            r.bytes.withUnsafeBufferPointer { b in
                UnsafeMutableRawPointer(data).copyMemory(from: b.baseAddress! + r.at, byteCount: n)
            }
            r.at += n
            return CAIRO_STATUS_SUCCESS
        }
        let img = withExtendedLifetime(reader) {
            cairo_image_surface_create_from_png_stream(read, Unmanaged.passUnretained(reader).toOpaque())!
        }
        let status = cairo_surface_status(img)
        guard status == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(img)
            throw Refusal(description: "cannot read \(path): \(String(cString: cairo_status_to_string(status)))")
        }
        return PNGImage(surface: img, width: Int(cairo_image_surface_get_width(img)),
                        height: Int(cairo_image_surface_get_height(img)))
    }
}
