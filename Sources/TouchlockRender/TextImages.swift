import CCairo
import TouchlockCore

/// Text as it was drawn, kept as coverage masks, so that a start can draw the lock
/// screen's text without FreeType: on a device the same layout draws the same strings at
/// the same places at every start, and opening a face and rasterising its glyphs was about
/// an eighth of the time from exec to the first frame in the VM protocol (and 1.3 MB of
/// resident FreeType, font and cairo font code).
///
/// A mask is the text's coverage drawn once by cairo itself into an A8 image, at the same
/// fraction of a pixel as on the screen. The renderer paints every text in its colour
/// through its mask, just drawn or read back, so a start that reads the masks shows the
/// same pixels as the start that drew them. Only text set in a face read from a font file
/// is kept, keyed by the file's size and modification time, so a font that changes is
/// drawn afresh.
///
/// The masks are shared by every output's renderer; the daemon reads them from a file at
/// start and writes back (`encoded`) the ones drawn since, when any were new.
public final class TextImages {
    struct Image {
        var x: Int32, y: Int32, width: Int32, height: Int32
        /// A8 coverage, `stride` bytes a row, owned by the `TextImages` that holds it.
        var coverage: UnsafeMutableRawBufferPointer
        static func stride(_ width: Int32) -> Int { Int(cairo_format_stride_for_width(CAIRO_FORMAT_A8, width)) }
        var stride: Int { Self.stride(width) }

        /// An image of `width` x `height` with its coverage all zero.
        init(x: Int32, y: Int32, width: Int32, height: Int32) {
            self.x = x; self.y = y; self.width = width; self.height = height
            coverage = .allocate(byteCount: Self.stride(width) * Int(height), alignment: 16)
            coverage.initializeMemory(as: UInt8.self, repeating: 0)
        }
    }

    private var images: [String: Image] = [:]
    /// How wide text set in a face read from a font file was measured, by the same kind of
    /// key: the layout's measure reads them, so a start that finds them and the masks
    /// needs no face at all. Kept for the first `capacity` texts measured.
    private var widths: [String: Double] = [:]
    private var widthsOrder: [String] = []
    /// cairo surfaces over `images`' bytes, made at first use.
    private var surfaces: [String: OpaquePointer] = [:]
    /// The keys drawn since the masks were read, in the order first drawn: only these
    /// are written back.
    private var used: Set<String> = []
    private var usedOrder: [String] = []
    /// Whether a mask was added since the last `encoded()`.
    public private(set) var changed = false

    /// At most this many masks are kept, and at most `byteBudget` bytes of them: the first
    /// drawn (start-up's text comes first). Text drawn once they are full is drawn from
    /// its glyphs every time, as a countdown's, which is a new string every second for as
    /// long as a lockout lasts.
    public static let capacity = 512
    public static let byteBudget = 4 << 20
    /// The bytes of coverage held.
    public private(set) var bytes = 0

    public init() {}

    deinit {
        for s in surfaces.values { cairo_surface_destroy(s) }
        for image in images.values { image.coverage.deallocate() }
    }

    public var count: Int { images.count }
    /// What the masks are kept under.
    var keys: Dictionary<String, Image>.Keys { images.keys }

    /// The mask drawn for `key`, as a cairo A8 surface and the pixel it goes at.
    func surface(_ key: String) -> (surface: OpaquePointer, x: Int32, y: Int32)? {
        guard let image = images[key] else { return nil }
        markUsed(key)
        if let s = surfaces[key] { return (s, image.x, image.y) }
        let s = Self.surface(over: image)
        surfaces[key] = s
        return (s, image.x, image.y)
    }

    /// A cairo A8 surface drawing into `image`'s coverage in place.
    static func surface(over image: Image) -> OpaquePointer {
        cairo_image_surface_create_for_data(image.coverage.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                            CAIRO_FORMAT_A8, image.width, image.height, Int32(image.stride))!
    }

    /// Keeps `image` for `key`, and then owns its coverage; false (the caller still owns
    /// it) when the masks are full.
    @discardableResult
    func add(_ key: String, _ image: Image) -> Bool {
        guard fits(key, image) else { return false }
        store(key, image)
        markUsed(key)
        changed = true
        return true
    }

    /// Whether `image` can be kept for `key` within `capacity` and `byteBudget`.
    private func fits(_ key: String, _ image: Image) -> Bool {
        let replaced = images[key]?.coverage.count ?? 0
        return (images[key] != nil || images.count < Self.capacity)
            && bytes - replaced + image.coverage.count <= Self.byteBudget
    }

    /// Keeps `image` for `key`, letting go of the mask it replaces.
    private func store(_ key: String, _ image: Image) {
        if let s = surfaces.removeValue(forKey: key) { cairo_surface_destroy(s) }
        let replaced = images.updateValue(image, forKey: key)
        bytes += image.coverage.count - (replaced?.coverage.count ?? 0)
        replaced?.coverage.deallocate()
    }

    /// The width measured for `key` before, if any.
    func width(_ key: String) -> Double? { widths[key] }

    /// Keeps the width measured for `key` (while fewer than `capacity` are kept).
    func addWidth(_ key: String, _ width: Double) {
        guard widths[key] == nil, widths.count < Self.capacity else { return }
        widths[key] = width
        widthsOrder.append(key)
        changed = true
    }

    private func markUsed(_ key: String) {
        if used.insert(key).inserted { usedOrder.append(key) }
    }

    // MARK: the file

    static let magic = Array("touchlock text images 2\n".utf8)
    /// The file before widths were kept in it: its masks are read all the same.
    static let magicMasksOnly = Array("touchlock text images 1\n".utf8)

    public struct DecodeError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads masks written by `encoded()`. A file cut short, changed or of another
    /// version is refused whole: nothing of it is used.
    public convenience init(decoding bytes: [UInt8]) throws(DecodeError) {
        self.init()
        let head = Array(bytes.prefix(Self.magic.count))
        guard bytes.count >= Self.magic.count + 8, head == Self.magic || head == Self.magicMasksOnly else {
            throw DecodeError(description: "not a text image file")
        }
        let body = bytes[..<(bytes.count - 4)]
        var reader = Reader(bytes: bytes, at: bytes.count - 4)
        guard let sum = reader.u32(), CRC32.checksum(body) == sum else {
            throw DecodeError(description: "checksum mismatch")
        }
        reader = Reader(bytes: bytes, at: Self.magic.count, end: bytes.count - 4)
        guard let n = reader.u32() else { throw DecodeError(description: "cut short") }
        for _ in 0..<n {
            guard let keyLength = reader.u32(), let keyBytes = reader.bytes(Int(keyLength)),
                  let x = reader.u32(), let y = reader.u32(), let w = reader.u32(), let h = reader.u32(),
                  (1...16384).contains(w), (1...16384).contains(h) else {
                throw DecodeError(description: "cut short or malformed")
            }
            guard let coverage = reader.bytes(Image.stride(Int32(w)) * Int(h)) else { throw DecodeError(description: "cut short") }
            let image = Image(x: Int32(bitPattern: x), y: Int32(bitPattern: y), width: Int32(w), height: Int32(h))
            image.coverage.copyBytes(from: coverage)
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard fits(key, image) else {
                image.coverage.deallocate()
                throw DecodeError(description: "more masks than are ever kept")
            }
            store(key, image)
        }
        if head == Self.magic {
            guard let m = reader.u32(), m <= UInt32(Self.capacity) else { throw DecodeError(description: "cut short or malformed") }
            for _ in 0..<m {
                guard let keyLength = reader.u32(), let keyBytes = reader.bytes(Int(keyLength)),
                      let low = reader.u32(), let high = reader.u32() else { throw DecodeError(description: "cut short") }
                let w = Double(bitPattern: UInt64(high) << 32 | UInt64(low))
                guard w.isFinite, w >= 0 else { throw DecodeError(description: "malformed width") }
                let key = String(decoding: keyBytes, as: UTF8.self)
                if widths.updateValue(w, forKey: key) == nil { widthsOrder.append(key) }
            }
        }
        guard reader.atEnd else { throw DecodeError(description: "trailing bytes") }
    }

    /// The masks drawn since they were read (the first `capacity` of them) and the widths
    /// kept, as a file; clears `changed`.
    public func encoded() -> [UInt8] {
        changed = false
        let keys = usedOrder.prefix(Self.capacity)
        var out = Self.magic
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        u32(UInt32(keys.count))
        for key in keys {
            let image = images[key]!
            let k = Array(key.utf8)
            u32(UInt32(k.count)); out += k
            u32(UInt32(bitPattern: image.x)); u32(UInt32(bitPattern: image.y))
            u32(UInt32(image.width)); u32(UInt32(image.height))
            out += UnsafeRawBufferPointer(image.coverage)
        }
        u32(UInt32(widthsOrder.count))
        for key in widthsOrder {
            let k = Array(key.utf8)
            u32(UInt32(k.count)); out += k
            let bits = widths[key, default: 0].bitPattern
            u32(UInt32(truncatingIfNeeded: bits)); u32(UInt32(truncatingIfNeeded: bits >> 32))
        }
        u32(CRC32.checksum(out))
        return out
    }

    private struct Reader {
        let bytes: [UInt8]
        var at: Int
        var end: Int
        init(bytes: [UInt8], at: Int, end: Int? = nil) { self.bytes = bytes; self.at = at; self.end = end ?? bytes.count }
        var atEnd: Bool { at == end }
        mutating func u32() -> UInt32? {
            guard end - at >= 4 else { return nil }
            defer { at += 4 }
            return UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        mutating func bytes(_ n: Int) -> [UInt8]? {
            guard n >= 0, end - at >= n else { return nil }
            defer { at += n }
            return Array(bytes[at..<(at + n)])
        }
    }
}
