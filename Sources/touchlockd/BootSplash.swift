import TouchlockCore
import TouchlockDisplay
import TouchlockSystem

/// The boot splash's side of the VT hand-off: plymouthd, while it owns the VT on screen.
/// What the hand-over decides is the Core's (the first cover taken in place over a splash
/// that let the display go: `TerminalCover`; a switch left pending by its owner's end:
/// `TerminalSwitch.activeOwnerEnded`; no READY=1, at which plymouth quits, before our VT is
/// shown: `Startup`); this watches the one thing the kernel does not tell, plymouthd's end.
///
/// A splash that owns the VT on screen and ends in the middle of our switch (Debian 12's
/// plymouthd 22.02 aborts at boot with an animated theme) leaves the switch pending: its
/// end (a pidfd) takes its VT over and asks for ours again at once, rather than after the
/// switch's timeout.
final class BootSplash {
    /// plymouthd's pid file (plymouth-start.service's --pid-file), while it runs.
    static let pidFile = "/run/plymouth/pid"
    private var watch: ProcessEndWatch?

    /// Watches plymouthd if it runs; nil if it does not (no pid file) or cannot be watched.
    init?(loop: EventLoop, terminal: TerminalHandoff) {
        guard let (bytes, _) = try? FileContents.read(Self.pidFile, limit: 32),
              let pid = Int32(String(decoding: bytes, as: UTF8.self).filter(\.isNumber)), pid > 1 else { return nil }
        do {
            watch = try ProcessEndWatch(pid: pid, loop: loop) { [weak terminal] in
                Log.info("plymouthd (process \(pid)) has ended")
                terminal?.activeOwnerEnded()
            }
        } catch {
            Log.info("\(Self.pidFile): plymouthd not watched: \(error)")
            return nil
        }
    }
}
