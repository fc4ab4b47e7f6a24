import Testing
import TouchlockCore
import TouchlockWayland

/// A lock surface's buffers have the output's own pixels at every scale the compositor
/// gives: the sizes a compositor configures at 1, 1.25, 1.5, 1.75, 2 and 3, on panels a
/// kiosk has.
@Suite struct SurfaceScaleTests {
    /// wlroots configures a lock surface at the output's size over its scale, truncated.
    static func units(_ pixels: Size, over scale: Double) -> Size {
        Size(width: Int(Double(pixels.width) / scale), height: Int(Double(pixels.height) / scale))
    }

    @Test(arguments: [Size(width: 1280, height: 720), Size(width: 1920, height: 1080),
                      Size(width: 800, height: 480), Size(width: 1024, height: 600), Size(width: 2560, height: 1440)])
    func fractionalBuffersAreTheOutputsPixels(output: Size) {
        for per120 in [120, 150, 180, 210, 240, 360] {
            let units = Self.units(output, over: Double(per120) / 120)
            let pixels = SurfaceScale.fractional(per120: per120).pixels(for: units)
            // The surface's units are truncated, so the buffer may be short of the output
            // by less than one unit's pixels, never larger.
            let most = (per120 + 119) / 120
            #expect(pixels.width <= output.width && output.width - pixels.width < most,
                    "\(output.width) at \(per120)/120: \(pixels.width)")
            #expect(pixels.height <= output.height && output.height - pixels.height < most,
                    "\(output.height) at \(per120)/120: \(pixels.height)")
        }
    }

    @Test func theProtocolsRoundingIsHalfAwayFromZero() {
        // 853 x 1.5 = 1279.5 and 7 x 1.25 = 8.75: up; 5 x 1.25 = 6.25: down.
        #expect(SurfaceScale.fractional(per120: 180).pixels(for: Size(width: 853, height: 480)) == Size(width: 1280, height: 720))
        #expect(SurfaceScale.fractional(per120: 150).pixels(for: Size(width: 7, height: 5)) == Size(width: 9, height: 6))
    }

    @Test func anIntegerScaleMultipliesAndTouchesFollowTheScale() {
        #expect(SurfaceScale.buffer(2).pixels(for: Size(width: 640, height: 360)) == Size(width: 1280, height: 720))
        #expect(SurfaceScale.buffer(2).pixelsPerUnit == 2)
        // A touch at the middle of a 853x480 surface at 1.5 is the middle of its 1280x720 buffer.
        let p = SurfaceScale.fractional(per120: 180).pixelsPerUnit
        #expect(426.5 * p == 639.75 && 240 * p == 360)
    }

    @Test func logLinesSayTheScaleAsAPersonWould() {
        #expect("\(SurfaceScale.buffer(2))" == "2")
        #expect("\(SurfaceScale.fractional(per120: 240))" == "2")
        #expect("\(SurfaceScale.fractional(per120: 180))" == "1.5")
        #expect("\(SurfaceScale.fractional(per120: 150))" == "1.25")
    }
}
