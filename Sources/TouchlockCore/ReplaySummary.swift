/// What `touchlockctl replay` reports about a recording, computed from the frames of the
/// same assembler the daemon uses: frames (SYN_REPORTs), sessions (times the panel went
/// from no contact to at least one), the most contacts at once, and every touch with the
/// SYN_REPORT times that began and ended it, where it started and last was, and the
/// number of frames it was down in. Positions are in device units, before calibration.
public struct ReplaySummary: Sendable {
    public struct TouchRecord: Hashable, Sendable {
        public var id: Int
        public var slot: Int?
        public var began: Instant
        public var ended: Instant?
        public var start: DevicePoint?
        public var end: DevicePoint?
        public var samples: Int
    }

    public var mode: TouchMode
    public private(set) var frames = 0
    public private(set) var maxContacts = 0
    public private(set) var sessions = 0
    public private(set) var touches: [TouchRecord] = []
    private var index: [Int: Int] = [:]     // touch id -> position in `touches`
    private var down: [Int] = []            // ids down after the last frame
    private var assembler: TouchFrameAssembler

    public init(mode: TouchMode) {
        self.mode = mode
        assembler = TouchFrameAssembler(mode: mode)
    }

    /// Replays `events` through a fresh assembler for `mode`.
    public init(mode: TouchMode, events: [InputEvent]) {
        self.init(mode: mode)
        for e in events { feed(e) }
    }

    public mutating func feed(_ e: InputEvent) {
        let frame = assembler.feed(e)
        guard e.type == EventCode.EV_SYN && e.code == EventCode.SYN_REPORT else {
            if frame != nil { Log.bug("the assembler emitted a frame outside a SYN_REPORT") }
            return
        }
        frames += 1
        var contacts: [Int] = []
        if let frame {
            var ended: Set<Int> = []
            for t in frame.touches {
                switch t.phase {
                case .began:
                    index[t.id] = touches.count
                    touches.append(TouchRecord(id: t.id, slot: t.slot, began: frame.time, ended: nil,
                                               start: t.position, end: t.position, samples: 0))
                    contacts.append(t.id)
                case .moved, .stationary:
                    if let i = index[t.id] { touches[i].end = t.position } else { Log.bug("touch \(t.id) moved before it began") }
                    contacts.append(t.id)
                case .ended:
                    if let i = index[t.id] { touches[i].ended = frame.time } else { Log.bug("touch \(t.id) ended before it began") }
                    ended.insert(t.id)
                }
            }
            // Touches the frame does not list stay as they were (an assembler lists all).
            for id in down where !contacts.contains(id) && !ended.contains(id) { contacts.append(id) }
            down = contacts.filter { !ended.contains($0) }
        } else {
            contacts = down
        }
        for id in contacts { if let i = index[id] { touches[i].samples += 1 } }
        if !contacts.isEmpty && lastContacts == 0 { sessions += 1 }
        maxContacts = max(maxContacts, contacts.count)
        lastContacts = down.count
    }
    private var lastContacts = 0

    /// One JSON object: the counts on the first line, then one touch per line.
    public var json: String {
        func pt(_ p: DevicePoint?) -> String { p.map { "[\($0.x), \($0.y)]" } ?? "null" }
        let list = touches.map { t in
            "{\"id\": \(t.id), \"slot\": \(t.slot.map(String.init) ?? "null"), "
                + "\"began_us\": \(t.began.microseconds), \"ended_us\": \(t.ended.map { String($0.microseconds) } ?? "null"), "
                + "\"start\": \(pt(t.start)), \"end\": \(pt(t.end)), \"samples\": \(t.samples)}"
        }
        let head = "{\"protocol\": \"\(mode.protocolName)\", \"frames\": \(frames), \"max_contacts\": \(maxContacts), "
            + "\"sessions\": \(sessions), \"touches\": ["
        if list.isEmpty { return head + "]}" }
        return head + "\n  " + list.joined(separator: ",\n  ") + "\n]}"
    }
}

extension ReplaySummary {
    public struct Failure: Error, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ d: String) { description = d }
    }

    /// Reads an evemu recording (with its own description, or with `description` from a
    /// separate `.desc` file, which wins) and replays it for the touch mode that the
    /// description and the matching quirks decide, as the daemon would read the panel.
    public static func replay(recording: String, description: String? = nil,
                              quirks: [InputQuirk] = []) throws(Failure) -> ReplaySummary {
        let events: EvemuRecording
        do { events = try EvemuRecording(parsing: recording) } catch { throw Failure("recording: \(error)") }
        var rec = events
        if let description {
            do { rec = EvemuRecording(description: try EvemuRecording(parsing: description), events: events) } catch {
                throw Failure("description: \(error)")
            }
        }
        guard let device = rec.description else {
            throw Failure("the recording holds no device description; give one with --desc")
        }
        let mode: TouchMode
        switch device.touchMode(quirk: InputQuirk.merged(quirks, for: device)) {
        case .success(let m): mode = m
        case .failure(let why): throw Failure("'\(device.name)' is not read as a touchscreen: \(why)")
        }
        return ReplaySummary(mode: mode, events: rec.events)
    }
}
