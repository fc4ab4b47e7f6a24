import CLinux
import Glibc
import TouchlockCore
import TouchlockSystem

/// A virtual terminal of our own, through the ioctls of console_ioctl(2). The seam the VT
/// hand-off is tested through: `LinuxVirtualTerminal` is the kernel's, tests bring their own.
public protocol VirtualTerminalDevice: AnyObject {
    /// Our VT's number (ttyN).
    var number: Int { get }
    /// The VT on screen now (VT_GETSTATE).
    func activeTerminal() throws(SystemError) -> Int
    /// The VTs some process has open (VT_GETSTATE's v_state: VTs 1 to 15).
    func terminalsInUse() throws(SystemError) -> Set<Int>
    /// VT_ACTIVATE `n`: asks the kernel to show it (it returns before the switch is done).
    func activate(_ n: Int) throws(SystemError)
    /// VT_RELDISP VT_ACKACQ.
    func acknowledgeAcquire() throws(SystemError)
    /// VT_RELDISP 1 (allowed) or 0 (refused).
    func answerRelease(allowed: Bool) throws(SystemError)
    /// VT_LOCKSWITCH (on) or VT_UNLOCKSWITCH.
    func lockSwitching(_ on: Bool) throws(SystemError)
    /// Back to VT_AUTO and KD_TEXT, switching unlocked, then VT_ACTIVATE `back` if given;
    /// closes the terminal. Safe twice.
    func restore(showing back: Int?)
    /// Closes the terminal leaving it as it is (VT_PROCESS, KD_GRAPHICS, shown), with
    /// switching locked: the kernel keeps all of it after the process has gone, until the
    /// daemon after this one opens it again. Any VT adopted is given back.
    func leaveLocked()
    /// VT `n` is on screen in KD_GRAPHICS with nobody answering for its switches (VT_AUTO:
    /// plymouthd deactivated, or quit keeping its splash), which makes the kernel ignore
    /// every switch away from it: it is put in VT_PROCESS with our release signal, so that
    /// the kernel asks us. `ownerEnded`: the process that had it in VT_PROCESS is known to
    /// have ended, and the kernel would wait for its answer until it is reaped (it signals
    /// the zombie); it is taken over the same way. True if it was.
    func adoptIfSwitchesIgnored(_ n: Int, ownerEnded: Bool) -> Bool
    /// The release signal was for the VT adopted: the switch is allowed, and that VT goes
    /// back to VT_AUTO and KD_TEXT (no longer on screen, the console does not draw). True
    /// if it was (the adopted VT on screen).
    func answerAdoptedRelease() -> Bool
}

extension VirtualTerminalDevice {
    public func restore() { restore(showing: nil) }
    /// Devices with nothing to adopt (tests' own) never do.
    public func adoptIfSwitchesIgnored(_ n: Int, ownerEnded: Bool) -> Bool { false }
    public func answerAdoptedRelease() -> Bool { false }
}

/// The kernel's virtual terminals. Ours is put in VT_PROCESS mode, so the kernel asks
/// before switching away from it (`releaseSignal`) and tells when it is shown
/// (`acquireSignal`), and in KD_GRAPHICS, so the console never draws over the lock screen.
public final class LinuxVirtualTerminal: VirtualTerminalDevice {
    public let number: Int
    private var fd: Int32
    private var switchingLocked = false
    private let releaseSignal: Int32
    /// Another VT put in VT_PROCESS with our release signal (`adoptIfSwitchesIgnored`).
    private var adopted: (number: Int, fd: Int32)?

    /// Why there are no VTs here (no /dev/tty0: a kernel without CONFIG_VT, or a container),
    /// or nil when there are.
    public static func unavailableReason(console: String = "/dev/tty0") -> String? {
        access(console, F_OK) == 0 ? nil : "\(console) does not exist (a kernel without virtual terminals)"
    }

    /// Opens VT `number` (nil: the first free one, VT_OPENQRY) and takes it over.
    public init(number requested: Int?, releaseSignal: Int32, acquireSignal: Int32,
                console: String = "/dev/tty0") throws(SystemError) {
        let flags = O_RDWR | O_NOCTTY | O_CLOEXEC
        let n: Int
        if let requested {
            n = requested
        } else {
            let c = try SystemCall.check("open", console) { open(console, flags) }
            defer { close(c) }
            var free: Int32 = -1
            try SystemCall.check("ioctl(VT_OPENQRY)", console) { clinux_ioctl_pointer(c, UInt(VT_OPENQRY), &free) }
            guard free > 0 else { throw SystemError("ioctl(VT_OPENQRY)", Errno(rawValue: EBUSY), "no free virtual terminal") }
            n = Int(free)
        }
        let path = "/dev/tty\(n)"
        let t = try SystemCall.check("open", path) { open(path, flags) }
        do {
            var mode = vt_mode()
            mode.mode = CChar(VT_PROCESS)
            mode.relsig = Int16(releaseSignal)
            mode.acqsig = Int16(acquireSignal)
            try SystemCall.check("ioctl(VT_SETMODE)", path) { clinux_ioctl_pointer(t, UInt(VT_SETMODE), &mode) }
            try SystemCall.check("ioctl(KDSETMODE)", path) { clinux_ioctl_value(t, UInt(KDSETMODE), UInt(Int(KD_GRAPHICS))) }
        } catch {
            Self.setAutomatic(t)
            close(t)
            throw error
        }
        number = n
        fd = t
        self.releaseSignal = releaseSignal
    }

    deinit { restore() }

    public func activeTerminal() throws(SystemError) -> Int {
        var st = vt_stat()
        let f = fd
        try SystemCall.check("ioctl(VT_GETSTATE)") { clinux_ioctl_pointer(f, UInt(VT_GETSTATE), &st) }
        return Int(st.v_active)
    }

    public func terminalsInUse() throws(SystemError) -> Set<Int> {
        var st = vt_stat()
        let f = fd
        try SystemCall.check("ioctl(VT_GETSTATE)") { clinux_ioctl_pointer(f, UInt(VT_GETSTATE), &st) }
        // Bit n stands for VT n (bit 0 for none): 16 bits, so VTs 1 to 15.
        return Set((1..<16).filter { st.v_state & (1 << UInt16($0)) != 0 })
    }

    public func activate(_ n: Int) throws(SystemError) {
        let f = fd
        try SystemCall.check("ioctl(VT_ACTIVATE)", "VT \(n)") { clinux_ioctl_value(f, UInt(VT_ACTIVATE), UInt(n)) }
    }

    public func acknowledgeAcquire() throws(SystemError) {
        let f = fd
        try SystemCall.check("ioctl(VT_RELDISP, VT_ACKACQ)") { clinux_ioctl_value(f, UInt(VT_RELDISP), UInt(Int(VT_ACKACQ))) }
    }

    public func answerRelease(allowed: Bool) throws(SystemError) {
        let f = fd
        try SystemCall.check("ioctl(VT_RELDISP)", allowed ? "allow" : "refuse") { clinux_ioctl_value(f, UInt(VT_RELDISP), UInt(allowed ? 1 : 0)) }
    }

    public func lockSwitching(_ on: Bool) throws(SystemError) {
        let f = fd
        try SystemCall.check(on ? "ioctl(VT_LOCKSWITCH)" : "ioctl(VT_UNLOCKSWITCH)") {
            clinux_ioctl_value(f, UInt(on ? VT_LOCKSWITCH : VT_UNLOCKSWITCH), UInt(0))
        }
        switchingLocked = on
    }

    public func adoptIfSwitchesIgnored(_ n: Int, ownerEnded: Bool) -> Bool {
        guard adopted == nil, n != number, n > 0 else { return false }
        let path = "/dev/tty\(n)"
        let t = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard t >= 0 else { return false }
        var kd: Int32 = 0
        var mode = vt_mode()
        guard clinux_ioctl_pointer(t, UInt(KDGETMODE), &kd) == 0, clinux_ioctl_pointer(t, UInt(VT_GETMODE), &mode) == 0,
              kd == Int32(KD_GRAPHICS) && mode.mode == CChar(VT_AUTO) || ownerEnded && mode.mode == CChar(VT_PROCESS) else {
            close(t)
            return false
        }
        let orphaned = mode.mode == CChar(VT_PROCESS)
        // Acquire and forced-release signals 0: nothing is sent for them.
        var ours = vt_mode()
        ours.mode = CChar(VT_PROCESS)
        ours.relsig = Int16(releaseSignal)
        guard clinux_ioctl_pointer(t, UInt(VT_SETMODE), &ours) == 0 else {
            Log.warning("terminal: VT \(n) has nobody to answer for its switches, and cannot be taken over: \(Errno.current)")
            close(t)
            return false
        }
        adopted = (n, t)
        Log.info(orphaned
                 ? "terminal: VT \(n)'s owner has ended, and the kernel would wait for its answer until it is reaped: we answer for it"
                 : "terminal: VT \(n) was left in graphics mode with nobody to answer for it (the kernel ignores switches away from it): we answer for it")
        return true
    }

    public func answerAdoptedRelease() -> Bool {
        guard let (n, t) = adopted else { return false }
        guard (try? activeTerminal()) == n else {
            // No longer on screen: the signal is ours, and that VT needs us no more.
            giveBackAdopted()
            return false
        }
        if clinux_ioctl_value(t, UInt(VT_RELDISP), UInt(1)) != 0 { Log.warning("terminal: VT \(n): ioctl(VT_RELDISP): \(Errno.current)") }
        giveBackAdopted()
        return true
    }

    /// The adopted VT given back as the kernel keeps a VT nobody owns: VT_AUTO, and KD_TEXT
    /// only once it is no longer on screen (else the console would be drawn over whatever
    /// is shown on it).
    private func giveBackAdopted() {
        guard let (n, t) = adopted else { return }
        adopted = nil
        Self.setAutomatic(t)
        if (try? activeTerminal()) != n { _ = clinux_ioctl_value(t, UInt(KDSETMODE), UInt(Int(KD_TEXT))) }
        close(t)
    }

    /// VT_AUTO on the VT open as `t`: the kernel switches away from it without asking.
    /// Best effort, for giving a VT back.
    private static func setAutomatic(_ t: Int32) {
        var auto = vt_mode()
        auto.mode = CChar(VT_AUTO)
        if clinux_ioctl_pointer(t, UInt(VT_SETMODE), &auto) != 0 { Log.warning("terminal: ioctl(VT_SETMODE, VT_AUTO): \(Errno.current)") }
    }

    public func leaveLocked() {
        giveBackAdopted()
        guard fd >= 0 else { return }
        if !switchingLocked, clinux_ioctl_value(fd, UInt(VT_LOCKSWITCH), UInt(0)) != 0 {
            Log.warning("terminal: ioctl(VT_LOCKSWITCH) at exit: \(Errno.current)")
        }
        close(fd)
        fd = -1
        Log.info("terminal: VT \(number) left shown with switching locked, for the daemon after this one")
    }

    public func restore(showing back: Int?) {
        giveBackAdopted()
        guard fd >= 0 else { return }
        if switchingLocked { _ = clinux_ioctl_value(fd, UInt(VT_UNLOCKSWITCH), UInt(0)) }
        Self.setAutomatic(fd)
        _ = clinux_ioctl_value(fd, UInt(KDSETMODE), UInt(Int(KD_TEXT)))
        // In VT_AUTO the kernel switches away without asking us.
        if let back { _ = clinux_ioctl_value(fd, UInt(VT_ACTIVATE), UInt(back)) }
        close(fd)
        fd = -1
    }
}

/// Carries out the VT hand-off: drives a `TerminalSwitch` with the signals the kernel
/// sends and performs its actions on the device. The owner is told when our VT is shown
/// (take DRM master and draw), when a switch failed, and when the kiosk's VT is back.
public final class TerminalHandoff {
    public private(set) var machine: TerminalSwitch
    private let device: VirtualTerminalDevice
    private let now: () -> Instant
    private let schedule: (Instant, @escaping (Instant) -> Void) -> Void
    private var armed: Set<Instant> = []
    public var onShown: (() -> Void)?
    public var onFailed: ((String) -> Void)?
    public var onHandedBack: (() -> Void)?
    /// The VT to hand back to changed (for the owner to keep across a restart).
    public var onReturnTargetChanged: ((Int?) -> Void)?
    private var toldReturnTarget: Int?
    /// The VT the daemon before this one was on, if it was another.
    private let previousOwn: Int?

    /// `remembered`: the VT the daemon before this one would have handed back to (kept
    /// across the restart); with none, the lowest VT in use apart from ours. It matters only
    /// when ours is already on screen at the first show. `previousOwn`: the VT the daemon
    /// before this one was on.
    public init(device: VirtualTerminalDevice, remembered: Int? = nil, previousOwn: Int? = nil,
                timeout: Interval = .milliseconds(2000),
                now: @escaping () -> Instant, schedule: @escaping (Instant, @escaping (Instant) -> Void) -> Void) {
        self.device = device
        self.previousOwn = previousOwn == device.number ? nil : previousOwn
        self.now = now
        self.schedule = schedule
        let returnTo = Self.returnTarget(remembered: remembered, ours: device.number, device: device)
        machine = TerminalSwitch(ours: device.number, returnTo: returnTo, timeout: timeout)
        toldReturnTarget = machine.returnTarget
    }

    /// The VT to return to: the remembered one (the kiosk's, even while nobody has it open:
    /// at boot the kiosk starts on it only after the first unlock), else the lowest one in
    /// use apart from ours (a kiosk's compositor keeps its VT open), else nil.
    static func returnTarget(remembered: Int?, ours: Int, device: VirtualTerminalDevice) -> Int? {
        if let r = remembered, r != ours { return r }
        do { return try device.terminalsInUse().subtracting([ours]).min() } catch {
            Log.warning("terminal: \(error); no VT in use is known to return to")
            return nil
        }
    }

    public var number: Int { device.number }

    /// Shows our VT (the lock screen is wanted on screen).
    public func show() {
        let active: Int
        do { active = try device.activeTerminal() } catch {
            Log.warning("terminal: \(error); taking VT \(device.number) as not shown")
            active = 0
        }
        // The VT of the daemon before this one, still on screen where it stopped (it had
        // another number), is no kiosk: the hand-back goes to the VT kept, or the lowest in
        // use. Any other VT is the kiosk's, open or not (at boot the kiosk starts on it
        // only after the first unlock).
        if active != device.number, active > 0 { _ = device.adoptIfSwitchesIgnored(active, ownerEnded: false) }
        var back: Int?
        if active != device.number, active == previousOwn, let inUse = try? device.terminalsInUse(), !inUse.contains(active) {
            back = Self.returnTarget(remembered: machine.kiosk, ours: device.number, device: device)
            if let back { Log.info("terminal: VT \(active), where the daemon before this one was, is on screen; handing back to VT \(back)") }
        }
        perform(machine.show(active: active, returnTo: back, at: now()))
    }

    /// Gives the screen back to the VT shown before ours (DRM master already dropped).
    public func handBack() {
        perform(machine.handBack(at: now()))
    }

    /// A process known to own the VT on screen (plymouthd) has ended.
    public func activeOwnerEnded() {
        if let active = try? device.activeTerminal(), active != device.number, active > 0 {
            _ = device.adoptIfSwitchesIgnored(active, ownerEnded: true)
        }
        perform(machine.activeOwnerEnded(at: now()))
    }

    /// The kernel's acquire signal.
    public func acquireSignal() {
        perform(machine.acquired(at: now()))
    }

    /// The kernel's release signal.
    public func releaseSignal() {
        // The kernel asks for the VT we answer for (a switch to ours from it), not ours.
        if device.answerAdoptedRelease() { return }
        perform(machine.releaseRequested(at: now()))
    }

    private func perform(_ actions: [TerminalSwitch.Action]) {
        for a in actions {
            do {
                switch a {
                case .activate(let n): try device.activate(n)
                case .acknowledgeAcquire: try device.acknowledgeAcquire()
                case .allowRelease: try device.answerRelease(allowed: true)
                case .refuseRelease: try device.answerRelease(allowed: false)
                case .lockSwitching: try device.lockSwitching(true)
                case .unlockSwitching: try device.lockSwitching(false)
                case .armTimer(let t):
                    guard armed.insert(t).inserted else { continue }
                    schedule(t) { [weak self] at in
                        guard let self else { return }
                        self.armed.remove(t)
                        self.perform(self.machine.timerFired(at: at))
                    }
                case .shown: onShown?()
                case .failed(let why): onFailed?(why)
                case .handedBack: onHandedBack?()
                }
            } catch {
                // Locking switching needs CAP_SYS_TTY_CONFIG: without it the hand-off
                // still works, but chvt can switch away while locked. Say so loudly.
                Log.error("terminal: \(error)")
                if case .activate = a { perform(machine.activateFailed("\(error)", at: now())) }
            }
        }
        let target = machine.returnTarget
        if target != toldReturnTarget {
            toldReturnTarget = target
            onReturnTargetChanged?(target)
        }
    }

    /// The VT the next hand-back goes to, if known.
    public var returnTarget: Int? { machine.returnTarget }

    /// The VT on screen now, if it can be read.
    public var activeTerminal: Int? {
        do { return try device.activeTerminal() } catch {
            Log.warning("terminal: \(error)")
            return nil
        }
    }

    /// At exit (`TerminalSwitch.exit`): staying covered (a stop, a restart, an upgrade
    /// while locked), ours is left shown with switching locked, for the daemon after this
    /// one to take over; given back, the kiosk's VT is shown again if ours is; released (a
    /// system shutdown while locked), ours is given back to the kernel and stays shown.
    public func shutdown(_ exit: Cover.Exit = .giveBack) {
        // VT_AUTO before VT_ACTIVATE: in VT_PROCESS the switch would wait for our answer to
        // the release signal, which the loop no longer reads, and a later VT_SETMODE cancels
        // a pending switch (the kiosk's VT was never shown again).
        switch machine.exit(exit) {
        case .leaveLocked: device.leaveLocked()
        case .restore(let back): device.restore(showing: back)
        }
    }
}
