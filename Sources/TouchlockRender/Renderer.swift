import CCairo
import Glibc
import TouchlockCore
import TouchlockSystem

/// Draws scenes with cairo into a shadow buffer. Only the damaged rectangles are
/// painted: everything is drawn under a clip, so a finger dragging the path repaints a
/// few thousand pixels, not the screen.
public final class Renderer {
    public let shadow: ShadowBuffer
    private let surface: OpaquePointer
    private let cr: OpaquePointer

    public init(shadow: ShadowBuffer, text: TextSetter = .shared) {
        self.shadow = shadow
        self.text = text
        surface = cairo_image_surface_create_for_data(
            shadow.pixels.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24,
            Int32(shadow.size.width), Int32(shadow.size.height), Int32(shadow.stride))
        cr = cairo_create(surface)
        precondition(cairo_status(cr) == CAIRO_STATUS_SUCCESS, "cairo_create failed")
        TextSetter.setFontOptions(cr)
    }

    /// The faces text is set in, and its measure: the same for the layout and for drawing.
    public let text: TextSetter
    /// Prompts said in the log to be drawn cut, each once.
    private var cutPrompts: Set<String> = []
    /// The background as drawn: the image scaled once to the screen over the background
    /// colour, with its scrim (nil surface: no usable image); made again only if one of
    /// them changes.
    private var backgroundImage: (key: BackgroundKey, surface: OpaquePointer?)?

    private struct BackgroundKey: Hashable {
        var path: String
        var background: Color
        var dim: Double
    }

    deinit {
        for sprite in nodeSprites.values { cairo_surface_destroy(sprite) }
        if let s = backgroundImage?.surface { cairo_surface_destroy(s) }
        if let s = logoImage?.surface { cairo_surface_destroy(s) }
        cairo_destroy(cr)
        cairo_surface_destroy(surface)
    }

    /// Paints `scene` inside `damage`.
    public func draw(_ scene: Scene, damage: Damage) {
        if damage.isEmpty { return }
        // One rectangle at a time: under a plain rectangular clip cairo composites spans
        // straight into the buffer, where a clip of many rectangles makes it build and
        // clear a mask the size of the clip for every shape. Rectangles may overlap; each
        // is repainted whole, so a pixel drawn twice comes out the same.
        for r in damage.rects { draw(scene, in: r) }
        cairo_surface_flush(surface)
    }

    private func draw(_ scene: Scene, in r: PixelRect) {
        cairo_save(cr)
        defer { cairo_restore(cr) }
        cairo_rectangle(cr, Double(r.x), Double(r.y), Double(r.width), Double(r.height))
        cairo_clip(cr)

        let theme = scene.theme
        setSource(theme.background)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_paint(cr)
        cairo_set_operator(cr, CAIRO_OPERATOR_OVER)

        if let path = theme.backgroundImage { drawBackgroundImage(path, scene: scene) }
        if r.intersects(scene.promptBox) { drawPrompt(scene) }
        drawPath(scene, in: r)
        for node in scene.nodes where r.intersects(PixelRect(around: node.center, radius: node.radius * Scene.haloFactor)) {
            drawNode(node, theme: theme)
        }
        for box in scene.boxes where r.intersects(box.bounds) { drawBox(box, theme: theme) }
        for key in scene.keys where r.intersects(key.bounds) { drawKey(key, theme: theme) }
        if let t = scene.toggle, r.intersects(t.bounds) { drawKey(t, theme: theme) }
        if let info = scene.info { drawInfo(info, theme: theme, in: r) }
    }

    /// The logo, the time, the date and the message, each centred in its box. Their
    /// masks are not kept (the time changes every minute).
    private func drawInfo(_ info: Scene.Info, theme: Theme, in r: PixelRect) {
        let l = info.layout
        func centre(_ b: PixelRect) -> Point { Point(x: Double(b.x) + Double(b.width) / 2, y: Double(b.y) + Double(b.height) / 2) }
        if let b = l.logo, r.intersects(b), let path = info.logo { drawLogo(path, in: b) }
        if let b = l.time, r.intersects(b), let t = info.text.time {
            drawText(t, theme: theme, size: l.timeSize, color: theme.text, centre: centre(b), maxWidth: Double(b.width), keep: false)
        }
        if let b = l.date, r.intersects(b), let t = info.text.date {
            drawText(t, theme: theme, size: l.dateSize, color: theme.text, centre: centre(b), maxWidth: Double(b.width), keep: false)
        }
        if let b = l.message, r.intersects(b), let t = info.text.message {
            let (lines, size) = TextMetrics.wrap(t, width: Double(b.width), height: Double(b.height), size: l.messageSize,
                                                 minimum: l.minimumText, measure: DrawnTextMeasure(theme: theme, setter: text))
            let step = TextMetrics.lineHeight(size)
            let c = centre(b)
            for (i, line) in lines.enumerated() {
                let y = c.y + (Double(i) - Double(lines.count - 1) / 2) * step
                drawText(line, theme: theme, size: size, color: theme.text, centre: Point(x: c.x, y: y),
                         maxWidth: Double(b.width), keep: false)
            }
        }
    }

    /// The logo as drawn: the image scaled once to fit its box (nil surface: no usable image).
    private var logoImage: (path: String, box: PixelRect, surface: OpaquePointer?)?

    /// The logo scaled to fit `box` (its aspect ratio kept), centred in it; a file that
    /// cannot be used is said once in the log and leaves the box empty.
    private func drawLogo(_ path: String, in box: PixelRect) {
        if logoImage?.path != path || logoImage?.box != box {
            if let s = logoImage?.surface { cairo_surface_destroy(s) }
            logoImage = (path, box, logo(path, fitting: box))
        }
        guard let img = logoImage?.surface else { return }
        let w = Int(cairo_image_surface_get_width(img)), h = Int(cairo_image_surface_get_height(img))
        cairo_save(cr)
        cairo_set_source_surface(cr, img, Double(box.x + (box.width - w) / 2), Double(box.y + (box.height - h) / 2))
        cairo_paint(cr)
        cairo_restore(cr)
    }

    private func logo(_ path: String, fitting box: PixelRect) -> OpaquePointer? {
        let png: PNGImage
        do { png = try PNGImage.decode(path) } catch {
            Log.warning("logo: \(error); no logo is drawn")
            return nil
        }
        defer { cairo_surface_destroy(png.surface) }
        let k = min(Double(box.width) / Double(png.width), Double(box.height) / Double(png.height))
        let w = max(1, Int((Double(png.width) * k).rounded())), h = max(1, Int((Double(png.height) * k).rounded()))
        let out = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(w), Int32(h))!
        guard cairo_surface_status(out) == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(out)
            return nil
        }
        let c = cairo_create(out)!
        cairo_scale(c, Double(w) / Double(png.width), Double(h) / Double(png.height))
        cairo_set_source_surface(c, png.surface, 0, 0)
        cairo_pattern_set_filter(cairo_get_source(c), CAIRO_FILTER_GOOD)
        cairo_paint(c)
        cairo_destroy(c)
        cairo_surface_flush(out)
        return out
    }

    /// The prompt on the one or two lines the scene sets it in, centred in its box.
    private func drawPrompt(_ scene: Scene) {
        let box = scene.promptBox
        let (lines, size) = scene.promptText(DrawnTextMeasure(theme: scene.theme, setter: text))
        if let last = lines.last, last.hasSuffix("…"), !scene.prompt.hasSuffix("…"), cutPrompts.insert(scene.prompt).inserted {
            Log.warning("the prompt is too long for its box at 12 dp and is drawn cut: '\(scene.prompt)'")
        }
        let step = TextMetrics.lineHeight(size)
        let cy = Double(box.y) + Double(box.height) / 2
        for (i, line) in lines.enumerated() {
            let y = cy + (Double(i) - Double(lines.count - 1) / 2) * step
            drawText(line, theme: scene.theme, size: size, color: scene.theme.text,
                     centre: Point(x: Double(box.x) + Double(box.width) / 2, y: y), maxWidth: Double(box.width))
        }
    }

    /// Draws `text` centred on `centre` with a face of `family` that has its characters,
    /// smaller than `size` if that is what it takes to stay within `maxWidth` (the text
    /// must stay inside the rectangle its element damages).
    private func drawText(_ text: String, theme: Theme, size: Double, color: Color, centre: Point, maxWidth: Double,
                          bold: Bool = false, keep: Bool = true) {
        if text.isEmpty { return }
        // Text is painted in its colour through a mask of its coverage. One drawn before
        // in a face read from a font file is kept (`textImages`): drawn again, no glyph
        // is touched. `keep` false: text that must not outlive its drawing.
        let key = bold || !keep ? nil : textImageKey(text, theme: theme, size: size, centre: centre, maxWidth: maxWidth)
        if let key, let (mask, mx, my) = textImages.surface(key) {
            paint(color, through: mask, at: mx, my)
            return
        }
        let (face, fromFile) = self.text.face(theme, for: text, bold: bold)
        defer { cairo_font_face_destroy(face) }
        cairo_set_font_face(cr, face)
        cairo_set_font_size(cr, size)
        var line = self.text.line(text, in: cairo_get_scaled_font(cr))
        var ext = extents(line)
        var fontSize = size
        if ext.x_advance > maxWidth, ext.x_advance > 0 {
            fontSize = size * maxWidth / ext.x_advance
            cairo_set_font_size(cr, fontSize)
            line = self.text.line(text, in: cairo_get_scaled_font(cr))
            ext = extents(line)
        }
        // Centred on the ink horizontally, on the font's digits/capitals vertically.
        var fext = cairo_font_extents_t()
        cairo_font_extents(cr, &fext)
        let x = centre.x - ext.width / 2 - ext.x_bearing
        let y = centre.y + (fext.ascent - fext.descent) / 2
        guard let image = mask(of: line, face: face, size: fontSize, at: x, y, ink: ext) else { return }
        let surface = TextImages.surface(over: image)
        paint(color, through: surface, at: image.x, image.y)
        cairo_surface_destroy(surface)
        // Kept when it can be (the masks then own the coverage), else let go of.
        if fromFile, let key, textImages.add(key, image) { return }
        image.coverage.deallocate()
    }

    /// The ink and advance of `line` in the context's font (x_advance: the line's own).
    private func extents(_ line: ShapedLine) -> cairo_text_extents_t {
        var ext = cairo_text_extents_t()
        line.glyphs.withUnsafeBufferPointer { cairo_glyph_extents(cr, $0.baseAddress, Int32($0.count), &ext) }
        ext.x_advance = line.advance
        return ext
    }

    private func paint(_ color: Color, through mask: OpaquePointer, at x: Int32, _ y: Int32) {
        setSource(color)
        cairo_mask_surface(cr, mask, Double(x), Double(y))
    }

    /// The masks of text drawn in faces read from font files, kept for the next time the
    /// same text is drawn at the same place; shared by renderers given the same one.
    public var textImages = TextImages()

    /// What the mask of `text` drawn this way is kept under; nil without a font file (or
    /// one that cannot be read). The file's size and modification time are part of it:
    /// a changed font is drawn afresh.
    private func textImageKey(_ text: String, theme: Theme, size: Double, centre: Point, maxWidth: Double) -> String? {
        guard let file = theme.directFontFile, let stamp = fileStamp(file) else { return nil }
        return "\(file)|\(stamp)|\(size.bitPattern)|\(maxWidth.bitPattern)|\(centre.x.bitPattern)|\(centre.y.bitPattern)|\(text)"
    }

    /// A font file's size and modification time, looked at once per renderer.
    private var fileStamps: [String: String?] = [:]

    private func fileStamp(_ path: String) -> String? {
        if let known = fileStamps[path] { return known }
        let stamp = FileContents.stamp(path)
        fileStamps[path] = stamp
        return stamp
    }

    /// The coverage of `text` drawn with its pen at (`x`, `y`), as an A8 image placed on
    /// whole pixels: drawn at the same fraction of a pixel, each glyph is rounded to the
    /// same pixel as it would be on the screen. Nil for text without ink.
    private func mask(of line: ShapedLine, face: OpaquePointer, size: Double, at x: Double, _ y: Double,
                      ink: cairo_text_extents_t) -> TextImages.Image? {
        // Glyphs are placed on whole pixels (half a pixel from the pen at most) and
        // antialiased beyond their ink by a pixel: two pixels of margin hold them.
        let margin = 2.0
        let left = (x + ink.x_bearing - margin).rounded(.down), top = (y + ink.y_bearing - margin).rounded(.down)
        let right = (x + ink.x_bearing + ink.width + margin).rounded(.up)
        let bottom = (y + ink.y_bearing + ink.height + margin).rounded(.up)
        guard ink.width > 0, ink.height > 0, right - left <= 16384, bottom - top <= 16384,
              let ox = Int32(exactly: left), let oy = Int32(exactly: top) else { return nil }
        let image = TextImages.Image(x: ox, y: oy, width: Int32(right - left), height: Int32(bottom - top))
        let target = TextImages.surface(over: image)
        let c = cairo_create(target)!
        let options = cairo_font_options_create()
        cairo_get_font_options(cr, options)
        cairo_set_font_options(c, options)
        cairo_font_options_destroy(options)
        cairo_set_font_face(c, face)
        cairo_set_font_size(c, size)
        let glyphs = line.placed(at: x - left, y - top)
        cairo_show_glyphs(c, glyphs, Int32(glyphs.count))
        cairo_destroy(c)
        cairo_surface_flush(target)
        cairo_surface_destroy(target)
        return image
    }

    /// How far `text` advances, set in `theme`'s font at `size`, as drawn.
    func textWidth(_ text: String, theme: Theme, size: Double) -> Double {
        self.text.width(text, theme: theme, size: size, bold: false)
    }

    private func drawBackgroundImage(_ path: String, scene: Scene) {
        let key = BackgroundKey(path: path, background: scene.theme.background, dim: scene.theme.backgroundDim)
        if backgroundImage?.key != key {
            if let s = backgroundImage?.surface { cairo_surface_destroy(s) }
            backgroundImage = (key, background(key))
        }
        // A copy of the screen's own size: each frame costs what its damage does, whatever
        // the file was.
        guard let img = backgroundImage?.surface else { return }
        cairo_save(cr)
        cairo_set_source_surface(cr, img, 0, 0)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_paint(cr)
        cairo_restore(cr)
    }

    /// At most this many pixels in a background image (4096 x 4096, 64 MiB decoded), and
    /// at most 16384 on a side: read from the PNG's header before anything is decoded.
    public static let backgroundPixelLimit = 4096 * 4096
    public static let backgroundSideLimit = 16384
    /// A background image's file is at most this long.
    public static let backgroundFileLimit = 32 << 20

    /// The background of `key` at the screen's size: its colour, the image covering the
    /// screen (aspect kept, the crop centred) and the scrim; nil when the image cannot be
    /// used (said in the log).
    private func background(_ key: BackgroundKey) -> OpaquePointer? {
        let png: PNGImage
        do { png = try PNGImage.decode(key.path) } catch {
            Log.warning("background image: \(error); the background colour is drawn instead")
            return nil
        }
        defer { cairo_surface_destroy(png.surface) }
        let sw = Int32(shadow.size.width), sh = Int32(shadow.size.height)
        let out = cairo_image_surface_create(CAIRO_FORMAT_RGB24, sw, sh)!
        guard cairo_surface_status(out) == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(out)
            return nil
        }
        let c = cairo_create(out)!
        defer { cairo_destroy(c) }
        func source(_ col: Color) { cairo_set_source_rgba(c, col.red, col.green, col.blue, col.alpha) }
        source(key.background)
        cairo_set_operator(c, CAIRO_OPERATOR_SOURCE)
        cairo_paint(c)
        cairo_set_operator(c, CAIRO_OPERATOR_OVER)
        let iw = Double(png.width), ih = Double(png.height)
        // Cover the screen, keep the aspect ratio, centre the crop.
        let k = max(Double(sw) / iw, Double(sh) / ih)
        cairo_save(c)
        cairo_translate(c, (Double(sw) - iw * k) / 2, (Double(sh) - ih * k) / 2)
        cairo_scale(c, k, k)
        cairo_set_source_surface(c, png.surface, 0, 0)
        cairo_pattern_set_filter(cairo_get_source(c), CAIRO_FILTER_GOOD)
        cairo_pattern_set_extend(cairo_get_source(c), CAIRO_EXTEND_PAD)  // no fade to transparent at the edges
        cairo_paint(c)
        cairo_restore(c)
        // A scrim of the background colour keeps text readable over a light picture.
        if key.dim > 0 {
            source(key.background.with(alpha: key.dim))
            cairo_paint(c)
        }
        cairo_surface_flush(out)
        return out
    }

    private func drawBox(_ box: Scene.Box, theme: Theme) {
        let r = box.rect
        let cx = Double(r.x) + Double(r.width) / 2
        let cy = Double(r.y) + Double(r.height) / 2 - box.underlineWidth
        let ink = box.error ? theme.error : theme.text
        switch box.content {
        case .empty: break
        case .digit(let d):
            // A digit typed is part of a secret: its mask is never kept (nor written).
            drawText(String(d), theme: theme, size: box.fontSize, color: ink, centre: Point(x: cx, y: cy),
                     maxWidth: Double(r.width), bold: theme.digitBold, keep: false)
        case .dot:
            setSource(ink)
            cairo_arc(cr, cx, cy, box.dotRadius, 0, 2 * Double.pi)
            cairo_fill(cr)
        }
        setSource(box.underline)
        cairo_rectangle(cr, Double(r.x), Double(r.maxY) - box.underlineWidth, Double(r.width), box.underlineWidth)
        cairo_fill(cr)
        if let c = box.cursor, c.opacity > 0 {
            setSource(theme.cursor.with(alpha: theme.cursor.alpha * c.opacity))
            cairo_rectangle(cr, (c.x - c.width / 2).rounded(), (cy - c.height / 2).rounded(), c.width, c.height.rounded())
            cairo_fill(cr)
        }
    }

    private func drawKey(_ key: Scene.KeyCap, theme: Theme) {
        let fontSize = key.fontSize
        let r = key.rect
        let x = Double(r.x), y = Double(r.y), w = Double(r.width), h = Double(r.height)
        let dim = key.disabled ? Scene.disabledAlpha : 1
        let fill = key.pressed ? theme.keyPressed : theme.key
        /// The key's shape, `inset` pixels inside its rectangle.
        func shape(inset i: Double) {
            if key.round {
                cairo_arc(cr, x + w / 2, y + h / 2, min(w, h) / 2 - i, 0, 2 * Double.pi)
            } else {
                let rad = min(w, h) / 2 - i
                cairo_new_sub_path(cr)
                cairo_arc(cr, x + w - i - rad, y + i + rad, rad, -Double.pi / 2, 0)
                cairo_arc(cr, x + w - i - rad, y + h - i - rad, rad, 0, Double.pi / 2)
                cairo_arc(cr, x + i + rad, y + h - i - rad, rad, Double.pi / 2, Double.pi)
                cairo_arc(cr, x + i + rad, y + i + rad, rad, Double.pi, 3 * Double.pi / 2)
                cairo_close_path(cr)
            }
        }
        setSource(fill.with(alpha: fill.alpha * dim))
        shape(inset: 0)
        cairo_fill(cr)
        if let outline = theme.effectiveKeyOutline, theme.keyOutlineWidth > 0 {
            // Inside the key, so it stays within the key's damage.
            let lw = max(1, theme.keyOutlineWidth)
            setSource(outline.with(alpha: outline.alpha * dim))
            cairo_set_line_width(cr, lw)
            shape(inset: lw / 2)
            cairo_stroke(cr)
        }
        let ink = key.pressed ? theme.keyPressedText ?? theme.keyText : theme.keyText
        let centre = Point(x: x + w / 2, y: y + h / 2)
        switch key.label {
        case .text(let t):
            // A label on one line, or on two (the switch's, when it is too long for one).
            let lines = t.split(separator: "\n").map(String.init)
            let step = TextMetrics.lineHeight(fontSize)
            for (i, line) in lines.enumerated() {
                let c = Point(x: centre.x, y: centre.y + (Double(i) - Double(lines.count - 1) / 2) * step)
                drawText(line, theme: theme, size: fontSize, color: ink.with(alpha: ink.alpha * dim), centre: c,
                         maxWidth: w * 0.9, bold: theme.digitBold && Int(line) != nil)
            }
        case .delete:
            // A key-shaped arrow pointing left with a cross in it.
            let s = fontSize * 0.5
            setSource(ink.with(alpha: ink.alpha * dim))
            cairo_set_line_width(cr, max(2, fontSize / 14))
            cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
            cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
            cairo_move_to(cr, centre.x - s * 1.1, centre.y)
            cairo_line_to(cr, centre.x - s * 0.5, centre.y - s * 0.6)
            cairo_line_to(cr, centre.x + s * 0.9, centre.y - s * 0.6)
            cairo_line_to(cr, centre.x + s * 0.9, centre.y + s * 0.6)
            cairo_line_to(cr, centre.x - s * 0.5, centre.y + s * 0.6)
            cairo_close_path(cr)
            cairo_move_to(cr, centre.x - s * 0.15, centre.y - s * 0.28)
            cairo_line_to(cr, centre.x + s * 0.45, centre.y + s * 0.28)
            cairo_move_to(cr, centre.x + s * 0.45, centre.y - s * 0.28)
            cairo_line_to(cr, centre.x - s * 0.15, centre.y + s * 0.28)
            cairo_stroke(cr)
        }
    }

    /// Adds to cairo's path the segments of the polyline `points` that reach `r`, runs of
    /// consecutive segments as one sub-path. A stroke with round joins and caps covers the
    /// polyline swept by a disc, so the segments that miss `r` change no pixel in it, and
    /// one stroke of the sub-paths covers each pixel once, as the whole polyline would.
    /// Returns whether anything was added.
    private func addSegments(_ points: [Point], width: Double, reaching r: PixelRect) -> Bool {
        guard let first = points.first else { return false }
        if points.count == 1 {
            guard r.intersects(PixelRect(segment: first, first, width: width)) else { return false }
            cairo_move_to(cr, first.x, first.y)
            cairo_line_to(cr, first.x, first.y)
            return true
        }
        var added = false
        var open = false
        for i in 1..<points.count {
            let a = points[i - 1], b = points[i]
            guard r.intersects(PixelRect(segment: a, b, width: width)) else { open = false; continue }
            if !open { cairo_move_to(cr, a.x, a.y); open = true }
            cairo_line_to(cr, b.x, b.y)
            added = true
        }
        return added
    }

    private func drawPath(_ scene: Scene, in r: PixelRect) {
        guard !scene.path.isEmpty else { return }
        let w = scene.theme.lineWidth
        cairo_set_line_width(cr, w)
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
        let color = scene.pathColor
        let fading = scene.tail != nil && scene.tailAlpha > 0 && scene.tailAlpha < 1
        if !fading {
            // One stroke: round joins, and the tail when it shows at all.
            var points = scene.path
            if let t = scene.tail, scene.tailAlpha > 0 { points.append(t) }
            guard addSegments(points, width: w, reaching: r) else { return }
            setSource(color)
            cairo_stroke(cr)
            return
        }
        // While the tail fades in, the path and the tail are drawn opaque into a group, the
        // tail with its alpha (where it overlaps the path the path stays opaque), then the
        // group is painted with the path colour's alpha: no darker joint, no seam. The
        // group is as large as the clip: clipped first to the box of the segments that
        // reach `r`, a full redraw does not make (and clear, and composite) a group the
        // size of the screen.
        var points = scene.path
        if let t = scene.tail { points.append(t) }
        var box: PixelRect?
        for (a, b) in zip(points, points.dropFirst()) {
            let s = PixelRect(segment: a, b, width: w).intersection(r)
            if !s.isEmpty { box = box.map { $0.union(s) } ?? s }
        }
        guard let box else { return }
        cairo_save(cr)
        defer { cairo_restore(cr) }
        cairo_rectangle(cr, Double(box.x), Double(box.y), Double(box.width), Double(box.height))
        cairo_clip(cr)
        cairo_push_group(cr)
        if addSegments(scene.path, width: w, reaching: r) {
            setSource(color.with(alpha: 1))
            cairo_stroke(cr)
        }
        if let t = scene.tail, let last = scene.path.last, addSegments([last, t], width: w, reaching: r) {
            setSource(color.with(alpha: scene.tailAlpha))
            cairo_stroke(cr)
        }
        cairo_pop_group_to_source(cr)
        cairo_paint_with_alpha(cr, color.alpha)
    }

    private struct SpriteKey: Hashable {
        var color: Color
        var halo: Bool
        var radius: Double
    }
    /// Each look of a node (colour, halo or not, size), drawn once: a node on screen is then
    /// a copy of its picture, not an antialiased fill of two circles per damaged rectangle.
    private var nodeSprites: [SpriteKey: OpaquePointer] = [:]

    private func nodeSprite(_ key: SpriteKey) -> (surface: OpaquePointer, half: Int) {
        let outer = key.radius * (key.halo ? Scene.haloFactor : 1)
        let half = Int(outer.rounded(.up)) + 1
        if let s = nodeSprites[key] { return (s, half) }
        let s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(2 * half), Int32(2 * half))!
        let c = cairo_create(s)!
        let centre = Double(half)
        if key.halo {
            let h = key.color.with(alpha: 0.25)
            cairo_set_source_rgba(c, h.red, h.green, h.blue, h.alpha)
            cairo_arc(c, centre, centre, key.radius * Scene.haloFactor, 0, 2 * Double.pi)
            cairo_fill(c)
        }
        cairo_set_source_rgba(c, key.color.red, key.color.green, key.color.blue, key.color.alpha)
        cairo_arc(c, centre, centre, key.radius, 0, 2 * Double.pi)
        cairo_fill(c)
        cairo_destroy(c)
        cairo_surface_flush(s)
        nodeSprites[key] = s
        return (s, half)
    }

    private func drawNode(_ node: Scene.Node, theme: Theme) {
        let color: Color
        switch node.state {
        case .normal: color = theme.node
        case .selected: color = theme.nodeSelected
        case .error: color = theme.error
        case .disabled: color = theme.node.with(alpha: theme.node.alpha * Scene.disabledAlpha)
        }
        let halo = node.state == .selected || node.state == .error
        let (sprite, half) = nodeSprite(SpriteKey(color: color, halo: halo, radius: node.radius))
        cairo_set_source_surface(cr, sprite, node.center.x - Double(half), node.center.y - Double(half))
        cairo_paint(cr)
    }

    private func setSource(_ c: Color) {
        cairo_set_source_rgba(cr, c.red, c.green, c.blue, c.alpha)
    }

    public struct PNGError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Writes the whole shadow buffer to a PNG file.
    public func writePNG(to path: String) throws(PNGError) {
        cairo_surface_flush(surface)
        try shadow.writePNG(to: path)
    }
}

extension ShadowBuffer {
    /// A buffer holding the pixels of a PNG file (for comparing against golden images).
    public static func readPNG(_ path: String) -> ShadowBuffer? {
        let img = cairo_image_surface_create_from_png(path)!
        defer { cairo_surface_destroy(img) }
        guard cairo_surface_status(img) == CAIRO_STATUS_SUCCESS else { return nil }
        let w = Int(cairo_image_surface_get_width(img)), h = Int(cairo_image_surface_get_height(img))
        let buffer = ShadowBuffer(size: Size(width: w, height: h))
        let target = cairo_image_surface_create_for_data(
            buffer.pixels.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24, Int32(w), Int32(h), Int32(buffer.stride))
        let cr = cairo_create(target)
        cairo_set_source_surface(cr, img, 0, 0)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_paint(cr)
        cairo_destroy(cr)
        cairo_surface_flush(target)
        cairo_surface_destroy(target)
        return buffer
    }
}
