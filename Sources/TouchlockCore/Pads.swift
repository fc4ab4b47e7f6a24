extension LockScreen {
    /// The pads a screen has: a pattern grid, a code pad, or both with the one shown, and
    /// the switch between them. Its actions are its pads' own, in the order they asked.
    ///
    ///     showing pattern <--switch (the pad left behind starts over)--> showing code
    ///
    /// Only the pad shown is given touches. A code pad left hidden asks for no timer: its
    /// cursor blinks from when it is shown.
    public enum Pads: Sendable {
        case pattern(PatternLock)
        case code(CodePad)
        case both(PatternLock, CodePad, showing: UnlockMethod)

        public enum Action: Hashable, Sendable {
            case pattern(PatternLock.Action)
            case code(CodePad.Action)
        }

        public var methods: ScreenSettings.Methods {
            switch self {
            case .pattern: .pattern
            case .code: .code
            case .both: .both
            }
        }

        /// The method on screen.
        public var showing: UnlockMethod {
            switch self {
            case .pattern: .pattern
            case .code: .code
            case .both(_, _, let m): m
            }
        }

        public var pattern: PatternLock? {
            switch self {
            case .pattern(let p), .both(let p, _, _): p
            case .code: nil
            }
        }

        public var code: CodePad? {
            switch self {
            case .code(let c), .both(_, let c, _): c
            case .pattern: nil
            }
        }

        public func offers(_ method: UnlockMethod) -> Bool {
            switch (self, method) {
            case (.pattern, .pattern), (.code, .code), (.both, _): true
            case (.pattern, .code), (.code, .pattern), (.pattern, .service), (.code, .service): false
            }
        }

        /// The pad on screen is at rest: the pattern idle, the code pad entering.
        public var idle: Bool {
            switch self {
            case .pattern(let p), .both(let p, _, .pattern): p.state == .idle
            case .code(let c), .both(_, let c, _): c.state == .entering
            }
        }

        /// The finger the pad on screen follows has done something yet: chosen a node.
        /// (A key press does nothing before it is released.)
        public var drawn: Bool {
            switch showing {
            case .pattern: !(pattern?.path.isEmpty ?? true)
            case .code, .service: false
            }
        }

        /// Runs `body` on the pattern machine, if the screen has one.
        public mutating func onPattern(_ body: (inout PatternLock) -> [PatternLock.Action]) -> [Action] {
            switch self {
            case .pattern(var p):
                let out = body(&p)
                self = .pattern(p)
                return out.map(Action.pattern)
            case .both(var p, let c, let showing):
                let out = body(&p)
                self = .both(p, c, showing: showing)
                return out.map(Action.pattern)
            case .code:
                return []
            }
        }

        /// Runs `body` on the code pad, if the screen has one.
        public mutating func onCode(_ body: (inout CodePad) -> [CodePad.Action]) -> [Action] {
            switch self {
            case .code(var c):
                let out = body(&c)
                self = .code(c)
                return out.map(Action.code)
            case .both(let p, var c, let showing):
                let out = body(&c)
                self = .both(p, c, showing: showing)
                return out.map(Action.code)
            case .pattern:
                return []
            }
        }

        /// Shows `method` (with both methods; the others show their one pad).
        public mutating func show(_ method: UnlockMethod) {
            switch self {
            case .both(let p, let c, _):
                guard method != .service else { return Log.bug("lock screen: asked to show a service pad") }
                self = .both(p, c, showing: method)
            case .pattern, .code: break
            }
        }

        /// Both pads start over; the code pad's cursor asks for timers only if `codeWakes`.
        public mutating func reset(at now: Instant, codeWakes: Bool) -> [Action] {
            onPattern { $0.reset() } + onCode { $0.reset(at: now, wakes: codeWakes) }
        }

        /// The other method is shown: the pad left behind starts over, and a code pad
        /// shown from here blinks from now.
        public mutating func switchMethod(at now: Instant) -> [Action] {
            let next: UnlockMethod = showing == .pattern ? .code : .pattern
            let out = reset(at: now, codeWakes: next == .code)
            show(next)
            Log.debug("lock screen: switched to \(next.rawValue)")
            return out
        }

        /// Touches for the pad on screen.
        public mutating func handle(_ touches: [ScreenTouch], at now: Instant) -> [Action] {
            switch showing {
            case .pattern: return onPattern { $0.handle(touches, at: now) }
            case .code: return onCode { $0.handle(touches, at: now) }
            case .service:
                Log.bug("lock screen: a service pad on screen")
                return []
            }
        }

        /// The timer reached `now`: the pattern's error hold; the code pad's hold, reveal
        /// and cursor, which ask for timers only if `codeWakes`.
        public mutating func timerFired(at now: Instant, codeWakes: Bool) -> [Action] {
            onPattern { $0.timerFired(at: now) } + onCode { $0.timerFired(at: now, wakes: codeWakes) }
        }

        /// The pad of `method` starts over.
        public mutating func reset(_ method: UnlockMethod, at now: Instant) -> [Action] {
            switch method {
            case .pattern: onPattern { $0.reset() }
            case .code: onCode { $0.reset(at: now) }
            case .service: []  // no pad
            }
        }

        /// The verdict on the attempt of `method` on its pad.
        public mutating func verdict(_ method: UnlockMethod, accepted: Bool, at now: Instant,
                                     errorHold: Interval) -> [Action] {
            switch method {
            case .pattern: onPattern { $0.verdict(accepted: accepted, at: now, errorHold: errorHold) }
            case .code: onCode { $0.verdict(accepted: accepted, at: now, errorHold: errorHold) }
            case .service: []  // no pad: the code came over the control socket
            }
        }

        /// Whether the pad of `method` has an attempt out for a verdict.
        public func submitted(_ method: UnlockMethod) -> Bool {
            switch method {
            case .pattern:
                if case .submitted = pattern?.state { return true }
                return false
            case .code:
                return code?.state == .submitted
            case .service:
                // No pad: a service code comes through the control socket.
                return false
            }
        }
    }
}
