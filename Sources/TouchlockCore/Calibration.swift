/// A 2D affine map in normalized device coordinates ([0, 1] edge to edge on each axis),
/// with the semantics of libinput's LIBINPUT_CALIBRATION_MATRIX: the six values
/// `a b c d e f` give x' = a·x + b·y + c and y' = d·x + e·y + f.
public struct AffineMatrix: Hashable, Sendable, CustomStringConvertible {
    public var a, b, c, d, e, f: Double

    public init(_ a: Double, _ b: Double, _ c: Double, _ d: Double, _ e: Double, _ f: Double) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.e = e; self.f = f
    }

    public static let identity = AffineMatrix(1, 0, 0, 0, 1, 0)

    public func apply(_ x: Double, _ y: Double) -> (x: Double, y: Double) {
        (a * x + b * y + c, d * x + e * y + f)
    }

    /// `l * r` applies `r` first, then `l`.
    public static func * (l: AffineMatrix, r: AffineMatrix) -> AffineMatrix {
        AffineMatrix(l.a * r.a + l.b * r.d, l.a * r.b + l.b * r.e, l.a * r.c + l.b * r.f + l.c,
                     l.d * r.a + l.e * r.d, l.d * r.b + l.e * r.e, l.d * r.c + l.e * r.f + l.f)
    }

    /// Six numbers separated by blanks or commas, as in the udev property
    /// `LIBINPUT_CALIBRATION_MATRIX="1 0 0 0 1 0"`.
    public init?(parsing text: String) {
        let v = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\"" })
            .compactMap { Double($0) }
        guard v.count == 6, v.allSatisfy(\.isFinite) else { return nil }
        self.init(v[0], v[1], v[2], v[3], v[4], v[5])
    }

    public var description: String { [a, b, c, d, e, f].map { "\($0)" }.joined(separator: " ") }
}

/// How the touch panel sits relative to the picture: the display's rotation (clockwise)
/// and mirror flips, applied after calibration.
public struct TouchOrientation: Hashable, Sendable {
    public var rotation = Rotation.degrees0
    public var flipX = false
    public var flipY = false
    public init(rotation: Rotation = .degrees0, flipX: Bool = false, flipY: Bool = false) {
        self.rotation = rotation; self.flipX = flipX; self.flipY = flipY
    }

    /// libinput's documented matrices for a clockwise rotation, then the flips.
    public var matrix: AffineMatrix {
        let r: AffineMatrix = switch rotation {
        case .degrees0: .identity
        case .degrees90: AffineMatrix(0, -1, 1, 1, 0, 0)
        case .degrees180: AffineMatrix(-1, 0, 1, 0, -1, 1)
        case .degrees270: AffineMatrix(0, 1, 0, -1, 0, 1)
        }
        var m = r
        if flipX { m = AffineMatrix(-1, 0, 1, 0, 1, 0) * m }
        if flipY { m = AffineMatrix(1, 0, 0, 0, -1, 1) * m }
        return m
    }

    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// `rotation`: 0, 90, 180 or 270; `flip`: none, x, y or xy.
    public static func parse(rotation: String?, flip: String?) throws(ParseError) -> TouchOrientation {
        var o = TouchOrientation()
        if let rotation {
            guard let r = Int(rotation).flatMap(Rotation.init(degrees:)) else {
                throw ParseError(description: "expected 0, 90, 180 or 270, found '\(rotation)'")
            }
            o.rotation = r
        }
        if let flip {
            switch flip {
            case "none": break
            case "x": o.flipX = true
            case "y": o.flipY = true
            case "xy", "both": o.flipX = true; o.flipY = true
            default: throw ParseError(description: "expected none, x, y or xy, found '\(flip)'")
            }
        }
        return o
    }
}

/// A per-device correction for a panel whose driver reports position wrongly: which
/// absolute axes carry X and Y (single-touch panels), swapped or inverted axes, and a
/// calibration matrix. Matched on the device name or on vendor:product.
///
/// Written as one line: `MATCH OPTION...` where MATCH is `vvvv:pppp` (hex) or a name in
/// double quotes, and the options are `x=ABS_Z`, `y=ABS_RX`, `swap_xy`, `invert_x`,
/// `invert_y`, `calibration=a,b,c,d,e,f`, `ignore_display_rotation` and `output=NAME`.
public struct InputQuirk: Hashable, Sendable {
    public enum Match: Hashable, Sendable {
        case name(String)
        case vendorProduct(UInt16, UInt16)
    }
    public var match: Match
    public var xAxis: UInt16?
    public var yAxis: UInt16?
    public var swapXY = false
    public var invertX = false
    public var invertY = false
    public var calibration: AffineMatrix?
    /// The panel does not turn with the display's rotation (its driver already reports
    /// positions in the rotated picture's frame, or it is not mounted on that display).
    public var ignoreDisplayRotation = false
    /// The output (connector name) the panel is on: before `[input] output` and the
    /// size match.
    public var output: String?

    public init(match: Match) { self.match = match }

    public func matches(_ d: DeviceDescription) -> Bool {
        switch match {
        case .name(let n): d.name == n
        case .vendorProduct(let v, let p): d.id.vendor == v && d.id.product == p
        }
    }

    /// Every quirk in `quirks` that matches `device`, merged in order: flags add up, and
    /// a later axis or calibration replaces an earlier one. Nil if none matches.
    public static func merged(_ quirks: [InputQuirk], for device: DeviceDescription) -> InputQuirk? {
        var result: InputQuirk?
        for q in quirks where q.matches(device) {
            guard var r = result else { result = q; continue }
            r.xAxis = q.xAxis ?? r.xAxis
            r.yAxis = q.yAxis ?? r.yAxis
            r.swapXY = r.swapXY || q.swapXY
            r.invertX = r.invertX || q.invertX
            r.invertY = r.invertY || q.invertY
            r.ignoreDisplayRotation = r.ignoreDisplayRotation || q.ignoreDisplayRotation
            r.calibration = q.calibration ?? r.calibration
            r.output = q.output ?? r.output
            result = r
        }
        return result
    }

    /// Swap and inversion as a matrix in normalized coordinates: they correct the driver,
    /// so they apply before the calibration.
    public var axisMatrix: AffineMatrix {
        var m = AffineMatrix.identity
        if swapXY { m = AffineMatrix(0, 1, 0, 1, 0, 0) }
        if invertX { m = AffineMatrix(-1, 0, 1, 0, 1, 0) * m }
        if invertY { m = AffineMatrix(1, 0, 0, 0, -1, 1) * m }
        return m
    }

    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The quirk written as `parse` reads it.
    public var text: String {
        var words: [String]
        switch match {
        case .name(let n): words = ["\"\(n)\""]
        case .vendorProduct(let v, let p):
            words = [String(v, radix: 16).leftPadded(4) + ":" + String(p, radix: 16).leftPadded(4)]
        }
        func axis(_ code: UInt16) -> String {
            EventCode.absoluteAxisNames.first { $0.value == code }?.key ?? String(code)
        }
        if let x = xAxis { words.append("x=\(axis(x))") }
        if let y = yAxis { words.append("y=\(axis(y))") }
        if swapXY { words.append("swap_xy") }
        if invertX { words.append("invert_x") }
        if invertY { words.append("invert_y") }
        if ignoreDisplayRotation { words.append("ignore_display_rotation") }
        if let o = output { words.append("output=\(o)") }
        if let m = calibration { words.append("calibration=" + [m.a, m.b, m.c, m.d, m.e, m.f].map { "\($0)" }.joined(separator: ",")) }
        return words.joined(separator: " ")
    }

    public static func parse(_ text: String) throws(ParseError) -> InputQuirk {
        func fail(_ m: String) -> ParseError { ParseError(description: m) }
        var rest = Substring(text).drop(while: { $0 == " " || $0 == "\t" })
        var q: InputQuirk
        if rest.first == "\"" {
            rest = rest.dropFirst()
            guard let close = rest.firstIndex(of: "\"") else { throw fail("the device name has no closing quote") }
            let name = String(rest[..<close])
            guard !name.isEmpty else { throw fail("the device name is empty") }
            q = InputQuirk(match: .name(name))
            rest = rest[rest.index(after: close)...]
        } else {
            let word = rest.prefix(while: { $0 != " " && $0 != "\t" })
            let parts = word.split(separator: ":")
            guard parts.count == 2, parts.allSatisfy({ $0.count == 4 }),
                  let v = UInt16(parts[0], radix: 16), let p = UInt16(parts[1], radix: 16) else {
                throw fail("expected vendor:product in hex (like 0eef:0001) or a device name in double quotes, found '\(word)'")
            }
            q = InputQuirk(match: .vendorProduct(v, p))
            rest = rest.dropFirst(word.count)
        }
        let options = rest.split(whereSeparator: { $0 == " " || $0 == "\t" })
        if options.isEmpty { throw fail("a quirk needs at least one option") }
        for o in options {
            // "name" or "name=value"; "=" alone, or "=value", has an empty name.
            let eq = o.firstIndex(of: "=")
            let kv = [o[..<(eq ?? o.endIndex)]] + (eq.map { [o[o.index(after: $0)...]] } ?? [])
            switch (kv[0], kv.count == 2 ? kv[1] : nil) {
            case ("swap_xy", nil): q.swapXY = true
            case ("invert_x", nil): q.invertX = true
            case ("invert_y", nil): q.invertY = true
            case ("ignore_display_rotation", nil): q.ignoreDisplayRotation = true
            case ("x", let v?), ("y", let v?):
                guard let code = EventCode.absoluteAxisNames[String(v)] else {
                    throw fail("\(kv[0]): expected an axis like ABS_X or ABS_Z, found '\(v)'")
                }
                if kv[0] == "x" { q.xAxis = code } else { q.yAxis = code }
            case ("calibration", let v?):
                guard let m = AffineMatrix(parsing: String(v)) else {
                    throw fail("calibration: expected six numbers a,b,c,d,e,f, found '\(v)'")
                }
                q.calibration = m
            case ("output", let v?):
                guard Config.isConnectorName(String(v)) else {
                    throw fail("output: expected a connector name (e.g. HDMI-A-1), found '\(v)'")
                }
                q.output = String(v)
            default:
                throw fail("unknown option '\(o)' (swap_xy, invert_x, invert_y, ignore_display_rotation, x=AXIS, y=AXIS, calibration=a,b,c,d,e,f, output=NAME)")
            }
        }
        return q
    }
}

/// Device units to screen pixels: normalize each axis over [min, max], apply the quirk's
/// axis correction, the calibration matrix and the orientation (libinput semantics), then
/// the display's rotation (the panel's frame to the logical picture's, unless the quirk
/// says `ignore_display_rotation`), and scale to the logical screen the way libinput's
/// `_transformed` getters do.
public struct TouchTransform: Hashable, Sendable {
    public var mapping: ScreenMapping
    public var matrix: AffineMatrix

    /// `screen`: the logical size (the display's, already turned by `display`).
    public init(x: AxisRange, y: AxisRange, screen: Size, quirk: InputQuirk? = nil,
                calibration: AffineMatrix? = nil, orientation: TouchOrientation = TouchOrientation(),
                display: Rotation = .degrees0) {
        mapping = ScreenMapping(x: x, y: y, screen: screen)
        let cal = quirk?.calibration ?? calibration ?? .identity
        let turn = quirk?.ignoreDisplayRotation == true ? .identity : display.touchMatrix
        matrix = turn * orientation.matrix * cal * (quirk?.axisMatrix ?? .identity)
    }

    public func map(_ p: DevicePoint) -> Point {
        if matrix == .identity { return mapping.map(p).bounded }
        let x = mapping.x, y = mapping.y
        let sx = Double(Int64(x.maximum) - Int64(x.minimum)), sy = Double(Int64(y.maximum) - Int64(y.minimum))
        let nx = sx > 0 ? Double(Int64(p.x) - Int64(x.minimum)) / sx : 0
        let ny = sy > 0 ? Double(Int64(p.y) - Int64(y.minimum)) / sy : 0
        let (tx, ty) = matrix.apply(nx, ny)
        // Back to device units, then the same scaling as without a matrix.
        let w = Double(mapping.screen.width), h = Double(mapping.screen.height)
        return Point(x: tx * sx * w / (sx + 1), y: ty * sy * h / (sy + 1)).bounded
    }
}
