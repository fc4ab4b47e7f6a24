/// One display output's life: shown, handed over on purpose, or lost. Losing the display
/// (another process took DRM master, a flip failed, the card's events cannot be read, a
/// flip never completes) is a state, not an error: the output stops presenting, status
/// says which output and why, and the owner retries when it can (our VT shown again, a
/// `lock`, a hotplug). The owner carries out the actions (the DRM calls) and reports back.
///
///     active --submitted--> active(flip pending) --completed--> active
///       |  ^                     | no event within flipTimeout: abandon the flip, set
///       |  |                     | the mode again (recovered); `maxTimeouts` in a row: inactive
///       |  +--acquired-- handedOver <--released-- (after an unlock)
///       +--failed--> inactive(reason) --retry--> reacquire --succeeded--> active
///                                                         --failed--> inactive (same reason)
public struct OutputState: Hashable, Sendable {
    public enum Reason: Hashable, Sendable, CustomStringConvertible {
        /// EACCES/EPERM on a mode-setting call: another process is DRM master.
        case masterLost(String)
        /// A page flip or mode set failed for another reason (ENODEV, EINVAL...).
        case flipFailed(String)
        /// drmHandleEvent failed: page-flip events cannot be read any more.
        case eventsFailed(String)
        /// Page flips submitted and never completed, this many times in a row.
        case flipStuck(Int)

        /// The machine-readable name status gives (the raw values are the wire's words).
        public enum Code: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
            case masterLost = "master_lost"
            case flipFailed = "flip_failed"
            case eventsFailed = "events_failed"
            case flipStuck = "flip_stuck"
        
            public var description: String { rawValue }
        }

        public var code: Code {
            switch self {
            case .masterLost: .masterLost
            case .flipFailed: .flipFailed
            case .eventsFailed: .eventsFailed
            case .flipStuck: .flipStuck
            }
        }

        public var description: String {
            switch self {
            case .masterLost(let why): "DRM master lost: \(why)"
            case .flipFailed(let why): "a frame could not be shown: \(why)"
            case .eventsFailed(let why): "page-flip events cannot be read: \(why)"
            case .flipStuck(let n): "\(n) page flips in a row never completed"
            }
        }
    }

    public enum Phase: Hashable, Sendable {
        case active
        /// DRM master dropped on purpose (after an unlock) for another program to show.
        case handedOver
        case inactive(Reason)

        /// The phase without its reason, as status's output `state` gives it (the raw
        /// values are the wire's words).
        public enum Name: String, Hashable, Sendable, CaseIterable, Codable, CustomStringConvertible {
            case active
            case handedOver = "handed_over"
            case inactive
        
            public var description: String { rawValue }
        }

        public var name: Name {
            switch self {
            case .active: .active
            case .handedOver: .handedOver
            case .inactive: .inactive
            }
        }
    }

    /// What failed, as the owner saw it.
    public enum Failure: Hashable, Sendable {
        case notMaster, flip, events
    }

    /// What makes the owner try an inactive output again.
    public enum Trigger: Hashable, Sendable, CustomStringConvertible {
        case terminalAcquired, lockRequested, hotplug
        public var description: String {
            switch self {
            case .terminalAcquired: "our VT shown"
            case .lockRequested: "lock requested"
            case .hotplug: "display hotplug"
            }
        }
    }

    public enum Action: Hashable, Sendable {
        /// Wake the owner at this time to check the pending flip (`timerFired`).
        case armFlipTimer(Instant)
        case disarmFlipTimer
        /// Forget the pending flip (its event, if it ever comes, is a late one) and set
        /// the mode again with a full frame at the next present.
        case abandonFlip
        /// Stop reading the card's events (after drmHandleEvent failed).
        case stopEvents
        /// Take DRM master if needed, read the events again, set the mode at the next
        /// present with a full frame; report `reacquired`.
        case reacquire
        /// A frame is on the screen at this time.
        case frameShown(Instant)
        /// Present again (everything): the output is back, or recovered from a stuck flip.
        case redraw
        /// The phase changed: status and metrics should be told.
        case changed
    }

    /// A flip that does not complete within this is abandoned and the mode set again.
    public static let flipTimeout = Interval.milliseconds(250)
    /// This many stuck flips in a row make the output inactive.
    public static let maxTimeouts = 3
    /// Frames waited for longer than this on an active output mean a stuck screen (the
    /// watchdog is withheld).
    public static let stuckAfter = Interval.milliseconds(1000)

    public let name: String
    public private(set) var phase = Phase.active
    /// When the pending flip was submitted.
    public private(set) var flipSince: Instant?
    /// Since when a frame has been waited for, across abandoned flips; nil once one is shown.
    public private(set) var waitingSince: Instant?
    /// Stuck flips in a row.
    public private(set) var timeouts = 0
    /// The number the pending flip was submitted with: an event with another number is
    /// the late event of an abandoned flip.
    public private(set) var flipSequence: UInt64 = 0
    /// Why the last retry failed, while inactive.
    public private(set) var retryError: String?

    public init(name: String, handedOver: Bool = false) {
        self.name = name
        if handedOver { phase = .handedOver }
    }

    public var isActive: Bool { phase == .active }
    public var flipPending: Bool { flipSince != nil }

    /// The reason, when inactive.
    public var reason: Reason? {
        if case .inactive(let r) = phase { return r }
        return nil
    }

    /// A frame was submitted (SetCrtc or PageFlip) at `now`, tagged `sequence`.
    public mutating func submitted(_ sequence: UInt64, at now: Instant) -> [Action] {
        guard phase == .active else {
            Log.bug("output \(name): frame submitted while \(phase.name)")
            return []
        }
        if flipSince != nil { Log.bug("output \(name): frame submitted with one pending") }
        flipSince = now
        flipSequence = sequence
        if waitingSince == nil { waitingSince = now }
        return [.armFlipTimer(now + Self.flipTimeout)]
    }

    /// The flip tagged `sequence` completed (its event was read, or SetCrtc returned) at `time`.
    public mutating func completed(_ sequence: UInt64, at time: Instant) -> [Action] {
        guard flipSince != nil, sequence == flipSequence else {
            Log.info("output \(name): the event of an abandoned page flip (\(sequence)) came late")
            return []
        }
        flipSince = nil
        waitingSince = nil
        timeouts = 0
        return [.disarmFlipTimer, .frameShown(time)]
    }

    /// A mode-setting call or the event reading failed.
    public mutating func failed(_ failure: Failure, _ why: String) -> [Action] {
        let reason: Reason
        switch failure {
        case .notMaster: reason = .masterLost(why)
        case .flip: reason = .flipFailed(why)
        case .events: reason = .eventsFailed(why)
        }
        switch phase {
        case .active:
            break
        case .handedOver:
            // Nothing is presented while handed over: taking master back (refused) or
            // the event reading can fail.
            guard failure != .flip else {
                Log.bug("output \(name): a flip failed while handed over")
                return []
            }
        case .inactive(let old):
            // Already lost: a second failure (the retry's) keeps the first reason.
            retryError = why
            if failure == .events, old.code != reason.code { return [.stopEvents] }
            return []
        }
        var out: [Action] = []
        if flipSince != nil {
            // A flip that failed to submit is not pending; one pending stays in the card.
            out.append(.disarmFlipTimer)
        }
        flipSince = nil
        waitingSince = nil
        if failure == .events { out.append(.stopEvents) }
        phase = .inactive(reason)
        retryError = nil
        out.append(.changed)
        return out
    }

    /// The flip timer fired at `now`.
    public mutating func timerFired(at now: Instant) -> [Action] {
        guard let since = flipSince, phase == .active else { return [] }  // completed meanwhile
        guard now - since >= Self.flipTimeout else { return [.armFlipTimer(since + Self.flipTimeout)] }
        timeouts += 1
        flipSince = nil
        Log.warning("output \(name): page flip submitted \((now - since).milliseconds) ms ago never completed (\(timeouts) in a row)")
        if timeouts >= Self.maxTimeouts {
            phase = .inactive(.flipStuck(timeouts))
            waitingSince = nil
            return [.abandonFlip, .changed]
        }
        return [.abandonFlip, .redraw]
    }

    /// DRM master was dropped on purpose.
    public mutating func released() -> [Action] {
        switch phase {
        case .active:
            phase = .handedOver
            waitingSince = nil
            return [.changed]
        case .handedOver, .inactive:
            return []
        }
    }

    /// DRM master was taken back on purpose (`acquire` succeeded).
    public mutating func acquired() -> [Action] {
        switch phase {
        case .active:
            return []
        case .handedOver, .inactive:
            phase = .active
            timeouts = 0
            retryError = nil
            return [.changed, .redraw]
        }
    }

    /// Something that may have given the display back happened.
    public mutating func retry(_ trigger: Trigger) -> [Action] {
        switch phase {
        case .inactive(let r):
            Log.info("output \(name): retrying (\(trigger)) after: \(r)")
            return [.reacquire]
        case .active, .handedOver:
            return []
        }
    }

    /// The outcome of `reacquire`: nil is success.
    public mutating func reacquired(error: String?) -> [Action] {
        guard case .inactive(let r) = phase else {
            Log.bug("output \(name): reacquired while \(phase.name)")
            return []
        }
        if let error {
            retryError = error
            Log.info("output \(name): still inactive (\(r)): \(error)")
            return [.changed]
        }
        phase = .active
        timeouts = 0
        retryError = nil
        Log.info("output \(name): active again")
        return [.changed, .redraw]
    }

    /// Why this output's screen is stuck at `now` (frames wanted and none shown), or nil
    /// while frames complete, nothing needs drawing, or the output is lost for a reason
    /// the daemon waits out (another process holds master).
    public func stuck(at now: Instant) -> String? {
        switch phase {
        case .inactive(.flipStuck(let n)):
            return "output \(name): \(n) page flips in a row never completed"
        case .inactive, .handedOver:
            return nil
        case .active:
            guard let t = waitingSince, now - t > Self.stuckAfter else { return nil }
            return "output \(name): a frame waited for since \((now - t).milliseconds) ms is not shown (the page flip did not complete)"
        }
    }
}

/// `[display] mode = WxH[@Hz]`: the mode to pick on every output that has it (else the
/// preferred one).
public struct DisplayMode: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// Nil: the highest refresh rate the output offers at that size.
    public var refresh: Int?

    public init(width: Int, height: Int, refresh: Int? = nil) {
        self.width = width
        self.height = height
        self.refresh = refresh
    }

    /// "1920x1080" or "1920x1080@60"; nil if it is neither.
    public init?(parsing text: String) {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let size = parts[0].split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2, let w = Int(size[0]), let h = Int(size[1]), w > 0, h > 0, w <= 16384, h <= 16384 else { return nil }
        width = w
        height = h
        if parts.count == 2 {
            guard let r = Int(parts[1]), r > 0, r <= 1000 else { return nil }
            refresh = r
        }
    }

    public var description: String { "\(width)x\(height)" + (refresh.map { "@\($0)" } ?? "") }

    /// Of `modes` (width, height, refresh), the index of the one this asks for: the size
    /// and refresh given, or the highest refresh at that size; nil if none matches.
    public func pick(_ modes: [(width: Int, height: Int, refresh: Int)]) -> Int? {
        var best: Int?
        for (i, m) in modes.enumerated() where m.width == width && m.height == height {
            if let r = refresh {
                if m.refresh == r { return i }
            } else if best.map({ modes[$0].refresh < m.refresh }) ?? true {
                best = i
            }
        }
        return best
    }
}
