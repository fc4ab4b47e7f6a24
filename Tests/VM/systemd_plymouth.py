"""The boot splash's checks of the systemd VM test (run_systemd.py): two boots of the same
image with plymouth showing a splash, as a Debian image with plymouth installed and `splash`
on the kernel's command line boots, handing the screen over to the lock screen; in the
second (the fault boot) plymouthd fails in the middle of the hand-over.

The image has Debian's plymouth and plymouth-themes and a theme of the test's (THEME:
Debian's two-step plugin on one flat colour, SPLASH, that nothing else on the screen has,
with the spinner theme's still pictures and no throbber: THROBBER_FAULT) set in
/etc/plymouth/plymouthd.conf. These boots add `splash plymouth.ignore-serial-consoles` to
the kernel's command line (the serial ports are the test's, a kiosk has none); the main
boot has `plymouth.enable=0` and runs as before. From QEMU's start to the end of the
checks, QMP screendumps are taken in a loop from the host (every DUMP_EVERY_S at most),
each classified as "splash" (most of a sparse grid over the screen is SPLASH), "lock" (the
lock screen's background) or "other" (the firmware's screen, the text console, a black
screen).

The fault boot adds `touchlock_vm_splash_fault`, which starts
touchlock-vm-splash-fault.service: plymouthd is stopped (SIGSTOP) before touchlock's units
run, so `plymouth deactivate` is not answered and touchlockd's switch from plymouth's VT
waits; once touchlockd has logged that the switch did not complete, plymouthd is sent
SIGABRT and let go on, and its crash handler puts its VT back to text and it ends. That is
what Debian 12's plymouthd does when THROBBER_FAULT strikes (there, with plymouth.debug, its
crash handler waits 30 s first, which is why the fault boot has no trace).

Checks, in each boot:
  splash     plymouth showed the splash: some screendumps are the splash, and
             plymouth-start.service started in this boot.
  hand-over  from the first splash screendump on, the screen is the splash, then the lock
             screen, and then only the lock screen: no other screendump (a black or console
             frame) between them, and no splash after the lock screen (no fight for the
             display), up to HOLD_S after plymouthd has gone. If plymouthd aborted (always
             in the fault boot, where it must), other frames between are allowed (plymouth's
             own), and what is touchlockd's is held to RECOVER_S: its first frame at most
             that long after plymouthd's end, in the journal.
  order      plymouth quits once the lock screen is shown: the journal has touchlockd's
             "first frame shown" before plymouth-quit.service starts, plymouthd is gone by
             the end, the active VT is touchlockd's, and the status says locked and shown.
  touches    after the hand-over, a wrong pattern drawn on the panel is counted (the input is
             touchlockd's, not plymouth's).

Figures: screendumps and their interval, the splash's and the lock screen's first
screendumps after QEMU's start, the time between the last splash and the first lock
screen, READY=1 to plymouth-quit.service done, how touchlockd got DRM master, and after an
abort plymouthd's end to touchlockd's first frame. Screendumps: plymouth-splash.png (the
first splash), plymouth-lock.png (the first lock screen), plymouth-other.png (the first
screendump after the splash that was neither, if any); plymouth-fault-*.png for the fault
boot.
"""
import json
import os
import shutil
import time

from run_e2e import CheckFailed, inject, save, stroke
from run_kiosk import near
from systemd_deploy import MONO, Dumper, lock_shown

# Debian 12's plymouthd 22.02 aborts, in some boots, with a theme that has a throbber (the
# spinner theme's): its frame timer computes the next delay as MAX(1/30 s - elapsed, 5 ms)
# with a macro that reads the clock twice, so when more than the delay passes between the
# two reads (a busy boot), the delay given is negative and ply_event_loop_watch_for_timeout's
# assertion `seconds > 0.0` fails. Its crash handler then puts its VT back to text (a black
# screen) and, with plymouth.debug, waits 30 s before it ends. Seen in the VM in about half
# the boots with the spinner theme's throbber; the backtrace and the assertion's message came
# from gdb in the guest.
THROBBER_FAULT = "ply-event-loop.c:917: ply_event_loop_watch_for_timeout: Assertion `seconds > 0.0' failed"
THEME = "touchlock-vm"
SPLASH = (200, 40, 140)          # the theme's background colour
HOLD_S = 3.0                     # screendumps go on this long after plymouthd has gone
RECOVER_S = 1.0                  # plymouthd aborted: touchlockd's first frame within this of
                                 # its end (its pidfd asks for the VT again at once)
CHECKS = ["plymouth: the boot shows plymouth's splash",
          "plymouth: the splash hands over to the lock screen with no other frame, and never comes back",
          "plymouth: plymouth quits only once the lock screen is shown",
          "plymouth: after the hand-over the lock screen takes the panel's touches"]
POWEROFF_CHECK = ("plymouth: at a poweroff while locked, the lock screen stays until plymouth's poweroff splash,"
                  " and never comes back")
CHECKS.append(POWEROFF_CHECK)
FAULT_CHECKS = ["plymouth fault: the boot shows plymouth's splash",
                f"plymouth fault: plymouthd stops answering, then aborts, and the lock screen is shown within"
                f" {RECOVER_S} s of its end, and never the splash again",
                "plymouth fault: the lock screen's VT is on screen, and plymouth-quit runs after its first frame",
                "plymouth fault: after the hand-over the lock screen takes the panel's touches"]
WRONG = [0, 3, 6, 7]


def install_theme(root):
    """The test's theme and plymouthd.conf in the image's root: Debian's two-step plugin on
    SPLASH instead of black, with the spinner theme's still pictures (the password
    prompt's) and none of its frames: no throbber, no animation. Debian 12's plymouthd
    22.02 aborts in some boots with a throbber (THROBBER_FAULT); the splash's hand-over is
    what this test judges, not that fault."""
    d = os.path.join(root, "usr/share/plymouth/themes", THEME)
    os.makedirs(d, exist_ok=True)
    spinner = os.path.join(root, "usr/share/plymouth/themes/spinner")
    for name in sorted(os.listdir(spinner)):
        if name.endswith(".png") and not name.startswith(("throbber-", "animation-", "progress-")):
            shutil.copy(os.path.join(spinner, name), d)
    colour = "0x%02x%02x%02x" % SPLASH
    with open(os.path.join(d, f"{THEME}.plymouth"), "w") as f:
        f.write("[Plymouth Theme]\nName=touchlock VM test\nDescription=One flat colour, no animation\n"
                f"ModuleName=two-step\n\n[two-step]\nImageDir=/usr/share/plymouth/themes/{THEME}\n"
                "HorizontalAlignment=.5\nVerticalAlignment=.7\nTransition=none\nTransitionDuration=0.0\n"
                f"BackgroundStartColor={colour}\nBackgroundEndColor={colour}\n\n"
                "[boot-up]\nUseEndAnimation=false\n")
    with open(os.path.join(root, "etc/plymouth/plymouthd.conf"), "w") as f:
        f.write(f"[Daemon]\nTheme={THEME}\nShowDelay=0\n")


def plymouthd_aborted(g):
    """How plymouthd ended, if it was killed by a signal (its unit's result), else ""."""
    _, lines = g.run("systemctl show -p Result --value plymouth-start.service;"
                     " systemctl show -p ExecMainStatus --value plymouth-start.service", check=False)
    if len(lines) >= 2 and lines[-2].strip() == "signal":
        return f"plymouth-start.service killed by signal {lines[-1].strip()}"
    return ""


def splash_shown(img):
    pts = [(img.width * (i + 0.5) / 32, img.height * (j + 0.5) / 20) for i in range(32) for j in range(20)]
    return sum(1 for x, y in pts if near(img.pixel(x, y), SPLASH, 8)) >= 0.6 * len(pts)


def shutdown_kind(img):
    """A screendump's kind: "splash", "lock" or "other" (the poweroff's, and the boot's once the splash was seen)."""
    return "splash" if splash_shown(img) else "lock" if lock_shown(img) else "other"


def classifier():
    """Each screendump's kind: "before" until the first splash, then "splash", "lock" or
    "other"."""
    seen = []

    def kind(img):
        k = shutdown_kind(img)
        if k == "splash":
            seen.append(True)
        return k if seen else "before"
    return kind


class PlymouthBoot:
    """One boot with the splash: `guest` is a SystemdGuest not started yet, `run` the Run
    (made with CHECKS) that records these checks and their figures."""

    def __init__(self, run, guest, fault=False):
        self.run, self.g, self.out = run, guest, run.out
        run.guest = guest
        # The fault boot (touchlock-vm-splash-fault.service in the image): plymouthd stops
        # answering, then aborts, in the middle of the hand-over.
        self.fault = fault
        self.name = "plymouth fault boot" if fault else "plymouth boot"
        self.prefix = "plymouth-fault" if fault else "plymouth"

    def boot(self):
        g = self.g
        g.start()
        t0 = time.monotonic()
        self.dumper = Dumper(g.qmp_path, g.workdir, kind=classifier(), keep=("splash", "lock", "other"))
        self.dumper.start()
        g.expect(r"^@@ready", self.run.args.boot_timeout, what="the guest's shell (touchlock-vm-agent)")
        # touchlockd active (READY=1: its first frame shown), plymouth-quit.service done and
        # plymouthd gone; then HOLD_S more of screendumps.
        g.run("i=0; until systemctl is-active -q touchlockd.service && systemctl is-active -q plymouth-quit.service"
              " && ! pidof plymouthd >/dev/null; do [ $i -lt 600 ] || break; sleep 0.2; i=$((i+1)); done",
              timeout=150, check=False)
        time.sleep(HOLD_S)
        frames = self.dumper.stop()
        self.dumper.close()
        self.t0 = t0
        return frames

    def run_all(self):
        g = self.g
        frames = self.boot()
        kinds = [k for _, k in frames]
        n = len(frames)
        steps = [b - a for (a, _), (b, _) in zip(frames, frames[1:])]
        self.run.figure(f"{self.name}: screendumps",
                        f"{n}, every {sum(steps) / max(1, len(steps)) * 1e3:.0f} ms on average,"
                        f" longest {max(steps, default=0) * 1e3:.0f} ms")
        first = {k: next((t - self.t0 for t, kk in frames if kk == k), None) for k in ("splash", "lock")}
        self.run.figure(f"{self.name}: first splash / first lock screen after QEMU's start",
                        " / ".join(f"{v:.1f} s" if v is not None else "never" for v in first.values()))
        kept = self.dumper.kept

        def splash():
            if "splash" not in kinds:
                raise CheckFailed(f"no screendump of {n} shows the splash (kinds seen: {sorted(set(kinds))})")
            save(self.out, f"{self.prefix}-splash.png", kept["splash"])
            _, lines = g.run("journalctl -b -o cat --no-pager _PID=1 | grep -c 'Started plymouth-start.service'"
                             " || journalctl -b -o cat --no-pager _PID=1 | grep -c 'Started .*Plymouth Boot Screen'",
                             check=False)
            if not lines or lines[-1].strip() in ("", "0"):
                raise CheckFailed("plymouth-start.service did not start in this boot")

        def hand_over():
            if "splash" not in kinds:
                raise CheckFailed("no splash")
            after = [k for k in kinds if k != "before"]
            if "lock" not in after:
                raise CheckFailed(f"the lock screen never followed the splash ({len(after)} screendumps:"
                                  f" {sorted(set(after))})")
            save(self.out, f"{self.prefix}-lock.png", kept["lock"])
            i = after.index("lock")
            between = [k for k in after[:i] if k != "splash"]
            later = [k for k in after[i:] if k != "lock"]
            if "other" in kept and (between or later):
                save(self.out, f"{self.prefix}-other.png", kept["other"])
            seen = [(t, k) for t, k in frames if k != "before"]
            t_splash, t_lock = seen[i - 1 - len(between)][0], seen[i][0]
            aborted = plymouthd_aborted(g)
            if self.fault and not aborted:
                raise CheckFailed("plymouthd did not abort: the fault was not injected"
                                  " (touchlock-vm-splash-fault.service)")
            if between or self.fault:
                # A plymouthd that aborts (Debian 12's 22.02 with a throbber, THROBBER_FAULT;
                # the fault boot's, on purpose) leaves a gap that is plymouth's: its crash
                # handler puts its VT back to text. What is touchlockd's is that it takes over
                # at once: its first frame within RECOVER_S of plymouthd's end.
                gap = t_lock - t_splash
                if not aborted:
                    raise CheckFailed(f"{len(between)} screendumps between the splash and the lock screen were"
                                      f" neither ({self.prefix}-other.png)")
                self.run.figure(f"{self.name}: plymouthd aborted",
                                f"{aborted}; {len(between)} screendumps ({gap:.1f} s) between the last splash"
                                f" and the lock screen")
                _, j = g.run("journalctl -b -o short-monotonic --no-pager _PID=1 + _SYSTEMD_UNIT=touchlockd.service"
                             " | grep -e 'plymouth-start.service: Main process exited' -e 'first frame shown'",
                             check=False)
                end = [float(MONO.match(l).group(1)) for l in j if "Main process exited" in l and MONO.match(l)]
                first = [float(MONO.match(l).group(1)) for l in j if "first frame shown" in l and MONO.match(l)]
                if not end or not first:
                    raise CheckFailed("the journal lacks plymouthd's end or touchlockd's first frame: " + " | ".join(j))
                late = first[0] - end[0]
                self.run.figure(f"{self.name}: plymouthd's end to touchlockd's first frame", f"{late:.2f} s")
                _, how = g.run("journalctl -b -o cat --no-pager -u touchlockd.service"
                               " | grep -e 'has ended' -e 'owner' -e 'asked for again' -e 'shown late'", check=False)
                self.run.figure(f"{self.name}: the switch after plymouthd's end, as touchlockd logs it",
                                " / ".join(how[-4:]) or "nothing logged")
                if late > RECOVER_S:
                    raise CheckFailed(f"plymouthd aborted ({aborted}) and touchlockd's first frame came {late:.2f} s"
                                      f" after its end, more than {RECOVER_S} s ({self.prefix}-other.png)")
            if later:
                raise CheckFailed(f"after the lock screen, {later.count('splash')} screendumps showed the splash"
                                  f" and {later.count('other')} something else ({self.prefix}-other.png)")
            # The hand-over itself: between the last splash and the first lock screen, where a
            # black frame would be.
            self.run.figure(f"{self.name}: screendumps of the splash, then of the lock screen",
                            f"{i - len(between)}, then {len(after) - i}; the last splash and the first lock screen"
                            f" {(t_lock - t_splash) * 1e3:.0f} ms apart")

        def order():
            _, journal = g.run("journalctl -b -o short-monotonic --no-pager _PID=1 + _SYSTEMD_UNIT=touchlockd.service"
                               " | grep -e 'first frame shown' -e 'plymouth-quit.service' -e 'Terminate Plymouth'",
                               check=False)
            frame = [l for l in journal if "first frame shown" in l]
            quit_ = [l for l in journal if "first frame shown" not in l]
            if not frame or not quit_:
                raise CheckFailed("the journal lacks touchlockd's first frame or plymouth-quit.service: "
                                  + " | ".join(journal))
            tf, tq = (float(MONO.match(l).group(1)) for l in (frame[0], quit_[0]))
            if tq < tf:
                raise CheckFailed(f"plymouth-quit.service started at {tq:.3f} s, before the first frame at {tf:.3f} s")
            rc, _ = g.run("pidof plymouthd", check=False)
            if rc == 0:
                raise CheckFailed("plymouthd is still running")
            _, vt = g.run("cat /sys/class/tty/tty0/active")
            _, conf = g.run("touchlockctl status --json </dev/null")
            st = [json.loads(l) for l in conf if l.startswith("{")]
            if not st or st[-1]["state"] != "locked" or st[-1].get("display") != "shown":
                raise CheckFailed("status after the hand-over: " + " | ".join(conf))
            want = f"tty{st[-1].get('vt')}"
            if vt[-1] != want:
                raise CheckFailed(f"the active VT is {vt[-1]}, want {want}")
            _, t = g.run("systemctl show -p ActiveEnterTimestampMonotonic --value touchlockd.service;"
                         " systemctl show -p ActiveEnterTimestampMonotonic --value plymouth-quit.service")
            ready, quit_done = int(t[-2]), int(t[-1])
            self.run.figure(f"{self.name}: READY=1 to plymouth-quit.service done", f"{(quit_done - ready) / 1e6:.2f} s")
            # How DRM master came, as the daemon logs it.
            _, drm = g.run("journalctl -b -o cat --no-pager -u touchlockd.service | grep -e 'drm: ' -e 'VT '",
                           check=False)
            again = any("opened again to become DRM master" in l for l in drm)
            self.run.figure(f"{self.name}: DRM master", "on the card opened again after the VT switch" if again
                            else "on the first descriptor")

        def touches():
            _, out = g.run("touchlockctl status --json </dev/null")
            st = next((json.loads(l) for l in reversed(out) if l.startswith("{")), None)
            if not st or "pattern" not in st:
                raise CheckFailed("no status with a pattern: " + " | ".join(out))
            g.run("mkfifo /tmp/inject && exec 3<>/tmp/inject")
            since = g.mark()
            g.run("touchinject </tmp/inject >/dev/ttyS0 2>&1 &")
            g.expect(r"^device (/dev/input/event\d+)$", 10, since, what="the uinput device")
            since = g.mark()
            _, pid = g.run("systemctl show -p MainPID --value touchlockd.service")
            g.run(f"echo 'wait-open {pid[-1]}' >&3")
            g.expect(r"^opened ", 15, since, what="touchlockd opening the touchscreen")
            g.run(f"echo 'size {st['screen']['width']} {st['screen']['height']}' >&3")
            nodes = [tuple(p) for p in st["pattern"]["nodes"]]
            failures = st.get("failures", 0)
            inject(g, stroke(nodes, WRONG, lift=True), "@@plymouth-wrong")
            deadline = time.monotonic() + 10
            while True:
                _, out = g.run("touchlockctl status --json </dev/null")
                s = [json.loads(l) for l in out if l.startswith("{")]
                if s and s[-1].get("failures") == failures + 1:
                    return
                if time.monotonic() > deadline:
                    raise CheckFailed(f"a wrong pattern after the hand-over was not counted: {s[-1] if s else out}")
                time.sleep(0.3)

        for name, fn in zip(FAULT_CHECKS if self.fault else CHECKS[:4], (splash, hand_over, order, touches)):
            self.run.record(name, fn)
        # The hand-over as the journal has it, in every boot: the unit's ExecStartPre
        # (plymouth deactivate), touchlockd's VT and DRM lines, plymouthd's end.
        g.run("journalctl -b -o short-monotonic --no-pager _PID=1 + _SYSTEMD_UNIT=touchlockd.service"
              " + SYSLOG_IDENTIFIER=plymouthd + SYSLOG_IDENTIFIER=plymouth"
              " | grep -i -e plymouth -e touchlock -e 'VT ' -e 'drm: ' -e cover | tail -n 40", check=False)
        if any(self.run.results.values()):
            # plymouthd's own words and end (a crash shows as the unit's exit status and in
            # the kernel's log), the hand-over as touchlockd saw it, and the trace's end:
            # filtered of the event loop and the animation's frames, then as it is.
            g.run("journalctl -b -o short-monotonic --no-pager -u plymouth-start -u plymouth-quit"
                  " -u touchlockd | tail -n 60;"
                  " journalctl -b -k -o short-monotonic --no-pager | grep -i -e plymouth -e traps: -e segfault | tail -n 10;"
                  " grep -v -e ply-event-loop -e on_update /run/plymouth-trace.log | tail -n 60;"
                  " tail -n 15 /run/plymouth-trace.log", check=False)

        def poweroff():
            # Locked and shown (the checks above): the poweroff is asked for a second after
            # this command has answered, and the screen watched until QEMU exits.
            dumper = Dumper(g.qmp_path, g.workdir, kind=shutdown_kind, keep=("other",))
            dumper.start()
            t_ask = time.monotonic() + 1.0
            g.run("systemd-run --quiet --on-active=1 systemctl poweroff")
            frames = dumper.until_exit(g.proc, 120)
            kinds = [k for _, k in frames]
            if not kinds or kinds[0] != "lock":
                raise CheckFailed(f"the screen before the poweroff was not the lock screen ({kinds[:1]})")
            if "splash" not in kinds:
                raise CheckFailed(f"plymouth's poweroff splash never showed ({len(kinds)} screendumps:"
                                  f" {kinds.count('lock')} of the lock screen, {kinds.count('other')} other)")
            s = kinds.index("splash")
            if "lock" in kinds[s:]:
                raise CheckFailed("the lock screen came back after plymouth's poweroff splash (a fight for the display)")
            last_lock = max(i for i, k in enumerate(kinds) if k == "lock")
            t_lock, t_splash = frames[last_lock][0], frames[s][0]
            self.run.figure("plymouth boot: poweroff", f"the lock screen until {t_lock - t_ask:.1f} s after it was"
                            f" asked for, {s - last_lock - 1} screendumps ({t_splash - t_lock:.1f} s) between it and"
                            f" plymouth's splash, then {kinds[s:].count('splash')} of the splash")

        if not self.fault:
            self.run.record(POWEROFF_CHECK, poweroff)
