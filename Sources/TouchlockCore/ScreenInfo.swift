/// What the lock screen tells besides its prompt: the time (and the date), a message
/// (from the config or set over the socket) and a logo. Core reads no clock: the daemon
/// formats the local time (TouchlockSystem's `LocalTime`) and gives the text to the lock
/// screen once a minute (`LockScreen.setInfo`).
public enum ClockMode: String, Hashable, Sendable, CaseIterable {
    case off, time
    case dateTime = "date-time"
}

/// 12 or 24 hours: `auto` follows the locale's time format (LC_TIME).
public enum ClockHours: String, Hashable, Sendable, CaseIterable {
    case auto
    case twelve = "12"
    case twentyFour = "24"

    /// strftime(3) patterns of the time and of the date, for a clock of `twelve` hours or not.
    public static func patterns(twelve: Bool) -> (time: String, date: String) {
        (twelve ? "%-I:%M %p" : "%H:%M", "%a %-d %b")
    }

    /// Whether a locale's time format (nl_langinfo(T_FMT)) counts 12 hours: it has an
    /// hour of 12 (%I, %l), an AM/PM (%p, %P) or the 12-hour time (%r).
    public static func twelveHours(localeTimeFormat f: String) -> Bool {
        ["%I", "%l", "%p", "%P", "%r"].contains { f.contains($0) }
    }
}

/// A message for the lock screen: plain text of one paragraph, at most `limit` Unicode
/// characters, without control characters (it is drawn as it is: no markup, no escapes).
public enum ScreenMessage {
    public static let limit = 200

    public struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// `text` if it may be shown, else why not.
    public static func check(_ text: String) throws(Refusal) -> String {
        let n = text.unicodeScalars.count
        guard n <= limit else { throw Refusal(description: "a message is at most \(limit) characters, this one has \(n)") }
        if let c = text.unicodeScalars.first(where: isControl) {
            throw Refusal(description: "a message is plain text on one line: it has the control character U+\(hex(c.value))")
        }
        guard !text.allSatisfy(\.isWhitespace) else { throw Refusal(description: "a message has some text (to remove one: --clear)") }
        return text
    }

    /// C0, DEL, C1, the line and paragraph separators, and the bidirectional embeddings,
    /// overrides and isolates (which would turn the text around).
    static func isControl(_ c: Unicode.Scalar) -> Bool {
        switch c.value {
        case 0x00...0x1f, 0x7f...0x9f, 0x2028, 0x2029, 0x202a...0x202e, 0x2066...0x2069: true
        default: false
        }
    }

    static func hex(_ v: UInt32) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}

/// What the information area holds, for the layout: its parts, not their text.
public struct InfoParts: Hashable, Sendable {
    public var clock = ClockMode.off
    public var message = false
    public var logo = false
    public init(clock: ClockMode = .off, message: Bool = false, logo: Bool = false) {
        self.clock = clock; self.message = message; self.logo = logo
    }
    public var isEmpty: Bool { clock == .off && !message && !logo }
}

/// Where the information area's parts go, one under another and centred: the logo, the
/// time, the date, the message (two lines).
public struct InfoLayout: Hashable, Sendable {
    public var area: PixelRect
    public var logo: PixelRect?
    public var time: PixelRect?
    public var date: PixelRect?
    public var message: PixelRect?
    public var timeSize = 0.0
    public var dateSize = 0.0
    public var messageSize = 0.0
    /// The smallest text: 12 dp.
    public var minimumText = 0.0
    /// Parts left out: the screen has no room for them (said in the log at the start).
    public var leftOut: [String] = []

    // The parts' sizes at full scale, in dp (times the zoom of a large screen).
    public static let logoHeight = 72.0
    public static let timeText = 56.0
    public static let dateText = 18.0
    /// The smallest scale before a part is left out.
    public static let minimumScale = 0.4

    /// The widest time drawn with `twelve` hours or not, for the layout (digits are all
    /// one width).
    static func widestTime(_ twelve: Bool) -> String { twelve ? "10:00 PM" : "00:00" }
    static let widestDate = "Wed 30 Sep"

    struct Sizes {
        var logo = 0.0, time = 0.0, date = 0.0, message = 0.0
        var height = 0.0
    }

    /// `n` lines of text of `size`, in whole pixels.
    static func lines(_ n: Int, _ size: Double) -> Double { (Double(n) * TextMetrics.lineHeight(size)).rounded(.up) }

    /// The parts' sizes in px at scale `s` in a column `width` px wide; `unit` px per
    /// zoomed dp, `dp` px per dp, `gap` px between parts, `messageText` the message's
    /// size in dp.
    /// The sizes at which the widest time and the widest date fit a width, as measured.
    struct Widths {
        var measure: (any TextMeasure)?
        /// Per px of size, at the largest size: where to start looking.
        var time = 0.0, date = 0.0
        init() {}
        init(_ measure: any TextMeasure, size: Double) {
            self.measure = measure
            let size = max(size, 1)
            time = measure.width(widestTime(true), size: size) / size
            date = measure.width(widestDate, size: size) / size
        }

        /// The largest size up to `size` at which `text` (`perPx` wide per px) fits `width`.
        func size(_ text: String, perPx: Double, fitting width: Double, upTo size: Double) -> Double {
            let guess = min(size, width / max(perPx, 1e-9))
            return measure?.largestSize(text, fitting: width, upTo: guess) ?? guess
        }
    }

    static func sizes(_ parts: InfoParts, s: Double, width: Double, unit: Double, dp: Double, gap: Double,
                      messageText: Double, widths: Widths) -> Sizes {
        let floor = ScreenLayout.minimumText * dp
        var z = Sizes()
        var heights: [Double] = []
        if parts.logo { z.logo = (logoHeight * s * unit).rounded(); heights.append(z.logo) }
        if parts.clock != .off {
            // Never wider than the column (the 12-hour time is the wider).
            z.time = max(floor, widths.size(widestTime(true), perPx: widths.time, fitting: width, upTo: timeText * s * unit))
            heights.append(lines(1, z.time))
        }
        if parts.clock == .dateTime {
            z.date = max(floor, widths.size(widestDate, perPx: widths.date, fitting: width, upTo: dateText * s * unit))
            heights.append(lines(1, z.date))
        }
        if parts.message {
            z.message = max(floor, messageText * s * unit)
            heights.append(lines(2, z.message))
        }
        z.height = heights.reduce(0, +) + Double(max(0, heights.count - 1)) * gap
        return z
    }

    /// The parts that fit in `room` px of height, at the largest scale that fits, leaving
    /// out the logo, then the date, then the time when even the smallest does not fit; nil
    /// when nothing fits (or nothing is asked for).
    static func fit(_ parts: InfoParts, room: Double, width: Double, unit: Double, dp: Double, gap: Double,
                    messageText: Double, widths: Widths) -> (parts: InfoParts, scale: Double, sizes: Sizes, leftOut: [String])? {
        var p = parts
        var leftOut: [String] = []
        while !p.isEmpty {
            let z = { (s: Double) in sizes(p, s: s, width: width, unit: unit, dp: dp, gap: gap, messageText: messageText, widths: widths) }
            if let s = ScreenLayout.largest(minimumScale, 1, { z($0).height <= room }) {
                return (p, s, z(s), leftOut)
            }
            if p.logo { p.logo = false; leftOut.append("logo") }
            else if p.clock == .dateTime { p.clock = .time; leftOut.append("date") }
            else if p.clock == .time { p.clock = .off; leftOut.append("clock") }
            else { p.message = false; leftOut.append("message") }
        }
        return nil
    }

    /// The parts placed in `area` (as high as `sizes` says), centred on its width.
    init(area: PixelRect, parts: InfoParts, sizes z: Sizes, gap: Double, dp: Double, leftOut: [String]) {
        self.area = area
        self.leftOut = leftOut
        minimumText = ScreenLayout.minimumText * dp
        // Whole pixels, gaps too: the parts fill the area exactly.
        var y = area.y
        func take(_ h: Double) -> PixelRect {
            let r = PixelRect(x: area.x, y: y, width: area.width, height: Int(h))
            y += Int(h) + Int(gap)
            return r
        }
        if parts.logo { logo = take(z.logo) }
        if parts.clock != .off { time = take(Self.lines(1, z.time)); timeSize = z.time }
        if parts.clock == .dateTime { date = take(Self.lines(1, z.date)); dateSize = z.date }
        if parts.message { message = take(Self.lines(2, z.message)); messageSize = z.message }
        self.area.height = y - Int(gap) - area.y
    }

    /// Every part's rectangle.
    public var rects: [PixelRect] { [logo, time, date, message].compactMap { $0 } }
}

/// The information's text as it is now (the time, the date, the message shown), given
/// to the lock screen by the daemon.
public struct InfoText: Hashable, Sendable {
    public var time: String?
    public var date: String?
    public var message: String?
    public init(time: String? = nil, date: String? = nil, message: String? = nil) {
        self.time = time; self.date = date; self.message = message
    }
}

extension Scene {
    /// The information area as drawn: where, and what it says.
    public struct Info: Hashable, Sendable {
        public var layout: InfoLayout
        public var text: InfoText
        /// The logo's PNG file.
        public var logo: String?
    }
}
