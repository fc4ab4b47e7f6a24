// ShadowBuffer is part of the renderer's interface (Renderer(shadow:)), so its users get it too.
import CCairo
import TouchlockCore
@_exported import TouchlockPixels

extension ShadowBuffer {
    /// Writes the buffer as a PNG file (cairo's encoder).
    public func writePNG(to path: String) throws(Renderer.PNGError) {
        let surface = cairo_image_surface_create_for_data(
            pixels.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24,
            Int32(size.width), Int32(size.height), Int32(stride))
        defer { cairo_surface_destroy(surface) }
        let st = cairo_surface_write_to_png(surface, path)
        if st != CAIRO_STATUS_SUCCESS {
            throw Renderer.PNGError(description: "cannot write \(path): \(String(cString: cairo_status_to_string(st)))")
        }
    }
}
