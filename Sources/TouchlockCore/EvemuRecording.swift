/// A device description and its events in evemu's text format (evemu-record,
/// evemu-describe): `N:` name, `I:` ids, `P:` properties, `B:` code masks, `A:` axes,
/// `E:` events. Comments (`#`, and tails after `#` on data lines) are skipped.
public struct EvemuRecording: Sendable {
    public var name: String?
    public var id = DeviceID()
    public var properties: Set<Int> = []
    /// Supported codes per event type, from the `B:` masks.
    public var codes: [UInt16: Set<UInt16>] = [:]
    public var axes: [UInt16: AxisRange] = [:]
    public var events: [InputEvent] = []

    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
        public init(line: Int, message: String) { self.line = line; self.message = message }
    }

    public static let INPUT_PROP_DIRECT = 1
    private static let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r"), hash = UInt8(ascii: "#")
    private static let space = UInt8(ascii: " "), tab = UInt8(ascii: "\t"), colon = UInt8(ascii: ":")

    public init() {}

    /// Lines end at LF (a CR before it is dropped); fields are split at spaces and tabs.
    /// The text is read as bytes: a recording is mostly `E:` lines, and splitting them
    /// into Characters cost about 40,000 instructions each (0.4 s for a 10,000-frame drag).
    public init(parsing text: String) throws(ParseError) {
        var maskBytes: [UInt16: Int] = [:]  // running byte count per type, as evemu keeps it
        var propertyBytes = 0
        var lineNumber = 0
        let bytes = Array(text.utf8)
        var next = 0
        var fields: [Range<Int>] = []
        while next <= bytes.count {
            lineNumber += 1
            var start = next
            var end = bytes[start...].firstIndex(of: Self.lf) ?? bytes.count
            next = end + 1
            if end > start && bytes[end - 1] == Self.cr { end -= 1 }
            if start == end || bytes[start] == Self.hash { continue }
            func string(_ r: Range<Int>) -> String { String(decoding: bytes[r], as: UTF8.self) }
            if end - start >= 2 && bytes[start] == UInt8(ascii: "N") && bytes[start + 1] == Self.colon {
                start += 2
                while start < end && bytes[start] == Self.space { start += 1 }
                name = string(start..<end)
                continue
            }
            if let h = bytes[start..<end].firstIndex(of: Self.hash) { end = h }
            fields.removeAll(keepingCapacity: true)
            var i = start
            while i < end {
                while i < end && (bytes[i] == Self.space || bytes[i] == Self.tab) { i += 1 }
                let f = i
                while i < end && bytes[i] != Self.space && bytes[i] != Self.tab { i += 1 }
                if i > f { fields.append(f..<i) }
            }
            guard let tagRange = fields.first else { continue }
            let args = fields.dropFirst().map(string)
            func fail(_ m: String) -> ParseError { ParseError(line: lineNumber, message: m) }
            // The line as text, for messages only: most lines never need it.
            func line() -> String { string(start..<end) }
            let tag = string(tagRange)
            switch tag {
            case "E:":
                guard args.count == 4 else { throw fail("an event needs a time, a type, a code and a value") }
                // The time's two halves, on either side of its one dot.
                let time = fields[1]
                let dot = bytes[time].firstIndex(of: UInt8(ascii: ".")) ?? time.upperBound
                guard dot < time.upperBound, !bytes[(dot + 1)..<time.upperBound].contains(UInt8(ascii: ".")),
                      let sec = Int64(string(time.lowerBound..<dot)), let usec = Int64(string((dot + 1)..<time.upperBound)),
                      let type = UInt16(args[1], radix: 16), let code = UInt16(args[2], radix: 16),
                      let value = Int32(args[3]) else { throw fail("malformed event '\(line())'") }
                // evemu writes seconds and six digits of microseconds, as struct timeval.
                let (us, overflow) = sec.multipliedReportingOverflow(by: 1_000_000)
                guard sec >= 0, (0..<1_000_000).contains(usec), !overflow, us <= Int64.max - usec else {
                    throw fail("event time '\(args[0])' out of range")
                }
                events.append(InputEvent(type: type, code: code, value: value, time: Instant(microseconds: us + usec)))
            case "A:":
                guard args.count >= 5, let code = UInt16(args[0], radix: 16),
                      let mn = Int32(args[1]), let mx = Int32(args[2]) else { throw fail("malformed axis '\(line())'") }
                let res = args.count >= 6 ? Int32(args[5]) ?? 0 : 0
                axes[code] = AxisRange(minimum: mn, maximum: mx, resolution: res)
                codes[EventCode.EV_ABS, default: []].insert(code)
            case "P:":
                let mask = args.compactMap { UInt8($0, radix: 16) }
                guard mask.count == args.count else { throw fail("malformed property mask") }
                for (j, b) in mask.enumerated() {
                    for i in 0..<8 where b & (1 << i) != 0 { properties.insert(8 * (propertyBytes + j) + i) }
                }
                propertyBytes += mask.count
            case "B:":
                guard let type = args.first.flatMap({ UInt16($0, radix: 16) }) else { throw fail("malformed mask") }
                let mask = args.dropFirst().compactMap { UInt8($0, radix: 16) }
                let first = maskBytes[type, default: 0]
                for (j, b) in mask.enumerated() {
                    for i in 0..<8 where b & (1 << i) != 0 {
                        guard let code = UInt16(exactly: 8 * (first + j) + i) else { throw fail("mask longer than any event code") }
                        codes[type, default: []].insert(code)
                    }
                }
                maskBytes[type] = first + mask.count
            case "I:":
                let v = args.compactMap { UInt16($0, radix: 16) }
                guard v.count == 4, args.count == 4 else { throw fail("malformed id line '\(line())'") }
                id = DeviceID(bus: v[0], vendor: v[1], product: v[2], version: v[3])
            case "L:", "S:":
                continue
            default:
                throw fail("unknown line '\(tag)'")
            }
        }
    }

    /// The device as the daemon sees a live one; nil for an events-only file.
    public var description: DeviceDescription? {
        guard name != nil || !axes.isEmpty else { return nil }
        return DeviceDescription(name: name ?? "", id: id, properties: properties, codes: codes, axes: axes)
    }

    /// The events of `events` played on the device described by `description`
    /// (a `.desc` file and a `.events` file, as evemu-device and evemu-play take them).
    public init(description: EvemuRecording, events: EvemuRecording) {
        self = description
        self.events = events.events
    }

    public var isDirect: Bool { properties.contains(Self.INPUT_PROP_DIRECT) }
    /// Number of multitouch slots (ABS_MT_SLOT's range), 1 for a single-touch device.
    public var slotCount: Int {
        axes[EventCode.ABS_MT_SLOT].map { min(DeviceDescription.maxSlots, max(1, Int($0.maximum) + 1)) } ?? 1
    }
    public var xRange: AxisRange? { axes[EventCode.ABS_MT_POSITION_X] ?? axes[EventCode.ABS_X] }
    public var yRange: AxisRange? { axes[EventCode.ABS_MT_POSITION_Y] ?? axes[EventCode.ABS_Y] }
}
