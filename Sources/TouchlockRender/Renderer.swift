import CCairo
import Glibc
import TouchlockCore

/// Draws scenes with cairo into a shadow buffer. Only the damaged rectangles are
/// painted: everything is drawn under a clip, so a finger dragging the path repaints a
/// few thousand pixels, not the screen.
public final class Renderer {
    public let shadow: ShadowBuffer
    private let surface: OpaquePointer
    private let cr: OpaquePointer

    public init(shadow: ShadowBuffer) {
        self.shadow = shadow
        surface = cairo_image_surface_create_for_data(
            shadow.pixels.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24,
            Int32(shadow.size.width), Int32(shadow.size.height), Int32(shadow.stride))
        cr = cairo_create(surface)
        precondition(cairo_status(cr) == CAIRO_STATUS_SUCCESS, "cairo_create failed")
    }

    deinit {
        cairo_destroy(cr)
        cairo_surface_destroy(surface)
    }

    /// Paints `scene` inside `damage`.
    public func draw(_ scene: Scene, damage: Damage) {
        if damage.isEmpty { return }
        cairo_save(cr)
        defer { cairo_restore(cr) }
        for r in damage.rects {
            cairo_rectangle(cr, Double(r.x), Double(r.y), Double(r.width), Double(r.height))
        }
        cairo_clip(cr)

        let theme = scene.theme
        setSource(theme.background)
        cairo_set_operator(cr, CAIRO_OPERATOR_SOURCE)
        cairo_paint(cr)
        cairo_set_operator(cr, CAIRO_OPERATOR_OVER)

        if damage.rects.contains(where: { $0.intersects(scene.promptBox) }) {
            drawPrompt(scene)
        }
        drawPath(scene)
        for node in scene.nodes { drawNode(node, theme: theme) }
        cairo_surface_flush(surface)
    }

    private func drawPrompt(_ scene: Scene) {
        let theme = scene.theme
        cairo_select_font_face(cr, theme.fontFamily, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_font_size(cr, theme.fontSize)
        var ext = cairo_text_extents_t()
        cairo_text_extents(cr, scene.prompt, &ext)
        let box = scene.promptBox
        let x = Double(box.x) + (Double(box.width) - ext.width) / 2 - ext.x_bearing
        let y = Double(box.y) + (Double(box.height) - ext.height) / 2 - ext.y_bearing
        setSource(theme.text)
        cairo_move_to(cr, x, y)
        cairo_show_text(cr, scene.prompt)
    }

    private func drawPath(_ scene: Scene) {
        guard let first = scene.path.first else { return }
        cairo_set_line_width(cr, scene.theme.lineWidth)
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND)
        cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND)
        let color = scene.pathColor
        let fading = scene.tail != nil && scene.tailAlpha > 0 && scene.tailAlpha < 1
        if !fading {
            // One stroke: round joins, and the tail when it shows at all.
            cairo_move_to(cr, first.x, first.y)
            for p in scene.path.dropFirst() { cairo_line_to(cr, p.x, p.y) }
            if let t = scene.tail, scene.tailAlpha > 0 { cairo_line_to(cr, t.x, t.y) }
            if scene.path.count == 1 && (scene.tail == nil || scene.tailAlpha == 0) { cairo_line_to(cr, first.x, first.y) }
            setSource(color)
            cairo_stroke(cr)
            return
        }
        // While the tail fades in, the path and the tail are drawn opaque into a group, the
        // tail with its alpha (where it overlaps the path the path stays opaque), then the
        // group is painted with the path colour's alpha: no darker joint, no seam.
        cairo_push_group(cr)
        cairo_move_to(cr, first.x, first.y)
        for p in scene.path.dropFirst() { cairo_line_to(cr, p.x, p.y) }
        if scene.path.count == 1 { cairo_line_to(cr, first.x, first.y) }
        setSource(color.with(alpha: 1))
        cairo_stroke(cr)
        if let t = scene.tail, let last = scene.path.last {
            cairo_move_to(cr, last.x, last.y)
            cairo_line_to(cr, t.x, t.y)
            setSource(color.with(alpha: scene.tailAlpha))
            cairo_stroke(cr)
        }
        cairo_pop_group_to_source(cr)
        cairo_paint_with_alpha(cr, color.alpha)
    }

    private func drawNode(_ node: Scene.Node, theme: Theme) {
        let color: Color
        switch node.state {
        case .normal: color = theme.node
        case .selected: color = theme.nodeSelected
        case .error: color = theme.error
        }
        if node.state != .normal {
            // A halo around a chosen node.
            setSource(color.with(alpha: 0.25))
            cairo_arc(cr, node.center.x, node.center.y, node.radius * Scene.haloFactor, 0, 2 * Double.pi)
            cairo_fill(cr)
        }
        setSource(color)
        cairo_arc(cr, node.center.x, node.center.y, node.radius, 0, 2 * Double.pi)
        cairo_fill(cr)
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
