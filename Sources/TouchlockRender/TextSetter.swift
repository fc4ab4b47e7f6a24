import CCairo
import Synchronization
import TouchlockCore
import TouchlockSystem

/// The faces text is set in, and how wide it comes out: the layout asks it through
/// `DrawnTextMeasure` and the renderers draw through it, so that what the layout
/// measured is what is drawn. One per process (`shared`): the daemon has one thread, but
/// the tests draw on many, so its faces and caches are behind a lock.
public final class TextSetter: Sendable {
    public static let shared = TextSetter()
    /// At most this many faces found through fontconfig are kept.
    static let faceLimit = 16

    private let lock = Mutex(())
    /// Used only under `lock`.
    nonisolated(unsafe) private let fonts = Fonts()

    public init() {}

    /// How wide `text` is drawn in `theme`'s font `size` px high: the pen's advance, or
    /// its ink where that is wider.
    public func width(_ text: String, theme: Theme, size: Double, bold: Bool) -> Double {
        lock.withLock { _ in fonts.width(text, theme: theme, size: size, bold: bold) }
    }

    /// The face `text` is drawn in, and whether it was read from a font file.
    /// Widths of text set in faces read from font files are read from and kept in
    /// `images` (the daemon's, kept between starts), so that a start measuring text it
    /// measured before opens no face.
    public func keepWidths(in images: TextImages) {
        lock.withLock { _ in fonts.kept = images }
    }

    /// The caller holds a reference to the face and lets go of it (cairo_font_face_destroy)
    /// when done: the setter may let go of its own meanwhile (cairo's faces may be used on
    /// any thread).
    func face(_ theme: Theme, for text: String, bold: Bool = false) -> (face: OpaquePointer, fromFile: Bool) {
        lock.withLock { _ in
            let found = fonts.face(theme, for: text, bold: bold)
            cairo_font_face_reference(found.face)
            return found
        }
    }

    /// The font faces kept that were found through fontconfig.
    var faceCount: Int { lock.withLock { _ in fonts.faceCount } }

    /// `text` set in `font` (a scaled font of one of these faces).
    func line(_ text: String, in font: OpaquePointer) -> ShapedLine {
        lock.withLock { _ in fonts.shaper.line(text, in: font) }
    }

    /// Glyph outlines unhinted, as they are drawn on phones and high-density panels:
    /// FreeType's auto-hinter (which slight hinting uses) first walks every character
    /// of the font to sort its scripts, about 0.8 M instructions of a start of 6.5 M,
    /// before the first glyph. Over the faces' own settings, whichever way they were
    /// found (cairo lets a context's "none" win).
    static func setFontOptions(_ cr: OpaquePointer) {
        let options = cairo_font_options_create()
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
        cairo_set_font_options(cr, options)
        cairo_font_options_destroy(options)
    }
}

/// TextSetter's faces and caches, used under its lock.
private final class Fonts {
    /// Sets text into glyphs, shaped where its script needs it.
    let shaper = TextShaper()
    /// A context of its own to measure in, with the renderers' font options.
    private let surface: OpaquePointer
    private let cr: OpaquePointer
    /// Font faces found through fontconfig, by family, weight and the non-ASCII
    /// characters they must cover, with when each was last used: at most
    /// `TextSetter.faceLimit`, the one used longest ago let go of first. (Kept for ever,
    /// every message with characters not seen together before added a face.) A face is
    /// not shared between character sets: cairo keys its fonts, and the glyphs they keep,
    /// by face, so one face for all text found in one file would keep every glyph ever
    /// drawn in it up to cairo's own limit (16,384 glyphs, more memory than the faces).
    private var faces: [String: (face: OpaquePointer, used: Int)] = [:]
    /// Counts the faces' uses, for the one used longest ago.
    private var uses = 0
    /// Widths measured, by text, face and size (let go of when it grows past `widthsLimit`).
    private var widths: [String: Double] = [:]
    private let widthsLimit = 4096

    init() {
        surface = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1)
        cr = cairo_create(surface)
        precondition(cairo_status(cr) == CAIRO_STATUS_SUCCESS, "cairo_create failed")
        TextSetter.setFontOptions(cr)
    }

    deinit {
        for f in faces.values { cairo_font_face_destroy(f.face) }
        for case let (face, probe)? in fileFaces.values {
            cairo_scaled_font_destroy(probe)
            cairo_font_face_destroy(face)
        }
        cairo_destroy(cr)
        cairo_surface_destroy(surface)
    }

    /// How wide `text` is drawn in `theme`'s font `size` px high: the pen's advance, or
    /// its ink where that is wider.
    /// Where widths are kept between starts (TextSetter.keepWidths).
    var kept: TextImages?
    /// A font file's size and modification time, looked at once.
    private var stamps: [String: String?] = [:]

    func width(_ text: String, theme: Theme, size: Double, bold: Bool) -> Double {
        if text.isEmpty || size <= 0 { return 0 }
        let key = "\(bold ? "b" : "r")|\(size.bitPattern)|\(theme.fontFamily)|\(theme.directFontFile ?? "")|\(text)"
        if let w = widths[key] { return w }
        // Kept from an earlier start: the file's stamp in the key, so a changed font is measured afresh.
        var keptKey: String? = nil
        if !bold, let kept, let file = theme.directFontFile {
            if stamps[file] == nil { stamps[file] = .some(FileContents.stamp(file)) }
            if let stamp = stamps[file] ?? nil {
                let k = "width|\(file)|\(stamp)|\(size.bitPattern)|\(text)"
                if let w = kept.width(k) { widths[key] = w; return w }
                keptKey = k
            }
        }
        let (face, fromFile) = face(theme, for: text, bold: bold)
        cairo_set_font_face(cr, face)
        cairo_set_font_size(cr, size)
        let line = shaper.line(text, in: cairo_get_scaled_font(cr))
        var ext = cairo_text_extents_t()
        line.glyphs.withUnsafeBufferPointer { cairo_glyph_extents(cr, $0.baseAddress, Int32($0.count), &ext) }
        let w = max(line.advance, ext.width)
        if widths.count >= widthsLimit { widths.removeAll(keepingCapacity: true) }
        widths[key] = w
        if fromFile, let keptKey { kept?.addWidth(keptKey, w) }
        return w
    }

    /// A font face for `theme`'s family with the characters of `text`. The regular face
    /// of a family whose file is known (`Theme.directFontFile`) is read from that file
    /// with FreeType alone when it has every character: no fontconfig at all, whose
    /// start (its configuration and caches) costs more than the rest of the first frame.
    /// Anything else goes through fontconfig.
    func face(_ theme: Theme, for text: String, bold: Bool = false) -> (face: OpaquePointer, fromFile: Bool) {
        let extra = Set(text.unicodeScalars.filter { $0.value > 0x7f }.map(\.value)).sorted()
        if !bold, let file = theme.directFontFile, let (face, probe) = fileFace(file),
           extra.allSatisfy({ has(probe, $0) }) {
            return (face, true)
        }
        return (fontconfigFace(family: theme.fontFamily, extra: extra, bold: bold), false)
    }

    var faceCount: Int { faces.count }

    /// Faces read from a file, with a scaled font to look up characters in; nil for a
    /// file that cannot be read as a font.
    private var fileFaces: [String: (face: OpaquePointer, probe: OpaquePointer)?] = [:]

    private func fileFace(_ path: String) -> (face: OpaquePointer, probe: OpaquePointer)? {
        if let known = fileFaces[path] { return known }
        // The rendering settings of Debian's fontconfig defaults (greyscale antialiasing),
        // so text looks the same whichever way its face was found; hinting is off for
        // every face through the context's options (init).
        // The file is mapped by FontFile (a regular file, of a bounded size: a FIFO named
        // as the font would block FreeType's open for ever); FreeType reads it in place.
        let file: FontFile
        do { file = try FontFile(path) } catch {
            Log.warning("cannot read the font file \(path): \(error); fontconfig finds the font instead")
            fileFaces[path] = .some(nil)
            return nil
        }
        let pattern = FcPatternCreate()
        _ = FcPatternAddFTFace(pattern, FC_FT_FACE, file.face)
        _ = FcPatternAddBool(pattern, FC_ANTIALIAS, FcBool(FcTrue))
        _ = FcPatternAddBool(pattern, FC_AUTOHINT, FcBool(FcFalse))
        _ = FcPatternAddInteger(pattern, FC_LCD_FILTER, FC_LCD_DEFAULT)
        // With a face in the pattern cairo uses it: no fontconfig match.
        let face = cairo_ft_font_face_create_for_pattern(pattern)!
        FcPatternDestroy(pattern)
        file.attach(to: face)
        var identity = cairo_matrix_t()
        cairo_matrix_init_identity(&identity)
        let options = cairo_font_options_create()
        let probe = cairo_scaled_font_create(face, &identity, &identity, options)!
        cairo_font_options_destroy(options)
        var usable = cairo_scaled_font_status(probe) == CAIRO_STATUS_SUCCESS
        if usable, let ft = cairo_ft_scaled_font_lock_face(probe) {
            cairo_ft_scaled_font_unlock_face(probe)
            _ = ft
        } else {
            usable = false
        }
        guard usable else {
            Log.warning("cannot read the font file \(path); fontconfig finds the font instead")
            cairo_scaled_font_destroy(probe)
            cairo_font_face_destroy(face)
            fileFaces[path] = .some(nil)
            return nil
        }
        fileFaces[path] = (face, probe)
        return (face, probe)
    }

    /// Whether the face of `probe` has a glyph for `c`.
    private func has(_ probe: OpaquePointer, _ c: UInt32) -> Bool {
        guard let ft = cairo_ft_scaled_font_lock_face(probe) else { return false }
        defer { cairo_ft_scaled_font_unlock_face(probe) }
        return FcFreeTypeCharIndex(ft, c) != 0
    }

    /// A font face for `family` through fontconfig. When the text has characters beyond
    /// ASCII (`extra`), they go into the pattern as a character set: fontconfig ranks
    /// coverage above the family name, so a label in Chinese gets a face that has its
    /// glyphs (WenQuanYi Micro Hei when installed) while Latin text keeps the configured
    /// family.
    private func fontconfigFace(family: String, extra: [UInt32], bold: Bool) -> OpaquePointer {
        uses += 1
        let key = family + (bold ? "|bold|" : "|") + extra.map { String($0, radix: 16) }.joined(separator: ",")
        if let f = faces[key] {
            faces[key]?.used = uses
            return f.face
        }
        if faces.count >= TextSetter.faceLimit, let oldest = faces.min(by: { $0.value.used < $1.value.used }) {
            // A face still set in a context, or held by a font cairo keeps, lives on there
            // (cairo counts references) and is freed with it.
            cairo_font_face_destroy(oldest.value.face)
            faces.removeValue(forKey: oldest.key)
        }
        let pattern = FcPatternCreate()
        _ = FcPatternAddString(pattern, FC_FAMILY, family)
        if bold { _ = FcPatternAddInteger(pattern, FC_WEIGHT, FC_WEIGHT_BOLD) }
        if !extra.isEmpty, let cs = FcCharSetCreate() {
            for c in extra { _ = FcCharSetAddChar(cs, c) }
            _ = FcPatternAddCharSet(pattern, FC_CHARSET, cs)
            FcCharSetDestroy(cs)
        }
        // cairo completes the pattern (FcConfigSubstitute, FcFontMatch) when it makes the font.
        let f = cairo_ft_font_face_create_for_pattern(pattern)!
        FcPatternDestroy(pattern)
        faces[key] = (f, uses)
        return f
    }

}

/// Text measured as the renderers draw it, in one theme's font.
public struct DrawnTextMeasure: TextMeasure {
    public let theme: Theme
    let setter: TextSetter

    public init(theme: Theme, setter: TextSetter = .shared) {
        self.theme = theme
        self.setter = setter
    }

    public func width(_ text: String, size: Double, bold: Bool) -> Double {
        setter.width(text, theme: theme, size: size, bold: bold)
    }
}
