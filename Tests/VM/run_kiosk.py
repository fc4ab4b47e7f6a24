#!/usr/bin/env python3
"""touchlock on a real kiosk stack: Debian's kernel under QEMU (TCG) running a real Wayland
kiosk compositor from Debian's packages, started the way a kiosk starts it, with a uinput
touchscreen, checked on QEMU screendumps.

Two stacks, one guest boot each (the image is .vm/initrd-kiosk.cpio, build-initramfs.py --kiosk):

  weston   weston 10 with kiosk-shell on the DRM backend (--use-pixman), as root with its own
           VT handling (--tty=1), on `-device bochs-display`; kiosk-shell centres the app.
  cage     seatd (-g video), cage as the user `kiosk` (group video) through libseat, wlroots'
           pixman renderer, on `-device virtio-gpu-pci` (wlroots cannot use bochs); cage puts
           the app at the top left.

Both run weston-simple-touch, a 600x500 surface (grey 64,64,64) that paints a small cross
where it is touched. udevd runs before the compositor (libinput ignores devices udev has not
initialised); the touchscreen is plugged in after the compositor is up.

The stand's checks, for each stack:
  - the compositor is up (its Wayland socket) and the app is on screen, where the shell puts it;
  - a touch reaches the app: a stroke inside the surface leaves marks along its path, and
    nowhere else;
  - a VT hand-off by hand: `chvt 2` takes the screen and the input from the compositor
    (the app leaves the screen; a stroke made then leaves no mark), `chvt 1` gives them back:
    the app is back with its marks, and a new stroke draws again.

touchlockd's checks (issue 9's VT hand-off), for each stack, run when the daemon given with
--daemon knows the settings they need (probed with --check-config on the host) and reported
as "not run" otherwise: `touchlockctl lock` covers the app with the lock screen; touches
while locked never reach the app; `chvt` back to the app's VT while locked does not switch;
the right pattern unlocks and gives the app back as it was, taking touches again; idle lock;
blanking (DPMS off in sysfs) and a waking touch that selects nothing; a contact held on a
second panel does not stop the first from unlocking; when the display cannot be taken (the
VT owner is stopped), the `lock` reply and status say so in a `display` field.

Figures printed: compositor start to its socket and to the app on screen, `chvt 1` to the
app's first repaint, and with touchlockd `lock` to the lock screen and the unlock to the app's
repaint (each seen on screendumps polled from the host, about every 15-40 ms).

Screendumps are saved as PNG in --out (STACK-app.png, STACK-touched.png, STACK-vt2.png,
STACK-back.png; with touchlockd STACK-locked.png, STACK-unlocked.png), with each stack's
serial console log (console-STACK.log). Python standard library only.
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
from run_e2e import (RIGHT, CheckFailed, Guest, InfraError, background_client, bound_name, hash_pattern,  # noqa: E402
                     inject, save, stroke, verify)

APP_W, APP_H = 600, 500           # weston-simple-touch's buffer
APP_GREY = (64, 64, 64)           # its background (memset 64)
STROKE_MS = 15                    # a stroke's moves this far apart ...
STROKE_STEPS = 40                 # ... this many: about 0.6 s. With cage a short stroke
                                  # (80 ms) after the device was opened was not drawn at all.
SOCKET = "/run/touchlock/touchlock.sock"
CTL = f"touchlockctl --socket {SOCKET}"
IDLE_S = 4
# Checks of behaviour issue 9 specifies that touchlockd does not have yet and no setting
# tells apart: reported as "not run" unless --all. A contact held on a second panel still
# blocks every panel until "Fingers across panels" lands.
PENDING = set()
BLANK_S = 3
# Two more panels (touchinject --name) and the udev rule, written before udevd starts, that
# gives the first a calibration matrix (mirrored left to right) and has the second ignored.
MIRRORED = "touchlock mirrored panel"
IGNORED = "touchlock ignored panel"
UDEV_RULES = [f'ACTION=="add|change", SUBSYSTEM=="input", KERNEL=="event*", ATTRS{{name}}=="{MIRRORED}",'
              ' ENV{LIBINPUT_CALIBRATION_MATRIX}="-1 0 1 0 1 0"',
              f'ACTION=="add|change", SUBSYSTEM=="input", KERNEL=="event*", ATTRS{{name}}=="{IGNORED}",'
              ' ENV{LIBINPUT_IGNORE_DEVICE}="1"']

STACKS = {
    "weston": {
        "device": "bochs-display",
        "driver": "bochs-drm",
        "placement": "centred",
        # weston 10 as Debian builds it has no libseat launcher: root, its own VT (--tty).
        "start": ("mkdir -p /run/user/0 && chmod 700 /run/user/0; T0=$(cut -d' ' -f1 /proc/uptime);"
                  " XDG_RUNTIME_DIR=/run/user/0 weston --tty=1 --backend=drm-backend.so --shell=kiosk-shell.so"
                  " --use-pixman --socket=wayland-1 --idle-time=0 --log=/tmp/compositor.log"
                  " </dev/null >/dev/null 2>&1 & KPID=$!; VTOWNER=$KPID;"
                  " i=0; while [ ! -S /run/user/0/wayland-1 ] && [ $i -lt 3000 ]; do usleep 10000; i=$((i+1)); done;"
                  " echo \"@@compositor $T0 $(cut -d' ' -f1 /proc/uptime)\"; test -S /run/user/0/wayland-1"
                  " && { XDG_RUNTIME_DIR=/run/user/0 WAYLAND_DISPLAY=wayland-1 weston-simple-touch"
                  " </dev/null >/tmp/app.log 2>&1 & }"),
    },
    "cage": {
        "device": "virtio-gpu-pci",
        "driver": "virtio-pci",
        "placement": "top-left",
        # seatd owns the VT; cage runs as an unprivileged user of its group, through libseat.
        # wlroots' shm (the keymap) needs /dev/shm; cage needs an Xwayland (a stub).
        "start": ("seatd -g video >/tmp/seatd.log 2>&1 & VTOWNER=$!;"
                  " i=0; while [ ! -S /run/seatd.sock ] && [ $i -lt 1000 ]; do usleep 10000; i=$((i+1)); done;"
                  " mkdir -p /run/user/1000 && chown 1000:44 /run/user/1000 && chmod 700 /run/user/1000;"
                  " T0=$(cut -d' ' -f1 /proc/uptime);"
                  " su -s /bin/sh kiosk -c 'export XDG_RUNTIME_DIR=/run/user/1000 WLR_RENDERER=pixman"
                  " WLR_LIBINPUT_NO_DEVICES=1 LIBSEAT_BACKEND=seatd; exec cage -d -- weston-simple-touch'"
                  " </dev/null >/tmp/compositor.log 2>&1 &"
                  " i=0; while [ ! -S /run/user/1000/wayland-0 ] && [ $i -lt 3000 ]; do usleep 10000; i=$((i+1)); done;"
                  " echo \"@@compositor $T0 $(cut -d' ' -f1 /proc/uptime)\"; KPID=$(pidof cage);"
                  " test -S /run/user/1000/wayland-0"),
    },
}


# ---------------------------------------------------------------------------- pictures

def app_rect(stack, img):
    if STACKS[stack]["placement"] == "centred":
        return ((img.width - APP_W) // 2, (img.height - APP_H) // 2, APP_W, APP_H)
    return (0, 0, APP_W, APP_H)


def near(p, c, tol=8):
    return all(abs(a - b) <= tol for a, b in zip(p, c))


def app_shown(img, rect):
    """Problems with the app's surface at rect (empty if it is there): the grey fills a
    20x20 grid of samples inside (marks aside), and the pixels just outside are not grey."""
    x0, y0, w, h = rect
    inside = [(x0 + 3 + (w - 6) * i / 19, y0 + 3 + (h - 6) * j / 19) for i in range(20) for j in range(20)]
    grey = sum(1 for x, y in inside if near(img.pixel(x, y), APP_GREY))
    problems = []
    if grey < 0.9 * len(inside):
        problems.append(f"{grey} of {len(inside)} samples inside the surface are its grey")
    outside = [(x0 + w + 2, y0 + h // 2), (x0 + w // 2, y0 + h + 2)]
    if x0 > 2:
        outside.append((x0 - 3, y0 + h // 2))
    if y0 > 2:
        outside.append((x0 + w // 2, y0 - 3))
    # A surface as large as the screen has no outside.
    outside = [(x, y) for x, y in outside if x < img.width and y < img.height]
    grey_out = [(x, y) for x, y in outside if near(img.pixel(x, y), APP_GREY)]
    if grey_out:
        problems.append(f"grey outside the surface at {grey_out}: not the app's 600x500 buffer where expected")
    return problems


def marks(img, rect):
    """The set of pixels of the surface that are not its grey: the app's marks."""
    x0, y0, w, h = rect
    grey_row = bytes(APP_GREY) * w
    out = set()
    for y in range(y0, y0 + h):
        i = (y * img.width + x0) * 3
        row = img.rgb[i:i + w * 3]
        if row == grey_row:
            continue
        for x in range(w):
            if tuple(row[x * 3:x * 3 + 3]) != APP_GREY:
                out.add((x0 + x, y))
    return out


def app_stroke(x0, y, x1):
    """touchinject commands: a finger down at (x0, y), moved to (x1, y) in STROKE_STEPS steps."""
    cmds = [f"down {x0} {y}"]
    for k in range(1, STROKE_STEPS + 1):
        cmds += [f"sleep {STROKE_MS}", f"move {x0 + (x1 - x0) * k / STROKE_STEPS:.1f} {y}"]
    return cmds + [f"sleep {STROKE_MS}", "up"]


def stroke_marks(new, x0, y, x1):
    """Problems with the marks `new` for a stroke from (x0, y) to (x1, y): the marks must lie
    on the path (5x5 crosses: within 3 pixels of it), and at least half of the stroke's
    touch points must have a mark (the first moves of a stroke are sometimes not drawn)."""
    lo, hi = min(x0, x1), max(x0, x1)
    off = [(x, yy) for x, yy in new if abs(yy - y) > 3 or x < lo - 3 or x > hi + 3]
    columns = {x for x, yy in new if abs(yy - y) <= 3}
    points = [x0 + (x1 - x0) * k / STROKE_STEPS for k in range(STROKE_STEPS + 1)]
    hit = [p for p in points if any(abs(x - p) <= 3 for x in columns)]
    problems = []
    if off:
        problems.append(f"{len(off)} marked pixels off the stroke's path, e.g. {sorted(off)[:3]}")
    if len(hit) < 0.5 * len(points):
        problems.append(f"{len(hit)} of the stroke's {len(points)} touch points have a mark")
    return problems


# ---------------------------------------------------------------------------- a stack

class Stand:
    """One guest booted for one stack; the results of its checks."""

    def __init__(self, args, stack, out, log, pattern_hash, features):
        self.args, self.stack, self.out, self.log = args, stack, out, log
        self.pattern_hash, self.features = pattern_hash, features
        self.results = {}
        self.times = {}
        self.guest = None
        self.failures = 0
        self.repeats = 0           # strokes made again because the one before left no mark, or only part of one

    def record(self, name, fn):
        name = f"[{self.stack}] {name}"
        try:
            fn()
            self.results[name] = None
            print(f"vm-kiosk: {name}: ok", flush=True)
        except CheckFailed as e:
            self.results[name] = str(e)
            print(f"vm-kiosk: {name}: FAILED: {e}", flush=True)

    def skip(self, name, why):
        print(f"vm-kiosk: [{self.stack}] {name}: not run ({why})", flush=True)

    def save(self, name, img):
        save(self.out, f"{self.stack}-{name}.png", img)

    def poll(self, want, timeout, what, keep=True):
        """Screendumps until want(img) returns no problems; returns (img, host seconds). The
        last screendump of a failure is kept unless told."""
        t0 = time.monotonic()
        while True:
            img = self.guest.screendump()
            problems = want(img)
            if not problems:
                return img, time.monotonic() - t0
            if time.monotonic() - t0 > timeout and not keep:
                raise CheckFailed(f"{what} not seen after {timeout} s: " + "; ".join(problems))
            if time.monotonic() - t0 > timeout:
                self.failures += 1
                name = f"failed-{self.failures}"
                self.save(name, img)
                raise CheckFailed(f"{what} not seen after {timeout} s (last screendump {self.stack}-{name}.png): "
                                  + "; ".join(problems))
            time.sleep(0.005)

    def active_vt(self):
        _, lines = self.guest.run("cat /sys/class/tty/tty0/active")
        return lines[-1].strip() if lines else ""

    # -- boot and the compositor

    def boot(self):
        g = self.guest = Guest(self.args, self.workdir, self.log)
        g.display_device = STACKS[self.stack]["device"]
        g.memory = "1024"
        g.append += f" GUEST_TIMEOUT={int(self.args.timeout)}"
        g.start()
        _, _, t = g.expect(r"^@@ready", self.args.boot_timeout, what="the guest's /init")
        self.times["boot"] = t
        errors = [l for _, l in g.lines if l.startswith("@@error")]
        if errors:
            raise InfraError("guest set-up failed: " + "; ".join(errors))
        _, lines = g.run("grep DRIVER= /sys/class/drm/card0/device/uevent; ls /dev/dri")
        if f"DRIVER={STACKS[self.stack]['driver']}" not in lines or any("card1" in l for l in lines):
            raise InfraError("not exactly one card with the expected driver: " + " | ".join(lines))
        # udevd before the compositor: libinput takes only devices udev has initialised.
        g.run("mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 tmpfs /dev/shm")
        g.run("mkdir -p /etc/udev/rules.d && printf '%s\\n' "
              + " ".join(f"'{r}'" for r in UDEV_RULES) + " >/etc/udev/rules.d/99-touchlock-vm.rules")
        _, lines = g.run("T0=$(cut -d' ' -f1 /proc/uptime); /lib/systemd/systemd-udevd --daemon"
                         " && udevadm trigger --type=subsystems --action=add && udevadm trigger --type=devices --action=add"
                         " && udevadm settle --timeout=60 && echo \"@@udev $T0 $(cut -d' ' -f1 /proc/uptime)\"",
                         timeout=90)
        m = next((l.split() for l in lines if l.startswith("@@udev ")), None)
        if m:
            self.times["udev_settle"] = float(m[2]) - float(m[1])

    def start_compositor(self):
        g = self.guest
        since = g.mark()
        t0 = time.monotonic()
        g.run(STACKS[self.stack]["start"], timeout=60)
        m, _, _ = g.expect(r"^@@compositor (\S+) (\S+)$", 5, since, what="the compositor's start")
        self.times["compositor_to_socket"] = float(m.group(2)) - float(m.group(1))
        img = g.screendump()
        self.rect = app_rect(self.stack, img)
        self.size = (img.width, img.height)
        img, _ = self.poll(lambda i: app_shown(i, self.rect), 30, "the app")
        self.times["start_to_app_on_screen"] = time.monotonic() - t0
        self.save("app", img)
        self.app_img = img

    def plug(self):
        """The touchscreen (uinput), plugged in now; waits until the compositor has it open."""
        g = self.guest
        g.run("mkfifo /tmp/inject && exec 3<>/tmp/inject")
        since = g.mark()
        g.run("touchinject </tmp/inject >/dev/console 2>&1 &")
        m, _, _ = g.expect(r"^device (/dev/input/event\d+)$", 10, since, what="the uinput device")
        self.node = m.group(1)
        g.run("echo \"wait-open $KPID\" >&3")
        g.expect(r"^opened " + re.escape(self.node), 30, since, what="the compositor opening the touchscreen")
        g.run(f"echo 'size {self.size[0]} {self.size[1]}' >&3")

    def touch_app(self, y_frac, marker, before, what):
        """A stroke across the surface at y_frac of its height, which must leave its marks;
        returns the screen once they are drawn.

        The compositor opening the device does not mean the app has its wl_touch yet (the
        seat gains the touch capability, the client asks for wl_touch), nor that the
        compositor has its input devices back when its VT is shown again (seatd resumes
        them after the app is repainted; cage 0.1 takes them back some time into a stroke
        made then): a stroke that left no mark at all, or marks along only part of its
        path, within 3 s is made again, twice at most, and said so."""
        x, y0, w, h = self.rect
        path = (x + 60, int(y0 + h * y_frac), x + w - 60)
        old = marks(before, self.rect)

        def want(img):
            problems = app_shown(img, self.rect)
            if not problems:
                problems = stroke_marks(marks(img, self.rect) - old, *path)
            return problems
        for attempt in (1, 2, 3):
            inject(self.guest, app_stroke(*path), f"{marker}-{attempt}")
            try:
                img, _ = self.poll(want, 3 if attempt < 3 else 10, what, keep=attempt == 3)
                return self.settled(img)
            except CheckFailed as e:
                if attempt == 3:
                    raise
                img = self.guest.screendump()
                new = marks(img, self.rect) - old
                # The app gone, or marks off the stroke's path, are failures as they are.
                if app_shown(img, self.rect) or any("off the stroke's path" in p for p in stroke_marks(new, *path)):
                    raise
                if new:
                    print(f"vm-kiosk: [{self.stack}] {what}: stroke {attempt} drew only part of its path ({e}); "
                          "stroking again", flush=True)
                else:
                    print(f"vm-kiosk: [{self.stack}] {what}: no mark from stroke {attempt}; stroking again", flush=True)
                self.repeats += 1

    def settled(self, img, timeout=5):
        """The screen once the app has drawn the whole stroke: two screendumps 0.2 s apart
        with the same marks."""
        deadline = time.monotonic() + timeout
        while True:
            time.sleep(0.2)
            nxt = self.guest.screendump()
            if marks(nxt, self.rect) == marks(img, self.rect) or time.monotonic() > deadline:
                return nxt
            img = nxt

    # -- the stand's checks

    def stand_checks(self):
        g = self.guest
        names = ["the compositor is up and the app is on screen",
                 "a touch reaches the app (marks along the stroke, nowhere else)",
                 "chvt 2 takes the screen and the input from the compositor",
                 "chvt 1 gives them back: the app with its marks, taking touches again"]
        for n in names:
            self.results[f"[{self.stack}] {n}"] = "not reached"
        state = {}

        def up():
            self.start_compositor()
            self.plug()

        def touch():
            before = g.screendump()
            img = self.touch_app(0.3, "@@stroke-1", before, "the stroke's marks")
            self.save("touched", img)
            state["touched"] = img

        def away():
            if "touched" not in state:
                raise CheckFailed("not reached: no touch on the app")
            g.run("chvt 2")
            if self.active_vt() != "tty2":
                raise CheckFailed("tty2 is not the active VT after chvt 2")
            img, _ = self.poll(lambda i: [] if app_shown(i, self.rect) else ["the app is still on screen"],
                               10, "the app leaving the screen")
            self.save("vt2", img)
            # Strokes now go nowhere: the compositor's input fds are closed or revoked.
            x, y0, w, h = self.rect
            state["hidden_path"] = (x + 60, int(y0 + h * 0.7), x + w - 60)
            inject(g, app_stroke(*state["hidden_path"]), "@@stroke-vt2")
            state["away"] = True

        def back():
            if "away" not in state:
                raise CheckFailed("not reached: no hand-off")
            touched = marks(state["touched"], self.rect)
            since = g.mark()
            t0 = time.monotonic()
            g.send("chvt 1")

            def want(img):
                problems = app_shown(img, self.rect)
                if not problems and marks(img, self.rect) != touched:
                    problems = ["the surface is not as it was before chvt 2"]
                return problems
            # Unchanged marks also prove that the stroke made on VT 2 reached nothing.
            img, _ = self.poll(want, 15, "the app back with its marks and none from the stroke made on VT 2")
            self.times["chvt_to_app_repaint"] = time.monotonic() - t0
            g.expect(r"^@@rc 0$", 20, since, what="chvt 1")
            if self.active_vt() != "tty1":
                raise CheckFailed("tty1 is not the active VT after chvt 1")
            self.save("back", img)
            # The stroke made on VT 2 left nothing; a new one draws (the devices are re-opened).
            g.run("i=0; while ! ls -l /proc/$KPID/fd 2>/dev/null | grep -q " + re.escape(self.node)
                  + " && [ $i -lt 1000 ]; do usleep 10000; i=$((i+1)); done", timeout=20)
            self.app_img = self.touch_app(0.5, "@@stroke-2", img, "marks of a stroke after the hand-back")

        for n, fn in zip(names, (up, touch, away, back)):
            self.record(n, fn)
            if self.results[f"[{self.stack}] {n}"] is not None:
                break
        return all(self.results[f"[{self.stack}] {n}"] is None for n in names)

    # -- touchlockd's checks (issue 9)

    def status(self):
        _, lines = self.guest.run(f"{CTL} status --json </dev/null")
        st = [json.loads(l) for l in lines if l.startswith("{") and '"state"' in l]
        if not st:
            raise CheckFailed("no status: " + " | ".join(lines))
        return st[-1]

    def start_daemon(self, extra, fresh=True):
        g = self.guest
        g.run("if [ -n \"$DPID\" ]; then kill $DPID; wait $DPID; fi 2>/dev/null; true", timeout=30)
        conf = ["pattern_hash = " + self.pattern_hash, "socket = " + SOCKET, "error_hold_ms = 500",
                "state_file = /tmp/touchlock-state/state"] + extra
        # A fresh daemon each time: no state, and no runtime record of the one before
        # (which would have it start as that one was, unlocked). The state file is in a
        # directory of its own: one in /tmp, writable by all, is not trusted.
        if fresh:
            g.run(f"rm -rf /tmp/touchlock-state {SOCKET[:-5]}.runtime")
        g.run("mkdir -p /run/touchlock; printf '%s\\n' "
              + " ".join(f"'{c}'" for c in conf) + " >/tmp/touchlock.conf")
        g.run("touchlockd -C /tmp/touchlock.conf --display drm --input evdev </dev/null >/dev/console 2>&1 & DPID=$!")
        g.run(f"i=0; while [ ! -S {SOCKET} ] && [ $i -lt 600 ]; do usleep 50000; i=$((i+1)); done; test -S {SOCKET}",
              timeout=40)
        st = self.status()
        self.nodes = [tuple(p) for p in st["pattern"]["nodes"]]
        # Connected before anything is touched: no event is missed. The status connection
        # just closed may still be listed; the count starts from the listening socket alone.
        count = f"$(grep -c '{bound_name(SOCKET)}' /proc/net/unix)"
        g.run(f"i=0; while [ {count} -gt 1 ] && [ $i -lt 100 ]; do usleep 50000; i=$((i+1)); done; true", timeout=30)
        background_client(g, SOCKET, f"{CTL} subscribe </dev/null >/dev/console 2>&1 &")
        return st

    def lock_screen(self, img):
        return verify(img, self.nodes, RIGHT, "idle")

    def unlock(self, what):
        """Draws the right pattern; returns the screendump of the app back and the time from
        the unlocked event to it."""
        g = self.guest
        since = g.mark()
        inject(g, stroke(self.nodes, RIGHT, lift=True), "@@pattern")
        _, _, t_event = g.expect(r'"event"\s*:\s*"unlocked"', 15, since, what="the unlocked event")
        img, _ = self.poll(lambda i: app_shown(i, self.rect), 15, what)
        return img, g.elapsed() - t_event

    def lock_checks(self):
        g = self.guest
        have = self.features
        names = ["touchlockctl lock covers the app with the lock screen",
                 "touches while locked never reach the app; chvt to the app's VT does not switch",
                 "the right pattern unlocks: the app is back as it was and takes touches again",
                 "a contact held on a second panel does not stop the first from unlocking",
                 "idle lock fires after idle_s with nothing touched",
                 "blanking turns the display off; a touch wakes it and selects nothing",
                 "when the display cannot be taken, the lock reply and status say so; it locks once the VT owner resumes",
                 "touchlockd stopped while locked keeps the app covered; the next one covers, unlocks and hands back"]
        if not have.get("vt"):
            for n in names:
                self.skip(n, "touchlockd has no [display] vt: no VT hand-off yet")
            return
        for n in names[:4]:
            self.results[f"[{self.stack}] {n}"] = "not reached"
        state = {}

        def first_unlock():
            # Started after the compositor, touchlockd locks at once: its VT, the lock screen.
            self.start_daemon([])
            self.poll(self.lock_screen, 10, "the lock screen at the daemon's start")
            img, _ = self.unlock("the app after the first unlock")
            if self.active_vt() != "tty1":
                raise CheckFailed("the kiosk's VT is not active after the unlock")
            state["app"] = img

        def lock():
            if "app" not in state:
                raise CheckFailed("not reached: the daemon's first unlock failed")
            state["app_vt"] = self.active_vt()
            since = g.mark()
            t0 = time.monotonic()
            g.send(f"{CTL} lock </dev/null")
            img, _ = self.poll(self.lock_screen, 10, "the lock screen")
            self.times["lock_to_lock_screen"] = time.monotonic() - t0
            # The reply comes once the lock screen is on the display.
            m, idx, _ = g.expect(r"^@@rc (\d+)$", 20, since, what="the reply to lock")
            reply = " ".join(l for _, l in g.lines[since:idx])
            if m.group(1) != "0" or '"locked"' not in reply:
                raise CheckFailed(f"touchlockctl lock exited {m.group(1)}: {reply}")
            st = self.status()
            if st["state"] != "locked" or st.get("display") != "shown":
                raise CheckFailed("status after lock: " + json.dumps(st))
            vt = self.active_vt()
            if vt == state["app_vt"] or vt != f"tty{st.get('vt')}":
                raise CheckFailed(f"the active VT is {vt}: the kiosk's is {state['app_vt']}, status says vt {st.get('vt')}")
            state["lock_vt"] = vt
            self.save("locked", img)
            state["locked"] = img

        def touches_and_chvt():
            if "locked" not in state:
                raise CheckFailed("not reached: not locked")
            # A stroke through the app's place, clear of the nodes: it selects nothing.
            x, y0, w, h = self.rect
            state["locked_path"] = (x + 60, int(y0 + h * 0.85), x + w - 60)
            inject(g, app_stroke(*state["locked_path"]), "@@stroke-locked")
            # VT_LOCKSWITCH: chvt blocks in VT_WAITACTIVE, so it runs in the background.
            n = state["app_vt"].replace("tty", "")
            g.run(f"(timeout 4 chvt {n}; echo \"@@chvt $?\") </dev/null >/dev/console 2>&1 &")
            time.sleep(1.5)
            if self.active_vt() != state["lock_vt"]:
                raise CheckFailed("chvt switched away from the lock screen's VT while locked")
            img = g.screendump()
            problems = self.lock_screen(img)
            if problems:
                raise CheckFailed("the lock screen went away after chvt: " + "; ".join(problems))
            if self.status()["state"] != "locked":
                raise CheckFailed("not locked after the stroke and chvt")
            g.expect(r"^@@chvt \d+$", 10, what="the background chvt to end")

        def unlock_back():
            if "locked" not in state:
                raise CheckFailed("not reached: not locked")
            img, dt = self.unlock("the app after the unlock")
            self.times["unlock_to_app_repaint"] = dt
            st = self.status()
            if st["state"] != "unlocked" or st.get("display") != "handed_over" or self.active_vt() != state["app_vt"]:
                raise CheckFailed(f"after the unlock: VT {self.active_vt()}, status " + json.dumps(st))
            if marks(img, self.rect) != marks(state["app"], self.rect):
                raise CheckFailed("the app's surface is not as it was before the lock"
                                  " (a stroke made while locked reached it, or it was not repainted)")
            self.save("unlocked", img)
            self.touch_app(0.15, "@@stroke-after-unlock", img, "marks of a stroke after the unlock")

        def second_panel():
            if "locked" not in state:
                raise CheckFailed("not reached: not locked")
            g.run(f"{CTL} lock </dev/null")
            self.poll(self.lock_screen, 10, "the lock screen")
            g.run("mkfifo /tmp/inject2 && exec 4<>/tmp/inject2")
            since = g.mark()
            g.run("touchinject </tmp/inject2 3>&- >/dev/console 2>&1 &")
            m, _, _ = g.expect(r"^device (/dev/input/event\d+)$", 10, since, what="the second panel")
            g.run("echo \"wait-open $DPID\" >&4")
            g.expect(r"^opened " + re.escape(m.group(1)), 20, since, what="touchlockd opening the second panel")
            w, h = self.size
            inject(g, [f"size {w} {h}", f"down {w - 20} {h - 20}"], "@@held", fd=4)
            try:
                self.unlock("the app after an unlock with a contact held on the second panel")
            finally:
                inject(g, ["up"], "@@released", fd=4)
                if self.status()["state"] != "unlocked":
                    # Leave the daemon unlocked (the kiosk's VT shown) for the next check.
                    self.unlock("the app after an unlock with the second panel released")

        for n, fn in zip(names[:3], (lambda: (first_unlock(), lock()), touches_and_chvt, unlock_back)):
            self.record(n, fn)
        if "second-panel" in PENDING and not self.args.all:
            del self.results[f"[{self.stack}] {names[3]}"]
            self.skip(names[3], "pending: touchlockd tracks no finger per panel yet; --all runs it")
        else:
            self.record(names[3], second_panel)

        # Idle lock and blanking: a daemon each, so their timers do not fire amid the other checks.
        def idle():
            self.start_daemon(["[lock]", f"idle_s = {IDLE_S}"])
            self.poll(self.lock_screen, 10, "the lock screen at the daemon's start")
            _, dt = self.unlock("the app after the unlock")
            t_unlocked = g.elapsed() - dt
            if self.status()["state"] != "unlocked":
                raise CheckFailed("not unlocked")
            self.poll(self.lock_screen, IDLE_S + 15, "the idle lock")
            waited = g.elapsed() - t_unlocked
            print(f"vm-kiosk: [{self.stack}] idle lock seen {waited:.2f} s after the unlock (idle_s = {IDLE_S})",
                  flush=True)
            if waited < IDLE_S - 0.5:
                raise CheckFailed(f"locked {waited:.1f} s after the unlock, before idle_s = {IDLE_S}")
            st = self.status()
            if st["state"] != "locked" or st.get("display") != "shown":
                raise CheckFailed("status after the idle lock: " + json.dumps(st))
            # Unlocked again, the kiosk has its VT before this daemon is stopped.
            self.unlock("the app after the unlock that follows the idle lock")

        def blank():
            # A daemon of its own, left untouched from its start.
            self.start_daemon(["[display]", f"blank_s = {BLANK_S}"])
            self.poll(self.lock_screen, 10, "the lock screen at the daemon's start")
            dpms = "cat /sys/class/drm/card0-*/dpms | head -n1"
            deadline = time.monotonic() + BLANK_S + 15
            while g.run(dpms)[1][-1].strip() != "Off":
                if time.monotonic() > deadline:
                    raise CheckFailed("the connector's DPMS is not Off after blank_s")
                time.sleep(0.3)
            st = self.status()
            if st.get("power") != "blank" or st["state"] != "locked":
                raise CheckFailed("status while blank: " + json.dumps(st))
            since = g.mark()
            x, y = self.nodes[4]
            inject(g, [f"down {x} {y}", "sleep 100", "up"], "@@wake")
            deadline = time.monotonic() + 10
            while g.run(dpms)[1][-1].strip() != "On":
                if time.monotonic() > deadline:
                    raise CheckFailed("a touch did not wake the display")
                time.sleep(0.2)
            st = self.status()
            if st.get("power") != "awake" or st["state"] != "locked" or st.get("failures", 0):
                raise CheckFailed("status after the waking touch: " + json.dumps(st))
            self.poll(self.lock_screen, 5, "the lock screen with no node selected after the wake")
            events = [l for _, l in g.lines[since:] if '"event"' in l]
            if events:
                raise CheckFailed("the waking touch was taken as input: " + " | ".join(events))
            # Awake, the pattern unlocks and the app comes back.
            self.unlock("the app after the unlock that follows the wake")

        for n, fn, key, setting in ((names[4], idle, "idle", "[lock] idle_s"),
                                    (names[5], blank, "blank", "[display] blank_s")):
            if have.get(key):
                self.record(n, fn)
            else:
                self.skip(n, f"touchlockd has no {setting} yet")

        def no_display():
            # The VT owner (weston's launcher, or seatd) stopped: it never releases its VT, so
            # the switch to ours does not complete.
            self.start_daemon([])
            self.poll(self.lock_screen, 10, "the lock screen at the daemon's start")
            self.unlock("the app after the unlock")
            g.run("kill -STOP $VTOWNER")
            stopped = True
            try:
                g.run(f"({CTL} lock; echo \"@@lock $?\") </dev/null >/tmp/lock.out 2>&1 &")
                # While the switch is under way, status must not claim the lock screen is shown.
                st = self.status()
                if st["state"] == "locked" and st.get("display") == "shown":
                    raise CheckFailed("status says locked and shown while the switch waits: " + json.dumps(st))
                g.run("i=0; while ! grep -q @@lock /tmp/lock.out && [ $i -lt 300 ]; do usleep 100000; i=$((i+1)); done",
                      timeout=40)
                _, lines = g.run("cat /tmp/lock.out")
                m = re.match(r"@@lock (\d+)", lines[-1] if lines else "")
                if not m:
                    raise CheckFailed("touchlockctl lock did not return: " + " | ".join(lines))
                reply = " ".join(lines[:-1])
                if m.group(1) == "0" or "display" not in reply:
                    raise CheckFailed(f"touchlockctl lock exited {m.group(1)} without saying the display"
                                      f" was not taken: {reply}")
                # Either still unlocked with the kiosk on the display, or locked with the reason
                # the lock screen is not shown: never `locked` as if it were.
                st = self.status()
                if st["state"] == "locked" and (st.get("display") != "not_shown" or not st.get("display_reason")):
                    raise CheckFailed("status says locked without saying the lock screen is not shown: " + json.dumps(st))
                if st["state"] != "locked" and st.get("display") != "handed_over":
                    raise CheckFailed("status after the refused lock: " + json.dumps(st))
                img = g.screendump()
                if not self.lock_screen(img) or app_shown(img, self.rect):
                    raise CheckFailed("the app is not what the display shows after the refused lock")
                said = next((l for l in lines[:-1] if l.startswith("touchlockctl:")), reply).strip()
                print(f"vm-kiosk: [{self.stack}] with the VT owner stopped: {said}; status {st['state']},"
                      f" display {st.get('display')} {st.get('display_reason') or ''}", flush=True)
                # The owner resumes and acknowledges the old release: whatever VT ends up
                # shown, the screen is the app's or the lock screen with status saying so.
                g.run("kill -CONT $VTOWNER")
                stopped = False
                time.sleep(3)
                st, vt, img = self.status(), self.active_vt(), g.screendump()
                shown = "lock screen" if not self.lock_screen(img) else ("app" if not app_shown(img, self.rect) else "neither")
                print(f"vm-kiosk: [{self.stack}] 3 s after the VT owner resumed: active {vt}, {shown} on screen,"
                      f" status {st['state']}, display {st.get('display')}", flush=True)
                if shown == "neither" or (shown == "app") != (st["state"] != "locked"):
                    raise CheckFailed(f"after the VT owner resumed: {shown} on the display ({vt}) while status says "
                                      f"{st['state']}, display {st.get('display')}")
                # The refused lock was kept: once the owner lets its VT go, it is carried out.
                if shown != "lock screen" or st["state"] != "locked" or st.get("display") != "shown":
                    raise CheckFailed(f"the refused lock was not carried out once the VT owner resumed: {shown} on "
                                      f"the display ({vt}), status {json.dumps(st)}")
                self.unlock("the app after unlocking the lock carried out late")
            finally:
                if stopped:
                    g.run("kill -CONT $VTOWNER")

        self.results[f"[{self.stack}] {names[6]}"] = "not reached"
        self.record(names[6], no_display)

        def stopped_while_locked():
            # systemctl stop (or a restart) while the lock screen is up: the app stays covered
            # (the daemon leaves its VT on screen on its way out), and the next instance covers
            # at once, then hands back to the kiosk's VT after the unlock.
            if self.status()["state"] != "unlocked":
                raise CheckFailed("not reached: the daemon is not unlocked")
            g.run(f"{CTL} lock </dev/null")
            self.poll(self.lock_screen, 10, "the lock screen")
            kiosk_vt = state.get("app_vt", "tty1")
            g.run("kill $DPID; wait $DPID; DPID=; true", timeout=30)
            for k in range(10):
                img = g.screendump()
                if not app_shown(img, self.rect):  # no problem found with the app's surface: it shows
                    self.save("uncovered", img)
                    raise CheckFailed(f"the app shows {k * 0.2:.1f} s after touchlockd stopped while locked")
                time.sleep(0.2)
            if self.active_vt() == kiosk_vt:
                raise CheckFailed(f"the kiosk's VT {kiosk_vt} is active after touchlockd stopped while locked")
            self.start_daemon([], fresh=False)
            self.poll(self.lock_screen, 10, "the lock screen of the new daemon")
            self.unlock("the app after the new daemon's unlock")
            if self.active_vt() != kiosk_vt:
                raise CheckFailed(f"after the new daemon's unlock the active VT is {self.active_vt()}, not {kiosk_vt}")

        self.results[f"[{self.stack}] {names[7]}"] = "not reached"
        self.record(names[7], stopped_while_locked)

        def udev_rules():
            # Two panels plugged in while a new daemon runs: the rule's matrix mirrors the
            # first, the second is to be ignored. A node shows in /dev/input before udevd has
            # processed it: the daemon may take the panel at once by its capabilities, and must
            # come round to udev's word once udevd's queue has emptied.
            since = g.mark()
            self.start_daemon([])
            self.poll(self.lock_screen, 10, "the lock screen at the daemon's start")
            nodes = {}
            for name, fd in ((MIRRORED, 5), (IGNORED, 6)):
                fifo = f"/tmp/inject{fd}"
                g.run(f"mkfifo {fifo} && exec {fd}<>{fifo}")
                mark = g.mark()
                g.run(f"touchinject --name '{name}' <{fifo} 3>&- 4>&- 5>&- 6>&- >/dev/console 2>&1 &")
                m, _, _ = g.expect(r"^device (/dev/input/event\d+)$", 10, mark, what=f"the {name}")
                nodes[name] = m.group(1)
            g.run("udevadm settle --timeout=30", timeout=40)
            for name, want in ((MIRRORED, "LIBINPUT_CALIBRATION_MATRIX=-1 0 1 0 1 0"), (IGNORED, "LIBINPUT_IGNORE_DEVICE=1")):
                # Not on the terminal: udevadm would ask the serial console for its size, and wait.
                _, lines = g.run(f"udevadm info --query=property --name={nodes[name]} </dev/null 2>&1 | cat")
                if want not in lines:
                    raise CheckFailed(f"udev did not apply the rule to the {name}: " + " | ".join(lines))

            def held(node):
                _, lines = g.run(f"ls -l /proc/$DPID/fd | grep -c ' {node}$'; true")
                return lines[-1].strip() if lines else ""
            t0 = time.monotonic()
            while (held(nodes[IGNORED]), held(nodes[MIRRORED])) != ("0", "1"):
                if time.monotonic() - t0 > 5:
                    raise CheckFailed(f"5 s after udevd settled the daemon holds the ignored panel {held(nodes[IGNORED])}"
                                      f" times, the mirrored one {held(nodes[MIRRORED])} times (want 0 and 1)")
                time.sleep(0.2)
            said = [l for _, l in g.lines[since:]]
            # "NODE: ignored: ..." when it was left out unopened, "NODE (NAME): ..." once opened.
            ignored = re.compile(re.escape(nodes[IGNORED]) + r"( \(.*\))?: ignored: udev sets LIBINPUT_IGNORE_DEVICE")
            if not any(ignored.search(l) for l in said):
                raise CheckFailed(f"the daemon did not say that {nodes[IGNORED]} is ignored (LIBINPUT_IGNORE_DEVICE)")
            again = [n for n in nodes.values() if any(f"{n}: opened again with udev's properties" in l for l in said)]
            print(f"vm-kiosk: [{self.stack}] panels taken before udevd had processed them, then again with"
                  f" its properties: {len(again)} of 2", flush=True)
            w, h = self.size
            _, lines = g.run(f"{CTL} metrics </dev/null")
            metrics = next((json.loads(l) for l in lines if l.startswith("{") and "input_devices" in l), {})
            _, lines = g.run(f"ls -l /proc/$DPID/fd | grep -c ' /dev/input/event'; true")
            count = int(lines[-1].strip()) if lines and lines[-1].strip().isdigit() else -1
            if metrics.get("input_devices") != count:
                raise CheckFailed(f"metrics say input_devices {metrics.get('input_devices')}, the daemon holds {count} devices")
            print(f"vm-kiosk: [{self.stack}] with the ignored panel plugged in: input_devices"
                  f" {metrics.get('input_devices')}", flush=True)
            # The right pattern on the ignored panel does nothing.
            inject(g, [f"size {w} {h}"] + stroke(self.nodes, RIGHT, lift=True), "@@ignored-pattern", fd=6)
            time.sleep(1.5)
            st = self.status()
            if st["state"] != "locked" or st.get("failures"):
                raise CheckFailed("after the pattern on the ignored panel: " + json.dumps(st))
            # The right pattern mirrored on the mirrored panel lands, through the matrix, on the
            # right nodes: unlocked. Without the matrix it would be another pattern, and wrong.
            def mirror(c):
                p = c.split()
                return f"{p[0]} {w - float(p[1]):.1f} {p[2]}" if p[0] in ("down", "move") else c
            since = g.mark()
            inject(g, [f"size {w} {h}"] + [mirror(c) for c in stroke(self.nodes, RIGHT, lift=True)],
                   "@@mirrored-pattern", fd=5)
            g.expect(r'"event"\s*:\s*"unlocked"', 15, since,
                     what="the unlocked event after the mirrored pattern on the mirrored panel")
            self.poll(lambda i: app_shown(i, self.rect), 15, "the app after the unlock on the mirrored panel")

        udev_name = "udev rules are honoured: a panel's calibration matrix maps its touches, an ignored panel is not used"
        self.results[f"[{self.stack}] {udev_name}"] = "not reached"
        self.record(udev_name, udev_rules)

        def owner_died():
            # The VT owner stopped, then killed (with the compositor) while the switch to ours
            # is pending: it never answers, and the kernel completes a switch away from a dead
            # owner's VT only when VT_ACTIVATE is asked again. touchlockd asks again: the refused lock is carried
            # out. Last of the stack: the compositor does not survive its VT owner.
            if self.status()["state"] != "unlocked":
                raise CheckFailed("not reached: the daemon is not unlocked")
            g.run("kill -STOP $VTOWNER")
            g.run(f"({CTL} lock; echo \"@@lock $?\") </dev/null >/tmp/lock.out 2>&1")
            _, lines = g.run("cat /tmp/lock.out")
            if not lines or lines[-1] == "@@lock 0":
                raise CheckFailed("touchlockctl lock did not fail with the VT owner stopped: " + " | ".join(lines))
            st = self.status()
            if st["state"] == "locked" and st.get("display") == "shown":
                raise CheckFailed("status says locked and shown while the switch waits: " + json.dumps(st))
            since = g.mark()
            # With the compositor (seatd's cage would keep DRM master): both reaped, as
            # their service manager would (the kernel takes a zombie for alive).
            g.run("kill -KILL $VTOWNER $KPID; wait $VTOWNER $KPID 2>/dev/null; true", timeout=30)
            _, waited = self.poll(self.lock_screen, 20, "the lock screen after the VT owner died mid-switch")
            st, vt = self.status(), self.active_vt()
            if st["state"] != "locked" or st.get("display") != "shown" or vt != f"tty{st.get('vt')}":
                raise CheckFailed(f"after the VT owner died: active {vt}, status {json.dumps(st)}")
            asked = sum(1 for _, l in g.lines[since:] if "asked for again" in l)
            print(f"vm-kiosk: [{self.stack}] VT owner killed with the switch pending: the lock screen shown"
                  f" {waited:.1f} s later ({asked} asks again logged after the kill)", flush=True)
            self.times["owner_killed_to_lock_screen"] = waited
            since = g.mark()
            inject(g, stroke(self.nodes, RIGHT, lift=True), "@@pattern")
            g.expect(r'"event"\s*:\s*"unlocked"', 15, since, what="the unlocked event after the VT owner died")

        died_name = "the VT owner and the compositor killed while the switch to the lock screen waits: the lock is carried out"
        self.results[f"[{self.stack}] {died_name}"] = "not reached"
        self.record(died_name, owner_died)

    # -- a whole run

    def run(self):
        self.workdir = tempfile.mkdtemp(prefix="touchlock-kiosk-")
        try:
            self.boot()
            if self.stand_checks() and self.args.daemon:
                self.lock_checks()
        except CheckFailed as e:
            print(f"vm-kiosk: [{self.stack}] set-up FAILED: {e}", flush=True)
            self.results[f"[{self.stack}] set-up"] = str(e)
        finally:
            if self.guest:
                self.guest.quit()
                self.times["total"] = self.guest.elapsed()
            shutil.rmtree(self.workdir, ignore_errors=True)
        for name, problem in self.results.items():
            if problem == "not reached":
                print(f"vm-kiosk: {name}: FAILED (not reached)", flush=True)


def features(daemon):
    """Which of issue 9's settings the daemon knows, asked with --check-config."""
    probes = {"vt": "[display]\nvt = 2\n", "idle": f"[lock]\nidle_s = {IDLE_S}\n",
              "blank": f"[display]\nblank_s = {BLANK_S}\n"}
    have = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in probes.items():
            path = os.path.join(tmp, name + ".conf")
            with open(path, "w") as f:
                f.write(text)
            p = subprocess.run([daemon, "--config-root", tmp, "-C", path, "--check-config"],
                               capture_output=True, text=True)
            have[name] = p.returncode == 0
    return have


def main():
    ap = argparse.ArgumentParser(description="touchlock on real kiosk compositors under QEMU")
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--daemon", help="touchlockd on the host (its settings are probed); the image must hold it")
    ap.add_argument("--ctl", help="touchlockctl on the host (hashes the test pattern)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".vm", "out-kiosk"))
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--timeout", type=float, default=600, help="seconds before QEMU is killed")
    ap.add_argument("--boot-timeout", type=float, default=60)
    ap.add_argument("--stack", action="append", choices=sorted(STACKS), help="only this stack (may be repeated)")
    ap.add_argument("--stand", action="store_true", help="the compositors, touches and chvt only, no touchlockd")
    ap.add_argument("--all", action="store_true", help="also run the checks of behaviour not implemented yet (PENDING)")
    ap.add_argument("--runs", type=int, default=1, help="repeat the whole run (for timing and reliability)")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    pattern_hash, have = None, {}
    if args.stand:
        args.daemon = None
    if args.daemon:
        if not args.ctl:
            sys.exit("vm-kiosk: --ctl is required with --daemon")
        pattern_hash = hash_pattern(args.ctl, RIGHT)
        have = features(args.daemon)
        print("vm-kiosk: touchlockd knows " + (", ".join(k for k, v in have.items() if v) or "none")
              + " of [display] vt, [lock] idle_s, [display] blank_s", flush=True)

    passed = failed = 0
    figures = {}
    for r in range(args.runs):
        for stack in args.stack or list(STACKS):
            for number in (1, 2):
                run_tag = f".run{r + 1}" if args.runs > 1 else ""
                log_name = f"console-{stack}{run_tag}.log" if number == 1 else f"console-{stack}{run_tag}.{number}.log"
                with open(os.path.join(out, log_name), "w", buffering=1) as log:
                    stand = Stand(args, stack, out, log, pattern_hash, have)
                    try:
                        stand.run()
                        break
                    except InfraError as e:
                        print(f"vm-kiosk: [{stack}] attempt {number}: {e}", flush=True)
                        if number == 2:
                            stand.results = {f"[{stack}] the guest": "hung twice"}
            for name, problem in stand.results.items():
                if problem is None:
                    passed += 1
                else:
                    failed += 1
            for k, v in stand.times.items():
                figures.setdefault((stack, k), []).append(v)
            print(f"vm-kiosk: [{stack}] timing: " + ", ".join(f"{k} {v:.3f} s" for k, v in stand.times.items()),
                  flush=True)
            if stand.repeats:
                print(f"vm-kiosk: [{stack}] strokes made again (the one before left no mark, or part of one): {stand.repeats}", flush=True)
    if args.runs > 1:
        for (stack, k), xs in sorted(figures.items()):
            xs = sorted(xs)
            print(f"vm-kiosk: [{stack}] {k} over {len(xs)} runs: min {xs[0]:.3f} s, "
                  f"median {xs[len(xs) // 2]:.3f} s, max {xs[-1]:.3f} s")
    print(f"vm-kiosk: screenshots and console logs in {out}")
    print(f"vm-kiosk: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
