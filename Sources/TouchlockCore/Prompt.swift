/// What the lock screen's prompt says: the instruction of the state it is in (draw,
/// type, wrong, wait, unlocked, enroll), or a notice about the last thing done (a
/// pattern too short, a code incomplete, an enrollment's two secrets that differ) shown
/// until the next touch begins or the screen changes.
public struct Prompt: Sendable {
    /// What the screen the prompt is for is doing.
    public struct Screen: Sendable {
        public var session: Session
        public var enrollment: Enrollment?
        /// The method on screen.
        public var showing: UnlockMethod
        /// The pad on screen is at rest (the pattern idle, the code pad entering).
        public var padIdle: Bool
        public var now: Instant

        public init(session: Session, enrollment: Enrollment?, showing: UnlockMethod, padIdle: Bool, now: Instant) {
            self.session = session
            self.enrollment = enrollment
            self.showing = showing
            self.padIdle = padIdle
            self.now = now
        }
    }

    /// The notice shown instead of the instruction, until cleared.
    public private(set) var notice: String?
    /// What the lockout under way stands for when it is not failures counted: the prompt
    /// says so until the lockout ends or is reset.
    public var recordFault: RecordFault?

    public init() {}

    /// `text` is shown until cleared.
    public mutating func show(_ text: String) {
        notice = text
    }

    /// The notice goes; whether one was shown (the screen is redrawn then).
    @discardableResult
    public mutating func clear() -> Bool {
        defer { notice = nil }
        return notice != nil
    }

    /// What the prompt says on `screen`, in the words of `m`.
    public func text(_ screen: Screen, _ m: Messages) -> String {
        if let e = screen.enrollment {
            if let notice { return notice }
            switch (e.method, e.stage) {
            case (.pattern, .first): return m.enrollPattern
            case (.pattern, .confirm): return m.enrollPatternAgain
            case (.code, .first): return m.enrollCode
            case (.code, .confirm): return m.enrollCodeAgain
            case (.service, _):
                Log.bug("prompt: an enrollment of service codes")
                return ""
            }
        }
        switch screen.session.state {
        case .locked, .verifying, .storing:
            if let notice, screen.padIdle { return notice }
            switch screen.showing {
            case .pattern: return m.patternPrompt
            case .code: return m.codePrompt
            case .service: return m.servicePrompt
            }
        case .wrong(let method, _):
            return method == .pattern ? m.wrongPattern : m.wrongCode
        case .lockout(let until):
            let left = Interval(microseconds: max(0, (until - screen.now).microseconds))
            switch recordFault {
            case nil: return m.lockout(left: left)
            case .damaged: return m.lockout(left: left, damagedRecord: true)
            // No wait ends it: no countdown.
            case .untrusted: return m.recordUntrusted
            }
        case .storeFailed(let reason):
            return "Locked: cannot record the attempt (\(reason)). Touch to retry"
        case .unlocked:
            return m.unlocked
        }
    }
}

/// Why a lockout stands for the state file rather than for failures counted.
public enum RecordFault: Sendable, Hashable {
    /// It was damaged or unreadable at start-up: locked out as after `[lockout]
    /// damaged_count` failures (`Messages.recordDamaged`, with the wait).
    case damaged
    /// Others could have written it: no attempt is accepted until root puts it right and
    /// restarts the daemon (`Messages.recordUntrusted`, no wait to count down).
    case untrusted
}
