/// How wide text is drawn. Core draws no text, yet the layout must know whether a text
/// fits its box: it asks a measure, which the renderer's layer gives (the text shaped
/// and measured in the font it is drawn in: what is measured is what is drawn).
public protocol TextMeasure: Sendable {
    /// How wide `text` is drawn `size` px high (`bold`: in the bold face).
    func width(_ text: String, size: Double, bold: Bool) -> Double
}

extension TextMeasure {
    public func width(_ text: String, size: Double) -> Double { width(text, size: size, bold: false) }

    /// The largest size up to `size` at which `text` is at most `width` wide (text is
    /// nearly proportional to its size; a few steps settle the rounding of advances).
    public func largestSize(_ text: String, fitting width: Double, upTo size: Double, bold: Bool = false) -> Double {
        var s = size
        for _ in 0..<6 {
            let w = self.width(text, size: s, bold: bold)
            if w <= width || w <= 0 { return s }
            s *= width / w * 0.999
        }
        return s
    }
}

/// The measure with no font at hand: TextMetrics's estimate, never narrower than the
/// default faces draw (for Core's own tests and tools; the daemon measures drawn text).
public struct EstimatedTextMeasure: TextMeasure {
    public init() {}
    public func width(_ text: String, size: Double, bold: Bool) -> Double { TextMetrics.estimatedWidth(text, size: size) }
}

/// A conservative estimate of a text's advance from its font size and characters, with no
/// font at hand: per character a fraction of the size, chosen above what DejaVu Sans (the
/// default face) and WenQuanYi Micro Hei (the face for CJK) advance for that class of
/// character (the render tests measure every message with cairo against it).
public enum TextMetrics {
    /// The fraction of the font size a character of each class advances at most.
    static func advance(_ c: Unicode.Scalar) -> Double {
        switch c.value {
        case 0x20: 0.34                                  // space (DejaVu: 0.318)
        case 0x21...0x2f, 0x3a...0x40, 0x5b...0x60, 0x7b...0x7e: 0.52  // punctuation
        case 0x30...0x39: 0.68                           // digits (DejaVu: 0.636, 8 px at 12 px hinted)
        case 0x41...0x5a: 0.82                           // capitals (DejaVu: up to 0.79 for W... M 0.863)
        case 0x61...0x7a: 0.66                           // lower case (DejaVu: m 0.974, i 0.278; 0.6 on average)
        case 0x00...0x7f: 0.66
        case 0x2e80...0xffef: 1.04                       // CJK, full width (1.0)
        default: 0.8
        }
    }

    /// A width the text, drawn `size` high, does not exceed.
    public static func estimatedWidth(_ text: String, size: Double) -> Double {
        text.unicodeScalars.reduce(0) { $0 + advance($1) } * size
    }

    /// The height of one line of text of `size` (ascent plus descent, with some leading).
    public static func lineHeight(_ size: Double) -> Double { size * 1.25 }
}

extension TextMetrics {
    /// How `text` is set in a box of `width` x `height`: on one line at `size` if it fits;
    /// else on the one or two lines (split at a space, or between characters of text
    /// without spaces) that allow the largest size, down to `minimum`, and below it only
    /// when nothing else fits. The prompt wraps before it shrinks, and shrinks before
    /// anything else on the screen does.
    public static func fit(_ text: String, width: Double, height: Double, size: Double,
                           minimum: Double, measure: any TextMeasure) -> (lines: [String], size: Double) {
        guard !text.isEmpty, width > 0, height > 0 else { return ([text], size) }
        /// The width of `t` per px of size, measured at `size`.
        func perPx(_ t: String) -> Double { measure.width(t, size: size) / size }
        let s1 = min(measure.largestSize(text, fitting: width, upTo: size), height / lineHeight(1))
        if s1 >= size { return ([text], size) }
        // The split whose longer line is the shortest.
        let chars = Array(text)
        var cuts: [Int] = chars.indices.filter { chars[$0] == " " }
        let spaced = !cuts.isEmpty
        if !spaced { cuts = Array(chars.indices.dropFirst()) }
        var best: (lines: [String], size: Double)? = nil
        var bestLonger = Double.infinity
        for c in cuts {
            let a = String(chars[..<c]), b = String(chars[(spaced ? c + 1 : c)...])
            if a.isEmpty || b.isEmpty { continue }
            // The most even split: the largest size, and the shortest longer line.
            let longer = max(perPx(a), perPx(b)) * 1.0001
            if longer < bestLonger {
                bestLonger = longer
                best = ([a, b], min(size, width / longer, height / (2 * lineHeight(1))))
            }
        }
        if var b = best, let longer = b.lines.max(by: { measure.width($0, size: b.size) < measure.width($1, size: b.size) }) {
            // Measured again at the size chosen, the longer line fits.
            b.size = measure.largestSize(longer, fitting: width, upTo: b.size)
            best = b
        }
        var set = ([text], s1)
        if let best, best.size > s1 * 1.05 || (s1 < minimum && best.size > s1) { set = best }
        // Never below `minimum`: on more lines, at the largest size from `minimum` up at
        // which the whole text fits the box, else cut with an ellipsis.
        if set.1 < minimum - 1e-9, minimum <= size {
            return wrap(text, width: width, height: height, size: size, minimum: minimum, measure: measure)
        }
        return set
    }

    /// A label set in a `width` x `height` control at `size`: on one line if it fits, else on
    /// two split at a space (the most even split that fits), else on one line cut with an
    /// ellipsis.
    public static func label(_ text: String, width: Double, height: Double, size: Double,
                             measure: any TextMeasure) -> [String] {
        if measure.width(text, size: size) <= width { return [text] }
        if 2 * lineHeight(size) <= height {
            let chars = Array(text)
            var best: [String]? = nil, bestLonger = Double.infinity
            for c in chars.indices where chars[c] == " " {
                let a = String(chars[..<c]), b = String(chars[(c + 1)...])
                let longer = max(measure.width(a, size: size), measure.width(b, size: size))
                if !a.isEmpty, !b.isEmpty, longer <= width, longer < bestLonger { best = [a, b]; bestLonger = longer }
            }
            if let best { return best }
        }
        return [ellipsized(text, width: width, size: size, measure: measure)]
    }

    /// `text` cut at its end with an ellipsis so that it is at most `width` wide at `size`
    /// (itself when it fits).
    public static func ellipsized(_ text: String, width: Double, size: Double, measure: any TextMeasure) -> String {
        if measure.width(text, size: size) <= width { return text }
        var kept = Substring(text)
        while !kept.isEmpty, measure.width(kept.trimmingSuffixSpaces + "…", size: size) > width { kept.removeLast() }
        return kept.trimmingSuffixSpaces + "…"
    }
}

extension TextMetrics {
    /// How a paragraph is set in a box of `width` x `height`: wrapped at spaces (or, in a
    /// word longer than a line, between characters) onto as many lines as the box holds,
    /// at the largest size from `size` down to `minimum` at which all of it fits; at
    /// `minimum`, what does not fit is cut and the last line ends in an ellipsis.
    public static func wrap(_ text: String, width: Double, height: Double, size: Double,
                            minimum: Double, measure: any TextMeasure) -> (lines: [String], size: Double) {
        guard !text.isEmpty, width > 0, height > 0, size > 0 else { return ([], size) }
        func set(_ s: Double) -> [String] {
            var lines: [String] = [], line = ""
            for word in text.split(separator: " ", omittingEmptySubsequences: true).map(String.init) {
                let candidate = line.isEmpty ? word : line + " " + word
                if measure.width(candidate, size: s) <= width { line = candidate; continue }
                if !line.isEmpty { lines.append(line) }
                line = ""
                // A word longer than a line is cut between characters.
                for ch in word {
                    if measure.width(line + String(ch), size: s) > width, !line.isEmpty { lines.append(line); line = "" }
                    line.append(ch)
                }
            }
            if !line.isEmpty { lines.append(line) }
            return lines
        }
        func room(_ s: Double) -> Int { max(1, Int(height / lineHeight(s) + 1e-9)) }
        let low = min(minimum, size)
        if let s = ScreenLayout.largest(low, size, { set($0).count <= room($0) }) {
            return (set(s), s)
        }
        let all = set(low)
        var lines = Array(all.prefix(room(low)))
        if lines.count < all.count, let last = lines.popLast() {
            lines.append(ellipsized(last + " " + all[lines.count + 1], width: width, size: low, measure: measure))
        }
        return (lines, low)
    }
}

/// The direction a paragraph is written in.
public enum TextDirection: String, Hashable, Sendable {
    case leftToRight = "ltr"
    case rightToLeft = "rtl"

    /// That of the paragraph's first strong character (Unicode's rule P2): a letter of
    /// Hebrew, Arabic and the other right-to-left scripts, or a right-to-left mark, makes
    /// it right to left; any other letter left to right. Digits, punctuation and spaces
    /// are not strong. Text with no strong character is left to right.
    public init(of text: String) {
        for c in text.unicodeScalars {
            switch c.value {
            case 0x200f, 0x202b, 0x202e, 0x2067: self = .rightToLeft; return  // RLM, RLE, RLO, RLI
            case 0x200e, 0x202a, 0x202d, 0x2066: self = .leftToRight; return  // LRM, LRE, LRO, LRI
            case 0x0590...0x08ff, 0xfb1d...0xfdff, 0xfe70...0xfefe, 0x10800...0x10fff, 0x1e800...0x1efff:
                if c.properties.isAlphabetic { self = .rightToLeft; return }
            default:
                if c.properties.isAlphabetic || c.properties.isIdeographic { self = .leftToRight; return }
            }
        }
        self = .leftToRight
    }
}

extension Substring {
    /// Without the spaces it ends in.
    var trimmingSuffixSpaces: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
