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

    public init() {}

    public init(parsing text: String) throws(ParseError) {
        var maskBytes: [UInt16: Int] = [:]  // running byte count per type, as evemu keeps it
        var propertyBytes = 0
        var lineNumber = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(raw)
            if line.hasSuffix("\r") { line = line.dropLast() }
            if line.isEmpty || line.first == "#" { continue }
            if line.hasPrefix("N:") {
                name = String(line.dropFirst(2).drop(while: { $0 == " " }))
                continue
            }
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let tag = fields.first else { continue }
            let args = Array(fields.dropFirst())
            func fail(_ m: String) -> ParseError { ParseError(line: lineNumber, message: m) }
            switch tag {
            case "E:":
                guard args.count == 4 else { throw fail("an event needs a time, a type, a code and a value") }
                let t = args[0].split(separator: ".", omittingEmptySubsequences: false)
                guard t.count == 2, let sec = Int64(t[0]), let usec = Int64(t[1]),
                      let type = UInt16(args[1], radix: 16), let code = UInt16(args[2], radix: 16),
                      let value = Int32(args[3]) else { throw fail("malformed event '\(line)'") }
                // evemu writes seconds and six digits of microseconds, as struct timeval.
                let (us, overflow) = sec.multipliedReportingOverflow(by: 1_000_000)
                guard sec >= 0, (0..<1_000_000).contains(usec), !overflow, us <= Int64.max - usec else {
                    throw fail("event time '\(args[0])' out of range")
                }
                events.append(InputEvent(type: type, code: code, value: value, time: Instant(microseconds: us + usec)))
            case "A:":
                guard args.count >= 5, let code = UInt16(args[0], radix: 16),
                      let mn = Int32(args[1]), let mx = Int32(args[2]) else { throw fail("malformed axis '\(line)'") }
                let res = args.count >= 6 ? Int32(args[5]) ?? 0 : 0
                axes[code] = AxisRange(minimum: mn, maximum: mx, resolution: res)
                codes[EventCode.EV_ABS, default: []].insert(code)
            case "P:":
                let bytes = args.compactMap { UInt8($0, radix: 16) }
                guard bytes.count == args.count else { throw fail("malformed property mask") }
                for (j, b) in bytes.enumerated() {
                    for i in 0..<8 where b & (1 << i) != 0 { properties.insert(8 * (propertyBytes + j) + i) }
                }
                propertyBytes += bytes.count
            case "B:":
                guard let type = args.first.flatMap({ UInt16($0, radix: 16) }) else { throw fail("malformed mask") }
                let bytes = args.dropFirst().compactMap { UInt8($0, radix: 16) }
                let start = maskBytes[type, default: 0]
                for (j, b) in bytes.enumerated() {
                    for i in 0..<8 where b & (1 << i) != 0 {
                        guard let code = UInt16(exactly: 8 * (start + j) + i) else { throw fail("mask longer than any event code") }
                        codes[type, default: []].insert(code)
                    }
                }
                maskBytes[type] = start + bytes.count
            case "I:":
                let v = args.compactMap { UInt16($0, radix: 16) }
                guard v.count == 4, args.count == 4 else { throw fail("malformed id line '\(line)'") }
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
