import CCairo
import CShape
import Glibc
import TouchlockCore

/// A line of text as glyphs of one face at one size, in visual order (left to right),
/// placed from a pen at x = 0 on the baseline: what is measured is what is drawn.
struct ShapedLine {
    var glyphs: [cairo_glyph_t]
    /// How far the pen goes over the line, in px.
    var advance: Double
    /// The paragraph's direction (its first strong character) is right to left.
    var rightToLeft: Bool

    static let empty = ShapedLine(glyphs: [], advance: 0, rightToLeft: false)

    /// The line's glyphs moved by (`dx`, `dy`).
    func placed(at dx: Double, _ dy: Double) -> [cairo_glyph_t] {
        glyphs.map { cairo_glyph_t(index: $0.index, x: $0.x + dx, y: $0.y + dy) }
    }
}

/// Sets lines of text into glyphs. Text in the scripts drawn one glyph per character from
/// left to right (Latin, Greek, Cyrillic, CJK, Hangul syllables) takes cairo's map of
/// characters to glyphs, as it always has; any other text (Arabic, Hebrew, the Indic
/// scripts, Thai, combining marks, directional marks) is ordered by direction with
/// FriBidi and shaped with HarfBuzz, both loaded the first time such a text comes.
final class TextShaper {
    /// Why shaping cannot be had, once it has been tried and failed (said once in the log).
    private var unavailable: String?

    /// Whether `text` needs shaping: it has a character outside the simple scripts.
    static func needsShaping(_ text: String) -> Bool {
        text.unicodeScalars.contains { !isSimple($0) }
    }

    /// A character drawn as one glyph, left to right, whatever is next to it.
    static func isSimple(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0x0000...0x02ff: true                   // Latin, IPA, spacing modifier letters
        case 0x0370...0x0482, 0x048a...0x052f: true  // Greek, Cyrillic (not its combining marks)
        case 0x1e00...0x1fff: true                   // Latin Extended Additional, Greek Extended
        case 0x200e, 0x200f, 0x202a...0x202e, 0x2066...0x2069: false  // directional marks
        case 0x2000...0x2bff: true                   // punctuation, letter-like symbols, arrows
        case 0x2e80...0x9fff, 0xac00...0xd7a3, 0xf900...0xfaff, 0xfe30...0xfe4f, 0xff00...0xffef: true  // CJK, Hangul syllables
        case 0x20000...0x3ffff: true                 // CJK extensions
        default: false
        }
    }

    /// `text` set in `font`.
    func line(_ text: String, in font: OpaquePointer) -> ShapedLine {
        if Self.needsShaping(text), let line = shaped(text, in: font) { return line }
        return mapped(text, in: font)
    }

    /// The glyphs cairo_show_text would draw.
    private func mapped(_ text: String, in font: OpaquePointer) -> ShapedLine {
        var glyphs: UnsafeMutablePointer<cairo_glyph_t>? = nil
        var count: Int32 = 0
        guard cairo_scaled_font_text_to_glyphs(font, 0, 0, text, -1, &glyphs, &count, nil, nil, nil) == CAIRO_STATUS_SUCCESS,
              let glyphs else { return .empty }
        defer { cairo_glyph_free(glyphs) }
        var ext = cairo_text_extents_t()
        cairo_scaled_font_glyph_extents(font, glyphs, count, &ext)
        return ShapedLine(glyphs: Array(UnsafeBufferPointer(start: glyphs, count: Int(count))), advance: ext.x_advance,
                          rightToLeft: false)
    }

    /// `text` ordered and shaped; nil when shaping cannot be had (said once).
    private func shaped(_ text: String, in font: OpaquePointer) -> ShapedLine? {
        if unavailable != nil { return nil }
        guard let face = cairo_ft_scaled_font_lock_face(font) else { return nil }
        defer { cairo_ft_scaled_font_unlock_face(font) }
        var matrix = cairo_matrix_t()
        cairo_scaled_font_get_font_matrix(font, &matrix)
        let scalars = text.unicodeScalars.map(\.value)
        var out = tl_shaped()
        var why: UnsafePointer<CChar>? = nil
        let r = tl_shape(UnsafeMutableRawPointer(face), matrix.yy, scalars, Int32(scalars.count), &out, &why)
        guard r == 0 else {
            let reason = why.map { String(cString: $0) } ?? "error \(-r)"
            if r == -ELIBACC || r == -ENOSYS { unavailable = reason }
            Log.warning("text in a script that needs shaping is drawn unshaped, letters apart and left to right: \(reason)")
            return nil
        }
        defer { tl_shaped_free(&out) }
        let glyphs = UnsafeBufferPointer(start: out.glyphs, count: Int(out.count)).map {
            cairo_glyph_t(index: $0.index, x: $0.x, y: $0.y)
        }
        return ShapedLine(glyphs: glyphs, advance: out.advance, rightToLeft: out.rtl != 0)
    }
}
