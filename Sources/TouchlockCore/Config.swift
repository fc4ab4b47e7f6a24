/// The daemon's settings, read from INI files (see TouchlockConfig for the files and
/// their order). Every key is declared once, in `Config.keys`: its section, its name,
/// the flat name it had before sections (still accepted outside any section), how a
/// value is read and how it is shown by `touchlockd --check-config`. A later file
/// overrides an earlier one key by key. An unknown section or key, or a bad value, is
/// an error naming the file and line, and the daemon refuses to start.
public struct Config: Sendable {
    public var patternHash: String?
    public var rows = 3
    public var columns = 3
    public var minimumLength = 4
    public var hitFactor = 0.6
    /// Whether a node can be chosen again in a pattern (`[pattern] repeat`).
    public var patternRepeat = PatternRepeat.never
    public var errorHold = Interval.milliseconds(500)
    public var socketPath = Paths.socket
    /// Members of this group may use the control socket (status, subscribe, lock).
    public var socketGroup = "touchlock"
    /// Members of this group may also set the lock screen's message (`[socket]
    /// message_group`); nil: only root may.
    public var messageGroup: String?
    /// The root-only file holding the lockout record and the secrets' hashes.
    public var statePath = Paths.stateFile
    public var lockoutSchedule = LockoutSchedule.gatekeeper
    /// The failure count a damaged or unreadable state file stands for (its wait applies).
    /// 10 is a wait of 3^5 = 243 minutes (about 4 h) in the default schedule.
    public var damagedCount = 10
    public var theme = Theme()
    /// The built-in theme named by `theme =` (colours set after it override it).
    public var themeName = "default"
    /// Per-device input corrections (`[input] quirk`, may be given several times).
    public var inputQuirks: [InputQuirk] = []
    /// How the panel sits relative to the picture (`[input] rotation`, `flip`).
    public var touchOrientation = TouchOrientation()
    /// How the picture is turned on the panel (`[display] rotation`); nil: the connector's
    /// panel orientation, else none.
    public var displayRotation: Rotation?
    /// The settings of the lock screens (Config+Screens.swift).
    public var screens = ScreenSettings()
    /// The virtual terminal the lock screen is shown on (`[display] vt`).
    public var terminal = TerminalChoice.auto
    /// How the screen is covered (`[display] cover`).
    public var cover = CoverChoice.auto
    /// The Wayland compositor's socket for the session lock (`[display] wayland_socket`):
    /// a name in XDG_RUNTIME_DIR or an absolute path; nil: WAYLAND_DISPLAY.
    public var waylandSocket: String?
    /// Under `cover = session-lock`, how long a start waits for a compositor that is not up
    /// yet (its socket absent, or nobody listening on it) before it fails (`[display]
    /// wayland_wait_s`; zero: not at all).
    public var waylandWait: Interval = .milliseconds(60_000)
    /// While unlocked, lock again after this long with no touch or key (`[lock] idle_s`;
    /// nil: never).
    public var idleLock: Interval?
    /// A node_exporter textfile kept up to date with the figures (`[metrics] textfile`).
    public var metricsTextfile: String?
    /// While locked, switch the screen off after this long untouched (`[display] blank_s`;
    /// nil: never).
    public var blankAfter: Interval?
    /// Only these connectors show the lock screen (`[display] connectors`; empty: every
    /// connected one).
    public var displayConnectors: [String] = []
    /// Only these DRM cards are covered (`[display] device`: their nodes, or links to them
    /// such as /dev/dri/by-path/…-card; empty: every card with a connected output).
    public var displayDevices: [String] = []
    /// The backlight switched off with the screen (`[display] backlight`).
    public var backlight = BacklightChoice.auto
    /// The logind seat whose sessions' Lock locks, whose active session's idle hint
    /// follows the panel (`[logind] seat`; nil: logind is not used).
    public var logindSeat: String? = "seat0"
    /// The mode to pick on each output that offers it (`[display] mode`; nil: preferred).
    public var displayMode: DisplayMode?
    /// The output the touch panels belong to (`[input] output`; nil: for each panel the
    /// output of its physical size, else the first).
    public var touchOutput: String?
    /// One-time service codes (`[service]`, docs/service-codes.md).
    public var service = ServiceSettings()

    /// Which virtual terminal touchlockd owns: it switches to it to lock and back to the
    /// kiosk's after the unlock.
    public enum TerminalChoice: Hashable, Sendable, CustomStringConvertible {
        /// The first free one (VT_OPENQRY), when the kernel has virtual terminals.
        case auto
        /// None: draw on whatever VT is active (a display nobody else uses).
        case off
        case number(Int)

        public var description: String {
            switch self {
            case .auto: "auto"
            case .off: "off"
            case .number(let n): "\(n)"
            }
        }
    }

    /// How the lock screen covers the kiosk.
    public enum CoverChoice: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// The session lock when a Wayland compositor is reachable and offers it, else the VT.
        case auto
        /// A VT of our own and DRM master (the hand-off).
        case vt
        /// The compositor's ext-session-lock-v1: it shows only our lock surfaces.
        case sessionLock = "session-lock"

        public var description: String { rawValue }
    }

    public init() {}

    public struct Error: Swift.Error, Equatable, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var message: String
        public init(file: String, line: Int, message: String) { self.file = file; self.line = line; self.message = message }
        public var description: String { "\(file):\(line): \(message)" }
    }

    /// Why a value was refused (the caller adds file and line).
    public struct BadValue: Swift.Error, Equatable { public var message: String }

    /// One setting.
    public struct Key: Sendable {
        public var section: String
        public var name: String
        /// The name accepted outside any section (the settings before sections).
        public var flatName: String?
        public var set: @Sendable (inout Config, String) throws(BadValue) -> Void
        public var show: @Sendable (Config) -> String
    }

    public static let sections = ["screen", "pattern", "code", "lockout", "socket", "lock", "display", "input", "theme", "messages", "metrics", "logind", "service"]

    /// Every setting, in the order --check-config prints them. Add new keys to one of
    /// these tables (the screens' keys are in Config+Screens.swift).
    public static let keys: [Key] = coreKeys + inputKeys + screenKeys + serviceKeys

    static let coreKeys: [Key] = [
        Key(section: "pattern", name: "grid", flatName: "grid",
            set: { c, v throws(BadValue) in
                let parts = v.split(separator: "x")
                guard parts.count == 2, let r = Int(parts[0]), let k = Int(parts[1]),
                      (2...9).contains(r), (2...9).contains(k) else {
                    throw BadValue(message: "expected ROWSxCOLUMNS from 2x2 to 9x9, found '\(v)'")
                }
                c.rows = r; c.columns = k
            }, show: { "\($0.rows)x\($0.columns)" }),
        Key(section: "pattern", name: "min_length", flatName: "min_length",
            set: { c, v throws(BadValue) in c.minimumLength = try int(v, 1...81) }, show: { "\($0.minimumLength)" }),
        Key(section: "pattern", name: "hit_factor", flatName: "hit_factor",
            set: { c, v throws(BadValue) in c.hitFactor = try number(v, 0.1...1.0) }, show: { "\($0.hitFactor)" }),
        Key(section: "pattern", name: "repeat", flatName: nil,
            set: { c, v throws(BadValue) in
                guard let r = PatternRepeat(rawValue: v) else { throw BadValue(message: "expected never or allowed, found '\(v)'") }
                c.patternRepeat = r
            }, show: { "\($0.patternRepeat)" }),
        Key(section: "pattern", name: "hash", flatName: "pattern_hash",
            set: { c, v throws(BadValue) in
                // A hash in the format of crypt(5): "$id$...". Never a pattern in clear.
                guard v.hasPrefix("$"), v.count >= 20, !v.contains(" ") else {
                    throw BadValue(message: "expected a hash made by 'touchlockctl hash-pattern' (it starts with '$')")
                }
                c.patternHash = v
            }, show: { $0.patternHash == nil ? "" : "(set)" }),
        Key(section: "lockout", name: "schedule", flatName: "lockout_schedule",
            set: { c, v throws(BadValue) in
                guard let s = LockoutSchedule(parsing: v) else {
                    throw BadValue(message: "expected 'gatekeeper', 'none' or seconds per failure like 0,0,0,0,60,300; found '\(v)'")
                }
                c.lockoutSchedule = s
            }, show: { "\($0.lockoutSchedule)" }),
        Key(section: "lockout", name: "damaged_count", flatName: nil,
            set: { c, v throws(BadValue) in c.damagedCount = try int(v, 1...1000) }, show: { "\($0.damagedCount)" }),
        Key(section: "lockout", name: "error_hold_ms", flatName: "error_hold_ms",
            set: { c, v throws(BadValue) in c.errorHold = .milliseconds(Int64(try int(v, 0...60_000))) },
            show: { "\($0.errorHold.milliseconds)" }),
        Key(section: "lockout", name: "state_file", flatName: "state_file",
            set: { c, v throws(BadValue) in c.statePath = try path(v) }, show: { $0.statePath }),
        Key(section: "metrics", name: "textfile", flatName: nil,
            set: { c, v throws(BadValue) in c.metricsTextfile = v.isEmpty ? nil : try path(v) },
            show: { $0.metricsTextfile ?? "" }),
        Key(section: "lock", name: "idle_s", flatName: nil,
            set: { c, v throws(BadValue) in
                let n = try int(v, 0...604_800)
                c.idleLock = n == 0 ? nil : .milliseconds(Int64(n) * 1000)
            }, show: { "\(($0.idleLock?.milliseconds ?? 0) / 1000)" }),
        Key(section: "display", name: "blank_s", flatName: nil,
            set: { c, v throws(BadValue) in
                let n = try int(v, 0...604_800)
                c.blankAfter = n == 0 ? nil : .milliseconds(Int64(n) * 1000)
            }, show: { "\(($0.blankAfter?.milliseconds ?? 0) / 1000)" }),
        Key(section: "display", name: "rotation", flatName: nil,
            set: { c, v throws(BadValue) in
                if v == "auto" { c.displayRotation = nil; return }
                guard let d = Int(v), let r = Rotation(degrees: d) else {
                    throw BadValue(message: "expected 0, 90, 180, 270 or auto, found '\(v)'")
                }
                c.displayRotation = r
            }, show: { $0.displayRotation.map { "\($0)" } ?? "auto" }),
        Key(section: "display", name: "connectors", flatName: nil,
            set: { c, v throws(BadValue) in
                let names = v.split(separator: ",").map { String($0.filter { $0 != " " && $0 != "\t" }) }.filter { !$0.isEmpty }
                guard names.allSatisfy(Self.isConnectorName) else {
                    throw BadValue(message: "expected connector names separated by commas (e.g. HDMI-A-1, DP-2), found '\(v)'")
                }
                c.displayConnectors = names
            }, show: { $0.displayConnectors.joined(separator: ", ") }),
        Key(section: "display", name: "device", flatName: nil,
            set: { c, v throws(BadValue) in
                let paths = v.split(separator: ",").map { String($0.filter { $0 != " " && $0 != "\t" }) }.filter { !$0.isEmpty }
                guard paths.allSatisfy({ $0.hasPrefix("/dev/") && !$0.contains("/../") && !$0.hasSuffix("/..") }) else {
                    throw BadValue(message: "expected DRM device paths separated by commas (e.g. /dev/dri/card1 or /dev/dri/by-path/platform-gpu-card), found '\(v)'")
                }
                c.displayDevices = paths
            }, show: { $0.displayDevices.joined(separator: ", ") }),
        Key(section: "display", name: "mode", flatName: nil,
            set: { c, v throws(BadValue) in
                if v.isEmpty || v == "preferred" { c.displayMode = nil; return }
                guard let m = DisplayMode(parsing: v) else { throw BadValue(message: "expected WIDTHxHEIGHT or WIDTHxHEIGHT@HZ (e.g. 1920x1080@60) or preferred, found '\(v)'") }
                c.displayMode = m
            }, show: { $0.displayMode.map { "\($0)" } ?? "preferred" }),
        Key(section: "display", name: "backlight", flatName: nil,
            set: { c, v throws(BadValue) in
                switch v {
                case "auto": c.backlight = .auto
                case "off": c.backlight = .off
                default:
                    guard BacklightChoice.isName(v) else {
                        throw BadValue(message: "expected auto, off or a name under /sys/class/backlight, found '\(v)'")
                    }
                    c.backlight = .named(v)
                }
            }, show: { "\($0.backlight)" }),
        Key(section: "logind", name: "seat", flatName: nil,
            set: { c, v throws(BadValue) in
                if v == "off" { c.logindSeat = nil; return }
                // logind's seat names: "seat" and then letters, digits, '-' and '_'.
                guard v.hasPrefix("seat"), v.count <= 64,
                      v.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7a) || $0 == 0x2d || $0 == 0x5f })
                else { throw BadValue(message: "expected off or a seat name like seat0, found '\(v)'") }
                c.logindSeat = v
            }, show: { $0.logindSeat ?? "off" }),
        Key(section: "display", name: "vt", flatName: nil,
            set: { c, v throws(BadValue) in
                switch v {
                case "auto": c.terminal = .auto
                case "off": c.terminal = .off
                default: c.terminal = .number(try int(v, 1...63))
                }
            }, show: { "\($0.terminal)" }),
        Key(section: "display", name: "cover", flatName: nil,
            set: { c, v throws(BadValue) in
                guard let choice = CoverChoice(rawValue: v) else {
                    throw BadValue(message: "expected auto, vt or session-lock, found '\(v)'")
                }
                c.cover = choice
            }, show: { "\($0.cover)" }),
        Key(section: "display", name: "wayland_socket", flatName: nil,
            set: { c, v throws(BadValue) in
                if v.isEmpty { c.waylandSocket = nil; return }
                // A name in XDG_RUNTIME_DIR (wayland-1), or an absolute path.
                guard v.hasPrefix("/") || !v.contains("/") else {
                    throw BadValue(message: "expected a socket name like wayland-1 or an absolute path, found '\(v)'")
                }
                c.waylandSocket = v.hasPrefix("/") ? try path(v) : v
            }, show: { $0.waylandSocket ?? "" }),
        Key(section: "display", name: "wayland_wait_s", flatName: nil,
            set: { c, v throws(BadValue) in c.waylandWait = .milliseconds(Int64(try int(v, 0...600)) * 1000) },
            show: { "\($0.waylandWait.milliseconds / 1000)" }),
        Key(section: "socket", name: "path", flatName: "socket",
            set: { c, v throws(BadValue) in c.socketPath = try path(v) }, show: { $0.socketPath }),
        Key(section: "socket", name: "group", flatName: "socket_group",
            set: { c, v throws(BadValue) in
                guard !v.isEmpty, v.utf8.count <= 32, v.allSatisfy(isGroupNameCharacter) else {
                    throw BadValue(message: "expected a group name, found '\(v)'")
                }
                c.socketGroup = v
            }, show: { $0.socketGroup }),
        Key(section: "socket", name: "message_group", flatName: nil,
            set: { c, v throws(BadValue) in
                if v.isEmpty { c.messageGroup = nil; return }
                guard v.utf8.count <= 32, v.allSatisfy(isGroupNameCharacter) else {
                    throw BadValue(message: "expected a group name or nothing, found '\(v)'")
                }
                c.messageGroup = v
            }, show: { $0.messageGroup ?? "" }),
        // The built-in theme first: the colours after it (in a file, and as
        // --check-config prints them) override it.
        Key(section: "theme", name: "theme", flatName: "theme",
            set: { c, v throws(BadValue) in
                guard var t = Theme.named(v) else { throw BadValue(message: "expected default or high-contrast, found '\(v)'") }
                // A built-in theme sets colours and looks; the font and sizes stay.
                t.fontFamily = c.theme.fontFamily; t.fontFile = c.theme.fontFile; t.fontSize = c.theme.fontSize; t.lineWidth = c.theme.lineWidth
                t.codeFontSize = c.theme.codeFontSize; t.keyFontSize = c.theme.keyFontSize
                t.backgroundImage = c.theme.backgroundImage; t.dotSize = c.theme.dotSize
                c.theme = t; c.themeName = v
            }, show: { $0.themeName }),
        colorKey("background", \.background),
        colorKey("text_color", \.text),
        colorKey("node_color", \.node),
        colorKey("node_selected_color", \.nodeSelected),
        colorKey("error_color", \.error),
        colorKey("path_color", \.path),
        Key(section: "theme", name: "line_width", flatName: "line_width",
            set: { c, v throws(BadValue) in c.theme.lineWidth = try number(v, 1...100) }, show: { "\($0.theme.lineWidth)" }),
        Key(section: "theme", name: "font_family", flatName: "font_family",
            set: { c, v throws(BadValue) in
                guard !v.isEmpty else { throw BadValue(message: "expected a font family name") }
                c.theme.fontFamily = v
            }, show: { $0.theme.fontFamily }),
        Key(section: "theme", name: "font_file", flatName: "font_file",
            set: { c, v throws(BadValue) in c.theme.fontFile = v.isEmpty ? nil : try path(v) },
            show: { $0.theme.fontFile ?? "" }),
        Key(section: "theme", name: "font_size", flatName: "font_size",
            set: { c, v throws(BadValue) in c.theme.fontSize = try number(v, 4...200) }, show: { "\($0.theme.fontSize)" }),
    ]

    /// A letter, a digit or one of `_-.`. ASCII is told apart without the standard
    /// library's Unicode tables, which a start would otherwise map for this alone.
    static func isGroupNameCharacter(_ c: Character) -> Bool {
        if let a = c.asciiValue {
            return (a >= 0x61 && a <= 0x7A) || (a >= 0x41 && a <= 0x5A) || (a >= 0x30 && a <= 0x39)
                || a == 0x5F || a == 0x2D || a == 0x2E
        }
        return c.isLetter || c.isNumber
    }

    /// A DRM connector's name: its type and number, e.g. HDMI-A-1, eDP-1, Virtual-2.
    static func isConnectorName(_ v: String) -> Bool {
        !v.isEmpty && v.utf8.count <= 32 && v.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
    }

    static let inputKeys: [Key] = [
        Key(section: "input", name: "output", flatName: nil,
            set: { c, v throws(BadValue) in
                guard v.isEmpty || Self.isConnectorName(v) else { throw BadValue(message: "expected a connector name (e.g. HDMI-A-1), found '\(v)'") }
                c.touchOutput = v.isEmpty ? nil : v
            }, show: { $0.touchOutput ?? "" }),
        Key(section: "input", name: "quirk", flatName: "input_quirk",
            set: { c, v throws(BadValue) in
                do throws(InputQuirk.ParseError) { c.inputQuirks.append(try InputQuirk.parse(v)) }
                catch { throw BadValue(message: error.description) }
            }, show: { $0.inputQuirks.map(\.text).joined(separator: "\nquirk = ") }),
        Key(section: "input", name: "rotation", flatName: "touch_rotation",
            set: { c, v throws(BadValue) in
                do throws(TouchOrientation.ParseError) {
                    c.touchOrientation.rotation = try TouchOrientation.parse(rotation: v, flip: nil).rotation
                } catch { throw BadValue(message: error.description) }
            }, show: { "\($0.touchOrientation.rotation)" }),
        Key(section: "input", name: "flip", flatName: "touch_flip",
            set: { c, v throws(BadValue) in
                do throws(TouchOrientation.ParseError) {
                    let o = try TouchOrientation.parse(rotation: nil, flip: v)
                    c.touchOrientation.flipX = o.flipX
                    c.touchOrientation.flipY = o.flipY
                } catch { throw BadValue(message: error.description) }
            }, show: {
                switch ($0.touchOrientation.flipX, $0.touchOrientation.flipY) {
                case (false, false): "none"
                case (true, false): "x"
                case (false, true): "y"
                case (true, true): "xy"
                }
            }),
    ]

    /// The longest value, so that every setting written back by `text` fits in a line
    /// of a config file (199 bytes, libinih's limit) with its key.
    public static let maxValueBytes = 160

    /// Sets `key` in `section` ("" outside any section) to `value` (comments stripped
    /// here). The message of a refusal names the key; the caller adds file and line.
    public mutating func set(section: String, key: String, value raw: String) throws(BadValue) {
        let value = Self.stripInlineComment(Substring(raw.trimmingSpaces)).trimmingSpaces
        let found: Key?
        if section.isEmpty {
            found = Self.keys.first { $0.flatName == key }
        } else {
            guard Self.sections.contains(section) else {
                throw BadValue(message: "unknown section [\(section)] (known: \(Self.sections.joined(separator: ", ")))")
            }
            found = Self.keys.first { $0.section == section && $0.name == key }
        }
        guard let k = found else {
            throw BadValue(message: section.isEmpty ? "unknown key '\(key)'" : "unknown key '\(key)' in [\(section)]")
        }
        do throws(BadValue) {
            guard value.utf8.count <= Self.maxValueBytes else { throw BadValue(message: "longer than \(Self.maxValueBytes) bytes") }
            try k.set(&self, value)
        } catch {
            throw BadValue(message: "\(section.isEmpty ? "" : "[\(section)] ")\(key): \(error.message)")
        }
    }

    /// Applies `key = value` lines outside any section (a config file's flat form), for
    /// previews and tests; config files themselves are read by TouchlockConfig.
    public mutating func apply(settings text: String) throws(BadValue) {
        for line in text.split(separator: "\n") {
            let t = line.trimmingSpaces
            if t.isEmpty || t.hasPrefix("#") || t.hasPrefix(";") { continue }
            guard let eq = t.firstIndex(of: "=") else { throw BadValue(message: "expected 'key = value', found '\(t)'") }
            try set(section: "", key: t[..<eq].trimmingSpaces, value: String(t[t.index(after: eq)...]))
        }
    }

    /// The settings as an INI text that reads back to the same settings.
    public var text: String {
        var out = ""
        for section in Self.sections {
            out += "[\(section)]\n"
            for k in Self.keys where k.section == section {
                let v = k.show(self)
                out += v.isEmpty ? "# \(k.name) =\n" : "\(k.name) = \(v)\n"
            }
            out += "\n"
        }
        return out
    }

    static func int(_ v: String, _ range: ClosedRange<Int>) throws(BadValue) -> Int {
        guard let n = Int(v), range.contains(n) else {
            throw BadValue(message: "expected a whole number from \(range.lowerBound) to \(range.upperBound), found '\(v)'")
        }
        return n
    }

    static func number(_ v: String, _ range: ClosedRange<Double>) throws(BadValue) -> Double {
        guard let n = Double(v), range.contains(n) else {
            throw BadValue(message: "expected a number from \(range.lowerBound) to \(range.upperBound), found '\(v)'")
        }
        return n
    }

    /// A colour of the theme, in [theme] under the same name outside any section.
    static func colorKey(_ name: String, _ field: WritableKeyPath<Theme, Color> & Sendable) -> Key {
        Key(section: "theme", name: name, flatName: name,
            set: { c, v throws(BadValue) in c.theme[keyPath: field] = try color(v) },
            show: { $0.theme[keyPath: field].description })
    }

    static func color(_ v: String) throws(BadValue) -> Color {
        guard let c = Color(hex: v) else { throw BadValue(message: "expected a colour like #00aaff or #00aaff80, found '\(v)'") }
        return c
    }

    static func path(_ v: String) throws(BadValue) -> String {
        guard v.hasPrefix("/") else { throw BadValue(message: "expected an absolute path, found '\(v)'") }
        return v
    }
}

extension Config {
    /// In a value, a '#' or ';' after a blank and before a blank or the end of the value
    /// starts a comment (libinih has already taken whole-line comments and ' ;'); so
    /// `#00aaff` is a colour, not a comment. A ';' that begins the value is a comment
    /// too: libinih takes `key = ;x` as a comment but passes `key =;x` on, and a value
    /// read from the second would be written back (`key = ;x`) as the first.
    static func stripInlineComment(_ value: Substring) -> Substring {
        // Bytes, not characters: '#', ';', blanks are ASCII and never inside a multi-byte one.
        let bytes = value.utf8
        if bytes.first == UInt8(ascii: ";") { return value[value.startIndex..<value.startIndex] }
        var previous: UInt8 = 0
        var i = bytes.startIndex
        while i != bytes.endIndex {
            let b = bytes[i]
            let next = bytes.index(after: i)
            if (b == UInt8(ascii: "#") || b == UInt8(ascii: ";")) && i != bytes.startIndex && isBlank(previous),
               next == bytes.endIndex || isBlank(bytes[next]) {
                return value[..<i]
            }
            previous = b
            i = next
        }
        return value
    }

    private static func isBlank(_ b: UInt8) -> Bool { b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") }
}

extension Substring {
    /// Without the blanks (space, tab, carriage return) at either end. Done on the bytes:
    /// walking characters (grapheme breaking) made trimming most of a config file's parse.
    var trimmingSpaces: String {
        let bytes = utf8
        func blank(_ b: UInt8) -> Bool { b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\r") }
        var start = bytes.startIndex, end = bytes.endIndex
        while start != end, blank(bytes[start]) { start = bytes.index(after: start) }
        while end != start, blank(bytes[bytes.index(before: end)]) { end = bytes.index(before: end) }
        return String(self[start..<end])
    }
}
extension String {
    var trimmingSpaces: String { Substring(self).trimmingSpaces }
}
