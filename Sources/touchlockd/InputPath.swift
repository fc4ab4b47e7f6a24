import Glibc
import TouchlockCore
import TouchlockInput
import TouchlockSystem

/// One source of touch frames: a kernel device or a replayed recording, with its own
/// frame assembler and mapping from device units to screen pixels.
final class TouchInput {
    let label: String
    private var assembler: TouchFrameAssembler
    private let mapping: ScreenMapping
    private let deliver: ([ScreenTouch], Instant) -> Void

    init(label: String, slots: Int, x: AxisRange, y: AxisRange, screen: Size,
         deliver: @escaping ([ScreenTouch], Instant) -> Void) {
        self.label = label
        assembler = TouchFrameAssembler(slotCount: slots)
        mapping = ScreenMapping(x: x, y: y, screen: screen)
        self.deliver = deliver
    }

    func feed(_ e: InputEvent) {
        if let frame = assembler.feed(e) { send(frame) }
    }

    /// The device went away: every finger on it is lifted.
    func releaseAll(at now: Instant) {
        if let frame = assembler.releaseAll(at: now) { send(frame) }
    }

    private func send(_ frame: TouchFrame) {
        let touches = frame.touches.map {
            ScreenTouch(id: $0.id, phase: $0.phase, point: mapping.map($0.position))
        }
        deliver(touches, frame.time)
    }
}

/// The kernel touchscreens in use, each read on the event loop until EAGAIN.
final class EvdevInputs {
    private let loop: EventLoop
    private let screen: Size
    private let deliver: ([ScreenTouch], Instant) -> Void
    private var devices: [Int32: (device: EvdevDevice, input: TouchInput)] = [:]
    private var touchIDBase = 0

    init(loop: EventLoop, screen: Size, deliver: @escaping ([ScreenTouch], Instant) -> Void) {
        self.loop = loop
        self.screen = screen
        self.deliver = deliver
    }

    var count: Int { devices.count }

    /// Opens every direct-touch device under /dev/input.
    func openAll(in dir: String = "/dev/input") {
        for path in EvdevDevice.nodes(in: dir) { open(path) }
    }

    func open(_ path: String) {
        if devices.values.contains(where: { $0.device.path == path }) { return }
        let dev: EvdevDevice
        do { dev = try EvdevDevice(path: path) } catch {
            Log.debug("\(path): \(error)")
            return
        }
        switch dev.kind {
        case .other(let why):
            Log.debug("\(path) (\(dev.name)): not used: \(why)")
            return
        case .touchscreen:
            break
        }
        // Touch ids are made unique across devices.
        let base = touchIDBase
        touchIDBase += 1 << 24
        let deliver = self.deliver
        let input = TouchInput(label: "\(path) (\(dev.name))", slots: dev.slotCount, x: dev.xRange, y: dev.yRange,
                               screen: screen) { touches, time in
            deliver(touches.map { var t = $0; t.id += base; return t }, time)
        }
        do {
            try loop.register(dev.fd, .readable) { [weak self] _ in self?.readable(dev.fd) }
        } catch {
            Log.error("\(path): \(error)")
            return
        }
        devices[dev.fd] = (dev, input)
        dev.grab(true)
        Log.info("touchscreen \(path) (\(dev.name)): \(dev.slotCount) slots, x \(dev.xRange.minimum)...\(dev.xRange.maximum), y \(dev.yRange.minimum)...\(dev.yRange.maximum)")
    }

    func grab(_ on: Bool) {
        for d in devices.values { d.device.grab(on) }
    }

    private func readable(_ fd: Int32) {
        guard let (dev, input) = devices[fd] else { return }
        switch dev.read({ input.feed($0) }) {
        case .drained:
            break
        case .gone(let why):
            Log.info("\(dev.path): \(why)")
            loop.unregister(fd)
            devices.removeValue(forKey: fd)
            input.releaseAll(at: EventLoop.now())
        }
    }
}
