#!/usr/bin/env python3
"""touchlock as a Debian system runs it: the package installed on a small Debian 12 root file
system (scripts/vm/systemd.sh), booted under QEMU (TCG) with Debian's kernel and systemd as
PID 1, the whole root an uncompressed initramfs. The unit is the packaged one, enabled as
README.Debian says after a pattern is written to /etc/touchlock/touchlock.conf.

The host talks to a shell on ttyS0 (touchlock-vm-agent.service, Tests/VM/systemd/vm-agent.sh:
"@@rc STATUS" after each command's output); the kernel's and systemd's console is ttyS1,
saved as console.log. A uinput touchscreen (touchinject) makes the failed attempts.

Checks, each on what an integrator would look at:
  ready      touchlockd.service is active (running) after boot, and a unit ordered after it
             (touchlock-vm-probe.service) saw, when it started, the lock screen shown
             (status `display: shown`, state locked); the screendump is the idle lock
             screen; the daemon's "first frame shown" comes before systemd's "Started" in
             its journal.
  watchdog   SIGSTOP to the main PID: systemd's watchdog kills it (the journal says so),
             NRestarts goes up by one, a new main PID is active and shows the lock screen.
  lockout    two wrong patterns, `systemctl restart touchlockd`: still 2 failures; three
             more: locked out; `systemctl restart touchlockd`: still locked out with 5
             failures and the wait going on (not started again), the nodes drawn disabled.
  security   `systemd-analyze security touchlockd.service` in the guest gives the exposure
             docs/integrating.md states.
  wait-unlock  a stand-in kiosk app with the package's example drop-in, started while
             locked out, waits (touchlock-wait-unlock.service activating); the right
             pattern after the lockout unlocks, and the app starts after
             touchlock-wait-unlock.service became active, which was after the unlock.

The guest is also a Debian kiosk as integrators deploy it: polkitd, libpam-systemd, the user
kiosk, cage's wiki unit cage@tty1 running weston-simple-touch on virtio-gpu, the package's
example drop-in on it, touchlockd on its own VT and its secret set by set-secret (README.Debian's
lines). The checks of systemd_deploy.py and systemd_logind.py (left out with --no-deploy
or TOUCHLOCK_VM_DEPLOY=0) follow the five above: restarts, crashes, the watchdog and upgrades over the
running kiosk, locked and unlocked, and logind's lock-sessions and a suspend. Before that
boot, the image is booted once with plymouth's splash (systemd_plymouth.py, left out with
--no-plymouth): the splash handing the screen over to the lock screen.

Figures printed: QEMU start to the shell, `systemd-analyze time`, touchlockd's exec to
READY=1, SIGSTOP to the new main PID active, `systemctl restart` time, the exposure.
Screendumps as PNG in --out (systemd-ready.png, systemd-watchdog.png,
systemd-lockout.png). Python standard library only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_e2e import (RIGHT, CheckFailed, Guest, InfraError, inject, poll_screen,  # noqa: E402
                     save, stroke)
from systemd_deploy import APP_WAYLAND_LOG, Deploy  # noqa: E402
from systemd_plymouth import CHECKS as PLYMOUTH_CHECKS, FAULT_CHECKS as PLYMOUTH_FAULT_CHECKS, PlymouthBoot, install_theme  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
UNIT = "touchlockd.service"
# Five distinct wrong patterns (a repeated wrong guess does not count again).
WRONG = [[0, 3, 6, 7], [2, 5, 8, 7], [6, 7, 8, 5], [0, 1, 4, 7], [3, 4, 5, 2]]
LOCKOUT_S = 40                   # the fifth failure locks out this long
ERROR_HOLD_MS = 300
CHECKS = ["ready: active only once the lock screen is shown",
          "watchdog: a hung loop (SIGSTOP) is restarted and shows the lock screen",
          "lockout: failures and the lockout are kept across systemctl restart",
          "security: systemd-analyze security rates the unit as docs/integrating.md says",
          "wait-unlock: the kiosk app starts only after the unlock"]
# The labwc boot (Debian 13): the lock screen at boot, then the first unlock, which lets the
# kiosk start; the deployment checks follow.
LABWC_CHECKS = [CHECKS[0], "first unlock: the right pattern unlocks and greetd starts labwc after it"]


# ---------------------------------------------------------------------------- the image

def build_image(args):
    """Adds the test's settings and files to the root with the package installed, enables
    the units and writes the initramfs."""
    r = args.root
    # As README.Debian says: a secret first, with the package's touchlockctl set-secret (the
    # hash into /etc/touchlock/secrets.conf, 0600, never into the readable conffile), then
    # the unit enabled.
    pattern = "-".join(str(i) for i in RIGHT) + "\n"
    p = subprocess.run(["chroot", r, "touchlockctl", "set-secret", "pattern"], input=pattern * 2,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"vm-systemd: `touchlockctl set-secret pattern` in the root failed (exit {p.returncode}):"
                 f" {p.stderr.strip()}")
    secrets = os.path.join(r, "etc/touchlock/secrets.conf")
    st = os.stat(secrets)
    if st.st_mode & 0o077 or st.st_uid != 0:
        sys.exit(f"vm-systemd: set-secret left {secrets} mode {st.st_mode & 0o777:o} owner {st.st_uid}")
    if "$y$" in open(os.path.join(r, "etc/touchlock/touchlock.conf")).read():
        sys.exit("vm-systemd: a hash is in the readable touchlock.conf")
    os.makedirs(os.path.join(r, "etc/touchlock/touchlock.conf.d"), exist_ok=True)
    with open(os.path.join(r, "etc/touchlock/touchlock.conf.d/vm-test.conf"), "w") as f:
        f.write(f"[lockout]\nschedule = 0,0,0,0,{LOCKOUT_S}\nerror_hold_ms = {ERROR_HOLD_MS}\n")
    src = os.path.join(HERE, "systemd")
    shutil.copy(os.path.join(src, "vm-agent.sh"), os.path.join(r, "usr/local/sbin/vm-agent"))
    os.chmod(os.path.join(r, "usr/local/sbin/vm-agent"), 0o755)
    for unit in ("touchlock-vm-agent.service", "touchlock-vm-probe.service", "touchlock-vm-splash-fault.service",
                 "kiosk-app.service", "cage@.service"):
        shutil.copy(os.path.join(src, unit), os.path.join(r, "etc/systemd/system", unit))
    # The kiosk (systemd_deploy.py): the user kiosk in no group but its own; cage's unit
    # from its wiki, enabled on tty1, with the drop-in the package ships as its example
    # for the kiosk's unit; touchlockd on VT 8, above the gettys logind starts on tty1-6.
    if subprocess.run(["chroot", r, "id", "kiosk"], capture_output=True).returncode != 0:
        subprocess.run(["chroot", r, "useradd", "--create-home", "--user-group", "--shell", "/bin/sh", "kiosk"],
                       check=True)
    # cage 0.1.4 will not start without an Xwayland to start lazily; no X client ever connects.
    xwayland = os.path.join(r, "usr/bin/Xwayland")
    if not os.path.exists(xwayland):
        with open(xwayland, "w") as f:
            f.write("#!/bin/sh\nexit 1\n")
        os.chmod(xwayland, 0o755)
    examples = os.path.join(r, "usr/share/doc/touchlock/examples")
    # The one for the kiosk app's unit: not those for touchlock's own units.
    dropins = sorted(os.path.join(d, f) for d, _, fs in os.walk(examples) for f in fs
                     if d.endswith(".service.d") and not os.path.basename(d).startswith("touchlock")
                     and f.endswith(".conf"))
    if len(dropins) != 1:
        sys.exit(f"vm-systemd: want one example drop-in for an app's unit under {examples}, found {dropins}")
    kiosk_d = os.path.join(r, "etc/systemd/system/cage@tty1.service.d")
    os.makedirs(kiosk_d, exist_ok=True)
    shutil.copy(dropins[0], os.path.join(kiosk_d, os.path.basename(dropins[0])))
    print(f"vm-systemd: the kiosk's drop-in, from the package: {os.path.relpath(dropins[0], r)}", flush=True)
    # touchlockd's own VT, as README.Debian's kiosk recipe writes it (its printf line run
    # here); VT 8 if the recipe has none.
    readme = os.path.join(r, "usr/share/doc/touchlock/README.Debian")
    text = open(readme).read() if os.path.exists(readme) else ""
    vt = re.search(r"^\s*(printf '\[display\][^']*' > /etc/touchlock/touchlock\.conf\.d/[\w.-]+\.conf)\s*$", text, re.M)
    if vt:
        subprocess.run(["chroot", r, "sh", "-c", vt.group(1)], check=True)
        print(f"vm-systemd: touchlockd's VT as README.Debian sets it: {vt.group(1)}", flush=True)
    else:
        with open(os.path.join(r, "etc/touchlock/touchlock.conf.d/vt.conf"), "w") as f:
            f.write("[display]\nvt = 8\n")
        print("vm-systemd: README.Debian sets no [display] vt: vt = 8 written", flush=True)
    if args.release != "bookworm":
        labwc_kiosk(r, dropins[0])
    # plymouth's splash, for the boot that shows it (systemd_plymouth.py).
    install_theme(r)
    # A machine id: not a first boot (no systemd-firstboot, no presets applied).
    with open(os.path.join(r, "etc/machine-id"), "w") as f:
        f.write("0123456789abcdef0123456789abcdef\n")
    for cmd in (["systemctl", "enable", UNIT], ["systemctl", "enable", "touchlock-vm-agent.service",
                                                 "touchlock-vm-probe.service", "touchlock-vm-splash-fault.service"],
                ["systemctl", "enable", "cage@tty1.service"], ["systemctl", "set-default", "graphical.target"]):
        p = subprocess.run(["chroot", r] + cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"vm-systemd: `{' '.join(cmd)}` in the root failed: {p.stderr.strip()}")
    # cpio keeps whole seconds of a file's time, and fontconfig finds its caches stale when
    # a font directory's time changes: the font directories' times are cut to the second
    # and the caches made again for them, as they are on a disk.
    for top in ("usr/share/fonts", "usr/local/share/fonts"):
        for d, _, _ in os.walk(os.path.join(r, top)):
            st = os.stat(d)
            os.utime(d, ns=(st.st_atime_ns, st.st_mtime_ns // 10**9 * 10**9))
    subprocess.run(["chroot", r, "fc-cache", "-s"], check=True)
    t = time.monotonic()
    with open(args.initrd, "wb") as out:
        find = subprocess.Popen(["find", ".", "-mindepth", "1"], cwd=r, stdout=subprocess.PIPE)
        cpio = subprocess.run(["cpio", "--quiet", "-o", "-H", "newc"], cwd=r, stdin=find.stdout, stdout=out)
        find.wait()
    if cpio.returncode != 0 or find.returncode != 0:
        sys.exit("vm-systemd: writing the initramfs failed")
    size = os.path.getsize(args.initrd) >> 20
    print(f"vm-systemd: image {args.initrd}: {size} MB in {time.monotonic() - t:.1f} s", flush=True)


def labwc_kiosk(r, dropin):
    """The second kiosk of the Debian 13 image, as Raspberry Pi OS starts labwc: greetd's
    autologin (its initial_session runs labwc as the user kiosk, on greetd's own VT 7, as
    Debian's package sets it), labwc's autostart starting the app, a window rule putting
    it undecorated at the top left (weston-simple-touch keeps its 600x500 buffer; the
    checks look for it where cage puts it), the package's drop-in on greetd.service, and
    touchlockd in VT mode. Which kiosk a boot runs is chosen on the kernel's command line
    (touchlock_vm_kiosk=labwc), by conditions in the test's own drop-ins."""
    with open(os.path.join(r, "etc/greetd/config.toml"), "w") as f:
        f.write('[terminal]\nvt = 7\n\n[default_session]\ncommand = "agreety --cmd /bin/sh"\nuser = "_greetd"\n\n'
                '[initial_session]\ncommand = "env WLR_RENDERER=pixman labwc"\nuser = "kiosk"\n')
    conf = os.path.join(r, "home/kiosk/.config/labwc")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "autostart"), "w") as f:
        # The app's Wayland events logged (WAYLAND_DEBUG): the witness of every touch that
        # reaches it (systemd_deploy.py's app_touches), whatever it draws.
        f.write(f"WAYLAND_DEBUG=client weston-simple-touch 2>>{APP_WAYLAND_LOG} >/dev/null &\n")
    with open(os.path.join(conf, "rc.xml"), "w") as f:
        f.write('<?xml version="1.0"?>\n<labwc_config>\n  <windowRules>\n'
                '    <windowRule identifier="*" serverDecoration="no">\n'
                '      <action name="MoveTo" x="0" y="0" />\n    </windowRule>\n  </windowRules>\n</labwc_config>\n')
    subprocess.run(["chroot", r, "chown", "-R", "kiosk:kiosk", "/home/kiosk/.config"], check=True)
    greetd_d = os.path.join(r, "etc/systemd/system/greetd.service.d")
    os.makedirs(greetd_d, exist_ok=True)
    shutil.copy(dropin, os.path.join(greetd_d, os.path.basename(dropin)))
    # The test's choice of kiosk per boot.
    for unit, cond in (("cage@tty1.service", "!touchlock_vm_kiosk=labwc"), ("greetd.service", "touchlock_vm_kiosk=labwc")):
        d = os.path.join(r, "etc/systemd/system", unit + ".d")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "vm-kiosk.conf"), "w") as f:
            f.write(f"[Unit]\nConditionKernelCommandLine={cond}\n")
    # `[display] cover = vt` on the labwc boot, copied into place before touchlockd starts.
    share = os.path.join(r, "usr/local/share/touchlock-vm")
    os.makedirs(share, exist_ok=True)
    with open(os.path.join(share, "cover-vt.conf"), "w") as f:
        f.write("[display]\ncover = vt\n")
    with open(os.path.join(r, "etc/systemd/system/touchlock-vm-cover.service"), "w") as f:
        f.write("[Unit]\nDescription=touchlock VM test: cover = vt on the labwc boot\nDefaultDependencies=no\n"
                "Before=touchlockd.service\nConditionKernelCommandLine=touchlock_vm_kiosk=labwc\n\n"
                "[Service]\nType=oneshot\nExecStart=/bin/cp /usr/local/share/touchlock-vm/cover-vt.conf"
                " /etc/touchlock/touchlock.conf.d/vm-cover.conf\n\n[Install]\nWantedBy=touchlockd.service\n")
    for cmd in (["systemctl", "enable", "greetd.service"], ["systemctl", "enable", "touchlock-vm-cover.service"]):
        p = subprocess.run(["chroot", r] + cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"vm-systemd: `{' '.join(cmd)}` in the root failed: {p.stderr.strip()}")


# ---------------------------------------------------------------------------- the guest

class SystemdGuest(Guest):
    def __init__(self, args, workdir, log, console_path, splash=False, fault=False, kiosk="cage"):
        super().__init__(args, workdir, log)
        self.console_path = console_path
        self.append = f"console=ttyS1 rdinit=/sbin/init panic=-1 quiet guest_timeout={int(args.timeout)}"
        if kiosk != "cage":
            self.append += f" touchlock_vm_kiosk={kiosk}"
        # More of the kernel's command line, to look into a boot (e.g. systemd.show_status=1).
        if os.environ.get("TOUCHLOCK_VM_APPEND"):
            self.append += " " + os.environ["TOUCHLOCK_VM_APPEND"]
        # plymouth is installed: the splash's boots show it (the serial ports are the
        # test's, a kiosk has none); the others run without it.
        # plymouthd's trace goes to a file in /run, shown if a check fails (the serial
        # consoles are the test's). Not in the fault boot (touchlock-vm-splash-fault.service):
        # with a trace, plymouthd's crash handler waits 30 s before it ends.
        if fault:
            self.append += " splash plymouth.ignore-serial-consoles touchlock_vm_splash_fault"
        elif splash:
            self.append += " splash plymouth.ignore-serial-consoles plymouth.debug=stream:/run/plymouth-trace.log"
        else:
            self.append += " plymouth.enable=0"
        # The root lives in RAM (about 400 MB; Debian 13's, with labwc and greetd, about
        # 640 MB) beside the unpacked initramfs.
        self.memory = "1536" if args.release == "bookworm" else "2560"
        # virtio-gpu: wlroots (cage) cannot use bochs. QMP for the screendump loop.
        self.display_device = "virtio-gpu-pci"
        self.qmp_path = os.path.join(workdir, "qmp.sock")
        self.extra_args = ["-serial", f"file:{console_path}", "-qmp", f"unix:{self.qmp_path},server,nowait"]

    def show(self, unit, *props):
        _, lines = self.run(f"systemctl show -p {','.join(props)} {unit}")
        values = {}
        for l in lines:
            k, sep, v = l.partition("=")
            if sep and k in props:
                values[k] = v
        missing = [p for p in props if p not in values]
        if missing:
            raise CheckFailed(f"systemctl show {unit} lacks {missing}: {' | '.join(lines)}")
        return values

    def status(self):
        _, lines = self.run("touchlockctl status --json </dev/null")
        st = [json.loads(l) for l in lines if l.startswith("{") and '"state"' in l]
        if not st:
            raise CheckFailed("no status from touchlockctl: " + " | ".join(lines))
        return st[-1]

    def uptime(self):
        _, lines = self.run("cut -d' ' -f1 /proc/uptime")
        return float(lines[-1])


def wait_for(what, timeout, fn, interval=0.2):
    """Calls fn until it returns something true; returns that."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise CheckFailed(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


class Run:
    def __init__(self, args, out, log, checks, kiosk="cage", then=None):
        """then: instead of this test's checks after the boot, the first unlock (which
        lets the kiosk start) and then(run, guest, nodes) (run_dist_upgrade.py)."""
        self.args, self.out, self.log = args, out, log
        self.kiosk = kiosk
        self.then = then
        self.label = "" if kiosk == "cage" else f"[{kiosk} boot] "
        self.results = {n: "not reached" for n in checks}
        self.figures = {}

    def record(self, name, fn):
        try:
            fn()
            self.results[name] = None
            print(f"vm-systemd: {self.label}{name}: ok", flush=True)
        except CheckFailed as e:
            self.results[name] = str(e)
            print(f"vm-systemd: {self.label}{name}: FAILED: {e}", flush=True)
            # The unit's journal goes to the agent's log (while the guest runs: a
            # poweroff's check ends with QEMU's exit).
            if self.guest.proc.poll() is None:
                self.guest.run(f"journalctl -b --no-pager -o short-monotonic -u {UNIT} | tail -n 40", check=False)

    def figure(self, name, value):
        self.figures[name] = value
        print(f"vm-systemd: {name}: {value}", flush=True)

    def main_pid(self, g):
        v = g.show(UNIT, "ActiveState", "SubState", "MainPID", "NRestarts")
        return v if v["ActiveState"] == "active" and v["SubState"] == "running" and v["MainPID"] != "0" else None

    def lock_screen(self, g, pid, name):
        """The touchscreen opened by main PID pid, the status showing the lock screen, and
        the screendump the idle pattern; returns the status."""
        g.run(f"echo 'wait-open {pid}' >&3")
        g.expect(r"^opened ", 15, self.inject_since, what=f"PID {pid} opening the touchscreen")
        self.inject_since = g.mark()
        st = wait_for("status display shown", 10, lambda: (lambda s: s if s.get("display") == "shown" else None)(g.status()))
        nodes = [tuple(p) for p in st["pattern"]["nodes"]]
        img = poll_screen(g, nodes, RIGHT, "idle", 5)
        save(self.out, name, img)
        return st

    def run(self, g):
        self.guest = g
        t = time.monotonic()
        g.start()
        _, _, t_shell = g.expect(r"^@@ready", self.args.boot_timeout, what="the guest's shell (touchlock-vm-agent)")
        # The kiosk is ordered after the first unlock: the start-up ends only then
        # (systemd_deploy.py waits for it). The jobs of touchlockd and of the unit ordered
        # after it are waited for here.
        g.run("i=0; while systemctl list-jobs --no-legend | grep -q -e touchlockd.service -e touchlock-vm-probe.service"
              " && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done", timeout=150, check=False)
        _, lines = g.run("systemctl is-system-running", timeout=120, check=False)
        state = lines[-1] if lines else "?"
        self.figure("QEMU start to the guest's shell", f"{t_shell:.1f} s")
        rc, lines = g.run("systemd-analyze time", check=False)
        self.figure("systemd-analyze time", " ".join(lines).replace("Startup finished in ", "")
                    + f" (system {state})" if rc == 0 else f"not finished (system {state}: the kiosk waits for the unlock)")
        if state not in ("running", "starting"):
            _, failed = g.run("systemctl --failed --no-legend", check=False)
            print("vm-systemd: failed units: " + " | ".join(failed), flush=True)

        # The touchscreen, plugged in after the daemon started (it watches /dev/input).
        g.run("mkfifo /tmp/inject && exec 3<>/tmp/inject")
        since = g.mark()
        g.run("touchinject </tmp/inject >/dev/ttyS0 2>&1 &")
        g.expect(r"^device (/dev/input/event\d+)$", 10, since, what="the uinput device")
        self.inject_since = g.mark()
        shared = {}

        def ready():
            v = wait_for("touchlockd active (running)", 30, lambda: self.main_pid(g))
            t = g.show(UNIT, "ExecMainStartTimestampMonotonic", "ActiveEnterTimestampMonotonic")
            exec_us, active_us = int(t["ExecMainStartTimestampMonotonic"]), int(t["ActiveEnterTimestampMonotonic"])
            self.figure("boot to touchlockd active (READY=1)", f"{active_us / 1e6:.2f} s")
            self.figure("touchlockd exec to READY=1", f"{(active_us - exec_us) / 1e3:.0f} ms")
            # What a unit ordered after touchlockd saw when it started.
            _, probe = g.run("cat /run/touchlock-vm-probe.json", check=False)
            seen = [json.loads(l) for l in probe if l.startswith("{")]
            if not seen or seen[-1].get("display") != "shown" or seen[-1].get("state") != "locked":
                raise CheckFailed("a unit ordered after touchlockd.service saw: " + " | ".join(probe))
            # The daemon's own order, as journald tells it.
            _, journal = g.run(f"journalctl -b -o cat --no-pager _PID=1 + _SYSTEMD_UNIT={UNIT}"
                               " | grep -n -e 'first frame shown' -e 'Started touchlockd.service'", check=False)
            order = [("frame" if "first frame" in l else "started") for l in journal]
            if order[:2] != ["frame", "started"]:
                raise CheckFailed("journal order of 'first frame shown' and 'Started': " + " | ".join(journal))
            st = self.lock_screen(g, v["MainPID"], "systemd-ready.png")
            shared["nodes"] = [tuple(p) for p in st["pattern"]["nodes"]]
            g.run(f"echo 'size {st['screen']['width']} {st['screen']['height']}' >&3")

        def watchdog():
            v = self.main_pid(g)
            if not v:
                raise CheckFailed("touchlockd is not running")
            old, n0 = v["MainPID"], int(v["NRestarts"])
            t_stop = g.uptime()
            h_stop = time.monotonic()
            g.run(f"kill -STOP {old}")
            v = wait_for("a new main PID, active", 60,
                         lambda: (lambda x: x if x and x["MainPID"] != old else None)(self.main_pid(g)), 0.5)
            h_back = time.monotonic()
            t = g.show(UNIT, "ActiveEnterTimestampMonotonic")
            self.figure("SIGSTOP to the new main PID active (WatchdogSec=10, RestartSec=100ms)",
                        f"{int(t['ActiveEnterTimestampMonotonic']) / 1e6 - t_stop:.1f} s"
                        f" (seen from the host after {h_back - h_stop:.1f} s)")
            if int(v["NRestarts"]) != n0 + 1:
                raise CheckFailed(f"NRestarts {n0} -> {v['NRestarts']}, want {n0 + 1}")
            _, j = g.run(f"journalctl -b -o cat --no-pager -u {UNIT} | grep -i 'watchdog timeout'", check=False)
            if not j:
                raise CheckFailed("the journal does not say the watchdog killed it")
            self.lock_screen(g, v["MainPID"], "systemd-watchdog.png")

        def fail(k, nodes):
            inject(g, stroke(nodes, WRONG[k - 1], lift=True), f"@@wrong-{k}")
            return wait_for(f"failure {k} counted", 10,
                            lambda: (lambda s: s if s.get("failures") == k and s["state"] in ("locked", "lockout")
                                     else None)(g.status()))

        def restart():
            t = time.monotonic()
            g.run(f"systemctl restart {UNIT}", timeout=60)
            took = time.monotonic() - t
            v = self.main_pid(g)
            if not v:
                raise CheckFailed("not active after systemctl restart")
            return v, took

        def lockout():
            nodes = shared.get("nodes")
            if not nodes:
                raise CheckFailed("not reached: no lock screen")
            for k in (1, 2):
                fail(k, nodes)
            v, took = restart()
            self.figure("systemctl restart touchlockd (until READY=1)", f"{took:.1f} s")
            st = self.lock_screen(g, v["MainPID"], "systemd-restarted.png")
            if st.get("failures") != 2 or st["state"] != "locked":
                raise CheckFailed("after 2 failures and a restart: " + json.dumps(st))
            for k in (3, 4, 5):
                st = fail(k, nodes)
            if st["state"] != "lockout":
                raise CheckFailed("after 5 failures: " + json.dumps(st))
            before = st["retry_after_ms"]
            v, _ = restart()
            g.run(f"echo 'wait-open {v['MainPID']}' >&3")
            g.expect(r"^opened ", 15, self.inject_since, what="the restarted daemon opening the touchscreen")
            self.inject_since = g.mark()
            st = g.status()
            if st["state"] != "lockout" or st.get("failures") != 5 or not 0 < st.get("retry_after_ms", 0) <= before:
                raise CheckFailed(f"after a restart while locked out ({before} ms left): " + json.dumps(st))
            print(f"vm-systemd: locked out, {before} ms left; after the restart {st['retry_after_ms']} ms", flush=True)
            # The restarted daemon shows the lockout: every node drawn disabled.
            img = wait_for("the lockout screen (nodes disabled)", 5, lambda: (lambda i: i if all(
                i.classify(x, y)[0] == "disabled" for x, y in nodes) else None)(g.screendump()))
            save(self.out, "systemd-lockout.png", img)
            shared["lockout"] = True

        def security():
            _, lines = g.run(f"systemd-analyze security --no-pager {UNIT}", check=False, timeout=60)
            m = [re.search(r"Overall exposure level for \S+: ([0-9.]+) (\S+)", l) for l in lines]
            m = [x for x in m if x]
            if not m:
                raise CheckFailed("no exposure level: " + " | ".join(lines[-5:]))
            exposure, word = m[-1].group(1), m[-1].group(2)
            self.figure("systemd-analyze security (in the guest)", f"{exposure} {word}")
            readme = open(os.path.join(REPO, "docs", "integrating.md")).read()
            claimed = re.search(r"rates it ([0-9.]+) \(", readme)
            if not claimed or claimed.group(1) != exposure:
                raise CheckFailed(f"the guest rates it {exposure}, docs/integrating.md says "
                                  f"{claimed.group(1) if claimed else 'nothing'}")

        def wait_unlock():
            nodes = shared.get("nodes")
            if not shared.get("lockout"):
                raise CheckFailed("not reached: no lockout")
            # The integrator's drop-in, as the package ships it.
            g.run("mkdir -p /etc/systemd/system/kiosk-app.service.d && cp"
                  " /usr/share/doc/touchlock/examples/kiosk-app.service.d/touchlock.conf"
                  " /etc/systemd/system/kiosk-app.service.d/ && systemctl daemon-reload"
                  " && systemctl start --no-block kiosk-app.service")
            time.sleep(1)
            w = g.show("touchlock-wait-unlock.service", "ActiveState")
            a = g.show("kiosk-app.service", "ActiveState", "ExecMainStartTimestampMonotonic")
            if w["ActiveState"] != "activating" or a["ActiveState"] != "inactive":
                raise CheckFailed(f"while locked out: touchlock-wait-unlock {w['ActiveState']},"
                                  f" kiosk-app {a['ActiveState']}")
            st = wait_for("the end of the lockout", LOCKOUT_S + 10,
                          lambda: (lambda s: s if s["state"] == "locked" else None)(g.status()), 1)
            w = g.show("touchlock-wait-unlock.service", "ActiveState")
            if w["ActiveState"] != "activating":
                raise CheckFailed(f"touchlock-wait-unlock {w['ActiveState']} before the unlock")
            before = g.uptime()
            inject(g, stroke(nodes, RIGHT, lift=True), "@@right")
            wait_for("kiosk-app active", 15,
                     lambda: g.show("kiosk-app.service", "ActiveState")["ActiveState"] == "active")
            st = g.status()
            if st["state"] != "unlocked":
                raise CheckFailed("after the right pattern: " + json.dumps(st))
            w = int(g.show("touchlock-wait-unlock.service", "ActiveEnterTimestampMonotonic")
                    ["ActiveEnterTimestampMonotonic"])
            a = int(g.show("kiosk-app.service", "ExecMainStartTimestampMonotonic")
                    ["ExecMainStartTimestampMonotonic"])
            if not before * 1e6 < w <= a:
                raise CheckFailed(f"stroke began at {before:.3f} s, touchlock-wait-unlock active at"
                                  f" {w / 1e6:.3f} s, kiosk-app started at {a / 1e6:.3f} s")
            self.figure("unlock stroke to kiosk-app started", f"{a / 1e6 - before:.2f} s")

        def first_unlock():
            nodes = shared.get("nodes")
            if not nodes:
                raise CheckFailed("not reached: no lock screen")
            before = g.uptime()
            inject(g, stroke(nodes, RIGHT, lift=True), "@@right")
            wait_for("status unlocked", 15, lambda: g.status()["state"] == "unlocked")
            unit = "greetd.service" if self.kiosk == "labwc" else "cage@tty1.service"
            started = wait_for(f"{unit} active", 30, lambda: (lambda v: int(v["ExecMainStartTimestampMonotonic"])
                               if v["ActiveState"] == "active" else None)(g.show(unit, "ActiveState",
                                                                                 "ExecMainStartTimestampMonotonic")))
            if started / 1e6 < before:
                raise CheckFailed(f"{unit} started at {started / 1e6:.3f} s, before the stroke at {before:.3f} s")
            self.figure(f"unlock stroke to {unit} started", f"{started / 1e6 - before:.2f} s")

        if self.then:
            for name, fn in zip(list(self.results)[:2], (ready, first_unlock)):
                self.record(name, fn)
            if not shared.get("nodes") or self.results[list(self.results)[1]] is not None:
                raise CheckFailed("no lock screen, or no first unlock: nothing more can run")
            self.then(self, g, shared["nodes"])
            self.figures["total"] = f"{time.monotonic() - t:.1f} s"
            return
        if self.kiosk == "labwc":
            steps = zip(LABWC_CHECKS, (ready, first_unlock))
        else:
            steps = zip(CHECKS, (ready, watchdog, lockout, security, wait_unlock))
        for name, fn in steps:
            self.record(name, fn)
        if self.args.deploy:
            if not shared.get("nodes"):
                raise CheckFailed("no lock screen: the deployment checks cannot run")
            Deploy(self, g, shared["nodes"], g.qmp_path, g.workdir, kiosk=self.kiosk).run_all()
        self.figures["total"] = f"{time.monotonic() - t:.1f} s"


def attempt(args, out, number, splash=False, fault=False, kiosk="cage"):
    """One boot: the checks above, or (splash) the boot with plymouth's splash, or (fault)
    the one where plymouthd fails in the middle of the hand-over; kiosk: the kiosk the
    boot runs (the labwc boot's screenshots go to out/labwc)."""
    workdir = tempfile.mkdtemp(prefix="touchlock-vm-systemd-")
    if kiosk != "cage":
        out = os.path.join(out, kiosk)
        os.makedirs(out, exist_ok=True)
    suffix = ("-plymouth-fault" if fault else "-plymouth" if splash else "") + ("" if number == 1 else f".{number}")
    log_path = os.path.join(out, f"agent{suffix}.log")
    console = os.path.join(out, f"console{suffix}.log")
    with open(log_path, "w", buffering=1) as log:
        run = Run(args, out, log, PLYMOUTH_FAULT_CHECKS if fault else PLYMOUTH_CHECKS if splash
                  else LABWC_CHECKS if kiosk == "labwc" else CHECKS, kiosk=kiosk)
        guest = SystemdGuest(args, workdir, log, console, splash=splash or fault, fault=fault, kiosk=kiosk)
        try:
            if splash or fault:
                PlymouthBoot(run, guest, fault=fault).run_all()
            else:
                run.run(guest)
        except CheckFailed as e:
            print(f"vm-systemd: set-up FAILED: {e}", flush=True)
        finally:
            guest.quit()
            shutil.rmtree(workdir, ignore_errors=True)
    return run


def boot(args, out, splash=False, fault=False, kiosk="cage"):
    """attempt(), once more if the guest hung; None if it hung twice."""
    which = ("the plymouth fault boot, " if fault else "the plymouth boot, " if splash
             else "the labwc boot, " if kiosk == "labwc" else "")
    for number in (1, 2):
        try:
            return attempt(args, out, number, splash, fault, kiosk)
        except InfraError as e:
            print(f"vm-systemd: {which}attempt {number}: {e}", flush=True)
    return None


def main():
    ap = argparse.ArgumentParser(description="touchlock's package under systemd as PID 1, in QEMU")
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--root", required=True, help="the guest's root, the package installed (systemd.sh)")
    ap.add_argument("--initrd", required=True, help="the initramfs to write from --root")
    ap.add_argument("--release", choices=("bookworm", "trixie"), default="bookworm",
                    help="the Debian release of --root (systemd.sh --release)")
    ap.add_argument("--out", default=os.path.join(REPO, ".vm", "out-systemd"))
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--timeout", type=float, default=1500, help="seconds before QEMU is killed")
    # On by default (scripts/test runs them); --no-deploy or TOUCHLOCK_VM_DEPLOY=0 leaves
    # them out, for a quicker run of the five checks above.
    ap.add_argument("--deploy", dest="deploy", action="store_true",
                    default=os.environ.get("TOUCHLOCK_VM_DEPLOY", "1") != "0",
                    help="run the deployment and logind checks too (systemd_deploy.py; the default,"
                         " TOUCHLOCK_VM_DEPLOY=0 leaves them out)")
    ap.add_argument("--no-deploy", dest="deploy", action="store_false", help="only the five checks above")
    ap.add_argument("--no-plymouth", dest="plymouth", action="store_false",
                    help="leave out the boot with plymouth's splash (systemd_plymouth.py)")
    ap.add_argument("--plymouth-only", type=int, metavar="N", default=0,
                    help="only the boot with plymouth's splash, N times (each boot's logs and"
                         " screenshots in --out/N)")
    ap.add_argument("--boot-timeout", type=float, default=None,
                    help="seconds from QEMU's start to the guest's shell (120; 300 on Debian 13, whose"
                         " 660 MB initramfs alone takes 35-45 s to unpack under TCG)")
    ap.add_argument("--kiosk", choices=("cage", "labwc", "both"), default=None,
                    help="the kiosk(s) booted for the checks: cage (cage's wiki unit), labwc (greetd's autologin,"
                         " Debian 13 only) or both (the default on Debian 13; cage on Debian 12)")
    args = ap.parse_args()
    kiosk = args.kiosk or ("cage" if args.release == "bookworm" else "both")
    if kiosk != "cage" and args.release == "bookworm":
        ap.error("labwc is a Debian 13 kiosk (--release trixie)")
    args.kiosks = ["cage", "labwc"] if kiosk == "both" else [kiosk]
    if args.boot_timeout is None:
        args.boot_timeout = 120 if args.release == "bookworm" else 300
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    t_start = time.monotonic()
    build_image(args)

    if args.plymouth_only:
        runs = []
        for k in range(1, args.plymouth_only + 1):
            os.makedirs(os.path.join(out, str(k)), exist_ok=True)
            for fault in (False, True):
                runs.append(boot(args, os.path.join(out, str(k)), splash=True, fault=fault))
                r = runs[-1]
                bad = [n for n, p in r.results.items() if p is not None] if r else ["the guest hung twice"]
                print(f"vm-systemd: plymouth {'fault ' if fault else ''}boot {k}:"
                      f" {'FAILED: ' + '; '.join(bad) if bad else 'passed'}", flush=True)
    else:
        runs = [boot(args, out, splash=True), boot(args, out, fault=True)] if args.plymouth else []
        for kiosk in args.kiosks:
            runs.append(boot(args, out, kiosk=kiosk))
    t_all = time.monotonic() - t_start
    hung = runs.count(None)
    if hung and not args.plymouth_only:
        print("vm-systemd: 0 passed, 1 failed (the guest hung twice)")
        return 1
    runs = [r for r in runs if r is not None]
    results = [p for r in runs for p in r.results.values()]
    passed = sum(1 for p in results if p is None)
    failed = len(results) - passed + hung
    print("vm-systemd: figures: " + "; ".join(f"{k} {v}" for r in runs for k, v in r.figures.items()))
    print(f"vm-systemd: screenshots, the console log and the agent's log in {out}")
    print(f"vm-systemd: {len(runs)} boots, the image and the guests in {t_all:.0f} s")
    print(f"vm-systemd: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
