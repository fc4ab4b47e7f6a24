import CCairo
import Glibc
import TouchlockCore
import TouchlockSystem

/// A font file mapped through `FileContents` (a regular file of at most `limit` bytes)
/// and opened by FreeType from memory. It lives as long as the cairo face it is attached
/// to: cairo keeps faces in its caches beyond their last use, and frees this with them.
final class FontFile {
    static let limit = 64 << 20

    let face: FT_Face
    private let library: FT_Library
    private let mapping: FileContents.Mapping

    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    init(_ path: String) throws(Refusal) {
        do { mapping = try FileContents.mapped(path, limit: Self.limit) } catch {
            throw Refusal(description: error.reason(reading: path))
        }
        var lib: FT_Library?
        guard FT_Init_FreeType(&lib) == 0, let lib else { throw Refusal(description: "FreeType cannot start") }
        var f: FT_Face?
        let e = FT_New_Memory_Face(lib, mapping.base.assumingMemoryBound(to: FT_Byte.self), FT_Long(mapping.count), 0, &f)
        guard e == 0, let f else {
            FT_Done_FreeType(lib)
            throw Refusal(description: "not a font FreeType reads (FreeType error \(e))")
        }
        library = lib
        face = f
    }

    deinit {
        FT_Done_Face(face)
        FT_Done_FreeType(library)
    }

    /// Hands this file to `cairoFace`: it is released when cairo frees the face.
    func attach(to cairoFace: OpaquePointer) {
        let me = Unmanaged.passRetained(self).toOpaque()
        let status = cairo_font_face_set_user_data(cairoFace, fontFileKey, me) { p in
            if let p { Unmanaged<FontFile>.fromOpaque(p).release() }
        }
        if status != CAIRO_STATUS_SUCCESS {
            // Kept for the process's life rather than freed under cairo's face.
            Log.warning("font: cannot attach the file to its face")
        }
    }
}

/// The key FontFile is kept under in a cairo face (only its address matters).
nonisolated(unsafe) private let fontFileKey = UnsafeMutablePointer<cairo_user_data_key_t>.allocate(capacity: 1)
