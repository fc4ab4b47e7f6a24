#!/usr/bin/env python3
"""End-to-end test of touchlockd on a real kernel: Debian's kernel under QEMU (TCG), its
bochs KMS driver for the display and uinput for a multitouch touchscreen.

The guest's /init (Tests/VM/init.sh) runs each line it reads on the serial console as a shell
command and answers "@@rc STATUS". This script boots the guest, starts the daemon there with
a uinput touchscreen (Tests/VM/touchinject.c), draws patterns with it, takes screendumps
through the QEMU monitor and checks their pixels:

  (a) unlock  the right pattern unlocks: `touchlockctl wait-unlock` prints the unlocked event;
  (b) drawing while the finger is still down, the path shows over the chosen nodes;
  (c) error   a wrong pattern shows the error colour, reports `failed` and stays locked;
  (d) code    a second daemon with `unlock_method = code`: taps on the on-screen keypad fill
              the boxes (underlines checked), report `progress` and the right code unlocks.
  (e)-(j)     real panels (uinput clones), hotplug, SYN_DROPPED, a uinput keypad; each on a
              daemon started with --once;
  (k) enroll  a daemon with no secret in its config: `touchlockctl enroll pattern` on stdin;
  (l) lockout five wrong patterns: `failed` 1-5, `lockout`, status, the countdown on screen,
              a stroke during the lockout does nothing;
  (m) hand-over  after the lockout the pattern unlocks, DRM master is dropped with nothing of
              the pattern on the display, `touchlockctl lock` takes it back;
  (n) once    each --once daemon of (e)-(j) exited 0 at its first unlock.
  (o) rotation  [display] rotation = 90 laid out and turned as the preview shows it.
  (p) stuck   a contact resting on a node gives way after 4 s; a second finger beside it
              draws the right pattern, which unlocks.

Screendumps are saved as PNG in --out (idle.png, drawing.png, error.png, code.png, lockout.png,
handed-over.png) with the serial console log (console.log). --smoke checks only the
infrastructure (card0, uinput, screendump).
QEMU is killed after --timeout seconds and the run is retried once if the guest hung.
Python standard library only.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zlib

SOCKET = "/run/touchlock/touchlock.sock"
RIGHT = [0, 1, 2, 5, 8]          # an L: every step joins neighbours, no node is jumped over
WRONG = [0, 3, 6, 7]
CODE = [2, 5, 8, 0]
SOCKET_CODE = "/run/touchlock/code.sock"
ERROR_HOLD_MS = 2500
# Enrollment and lockout (checks k-m): a daemon of its own, no secret in its config.
SOCKET_ENROLL = "/run/touchlock/enroll.sock"
LOCKOUT_SCHEDULE = "0,0,0,0,8"   # failures 1-4 free, the fifth locks out for 8 s
LOCKOUT_HOLD_MS = 300
# Five distinct wrong patterns (a repeated wrong guess would not count again), and one
# drawn during the lockout.
LOCKOUT_WRONG = [[0, 3, 6, 7], [2, 5, 8, 7], [6, 7, 8, 5], [0, 1, 4, 7], [3, 4, 5, 2]]
LOCKOUT_TOUCHED = [8, 7, 6, 3]
STEP_PX = 15                     # finger moves are interpolated every STEP_PX pixels
STEP_MS = 8                      # ... and this far apart in time

# Theme defaults (rgb) and what the checks call them.
BACKGROUND = (15, 18, 23)
NORMAL = (0x8C, 0x94, 0xA1)
SELECTED = (0, 170, 255)
ERROR = (255, 59, 48)
UNDERLINE = (84, 89, 99)            # an empty box's underline
UNDERLINE_FILLED = (191, 196, 204)  # a filled box's underline (the focused one is SELECTED)
DISABLED_ALPHA = 0.38               # nodes and keys while input is not taken (error hold, lockout)


def blend(c, over, alpha):
    return tuple(round(alpha * a + (1 - alpha) * b) for a, b in zip(c, over))


PALETTE = {
    "background": BACKGROUND,
    "normal": NORMAL,
    "selected": SELECTED,
    "selected-path": blend(SELECTED, BACKGROUND, 0.5),
    "error": ERROR,
    "error-path": blend(ERROR, BACKGROUND, 0.5),
    "underline": UNDERLINE,
    "underline-filled": UNDERLINE_FILLED,
    "disabled": blend(NORMAL, BACKGROUND, DISABLED_ALPHA),
}


# The machines QEMU emulates: the PC with bochs-display and its first UART, or (arm64) the
# "virt" board with virtio-gpu-pci and its PL011 UART (ttyAMA0). `-cpu max` under TCG;
# on arm64 with QEMU's own pointer authentication, much faster to emulate than the
# architected one and the same to the guest.
ARCHES = {
    "amd64": {"qemu": "qemu-system-x86_64", "machine": [], "cpu": "max", "console": "ttyS0",
              "display": "bochs-display", "vga": ["-vga", "none"], "driver": "bochs"},
    "arm64": {"qemu": "qemu-system-aarch64", "machine": ["-M", "virt"], "cpu": "max,pauth-impdef=on",
              "console": "ttyAMA0", "display": "virtio-gpu-pci", "vga": [], "driver": "virtio_gpu"},
}


class InfraError(Exception):
    """The machine, not the daemon, failed (boot hang, QEMU died, watchdog): worth a retry."""


class CheckFailed(Exception):
    pass


# ---------------------------------------------------------------------------- images

class Image:
    def __init__(self, width, height, rgb):
        self.width, self.height, self.rgb = width, height, rgb

    @staticmethod
    def from_ppm(data):
        # P6 <ws> width <ws> height <ws> maxval <one ws> pixels
        m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
        if not m:
            raise CheckFailed("screendump is not a binary PPM")
        w, h, maxval = int(m.group(1)), int(m.group(2)), int(m.group(3))
        pixels = data[m.end():m.end() + w * h * 3]
        if maxval != 255 or len(pixels) != w * h * 3:
            raise CheckFailed(f"screendump truncated or not 8-bit ({w}x{h}, {len(pixels)} bytes)")
        return Image(w, h, pixels)

    def pixel(self, x, y):
        x = min(max(int(round(x)), 0), self.width - 1)
        y = min(max(int(round(y)), 0), self.height - 1)
        i = (y * self.width + x) * 3
        return tuple(self.rgb[i:i + 3])

    def classify(self, x, y):
        """The palette name most of the 3x3 pixels around (x, y) are nearest to."""
        votes = {}
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                p = self.pixel(x + dx, y + dy)
                name, dist = min(((n, sum((a - b) ** 2 for a, b in zip(p, c)) ** 0.5)
                                  for n, c in PALETTE.items()), key=lambda t: t[1])
                name = name if dist <= 60 else "other"
                votes[name] = votes.get(name, 0) + 1
        return max(votes.items(), key=lambda t: t[1])[0], self.pixel(x, y)

    @staticmethod
    def from_png(data):
        """An 8-bit RGB or RGBA PNG, not interlaced (what cairo writes for RGB24)."""
        if data[:8] != b"\x89PNG\r\n\x1a\n":
            raise CheckFailed("not a PNG")
        pos, idat, w, h, kind = 8, b"", 0, 0, 2
        while pos < len(data):
            n = int.from_bytes(data[pos:pos + 4], "big")
            tag, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
            pos += 12 + n
            if tag == b"IHDR":
                w, h = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
                if body[8] != 8 or body[9] not in (2, 6) or body[12] != 0:
                    raise CheckFailed(f"PNG kind not read here (depth {body[8]}, colour {body[9]}, interlace {body[12]})")
                kind = body[9]
            elif tag == b"IDAT":
                idat += body
        bpp = 3 if kind == 2 else 4
        raw, stride = zlib.decompress(idat), w * bpp
        out, prev = bytearray(), bytearray(stride)
        for y in range(h):
            f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                if f == 1: line[i] = (line[i] + a) & 255
                elif f == 2: line[i] = (line[i] + b) & 255
                elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
                elif f == 4:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            out += line if bpp == 3 else bytes(v for k, v in enumerate(line) if k % 4 != 3)
            prev = line
        return Image(w, h, bytes(out))

    def png(self):
        def chunk(kind, body):
            return (len(body).to_bytes(4, "big") + kind + body
                    + zlib.crc32(kind + body).to_bytes(4, "big"))
        stride = self.width * 3
        raw = b"".join(b"\0" + self.rgb[y * stride:(y + 1) * stride] for y in range(self.height))
        ihdr = self.width.to_bytes(4, "big") + self.height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


# ---------------------------------------------------------------------------- the guest

class Guest:
    """One QEMU process: the serial console as a line stream, the monitor for screendumps."""

    def __init__(self, args, workdir, log):
        self.args, self.workdir, self.log = args, workdir, log
        self.lines = []
        self.cond = threading.Condition()
        self.closed = False
        self.killed_by_watchdog = False
        self.monitor_path = os.path.join(workdir, "monitor.sock")
        self.dumps = 0
        self.arch = ARCHES[getattr(args, "arch", None) or "amd64"]
        self.qemu = getattr(args, "qemu", None) or self.arch["qemu"]
        # Kernel command line; KEY=VALUE words reach /init's environment (e.g. GUEST_TIMEOUT).
        self.append = f"console={self.arch['console']} quiet panic=-1"
        # The display card (run_kiosk.py also boots virtio-gpu-pci) and the memory size.
        self.display_device = self.arch["display"]
        self.memory = "512"
        # More QEMU arguments (run_systemd.py adds a second serial port for the console).
        self.extra_args = []

    def start(self):
        cmd = [self.qemu] + self.arch["machine"] + [
            "-accel", "tcg", "-cpu", self.arch["cpu"], "-nodefaults", "-m", self.memory, "-smp", "2",
            "-kernel", self.args.vmlinux, "-initrd", self.args.initrd,
            "-append", self.append,
            "-display", "none", "-serial", "stdio", "-no-reboot",
            "-monitor", f"unix:{self.monitor_path},server,nowait",
        ] + self.arch["vga"] + ["-device", self.display_device] + self.extra_args
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        threading.Thread(target=self._read_console, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        self.watchdog = threading.Timer(self.args.timeout, self._watchdog)
        self.watchdog.daemon = True
        self.watchdog.start()
        self.monitor = None

    def _watchdog(self):
        self.killed_by_watchdog = True
        self.log.write(f"[host {self.elapsed():7.3f}] watchdog: killing QEMU after {self.args.timeout} s\n")
        self.proc.kill()

    def elapsed(self):
        return time.monotonic() - self.t0

    def _read_console(self):
        buf = b""
        while True:
            data = self.proc.stdout.read1(4096)
            if not data:
                break
            buf += data
            *complete, buf = buf.split(b"\n")
            with self.cond:
                for raw in complete:
                    line = raw.replace(b"\r", b"").decode("utf-8", "replace")
                    stamp = self.elapsed()
                    self.lines.append((stamp, line))
                    self.log.write(f"[{stamp:7.3f}] {line}\n")
                self.cond.notify_all()
        with self.cond:
            self.closed = True
            self.cond.notify_all()

    def _read_stderr(self):
        for raw in self.proc.stderr:
            self.log.write(f"[qemu stderr] {raw.decode('utf-8', 'replace').rstrip()}\n")

    def mark(self):
        with self.cond:
            return len(self.lines)

    def expect(self, pattern, timeout, since=0, what=None):
        """Waits for a console line matching pattern (from line index `since`); returns
        (match, index, time)."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self.cond:
            i = since
            while True:
                while i < len(self.lines):
                    m = rx.search(self.lines[i][1])
                    if m:
                        return m, i, self.lines[i][0]
                    i += 1
                if self.closed:
                    raise InfraError(self._death(what or pattern))
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CheckFailed(f"timed out after {timeout} s waiting for {what or pattern!r}")
                self.cond.wait(left)

    def _death(self, what):
        if self.killed_by_watchdog:
            return f"QEMU killed by the watchdog while waiting for {what!r}"
        return f"QEMU exited (status {self.proc.poll()}) while waiting for {what!r}"

    def send(self, line):
        assert "\n" not in line and len(line) < 3500, "one short line per command"
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise InfraError(self._death(line))

    def run(self, command, timeout=20, check=True):
        """Runs one shell command in the guest; returns (status, output lines)."""
        since = self.mark()
        self.send(command)
        m, idx, _ = self.expect(r"^@@rc (\d+)$", timeout, since, what=f"end of `{command[:60]}`")
        with self.cond:
            out = [l for _, l in self.lines[since:idx]]
        rc = int(m.group(1))
        if check and rc != 0:
            raise CheckFailed(f"`{command[:80]}` exited {rc}: {' | '.join(out[-5:])}")
        return rc, out

    # -- monitor

    def _monitor_read_prompt(self, count):
        """Reads the monitor until `count` prompts have been seen in total."""
        while self.monitor_buf.count(b"(qemu) ") < count:
            data = self.monitor.recv(65536)
            if not data:
                raise InfraError("the QEMU monitor closed")
            self.monitor_buf += data

    def connect_monitor(self):
        deadline = time.monotonic() + 10
        while True:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.monitor_path)
                break
            except OSError:
                s.close()
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise InfraError("cannot connect to the QEMU monitor")
                time.sleep(0.05)
        s.settimeout(10)
        self.monitor, self.monitor_buf, self.prompts = s, b"", 1
        self._monitor_read_prompt(1)

    def screendump(self, head=None):
        """The picture of the display (of one head of the device with id "gpu", when told)."""
        if self.monitor is None:
            self.connect_monitor()
        self.dumps += 1
        path = os.path.join(self.workdir, f"dump{self.dumps}.ppm")
        self.prompts += 1
        which = "" if head is None else f" gpu {head}"
        try:
            self.monitor.sendall(f"screendump {path}{which}\n".encode())
            self._monitor_read_prompt(self.prompts)
        except OSError as e:
            raise InfraError(f"screendump through the monitor failed: {e}")
        with open(path, "rb") as f:
            data = f.read()
        os.unlink(path)
        return Image.from_ppm(data)

    def quit(self):
        self.watchdog.cancel()
        if self.proc.poll() is None:
            try:
                if self.monitor is None:
                    self.connect_monitor()
                self.monitor.sendall(b"quit\n")
                # QEMU sometimes drops the command unless the monitor is read until it closes.
                while self.monitor.recv(65536):
                    pass
            except (OSError, InfraError):
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.monitor:
            self.monitor.close()


# ---------------------------------------------------------------------------- gestures

def stroke(nodes, pattern, lift):
    """touchinject commands for a finger passing through the centres of `pattern`."""
    pts = [nodes[i] for i in pattern]
    cmds = [f"down {pts[0][0]:.1f} {pts[0][1]:.1f}"]
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        n = max(1, int(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5 // STEP_PX))
        for k in range(1, n + 1):
            t = k / n
            cmds.append(f"sleep {STEP_MS}")
            cmds.append(f"move {x0 + t * (x1 - x0):.1f} {y0 + t * (y1 - y0):.1f}")
    if lift:
        cmds += [f"sleep {STEP_MS}", "up"]
    else:
        # The finger moves on a little past the last node, into free space, so the live
        # tail from the last node to the finger shows.
        (ax, ay), (bx, by) = nodes[0], nodes[1]
        reach = 0.45 * ((bx - ax) ** 2 + (by - ay) ** 2) ** 0.5
        x, y = pts[-1]
        for k in range(1, 5):
            cmds += [f"sleep {STEP_MS}", f"move {x - reach * k / 4:.1f} {y:.1f}"]
    return cmds


def bound_name(socket):
    """A pattern for the daemon's socket in /proc/net/unix: the listening socket and each
    accepted one carry the name it was bound to, the path and the daemon's pid, before it
    was renamed into place."""
    return socket + "\\.[0-9]*$"


def background_client(guest, socket, command):
    """Runs `command` (a touchlockctl on `socket`) in the background and returns once the
    daemon's socket has one more connection, so what the test does next is not over
    before the client is there to see it (the guest may be slow on a loaded host)."""
    count = f"$(grep -c '{bound_name(socket)}' /proc/net/unix)"
    # The count is taken once it holds still for 0.3 s: a client that just exited (a status
    # asked before) leaves the daemon's end of its connection listed until the daemon has
    # read the hang-up, and that end going away would hide the new one.
    guest.run(f"n={count}; j=0; while usleep 300000; m={count}; [ $m != $n ] && [ $j -lt 20 ];"
              f" do n=$m; j=$((j+1)); done;"
              f" {command} i=0; while [ {count} -le $n ] && [ $i -lt 200 ];"
              f" do usleep 50000; i=$((i+1)); done; [ {count} -gt $n ]")


def inject(guest, cmds, marker, fd=3):
    """Sends touchinject commands through the guest's fifo (fd 3 unless told), in short
    shell lines, and waits until touchinject has written them all."""
    cmds = cmds + [f"echo {marker}"]
    since = guest.mark()
    chunk = []
    for c in cmds:
        chunk.append(c)
        if sum(len(x) + 3 for x in chunk) > 800:
            guest.run("printf '%s\\n' " + " ".join(f"'{x}'" for x in chunk) + f" >&{fd}")
            chunk = []
    if chunk:
        guest.run("printf '%s\\n' " + " ".join(f"'{x}'" for x in chunk) + f" >&{fd}")
    guest.expect("^" + re.escape(marker) + "$", 30, since, what=f"touchinject marker {marker}")


def sample_points(nodes, pattern):
    """(label, x, y, wanted kinds) for node centres and midpoints of consecutive nodes."""
    chosen = set(pattern)
    pts = []
    for i, (x, y) in enumerate(nodes):
        pts.append((f"node {i}", x, y, "chosen" if i in chosen else "unchosen"))
    for a, b in zip(pattern, pattern[1:]):
        (x0, y0), (x1, y1) = nodes[a], nodes[b]
        pts.append((f"midpoint {a}-{b}", (x0 + x1) / 2, (y0 + y1) / 2, "path"))
    return pts


def verify(image, nodes, pattern, mode):
    """Problems with the image for `mode` (idle, drawing, error); empty if none."""
    want = {
        "idle": {"chosen": {"normal"}, "unchosen": {"normal"}, "path": {"background"}},
        "drawing": {"chosen": {"selected"}, "unchosen": {"normal"},
                    "path": {"selected-path", "selected"}},
        # During the error hold the nodes not chosen are drawn disabled.
        "error": {"chosen": {"error"}, "unchosen": {"disabled"}, "path": {"error-path", "error"}},
    }[mode]
    problems = []
    for label, x, y, kind in sample_points(nodes, pattern):
        got, rgb = image.classify(x, y)
        if got not in want[kind]:
            problems.append(f"{label} at ({x:.0f},{y:.0f}) is {got} rgb{rgb}, want {'/'.join(sorted(want[kind]))}")
    return problems


def differing(a, b, rect):
    """How many pixels of rect (x, y, w, h) differ by more than 40 in a channel between two
    screendumps of the same size."""
    x0, y0, w, h = rect
    count = 0
    for y in range(y0, min(y0 + h, a.height)):
        i, j = (y * a.width + x0) * 3, (y * a.width + min(x0 + w, a.width)) * 3
        ra, rb = a.rgb[i:j], b.rgb[i:j]
        if ra == rb:
            continue
        count += sum(1 for k in range(0, len(ra), 3)
                     if max(abs(ra[k] - rb[k]), abs(ra[k + 1] - rb[k + 1]), abs(ra[k + 2] - rb[k + 2])) > 40)
    return count


def poll_screen(guest, nodes, pattern, mode, timeout, head=None):
    """Screendumps until the picture is right for `mode`; returns the image."""
    deadline = time.monotonic() + timeout
    while True:
        img = guest.screendump(head)
        problems = verify(img, nodes, pattern, mode)
        if not problems:
            return img
        if time.monotonic() > deadline:
            raise CheckFailed(f"{mode} screen wrong after {timeout} s: " + "; ".join(problems))
        time.sleep(0.05)


# ---------------------------------------------------------------------------- runs

class Run:
    def __init__(self, args, log):
        self.args, self.log = args, log
        self.results = {}          # check name -> None (passed) or message
        self.times = {}

    def expect_checks(self, names):
        for n in names:
            self.results[n] = "not reached"

    def record(self, name, fn):
        try:
            fn()
            self.results[name] = None
            print(f"vm-e2e: {name}: ok", flush=True)
        except CheckFailed as e:
            self.results[name] = str(e)
            print(f"vm-e2e: {name}: FAILED: {e}", flush=True)

    def boot(self, guest):
        guest.start()
        _, _, t = guest.expect(r"^@@ready", self.args.boot_timeout, what="the guest's /init")
        self.times["boot"] = t
        errors = [l for _, l in guest.lines if l.startswith("@@error")]
        if errors:
            raise InfraError("guest set-up failed: " + "; ".join(errors))

    def start_injector(self, guest):
        guest.run("mkfifo /tmp/inject && exec 3<>/tmp/inject")
        since = guest.mark()
        guest.run("touchinject </tmp/inject >/dev/console 2>&1 &")
        m, _, _ = guest.expect(r"^device (/dev/input/event\d+)$", 10, since, what="the uinput device")
        return m.group(1)

    SMOKE_CHECKS = ["card0 is bochs", "uinput touchscreen", "screendump"]
    E2E_CHECKS = ["idle screen", "(c) wrong pattern shows the error and stays locked",
                  "(b) the path shows over the chosen nodes while drawing", "(a) the right pattern unlocks",
                  "(d) the code pad unlocks through the on-screen keypad"]
    PREVIEW_CHECK = "the idle screen matches touchlockctl preview of the same size and density"

    def smoke(self, guest, out):
        driver = guest.arch["driver"]
        names = [f"card0 is {driver}" if n == "card0 is bochs" else n for n in self.SMOKE_CHECKS]
        self.expect_checks(names)
        self.boot(guest)

        def card():
            guest.run("test -c /dev/dri/card0 && ! test -e /dev/dri/card1")
            guest.run(f"grep -q {driver} /sys/class/drm/card0/device/driver/module/drivers/* 2>/dev/null"
                      f" || test -d /sys/module/{driver}")

        def uinput():
            node = self.start_injector(guest)
            guest.run(f"exec 4<{node}")
            since = guest.mark()
            guest.run("echo 'wait-open 1' >&3")
            guest.expect(r"^opened " + re.escape(node), 15, since, what="wait-open")
            inject(guest, ["size 1280 800"] + stroke([(100, 100), (300, 300)], [0, 1], True), "@@smoke-stroke")

        def screendump():
            img = guest.screendump()
            if (img.width, img.height) != (1280, 800):
                raise CheckFailed(f"screendump is {img.width}x{img.height}, want 1280x800 ({driver}'s preferred mode)")
            with open(os.path.join(out, "smoke.png"), "wb") as f:
                f.write(img.png())

        for name, fn in zip(names, (card, uinput, screendump)):
            self.record(name, fn)

    def e2e(self, guest, out, pattern_hash, code_hash):
        self.expect_checks(self.E2E_CHECKS)
        self.boot(guest)
        node = self.start_injector(guest)
        conf = ["pattern_hash = " + pattern_hash, f"error_hold_ms = {ERROR_HOLD_MS}", "socket = " + SOCKET]
        guest.run("mkdir -p /run/touchlock && printf '%s\\n' " + " ".join(f"'{c}'" for c in conf)
                  + " >/tmp/touchlock.conf")
        since = guest.mark()
        t_start = guest.elapsed()
        guest.run("touchlockd -C /tmp/touchlock.conf --display drm --input evdev </dev/null"
                  " >/dev/console 2>&1 & DPID=$!; echo \"wait-open $DPID\" >&3")
        _, _, t_frame = guest.expect(r"first frame shown", 30, since, what="the daemon's first frame")
        self.times["first_frame"] = t_frame
        self.times["daemon_to_first_frame"] = t_frame - t_start
        guest.expect(r"^opened " + re.escape(node), 15, since, what="the daemon opening the touchscreen")
        guest.run(f"i=0; while [ ! -S {SOCKET} ] && [ $i -lt 200 ]; do usleep 50000; i=$((i+1)); done;"
                  f" test -S {SOCKET}")
        self.times["socket_ready"] = guest.elapsed()
        # The density the daemon chose ("N dpi: sizes scaled by S", S = dpi / 160).
        m, _, _ = guest.expect(r"\d+ dpi: sizes scaled by ([0-9.]+)", 5, since, what="the daemon's density line")
        dpi = float(m.group(1)) * 160

        _, lines = guest.run(f"touchlockctl --socket {SOCKET} status --json </dev/null")
        status = None
        for l in lines:
            try:
                obj = json.loads(l)
            except ValueError:
                continue
            if isinstance(obj, dict) and "pattern" in obj:
                status = obj
        if status is None:
            raise CheckFailed("no status JSON from touchlockctl status: " + " | ".join(lines))
        w, h = status["screen"]["width"], status["screen"]["height"]
        nodes = [tuple(p) for p in status["pattern"]["nodes"]]
        if len(nodes) != 9:
            raise CheckFailed(f"status lists {len(nodes)} nodes, want 9")
        print(f"vm-e2e: screen {w}x{h}, node radius {status['pattern'].get('node_radius')}", flush=True)
        guest.run(f"echo 'size {w} {h}' >&3")
        events_since = guest.mark()
        background_client(guest, SOCKET, f"touchlockctl --socket {SOCKET} subscribe </dev/null >/dev/console 2>&1 &")

        idle_image = {}

        def idle():
            img = poll_screen(guest, nodes, RIGHT, "idle", 10)
            save(out, "idle.png", img)
            idle_image["img"] = img

        def preview():
            """The idle screendump against `touchlockctl preview` of the same screen, size and
            density (the picture to expect), and of the code pad (a picture it must not be
            taken for: a check that the comparison can tell), counted as (o) counts."""
            img = idle_image.get("img")
            if img is None:
                raise CheckFailed("not reached: no idle screendump")
            diffs = {}
            for screen in ("pattern", "code"):
                path = os.path.join(out, f"preview-{screen}.png")
                r = subprocess.run([self.args.ctl, "preview", "--screen", screen, "--state", "idle",
                                    "--size", f"{w}x{h}", "--dpi", f"{dpi:.4f}", "--out", path],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    raise CheckFailed(f"touchlockctl preview --screen {screen}: {r.stderr.strip()}")
                with open(path, "rb") as f:
                    want = Image.from_png(f.read())
                if (want.width, want.height) != (img.width, img.height):
                    raise CheckFailed(f"preview is {want.width}x{want.height}, the screendump {img.width}x{img.height}")
                diffs[screen] = differing(img, want, (0, 0, w, h))
            print(f"vm-e2e: idle screendump vs preview at {dpi:.1f} dpi: {diffs['pattern']} pixels differ"
                  f" from the pattern screen's, {diffs['code']} from the code pad's (of {w * h})", flush=True)
            if diffs["pattern"] > w * h // 500 or diffs["code"] < 20 * max(diffs["pattern"], 50):
                raise CheckFailed(f"the lock screen does not match its preview: {diffs}")

        def error():
            # Skip events printed before this stroke.
            since = guest.mark()
            inject(guest, stroke(nodes, WRONG, lift=True), "@@wrong-stroke")
            img = poll_screen(guest, nodes, WRONG, "error", ERROR_HOLD_MS / 1000 * 0.8)
            save(out, "error.png", img)
            guest.expect(r'"event"\s*:\s*"failed"', 15, since, what="the failed event")
            _, lines = guest.run(f"touchlockctl --socket {SOCKET} status --json </dev/null")
            st = [json.loads(l) for l in lines if l.startswith("{") and '"state"' in l]
            if not st:
                raise CheckFailed("no status after the wrong pattern: " + " | ".join(lines))
            if st[-1].get("state") == "unlocked":
                raise CheckFailed("a wrong pattern unlocked: " + json.dumps(st[-1]))
            # The error colour goes away after error_hold_ms.
            poll_screen(guest, nodes, WRONG, "idle", ERROR_HOLD_MS / 1000 + 10)

        drawing_done = {}

        def drawing():
            background_client(guest, SOCKET, f"(touchlockctl --socket {SOCKET} wait-unlock; echo \"@@wait-unlock $?\")"
                              " </dev/null >/dev/console 2>&1 &")
            drawing_done["since"] = guest.mark()
            drawing_done["started"] = True
            inject(guest, stroke(nodes, RIGHT, lift=False), "@@right-stroke")
            img = poll_screen(guest, nodes, RIGHT, "drawing", 10)
            save(out, "drawing.png", img)

        def unlock():
            if not drawing_done.get("started"):
                raise CheckFailed("not reached")
            since = drawing_done["since"]
            inject(guest, [f"sleep {STEP_MS}", "up"], "@@right-up")
            guest.expect(r'"event"\s*:\s*"unlocked"', 20, since, what="the unlocked event")
            m, _, _ = guest.expect(r"^@@wait-unlock (\d+)$", 20, since, what="wait-unlock to exit")
            if m.group(1) != "0":
                raise CheckFailed(f"touchlockctl wait-unlock exited {m.group(1)}")

        def code():
            # A second daemon, on the code pad, with the same touchscreen.
            guest.run("kill $(pidof touchlockd) 2>/dev/null; i=0; while pidof touchlockd >/dev/null && [ $i -lt 100 ];"
                      " do usleep 50000; i=$((i+1)); done; ! pidof touchlockd >/dev/null")
            conf = ["code_hash = " + code_hash, "unlock_method = code", f"code_length = {len(CODE)}",
                    f"error_hold_ms = {ERROR_HOLD_MS}", "socket = " + SOCKET_CODE]
            guest.run("printf '%s\\n' " + " ".join(f"'{c}'" for c in conf) + " >/tmp/code.conf")
            since = guest.mark()
            guest.run("touchlockd -C /tmp/code.conf --display drm --input evdev </dev/null"
                      " >/dev/console 2>&1 & DPID=$!; echo \"wait-open $DPID\" >&3")
            guest.expect(r"first frame shown", 30, since, what="the code daemon's first frame")
            guest.expect(r"^opened " + re.escape(node), 15, since, what="the code daemon opening the touchscreen")
            guest.run(f"i=0; while [ ! -S {SOCKET_CODE} ] && [ $i -lt 200 ]; do usleep 50000; i=$((i+1)); done;"
                      f" test -S {SOCKET_CODE}")
            # Every event line goes to a file, read back at the end.
            guest.run(f"touchlockctl --socket {SOCKET_CODE} subscribe </dev/null >/tmp/code-events 2>&1 &")
            # Wait until the daemon has accepted it (see bound_name), so no progress event
            # is missed.
            bound = bound_name(SOCKET_CODE)
            guest.run(f"i=0; while [ $(grep -c '{bound}' /proc/net/unix) -lt 2 ] && [ $i -lt 200 ];"
                      f" do usleep 50000; i=$((i+1)); done; [ $(grep -c '{bound}' /proc/net/unix) -ge 2 ]")
            _, lines = guest.run(f"touchlockctl --socket {SOCKET_CODE} status --json </dev/null")
            st = [json.loads(l) for l in lines if l.startswith("{") and '"code"' in l]
            if not st:
                raise CheckFailed("no code pad in the status: " + " | ".join(lines))
            pad = st[-1]["code"]
            keys, boxes = pad["keys"], pad["boxes"]
            if len(boxes) != len(CODE) or sorted(keys) != sorted([str(d) for d in range(10)] + ["delete", "ok"]):
                raise CheckFailed(f"status code pad: {len(boxes)} boxes, keys {sorted(keys)}")
            since = guest.mark()
            background_client(guest, SOCKET_CODE, f"(touchlockctl --socket {SOCKET_CODE} wait-unlock;"
                              " echo \"@@code-wait-unlock $?\") </dev/null >/dev/console 2>&1 &")

            def tap(d):
                x, y = keys[str(d)]
                return [f"down {x:.1f} {y:.1f}", "sleep 40", "up", "sleep 80"]

            def underline(i):
                x, y, w, h = boxes[i]
                return x + w / 2, y + h - 1.5

            inject(guest, tap(CODE[0]) + tap(CODE[1]), "@@code-two")
            want = ["underline-filled", "underline-filled", "selected"] + ["underline"] * (len(CODE) - 3)
            deadline = time.monotonic() + 10
            while True:
                img = guest.screendump()
                got = [img.classify(*underline(i)) for i in range(len(CODE))]
                if [g for g, _ in got] == want:
                    break
                if time.monotonic() > deadline:
                    raise CheckFailed("underlines after two digits: " + ", ".join(f"{g} rgb{c}" for g, c in got)
                                      + f"; want {', '.join(want)}")
                time.sleep(0.05)
            save(out, "code.png", img)
            inject(guest, [c for d in CODE[2:] for c in tap(d)], "@@code-rest")
            guest.expect(r'"event"\s*:\s*"unlocked"', 20, since, what="the unlocked event")
            m, _, _ = guest.expect(r"^@@code-wait-unlock (\d+)$", 20, since, what="wait-unlock to exit")
            if m.group(1) != "0":
                raise CheckFailed(f"touchlockctl wait-unlock exited {m.group(1)}")
            _, events = guest.run("cat /tmp/code-events")
            progress = [l for l in events if '"progress"' in l]
            want = [f'{{"entered":{k},"event":"progress","total":{len(CODE)}}}' for k in range(1, len(CODE) + 1)]
            if progress[:len(CODE)] != want:
                raise CheckFailed("progress events: " + " | ".join(events))

        checks = [(self.E2E_CHECKS[0], idle)]
        if getattr(self.args, "preview", False):
            self.expect_checks([self.PREVIEW_CHECK])
            checks.append((self.PREVIEW_CHECK, preview))
        checks += zip(self.E2E_CHECKS[1:], (error, drawing, unlock, code))
        for name, fn in checks:
            self.record(name, fn)
        if not getattr(self.args, "basic", False):
            self.panel_checks(guest, out, nodes, w, h)

    # Real panels: uinput clones of recorded descriptions, hotplug, SYN_DROPPED.
    CLONES = [("(e) a protocol-A panel (N-Trig) plugged in after start unlocks", "ntrig-dell-xt2-protocol-a.desc"),
              ("(f) a single-touch panel (Elo, BTN_LEFT) plugged in after start unlocks",
               "elo-2700-intellitouch-singletouch.desc"),
              ("(g) a 10-finger panel (3M, 60 slots) plugged in after start unlocks", "3m-microtouch-0596-0502-22in.desc")]
    PANEL_CHECKS = [name for name, _ in CLONES] + [
        "(h) unplugging and re-plugging the panel mid gesture leaves no touch stuck",
        "(i) a SYN_DROPPED flood leaves the daemon working and no touch stuck",
        "(j) the code pad unlocks through a uinput keyboard"]
    # Enrollment, lockout, hand-over: a daemon with no secret in its config.
    LOCKOUT_CHECKS = [
        "(k) a pattern enrolled through touchlockctl on standard input",
        "(l) five wrong patterns lock out: event, status, countdown on screen, touches ignored",
        "(m) after the lockout the pattern unlocks, the display is handed over, lock takes it back",
        "(n) touchlockd --once exits 0 at the first unlock"]
    ROTATION_CHECKS = [
        "(o) rotation = 90: the screen laid out portrait and turned on the panel, matching the preview;"
        " a pattern drawn on the upright screen unlocks"]

    STUCK_CHECKS = [
        "(p) a contact resting still gives way after 4 s: a finger beside it draws the right pattern, which unlocks"]

    def panel_checks(self, guest, out_dir, nodes, w, h):
        self.expect_checks(self.PANEL_CHECKS + self.LOCKOUT_CHECKS + self.ROTATION_CHECKS + self.STUCK_CHECKS)
        counter = {"n": 0}
        once_exits = []     # (marker, exit status) of each --once daemon after its unlock

        def new_daemon():
            """Stops the injector and the daemon running, starts a daemon that exits at the
            first unlock, and waits for its first frame."""
            guest.run("exec 3>&-; kill $DPID 2>/dev/null; wait $DPID 2>/dev/null; true")
            since = guest.mark()
            guest.run("touchlockd -C /tmp/touchlock.conf --display drm --input evdev --once </dev/null"
                      " >/dev/console 2>&1 & DPID=$!")
            guest.expect(r"first frame shown", 30, since, what="the daemon's first frame")

        def plug(desc, keyboard=False):
            """Starts an injector (a clone of `desc`, the test panel, or a keypad) and waits
            until the daemon has adopted it."""
            counter["n"] += 1
            fifo = f"/tmp/inject{counter['n']}"
            since = guest.mark()
            arg = f" --desc /usr/share/touchlock-test/{desc}" if desc else (" --keyboard" if keyboard else "")
            guest.run(f"mkfifo {fifo} && exec 3<>{fifo}")
            # Without fd 3 the injector sees the end of its input when the next one starts.
            guest.run(f"touchinject{arg} <{fifo} 3>&- >/dev/console 2>&1 &")
            m, _, _ = guest.expect(r"^device (/dev/input/event\d+)$", 10, since, what="the uinput device")
            adopt(m.group(1), since)

        def adopt(node, since):
            guest.run("echo \"wait-open $DPID\" >&3")
            guest.expect(r"^opened " + re.escape(node), 15, since, what=f"the daemon adopting {node}")
            guest.run(f"echo 'size {w} {h}' >&3")

        def unlock_with(cmds, marker, socket=SOCKET):
            since = guest.mark()
            background_client(guest, socket, f"(touchlockctl --socket {socket} wait-unlock --timeout 20;"
                              " echo \"@@wait-unlock $?\") </dev/null >/dev/console 2>&1 &")
            inject(guest, cmds, marker)
            m, _, _ = guest.expect(r"^@@wait-unlock (\d+)$", 25, since, what="wait-unlock to exit")
            if m.group(1) != "0":
                raise CheckFailed(f"no unlock: touchlockctl wait-unlock exited {m.group(1)}")
            # The daemon runs with --once: it exits 0 at this first unlock (killed after 5 s).
            _, lines = guest.run("(sleep 5; kill -9 $DPID) 2>/dev/null & KPID=$!; wait $DPID; R=$?;"
                                 " kill $KPID 2>/dev/null; echo \"@@once $R\"")
            status = next((l.split()[1] for l in lines if l.startswith("@@once ")), "?")
            once_exits.append((marker, status))
            if status != "0":
                raise CheckFailed(f"touchlockd --once exited {status} after the unlock (137: still running after 5 s)")

        def clone(desc):
            def check():
                new_daemon()
                plug(desc)
                unlock_with(stroke(nodes, RIGHT, lift=True), f"@@clone-{desc}")
            return check

        def replug():
            new_daemon()
            plug(None)
            # Half a pattern, then the panel goes away with the finger down, and comes back.
            half = stroke(nodes, RIGHT[:3], lift=False)[:-8]
            inject(guest, half, "@@half-stroke")
            since = guest.mark()
            inject(guest, ["unplug", "sleep 200", "replug"], "@@replugged")
            m, _, _ = guest.expect(r"^device (/dev/input/event\d+)$", 10, since, what="the re-plugged device")
            adopt(m.group(1), since)
            # The finger on the unplugged panel has ended: no node stays selected.
            poll_screen(guest, nodes, RIGHT[:3], "idle", 5)
            unlock_with(stroke(nodes, RIGHT, lift=True), "@@after-replug")

        def flood():
            new_daemon()
            plug(None)
            x, y = nodes[4]
            inject(guest, [f"down {x:.1f} {y:.1f}"], "@@down")
            poll_screen(guest, nodes, [4], "drawing", 5)
            # The daemon stops reading; the finger lifts amid more events than the evdev
            # buffer holds, so the lift is lost and only libevdev's sync can tell.
            since = guest.mark()
            guest.run("kill -STOP $DPID")
            inject(guest, ["flood 3000", "up", "flood 3000"], "@@flooded")
            guest.run("kill -CONT $DPID")
            guest.expect(r"SYN_DROPPED", 10, since, what="the daemon noticing SYN_DROPPED")
            # The lifted finger has ended: node 4 is no longer selected.
            poll_screen(guest, nodes, [4], "idle", 5)
            unlock_with(stroke(nodes, RIGHT, lift=True), "@@after-flood")

        def keyboard():
            # The code pad daemon of check (d), typed on with a keypad: a wrong digit and
            # backspace first, then the code; the N-th digit submits it.
            guest.run("exec 3>&-; kill $DPID 2>/dev/null; wait $DPID 2>/dev/null; true")
            since = guest.mark()
            guest.run("touchlockd -C /tmp/code.conf --display drm --input evdev --once </dev/null"
                      " >/dev/console 2>&1 & DPID=$!")
            guest.expect(r"first frame shown", 30, since, what="the code daemon's first frame")
            plug(None, keyboard=True)
            wrong = (CODE[0] + 1) % 10
            keys = [wrong, "backspace"] + list(CODE)
            codes = [14 if k == "backspace" else (11 if k == 0 else k + 1) for k in keys]
            unlock_with([c for k in codes for c in (f"key {k}", "sleep 60")], "@@typed", socket=SOCKET_CODE)

        for (name, desc) in self.CLONES:
            self.record(name, clone(desc))
        self.record(self.PANEL_CHECKS[3], replug)
        self.record(self.PANEL_CHECKS[4], flood)
        self.record(self.PANEL_CHECKS[5], keyboard)

        # ------------------------------------------------ enrollment and lockout
        ctl = f"touchlockctl --socket {SOCKET_ENROLL}"
        # The prompt's band (ScreenLayout): above the grid in portrait, in the column left
        # of it in landscape; half a cell clear of the nodes' halos.
        margin = 0.5 * abs(nodes[1][0] - nodes[0][0])
        if w > h:
            band = (0, 0, max(int(min(x for x, _ in nodes) - margin), 1), h)
        else:
            band = (0, 0, w, max(int(min(y for _, y in nodes) - margin), 1))
        shots = {}

        def status():
            _, lines = guest.run(f"{ctl} status --json </dev/null")
            st = [json.loads(l) for l in lines if l.startswith("{") and '"state"' in l]
            if not st:
                raise CheckFailed("no status: " + " | ".join(lines))
            return st[-1]

        def enroll():
            guest.run("exec 3>&-; kill $DPID 2>/dev/null; wait $DPID 2>/dev/null; true")
            conf = ["socket = " + SOCKET_ENROLL, "state_file = /tmp/enroll/state",
                    f"lockout_schedule = {LOCKOUT_SCHEDULE}", f"error_hold_ms = {LOCKOUT_HOLD_MS}"]
            guest.run("rm -f /tmp/enroll/state; printf '%s\\n' " + " ".join(f"'{c}'" for c in conf)
                      + " >/tmp/enroll.conf")
            since = guest.mark()
            guest.run("touchlockd -C /tmp/enroll.conf --display drm --input evdev </dev/null"
                      " >/dev/console 2>&1 & DPID=$!")
            guest.expect(r"first frame shown", 30, since, what="the daemon's first frame")
            guest.expect(r"no pattern enrolled", 1, since, what="the daemon's warning that no pattern is enrolled")
            plug(None)
            guest.run(f"i=0; while [ ! -S {SOCKET_ENROLL} ] && [ $i -lt 200 ]; do usleep 50000; i=$((i+1)); done;"
                      f" test -S {SOCKET_ENROLL}")
            _, before = guest.run(f"{ctl} enroll --status </dev/null")
            if "pattern: not enrolled" not in before:
                raise CheckFailed("before enrolling, enroll --status says: " + " | ".join(before))
            secret = "-".join(str(i) for i in RIGHT)
            _, out = guest.run(f"printf '%s\\n%s\\n' {secret} {secret} | {ctl} enroll pattern")
            if "pattern enrolled" not in out:
                raise CheckFailed("touchlockctl enroll pattern says: " + " | ".join(out))
            _, after = guest.run(f"{ctl} enroll --status </dev/null")
            if "pattern: enrolled" not in after:
                raise CheckFailed("after enrolling, enroll --status says: " + " | ".join(after))
            # Only the hash is stored.
            guest.run(f"grep -q '[$]y[$]' /tmp/enroll/state && ! grep -q '{secret}' /tmp/enroll/state")
            if status().get("enrolled") != ["pattern"]:
                raise CheckFailed("status does not list the enrolled pattern")
            shots["idle"] = poll_screen(guest, nodes, RIGHT, "idle", 5)
            background_client(guest, SOCKET_ENROLL, f"{ctl} subscribe </dev/null >/dev/console 2>&1 &")

        def lockout():
            if "idle" not in shots:
                raise CheckFailed("not reached: nothing enrolled")
            for k, wrong in enumerate(LOCKOUT_WRONG, 1):
                since = guest.mark()
                inject(guest, stroke(nodes, wrong, lift=True), f"@@lockout-wrong-{k}")
                m, _, _ = guest.expect(r'^\{.*"event"\s*:\s*"failed".*\}$', 10, since, what=f"failed event {k}")
                if json.loads(m.group(0)).get("failures") != k:
                    raise CheckFailed(f"failed event {k}: {m.string}")
                if k < len(LOCKOUT_WRONG):
                    # The error hold passes; the next attempt is taken.
                    deadline = time.monotonic() + 5
                    while status()["state"] != "locked":
                        if time.monotonic() > deadline:
                            raise CheckFailed(f"still not locked again after failure {k}")
                        time.sleep(0.1)
            guest.expect(r'"event"\s*:\s*"lockout"', 10, since, what="the lockout event")
            st = status()
            if st["state"] != "lockout" or st.get("failures") != 5 or not st.get("retry_after_ms"):
                raise CheckFailed("status after five failures: " + json.dumps(st))
            # The countdown takes the prompt's place; the chosen nodes are not selected.
            deadline = time.monotonic() + 5
            while True:
                img = guest.screendump()
                changed = differing(img, shots["idle"], band)
                chosen = [i for i in LOCKOUT_WRONG[-1] if img.classify(*nodes[i])[0] == "selected"]
                if changed > 200 and not chosen:
                    break
                if time.monotonic() > deadline:
                    raise CheckFailed(f"lockout screen: {changed} pixels of the prompt band differ from idle,"
                                      f" selected nodes {chosen}")
                time.sleep(0.1)
            save(out_dir, "lockout.png", img)
            time.sleep(1.1)
            ticked = differing(guest.screendump(), img, band)
            if ticked == 0:
                raise CheckFailed("the countdown did not change in 1.1 s")
            # Touches do nothing: a (new) wrong pattern, finger held, then lifted.
            if status().get("retry_after_ms", 0) < 2500:
                raise CheckFailed("the lockout is too short to check touches during it")
            since = guest.mark()
            inject(guest, stroke(nodes, LOCKOUT_TOUCHED, lift=False), "@@lockout-touch")
            img = guest.screendump()
            chosen = [i for i in range(len(nodes)) if img.classify(*nodes[i])[0] == "selected"]
            if chosen:
                raise CheckFailed(f"nodes {chosen} selected by a stroke during the lockout")
            inject(guest, [f"sleep {STEP_MS}", "up", "sleep 300"], "@@lockout-lift")
            st = status()
            events = [l for _, l in guest.lines[since:] if '"event"' in l]
            if events or st["state"] != "lockout" or st.get("failures") != 5:
                raise CheckFailed("a stroke during the lockout: " + " | ".join(events) + " " + json.dumps(st))
            shots["lockout"] = True

        def handover():
            if "lockout" not in shots:
                raise CheckFailed("not reached: no lockout")
            st = status()
            deadline = time.monotonic() + st.get("retry_after_ms", 0) / 1000 + 5
            while st["state"] != "locked":
                if time.monotonic() > deadline:
                    raise CheckFailed("the lockout did not end: " + json.dumps(st))
                time.sleep(min(max(st.get("retry_after_ms", 0) / 1000, 0.1), 1))
                st = status()
            since = guest.mark()
            inject(guest, stroke(nodes, RIGHT, lift=True), "@@after-lockout")
            guest.expect(r'"event"\s*:\s*"unlocked"', 10, since, what="the unlocked event")
            guest.expect(r"DRM master dropped", 10, since, what="the daemon dropping DRM master")
            # Nothing of the pattern is left on the display handed over.
            img = guest.screendump()
            left = [(label, img.classify(x, y)) for label, x, y, _ in sample_points(nodes, RIGHT)
                    if img.classify(x, y)[0] != "background"]
            if left:
                raise CheckFailed("after the unlock: " + ", ".join(f"{l} is {c} rgb{p}" for l, (c, p) in left))
            save(out_dir, "handed-over.png", img)
            since = guest.mark()
            guest.run(f"{ctl} lock </dev/null")
            guest.expect(r'"event"\s*:\s*"locked"', 10, since, what="the locked event")
            guest.expect(r"DRM master taken back", 10, since, what="the daemon taking DRM master back")
            img = poll_screen(guest, nodes, RIGHT, "idle", 5)
            if differing(img, shots["idle"], band) > 50:
                raise CheckFailed("after lock the prompt band is not the idle one")
            if status()["state"] != "locked":
                raise CheckFailed("status after lock is not locked")
            # Page flips work again: the path shows while drawing, and the pattern unlocks.
            since = guest.mark()
            inject(guest, stroke(nodes, RIGHT, lift=False), "@@relocked-stroke")
            poll_screen(guest, nodes, RIGHT, "drawing", 5)
            inject(guest, [f"sleep {STEP_MS}", "up"], "@@relocked-up")
            guest.expect(r'"event"\s*:\s*"unlocked"', 10, since, what="the unlocked event after lock")

        def once():
            if not once_exits:
                raise CheckFailed("no --once daemon was unlocked")
            bad = [f"{m}: {s}" for m, s in once_exits if s != "0"]
            if bad:
                raise CheckFailed("exit status after the unlock: " + ", ".join(bad))

        for name, fn in zip(self.LOCKOUT_CHECKS, (enroll, lockout, handover, once)):
            self.record(name, fn)

        # ------------------------------------------------ rotation
        def rotated():
            """The panel (w x h, landscape) turned a quarter: the picture turned clockwise
            on it. Logical (x, y) is shown at panel (w - y, x)."""
            guest.run("exec 3>&-; kill $DPID 2>/dev/null; wait $DPID 2>/dev/null; true")
            guest.run("cp /tmp/touchlock.conf /tmp/rotated.conf && printf '[display]\\nrotation = 90\\n' >>/tmp/rotated.conf")
            since = guest.mark()
            guest.run("touchlockd -C /tmp/rotated.conf --display drm --input evdev --once </dev/null"
                      " >/dev/console 2>&1 & DPID=$!")
            m, _, _ = guest.expect(r"drm: .* (\d+)x(\d+)@\d+Hz on CRTC \d+, (\d+)x(\d+) mm, rotation 90 \(\[display\] rotation\)",
                                   30, since, what="the daemon's display line with rotation 90")
            dpi = int(m.group(1)) * 25.4 / int(m.group(3))
            guest.expect(r"first frame shown", 30, since, what="the rotated daemon's first frame")
            _, lines = guest.run(f"touchlockctl --socket {SOCKET} status --json </dev/null")
            st = next((json.loads(l) for l in lines if l.startswith("{") and '"screen"' in l), None)
            if st is None:
                raise CheckFailed("no status from the rotated daemon: " + " | ".join(lines))
            lw, lh = st["screen"]["width"], st["screen"]["height"]
            if (lw, lh) != (h, w):
                raise CheckFailed(f"status says the screen is {lw}x{lh}, want the turned {h}x{w}")
            logical = [tuple(p) for p in st["pattern"]["nodes"]]
            on_panel = [(w - y, x) for x, y in logical]
            img = guest.screendump()
            save(out_dir, "rotated.png", img)
            if (img.width, img.height) != (w, h):
                raise CheckFailed(f"screendump is {img.width}x{img.height}, want the panel's {w}x{h}")
            problems = verify(img, on_panel, [], "idle")
            if problems:
                raise CheckFailed("the nodes are not where a clockwise turn puts them: " + "; ".join(problems))
            # Upright once turned back: the screendump against the preview of the same
            # screen turned 90 (the picture to expect) and turned 270 (the picture upside
            # down, a check that the comparison can tell).
            ctl = self.args.ctl
            diffs = {}
            for turn in (90, 270):
                path = os.path.join(out_dir, f"preview-rotation-{turn}.png")
                r = subprocess.run([ctl, "preview", "--screen", "pattern", "--state", "idle", "--size", f"{w}x{h}",
                                    "--rotation", str(turn), "--dpi", f"{dpi:.4f}", "--out", path],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    raise CheckFailed(f"touchlockctl preview --rotation {turn}: {r.stderr.strip()}")
                with open(path, "rb") as f:
                    diffs[turn] = differing(img, Image.from_png(f.read()), (0, 0, w, h))
            print(f"vm-e2e: rotated screendump vs preview: {diffs[90]} pixels differ turned 90,"
                  f" {diffs[270]} turned 270 (of {w * h})", flush=True)
            if diffs[90] > w * h // 500 or diffs[270] < 20 * max(diffs[90], 50):
                raise CheckFailed(f"the screendump does not match the preview turned 90: {diffs}")
            # The pattern drawn on the upright screen (logical positions), where the finger
            # touches the panel.
            plug(None)
            unlock_with(stroke(on_panel, RIGHT, lift=True), "@@rotated")

        self.record(self.ROTATION_CHECKS[0], rotated)

        # ------------------------------------------------ a contact that never lifts
        def stuck():
            """A contact resting on node 4 (a drop, debris: slot 1, jittering under a pixel)
            holds the panel at first, gives way after 4 s, and a finger beside it (slot 0)
            draws the right pattern, which unlocks; the resting one lifts only after."""
            new_daemon()
            plug(None)
            x, y = nodes[4]
            since = guest.mark()
            inject(guest, [f"down2 {x:.1f} {y:.1f}", "sleep 100", f"move2 {x + 0.6:.1f} {y:.1f}",
                           "sleep 100", f"move2 {x:.1f} {y + 0.6:.1f}"], "@@stuck-down")
            poll_screen(guest, nodes, [4], "drawing", 5)
            guest.expect(r"touch \d+ has not moved for 4 s; ignored until it lifts", 15, since,
                         what="the resting contact giving way")
            # It no longer holds the panel: node 4 is not selected any more.
            poll_screen(guest, nodes, [4], "idle", 5)
            unlock_with(stroke(nodes, RIGHT, lift=True), "@@beside-stuck")
            inject(guest, ["up2"], "@@stuck-up")

        self.record(self.STUCK_CHECKS[0], stuck)


class ClockRun(Run):
    """The clock in a guest of its own (it waits for a minute of the wall clock)."""
    CLOCK_CHECKS = [
        "(q) clock = time: the screen changes at the minute, only outside the grid, and the daemon"
        " is not woken in the 20 s before it (its voluntary context switches stay)"]

    def clock(self, guest, out):
        self.expect_checks(self.CLOCK_CHECKS)
        self.boot(guest)

        def second():
            _, lines = guest.run("date +%S")
            return int(next(l for l in lines if l.strip().isdigit()).strip(), 10)

        def switches():
            _, lines = guest.run("grep '^voluntary_ctxt_switches' /proc/$DPID/status")
            return int(next(l for l in lines if l.startswith("voluntary_ctxt_switches")).split()[1])

        def check():
            guest.run("mkdir -p /run/touchlock && printf '%s\\n' 'socket = " + SOCKET + "' '[screen]' 'clock = time'"
                      " >/tmp/clock.conf")
            # Well inside a minute: 20 s to watch before the next one.
            s = second()
            if not 2 <= s <= 30:
                time.sleep((62 - s) % 60)
            since = guest.mark()
            guest.run("touchlockd -C /tmp/clock.conf --display drm --input evdev </dev/null"
                      " >/dev/console 2>&1 & DPID=$!")
            guest.expect(r"first frame shown", 30, since, what="the daemon's first frame")
            guest.expect(r"clock: time, 24 hours", 5, since, what="the clock's log line")
            time.sleep(1)
            _, lines = guest.run(f"touchlockctl --socket {SOCKET} status --json </dev/null")
            st = next((json.loads(l) for l in lines if l.startswith("{") and '"pattern"' in l), None)
            if st is None:
                raise CheckFailed("no status: " + " | ".join(lines))
            nodes = st["pattern"]["nodes"]
            r = st["pattern"]["node_radius"] * 2
            xs, ys = [n[0] for n in nodes], [n[1] for n in nodes]
            grid = (int(min(xs) - r), int(min(ys) - r), int(max(xs) - min(xs) + 2 * r), int(max(ys) - min(ys) + 2 * r))
            start = second()
            if start > 34:
                raise CheckFailed(f"the daemon started too late in the minute (:{start:02d}) to watch 20 s")
            # The status client's hang-up is the daemon's last wake-up before the watch.
            time.sleep(2)
            a = guest.screendump()
            s0 = switches()
            mark = guest.mark()
            time.sleep(20)
            s1 = switches()
            b = guest.screendump()
            # The kernel tells CANCEL_ON_SET timers when the wall clock is set, also when its
            # timekeeping changes clock source (under emulation it may): such a wake-up is
            # logged by the daemon and is the only one allowed.
            with guest.cond:
                sets = sum(1 for _, l in guest.lines[mark:] if "the wall clock was set" in l)
            same = differing(a, b, (0, 0, a.width, a.height))
            print(f"vm-e2e: clock: {s1 - s0} voluntary context switches in 20 s within a minute"
                  f" ({sets} for the wall clock being set), {same} pixels changed", flush=True)
            if s1 - s0 > sets:
                raise CheckFailed(f"the daemon was woken {s1 - s0} times within a minute ({sets} for the clock being set)")
            if same:
                raise CheckFailed(f"{same} pixels changed within a minute")
            # Past the minute: the time changes, nowhere on the grid.
            time.sleep((61 - second()) % 60 + 1)
            c = guest.screendump()
            s2 = switches()
            save(out, "clock-before.png", b)
            save(out, "clock-after.png", c)
            changed = differing(b, c, (0, 0, b.width, b.height))
            on_grid = differing(b, c, grid)
            print(f"vm-e2e: clock: at the minute {changed} pixels changed ({on_grid} on the grid),"
                  f" {s2 - s1} context switches", flush=True)
            if changed < 50:
                raise CheckFailed(f"the screen did not change at the minute ({changed} pixels)")
            if on_grid:
                raise CheckFailed(f"{on_grid} pixels of the grid changed at the minute")
            if s2 - s1 > 4:
                raise CheckFailed(f"woken {s2 - s1} times for one minute")

        self.record(self.CLOCK_CHECKS[0], check)


def clock_attempt(args, out, number):
    workdir = tempfile.mkdtemp(prefix="touchlock-vm-")
    with open(os.path.join(out, f"console-clock.{number}.log"), "w", buffering=1) as log:
        run = ClockRun(args, log)
        longer = argparse.Namespace(**vars(args))
        longer.timeout = max(args.timeout, 150)
        guest = Guest(longer, workdir, log)
        guest.append += " GUEST_TIMEOUT=150"
        try:
            run.clock(guest, out)
        finally:
            guest.quit()
            shutil.rmtree(workdir, ignore_errors=True)
            run.times["total"] = guest.elapsed()
    return run


def run_in_guest(tag, args, out, pattern_hash, make_run, configure):
    """Runs a second-guest test's checks (run_outputs.py, run_cards.py): `make_run(args,
    log)` makes the Run, `configure(guest)` sets the guest's devices; a hung guest is
    tried once more. Returns the Run's results, or None when the guest hung twice (said
    in a "vm-TAG: 0 passed, 1 failed" line)."""
    for number in (1, 2):
        workdir = tempfile.mkdtemp(prefix=f"touchlock-vm-{tag}-")
        name = f"console-{tag}.log" if number == 1 else f"console-{tag}.2.log"
        with open(os.path.join(out, name), "w", buffering=1) as log:
            run = make_run(args, log)
            guest = Guest(args, workdir, log)
            configure(guest)
            try:
                run.run_checks(guest, out, pattern_hash)
                break
            except CheckFailed as e:
                print(f"vm-{tag}: set-up FAILED: {e}", flush=True)
                for check, problem in run.results.items():
                    if problem == "not reached":
                        run.results[check] = f"not reached: {e}"
                break
            except InfraError as e:
                print(f"vm-{tag}: attempt {number}: {e}", flush=True)
                if number == 2:
                    print(f"vm-{tag}: 0 passed, 1 failed (the guest hung twice)")
                    return None
            finally:
                guest.quit()
                shutil.rmtree(workdir, ignore_errors=True)
    return run.results


def save(out, name, img):
    with open(os.path.join(out, name), "wb") as f:
        f.write(img.png())


def hash_pattern(ctl, pattern):
    text = "-".join(str(i) for i in pattern) + "\n"
    p = subprocess.run([ctl, "hash-pattern", "--grid", "3x3"], input=text, capture_output=True, text=True)
    line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    if p.returncode != 0 or not line.startswith("$y$"):
        sys.exit(f"vm-e2e: `touchlockctl hash-pattern` failed (exit {p.returncode}): {p.stderr.strip() or p.stdout.strip()}")
    return line


def hash_code(ctl, code):
    text = "".join(str(d) for d in code) + "\n"
    p = subprocess.run([ctl, "hash-code"], input=text, capture_output=True, text=True)
    line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    if p.returncode != 0 or not line.startswith("$y$"):
        sys.exit(f"vm-e2e: `touchlockctl hash-code` failed (exit {p.returncode}): {p.stderr.strip() or p.stdout.strip()}")
    return line


def attempt(args, out, number, pattern_hash, code_hash):
    workdir = tempfile.mkdtemp(prefix="touchlock-vm-")
    log_path = os.path.join(out, "console.log" if number == 1 else f"console.{number}.log")
    with open(log_path, "w", buffering=1) as log:
        run = Run(args, log)
        guest = Guest(args, workdir, log)
        if args.timeout > 120:
            # /init's own watchdog (120 s unless told) no sooner than the host's.
            guest.append += f" GUEST_TIMEOUT={int(args.timeout)}"
        try:
            if args.smoke:
                run.smoke(guest, out)
            else:
                run.e2e(guest, out, pattern_hash, code_hash)
        except CheckFailed as e:
            print(f"vm-e2e: set-up FAILED: {e}", flush=True)
            for name, problem in run.results.items():
                if problem == "not reached":
                    run.results[name] = f"not reached: set-up failed: {e}"
                    print(f"vm-e2e: {name}: FAILED (not reached)", flush=True)
        finally:
            guest.quit()
            shutil.rmtree(workdir, ignore_errors=True)
            run.times["total"] = guest.elapsed()
    return run


def main():
    ap = argparse.ArgumentParser(description="touchlock end-to-end test under QEMU")
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--ctl", help="touchlockctl on the host (to hash the test pattern)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".vm", "out"))
    ap.add_argument("--arch", choices=sorted(ARCHES), default="amd64",
                    help="the guest's machine: amd64 (PC, bochs-display) or arm64 (virt, virtio-gpu-pci)")
    ap.add_argument("--qemu", help="the QEMU system emulator (default: the one of --arch)")
    ap.add_argument("--basic", action="store_true",
                    help="the lock screen and (a)-(d) only: no panel checks, no clock guest")
    ap.add_argument("--preview", action="store_true",
                    help="also compare the idle screen with --ctl's preview of it")
    ap.add_argument("--timeout", type=float, default=120, help="seconds before QEMU is killed")
    ap.add_argument("--boot-timeout", type=float, default=30)
    ap.add_argument("--smoke", action="store_true", help="check the VM infrastructure only")
    ap.add_argument("--runs", type=int, default=1, help="repeat the whole run (for timing)")
    ap.add_argument("--clock-only", action="store_true", help="only the clock's check (q), in its own guest")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    pattern_hash = code_hash = None
    if not args.smoke:
        if not args.ctl:
            sys.exit("vm-e2e: --ctl is required (the host touchlockctl hashes the test pattern)")
        pattern_hash = hash_pattern(args.ctl, RIGHT)
        code_hash = hash_code(args.ctl, CODE)

    passed = failed = 0
    totals, frames = [], []
    for r in range(0 if args.clock_only else args.runs):
        for number in (1, 2):
            try:
                run = attempt(args, out, number, pattern_hash, code_hash)
                break
            except InfraError as e:
                print(f"vm-e2e: attempt {number}: {e}", flush=True)
                if number == 2:
                    print("vm-e2e: 0 passed, 1 failed (the guest hung twice)")
                    return 1
        for name, problem in run.results.items():
            if problem is None:
                passed += 1
            else:
                failed += 1
        t = run.times
        totals.append(t["total"])
        if "first_frame" in t:
            frames.append(t["first_frame"])
        print("vm-e2e: timing: " + ", ".join(f"{k} {v:.2f} s" for k, v in t.items()), flush=True)
    if not args.smoke and not args.basic:
        for number in (1, 2):
            try:
                run = clock_attempt(args, out, number)
                break
            except InfraError as e:
                print(f"vm-e2e: clock attempt {number}: {e}", flush=True)
                run = None
        for name, problem in (run.results.items() if run else [("clock", "the guest hung twice")]):
            if problem is None:
                passed += 1
            else:
                failed += 1
    if args.runs > 1:
        def stats(xs):
            xs = sorted(xs)
            return f"min {xs[0]:.2f} s, median {xs[len(xs) // 2]:.2f} s, max {xs[-1]:.2f} s"
        print(f"vm-e2e: whole run over {len(totals)} runs: {stats(totals)}")
        if frames:
            print(f"vm-e2e: QEMU start to first frame over {len(frames)} runs: {stats(frames)}")
    print(f"vm-e2e: screenshots and console log in {out}")
    print(f"vm-e2e: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
