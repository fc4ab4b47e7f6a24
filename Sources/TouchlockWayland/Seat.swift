import CWayland
import Glibc
import TouchlockCore
import TouchlockSystem

/// A wl_seat: its touch points on our lock surfaces become the same frames the evdev path
/// gives the gesture machines (every finger down on one output, each with a phase, in that
/// surface's pixels), and its keys the lock screen's digits, Enter, Backspace and Escape,
/// read through the keymap the compositor sends (a virtual keyboard's puts digits on any
/// key code), else by their evdev codes.
final class Seat {
    let proxy: OpaquePointer
    private unowned let connection: WaylandConnection
    private var touch: OpaquePointer?
    private var keyboard: OpaquePointer?
    private var keymap: OpaquePointer?
    private var keyState: OpaquePointer?

    /// A finger down on a lock surface: the id given to the lock screen (new for every
    /// contact), where it is, the output, and whether it moved in this frame.
    private struct Contact {
        var id: Int
        var point: Point
        var output: WaylandOutput
        var phase: TouchPhase
    }
    private var contacts: [Int32: Contact] = [:]
    /// Lifted in this frame: reported as ended once.
    private var lifted: [Contact] = []
    private var nextID = 1
    private var lastTime: UInt32 = 0

    init(proxy: OpaquePointer, connection: WaylandConnection) {
        self.proxy = proxy
        self.connection = connection
        wl_seat_add_listener(proxy, &seatListener, Unmanaged.passUnretained(self).toOpaque())
    }

    fileprivate func capabilities(_ caps: UInt32) {
        let hasTouch = caps & WL_SEAT_CAPABILITY_TOUCH.rawValue != 0
        let hasKeyboard = caps & WL_SEAT_CAPABILITY_KEYBOARD.rawValue != 0
        if hasTouch, touch == nil {
            touch = wl_seat_get_touch(proxy)
            wl_touch_add_listener(touch, &touchListener, Unmanaged.passUnretained(self).toOpaque())
        } else if !hasTouch, let t = touch {
            cancel()
            wl_touch_release(t)
            touch = nil
        }
        if hasKeyboard, keyboard == nil {
            keyboard = wl_seat_get_keyboard(proxy)
            wl_keyboard_add_listener(keyboard, &keyboardListener, Unmanaged.passUnretained(self).toOpaque())
        } else if !hasKeyboard, let k = keyboard {
            wl_keyboard_release(k)
            keyboard = nil
        }
        connection.requestsMade()
    }

    // MARK: touch

    private func point(_ x: wl_fixed_t, _ y: wl_fixed_t, _ o: WaylandOutput) -> Point {
        let s = o.pixelsPerUnit
        return Point(x: wl_fixed_to_double(x) * s, y: wl_fixed_to_double(y) * s)
    }

    fileprivate func down(surface: OpaquePointer?, id: Int32, x: wl_fixed_t, y: wl_fixed_t, time: UInt32) {
        guard let o = connection.output(of: surface) else { return }
        contacts[id] = Contact(id: nextID, point: point(x, y, o), output: o, phase: .began)
        nextID += 1
        lastTime = time
    }

    fileprivate func motion(id: Int32, x: wl_fixed_t, y: wl_fixed_t, time: UInt32) {
        guard var c = contacts[id] else { return }
        c.point = point(x, y, c.output)
        if c.phase != .began { c.phase = .moved }
        contacts[id] = c
        lastTime = time
    }

    fileprivate func up(id: Int32, time: UInt32) {
        guard var c = contacts.removeValue(forKey: id) else { return }
        c.phase = .ended
        lifted.append(c)
        lastTime = time
    }

    /// The end of a frame: each output's fingers go to the lock screen together.
    fileprivate func frame() {
        let now = EventLoop.now()
        var byOutput: [ObjectIdentifier: (WaylandOutput, [ScreenTouch])] = [:]
        for c in contacts.values.sorted(by: { $0.id < $1.id }) + lifted {
            byOutput[ObjectIdentifier(c.output), default: (c.output, [])].1.append(ScreenTouch(id: c.id, phase: c.phase, point: c.point))
        }
        lifted = []
        for (k, c) in contacts { contacts[k]?.phase = c.phase == .ended ? .ended : .stationary }
        for (o, touches) in byOutput.values { connection.onTouches?(touches, o, now) }
    }

    /// The compositor took the touch sequence (a gesture of its own): every finger is
    /// lifted where it was.
    fileprivate func cancel() {
        for c in contacts.values { lifted.append(Contact(id: c.id, point: c.point, output: c.output, phase: .ended)) }
        contacts = [:]
        frame()
    }

    // MARK: keyboard

    fileprivate func keymap(format: UInt32, fd: Int32, size: UInt32) {
        defer { close(fd) }
        guard format == WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1.rawValue, let xkb = connection.xkb else { return }
        guard let map = mmap(nil, Int(size), PROT_READ, MAP_PRIVATE, fd, 0), map != MAP_FAILED else {
            Log.warning("wayland: the keymap cannot be read: \(Errno.current); keys go by their codes")
            return
        }
        defer { munmap(map, Int(size)) }
        let text = map.assumingMemoryBound(to: CChar.self)
        guard let km = xkb_keymap_new_from_string(xkb, text, XKB_KEYMAP_FORMAT_TEXT_V1, XKB_KEYMAP_COMPILE_NO_FLAGS) else {
            Log.warning("wayland: the compositor's keymap does not compile; keys go by their codes")
            return
        }
        if let s = keyState { xkb_state_unref(s) }
        if let m = keymap { xkb_keymap_unref(m) }
        keymap = km
        keyState = xkb_state_new(km)
    }

    fileprivate func modifiers(depressed: UInt32, latched: UInt32, locked: UInt32, group: UInt32) {
        guard let keyState else { return }
        xkb_state_update_mask(keyState, depressed, latched, locked, 0, 0, group)
    }

    fileprivate func key(_ code: UInt32, pressed: Bool, time: UInt32) {
        guard pressed else { return }
        let key: KeyInput?
        if let keyState {
            // xkb's key codes are evdev's plus 8.
            key = Self.key(symbol: xkb_state_key_get_one_sym(keyState, code + 8))
        } else {
            key = code <= UInt32(UInt16.max) ? KeyInput(code: UInt16(code)) : nil
        }
        guard let key else { return }
        connection.onKey?(key, EventLoop.now())
    }

    /// The lock screen's key for a keysym (keysymdef.h): the digits of the top row and
    /// the keypad, Return and KP_Enter, BackSpace, Escape.
    static func key(symbol: xkb_keysym_t) -> KeyInput? {
        switch symbol {
        case 0x30...0x39: .digit(Int(symbol - 0x30))        // XK_0 ... XK_9
        case 0xffb0...0xffb9: .digit(Int(symbol - 0xffb0))  // XK_KP_0 ... XK_KP_9
        case 0xff0d, 0xff8d: .enter                          // XK_Return, XK_KP_Enter
        case 0xff08: .backspace                              // XK_BackSpace
        case 0xff1b: .escape                                 // XK_Escape
        default: nil
        }
    }
}

private func seat(_ data: UnsafeMutableRawPointer?) -> Seat {
    Unmanaged<Seat>.fromOpaque(data!).takeUnretainedValue()
}

nonisolated(unsafe) private var seatListener = wl_seat_listener(
    capabilities: { data, _, caps in seat(data).capabilities(caps) },
    name: { _, _, _ in }
)

nonisolated(unsafe) private var touchListener = wl_touch_listener(
    down: { data, _, _, time, surface, id, x, y in seat(data).down(surface: surface, id: id, x: x, y: y, time: time) },
    up: { data, _, _, time, id in seat(data).up(id: id, time: time) },
    motion: { data, _, time, id, x, y in seat(data).motion(id: id, x: x, y: y, time: time) },
    frame: { data, _ in seat(data).frame() },
    cancel: { data, _ in seat(data).cancel() },
    shape: { _, _, _, _, _ in },
    orientation: { _, _, _, _ in }
)

nonisolated(unsafe) private var keyboardListener = wl_keyboard_listener(
    keymap: { data, _, format, fd, size in seat(data).keymap(format: format, fd: fd, size: size) },
    enter: { _, _, _, _, _ in },
    leave: { _, _, _, _ in },
    key: { data, _, _, time, key, state in
        seat(data).key(key, pressed: state == WL_KEYBOARD_KEY_STATE_PRESSED.rawValue, time: time)
    },
    modifiers: { data, _, _, depressed, latched, locked, group in
        seat(data).modifiers(depressed: depressed, latched: latched, locked: locked, group: group)
    },
    repeat_info: { _, _, _, _ in }
)
