/// A code of digits: an attempt or a secret. Its description never shows the digits.
public struct Code: Hashable, Sendable, CustomStringConvertible {
    public var digits: [UInt8]
    public init(digits: [UInt8]) { self.digits = digits }

    /// Parses a code typed as text: digits only.
    public init?(parsing text: String) {
        var d: [UInt8] = []
        for ch in text.unicodeScalars {
            guard ch.value >= 48, ch.value <= 57 else { return nil }
            d.append(UInt8(ch.value - 48))
        }
        if d.isEmpty { return nil }
        digits = d
    }

    public var description: String { "code of \(digits.count) digits" }
}

/// The cursor's blink: a 1.5 s period through opacity keyframes 1, 1, 0, 0 at
/// 0, 0.4, 0.45 and 1 of the period, linear in between. The event loop wakes only where
/// the drawn opacity changes: halfway through the 75 ms fade (0.5), at its end (0) and at
/// the end of the period (1): three wake-ups in 1.5 s, 2 a second while the pad has focus.
public enum CursorBlink {
    public static let period = Interval.milliseconds(1500)
    /// Keyframes as (fraction of the period, opacity).
    public static let keyframes: [(time: Double, opacity: Double)] = [(0, 1), (0.4, 1), (0.45, 0), (1, 0)]
    /// Steps the 75 ms fade is drawn in.
    public static let fadeSteps = 2

    /// The opacity `elapsed` after the blink started.
    public static func opacity(after elapsed: Interval) -> Double {
        let f = fraction(elapsed)
        for i in 1..<keyframes.count where f < keyframes[i].time {
            let a = keyframes[i - 1], b = keyframes[i]
            return a.opacity + (b.opacity - a.opacity) * (f - a.time) / (b.time - a.time)
        }
        return keyframes.last!.opacity
    }

    /// The first moment after `elapsed` at which the drawn opacity changes, as an
    /// interval from the start of the blink.
    public static func nextChange(after elapsed: Interval) -> Interval {
        let p = period.microseconds
        let e = max(0, elapsed.microseconds)
        let cycle = e / p * p
        let fadeStart = Int64(Double(p) * keyframes[1].time)
        let fadeEnd = Int64(Double(p) * keyframes[2].time)
        var marks: [Int64] = []
        for k in 1...fadeSteps { marks.append(fadeStart + (fadeEnd - fadeStart) * Int64(k) / Int64(fadeSteps)) }
        marks.append(p)
        let inCycle = e - cycle
        let next = marks.first { $0 > inCycle } ?? p
        return Interval(microseconds: cycle + next)
    }

    static func fraction(_ elapsed: Interval) -> Double {
        let p = period.microseconds
        let m = ((elapsed.microseconds % p) + p) % p
        return Double(m) / Double(p)
    }
}

/// Where the code pad's parts are on the screen: the digit boxes (laid out evenly with a
/// gap of half a box) and the 12 keys of the keypad (digits, delete, OK).
public struct CodePadLayout: Hashable, Sendable {
    public var boxes: [PixelRect]
    /// The keypad's 12 slots in reading order: three rows of three digit slots, then
    /// delete, a digit slot, OK.
    public var keys: [PixelRect]
    /// Tapping here focuses the boxes.
    public var boxArea: PixelRect
    /// The band the prompt is drawn in.
    public var promptBox: PixelRect

    public init(boxes: [PixelRect], keys: [PixelRect], boxArea: PixelRect, promptBox: PixelRect) {
        self.boxes = boxes; self.keys = keys; self.boxArea = boxArea; self.promptBox = promptBox
    }

    /// The code pad of a screen offering only the code, on `screen` (ScreenLayout has
    /// the rules).
    public static func layout(length: Int, on screen: Size, density: Density = Density(dpi: Density.defaultDpi)) -> CodePadLayout {
        ScreenLayout(size: screen, density: density, methods: .code, codeLength: length).pad!
    }

    public func key(at p: Point) -> Int? {
        keys.firstIndex { $0.contains(p) }
    }
}

extension PixelRect {
    public func contains(_ p: Point) -> Bool {
        p.x >= Double(x) && p.x < Double(maxX) && p.y >= Double(y) && p.y < Double(maxY)
    }
}

/// A deterministic generator for the keypad's shuffle (SplitMix64). Core has no source
/// of randomness: the daemon seeds it from the kernel's, tests with a constant.
public struct ShuffleSource: Hashable, Sendable {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The digits 0-9 in a random order (Fisher-Yates).
    public mutating func digitOrder() -> [Int] {
        var a = Array(0...9)
        for i in stride(from: 9, to: 0, by: -1) {
            let j = Int(next() % UInt64(i + 1))
            a.swapAt(i, j)
        }
        return a
    }
}

/// The code pad: N digit boxes fed by an on-screen keypad or a
/// hardware keypad; at N digits the code is submitted.
///
/// States (docs/state-machines.md has the diagram; the code and the diagram change
/// together):
///
///     entering --Nth digit (or OK on N)--> submitted --accept--> accepted --reset--> entering
///        ^                        |
///        |                        +--reject--> rejected --hold over--> entering
///        +-- digit / delete / OK with fewer than N (stays in entering)
///
/// Focus is apart from the states: tapping the boxes or a key focuses the pad, a tap
/// elsewhere blurs it. Only a focused pad in `entering` shows the blinking cursor, so
/// only then does it ask for timer wake-ups.
public struct CodePad: Sendable {
    public enum State: Hashable, Sendable, CustomStringConvertible {
        case entering
        case submitted
        case accepted
        case rejected(until: Instant)

        public var description: String {
            switch self {
            case .entering: "entering"
            case .submitted: "submitted"
            case .accepted: "accepted"
            case .rejected(let t): "rejected(until \(t))"
            }
        }
    }

    public enum Key: Hashable, Sendable {
        case digit(Int), delete, ok
    }

    public enum Action: Hashable, Sendable {
        case redraw
        /// N digits are in: the session verifies them.
        case submit(Code)
        /// How many digits are in, of how many; never which.
        case progress(entered: Int, of: Int)
        /// OK with fewer than N digits: not an attempt, not a failure.
        case incomplete(entered: Int, of: Int)
        case armTimer(Instant)
    }

    /// A key held down by a finger; `inside` is false while the finger is off the key
    /// (lifting it there presses nothing).
    public struct Press: Hashable, Sendable {
        public var touch: Int
        public var slot: Int
        public var inside: Bool
    }

    public let length: Int
    public let layout: CodePadLayout
    /// Dots instead of digits; the last digit shows for `reveal` first (zero: never).
    public var secure: Bool
    public var reveal: Interval
    /// Submit only on OK (a return key): the Nth digit waits for it.
    public var submitOnOK: Bool
    public private(set) var state: State = .entering
    public private(set) var focused = true
    /// When the cursor's blink started: it restarts at each change, so the cursor is
    /// always seen at once where it moved.
    public private(set) var blinkStart: Instant
    public private(set) var revealUntil: Instant?
    public private(set) var press: Press?
    /// The digit on each of the 10 digit slots of the keypad.
    public private(set) var keyOrder: [Int] = CodePad.plainOrder
    private var digits: [UInt8] = []
    private var shuffle: ShuffleSource?
    private var drawingTouch: Int?
    private var blockedTouch: Int?

    /// 1 2 3 / 4 5 6 / 7 8 9 / 0, as phone keypads have them.
    public static let plainOrder = [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]

    /// `length` below 1 means 4 (seed 003). `shuffleSeed` shuffles the keypad's digits
    /// once per prompt.
    public init(length: Int, layout: CodePadLayout, secure: Bool = false, reveal: Interval = .milliseconds(0),
                shuffleSeed: UInt64? = nil, submitOnOK: Bool = false, at now: Instant = Instant(microseconds: 0)) {
        self.submitOnOK = submitOnOK
        self.length = length < 1 ? 4 : length
        precondition(layout.boxes.count == self.length, "the layout has \(layout.boxes.count) boxes for \(self.length) digits")
        self.layout = layout
        self.secure = secure
        self.reveal = reveal
        blinkStart = now
        if let shuffleSeed {
            var s = ShuffleSource(seed: shuffleSeed)
            keyOrder = s.digitOrder()
            shuffle = s
        }
    }

    /// The same pad on another output's layout: digits, focus, press and key order kept.
    public func relaid(on other: CodePadLayout) -> CodePad {
        var c = CodePad(length: length, layout: other, secure: secure, reveal: reveal, submitOnOK: submitOnOK, at: blinkStart)
        c.state = state
        c.focused = focused
        c.revealUntil = revealUntil
        c.press = press
        c.keyOrder = keyOrder
        c.digits = digits
        c.shuffle = shuffle
        c.drawingTouch = drawingTouch
        c.blockedTouch = blockedTouch
        return c
    }

    public var entered: Int { digits.count }
    /// The digits shown in the boxes: nil for a box that shows a dot or nothing.
    public func shownDigit(_ box: Int, at now: Instant) -> Int? {
        guard box < digits.count else { return nil }
        if !secure { return Int(digits[box]) }
        // Once submitted (checked, held as wrong) no digit shows in clear.
        guard state == .entering else { return nil }
        if box == digits.count - 1, let until = revealUntil, now < until { return Int(digits[box]) }
        return nil
    }

    /// The box the cursor is in: the next empty one, or the last when all are full.
    public var cursorBox: Int { min(digits.count, length - 1) }

    /// The cursor's opacity at `now`, or nil when no cursor shows. A full pad shows it
    /// beside the last digit until the check is over, so the moment between
    /// the last digit and the verdict shows where the cursor went.
    public func cursorOpacity(at now: Instant) -> Double? {
        guard focused, state == .entering || state == .submitted else { return nil }
        return CursorBlink.opacity(after: now - blinkStart)
    }

    /// The key in keypad slot `slot`.
    public func key(inSlot slot: Int) -> Key {
        switch slot {
        case 0..<9: .digit(keyOrder[slot])
        case 9: .delete
        case 10: .digit(keyOrder[9])
        default: .ok
        }
    }

    // MARK: events

    /// A key from the on-screen keypad or a hardware keypad.
    public mutating func key(_ k: Key, at now: Instant) -> [Action] {
        switch state {
        case .entering: break
        case .submitted, .accepted, .rejected:
            return []  // input is blocked until the verdict's hold is over
        }
        let wasFocused = focused
        focused = true
        switch k {
        case .digit(let d):
            guard (0...9).contains(d) else {
                Log.bug("code pad: digit \(d) out of range")
                return []
            }
            if digits.count >= length { return [] }  // cannot happen in entering; at most N
            digits.append(UInt8(d))
            blinkStart = now
            revealUntil = secure && reveal.microseconds > 0 ? now + reveal : nil
            var out: [Action] = [.redraw, .progress(entered: digits.count, of: length)]
            if digits.count == length && !submitOnOK {
                state = .submitted
                Log.debug("code pad: entering -> Nth digit -> submitted")
                out.append(.submit(Code(digits: digits)))
            } else {
                out += wake(after: now)
            }
            return out
        case .delete:
            if digits.isEmpty { return wasFocused ? [] : [.redraw] + wake(after: now) }
            digits[digits.count - 1] = 0
            digits.removeLast()
            revealUntil = nil
            blinkStart = now
            return [.redraw, .progress(entered: digits.count, of: length)] + wake(after: now)
        case .ok:
            if submitOnOK && digits.count == length {
                state = .submitted
                revealUntil = nil
                Log.debug("code pad: entering -> OK on N digits -> submitted")
                return [.redraw, .submit(Code(digits: digits))]
            }
            let out: [Action] = [.incomplete(entered: digits.count, of: length)]
            return wasFocused ? out : [.redraw] + out + wake(after: now)
        }
    }

    /// Touches on the keypad and the boxes. The first finger presses a key: the key shows
    /// pressed while the finger is on it and acts when it lifts there.
    public mutating func handle(_ touches: [ScreenTouch], at now: Instant) -> [Action] {
        var out: [Action] = []
        for t in touches { out += handle(t, at: now) }
        return out
    }

    private mutating func handle(_ t: ScreenTouch, at now: Instant) -> [Action] {
        if t.id == blockedTouch {
            if t.phase == .ended { blockedTouch = nil }
            return []
        }
        switch state {
        case .entering: break
        case .submitted, .accepted, .rejected:
            if t.phase == .began { blockedTouch = t.id }
            if t.id == drawingTouch && t.phase == .ended {
                // The finger that was on the pad when input got blocked lifts.
                drawingTouch = nil
                if press != nil { press = nil; return [.redraw] }
            }
            return []
        }
        if let id = drawingTouch, id != t.id { return [] }  // only the first finger counts
        switch t.phase {
        case .began:
            if drawingTouch != nil {
                Log.bug("code pad: touch \(t.id) began twice")
                return []
            }
            drawingTouch = t.id
            if let slot = layout.key(at: t.point) {
                press = Press(touch: t.id, slot: slot, inside: true)
                return [.redraw]
            }
            if layout.boxArea.contains(t.point) {
                if focused { return [] }
                focused = true
                blinkStart = now
                return [.redraw] + wake(after: now)
            }
            if !focused { return [] }
            focused = false
            return [.redraw]
        case .moved, .stationary:
            guard var p = press, p.touch == t.id else { return [] }
            let inside = layout.keys[p.slot].contains(t.point)
            if inside == p.inside { return [] }
            p.inside = inside
            press = p
            return [.redraw]
        case .ended:
            drawingTouch = nil
            guard let p = press, p.touch == t.id else { return [] }
            press = nil
            let inside = layout.keys[p.slot].contains(t.point)
            if !inside { return [.redraw] }
            return [.redraw] + key(key(inSlot: p.slot), at: now)
        }
    }

    /// The session's verdict on the submitted code.
    public mutating func verdict(accepted: Bool, at now: Instant, errorHold: Interval) -> [Action] {
        guard state == .submitted else {
            Log.bug("code pad: verdict in state \(state)")
            return []
        }
        if accepted {
            state = .accepted
            return [.redraw]
        }
        let until = now + errorHold
        state = .rejected(until: until)
        return [.redraw, .armTimer(until)]
    }

    /// The event loop's timer reached `now`: the error hold, the reveal of the last digit
    /// and the cursor's blink. With `wakes` false (the pad is hidden, or waits out a
    /// lockout) it asks for no timer: the screen's own timers wake it.
    public mutating func timerFired(at now: Instant, wakes: Bool = true) -> [Action] {
        switch state {
        case .rejected(let until):
            if now < until { return wakes ? [.armTimer(until)] : [] }
            return newPrompt(at: now, wakes: wakes)
        case .entering:
            var out: [Action] = []
            if let r = revealUntil, now >= r {
                revealUntil = nil
                out.append(.redraw)
            }
            if focused { out.append(.redraw) }  // the cursor's opacity may have changed
            return wakes ? out + wake(after: now) : out
        case .submitted, .accepted:
            return []
        }
    }

    /// Back to an empty prompt (after a lock request, a switch of method). With `wakes`
    /// false (a pad left hidden) its cursor asks for no timer until it is shown.
    public mutating func reset(at now: Instant, wakes: Bool = true) -> [Action] {
        newPrompt(at: now, wakes: wakes)
    }

    /// Back to an empty prompt after an unlock: nothing of the code stays on screen,
    /// nothing blinks, nothing is announced (only a redraw).
    public mutating func clear(at now: Instant) -> [Action] {
        newPrompt(at: now, wakes: false, announces: false)
    }

    private mutating func newPrompt(at now: Instant, wakes: Bool = true, announces: Bool = true) -> [Action] {
        let changed = announces && (state != .entering || !digits.isEmpty)
        for i in digits.indices { digits[i] = 0 }
        digits.removeAll()
        state = .entering
        revealUntil = nil
        press = nil
        drawingTouch = nil
        focused = true
        blinkStart = now
        if var s = shuffle {
            keyOrder = s.digitOrder()
            shuffle = s
        }
        var out: [Action] = [.redraw]
        if changed { out.append(.progress(entered: 0, of: length)) }
        return wakes ? out + wake(after: now) : out
    }

    /// The next moment something on the pad changes by itself, if any.
    public func nextWake(after now: Instant) -> Instant? {
        guard state == .entering else { return nil }
        var next: Instant? = nil
        if focused { next = blinkStart + CursorBlink.nextChange(after: now - blinkStart) }
        if let r = revealUntil, r > now { next = next.map { min($0, r) } ?? r }
        return next
    }

    private func wake(after now: Instant) -> [Action] {
        nextWake(after: now).map { [.armTimer($0)] } ?? []
    }
}
