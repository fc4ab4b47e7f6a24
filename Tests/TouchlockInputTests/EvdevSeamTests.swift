import CEvdev
import Glibc
import Testing
import TouchlockCore
import TouchlockInput
import TouchlockSystem

/// A touchscreen behind a scripted libevdev: each `nextEvent` takes the next step of the
/// script (an event, or an errno the kernel would give), and -EAGAIN once it runs out.
/// The node itself is /dev/null, really opened and closed; every call is recorded.
private final class FakeTouchscreen: @unchecked Sendable {
    enum Step {
        case event(UInt16, UInt16, Int32)
        case fail(Int32)
    }
    var script: [Step] = []
    var trace: [String] = []
    var nextEventCalls = 0
    var openErrors: [Int32] = []
    private var nodeFD: Int32 = -1

    static let node = "/dev/null"

    func events(_ steps: Step...) { script += steps }

    var systemCalls: SystemCalls {
        var s = SystemCalls.real
        s.open = { @Sendable path, flags, mode in
            guard String(cString: path) == FakeTouchscreen.node else { return Glibc.open(path, flags, mode) }
            let access = flags & O_ACCMODE == O_RDONLY ? "O_RDONLY" : "O_RDWR"
            if !self.openErrors.isEmpty {
                let e = self.openErrors.removeFirst()
                self.trace.append("open(\(access)) = \(Errno(rawValue: e))")
                errno = e
                return -1
            }
            self.trace.append("open(\(access))")
            self.nodeFD = Glibc.open(path, flags, mode)
            return self.nodeFD
        }
        s.close = { fd in
            if fd == self.nodeFD { self.trace.append("close"); self.nodeFD = -1 }
            return Glibc.close(fd)
        }
        return s
    }

    var evdevCalls: EvdevCalls {
        var c = EvdevCalls.real
        c.newFromFD = { _, device in
            self.trace.append("libevdev_new_from_fd")
            let dev = libevdev_new()!
            libevdev_set_name(dev, "Fake Touchscreen")
            libevdev_enable_property(dev, UInt32(INPUT_PROP_DIRECT))
            libevdev_enable_event_code(dev, UInt32(EV_KEY), UInt32(BTN_TOUCH), nil)
            for (code, maximum) in [(ABS_X, 1023), (ABS_Y, 767), (ABS_MT_POSITION_X, 1023), (ABS_MT_POSITION_Y, 767),
                                    (ABS_MT_SLOT, 9), (ABS_MT_TRACKING_ID, 65535)] {
                var info = input_absinfo(value: 0, minimum: 0, maximum: Int32(maximum), fuzz: 0, flat: 0, resolution: 10)
                libevdev_enable_event_code(dev, UInt32(EV_ABS), UInt32(code), &info)
            }
            device.pointee = dev
            return 0
        }
        c.free = { dev in
            self.trace.append("libevdev_free")
            libevdev_free(dev)
        }
        c.setClockID = { _, _ in 0 }
        c.grab = { _, on in
            self.trace.append(on ? "grab" : "ungrab")
            return 0
        }
        c.nextEvent = { _, _, event in
            self.nextEventCalls += 1
            guard !self.script.isEmpty else { return -EAGAIN }
            switch self.script.removeFirst() {
            case .fail(let e):
                return -e
            case .event(let type, let code, let value):
                event.pointee = input_event(time: timeval(tv_sec: 7, tv_usec: 500), type: type, code: code, value: value)
                return Int32(LIBEVDEV_READ_STATUS_SUCCESS.rawValue)
            }
        }
        return c
    }

    func run<R>(_ body: () throws -> R) rethrows -> R {
        try SystemCalls.$current.withValue(systemCalls) {
            try EvdevCalls.$current.withValue(evdevCalls) { try body() }
        }
    }
}

/// One finger down at (100, 200) in slot 0: the frame a touchscreen sends.
private let touchDown: [FakeTouchscreen.Step] = [
    .event(UInt16(EV_ABS), UInt16(ABS_MT_SLOT), 0),
    .event(UInt16(EV_ABS), UInt16(ABS_MT_TRACKING_ID), 5),
    .event(UInt16(EV_ABS), UInt16(ABS_MT_POSITION_X), 100),
    .event(UInt16(EV_ABS), UInt16(ABS_MT_POSITION_Y), 200),
    .event(UInt16(EV_KEY), UInt16(BTN_TOUCH), 1),
    .event(UInt16(EV_SYN), UInt16(SYN_REPORT), 0),
]

private func codes(_ events: [InputEvent]) -> [[Int32]] {
    events.map { [Int32($0.type), Int32($0.code), $0.value] }
}

private func codes(_ steps: [FakeTouchscreen.Step]) -> [[Int32]] {
    steps.compactMap { if case .event(let t, let c, let v) = $0 { [Int32(t), Int32(c), v] } else { nil } }
}

@Suite(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
struct EvdevSeamTests {
    @Test func interruptedReadsAreRetriedAndLoseNothing() throws {
        let screen = FakeTouchscreen()
        screen.script = [.fail(EINTR)] + touchDown.prefix(3) + [.fail(EINTR)] + touchDown.dropFirst(3)
        var got: [InputEvent] = []
        let result = try screen.run {
            let device = try EvdevDevice(path: FakeTouchscreen.node)
            return device.read({ got.append($0) }, resync: { _, _ in Issue.record("no resync expected") })
        }
        #expect(result == .drained)
        #expect(codes(got) == codes(touchDown))
        #expect(got.allSatisfy { $0.time == Instant(seconds: 7, microseconds: 500) })
        // Two EINTR retried, six events, and the EAGAIN that ends the read.
        #expect(screen.nextEventCalls == 9)
    }

    @Test func aReadCutMidFrameIsDrainedAndTheRestArrivesOnTheNextRead() throws {
        let screen = FakeTouchscreen()
        screen.script = Array(touchDown.prefix(2))  // then EAGAIN: the kernel had only this much
        var got: [InputEvent] = []
        try screen.run {
            let device = try EvdevDevice(path: FakeTouchscreen.node)
            #expect(device.read({ got.append($0) }, resync: { _, _ in }) == .drained)
            #expect(codes(got) == codes(Array(touchDown.prefix(2))))
            screen.script = Array(touchDown.dropFirst(2))
            #expect(device.read({ got.append($0) }, resync: { _, _ in }) == .drained)
            // Nothing read twice, nothing lost, in the kernel's order.
            #expect(codes(got) == codes(touchDown))
            // An empty read: only the EAGAIN.
            let before = screen.nextEventCalls
            #expect(device.read({ got.append($0) }, resync: { _, _ in }) == .drained)
            #expect(screen.nextEventCalls == before + 1 && got.count == touchDown.count)
        }
    }

    @Test func anUnpluggedDeviceIsGoneAfterWhatItSentBefore() throws {
        let screen = FakeTouchscreen()
        screen.script = Array(touchDown) + [.fail(ENODEV)]
        var got: [InputEvent] = []
        try screen.run {
            let device = try EvdevDevice(path: FakeTouchscreen.node)
            #expect(device.read({ got.append($0) }, resync: { _, _ in }) == .gone("device removed"))
            #expect(codes(got) == codes(touchDown))
            screen.script = [.fail(EIO)]
            #expect(device.read({ _ in }, resync: { _, _ in }) == .gone("read failed: Input/output error"))
        }
    }

    @Test func openingFallsBackToReadOnlyAndClosesEverythingOnceInOrder() throws {
        let screen = FakeTouchscreen()
        screen.openErrors = [EACCES]
        try screen.run {
            let device = try EvdevDevice(path: FakeTouchscreen.node)
            #expect(device.name == "Fake Touchscreen")
            #expect(device.description.axes[UInt16(ABS_MT_POSITION_X)]?.maximum == 1023)
            device.grab(true)
        }
        #expect(screen.trace == ["open(O_RDWR) = Permission denied", "open(O_RDONLY)", "libevdev_new_from_fd",
                                 "grab", "ungrab", "libevdev_free", "close"])
    }

    @Test func aNodeThatIsGoneIsAClearError() throws {
        let screen = FakeTouchscreen()
        screen.openErrors = [ENODEV]
        let error = screen.run { () -> SystemError? in
            do throws(SystemError) { _ = try EvdevDevice(path: FakeTouchscreen.node); return nil } catch { return error }
        }
        #expect(error.map { "\($0)" } == "open /dev/null: No such device (errno 19)")
        #expect(screen.trace == ["open(O_RDWR) = No such device"])
    }
}
