/// The screen's power and the idle lock: while locked and untouched for `blankAfter`, the
/// screen is switched off, and a touch or a key switches it on again (and is not taken as
/// input); while unlocked and handed over, the device locks again after `idleLock` with no
/// touch or key. Both count from the last activity, on any device, whether the screen
/// takes it or not.
///
///     lit --untouched for blankAfter, locked and shown--> blanked --touch or key--> lit
///     handed over --untouched for idleLock--> lock
///
/// One wake-up per period at most: each timer is armed from the last activity, never
/// polled. A value machine; time comes in with every event.
public struct Power: Sendable {
    public enum Action: Hashable, Sendable {
        /// Switch the screen off.
        case blank
        /// Switch it on again.
        case wake
        /// Lock the device: handed over and untouched for `idleLock`.
        case lock
        case armTimer(Instant)
    }

    /// While unlocked and handed over, lock again after this long with no touch or key.
    public var idleLock: Interval?
    /// While locked and untouched this long, the screen is switched off (nil: never).
    public var blankAfter: Interval?
    /// The screen is off: nothing wakes the loop but the session's own deadline.
    public private(set) var blanked = false
    /// The last touch or key.
    private var lastActivity = Instant(microseconds: 0)

    public init(idleLock: Interval? = nil, blankAfter: Interval? = nil) {
        self.idleLock = idleLock
        self.blankAfter = blankAfter
    }

    /// The screen is on.
    public var lit: Bool { !blanked }

    /// A touch or a key came at `now`.
    public mutating func activity(at now: Instant) {
        lastActivity = max(lastActivity, now)
    }

    /// The lock screen is shown, locked, at `now` (the first frame, or a lock): the blank
    /// timer counts from here.
    public mutating func shownLocked(at now: Instant) -> [Action] {
        activity(at: now)
        return blankAfter.map { [.armTimer(now + $0)] } ?? []
    }

    /// The display went to the kiosk app: the idle time counts from here.
    public mutating func handedOver(at now: Instant) -> [Action] {
        activity(at: now)
        return idleLock.map { [.armTimer(lastActivity + $0)] } ?? []
    }

    /// The timer fired while the lock screen is `shownLocked` (held, locked, no
    /// enrollment) or not: whether the screen goes off now, or when to look again.
    public mutating func blankTimer(at now: Instant, shownLocked: Bool) -> [Action] {
        guard let after = blankAfter, shownLocked, !blanked else { return [] }
        if now >= lastActivity + after {
            Log.info("lock screen: nothing touched for \(after.milliseconds / 1000) s; blanking")
            blanked = true
            return [.blank]
        }
        return [.armTimer(lastActivity + after)]
    }

    /// The timer fired while `handedOver` (unlocked, the display the kiosk's) or not:
    /// whether the device locks now, or when to look again.
    public func idleTimer(at now: Instant, handedOver: Bool) -> [Action] {
        guard let idle = idleLock, handedOver else { return [] }
        if now >= lastActivity + idle {
            Log.info("lock screen: nothing touched for \(idle.milliseconds / 1000) s; locking")
            return [.lock]
        }
        return [.armTimer(lastActivity + idle)]
    }

    /// A touch or a key while off: the screen comes back on, and blanks again after
    /// `blankAfter` untouched. Logged as a bug (nothing done) while on.
    public mutating func wake(at now: Instant) -> [Action] {
        guard blanked else {
            Log.bug("power: woken while on")
            return []
        }
        blanked = false
        Log.info("lock screen: woken")
        return [.wake] + (blankAfter.map { [.armTimer(now + $0)] } ?? [])
    }
}
