import Glibc
import Testing
import TouchlockCore
@testable import TouchlockRender

/// Messages set one after another (`touchlockctl message`), each with characters not seen
/// together before, laid out and drawn as the daemon does: the faces the text setter keeps
/// stay within its limit, however many messages come.
@Suite struct MessageFacesTests {
    /// The resident memory of this process, in kB (VmRSS).
    static func residentKilobytes() -> Int {
        let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 8192)
        let n = read(fd, &bytes, bytes.count)
        guard n > 0 else { return -1 }
        let text = String(decoding: bytes[0..<n], as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return -1 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
    }

    /// Message `i`: a Latin line with two CJK characters no other message has together
    /// (found through fontconfig, in WenQuanYi Micro Hei), and every fourth one an
    /// accented letter of its own (found in the theme's own font file).
    static func message(_ i: Int) -> String {
        let a = Unicode.Scalar(0x4E00 + i)!, b = Unicode.Scalar(0x4E00 + 8000 + (i * 7) % 8000)!
        var text = "Notice \(i): \(Character(a))\(Character(b)) closed"
        if i % 4 == 0 { text += " " + String(Character(Unicode.Scalar(0x0100 + (i / 4) % 128)!)) }
        return text
    }

    @Test func fourThousandMessagesKeepAsManyFacesAsOneHundred() throws {
        try #require(access("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", R_OK) == 0, "fonts-wqy-microhei is not installed")
        var config = Config()
        config.screens.message = "Configured"
        let size = Size(width: 480, height: 800)
        let setter = TextSetter()
        let measure = DrawnTextMeasure(theme: config.theme, setter: setter)
        var lock = LockScreen.make(config: config, size: size, density: Density(dpi: 160), shuffleSeed: 0,
                                   message: true, measure: measure)
        let shadow = ShadowBuffer(size: size)
        let renderer = Renderer(shadow: shadow, text: setter)
        var shown = lock.scene
        renderer.draw(shown, damage: shown.damage(from: nil))
        func show(_ i: Int) {
            _ = lock.setInfo(InfoText(message: Self.message(i)))
            let scene = lock.scene
            renderer.draw(scene, damage: scene.damage(from: shown))
            shown = scene
        }
        for i in 0..<100 { show(i) }
        let facesAfter100 = setter.faceCount
        let rss100 = Self.residentKilobytes()
        for i in 100..<4000 { show(i) }
        let facesAfter4000 = setter.faceCount
        let rss4000 = Self.residentKilobytes()
        print("MessageFacesTests: faces kept after 100 messages \(facesAfter100), after 4000 \(facesAfter4000); "
              + "VmRSS \(rss100) kB -> \(rss4000) kB (+\(rss4000 - rss100) kB for 3900 messages)")
        // Not one per message: the limit, reached within the first hundred, holds.
        #expect(facesAfter4000 == facesAfter100, "faces kept: \(facesAfter100) after 100 messages, \(facesAfter4000) after 4000")
        #expect(facesAfter4000 <= TextSetter.faceLimit, "\(facesAfter4000) faces kept")
        // The last message is drawn: ink in the message's box.
        let box = try #require(shown.info?.layout.message)
        let background = rgb(config.theme.background)
        var inked = 0
        for y in box.y..<(box.y + box.height) {
            for x in box.x..<(box.x + box.width) where shadow.pixel(x: x, y: y) & 0xffffff != background { inked += 1 }
        }
        #expect(inked > 200, "the last message is not drawn")
    }
}
