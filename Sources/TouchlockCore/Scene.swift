/// What the screen shows, as data. The renderer draws a scene; `damage(from:)` says
/// which pixels differ from the previous scene, so only those are redrawn and copied.
public struct Scene: Hashable, Sendable {
    /// `disabled`: input is not taken (a lockout, an error hold); drawn dimmed.
    public enum NodeState: Hashable, Sendable { case normal, selected, error, disabled }
    /// How opaque disabled nodes and keys are drawn (Android's disabled alpha).
    public static let disabledAlpha = 0.38
    /// A chosen node is drawn with a halo this many times its radius.
    public static let haloFactor = 1.8

    public struct Node: Hashable, Sendable {
        public var center: Point
        public var radius: Double
        public var state: NodeState
    }

    public var size: Size
    public var theme: Theme
    public var prompt: String
    /// The band the prompt is drawn in.
    public var promptBox: PixelRect
    /// The prompt's size in pixels, and the smallest it shrinks to before it overflows.
    public var promptSize: Double
    public var promptMinimum: Double
    public var nodes: [Node]
    /// Centres of the chosen nodes, in order.
    public var path: [Point]
    public var pathColor: Color
    /// The live segment from the last chosen node to the finger.
    public var tail: Point?
    /// How opaque the tail is (0...1): it fades in as the finger leaves the last node.
    public var tailAlpha: Double
    /// The code pad's digit boxes and keypad (empty on the pattern screen).
    public var boxes: [Box] = []
    public var keys: [KeyCap] = []
    /// The control that switches between the pattern and the code.
    public var toggle: KeyCap?
    /// The clock, the message and the logo, when the screen shows them.
    public var info: Info?

    public init(size: Size, theme: Theme, prompt: String, promptBox: PixelRect,
                nodes: [Node], path: [Point], pathColor: Color, tail: Point?, tailAlpha: Double = 1) {
        self.size = size; self.theme = theme; self.prompt = prompt; self.promptBox = promptBox
        promptSize = theme.fontSize; promptMinimum = min(theme.fontSize, 12 * theme.unit)
        self.nodes = nodes; self.path = path; self.pathColor = pathColor; self.tail = tail
        self.tailAlpha = tailAlpha
    }

    /// The prompt as set in its box, its text measured by `measure`: one or two lines,
    /// and their size.
    public func promptText(_ measure: any TextMeasure) -> (lines: [String], size: Double) {
        TextMetrics.fit(prompt, width: Double(promptBox.width), height: Double(promptBox.height),
                        size: promptSize, minimum: promptMinimum, measure: measure)
    }

    /// The tail's opacity for a finger `distance` pixels from the last chosen node on a
    /// grid of `cell` pixels (Android's rule): invisible within 0.3 cell, opaque from
    /// 0.55 cell, linear in between.
    public static func tailAlpha(distance: Double, cell: Double) -> Double {
        guard cell > 0 else { return 1 }
        return min(1, max(0, (distance / cell - 0.3) * 4))
    }

    /// The pixels that differ between `old` and `self`.
    public func damage(from old: Scene?) -> Damage {
        var d = Damage(bounds: size)
        guard let old, old.size == size, old.theme == theme, old.nodes.count == nodes.count,
              old.boxes.count == boxes.count, old.keys.count == keys.count,
              old.info?.layout == info?.layout, old.info?.logo == info?.logo else {
            d.addAll()
            return d
        }
        addControlDamage(from: old, to: &d)
        if let i = info, let o = old.info, i.text != o.text {
            // The same places: only the parts whose text changed.
            if i.text.time != o.text.time, let r = i.layout.time { d.add(r) }
            if i.text.date != o.text.date, let r = i.layout.date { d.add(r) }
            if i.text.message != o.text.message, let r = i.layout.message { d.add(r) }
        }
        if old.prompt != prompt || old.promptSize != promptSize || old.promptBox != promptBox {
            d.add(promptBox)
            d.add(old.promptBox)
        }
        let w = theme.lineWidth
        let pathSame = old.pathColor == pathColor
        if pathSame && path.count >= old.path.count && Array(path.prefix(old.path.count)) == old.path {
            // The path grew (or stayed): only its new segments change.
            if path.count >= 2, old.path.count < path.count {
                for i in max(1, old.path.count)..<path.count {
                    d.addSegment(path[i - 1], path[i], width: w)
                }
            }
        } else {
            for s in [old.path, path] where s.count >= 2 {
                for i in 1..<s.count { d.addSegment(s[i - 1], s[i], width: w) }
            }
        }
        if old.tail != tail || old.tailAlpha != tailAlpha || old.path.last != path.last {
            if let t = old.tail, let last = old.path.last { d.addSegment(last, t, width: w) }
            if let t = tail, let last = path.last { d.addSegment(last, t, width: w) }
        }
        for i in nodes.indices where nodes[i] != old.nodes[i] {
            d.add(PixelRect(around: nodes[i].center, radius: max(nodes[i].radius, old.nodes[i].radius) * Scene.haloFactor))
        }
        return d
    }
}

/// Builds the scene from the state of the machines.
public struct SceneBuilder: Sendable {
    public var theme: Theme
    public var size: Size
    /// Stealth mode: the path, the tail and the chosen nodes are not shown, so nobody
    /// looking over a shoulder sees the pattern; only the messages tell the outcome.
    public var stealth: Bool
    public var messages: Messages
    /// Where things go (nil: the pattern's prompt takes the band above the grid).
    public var layout: ScreenLayout?
    /// The logo's PNG file (`[screen] logo`), drawn in the layout's logo box.
    public var logo: String?
    /// How wide text is drawn (the digits' size in their boxes).
    public var measure: any TextMeasure = EstimatedTextMeasure()

    public init(theme: Theme, size: Size, stealth: Bool = false, messages: Messages = Messages()) {
        self.theme = theme; self.size = size; self.stealth = stealth; self.messages = messages
    }

    public func pattern(_ lock: PatternLock, session: Session) -> Scene {
        let grid = lock.grid
        let path = lock.path
        let error: Bool
        if case .rejected = lock.state { error = true } else { error = false }
        var nodes = (0..<grid.count).map {
            // On whole pixels, so every node is the same picture (the renderer draws each
            // look once and copies it); half a pixel from the grid's exact centre at most.
            Scene.Node(center: grid.center(of: $0).rounded, radius: grid.nodeRadius, state: .normal)
        }
        var tail: Point? = nil
        var tailAlpha = 1.0
        if case .drawing(_, let p, let finger) = lock.state, let last = p.last {
            tail = finger
            tailAlpha = Scene.tailAlpha(distance: grid.center(of: last).distance(to: finger), cell: grid.cell)
        }
        var shown = path
        if stealth {
            shown = []
            tail = nil
        }
        for n in shown { nodes[n].state = error ? .error : .selected }
        if Self.inputBlocked(session) || error {
            // Input is not taken: what cannot be touched looks so; the message is the focus.
            for i in nodes.indices where nodes[i].state == .normal { nodes[i].state = .disabled }
        }
        let prompt: String
        switch session.state {
        case .locked, .verifying, .storing: prompt = messages.patternPrompt
        case .wrong: prompt = messages.wrongPattern
        case .lockout, .storeFailed: prompt = messages.lockout(left: Interval(microseconds: 0))
        case .unlocked: prompt = messages.unlocked
        }
        let band = Int(grid.origin.y)
        if case .unlocked = session.state, case .idle = lock.state {
            // Nothing of the pattern stays on screen once the device is unlocked.
            nodes = []
            tail = nil
            return Scene(size: size, theme: theme, prompt: prompt,
                         promptBox: PixelRect(x: 0, y: 0, width: size.width, height: size.height),
                         nodes: [], path: [], pathColor: theme.path, tail: nil)
        }
        var scene = Scene(size: size, theme: theme, prompt: prompt,
                          promptBox: layout?.patternPrompt ?? PixelRect(x: 0, y: 0, width: size.width, height: max(band, 1)),
                          nodes: nodes, path: shown.map(grid.center(of:)),
                          pathColor: error ? theme.error.with(alpha: theme.path.alpha) : theme.path,
                          tail: tail, tailAlpha: tail == nil ? 1 : tailAlpha)
        scene.promptMinimum = promptMinimum
        return scene
    }

    /// The prompt's smallest size in pixels.
    var promptMinimum: Double {
        min(theme.fontSize, ScreenLayout.minimumText * (layout?.density.px ?? theme.unit))
    }

    /// Whether the session takes no input for a while that the screen shows: a wrong
    /// attempt's hold, a lockout, a record that could not be stored.
    static func inputBlocked(_ session: Session) -> Bool {
        switch session.state {
        case .wrong, .lockout, .storeFailed: true
        case .locked, .verifying, .storing, .unlocked: false
        }
    }

    /// The control that switches methods, labelled `label`, at `rect`.
    /// It looks disabled while `session` takes no input.
    public func toggle(_ label: String, at rect: PixelRect, session: Session) -> Scene.KeyCap {
        let size = layout?.toggleFontSize ?? min(theme.fontSize * 0.8, Double(rect.height) * 0.45)
        // At least 12 dp of the switch each side of its label: a label too long for it at
        // its smallest goes on two lines, else is cut.
        let room = Double(rect.width) - 24 * (layout?.density.px ?? theme.unit) + 0.5
        let lines = TextMetrics.label(label, width: room, height: Double(rect.height), size: size, measure: measure)
        var k = Scene.KeyCap(rect: rect, label: .text(lines.joined(separator: "\n")), pressed: false, round: false, fontSize: size)
        k.disabled = Self.inputBlocked(session)
        return k
    }
}
