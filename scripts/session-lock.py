#!/usr/bin/env python3
"""touchlockd's session-lock cover against real compositors (run by scripts/session-lock).

Each compositor runs headless (pixman) in the Debian 13 root given, in a mount namespace of
its own, with a runtime directory inside the root that touchlockd (built here) reaches by
its path. swaybg paints the kiosk app's known colour; grim's screenshots and touchlockctl's
status are what is checked, as a user would look at them; wtype types the code on a
virtual keyboard; wlr-randr changes the output's scale and mode while locked. Prints each check with its time, and ends
"session-lock: N passed, M failed".
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import struct
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The binaries checked: the debug build here, or TOUCHLOCK_BUILD_DIR (a release build).
BUILD = os.environ.get("TOUCHLOCK_BUILD_DIR") or os.path.join(ROOT, ".build", "debug")
APP = (0x12, 0xAB, 0x34)  # the kiosk app's colour (swaybg)
CODE = "2580"
# Stops just after a lock (each followed by a takeover and an unlock).
STOP_TRIES = 4

passed = 0
failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
    print(f"session-lock: {'ok  ' if ok else 'FAIL'} {name}{'' if ok else ': ' + detail}", flush=True)


def is_green(r, g, b):
    return g >= 0x10 and g > 2 * r and g > 2 * b


def wait_for(predicate, timeout=10.0, step=0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


class Compositor:
    """A compositor in the root, headless, with its clients run there too."""

    def __init__(self, root, name):
        self.root = root
        self.name = name
        self.runtime_in_root = "/run/touchlock-session-lock"
        self.runtime = root + self.runtime_in_root
        shutil.rmtree(self.runtime, ignore_errors=True)
        os.makedirs(self.runtime, mode=0o700)
        config_dir = root + "/tmp/session-lock-config"
        shutil.rmtree(config_dir, ignore_errors=True)
        os.makedirs(config_dir)
        rgb = "%02x%02x%02x" % APP
        if name == "sway":
            with open(config_dir + "/sway", "w") as f:
                f.write(f"output * bg #{rgb} solid_color\n")
            command = ["sway", "-c", "/tmp/session-lock-config/sway"]
        else:
            with open(config_dir + "/rc.xml", "w") as f:
                f.write("<?xml version=\"1.0\"?>\n<labwc_config></labwc_config>\n")
            command = ["labwc", "-C", "/tmp/session-lock-config", "-s", f"swaybg -c '#{rgb}'"]
        self.process = self.spawn(command, stdout=open(f"{tempfile.gettempdir()}/session-lock-{name}.log", "w"))
        sockets = wait_for(lambda: [s for s in os.listdir(self.runtime) if s.startswith("wayland-") and not s.endswith(".lock")])
        if not sockets:
            raise RuntimeError(f"{name} made no Wayland socket")
        self.display = sockets[0]

        self.socket = os.path.join(self.runtime, self.display)

    def spawn(self, argv, **kw):
        env = ["PATH=/usr/bin:/bin", "HOME=/root", f"XDG_RUNTIME_DIR={self.runtime_in_root}",
               "WLR_BACKENDS=headless", "WLR_RENDERER=pixman", "WLR_LIBINPUT_NO_DEVICES=1"]
        if getattr(self, "display", None):
            env.append(f"WAYLAND_DISPLAY={self.display}")
        script = ('mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" && '
                  'mount -t tmpfs tmpfs "$0/tmp/.X11-unix" 2>/dev/null; '
                  'exec chroot "$0" /usr/bin/env -i "$@"')
        os.makedirs(self.root + "/tmp/.X11-unix", exist_ok=True)
        return subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                                 self.root] + env + argv, stderr=subprocess.STDOUT, **kw)

    def run(self, argv, timeout=10):
        p = self.spawn(argv, stdout=subprocess.PIPE)
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out

    def screenshot(self, output=None):
        """The whole screen (or one output) as (width, height, bytes of RGB)."""
        path = "/tmp/session-lock-shot.ppm"
        rc, out = self.run(["grim", "-t", "ppm"] + (["-o", output] if output else []) + [path])
        if rc != 0:
            raise RuntimeError(f"grim: {out!r}")
        with open(self.root + path, "rb") as f:
            data = f.read()
        parts = data.split(b"\n", 3)
        width, height = map(int, parts[1].split())
        return width, height, parts[3]

    def save(self, path):
        """The screenshot as a PNG, for a look after the run."""
        width, height, pixels = self.screenshot()
        rows = b"".join(b"\0" + pixels[y * width * 3:(y + 1) * width * 3] for y in range(height))

        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                    + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))

    def app_share(self, output=None):
        """How much of the screen shows the app's green, 0 to 1 (labwc shows swaybg's
        colour shaded towards the edges; the lock screen and sway's screen for a dead
        locker have no green pixel)."""
        width, height, pixels = self.screenshot(output)
        n = width * height
        samples = range(0, n * 3, 3 * 7)
        green = sum(1 for i in samples if is_green(pixels[i], pixels[i + 1], pixels[i + 2]))
        return green / len(samples)

    def shot_loop(self):
        """Screenshots of a 64x64 square at the screen's centre, one after the other in the
        root, until `stop()`, which gives (start time in ns, app share) per screenshot."""
        width, height, _ = self.screenshot()
        shots = "/tmp/session-lock-shots"
        shutil.rmtree(self.root + shots, ignore_errors=True)
        os.makedirs(self.root + shots)
        script = (f'i=0; while [ ! -e {shots}/stop ] && [ $i -lt 1000 ]; do t=$(date +%s%N); '
                  f'grim -g "{width // 2 - 32},{height // 2 - 32} 64x64" -t ppm {shots}/$i.ppm && echo "$i $t" >> {shots}/times; '
                  f'i=$((i+1)); done')
        process = self.spawn(["sh", "-c", script], stdout=subprocess.DEVNULL)
        root = self.root
        # Running once its first screenshot is there.
        wait_for(lambda: os.path.exists(root + shots + "/times"), timeout=5, step=0.01)

        class Loop:
            def stop(self):
                open(root + shots + "/stop", "w").close()
                process.wait(10)
                result = []
                with open(root + shots + "/times") as f:
                    for line in f:
                        i, t = line.split()
                        with open(f"{root}{shots}/{i}.ppm", "rb") as p:
                            parts = p.read().split(b"\n", 3)
                        pixels = parts[3]
                        n = len(pixels) // 3
                        green = sum(1 for k in range(0, n * 3, 3) if is_green(pixels[k], pixels[k + 1], pixels[k + 2]))
                        result.append((int(t), green / max(n, 1)))
                return result
        return Loop()

    def dominant(self, output=None):
        width, height, pixels = self.screenshot(output)
        counts = {}
        for i in range(0, width * height * 3, 3 * 13):
            key = pixels[i:i + 3]
            counts[key] = counts.get(key, 0) + 1
        return max(counts, key=counts.get)

    def quadrants(self, output=None):
        """The dominant colour of each quarter of the screen (or of one output)."""
        width, height, pixels = self.screenshot(output)
        found = []
        for qy in (0, 1):
            for qx in (0, 1):
                counts = {}
                for y in range(qy * height // 2, (qy + 1) * height // 2, 7):
                    for x in range(qx * width // 2, (qx + 1) * width // 2, 7):
                        key = pixels[(y * width + x) * 3:(y * width + x) * 3 + 3]
                        counts[key] = counts.get(key, 0) + 1
                found.append(max(counts, key=counts.get))
        return found

    def randr(self, *args):
        """wlr-randr (wlr-output-management, as a display settings tool uses it)."""
        return self.run(["wlr-randr"] + list(args))

    def swaymsg(self, *args):
        ipc = [s for s in os.listdir(self.runtime) if s.startswith("sway-ipc.")]
        return self.run(["swaymsg", "-s", os.path.join(self.runtime_in_root, ipc[0])] + list(args))

    def type_key(self, name):
        return self.run(["wtype", "-k", name])

    def type(self, text):
        # A pause after the virtual keyboard is made: its keymap reaches the compositor
        # and the focused client before the first key.
        return self.run(["wtype", "-s", "150", text])

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Daemon:
    def __init__(self, work):
        self.work = work
        self.socket = os.path.join(work, "touchlock.sock")
        self.log = open(os.path.join(work, "touchlockd.log"), "a")
        self.process = subprocess.Popen(
            [os.path.join(BUILD, "touchlockd"), "--config-root", work, "-C", os.path.join(work, "touchlock.conf"),
             "--socket", self.socket, "--state", os.path.join(work, "state")],
            stdout=self.log, stderr=subprocess.STDOUT, env={"PATH": "/usr/bin:/bin"})

    def ctl(self, *args, timeout=10):
        p = subprocess.run([os.path.join(BUILD, "touchlockctl"), "--socket", self.socket] + list(args),
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout

    def status(self):
        if not os.path.exists(self.socket):
            return None
        rc, out = self.ctl("status", "--json")
        return json.loads(out) if rc == 0 and out.strip() else None

    def wait_status(self, predicate, timeout=10):
        return wait_for(lambda: (lambda s: s if s and predicate(s) else None)(self.status()), timeout)

    def kill(self, sig=signal.SIGKILL):
        self.process.send_signal(sig)
        self.process.wait(10)


def write_config(work, socket, cover="auto", idle_s=0):
    code_hash = subprocess.run([os.path.join(BUILD, "touchlockctl"), "hash-code"], input=CODE + "\n",
                               capture_output=True, text=True).stdout.strip()
    with open(os.path.join(work, "touchlock.conf"), "w") as f:
        f.write(f"""[display]
cover = {cover}
wayland_socket = {socket}
[screen]
unlock_method = code
[code]
hash = {code_hash}
length = {len(CODE)}
[logind]
seat = off
[lock]
idle_s = {idle_s}
""")
    os.chmod(os.path.join(work, "touchlock.conf"), 0o600)


def differing_tiles(a, b):
    """How many 16 px tiles of two screenshots differ (scripts/compare-png, as the golden
    images are compared); None when they cannot be compared."""
    p = subprocess.run([os.path.join(ROOT, "scripts", "compare-png"), a, b], capture_output=True, text=True)
    m = re.search(r"(\d+) tiles of 16 px fail", p.stdout + p.stderr)
    if m:
        return int(m.group(1))
    return 0 if p.returncode == 0 else None


def output_changes(compositor, d, name, ours):
    """While locked, the output's scale and mode changed by a display settings tool
    (wlr-randr): the same touchlockd keeps the lock and lays the lock screen out again for
    the lock surface's new size in pixels, over the whole output; then back as it was."""
    s = d.status()
    first = s["outputs"][0]
    width, height = first["screen"]["width"], first["screen"]["height"]
    pid = d.process.pid
    changes = [
        # An integer scale: the same pixels, the lock surface half as large in its units.
        (["--scale", "2"], lambda w, h: (w, h)),
        # A fractional one: wl_output.scale says 2, the surface is the output's size over
        # 1.5, and fractional-scale-v1 prefers 1.5 for it: buffers of the output's own
        # pixels, shown through a viewport (without the protocol they were 4/3 of them).
        (["--scale", "1.5"], lambda w, h: (w, h)),
        # Another mode at scale 1.
        (["--scale", "1", "--custom-mode", f"{width * 3 // 4}x{height * 3 // 4}"], lambda w, h: (w * 3 // 4, h * 3 // 4)),
    ]
    for args, size in changes:
        what = "wlr-randr " + " ".join(args)
        rc, out = compositor.randr("--output", "HEADLESS-1", *args)
        want = size(width, height)

        def laid_out():
            st = d.status()
            if not st:
                return None
            got = st["outputs"][0]["screen"]
            return st if abs(got["width"] - want[0]) <= 2 and abs(got["height"] - want[1]) <= 2 else None
        st = wait_for(laid_out, timeout=10)
        time.sleep(0.3)
        quarters = compositor.quadrants()
        share = compositor.app_share()
        alive = d.process.poll() is None
        check(f"{name}: {what} while locked: the same touchlockd keeps the lock, laid out again for the output's"
              f" new size, over the whole output",
              rc == 0 and alive and st is not None and all(q == ours for q in quarters) and share < 0.01,
              f"wlr-randr rc {rc} {out!r}; pid {pid} running: {alive}; status screen"
              f" {(d.status() or {}).get('outputs', [{}])[0].get('screen')}, wanted about {want};"
              f" quarters {[q.hex() for q in quarters]}, ours {ours.hex()}; app share {share:.3f}")
        shot = os.path.join(d.work, f"output-{'-'.join(a.strip('-') for a in args)}.png")
        compositor.save(shot)
        if want == (width, height):
            # The same pixels at another scale: the lock screen drawn at the output's own
            # pixels is the picture it was at scale 1 (the cursor and the caret's blink
            # aside, and at 1.5 the compositor's resampling of 1280 pixels into a surface
            # of 853 units, 1279.5 pixels), where one drawn at 2 and scaled down differs
            # in every edge (401 tiles of 3600 at 1.5).
            tiles = differing_tiles(os.path.join(d.work, "locked.png"), shot)
            print(f"session-lock: {name}: {what}: {tiles} tiles of 16 px of 3600 differ from the lock screen at scale 1",
                  flush=True)
            check(f"{name}: {what}: drawn at the output's own pixels, the lock screen as it was at scale 1",
                  tiles is not None and tiles <= 72, f"{tiles} tiles of 16 px of 3600 differ from scale 1's")
    rc, out = compositor.randr("--output", "HEADLESS-1", "--scale", "1", "--custom-mode", f"{width}x{height}")
    back = wait_for(lambda: (d.status() or {}).get("outputs", [{}])[0].get("screen") == {"width": width, "height": height})
    check(f"{name}: the output set back as it was, the lock screen is laid out for it again",
          rc == 0 and bool(back) and compositor.dominant() == ours, f"status {d.status()}")


def run_compositor(root, name):
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix=f"touchlock-session-lock-{name}.")
    compositor = Compositor(root, name)
    daemons = []
    try:
        wait_for(lambda: compositor.app_share() > 0.97, timeout=10)
        compositor.save(os.path.join(work, "before.png"))
        check(f"{name}: the app shows before touchlockd", compositor.app_share() > 0.97, f"app share {compositor.app_share():.3f}")
        # The kiosk's keypad is there before the lock: a seat that gains its first keyboard
        # while locked gives the client the keyboard only after that key.
        compositor.type_key("Shift_L")
        write_config(work, compositor.socket)

        # A first start (no record of an unlock): it locks at once.
        d = Daemon(work)
        daemons.append(d)
        s = d.wait_status(lambda s: s.get("display") == "shown")
        check(f"{name}: auto picks the session lock", s is not None and s.get("cover") == "session-lock",
              f"status {s}")
        wait_for(lambda: compositor.app_share() < 0.01)
        share = compositor.app_share()
        check(f"{name}: locked, the screenshot shows the lock screen, not the app", share < 0.01, f"app share {share:.3f}")
        ours = compositor.dominant()
        compositor.save(os.path.join(work, "locked.png"))

        # The code typed on a virtual keyboard unlocks; the app shows again.
        compositor.type(CODE)
        s = d.wait_status(lambda s: s.get("state") == "unlocked" and s.get("display") == "handed_over")
        check(f"{name}: the code typed with wtype unlocks", s is not None, f"status {d.status()}")
        ok = wait_for(lambda: compositor.app_share() > 0.97)
        compositor.save(os.path.join(work, "unlocked.png"))
        check(f"{name}: unlocked, the app shows again", bool(ok), f"app share {compositor.app_share():.3f}")

        # touchlockctl lock covers it again.
        rc, _ = d.ctl("lock")
        ok = rc == 0 and wait_for(lambda: compositor.app_share() < 0.01)
        check(f"{name}: touchlockctl lock covers the app", bool(ok), f"rc {rc}, app share {compositor.app_share():.3f}")

        # Another locker while we hold the lock: the compositor refuses it, and that
        # daemon's status says so.
        other_work = tempfile.mkdtemp(prefix=f"touchlock-session-lock-{name}-other.")
        write_config(other_work, compositor.socket)
        other = Daemon(other_work)
        s = other.wait_status(lambda s: s.get("display") == "not_shown")
        check(f"{name}: a second locker is refused, and its status says so",
              s is not None and "refused" in (s.get("display_reason") or ""), f"status {other.status()}")
        other.kill(signal.SIGTERM)
        share = compositor.app_share()
        check(f"{name}: the refused locker gone, the screen is still ours", share < 0.01 and compositor.dominant() == ours,
              f"app share {share:.3f}")

        output_changes(compositor, d, name, ours)

        if name == "sway":
            # An output that comes while locked gets the lock screen too.
            compositor.swaymsg("create_output")
            shown = wait_for(lambda: d.status() and len(d.status().get("outputs", [])) == 2
                             and compositor.dominant("HEADLESS-2") == ours)
            share = compositor.app_share("HEADLESS-2")
            check(f"{name}: an output added while locked shows the lock screen, not the app",
                  bool(shown) and share < 0.01, f"outputs {d.status().get('outputs')}, app share {share:.3f}")
            # And one that goes away is dropped, the lock screen left on the others.
            compositor.swaymsg("output", "HEADLESS-2", "unplug")
            gone = wait_for(lambda: d.status() and len(d.status().get("outputs", [])) == 1)
            check(f"{name}: an output unplugged while locked is dropped, the lock screen stays",
                  bool(gone) and compositor.dominant() == ours, f"outputs {d.status().get('outputs')}")

        # kill -9 while locked: the compositor stays locked; a new daemon takes the lock over.
        d.kill()
        time.sleep(0.5)
        share = compositor.app_share()
        check(f"{name}: killed while locked, the compositor still shows no app", share < 0.01, f"app share {share:.3f}")
        compositor.save(os.path.join(work, "killed.png"))
        t_start = time.monotonic()
        d = Daemon(work)
        daemons.append(d)
        s = d.wait_status(lambda s: s.get("display") == "shown")
        taken = wait_for(lambda: compositor.dominant() == ours)
        check(f"{name}: a new touchlockd takes the lock over and shows its screen", s is not None and bool(taken),
              f"status {d.status()}")
        compositor.save(os.path.join(work, "taken-over.png"))
        print(f"session-lock: {name}: takeover in {time.monotonic() - t_start:.2f} s (start to our screen)", flush=True)
        compositor.type(CODE)
        s = d.wait_status(lambda s: s.get("display") == "handed_over")
        ok = s is not None and wait_for(lambda: compositor.app_share() > 0.97)
        check(f"{name}: the new touchlockd unlocks with the code", bool(ok), f"status {d.status()}")

        # A stop while locked (a restart, an upgrade) at the worst moment: just after the
        # lock was granted. labwc covers its outputs by itself only 100 ms after a new lock,
        # and a locker gone before then took its surfaces with it; a stop that comes that
        # early holds the lock until then. Screenshots of the screen's centre in a loop,
        # each begun after the daemon's exit, must show no app; the daemon after it takes
        # the lock over and unlocks, STOP_TRIES times.
        seen = []
        taken_over = 0
        for _ in range(STOP_TRIES):
            shots = compositor.shot_loop()
            rc, _ = d.ctl("lock")
            d.kill(signal.SIGTERM)
            exited = time.time_ns()
            time.sleep(0.4)
            after = [share for t, share in shots.stop() if t >= exited]
            seen.append(sum(1 for share in after if share > 0.5))
            if rc != 0 or not after:
                seen[-1] = f"{seen[-1]} (lock rc {rc}, {len(after)} screenshots)"
            d = Daemon(work)
            daemons.append(d)
            s = d.wait_status(lambda s: s.get("display") == "shown")
            taken = s is not None and wait_for(lambda: compositor.dominant() == ours)
            compositor.type(CODE)
            s = d.wait_status(lambda s: s.get("display") == "handed_over")
            taken_over += bool(taken) and s is not None and bool(wait_for(lambda: compositor.app_share() > 0.97))
        check(f"{name}: stopped just after a lock was granted (a restart), no screenshot after the stop shows the app",
              all(n == 0 for n in seen), f"screenshots showing the app after each of {STOP_TRIES} stops: {seen}")
        print(f"session-lock: {name}: screenshots showing the app after each stop: {seen}", flush=True)
        check(f"{name}: the daemon after each restart takes the lock over and unlocks", taken_over == STOP_TRIES,
              f"{taken_over} of {STOP_TRIES}; status {d.status()}")

        # Stopped and started again while unlocked: it takes no lock.
        d.kill(signal.SIGTERM)
        d = Daemon(work)
        daemons.append(d)
        s = d.wait_status(lambda s: s.get("display") is not None, timeout=10)
        time.sleep(0.5)
        share = compositor.app_share()
        check(f"{name}: started unlocked, touchlockd takes no lock",
              s is not None and s.get("display") == "handed_over" and share > 0.97,
              f"status {s}, app share {share:.3f}")

        # The compositor gone while locked (stopped, crashed, restarted): its session and
        # the connection with it. touchlockd ends, status 1, to be started again (systemd's
        # Restart=); started again before the compositor is back, it waits for its socket
        # and, its record saying locked, takes the lock as soon as it is up.
        rc, _ = d.ctl("lock")
        d.wait_status(lambda s: s.get("display") == "shown")
        compositor.stop()
        try:
            code = d.process.wait(10)
        except subprocess.TimeoutExpired:
            code = None
        with open(os.path.join(work, "touchlockd.log")) as f:
            said = "to be started again for the next compositor" in f.read()
        check(f"{name}: the compositor gone while locked, touchlockd ends with status 1 and says why",
              rc == 0 and code == 1 and said, f"lock rc {rc}, exit status {code}, said {said}")
        write_config(work, compositor.socket, cover="session-lock")
        d = Daemon(work)
        daemons.append(d)
        time.sleep(1.0)
        waiting = d.process.poll() is None
        t_up = time.monotonic()
        compositor = Compositor(root, name)
        s = d.wait_status(lambda s: s.get("display") == "shown", timeout=15)
        taken = s is not None and wait_for(lambda: compositor.dominant() == ours)
        print(f"session-lock: {name}: a touchlockd started 1 s before the compositor: its lock screen"
              f" {time.monotonic() - t_up:.2f} s after the compositor's start", flush=True)
        check(f"{name}: started before the compositor, touchlockd waits for it and locks it once it is up",
              waiting and bool(taken), f"still running after 1 s: {waiting}; status {d.status()}")
        compositor.type_key("Shift_L")
        compositor.type(CODE)
        s = d.wait_status(lambda s: s.get("display") == "handed_over")
        ok = s is not None and wait_for(lambda: compositor.app_share() > 0.97)
        check(f"{name}: that touchlockd unlocks with the code", bool(ok), f"status {d.status()}")

        # The idle lock: unlocked and left untouched for [lock] idle_s, the session is locked.
        d.kill(signal.SIGTERM)
        write_config(work, compositor.socket, cover="session-lock", idle_s=2)
        d = Daemon(work)
        daemons.append(d)
        s = d.wait_status(lambda s: s.get("display") == "handed_over")
        t_idle = time.monotonic()
        s = d.wait_status(lambda s: s.get("display") == "shown", timeout=10)
        taken = s is not None and wait_for(lambda: compositor.dominant() == ours)
        print(f"session-lock: {name}: the idle lock's screen {time.monotonic() - t_idle:.2f} s after the start"
              f" ([lock] idle_s = 2)", flush=True)
        check(f"{name}: unlocked and untouched for [lock] idle_s, the session is locked",
              bool(taken) and s.get("state") == "locked", f"status {d.status()}")
    except Exception as e:  # a check that could not run is a failure, said
        check(f"{name}: the run", False, repr(e))
    finally:
        for d in daemons:
            if d.process.poll() is None:
                d.kill()
        compositor.stop()
        print(f"session-lock: {name}: {time.monotonic() - t0:.1f} s; touchlockd's log: {work}/touchlockd.log", flush=True)


def main():
    root = sys.argv[1]
    names = [a for a in sys.argv[2:] if a in ("sway", "labwc")] or ["sway", "labwc"]
    t0 = time.monotonic()
    for name in names:
        run_compositor(root, name)
    print(f"session-lock: {time.monotonic() - t0:.1f} s in all")
    print(f"session-lock: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
