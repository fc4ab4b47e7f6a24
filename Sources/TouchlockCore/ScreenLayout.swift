/// The panel's density: dots per inch, and pixels per dp (1 dp = dpi/160 px, as on
/// Android).
public struct Density: Hashable, Sendable {
    public var dpi: Double
    /// Android's baseline (mdpi), used when neither the config nor the connector tells.
    public static let defaultDpi = 160.0

    /// Pixels per density-independent pixel.
    public var px: Double { dpi / 160 }
    /// What sizes in dp are multiplied by (pixels per dp).
    public var scale: Double { px }

    public init(dpi: Double) { self.dpi = dpi }

    /// `override` when set; else from the connector's physical size in millimetres,
    /// unless that is missing or not believable (EDIDs report 0x0, or the aspect ratio
    /// as 160x90 or 16x9 cm); else 160.
    public init(screen: Size, physicalMillimetres: (width: Int, height: Int)?, override: Double? = nil) {
        if let override { dpi = override; return }
        if let (mw, mh) = physicalMillimetres, mw > 0, mh > 0 {
            let aspectOnly = [(160, 90), (160, 100), (16, 9), (16, 10)].contains { $0 == (mw, mh) || $0 == (mh, mw) }  // or turned
            let d = Double(screen.width) * 25.4 / Double(mw)
            if !aspectOnly, (50...600).contains(d) { dpi = d; return }
        }
        dpi = Self.defaultDpi
    }
}

/// Where everything of the lock screens goes, in one model measured in dp.
///
/// Sizes: every size is a number of dp between a minimum and a maximum; between them an
/// element grows to fill the screen. On a screen whose short side is over 800 dp (a
/// large monitor or a TV, seen from further away) the maximum sizes and the fonts grow
/// with it, up to 3 times (`zoom`), so a 4K screen shows a lock screen of the proportions
/// of a tablet's, neither tiny nor scattered.
///
/// Arrangement: portrait, one centred column (prompt, the boxes, the grid or keypad, the
/// switch), at most `columnMax` wide; landscape, two balanced columns of equal width
/// side by side, centred (left: prompt, boxes, switch; right: the grid or keypad; the
/// other way round when the prompt is written right to left). With both methods the
/// switch is at the same place on both screens.
///
/// What shrinks first when the screen is small:
/// 1. the margins and gaps, down to 4 dp;
/// 2. the prompt: it wraps to two lines, then its font shrinks down to 12 dp;
/// 3. the grid's cells and the keys, down to a 48 dp touch target (a key 48 dp across, a
///    node's hit circle 48 dp across);
/// 4. only then, on a screen too small for all of it at 48 dp, the targets, all alike.
public struct ScreenLayout: Hashable, Sendable {
    public var size: Size
    public var density: Density
    /// Pixels per dp, times the zoom of a large screen: what theme sizes are multiplied by.
    public var unit: Double
    public var zoom: Double
    public var portrait: Bool
    public var grid: PatternGrid
    /// The band the pattern screen's prompt is drawn in.
    public var patternPrompt: PixelRect
    /// The code pad's parts, when the screen has one.
    public var pad: CodePadLayout?
    /// The control that switches methods, with both.
    public var toggle: PixelRect?
    /// The switch's label size, so the longer label fits.
    public var toggleFontSize: Double
    /// The smallest touch target laid out, in px (48 dp unless the screen is too small).
    public var minimumTarget: Double
    /// The clock, the message and the logo, when the screen shows any (above the prompt).
    public var info: InfoLayout?
    /// The prompt's direction: right to left, the two columns trade places.
    public var direction: TextDirection
    /// The switch's labels too long for it at 12 dp even on two lines, drawn cut with an ellipsis.
    public var cutLabels: [String] = []
    /// The parts of the information left out for want of room ("logo", "date", "clock",
    /// "message"; "everything").
    public var infoLeftOut: [String] = []

    // The rules, in dp.
    public static let target = 48.0
    public static let margin = 16.0
    public static let gap = 16.0
    /// The prompt's smallest font.
    public static let minimumText = 12.0
    /// The widest a portrait column or a landscape column gets (before zoom).
    public static let columnMax = 440.0
    /// A pattern cell's largest side (before zoom).
    public static let cellMax = 120.0
    /// A key's pitch (key and gap) at most (before zoom): keys of 80 dp.
    public static let pitchMax = 88.0
    /// The boxes' band: at least a target high, at most 72 dp (before zoom).
    public static let boxBandMax = 72.0
    /// A key is this fraction of its pitch; the rest is the gap between keys.
    public static let keyFraction = 10.0 / 11.0

    /// Lays out the screens of `methods` on `size`. `theme` sizes are in dp; `measure` says
    /// how wide the switch's labels, the clock and `prompts` (every text the prompt's box
    /// shows) are drawn.
    public init(size: Size, density: Density, methods: ScreenSettings.Methods = .pattern, rows: Int = 3,
                columns: Int = 3, hitFactor: Double = 0.6, codeLength: Int = 4, theme: Theme = Theme(),
                toggleLabels: [String] = [], info parts: InfoParts = InfoParts(),
                direction: TextDirection = .leftToRight, measure: any TextMeasure = EstimatedTextMeasure(),
                prompts: [String] = []) {
        self.init(size: size, density: density, methods: methods, rows: rows, columns: columns, hitFactor: hitFactor,
                  codeLength: codeLength, theme: theme, toggleLabels: toggleLabels, info: parts, direction: direction,
                  measure: measure, prompts: prompts, switchHeight: nil)
        // On a screen too small for 48 dp targets the keys or the nodes shrink; the switch
        // shrinks with them, so that every target is alike, and gives them its room back:
        // its height goes halfway to theirs until both are within a pixel.
        guard methods == .both, let first = toggle, let main = mainTarget, main < Double(first.height) - 0.5 else { return }
        var height = Double(first.height)
        for _ in 0..<8 {
            guard let main = mainTarget, abs(height - main) > 1 else { break }
            height = (height + main) / 2
            self = ScreenLayout(size: size, density: density, methods: methods, rows: rows, columns: columns,
                                hitFactor: hitFactor, codeLength: codeLength, theme: theme, toggleLabels: toggleLabels,
                                info: parts, direction: direction, measure: measure, prompts: prompts, switchHeight: height)
        }
    }

    /// The smallest target of the grid or the keypad, in px.
    var mainTarget: Double?

    private init(size: Size, density: Density, methods: ScreenSettings.Methods, rows: Int, columns: Int,
                 hitFactor: Double, codeLength: Int, theme: Theme, toggleLabels: [String], info parts: InfoParts,
                 direction: TextDirection, measure: any TextMeasure, prompts: [String], switchHeight: Double?) {
        self.size = size
        self.direction = direction
        self.density = density
        let dp = density.px
        let w = Double(size.width), h = Double(size.height)
        let shortDp = min(w, h) / dp
        zoom = min(3, max(1, shortDp / 800))
        unit = dp * zoom
        portrait = h >= w
        let target = Self.target * dp
        let length = codeLength < 1 ? 4 : codeLength

        // Margins and gaps: smaller on a small screen,
        // from 16 dp on a short side of 600 dp or more down to 4 dp at 240 dp.
        let spacing = min(1, max(0.25, (shortDp - 180) / 420))
        let margin = (Self.margin * spacing * unit).rounded()
        let gap = (Self.gap * spacing * unit).rounded()

        let fontPx = theme.fontSize * unit
        let promptPref = TextMetrics.lineHeight(fontPx) * 2
        let promptMin = TextMetrics.lineHeight(Self.minimumText * dp) * 2
        /// The height the prompts need in a column `width` wide: `pref` (two lines at their
        /// size, or more at 12 dp or more), or, for one that does not fit even so, as many
        /// lines at 12 dp as it takes: the prompt takes that room from the grid or the keys
        /// (down to their 48 dp) before it is cut.
        func promptNeed(_ width: Double, _ pref: Double) -> Double {
            let floorPx = Self.minimumText * dp
            var need = pref
            // A text whose estimate (never narrower than drawn in the default faces) fits one
            // line at 12 dp fits two at 12 dp or more: only the others are measured, so that
            // a start measures none of the usual prompts before its first frame.
            for p in prompts where !p.isEmpty && TextMetrics.estimatedWidth(p, size: floorPx) > width
                && measure.width(p, size: fontPx) > width {
                let set = TextMetrics.fit(p, width: width, height: pref, size: fontPx, minimum: floorPx, measure: measure)
                guard set.lines.last?.hasSuffix("…") == true, !p.hasSuffix("…") else { continue }
                let all = TextMetrics.wrap(p, width: width, height: h, size: floorPx, minimum: floorPx, measure: measure)
                need = max(need, Double(all.lines.count) * TextMetrics.lineHeight(floorPx))
            }
            return need
        }

        // The switch: a target high, as wide as its longer label needs.
        let both = methods == .both
        var toggleH = 0.0, toggleW = 0.0
        var tFont = fontPx * 0.8
        let contentW = w - 2 * margin, contentH = h - 2 * margin
        let columns2 = !portrait
        let colMax = Self.columnMax * unit
        // Two columns are balanced (equal) when the grid or keypad fits half the width;
        // else the right column takes what it needs and the left the rest.
        let colW = columns2 ? min((contentW - gap) / 2, colMax) : min(contentW, colMax)
        let leftMin = min(colW, 150 * dp)
        let rightMaxW = columns2 ? max(colW, min(colMax, contentW - gap - leftMin)) : colW
        if both { toggleH = switchHeight ?? max(target, 48 * unit) }
        var cut: [String] = []
        tFont = min(tFont, max(toggleH * 0.45, Self.minimumText * dp))
        /// The switch's width and label size in a column `avail` wide: 24 dp beside the
        /// longer label, or down to 12 dp while its size shrinks, down to 12 dp; a label
        /// still too long goes on two lines, or is cut with an ellipsis (`cutLabels`).
        func fitToggle(_ avail: Double) {
            let pad = 24 * dp, floor = Self.minimumText * dp
            func widest(_ s: Double) -> Double { toggleLabels.map { measure.width($0, size: s) }.max() ?? 6 * s }
            if widest(tFont) + 2 * pad > avail {
                var s = tFont
                for label in toggleLabels { s = min(s, measure.largestSize(label, fitting: avail - pad, upTo: s)) }
                tFont = max(floor, s)
            }
            toggleW = min(avail, max(widest(tFont) + 2 * pad, 2 * toggleH))
            cut = toggleLabels.filter {
                TextMetrics.label($0, width: toggleW - pad + 0.5, height: toggleH, size: tFont, measure: measure).last?.hasSuffix("…") == true
            }
        }

        // The main element of each screen, sized by one number p (a cell, a key pitch).
        struct Main { var lo: Double; var hi: Double; var width: (Double) -> Double; var height: (Double) -> Double }
        let boxBandMax = Self.boxBandMax * unit
        func boxBand(_ pitch: Double) -> Double { min(boxBandMax, max(target, pitch * 0.8)) }
        let cellLo = target / max(0.1, min(1, hitFactor))
        let pattern = Main(lo: cellLo, hi: max(cellLo, Self.cellMax * unit),
                           width: { Double(columns) * $0 }, height: { Double(rows) * $0 })
        let pitchLo = target / Self.keyFraction
        let keypadInColumn = Main(lo: pitchLo, hi: max(pitchLo, Self.pitchMax * unit),
                                  width: { 3 * $0 }, height: { boxBand($0) + gap + 4 * $0 })
        let keypadAlone = Main(lo: pitchLo, hi: max(pitchLo, Self.pitchMax * unit),
                               width: { 3 * $0 }, height: { 4 * $0 })

        // The height left for the main element once the rest of its column is placed.
        let around: Double
        if columns2 {
            around = 0
        } else {
            around = (both ? toggleH + gap : 0) + gap
        }
        func solve(_ m: Main, width: Double, height: Double, prompt: Double) -> Double {
            let room = height - prompt
            if let p = Self.largest(m.lo, m.hi, { m.width($0) <= width && m.height($0) <= room }) { return p }
            return Self.largest(1, m.lo, { m.width($0) <= width && m.height($0) <= height - promptMin }) ?? 1
        }
        let promptInColumn = columns2 ? 0 : promptNeed(colW, promptPref)
        let hasPattern = methods != .code, hasCode = methods != .pattern
        let codeMain = columns2 ? keypadAlone : keypadInColumn
        // The information area (clock, message, logo) above the prompt. In one column it
        // has its full size while the grid or keypad keeps its 48 dp targets, else it
        // shrinks, down to 0.4 of it, then leaves parts out; the targets never shrink for it.
        let infoGap = (gap / 2).rounded()
        let messageText = theme.fontSize * 0.8
        let infoUnit = unit
        let infoWidths = parts.clock == .off ? InfoLayout.Widths() : InfoLayout.Widths(measure, size: InfoLayout.timeText * infoUnit)
        func infoFit(_ room: Double, width: Double) -> (parts: InfoParts, scale: Double, sizes: InfoLayout.Sizes, leftOut: [String])? {
            InfoLayout.fit(parts, room: room, width: width, unit: infoUnit, dp: dp, gap: infoGap, messageText: messageText,
                           widths: infoWidths)
        }
        var infoFitted: (parts: InfoParts, scale: Double, sizes: InfoLayout.Sizes, leftOut: [String])? = nil
        var infoLeftOut: [String] = []
        var mainRoom = contentH - around
        if !parts.isEmpty && !columns2 {
            let full = InfoLayout.sizes(parts, s: 1, width: colW, unit: infoUnit, dp: dp, gap: infoGap, messageText: messageText,
                                        widths: infoWidths)
            func fitsAtTargets(_ room: Double, prompt: Double) -> Bool {
                (!hasPattern || (pattern.width(pattern.lo) <= rightMaxW && pattern.height(pattern.lo) <= room - prompt))
                    && (!hasCode || (codeMain.width(codeMain.lo) <= rightMaxW && codeMain.height(codeMain.lo) <= room - prompt))
            }
            let mainAtTargets = max(hasPattern ? pattern.height(pattern.lo) : 0, hasCode ? codeMain.height(codeMain.lo) : 0)
            if fitsAtTargets(mainRoom - full.height - gap, prompt: promptInColumn) {
                infoFitted = (parts, 1, full, [])
            } else if fitsAtTargets(mainRoom, prompt: promptMin) {
                // The prompt shrinks to its smallest first (wrapped, 12 dp), as without it.
                infoFitted = infoFit(mainRoom - promptMin - mainAtTargets - gap, width: colW)
            }
            if infoFitted == nil { infoLeftOut = ["logo", "date", "clock", "message"].filter { n in
                switch n { case "logo": parts.logo; case "date": parts.clock == .dateTime
                case "clock": parts.clock != .off; default: parts.message } } }
            if let f = infoFitted { mainRoom -= f.sizes.height + gap }
        }
        let cell = hasPattern ? solve(pattern, width: rightMaxW, height: mainRoom, prompt: promptInColumn) : 0
        let pitch = hasCode ? solve(codeMain, width: rightMaxW, height: mainRoom, prompt: promptInColumn) : 0
        let mainW = max(hasPattern ? pattern.width(cell) : 0, hasCode ? codeMain.width(pitch) : 0)
        let mainH = max(hasPattern ? pattern.height(cell) : 0, hasCode ? codeMain.height(pitch) : 0)
        let mainTarget = min(hasPattern ? cell * min(1, hitFactor) : .infinity, hasCode ? pitch * Self.keyFraction : .infinity)
        self.mainTarget = mainTarget.isFinite ? mainTarget : nil
        minimumTarget = min(mainTarget, both ? toggleH : .infinity)

        func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double) -> PixelRect {
            let x0 = x.rounded(), y0 = y.rounded()
            return PixelRect(x: Int(x0), y: Int(y0), width: Int((x + w).rounded() - x0), height: Int((y + h).rounded() - y0))
        }
        func keys(left: Double, top: Double, pitch: Double) -> [PixelRect] {
            let key = min(pitch.rounded(.down), (pitch * Self.keyFraction).rounded(.up))
            return (0..<12).map { i in
                let cx = left + (Double(i % 3) + 0.5) * pitch, cy = top + (Double(i / 3) + 0.5) * pitch
                return PixelRect(x: Int((cx - key / 2).rounded()), y: Int((cy - key / 2).rounded()),
                                 width: Int(key), height: Int(key))
            }
        }
        func boxes(in band: PixelRect) -> [PixelRect] {
            let n = Double(length)
            let bw = min(Double(band.width) * 0.95 / (n * 1.5 - 0.5), Double(band.height) / 1.25).rounded(.down)
            let bh = min(Double(band.height), max(bw * 1.25, Double(band.height) * 0.8)).rounded(.down)
            let step = (bw * 1.5).rounded(.down)
            let row = step * (n - 1) + bw
            let x0 = (Double(band.x) + (Double(band.width) - row) / 2).rounded()
            let y0 = (Double(band.y) + (Double(band.height) - bh) / 2).rounded()
            return (0..<length).map { PixelRect(x: Int(x0 + Double($0) * step), y: Int(y0), width: Int(bw), height: Int(bh)) }
        }

        var gridOrigin = Point(x: 0, y: 0)
        var pad: CodePadLayout? = nil
        var toggle: PixelRect? = nil
        var infoLayout: InfoLayout? = nil
        if !columns2 {
            // One column: the information, the prompt, main, switch, centred as a block.
            let infoH = infoFitted.map { $0.sizes.height + gap } ?? 0
            let promptH = max(0, min(promptInColumn, contentH - around - mainH - infoH))
            let block = infoH + promptH + gap + mainH + (both ? gap + toggleH : 0)
            let top = margin + max(0, (contentH - block) / 2)
            let left = (w - colW) / 2
            if let f = infoFitted {
                infoLayout = InfoLayout(area: rect(left, top, colW, f.sizes.height), parts: f.parts, sizes: f.sizes,
                                        gap: infoGap, dp: dp, leftOut: f.leftOut)
            }
            let promptTop = top + infoH
            let mainTop = promptTop + promptH + gap
            patternPrompt = rect(left, promptTop, colW, promptH)
            if hasPattern {
                gridOrigin = Point(x: (w - pattern.width(cell)) / 2, y: mainTop + (mainH - pattern.height(cell)) / 2)
            }
            if hasCode {
                let ch = codeMain.height(pitch)
                let y0 = mainTop + (mainH - ch) / 2
                let band = rect(left, y0, colW, boxBand(pitch))
                pad = CodePadLayout(boxes: boxes(in: band), keys: keys(left: (w - 3 * pitch) / 2, top: y0 + boxBand(pitch) + gap, pitch: pitch),
                                    boxArea: band, promptBox: patternPrompt)
            }
            if both {
                fitToggle(colW)
                toggle = rect((w - toggleW) / 2, mainTop + mainH + gap, toggleW, toggleH)
            }
        } else {
            // Two columns: the left holds the prompt (and the boxes) and the switch, the right
            // the grid or the keypad; both centred on the screen's middle.
            let rightW = max(colW, mainW), leftW = mainW > colW ? contentW - gap - rightW : colW
            let total = leftW + gap + rightW
            // `left` is the prompt's column, `right` the grid's or keypad's; written right to
            // left, the prompt's column is on the right. Inside a column nothing is mirrored:
            // the keypad keeps a phone's order and the boxes fill as digits are written.
            let start = (w - total) / 2
            let left = direction == .leftToRight ? start : start + rightW + gap
            let right = direction == .leftToRight ? start + leftW + gap : start
            let colW = leftW
            let promptTall = promptNeed(colW, promptPref)
            let bandH = hasCode ? boxBand(pitch) : 0
            var leftNeed = promptTall + (hasCode ? gap + bandH : 0) + (both ? gap + toggleH : 0)
            if !parts.isEmpty {
                infoFitted = infoFit(contentH - leftNeed - gap, width: colW)
                if let f = infoFitted { leftNeed += f.sizes.height + gap } else { infoLeftOut = ["everything"] }
            }
            let blockH = min(contentH, max(mainH, leftNeed))
            let top = margin + (contentH - blockH) / 2
            let midY = top + blockH / 2
            let bottom = top + blockH
            if both {
                fitToggle(colW)
                toggle = rect(left + (colW - toggleW) / 2, bottom - toggleH, toggleW, toggleH)
            }
            let aboveSwitch = both ? bottom - toggleH - gap : bottom
            if let f = infoFitted {
                // The information, the prompt and the boxes one under another, centred
                // above the switch; the prompt at the same place on both screens.
                let promptH = promptTall
                let stackH = f.sizes.height + gap + promptH + (hasCode ? gap + bandH : 0)
                let stackTop = top + max(0, (aboveSwitch - top - stackH) / 2)
                infoLayout = InfoLayout(area: rect(left, stackTop, colW, f.sizes.height), parts: f.parts, sizes: f.sizes,
                                        gap: infoGap, dp: dp, leftOut: f.leftOut)
                let promptTop = stackTop + f.sizes.height + gap
                patternPrompt = hasPattern ? rect(left, promptTop, colW, promptH) : rect(left, promptTop, colW, 0)
                if hasPattern {
                    gridOrigin = Point(x: right + (rightW - pattern.width(cell)) / 2, y: midY - pattern.height(cell) / 2)
                }
                if hasCode {
                    let prompt = rect(left, promptTop, colW, promptH)
                    let band = rect(left, promptTop + promptH + gap, colW, bandH)
                    let ky = midY - 2 * pitch
                    pad = CodePadLayout(boxes: boxes(in: band), keys: keys(left: right + (rightW - 3 * pitch) / 2, top: ky, pitch: pitch),
                                        boxArea: band, promptBox: prompt)
                }
            } else if hasPattern {
                gridOrigin = Point(x: right + (rightW - pattern.width(cell)) / 2, y: midY - pattern.height(cell) / 2)
                let promptH = min(promptTall, aboveSwitch - top)
                let cy = min(midY, aboveSwitch - promptH / 2)
                patternPrompt = rect(left, cy - promptH / 2, colW, promptH)
            } else {
                patternPrompt = rect(left, top, colW, 0)
            }
            if hasCode && infoFitted == nil {
                // The boxes at the middle (above the switch if it is in the way), the prompt above.
                let by = min(midY - bandH / 2, aboveSwitch - bandH)
                let band = rect(left, by, colW, bandH)
                let promptH = max(0, min(promptTall, by - gap - top))
                let prompt = rect(left, by - gap - promptH, colW, promptH)
                let ky = midY - 2 * pitch
                pad = CodePadLayout(boxes: boxes(in: band), keys: keys(left: right + (rightW - 3 * pitch) / 2, top: ky, pitch: pitch),
                                    boxArea: band, promptBox: prompt)
            }
        }
        toggleFontSize = tFont
        cutLabels = cut
        info = infoLayout
        self.infoLeftOut = infoLayout?.leftOut ?? infoLeftOut
        grid = PatternGrid(rows: rows, columns: columns, origin: gridOrigin, cell: max(cell, 1), hitFactor: hitFactor)
        self.pad = pad
        self.toggle = toggle
    }

    /// The largest p in lo...hi for which `fits` holds (fits is monotonic), nil if not even lo fits.
    static func largest(_ lo: Double, _ hi: Double, _ fits: (Double) -> Bool) -> Double? {
        guard lo <= hi, fits(lo) else { return nil }
        if fits(hi) { return hi }
        var a = lo, b = hi
        for _ in 0..<48 {
            let m = (a + b) / 2
            if fits(m) { a = m } else { b = m }
        }
        return a
    }

    /// The theme's sizes (in dp) in pixels for this screen.
    public func pixels(_ theme: Theme) -> Theme { theme.scaled(by: unit) }
}
