import Testing
@testable import TouchlockCore

@Suite struct TextDirectionTests {
    /// A paragraph goes the way of its first strong character; digits, spaces and
    /// punctuation before it do not decide.
    @Test func aParagraphGoesTheWayOfItsFirstLetter() {
        #expect(TextDirection(of: "ارسم النقش") == .rightToLeft)
        #expect(TextDirection(of: "צייר את הדפוס") == .rightToLeft)
        #expect(TextDirection(of: "4 أرقام") == .rightToLeft)
        #expect(TextDirection(of: "(١٢٣) أدخل") == .rightToLeft)  // Arabic-Indic digits are not strong
        #expect(TextDirection(of: "PIN: أدخل") == .leftToRight)
        #expect(TextDirection(of: "Draw your pattern") == .leftToRight)
        #expect(TextDirection(of: "请输入验证码") == .leftToRight)
        #expect(TextDirection(of: "1234") == .leftToRight)
        #expect(TextDirection(of: "\u{200F}1234") == .rightToLeft)
        #expect(TextDirection(of: "") == .leftToRight)
    }

    /// Written right to left, the landscape screen's columns trade places: the prompt, the
    /// boxes and the switch on the right, the keypad or the grid on the left, each where
    /// the left-to-right screen has its mirror image; inside a column nothing moves.
    @Test(arguments: [Size(width: 1280, height: 800), Size(width: 800, height: 480), Size(width: 320, height: 240)])
    func rightToLeftTradesTheColumns(_ size: Size) throws {
        let density = Density(screen: size, physicalMillimetres: nil)
        let ltr = ScreenLayout(size: size, density: density, methods: .both, toggleLabels: ["Use code", "Use pattern"])
        let rtl = ScreenLayout(size: size, density: density, methods: .both, toggleLabels: ["Use code", "Use pattern"],
                               direction: .rightToLeft)
        let a = try #require(ltr.pad), b = try #require(rtl.pad)
        let w = size.width
        func mirrored(_ r: PixelRect) -> ClosedRange<Int> { (w - r.x - r.width - 1)...(w - r.x - r.width + 1) }
        // Whole columns are mirrored: the column's span, not each element inside it.
        func span(_ rects: [PixelRect]) -> PixelRect { rects.dropFirst().reduce(rects[0]) { $0.union($1) } }
        let keysA = span(a.keys), keysB = span(b.keys)
        #expect(mirrored(keysA).contains(keysB.x), "keypad \(keysA) -> \(keysB)")
        #expect(mirrored(a.boxArea).contains(b.boxArea.x), "boxes \(a.boxArea) -> \(b.boxArea)")
        #expect(mirrored(ltr.toggle!).contains(rtl.toggle!.x), "switch \(ltr.toggle!) -> \(rtl.toggle!)")
        #expect(b.promptBox.x > keysB.x && b.boxArea.x > keysB.x + keysB.width - 1)
        // Inside the keypad, a phone's order: 1 2 3 from left to right; the boxes fill from the left.
        #expect(b.keys[0].x < b.keys[1].x && b.keys[1].x < b.keys[2].x)
        #expect(b.boxes.map(\.x) == b.boxes.map(\.x).sorted())
        // Same sizes, same heights: only the columns moved.
        #expect(a.keys.map(\.width) == b.keys.map(\.width) && a.keys.map(\.y) == b.keys.map(\.y))
        #expect(ltr.grid.cell == rtl.grid.cell && ltr.grid.origin.y == rtl.grid.origin.y)
        #expect(rtl.grid.origin.x < Double(b.promptBox.x))
    }

    /// Portrait, one column: nothing to trade.
    @Test func portraitIsTheSameEitherWay() {
        let size = Size(width: 480, height: 800)
        let density = Density(dpi: 187)
        let ltr = ScreenLayout(size: size, density: density, methods: .both, toggleLabels: ["a"])
        var rtl = ScreenLayout(size: size, density: density, methods: .both, toggleLabels: ["a"], direction: .rightToLeft)
        rtl.direction = .leftToRight
        #expect(ltr == rtl)
    }

    /// The lock screen takes its direction from its prompt.
    @Test func theLockScreenIsLaidOutTheWayItsPromptIsWritten() throws {
        var c = Config()
        try c.apply(settings: "unlock_method = both\nmessage_pattern_prompt = ارسم النقش لفتح القفل\n")
        let lock = LockScreen.make(config: c, size: Size(width: 1280, height: 800), density: Density(dpi: 160), shuffleSeed: 1)
        #expect(lock.builder.layout?.direction == .rightToLeft)
        #expect(Double(lock.scene.promptBox.x) > lock.pattern!.grid.origin.x)
        let english = LockScreen.make(config: Config(), size: Size(width: 1280, height: 800), density: Density(dpi: 160), shuffleSeed: 1)
        #expect(english.builder.layout?.direction == .leftToRight)
    }
}
