import Testing
@testable import TouchlockCore
import TouchlockRender

/// The panels a lock screen must look right on: sizes in pixels and densities (nil: the
/// panel tells none).
let panelTable: [(size: Size, dpi: Double?)] = [
    (Size(width: 240, height: 320), 143), (Size(width: 320, height: 240), 114),
    (Size(width: 480, height: 272), 128), (Size(width: 480, height: 800), 187),
    (Size(width: 720, height: 1280), 294), (Size(width: 800, height: 480), 96),
    (Size(width: 1024, height: 600), 96), (Size(width: 1280, height: 800), 102),
    (Size(width: 1080, height: 1920), 160), (Size(width: 1920, height: 1080), 96),
    (Size(width: 3840, height: 2160), 160), (Size(width: 3840, height: 2160), nil),
]

/// The screen configurations checked on every panel: each method alone and both, codes of
/// 4 and 12 digits.
let layoutConfigs: [(name: String, settings: String)] = [
    ("pattern", "unlock_method = pattern\n"),
    ("code-4", "unlock_method = code\n"),
    ("code-12", "unlock_method = code\ncode_length = 12\n"),
    ("both-6", "unlock_method = both\ncode_length = 6\n"),
    // Long German text, and Arabic (right to left: the columns traded).
    ("de", """
        unlock_method = both
        message_pattern_prompt = Zeichnen Sie Ihr Entsperrmuster, um das Gerät zu entsperren
        message_code_prompt = Geben Sie Ihren persönlichen Entsperrcode ein
        message_wrong_pattern = Falsches Entsperrmuster, bitte versuchen Sie es noch einmal
        message_wrong_code = Falscher Entsperrcode, bitte versuchen Sie es noch einmal
        message_lockout = Zu viele Fehlversuche. Versuchen Sie es in {time} erneut
        label_use_code = Entsperrcode verwenden
        label_use_pattern = Entsperrmuster verwenden

        """),
    ("ar", """
        unlock_method = both
        message_pattern_prompt = ارسم نقش إلغاء القفل لفتح الجهاز
        message_code_prompt = أدخل رمز إلغاء القفل الخاص بك
        message_wrong_pattern = النقش غير صحيح، يرجى المحاولة مرة أخرى
        message_wrong_code = الرمز غير صحيح، يرجى المحاولة مرة أخرى
        label_use_code = استخدم الرمز
        label_use_pattern = استخدم النقش

        """),
]

/// The smallest touch target, in dp (Android's minimum).
let minimumTargetDp = 48.0
/// The smallest text, in dp: smaller is not read from arm's length.
let minimumTextDp = 12.0

/// What is wrong with the laid-out screen, from its geometry alone (the scene and the
/// machines' layouts), never from its pixels: elements outside the screen, elements that
/// overlap, touch targets under `minimumTargetDp`, text that does not fit its box. Text is
/// measured by `measure`, as the renderer draws it.
func layoutProblems(_ lock: LockScreen, density: Density, measure: any TextMeasure) -> [String] {
    let scene = lock.scene
    let dp = density.dpi / 160
    let screen = PixelRect(x: 0, y: 0, width: scene.size.width, height: scene.size.height)
    var problems: [String] = []
    func dps(_ px: Double) -> String { String(Int((px / dp).rounded())) + " dp" }

    // The elements, by name, with the rectangle nothing else may overlap.
    var parts: [(name: String, rect: PixelRect)] = []
    let fullScreenMessage = scene.nodes.isEmpty && scene.keys.isEmpty && scene.boxes.isEmpty
    if !fullScreenMessage { parts.append(("prompt", scene.promptBox)) }
    if !scene.nodes.isEmpty {
        let g = lock.pattern!.grid
        // The grid: every node's drawn halo and hit circle.
        let reach = max(g.nodeRadius * Scene.haloFactor, g.hitRadius)
        let nodes = scene.nodes.map { PixelRect(around: $0.center, radius: reach, margin: 0) }
        parts.append(("grid", nodes.dropFirst().reduce(nodes[0]) { $0.union($1) }))
        if 2 * g.hitRadius < minimumTargetDp * dp - 0.5 {
            problems.append("node targets \(dps(2 * g.hitRadius)) across")
        }
    }
    if !scene.boxes.isEmpty, let pad = lock.code {
        parts.append(("boxes", pad.layout.boxArea))
        for (i, b) in scene.boxes.enumerated() where !pad.layout.boxArea.contains(b.rect) {
            problems.append("box \(i) \(b.rect) outside the box area \(pad.layout.boxArea)")
        }
        if Double(pad.layout.boxArea.height) < minimumTargetDp * dp - 0.5 {
            problems.append("box area \(dps(Double(pad.layout.boxArea.height))) high")
        }
        if let b = scene.boxes.first {
            if measure.width("8", size: b.fontSize, bold: scene.theme.digitBold) > Double(b.rect.width)
                || TextMetrics.lineHeight(b.fontSize) > Double(b.rect.height) {
                problems.append("a digit of \(b.fontSize) px does not fit its box \(b.rect)")
            }
            if b.fontSize < minimumTextDp * dp { problems.append("digits \(dps(b.fontSize)) high") }
        }
    }
    for (i, k) in scene.keys.enumerated() {
        parts.append(("key \(i)", k.rect))
    }
    if let t = scene.toggle { parts.append(("switch", t.rect)) }
    if let info = scene.info {
        let l = info.layout
        for (name, r) in [("logo", l.logo), ("time", l.time), ("date", l.date), ("message", l.message)] {
            guard let r else { continue }
            parts.append((name, r))
            if !l.area.contains(r) { problems.append("\(name) \(r) outside the information area \(l.area)") }
        }
        let floor = ScreenLayout.minimumText * dp - 0.01
        if l.time != nil {
            if l.timeSize < floor { problems.append("time \(dps(l.timeSize)) high") }
            let wide = measure.width("10:00 PM", size: l.timeSize)
            if wide > Double(l.time!.width) + 0.5 { problems.append("time at \(l.timeSize) px (\(Int(wide)) px) wider than \(l.time!)") }
            if TextMetrics.lineHeight(l.timeSize) > Double(l.time!.height) + 0.5 { problems.append("time taller than \(l.time!)") }
        }
        if let d = l.date {
            if l.dateSize < floor { problems.append("date \(dps(l.dateSize)) high") }
            if measure.width("Wed 30 Sep", size: l.dateSize) > Double(d.width) + 0.5 { problems.append("date wider than \(d)") }
        }
        if let m = l.message {
            if l.messageSize < floor { problems.append("message \(dps(l.messageSize)) high") }
            if 2 * TextMetrics.lineHeight(l.messageSize) > Double(m.height) + 0.5 { problems.append("two message lines taller than \(m)") }
            if let text = info.text.message {
                let set = TextMetrics.wrap(text, width: Double(m.width), height: Double(m.height), size: l.messageSize, minimum: l.minimumText,
                                           measure: measure)
                if set.size < floor { problems.append("message drawn at \(dps(set.size))") }
                for line in set.lines where measure.width(line, size: set.size) > Double(m.width) + 0.5 {
                    problems.append("message line '\(line)' wider than \(m)")
                }
            }
        }
    }

    for k in scene.keys + (scene.toggle.map { [$0] } ?? []) {
        let name = k.round ? "key" : "switch"
        if Double(min(k.rect.width, k.rect.height)) < minimumTargetDp * dp - 0.5 {
            problems.append("\(name) \(k.rect): \(dps(Double(k.rect.width))) x \(dps(Double(k.rect.height)))")
        }
        if case .text(let label) = k.label {
            // On one line, or two for the switch's.
            let lines = label.split(separator: "\n").map(String.init)
            let w = lines.map { measure.width($0, size: k.fontSize) }.max() ?? 0
            // A key's label within 90% of it; the switch's with at least 12 dp of it each side.
            let room = k.round ? Double(k.rect.width) * 0.9 : Double(k.rect.width) - 24 * dp + 0.5
            if w > room || Double(lines.count) * TextMetrics.lineHeight(k.fontSize) > Double(k.rect.height) {
                problems.append("\(name) label '\(label)' at \(k.fontSize) px (about \(Int(w)) px wide) does not fit \(k.rect)")
            }
            if k.fontSize < minimumTextDp * dp { problems.append("\(name) label '\(label)' \(dps(k.fontSize)) high") }
        }
    }

    let prompt = scene.promptText(measure)
    let box = scene.promptBox
    for line in prompt.lines where measure.width(line, size: prompt.size) > Double(box.width) {
        problems.append("prompt line '\(line)' at \(prompt.size) px (\(Int(measure.width(line, size: prompt.size))) px) wider than \(box)")
    }
    if TextMetrics.lineHeight(prompt.size) * Double(prompt.lines.count) > Double(box.height) + 0.5 {
        problems.append("\(prompt.lines.count) prompt lines at \(prompt.size) px taller than \(box)")
    }
    if !scene.prompt.isEmpty, prompt.size < minimumTextDp * dp { problems.append("prompt \(dps(prompt.size)) high") }

    for p in parts where !screen.contains(p.rect) {
        problems.append("\(p.name) \(p.rect) is not inside the screen \(screen)")
    }
    for i in parts.indices {
        for j in parts.indices where j > i && parts[i].rect.intersects(parts[j].rect) {
            problems.append("\(parts[i].name) \(parts[i].rect) overlaps \(parts[j].name) \(parts[j].rect)")
        }
    }
    return problems
}

extension PixelRect {
    func contains(_ r: PixelRect) -> Bool { r.x >= x && r.y >= y && r.maxX <= maxX && r.maxY <= maxY }
}

/// Every screen of every configuration of `layoutConfigs` (changed by `adjust`) in every
/// state on a panel of `size`, laid out with its text measured as drawn: `body` gets the
/// configuration's name, the screen, the state and the lock screen in it.
func everyScreen(size: Size, density: Density, adjust: (inout Config) throws -> Void = { _ in },
                 _ body: (String, Preview.Screen, String, LockScreen, DrawnTextMeasure) throws -> Void) throws {
    for cfg in layoutConfigs {
        var config = Config()
        try config.apply(settings: cfg.settings)
        try adjust(&config)
        let screens: [Preview.Screen] = switch config.screens.methods {
        case .pattern: [.pattern]
        case .code: [.code]
        case .both: [.pattern, .code]
        }
        let measure = DrawnTextMeasure(theme: config.theme)
        for screen in screens {
            for state in Preview.states(of: screen) {
                let st = state.replacingAll(":K", with: ":\(max(1, config.screens.codeLength - 1))")
                let lock = try Preview.lockScreen(config: config, screen: screen, state: st, size: size, density: density,
                                                  measure: measure)
                try body(cfg.name, screen, st, lock, measure)
            }
        }
    }
}

@Suite struct LayoutCheckTests {
    /// Every screen in every state, for every configuration, on every panel of the table.
    @Test(arguments: panelTable.indices)
    func everyScreenIsLaidOutInsideWithoutOverlapWithTargetsOf48dpAndTextThatFits(panel: Int) throws {
        let (size, dpi) = panelTable[panel]
        let density = Density(screen: size, physicalMillimetres: nil, override: dpi)
        var failures: [String] = []
        try everyScreen(size: size, density: density) { name, screen, st, lock, measure in
            for p in layoutProblems(lock, density: density, measure: measure) {
                failures.append("\(name) \(screen.rawValue) \(st): \(p)")
            }
        }
        let name = "\(size.width)x\(size.height)@\(dpi.map { String(Int($0)) } ?? "none")"
        let report = "\(name): \(failures.count) problems:\n" + failures.prefix(12).joined(separator: "\n")
        #expect(failures.count == 0, Comment(rawValue: report))
    }
}

/// The information area on every panel: `clock = date-time`, a message and a logo, with
/// each method and both.
let infoSettings: [(key: String, value: String)] = [
    ("clock", "date-time"), ("message", "Property of the Riverside clinic: if found, call 555 0100"),
    ("logo", "/usr/share/touchlock/logo.png"),
]

@Suite struct InfoLayoutCheckTests {
    /// Every screen of every configuration with the clock, the date, a message and a logo,
    /// laid out inside without overlap, targets of 48 dp, text of 12 dp at least; on the
    /// smallest portrait panel (240x320) the logo and the date give way beside the grid,
    /// the clock too beside the keypad, and everything with both methods; nothing elsewhere.
    @Test(arguments: panelTable.indices)
    func theClockTheMessageAndTheLogoFitEveryPanelWithoutTouchingTheTargets(panel: Int) throws {
        let (size, dpi) = panelTable[panel]
        let density = Density(screen: size, physicalMillimetres: nil, override: dpi)
        var failures: [String] = []
        var leftOut: Set<String> = []
        let info: (inout Config) throws -> Void = { config in
            for (k, v) in infoSettings { try config.set(section: "screen", key: k, value: v) }
        }
        try everyScreen(size: size, density: density, adjust: info) { name, screen, st, lock, measure in
            let layout = try #require(lock.builder.layout)
            leftOut.formUnion(layout.infoLeftOut.map { "\(name): \($0)" })
            let scene = lock.scene
            if !layout.infoLeftOut.contains("message"), !scene.nodes.isEmpty || !scene.keys.isEmpty {
                // Whatever is left out, the message stays.
                if scene.info?.layout.message == nil { failures.append("\(name) \(screen.rawValue) \(st): no message") }
                if scene.info?.text.message == nil { failures.append("\(name) \(screen.rawValue) \(st): no message text") }
            }
            for p in layoutProblems(lock, density: density, measure: measure) {
                failures.append("\(name) \(screen.rawValue) \(st): \(p)")
            }
        }
        let name = "\(size.width)x\(size.height)@\(dpi.map { String(Int($0)) } ?? "none")"
        let report = "\(name): \(failures.count) problems:\n" + failures.prefix(12).joined(separator: "\n")
        #expect(failures.count == 0, Comment(rawValue: report))
        // 240x320 at 143 dpi holds a 3x3 grid of 48 dp targets and its prompt with a line
        // to spare: the message (and the time beside the grid alone) stay; with both methods
        // the switch takes that line too.
        let allowed: Set<String> = size == Size(width: 240, height: 320)
            ? ["pattern: logo", "pattern: date", "code-4: logo", "code-4: date", "code-4: clock",
               "code-12: logo", "code-12: date", "code-12: clock",
               "both-6: logo", "both-6: date", "both-6: clock", "both-6: message",
               "de: logo", "de: date", "de: clock", "de: message", "ar: logo", "ar: date", "ar: clock", "ar: message"]
            : []
        #expect(leftOut == allowed, "\(name): left out \(leftOut.sorted())")
    }

    /// Without a clock, a message or a logo the layout is the one of before (the golden
    /// images hold the pixels; this holds the geometry).
    @Test func withNothingToTellTheLayoutHasNoInformationArea() {
        for (size, dpi) in panelTable {
            let l = ScreenLayout(size: size, density: Density(screen: size, physicalMillimetres: nil, override: dpi), methods: .both)
            #expect(l.info == nil && l.infoLeftOut.isEmpty)
        }
    }
}

@Suite struct ShrunkTargetsTests {
    /// On a screen too small for 48 dp targets (240x320 at 160 dpi: 150 x 200 dp) the keys
    /// and the nodes shrink, and the switch with them: every target alike, within 2 px.
    @Test(arguments: [(Size(width: 240, height: 320), 160.0), (Size(width: 320, height: 240), 160.0),
                      (Size(width: 240, height: 320), 200.0)])
    func whenTargetsShrinkTheSwitchShrinksWithThem(_ size: Size, _ dpi: Double) throws {
        var config = Config()
        try config.apply(settings: "unlock_method = both\n")
        let measure = DrawnTextMeasure(theme: config.theme)
        for screen in [Preview.Screen.pattern, .code] {
            let lock = try Preview.lockScreen(config: config, screen: screen, state: "idle", size: size,
                                              density: Density(dpi: dpi), measure: measure)
            let layout = try #require(lock.builder.layout)
            let toggle = try #require(layout.toggle)
            let main = try #require(layout.mainTarget)
            let dp = dpi / 160
            #expect(main < 48 * dp - 0.5, "\(size) at \(dpi) dpi holds 48 dp targets: pick a smaller screen")
            #expect(abs(Double(toggle.height) - main) <= 2, "\(screen): switch \(toggle.height) px high, targets \(main) px")
            // Small targets are what this screen has; nothing is outside, overlaps or overflows.
            let problems = layoutProblems(lock, density: Density(dpi: dpi), measure: measure)
            #expect(problems.filter { ["overlaps", "not inside", "does not fit", "wider than", "taller than"].contains(where: $0.contains) } == [])
        }
    }
}

@Suite struct LongPromptTests {
    /// A prompt that does not fit on two lines even at 12 dp takes room from the grid
    /// (which stays at 48 dp targets) and is drawn whole on more lines, not cut.
    @Test(arguments: [(Size(width: 240, height: 320), 143.0), (Size(width: 480, height: 272), 128.0)])
    func aPromptTooLongForTwoLinesTakesRoomFromTheGridBeforeItIsCut(_ size: Size, _ dpi: Double) throws {
        let long = "Zeichnen Sie Ihr persönliches Entsperrmuster über die neun Punkte, um das Gerät zu entsperren; "
            + "nach fünf Fehlversuchen wird die Eingabe für eine Weile gesperrt"
        var config = Config()
        config.screens.messages.patternPrompt = long
        let measure = DrawnTextMeasure(theme: config.theme)
        let density = Density(dpi: dpi)
        let lock = LockScreen.make(config: config, size: size, density: density, shuffleSeed: 0, measure: measure)
        let text = lock.scene.promptText(measure)
        let dp = dpi / 160
        #expect(text.lines.joined(separator: " ") == long, "\(text.lines)")
        #expect(text.lines.count > 2 && text.size >= 12 * dp - 0.01)
        let grid = try #require(lock.pattern?.grid)
        #expect(2 * grid.hitRadius >= 48 * dp - 0.5)
        #expect(layoutProblems(lock, density: density, measure: measure) == [])
        // Laid out without being told the prompt, its box holds two lines, and it would be cut.
        let plain = ScreenLayout(size: size, density: density, theme: config.theme, measure: measure)
        #expect(plain.patternPrompt.height < lock.scene.promptBox.height)
        var cut = lock.scene
        cut.promptBox = plain.patternPrompt
        #expect(cut.promptText(measure).lines.last?.hasSuffix("…") == true)
    }
}
