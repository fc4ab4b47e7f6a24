import Glibc
import TouchlockCore
import TouchlockSystem
import TouchlockUdev

/// The kernel touchscreens and keypads in use, each read on the event loop until EAGAIN;
/// devices that appear later under /dev/input are adopted as they appear (inotify), and a
/// device that goes away ends its touches.
public final class EvdevInputs {
    private struct Entry {
        var device: EvdevDevice
        var touch: TouchInput?
        var keys: Bool
        var admission: InputAdmission
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
    /// Whether the input is kept from other programs now (the lock screen's
    /// `holdsInput`): asked for each device opened, so a new one follows.
    public var holdsInput: () -> Bool = { true }
    /// Where a touchscreen belongs when there are several outputs: its output's name,
    /// logical size and rotation (nil: `screen` and the settings' rotation for all).
    public var place: ((DeviceDescription) -> (output: String, screen: Size, rotation: Rotation))?
    /// The output each touchscreen (by panel number, `ScreenTouch.panel`) belongs to.
    public private(set) var outputOfPanel: [Int: String] = [:]
    /// udev's record of the devices (nil if libudev cannot start); without udevd it
    /// initialises none, and their capabilities alone decide.
    private lazy var udev: Udev? = {
        do { return try Udev() } catch {
            Log.warning("udev's properties of the input devices are not read: \(error)")
            return nil
        }
    }()
    /// What was said of each node's udev properties (`InputAdmission.note`), so that it
    /// is said once per device: forgotten when the node goes.
    private var noted: [String: String] = [:]
    /// Nodes taken (or passed over) by their capabilities alone while udevd runs but had not
    /// yet processed them (a node appears before udevd has its event): looked at again when
    /// udevd's queue empties, and opened anew if udev's properties change what is done with
    /// them. The queue is watched only while there are some.
    private var awaitingUdev: Set<String> = []
    private var udevQueue: UdevQueue?

    public init(loop: EventLoop, screen: Size, settings: InputSettings,
         deliver: @escaping ([ScreenTouch], Instant) -> Void,
         deliverKey: @escaping (KeyInput, Instant) -> Void) {
        self.loop = loop
        self.screen = screen
        self.settings = settings
        self.deliver = deliver
        self.deliverKey = deliverKey
    }

    /// Touchscreens in use.
    public var count: Int { devices.values.filter { $0.touch != nil }.count }
    /// Devices in use: touchscreens and keypads.
    public var deviceCount: Int { devices.count }

    /// Opens every usable device under `dir`.
    public func openAll(in dir: String = "/dev/input") {
        directory = dir
        for path in EvdevDevice.nodes(in: dir) { open(path) }
    }

    /// Watches `directory` for devices coming and going.
    public func watchForHotplug() {
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
            noted[path] = nil
            awaitingUdev.remove(path)
            if let fd = devices.first(where: { $0.value.device.path == path })?.key { remove(fd, "removed") }
        case .rescan:
            openAll(in: directory)
        }
    }

    public func open(_ path: String) {
        if devices.values.contains(where: { $0.device.path == path }) { return }
        // A device udev leaves out (LIBINPUT_IGNORE_DEVICE, another seat) is not even opened.
        let properties = EvdevDevice.deviceNumber(of: path).flatMap { udevProperties($0, path) }
        if let out = InputAdmission.leftOut(udev: properties, seat: settings.seat) {
            say(out, path, label: path)
            return
        }
        let dev: EvdevDevice
        do { dev = try EvdevDevice(path: path) } catch {
            Log.debug("\(path): \(error)")
            return
        }
        let label = "\(path) (\(dev.name))"
        let admission = admit(dev, label: label, properties)
        if let why = admission.skipped {
            Log.debug("\(label): not used: \(why)")
            return
        }
        // Touch ids are made unique across devices.
        let base = touchIDBase
        let deliver = self.deliver
        var touch: TouchInput?
        var description = dev.description
        let calibration = admission.calibration
        var settings = self.settings, screen = self.screen
        let placed = place?(dev.description)
        if let placed {
            settings.displayRotation = placed.rotation
            screen = placed.screen
        }
        if admission.touchscreen == .asDirect { description.properties.insert(DeviceDescription.INPUT_PROP_DIRECT) }
        let made: Result<TouchInput, NotATouchscreen> = if case .no(let why) = admission.touchscreen {
            .failure(NotATouchscreen(why))
        } else {
            TouchInput.make(label: label, device: description, settings: settings, screen: screen,
                            calibration: calibration, deliver: { touches, time in
                                deliver(touches.map { var t = $0; t.id += base; return t }, time)
                            })
        }
        switch made {
        case .success(let t):
            touch = t
            if let placed {
                outputOfPanel[base / ScreenTouch.panelStride] = placed.output
                Log.info("touchscreen \(label) belongs to output \(placed.output)"
                         + (dev.description.millimetres.map { " (\($0.width)x\($0.height) mm)" } ?? ""))
            }
            touchIDBase += ScreenTouch.panelStride
            // The kernel sends only the values that change: a finger landing where the
            // last one left on one axis sends no value for that axis. The positions the
            // panel last reported (and a finger already down) are taken from the kernel's
            // state at open, as after SYN_DROPPED, or such a touch had no position until
            // it moved on that axis (after every restart of the daemon, for instance).
            t.resync(dev.snapshot(), at: EventLoop.now())
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
        devices[dev.fd] = Entry(device: dev, touch: touch, keys: keys, admission: admission)
        dev.grab(holdsInput())
    }

    /// udev's properties of character device `number` (the node at `path`), nil if udev has
    /// not initialised it; a device udevd has yet to process waits for its queue.
    private func udevProperties(_ number: dev_t, _ path: String) -> UdevProperties? {
        guard let udev else { return nil }
        func read() -> Udev.Record? {
            do { return try udev.record(ofCharacterDevice: number, path) } catch {
                Log.debug("\(path): no udev record: \(error)")
                return nil
            }
        }
        var record = read()
        if record?.initialized == false, UdevQueue.udevdIsActive(udev), watchUdevQueue(udev) {
            // Read again with the queue watched: udevd may have finished it in between.
            record = read()
            if record?.initialized == false {
                awaitingUdev.insert(path)
                Log.debug("\(path): udevd has not processed it yet")
            }
        }
        return record?.udevProperties
    }

    /// What `properties` (udev's, or nil) make of `dev`.
    private func admit(_ dev: EvdevDevice, label: String, _ properties: UdevProperties?) -> InputAdmission {
        let quirk = InputQuirk.merged(settings.quirks, for: dev.description)
        let admission = InputAdmission.decide(dev.description, quirk: quirk, udev: properties, seat: settings.seat)
        say(admission, dev.path, label: label)
        return admission
    }

    /// Logs the admission's note, once per device.
    private func say(_ admission: InputAdmission, _ path: String, label: String) {
        if let note = admission.note, noted[path] != note {
            noted[path] = note
            Log.info("\(label): \(note)")
        }
    }

    /// Puts udevd's queue on the loop, if it is not; false if it cannot be watched.
    private func watchUdevQueue(_ udev: Udev) -> Bool {
        if udevQueue != nil { return true }
        do {
            let queue = try UdevQueue(udev)
            try loop.register(queue.fd, .readable) { [weak self] _ in self?.udevQueueChanged() }
            udevQueue = queue
            return true
        } catch {
            Log.warning("udevd's queue cannot be watched: devices plugged in are read without udev's properties: \(error)")
            return false
        }
    }

    /// udevd's queue may have emptied: the nodes it had not processed are looked at again.
    private func udevQueueChanged() {
        udevQueue?.flush()
        for path in awaitingUdev {
            awaitingUdev.remove(path)
            guard let fd = devices.first(where: { $0.value.device.path == path })?.key else {
                open(path)  // passed over before: perhaps now a device to use
                continue
            }
            if admittedOtherwise(fd) {
                // The old device (its descriptor and its grab) goes before the new one opens.
                remove(fd, "opened again with udev's properties")
                open(path)
            }
        }
        if awaitingUdev.isEmpty, let queue = udevQueue {
            loop.unregister(queue.fd)
            udevQueue = nil
        }
    }

    /// Whether udev's properties now make something else of the device open as `fd`
    /// than when it was opened.
    private func admittedOtherwise(_ fd: Int32) -> Bool {
        guard let entry = devices[fd] else { return false }
        let path = entry.device.path
        let properties = entry.device.deviceNumber.flatMap { udevProperties($0, path) }
        var now = admit(entry.device, label: "\(path) (\(entry.device.name))", properties), before = entry.admission
        now.note = nil; before.note = nil
        if now == before { devices[fd]?.admission = now }
        return now != before
    }

    /// Grabs or releases every device open now (devices opened later ask `holdsInput`).
    public func grab(_ on: Bool) {
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
