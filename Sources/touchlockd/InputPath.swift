import Glibc
import TouchlockCore
import TouchlockInput
import TouchlockSystem

/// What the config says about reading input devices.
struct InputSettings {
    var quirks: [InputQuirk] = []
    var orientation = TouchOrientation()
}

/// One source of touch frames: a kernel device or a replayed recording, with the frame
/// assembler its description picks and the transform from device units to screen pixels.
final class TouchInput {
    let label: String
    private var assembler: TouchFrameAssembler
    private let transform: TouchTransform
    private let deliver: ([ScreenTouch], Instant) -> Void
    /// Touches passed on, with their last point: a touch is passed on from the first frame
    /// in which its position is known, and its end only if it was passed on.
    private var delivered: [Int: Point] = [:]

    init(label: String, mode: TouchMode, transform: TouchTransform,
         deliver: @escaping ([ScreenTouch], Instant) -> Void) {
        self.label = label
        assembler = TouchFrameAssembler(mode: mode)
        self.transform = transform
        self.deliver = deliver
    }

    /// The assembler and transform for `device`, or why it is not a touchscreen.
    static func make(label: String, device: DeviceDescription, settings: InputSettings, screen: Size,
                     calibration: AffineMatrix? = nil,
                     deliver: @escaping ([ScreenTouch], Instant) -> Void) -> Result<TouchInput, NotATouchscreen> {
        let quirk = InputQuirk.merged(settings.quirks, for: device)
        let mode: TouchMode
        switch device.touchMode(quirk: quirk) {
        case .success(let m): mode = m
        case .failure(let why): return .failure(why)
        }
        guard let axes = device.positionAxes(mode) else { return .failure(NotATouchscreen("no ranges for its position axes")) }
        let transform = TouchTransform(x: axes.x, y: axes.y, screen: screen, quirk: quirk,
                                       calibration: calibration, orientation: settings.orientation)
        let input = TouchInput(label: label, mode: mode, transform: transform, deliver: deliver)
        Log.info("touchscreen \(label): protocol \(mode.protocolName), x \(axes.x.minimum)...\(axes.x.maximum), "
                 + "y \(axes.y.minimum)...\(axes.y.maximum)"
                 + (quirk != nil ? ", with a quirk" : "") + (transform.matrix != .identity ? ", matrix \(transform.matrix)" : ""))
        return .success(input)
    }

    var mode: TouchMode { assembler.mode }

    func feed(_ e: InputEvent) {
        if let frame = assembler.feed(e) { send(frame) }
    }

    /// After SYN_DROPPED: the touch state becomes the device's.
    func resync(_ snapshot: DeviceSnapshot, at time: Instant) {
        if let frame = assembler.resync(to: snapshot, at: time) { send(frame) }
    }

    /// The device went away: every finger on it is lifted.
    func releaseAll(at now: Instant) {
        if let frame = assembler.releaseAll(at: now) { send(frame) }
    }

    private func send(_ frame: TouchFrame) {
        var touches: [ScreenTouch] = []
        for t in frame.touches {
            switch t.phase {
            case .ended:
                guard let last = delivered.removeValue(forKey: t.id) else { continue }
                touches.append(ScreenTouch(id: t.id, phase: .ended, point: t.position.map(transform.map) ?? last))
            case .began, .moved, .stationary:
                guard let p = t.position.map(transform.map) else { continue }
                let phase = delivered[t.id] == nil ? .began : t.phase
                delivered[t.id] = p
                touches.append(ScreenTouch(id: t.id, phase: phase, point: p))
            }
        }
        if !touches.isEmpty { deliver(touches, frame.time) }
    }
}

/// The kernel touchscreens and keypads in use, each read on the event loop until EAGAIN;
/// devices that appear later under /dev/input are adopted as they appear (inotify), and a
/// device that goes away ends its touches.
final class EvdevInputs {
    private struct Entry {
        var device: EvdevDevice
        var touch: TouchInput?
        var keys: Bool
    }

    private let loop: EventLoop
    private let screen: Size
    private let settings: InputSettings
    private let deliver: ([ScreenTouch], Instant) -> Void
    private let deliverKey: (KeyInput, Instant) -> Void
    private var devices: [Int32: Entry] = [:]
    private var touchIDBase = 0
    private var watch: DirectoryWatch?
    private var directory = "/dev/input"
    /// Grabbed while locked: new devices follow.
    private var grabbing = true

    init(loop: EventLoop, screen: Size, settings: InputSettings,
         deliver: @escaping ([ScreenTouch], Instant) -> Void,
         deliverKey: @escaping (KeyInput, Instant) -> Void) {
        self.loop = loop
        self.screen = screen
        self.settings = settings
        self.deliver = deliver
        self.deliverKey = deliverKey
    }

    /// Touchscreens in use.
    var count: Int { devices.values.filter { $0.touch != nil }.count }

    /// Opens every usable device under `dir`.
    func openAll(in dir: String = "/dev/input") {
        directory = dir
        for path in EvdevDevice.nodes(in: dir) { open(path) }
    }

    /// Watches `directory` for devices coming and going.
    func watchForHotplug() {
        do {
            watch = try DirectoryWatch(directory, loop: loop) { [weak self] change in self?.changed(change) }
        } catch {
            Log.warning("no hotplug: \(error)")
        }
    }

    private func changed(_ change: DirectoryWatch.Change) {
        switch change {
        case .appeared(let name):
            if name.hasPrefix("event") { open("\(directory)/\(name)") }
        case .removed(let name):
            let path = "\(directory)/\(name)"
            if let fd = devices.first(where: { $0.value.device.path == path })?.key { remove(fd, "removed") }
        case .rescan:
            openAll(in: directory)
        }
    }

    func open(_ path: String) {
        if devices.values.contains(where: { $0.device.path == path }) { return }
        let dev: EvdevDevice
        do { dev = try EvdevDevice(path: path) } catch {
            Log.debug("\(path): \(error)")
            return
        }
        let label = "\(path) (\(dev.name))"
        // Touch ids are made unique across devices.
        let base = touchIDBase
        let deliver = self.deliver
        var touch: TouchInput?
        let calibration = dev.udevProperty("LIBINPUT_CALIBRATION_MATRIX").flatMap(AffineMatrix.init(parsing:))
        switch TouchInput.make(label: label, device: dev.description, settings: settings, screen: screen,
                               calibration: calibration, deliver: { touches, time in
                                   deliver(touches.map { var t = $0; t.id += base; return t }, time)
                               }) {
        case .success(let t):
            touch = t
            touchIDBase += 1 << 24
        case .failure(let why):
            Log.debug("\(label): no touchscreen: \(why)")
        }
        let keys = dev.description.isKeypad
        if touch == nil && !keys { return }
        if keys { Log.info("keypad \(label)") }
        do {
            try loop.register(dev.fd, .readable) { [weak self] _ in self?.readable(dev.fd) }
        } catch {
            Log.error("\(path): \(error)")
            return
        }
        devices[dev.fd] = Entry(device: dev, touch: touch, keys: keys)
        dev.grab(grabbing)
    }

    func grab(_ on: Bool) {
        grabbing = on
        for d in devices.values { d.device.grab(on) }
    }

    private func readable(_ fd: Int32) {
        guard let entry = devices[fd] else { return }
        let touch = entry.touch, keys = entry.keys, deliverKey = self.deliverKey
        let result = entry.device.read({ e in
            touch?.feed(e)
            if keys, let k = KeyInput(e) { deliverKey(k, e.time) }
        }, resync: { snapshot, time in
            touch?.resync(snapshot, at: time)
        })
        switch result {
        case .drained:
            break
        case .gone(let why):
            remove(fd, why)
        }
    }

    private func remove(_ fd: Int32, _ why: String) {
        guard let entry = devices.removeValue(forKey: fd) else { return }
        Log.info("\(entry.device.path): \(why)")
        loop.unregister(fd)
        entry.touch?.releaseAll(at: EventLoop.now())
    }
}
