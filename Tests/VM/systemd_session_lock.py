"""The session lock checks of the systemd VM test (run_systemd.py, the labwc boot, after
systemd_deploy.py's VT checks): the same kiosk (labwc 0.8.3 started by greetd's autologin,
weston-simple-touch full screen, the uinput touchscreen read by labwc's libinput) covered by
the compositor's own lock, ext-session-lock-v1, as docs/session-lock.md sets it up: the
packaged unit with the page's drop-in, `[display] cover = session-lock` and
`wayland_socket` naming labwc's socket, `unlock_method = both` and a code set with
`touchlockctl set-secret code`. touchlockd opens no input device then: every touch it gets
comes from labwc's wl_touch on its lock surface.

Checks:
  switch     touchlockd restarted so while unlocked takes no lock: status says
             `session-lock` and why, no screendump through the restart hides the app, and a
             touch still reaches the app.
  lock       `touchlockctl lock` covers the app with the lock screen (screendumps from the
             host; the time to the first one showing it is a figure against the 0.5 s
             target), the active VT stays labwc's (tty7), touchlockd has no /dev/input
             device open.
  pattern    strokes on the app while locked reach nothing; the right pattern, drawn on
             the touchscreen, reaches touchlockd through labwc's wl_touch and gives the app
             back, with the same compositor and app PIDs; the app takes touches again.
  code       locked again: a tap on the control that switches to the code pad, the
             code's digits tapped on the on-screen keypad: unlocked, by the code (then
             locked, switched back to the pattern by a tap and unlocked, for what follows).
  scale      (labwc) locked, the output set to scale 1.5 by wlr-randr in the kiosk's
             session, as a display settings tool sets a small dense panel: the lock
             screen is drawn at the output's own pixels (the journal; the code pad's
             screendump is the one at scale 1 in all but a few pixels), and the code tapped
             at the keys' places in those pixels through wl_touch unlocks; the scale set
             back to 1.
  events     kill -9, kill -STOP (the watchdog's kill), `systemctl restart` and `dpkg -i`
             of a newer package while locked (systemd_deploy.py's event: screendumps every
             50-100 ms, strokes on the app throughout): no screendump shows the app, no
             stroke reaches it, the lock screen comes back, and the next touchlockd is
             granted the lock (the guest's journal: from the previous one's end to
             "wayland: the compositor locked the session"; 3 s is the target, a figure).

logind's checks (systemd_logind.py: lock-sessions, a suspend) run after these, under the
session lock.
"""
import json
import re
import time

from run_e2e import RIGHT, CheckFailed, differing, inject, save, stroke
from run_kiosk import marks
from systemd_deploy import (APP_WAYLAND_LOG, EVENTS, SESSION_EVENT_CHECKS, SESSION_EVENT_CHECKS_LOCKED,
                            TAKEOVER_CHECK, cell_hit, cell_stroke, write_session_lock_dropin)

CODE = "2580"
CONF = "/etc/touchlock/touchlock.conf.d/vm-session-lock.conf"   # after the labwc boot's vm-cover.conf (`cover = vt`)
LOCK_TARGET_S = 0.5
CHECKS = [
    "touchlockd restarted while unlocked with cover = session-lock takes no lock, says why, and the app keeps"
    " the screen and its touches",
    "touchlockctl lock covers the app with {comp}'s lock, the active VT unchanged, no input device opened by"
    " touchlockd",
    "no stroke on the app while locked reaches it; the pattern through {comp}'s wl_touch gives it back, with"
    " the same PIDs, taking touches",
    "the code tapped on the on-screen keypad through wl_touch unlocks",
]
SCALE_CHECK = ("the output set to scale 1.5 while locked (wlr-randr): the lock screen drawn at the output's own"
               " pixels, and the code tapped through wl_touch at the keys' places in them unlocks")
# Of the code pad's screendump at 1.5 against the one at scale 1, at most this share of the
# pixels may differ by more than 40 (the caret's blink; the compositor resampling the
# buffer into a surface of fractional size). Drawn at 2 and scaled down, some 3% do.
SCALE_DIFFERING = 0.005
# sway instead of labwc (greetd's initial_session changed, greetd started again): the
# daemon of labwc's session ends with it, and the one systemd starts waits for sway.
SWAY_CHECK = ("the kiosk's compositor replaced by sway: touchlockd ends with labwc's connection, the next one waits"
              " for sway, takes no lock, and the app takes touches")


def event_names(label):
    names = []
    for ev, _, _ in EVENTS:
        tag = f"[{label}: {ev}, locked]"
        names += [f"{tag} {c}" for c in SESSION_EVENT_CHECKS_LOCKED + [TAKEOVER_CHECK] + SESSION_EVENT_CHECKS]
    return names


class SessionLockPhase:
    def __init__(self, deploy, compositor="labwc"):
        self.d = deploy
        self.g = deploy.g
        self.compositor = compositor
        self.label = "session lock" if compositor == "labwc" else f"session lock, {compositor}"
        self.switched = False
        self.pad_at_scale_1 = None

    def check_name(self, i):
        if i == 0 and self.compositor == "sway":
            return f"{self.label}: {SWAY_CHECK}"
        return f"{self.label}: " + CHECKS[i].format(comp=self.compositor)

    def names(self):
        scale = [f"{self.label}: {SCALE_CHECK}"] if self.compositor == "labwc" else []
        return [self.check_name(i) for i in range(len(CHECKS))] + scale + event_names(self.label)

    def randr(self, *args):
        """wlr-randr in the kiosk's session, as its user: (exit status, output lines)."""
        _, lines = self.g.run("id -u kiosk")
        env = f"XDG_RUNTIME_DIR=/run/user/{lines[-1].strip()} WAYLAND_DISPLAY=wayland-0"
        return self.g.run(f"runuser -u kiosk -- env {env} wlr-randr " + " ".join(args), check=False)

    def output_name(self):
        rc, lines = self.randr()
        names = [ln.split()[0] for ln in lines if ln and not ln[0].isspace()]
        if rc != 0 or not names:
            raise CheckFailed(f"wlr-randr lists no output: rc {rc}: {lines}")
        return names[0]

    # -- helpers

    def main_pid_fds(self):
        pid = self.d.main_pid()
        _, lines = self.g.run(f"ls -l /proc/{pid}/fd 2>/dev/null | grep -c '/dev/input/'; true", check=False)
        return pid, int(lines[-1]) if lines and lines[-1].strip().isdigit() else -1

    def journal_since(self, since, pattern):
        _, j = self.g.run(f"journalctl -b -o short-monotonic --no-pager -u touchlockd | grep -e '{pattern}'",
                          check=False)
        out = []
        for line in j:
            m = re.match(r"^\[\s*(\d+\.\d+)\]", line)
            if m and float(m.group(1)) >= since:
                out.append(line)
        return out

    def journal_wait(self, since, pattern, timeout):
        """touchlockd's journal lines with `pattern` after `since` (guest uptime), waited for."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.journal_since(since, pattern)
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.5)

    def shot(self, name):
        return name if self.compositor == "labwc" else name.replace("session-lock-", f"session-lock-{self.compositor}-")

    def refresh_layout(self, st):
        """The lock screen's nodes as the daemon now lays them out (the code switch takes
        room), and the places for strokes recomputed below the ones already used (a
        stroke over an old mark would show nothing new)."""
        d = self.d
        d.nodes = [tuple(p) for p in st["pattern"]["nodes"]]
        used = d.cells[:d.next_cell]
        below = max((c[1] for c in used), default=0)
        d.cells = [c for c in d.make_cells() if c[1] > below + 8]
        d.next_cell = 0

    def tap(self, x, y):
        return [f"down {x:.1f} {y:.1f}", "sleep 40", "up", "sleep 120"]

    # -- the checks

    def switch(self):
        d, g = self.d, self.g
        d.ensure_kiosk("the switch to the session lock")
        _, lines = g.run("id -u kiosk")
        sock = f"/run/user/{lines[-1].strip()}/wayland-0"
        g.run(f"test -S {sock}")
        write_session_lock_dropin(g)
        g.run(f"printf '%s\\n' '{CODE}' '{CODE}' | touchlockctl set-secret code")
        g.run(f"printf '[display]\\ncover = session-lock\\nwayland_socket = {sock}\\n\\n[screen]\\n"
              f"unlock_method = both\\n' >{CONF}")
        self.switched = True
        before = d.kiosk_pids()
        old = d.main_pid()
        d.dumper.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        g.run("timeout 50 systemctl restart touchlockd", timeout=60, check=False)
        new = d.main_pid()
        time.sleep(1.5)
        frames = d.dumper.stop()
        hidden = [t - t0 for t, k in frames if k != "app"]
        st = d.status()
        print(f"vm-systemd: session lock: touchlockd {old} -> {new} in {time.monotonic() - t0:.1f} s; status"
              f" {json.dumps(st)}; {len(frames)} screendumps, {len(hidden)} without the app", flush=True)
        if not new or new == old:
            raise CheckFailed(f"touchlockd not restarted: PID {old} -> {new}")
        d.cover = "session-lock"
        if st.get("cover") != "session-lock" or sock not in st.get("cover_reason", ""):
            raise CheckFailed(f"status cover {st.get('cover')!r}, reason {st.get('cover_reason')!r}")
        if st["state"] != "unlocked":
            raise CheckFailed("status after the restart while unlocked: " + json.dumps(st))
        if hidden:
            raise CheckFailed(f"{len(hidden)} of {len(frames)} screendumps through the restart do not show the app,"
                              f" the first {hidden[0]:.2f} s in")
        self.refresh_layout(st)
        img, _ = d.strokes_until_marked("a touch on the app after the switch", d.take_cells(3))
        d.marks = marks(img, d.rect)
        if d.kiosk_pids() != before:
            raise CheckFailed(f"the kiosk was started again: {before} -> {d.kiosk_pids()}")

    def lock(self):
        d, g = self.d, self.g
        if not self.switched:
            raise CheckFailed("not reached: the switch to the session lock failed")
        d.ensure_kiosk("the session lock's lock")
        vt_before = d.active_vt()
        d.dumper.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        rc, lines = g.run("a=$(cut -d' ' -f1 /proc/uptime); timeout 25 touchlockctl lock </dev/null; r=$?;"
                          " echo \"@@lock $r $a $(cut -d' ' -f1 /proc/uptime)\"", timeout=30, check=False)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and "lock" not in d.dumper.kinds_since(t0):
            time.sleep(0.1)
        time.sleep(0.5)
        frames = d.dumper.stop()
        m = next((l.split() for l in lines if l.startswith("@@lock ")), None)
        if not m or m[1] != "0":
            raise CheckFailed("touchlockctl lock: " + " | ".join(lines))
        in_guest = float(m[3]) - float(m[2])
        first = next((t - t0 for t, k in frames if t >= t0 and k == "lock"), None)
        after = [k for t, k in frames if first is not None and t >= t0 + first]
        d.run.figure(f"{self.label}: touchlockctl lock to its reply (in the guest; target 0.5 s)", f"{in_guest:.2f} s")
        d.run.figure(f"{self.label}: touchlockctl lock to the first screendump of the lock screen (host)",
                     "never" if first is None else f"{first:.2f} s")
        if first is None:
            raise CheckFailed("no screendump showed the lock screen within 5 s")
        if any(k != "lock" for k in after):
            raise CheckFailed(f"after the lock screen came: {after}")
        st = d.status()
        vt = d.active_vt()
        pid, inputs = self.main_pid_fds()
        if st["state"] != "locked" or st.get("display") != "shown" or st.get("cover") != "session-lock":
            raise CheckFailed("status: " + json.dumps(st))
        if vt != vt_before or vt != d.k.vt:
            raise CheckFailed(f"the active VT went from {vt_before} to {vt}")
        if inputs != 0:
            raise CheckFailed(f"touchlockd (PID {pid}) has {inputs} /dev/input devices open")
        save(d.out, self.shot("session-lock-locked.png"), d.screendump())

    def pattern(self):
        d, g = self.d, self.g
        st = d.status()
        if st["state"] != "locked" or st.get("cover") != "session-lock":
            raise CheckFailed("not reached: not locked under the session lock: " + json.dumps(st))
        before, kiosk = set(d.marks), d.kiosk_pids()
        cells = d.take_cells(2)
        for i, c in enumerate(cells):
            inject(g, cell_stroke(c), f"@@sl-cell-{i}")
        time.sleep(0.5)
        if d.status()["state"] != "locked":
            raise CheckFailed("the strokes on the app while locked unlocked it")
        since = g.uptime()
        img = d.unlock("the app after the pattern through wl_touch")
        touched = [c for c in cells if cell_hit(marks(img, d.rect) - before, c)]
        if touched:
            raise CheckFailed(f"{len(touched)} of {len(cells)} strokes made while locked reached the app")
        if not self.journal_since(since, "unlocked by pattern"):
            raise CheckFailed("the journal does not say 'unlocked by pattern' after the stroke")
        if d.kiosk_pids() != kiosk:
            raise CheckFailed(f"the kiosk was started again: {kiosk} -> {d.kiosk_pids()}")
        img, _ = d.strokes_until_marked("a touch on the app after the unlock", d.take_cells(3))
        d.marks = marks(img, d.rect)
        save(d.out, self.shot("session-lock-unlocked.png"), img)

    def code(self):
        if not self.switched:
            raise CheckFailed("not reached: the switch to the session lock failed")
        self.d.lock("the session lock, before the code")
        self.code_unlocks("session-lock-code.png")

    def scale(self):
        d, g = self.d, self.g
        if not self.switched:
            raise CheckFailed("not reached: the switch to the session lock failed")
        d.lock("the session lock, before the scale")
        screen = d.status()["outputs"][0]["screen"]
        output = self.output_name()
        since = g.uptime()
        back = []
        try:
            self.set_scale(output, "1.5")
            said = self.journal_wait(since, "is drawn at scale 1.5", 15)
            if not said:
                raise CheckFailed("the journal does not say the output is drawn at scale 1.5")
            st = d.status()
            if st["outputs"][0]["screen"] != screen:
                raise CheckFailed(f"at scale 1.5 the lock screen is {st['outputs'][0]['screen']}, the output {screen}")
            print(f"vm-systemd: {self.label}: {said[-1]}", flush=True)

            def same_pad(img):
                before = self.pad_at_scale_1
                n = None
                if before and (before.width, before.height) == (img.width, img.height):
                    n = differing(before, img, (0, 0, img.width, img.height))
                print(f"vm-systemd: {self.label}: the code pad at scale 1.5: {n} of {img.width * img.height} pixels"
                      f" differ by more than 40 from scale 1's", flush=True)
                if n is None or n > SCALE_DIFFERING * img.width * img.height:
                    raise CheckFailed(f"the code pad at scale 1.5 is not the one at scale 1: {n} pixels differ")

            def scale_back_unlocked():
                back.append(g.uptime())
                self.set_scale(output, "1")
            self.code_unlocks("session-lock-code-scale-1.5.png", same_pad, after_unlock=scale_back_unlocked)
            # The scale set back while unlocked: the next lock (in code_unlocks, to switch
            # back to the pattern) is laid out for the output's pixels at once, not first
            # for the scale it had before.
            resized = self.journal_since(back[0], "is now .* pixels")
            if resized:
                raise CheckFailed("the lock after the scale was set back was laid out again: " + " | ".join(resized))
        finally:
            if not back:
                self.set_scale(output, "1")

    def set_scale(self, output, scale):
        rc, lines = self.randr("--output", output, "--scale", scale)
        if rc != 0:
            raise CheckFailed(f"wlr-randr --output {output} --scale {scale}: rc {rc}: {lines}")

    def code_unlocks(self, shot, check_pad=None, after_unlock=None):
        """Locked with the pattern shown: the switch to the code pad tapped, the code's digits
        tapped, unlocked by the code; then locked again and switched back to the pattern."""
        d, g = self.d, self.g
        st = d.status()
        if not st.get("toggle"):
            raise CheckFailed("no control to switch to the code in the status: " + json.dumps(st))
        x, y = st["toggle"]
        inject(g, self.tap(x, y), "@@sl-toggle")
        pad = None
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            st = d.status()
            if st.get("showing") == "code" and st.get("code", {}).get("keys"):
                pad = st["code"]
                break
            time.sleep(0.2)
        if pad is None:
            raise CheckFailed("a tap on the switch through wl_touch did not show the code pad: " + json.dumps(st))
        pad_img = d.screendump()
        save(d.out, self.shot(shot), pad_img)
        if check_pad:
            check_pad(pad_img)
        else:
            self.pad_at_scale_1 = pad_img
        since = g.uptime()
        cmds = []
        for digit in CODE:
            kx, ky = pad["keys"][digit]
            cmds += self.tap(kx, ky)
        inject(g, cmds, "@@sl-code")
        if after_unlock:
            # At another scale the app is drawn otherwise: the unlock is read from the
            # status first, then the scale is set back and the app looked for.
            deadline = time.monotonic() + 15
            while d.status().get("state") != "unlocked" and time.monotonic() < deadline:
                time.sleep(0.2)
            after_unlock()
        img = d.poll(d.want_app, 15, "the app after the code", name=self.shot("session-lock-code-not-unlocked.png"))
        st = d.status()
        if st["state"] != "unlocked":
            raise CheckFailed("status after the code: " + json.dumps(st))
        if not self.journal_since(since, "unlocked by code"):
            raise CheckFailed("the journal does not say 'unlocked by code' after the taps")
        d.marks = marks(img, d.rect)
        # The next lock shows the code pad (the method last used): the switch back to the
        # pattern, tapped while locked, for the checks after this one.
        g.run("timeout 25 touchlockctl lock </dev/null", timeout=30, check=False)
        st = d.status()
        if st.get("showing") != "code" or not st.get("toggle"):
            raise CheckFailed("locked after the code: " + json.dumps(st))
        x, y = st["toggle"]
        inject(g, self.tap(x, y), "@@sl-toggle-back")
        d.poll(d.want_lock, 5, "the pattern after the switch back", name=self.shot("session-lock-no-pattern.png"))
        d.unlock("the app after the switch back to the pattern")

    def to_sway(self):
        """greetd's session runs sway instead of labwc (full screen, no borders, the same
        app): labwc's end ends touchlockd (status 1), systemd starts it again, and it waits
        for a compositor as at boot; sway's socket, named in the config, is the one it covers."""
        d, g = self.d, self.g
        d.ensure_kiosk("the switch to sway")
        st = d.status()
        if st.get("cover") != "session-lock":
            raise CheckFailed("not reached: not under the session lock: " + json.dumps(st))
        # The app logs its Wayland events as under labwc (systemd_deploy.py's app_touches).
        g.run("mkdir -p /home/kiosk/.config/sway && printf 'default_border none\\noutput * bg #000000 solid_color\\n"
              f"exec WAYLAND_DEBUG=client weston-simple-touch 2>>{APP_WAYLAND_LOG} >/dev/null\\n'"
              " >/home/kiosk/.config/sway/config && chown -R kiosk:kiosk /home/kiosk/.config/sway"
              " && sed -i 's/^command = \"env WLR_RENDERER=pixman labwc\"/command = \"env WLR_RENDERER=pixman sway\"/'"
              " /etc/greetd/config.toml && grep -q 'pixman sway' /etc/greetd/config.toml")
        # The kiosk ordered after the unlock (the VT hand-off's drop-in) would wait for ever
        # under the session lock: the lock needs the compositor first (docs/session-lock.md).
        g.run("rm -f /etc/systemd/system/greetd.service.d/touchlock.conf && systemctl daemon-reload")
        old = d.main_pid()
        since = g.uptime()
        g.run(f"timeout 30 systemctl stop {d.k.unit}", timeout=40, check=False)
        ended = self.journal_wait(since, "to be started again for the next compositor", 15)
        if not ended:
            raise CheckFailed(f"touchlockd {old} did not say it ends with labwc's connection")
        # The touchlockd systemd starts again after it waits for a compositor (none is up).
        lines = self.journal_wait(since, "waiting up to", 20)
        d.k.compositor = "sway"
        self.switched = True
        g.run(d.k.start, check=False)
        # The socket sway makes (wlroots takes the first free name: sway's is wayland-1 here,
        # where labwc's was wayland-0): named in the config, touchlockd started again for it,
        # as an integrator names the compositor's socket.
        _, uid = g.run("id -u kiosk")
        run_dir = f"/run/user/{uid[-1].strip()}"
        deadline = time.monotonic() + 60
        sock = None
        while time.monotonic() < deadline and not sock:
            _, ls = g.run(f"ls {run_dir} 2>/dev/null | grep -x 'wayland-[0-9]*'; true", check=False)
            sock = next((l.strip() for l in ls if l.strip().startswith("wayland-")), None)
            if not sock:
                time.sleep(1)
        if not sock:
            _, why = g.run(f"systemctl status --no-pager {d.k.unit} | tail -n 20", check=False, timeout=30)
            raise CheckFailed("sway made no Wayland socket within 60 s: " + " | ".join(why)[-2000:])
        if sock != "wayland-0":
            g.run(f"sed -i 's#^wayland_socket = .*#wayland_socket = {run_dir}/{sock}#' {CONF}"
                  " && timeout 50 systemctl restart touchlockd", timeout=60, check=False)
        st = wait_status(d, lambda s: s.get("cover") == "session-lock", 60)
        new = d.main_pid()
        print(f"vm-systemd: sway: its socket {sock}; touchlockd {old} -> {new}; waited: {' | '.join(lines)};"
              f" status {json.dumps(st)[:300]}", flush=True)
        if not lines:
            raise CheckFailed("the journal does not say the touchlockd after labwc's end waited for a compositor")
        if st["state"] != "unlocked" or sock not in st.get("cover_reason", ""):
            raise CheckFailed("status under sway: " + json.dumps(st))
        img = d.screendump()
        d.rect = (0, 0, img.width, img.height)      # sway tiles the app over the whole output
        d.cells = d.make_cells()
        d.next_cell = 0
        img = d.poll(d.want_app, 30, "the app under sway", name="session-lock-sway-no-app.png")
        save(d.out, "session-lock-sway.png", img)
        d.kiosk = d.kiosk_pids()
        if not d.kiosk["compositor"] or not d.kiosk["app"]:
            raise CheckFailed(f"sway or weston-simple-touch not running: {d.kiosk}")
        img, _ = d.strokes_until_marked("a touch on the app under sway", d.take_cells(3))
        d.marks = marks(img, d.rect)
        d.cover_label = self.label

    def run_all(self, record):
        record(self.check_name(0), self.to_sway if self.compositor == "sway" else self.switch)
        if self.compositor == "sway":
            self.d.cover_label = self.label
        record(self.check_name(1), self.lock)
        record(self.check_name(2), self.pattern)
        record(self.check_name(3), self.code)
        if self.compositor == "labwc":
            record(f"{self.label}: {SCALE_CHECK}", self.scale)
        if self.switched:
            for name, cmd, seconds in EVENTS:
                self.d.event(name, cmd, seconds, True)


def wait_status(d, predicate, timeout):
    """touchlockd's status once its control socket answers and `predicate` holds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = d.status(check=False)
        if st and predicate(st):
            return st
        time.sleep(1)
    raise CheckFailed(f"no status from touchlockd within {timeout} s that says the session lock: {d.status(check=False)}")
