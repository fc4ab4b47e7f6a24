/// What the screen shows, as data. The renderer draws a scene; `damage(from:)` says
/// which pixels differ from the previous scene, so only those are redrawn and copied.
public struct Scene: Hashable, Sendable {
    public enum NodeState: Hashable, Sendable { case normal, selected, error }
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
    public var nodes: [Node]
    /// Centres of the chosen nodes, in order.
    public var path: [Point]
    public var pathColor: Color
    /// The live segment from the last chosen node to the finger.
    public var tail: Point?

    public init(size: Size, theme: Theme, prompt: String, promptBox: PixelRect,
                nodes: [Node], path: [Point], pathColor: Color, tail: Point?) {
        self.size = size; self.theme = theme; self.prompt = prompt; self.promptBox = promptBox
        self.nodes = nodes; self.path = path; self.pathColor = pathColor; self.tail = tail
    }

    /// The pixels that differ between `old` and `self`.
    public func damage(from old: Scene?) -> Damage {
        var d = Damage(bounds: size)
        guard let old, old.size == size, old.theme == theme, old.nodes.count == nodes.count else {
            d.addAll()
            return d
        }
        if old.prompt != prompt {
            d.add(promptBox)
            d.add(old.promptBox)
        }
        let w = theme.lineWidth
        let pathSame = old.pathColor == pathColor
        if pathSame && path.count >= old.path.count && Array(path.prefix(old.path.count)) == old.path {
            // The path grew (or stayed): only its new segments change.
            if path.count >= 2, old.path.count < path.count {
                for i in max(1, old.path.count)..<path.count {
                    d.add(PixelRect(segment: path[i - 1], path[i], width: w))
                }
            }
        } else {
            for s in [old.path, path] where s.count >= 2 {
                for i in 1..<s.count { d.add(PixelRect(segment: s[i - 1], s[i], width: w)) }
            }
        }
        if old.tail != tail || old.path.last != path.last {
            if let t = old.tail, let last = old.path.last { d.add(PixelRect(segment: last, t, width: w)) }
            if let t = tail, let last = path.last { d.add(PixelRect(segment: last, t, width: w)) }
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

    public init(theme: Theme, size: Size) { self.theme = theme; self.size = size }

    public func pattern(_ lock: PatternLock, session: Session) -> Scene {
        let grid = lock.grid
        let path = lock.path
        let error: Bool
        if case .rejected = lock.state { error = true } else { error = false }
        var nodes = (0..<grid.count).map {
            Scene.Node(center: grid.center(of: $0), radius: grid.nodeRadius, state: .normal)
        }
        for n in path { nodes[n].state = error ? .error : .selected }
        var tail: Point? = nil
        if case .drawing(_, let p, let finger) = lock.state, !p.isEmpty { tail = finger }
        let prompt: String
        switch session.state {
        case .locked, .verifying, .storing: prompt = "Draw your pattern to unlock"
        case .wrong: prompt = "Wrong pattern, try again"
        case .lockout, .storeFailed: prompt = "Too many attempts"
        case .unlocked: prompt = "Unlocked"
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
        return Scene(size: size, theme: theme, prompt: prompt,
                     promptBox: PixelRect(x: 0, y: 0, width: size.width, height: max(band, 1)),
                     nodes: nodes, path: path.map(grid.center(of:)),
                     pathColor: error ? theme.error.with(alpha: theme.path.alpha) : theme.path,
                     tail: tail)
    }
}
