/// A key that means something to the lock screen, from a hardware keypad or keyboard:
/// digits (top row, keypad, or the numeric keys of phone-style pads), backspace, enter
/// and escape. Other keys are not lock-screen input.
public enum KeyInput: Hashable, Sendable {
    case digit(Int)
    case backspace
    case enter
    case escape

    // Key codes from include/uapi/linux/input-event-codes.h.
    public static let KEY_ESC: UInt16 = 1
    public static let KEY_1: UInt16 = 2          // KEY_1 ... KEY_9 are 2 ... 10
    public static let KEY_0: UInt16 = 11
    public static let KEY_BACKSPACE: UInt16 = 14
    public static let KEY_ENTER: UInt16 = 28
    public static let KEY_KPENTER: UInt16 = 96
    public static let KEY_NUMERIC_0: UInt16 = 0x200  // KEY_NUMERIC_0 ... 9 are 0x200 ... 0x209
    /// Keypad digits: KEY_KP7 KEY_KP8 KEY_KP9 = 71 72 73, KP4-6 = 75-77, KP1-3 = 79-81, KP0 = 82.
    static let keypadDigits: [UInt16: Int] = [71: 7, 72: 8, 73: 9, 75: 4, 76: 5, 77: 6, 79: 1, 80: 2, 81: 3, 82: 0]

    /// The key a code stands for, or nil if the lock screen has no use for it.
    public init?(code: UInt16) {
        switch code {
        case Self.KEY_ESC: self = .escape
        case Self.KEY_1...(Self.KEY_1 + 8): self = .digit(Int(code - Self.KEY_1) + 1)
        case Self.KEY_0: self = .digit(0)
        case Self.KEY_BACKSPACE: self = .backspace
        case Self.KEY_ENTER, Self.KEY_KPENTER: self = .enter
        case Self.KEY_NUMERIC_0...(Self.KEY_NUMERIC_0 + 9): self = .digit(Int(code - Self.KEY_NUMERIC_0))
        default:
            guard let d = Self.keypadDigits[code] else { return nil }
            self = .digit(d)
        }
    }

    /// The key pressed by an EV_KEY event: presses only (value 1), and auto-repeat (value 2)
    /// of backspace alone, so that holding a digit types it once.
    public init?(_ e: InputEvent) {
        guard e.type == EventCode.EV_KEY, let k = KeyInput(code: e.code) else { return nil }
        switch e.value {
        case 1: self = k
        case 2 where k == .backspace: self = k
        default: return nil
        }
    }
}
