import TouchlockCore

/// Copying a logical rectangle of XRGB pixels to a panel buffer turned by a `Rotation`:
/// the copy from the shadow buffer to scanout when the picture is rotated. Pure: it reads
/// only `source` and writes only the rectangle's image in `destination`, never reading it
/// (scanout memory is write-combined, and reads from it are slow).
public enum RotatedCopy {
    /// Side of the square tiles a quarter turn is copied in: a tile's source rows stay in
    /// the cache while its destination rows are written whole, left to right.
    static let tile = 32

    /// Copies `rect` (logical pixels, clipped to `size`) of `source` (the logical picture,
    /// `size`, `sourceStride` bytes a row) to where `rotation` puts it in `destination` (the
    /// panel, `rotation.panelSize(logical: size)`, `destinationStride` bytes a row).
    public static func copy(_ rect: PixelRect, from source: UnsafeRawPointer, stride sourceStride: Int, size: Size,
                            rotation: Rotation, to destination: UnsafeMutableRawPointer, stride destinationStride: Int) {
        let r = rect.intersection(PixelRect(x: 0, y: 0, width: size.width, height: size.height))
        if r.isEmpty { return }
        let panel = rotation.panelSize(logical: size)
        let p = rotation.panelRect(r, panel: panel)
        let sp = sourceStride / 4, dp = destinationStride / 4  // strides in pixels
        let src = source.assumingMemoryBound(to: UInt32.self)
        let dst = destination.assumingMemoryBound(to: UInt32.self)
        switch rotation {
        case .degrees0:
            for y in r.y..<r.maxY {
                (dst + y * dp + r.x).update(from: src + y * sp + r.x, count: r.width)
            }
        case .degrees180:
            // Panel row py shows logical row H-1-py, right to left.
            for py in p.y..<p.maxY {
                let s = src + (size.height - 1 - py) * sp + (size.width - 1 - p.x)
                let d = dst + py * dp + p.x
                for i in 0..<p.width { d[i] = s[-i] }
            }
        case .degrees90, .degrees270:
            // 90: panel (px, py) shows logical (py, W'-1-px), W' the panel's width: a panel
            // row is a logical column read bottom to top. 270: logical (H'-1-py, px), a
            // column read top to bottom.
            let down = rotation == .degrees270
            var ty = p.y
            while ty < p.maxY {
                let ty1 = min(ty + tile, p.maxY)
                var tx = p.x
                while tx < p.maxX {
                    let tx1 = min(tx + tile, p.maxX)
                    // Four panel rows at a time: each source row gives them four
                    // neighbouring pixels (one read of 16 bytes), then one row at a time.
                    var py = ty
                    while py + 4 <= ty1 {
                        let d0 = dst + py * dp, d1 = d0 + dp, d2 = d1 + dp, d3 = d2 + dp
                        if down {
                            var s = src + tx * sp + (panel.height - 1 - py)
                            for px in tx..<tx1 { d0[px] = s[0]; d1[px] = s[-1]; d2[px] = s[-2]; d3[px] = s[-3]; s += sp }
                        } else {
                            var s = src + (panel.width - 1 - tx) * sp + py
                            for px in tx..<tx1 { d0[px] = s[0]; d1[px] = s[1]; d2[px] = s[2]; d3[px] = s[3]; s -= sp }
                        }
                        py += 4
                    }
                    while py < ty1 {
                        let d = dst + py * dp
                        if down {
                            var s = src + tx * sp + (panel.height - 1 - py)
                            for px in tx..<tx1 { d[px] = s.pointee; s += sp }
                        } else {
                            var s = src + (panel.width - 1 - tx) * sp + py
                            for px in tx..<tx1 { d[px] = s.pointee; s -= sp }
                        }
                        py += 1
                    }
                    tx = tx1
                }
                ty = ty1
            }
        }
    }
}

extension ShadowBuffer {
    /// Copies `rects` (logical, clipped to the buffer) into `destination`, the panel's
    /// buffer (`rotation.panelSize(logical: size)`, its own stride), turned by `rotation`.
    /// Reads only from the shadow, never from the destination.
    public func copy(_ rects: [PixelRect], to destination: UnsafeMutableRawPointer, stride dstStride: Int,
                     rotation: Rotation) {
        if rotation == .degrees0 { return copy(rects, to: destination, stride: dstStride) }
        for r in rects {
            RotatedCopy.copy(r, from: pixels, stride: stride, size: size, rotation: rotation,
                             to: destination, stride: dstStride)
        }
    }
}
