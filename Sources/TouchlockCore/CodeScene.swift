extension Scene {
    /// One digit box of the code pad.
    public struct Box: Hashable, Sendable {
        public enum Content: Hashable, Sendable { case empty, digit(Int), dot }
        public var rect: PixelRect
        public var content: Content
        public var underline: Color
        /// The underline's thickness in pixels.
        public var underlineWidth: Double
        /// The cursor in this box: its centre's x and its opacity.
        public var cursor: Cursor?
        public var error: Bool
        /// The digit's size: the theme's, made smaller when the box is small, so the digit
        /// stays inside the box.
        public var fontSize: Double
        /// A secure entry's dot.
        public var dotRadius = 4.0

        public struct Cursor: Hashable, Sendable {
            public var x: Double
            public var width: Double
            public var height: Double
            public var opacity: Double
        }

        /// Everything drawn for the box stays inside this rectangle.
        public var bounds: PixelRect {
            PixelRect(x: rect.x - 3, y: rect.y - 3, width: rect.width + 6, height: rect.height + 6)
        }
    }

    /// A key of the keypad, or an on-screen control.
    public struct KeyCap: Hashable, Sendable {
        public enum Label: Hashable, Sendable { case text(String), delete }
        public var rect: PixelRect
        public var label: Label
        public var pressed: Bool
        /// A round key (digits) or a rounded rectangle (controls).
        public var round: Bool
        /// The label's size, at most what fits the key.
        public var fontSize: Double
        /// Drawn dimmed: input is not taken.
        public var disabled = false

        public var bounds: PixelRect {
            PixelRect(x: rect.x - 2, y: rect.y - 2, width: rect.width + 4, height: rect.height + 4)
        }
    }

    /// Adds the boxes, keys and control that differ from `old` (same counts).
    func addControlDamage(from old: Scene, to d: inout Damage) {
        for i in boxes.indices where boxes[i] != old.boxes[i] {
            d.add(boxes[i].bounds)
            d.add(old.boxes[i].bounds)
        }
        for i in keys.indices where keys[i] != old.keys[i] {
            d.add(keys[i].bounds)
            d.add(old.keys[i].bounds)
        }
        if toggle != old.toggle {
            if let t = toggle { d.add(t.bounds) }
            if let t = old.toggle { d.add(t.bounds) }
        }
    }
}

extension SceneBuilder {
    /// The code pad's screen at `now` (the cursor's blink and the reveal of the last digit
    /// depend on it).
    public func code(_ pad: CodePad, session: Session, prompt: String, at now: Instant) -> Scene {
        let layout = pad.layout
        let error: Bool
        switch pad.state {
        case .rejected: error = true
        case .entering, .submitted, .accepted: error = false
        }
        let unit = theme.unit
        // No cursor, no focus while input is not taken (an error hold, a lockout).
        let open = session.acceptsInput
        // While a wrong code is held or the session is locked out the keys look disabled.
        let blocked = error || SceneBuilder.inputBlocked(session)
        // A full pad keeps its cursor beside the last digit while the code is checked.
        let checking = pad.state == .submitted && !SceneBuilder.inputBlocked(session)
        let cursorOpacity = open || checking ? pad.cursorOpacity(at: now) : nil
        let first = layout.boxes.first ?? PixelRect(x: 0, y: 0, width: 1, height: 1)
        let digitSize = measure.largestSize("8", fitting: Double(first.width),
                                            upTo: min(theme.codeFontSize, Double(first.height) / TextMetrics.lineHeight(1)),
                                            bold: theme.digitBold)
        var boxes: [Scene.Box] = []
        for (i, r) in layout.boxes.enumerated() {
            let filled = i < pad.entered
            let content: Scene.Box.Content
            if let d = pad.shownDigit(i, at: now) { content = .digit(d) } else { content = filled ? .dot : .empty }
            let focusedBox = open && pad.focused && pad.state == .entering && i == pad.cursorBox
            // Grey under an empty box, the accent under the focused one, another colour under a
            // filled one; the error colour on a wrong code.
            let underline = error ? theme.error : focusedBox ? theme.accent : filled ? theme.underlineFilled : theme.underline
            var cursor: Scene.Box.Cursor? = nil
            if let o = cursorOpacity, i == pad.cursorBox {
                let cx = Double(r.x) + Double(r.width) / 2
                // Centred in an empty box, beside the digit in a filled one.
                let x = filled ? min(cx + digitSize * 0.42, Double(r.maxX) - 2) : cx
                cursor = .init(x: x, width: max(2, (2 * unit).rounded()),
                               height: min(Double(r.height) * 0.55, digitSize * 1.1), opacity: o)
            }
            var box = Scene.Box(rect: r, content: content, underline: underline,
                                underlineWidth: max(2, (3 * unit).rounded()), cursor: cursor, error: error,
                                fontSize: digitSize)
            box.dotRadius = max(1.5, min(theme.dotSize / 2, Double(min(r.width, r.height)) * 0.3))
            boxes.append(box)
        }
        let keys = layout.keys.indices.map { slot -> Scene.KeyCap in
            let label: Scene.KeyCap.Label
            switch pad.key(inSlot: slot) {
            case .digit(let d): label = .text(String(d))
            case .delete: label = .delete
            case .ok: label = .text("OK")
            }
            let pressed = pad.press.map { $0.slot == slot && $0.inside } ?? false
            let r = layout.keys[slot]
            var k = Scene.KeyCap(rect: r, label: label, pressed: pressed, round: true,
                                 fontSize: min(theme.keyFontSize, Double(min(r.width, r.height)) * 0.4))
            k.disabled = blocked
            return k
        }
        var scene = Scene(size: size, theme: theme, prompt: prompt, promptBox: layout.promptBox,
                          nodes: [], path: [], pathColor: theme.path, tail: nil)
        scene.boxes = boxes
        scene.keys = keys
        scene.promptMinimum = promptMinimum
        return scene
    }
}
