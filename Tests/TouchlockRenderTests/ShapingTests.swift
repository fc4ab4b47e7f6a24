import CCairo
import Glibc
import Testing
import TouchlockCore
import TouchlockSystem
@testable import TouchlockRender

/// Text in scripts that need shaping, set as HarfBuzz's own tool sets it.
@Suite struct ShapingTests {
    static let dejaVu = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

    /// A scaled font of DejaVu Sans at `size` px, with the renderer's options.
    final class Font {
        let face: OpaquePointer, scaled: OpaquePointer
        init(size: Double) throws {
            let pattern = try #require(FcPatternCreate())
            _ = FcPatternAddString(pattern, FC_FILE, ShapingTests.dejaVu)
            face = try #require(cairo_ft_font_face_create_for_pattern(pattern))
            FcPatternDestroy(pattern)
            var m = cairo_matrix_t(), identity = cairo_matrix_t()
            cairo_matrix_init_scale(&m, size, size)
            cairo_matrix_init_identity(&identity)
            let options = cairo_font_options_create()
            cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
            scaled = try #require(cairo_scaled_font_create(face, &m, &identity, options))
            cairo_font_options_destroy(options)
            try #require(cairo_scaled_font_status(scaled) == CAIRO_STATUS_SUCCESS)
        }
        deinit {
            cairo_scaled_font_destroy(scaled)
            cairo_font_face_destroy(face)
        }
    }

    /// One glyph as hb-shape reports it: its index and where it is, in font units.
    struct Placed: Equatable, CustomStringConvertible {
        var glyph: UInt
        var x: Double, y: Double
        var description: String { "\(glyph)@\(x),\(y)" }
    }

    /// What `hb-shape` (Debian's libharfbuzz-bin) makes of `text` in DejaVu Sans, with
    /// the positions in font units (DejaVu's em is 2048 units).
    func hbShape(_ text: String) throws -> [Placed] {
        let out = try run(["/usr/bin/hb-shape", "--font-file=\(Self.dejaVu)", "--no-glyph-names", "-O", "json", text])
        // [{"g":5296,"cl":9,"dx":0,"dy":0,"ax":2611,"ay":0},...]
        var placed: [Placed] = []
        var pen = 0.0
        for item in out.split(separator: "{").dropFirst() {
            var fields: [String: Double] = [:]
            for pair in item.split(whereSeparator: { $0 == "," || $0 == "}" || $0 == "]" }) {
                let kv = pair.split(separator: ":")
                if kv.count == 2 { fields[kv[0].trimmingCharacters("\" \n")] = Double(kv[1].trimmingCharacters(" \n")) }
            }
            let g = try #require(fields["g"]), ax = try #require(fields["ax"])
            placed.append(Placed(glyph: UInt(g), x: pen + (fields["dx"] ?? 0), y: -(fields["dy"] ?? 0)))
            pen += ax
        }
        return placed
    }

    func run(_ argv: [String]) throws -> String {
        let command = argv.map { "'" + $0 + "'" }.joined(separator: " ")
        let pipe = try #require(popen(command, "r"), "cannot run \(argv[0])")
        var output = ""
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), pipe) != nil { output += String(cString: buffer) }
        let status = pclose(pipe)
        try #require(status == 0, "\(argv[0]) exited with \(status): \(output)")
        return output
    }

    /// At 32 px the renderer's positions (1/64 px) are DejaVu's units (2048 per em), so
    /// both must agree exactly, glyph for glyph.
    @Test(arguments: ["ارسم النقش لفتح القفل", "أدخل الرمز المكون من أربعة أرقام", "استخدم الرمز",
                      "צייר את הדפוס כדי לבטל את הנעילה", "הזן את הקוד", "مَرْحَبًا بِكُمْ"])
    func glyphsAreThoseHarfBuzzsOwnToolSets(_ text: String) throws {
        let font = try Font(size: 32)
        let line = TextShaper().line(text, in: font.scaled)
        let ours = line.glyphs.map { Placed(glyph: $0.index, x: $0.x * 64, y: $0.y * 64) }
        let theirs = try hbShape(text)
        #expect(ours == theirs, "\(text)")
        let theirAdvance = try hbAdvance(text)
        #expect(line.advance * 64 == theirAdvance)
    }

    func hbAdvance(_ text: String) throws -> Double {
        let out = try run(["/usr/bin/hb-shape", "--font-file=\(Self.dejaVu)", "--no-glyph-names", "-O", "json", text])
        return out.split(separator: ",").filter { $0.hasPrefix("\"ax\":") }.reduce(0) { $0 + Double($1.dropFirst(5))! }
    }

    /// Right-to-left text reads from the right, and the digits in it from the left: the
    /// first word is the rightmost, and 1 2 3 4 go left to right between the words.
    @Test func digitsInRightToLeftTextKeepTheirOrder() throws {
        let font = try Font(size: 32)
        let shaper = TextShaper()
        let line = shaper.line("أدخل 1234 الآن", in: font.scaled)
        #expect(line.rightToLeft)
        let digits = try (1...4).map { d in try #require(shaper.line("\(d)", in: font.scaled).glyphs.first?.index) }
        let xs = digits.map { d in line.glyphs.first { $0.index == d }?.x ?? -1 }
        #expect(xs.allSatisfy { $0 >= 0 } && xs == xs.sorted(), "the digits at \(xs)")
        let firstWord = shaper.line("أدخل", in: font.scaled).glyphs.map(\.index)
        let firstWordX = line.glyphs.filter { firstWord.contains($0.index) }.map(\.x)
        #expect(firstWordX.min() ?? 0 > xs.max() ?? .infinity, "the first word at \(firstWordX), the digits at \(xs)")
        #expect(!shaper.line("Draw 1234 now", in: font.scaled).rightToLeft)
    }

    /// Latin text is drawn as cairo_show_text always drew it: the same glyphs, the same places.
    @Test func latinTextIsCairosOwnGlyphs() throws {
        let font = try Font(size: 32)
        let text = "Draw your pattern to unlock"
        #expect(!TextShaper.needsShaping(text) && !TextShaper.needsShaping("请输入验证码") && !TextShaper.needsShaping("Übung ΑΒΓ Жж"))
        #expect(TextShaper.needsShaping("ارسم") && TextShaper.needsShaping("שלום") && TextShaper.needsShaping("e\u{301}"))
        var glyphs: UnsafeMutablePointer<cairo_glyph_t>? = nil
        var count: Int32 = 0
        try #require(cairo_scaled_font_text_to_glyphs(font.scaled, 0, 0, text, -1, &glyphs, &count, nil, nil, nil) == CAIRO_STATUS_SUCCESS)
        defer { cairo_glyph_free(glyphs) }
        let cairos = UnsafeBufferPointer(start: glyphs, count: Int(count)).map { Placed(glyph: $0.index, x: $0.x, y: $0.y) }
        let ours = TextShaper().line(text, in: font.scaled).glyphs.map { Placed(glyph: $0.index, x: $0.x, y: $0.y) }
        #expect(ours == cairos)
    }
}

extension Substring {
    func trimmingCharacters(_ set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
