"""logind's checks of the systemd VM test (run_systemd.py, after systemd_deploy.py's): session
tools and sleeps lock the running kiosk through logind, as they would on a desktop.

Checks:
  lock-sessions  over the running kiosk, unlocked: `loginctl lock-sessions` (what xss-lock,
                 swayidle and the desktops call) shows the lock screen within 5 s; strokes
                 made on the app's surface meanwhile do not reach it; the right pattern gives
                 it back with the same PIDs.
  unlock         `loginctl unlock-sessions` while locked leaves it locked (the lock screen
                 opens only with its secret).
  sleep          touchlockd holds a delay inhibitor on sleep (systemd-inhibit --list); over
                 the running kiosk, unlocked, `systemctl suspend` (to idle; a line on the
                 serial port wakes the guest 8 s after the kernel says on its console that
                 it entered the sleep): the journal has the lock screen shown before the
                 kernel enters the sleep, and the screen while asleep is the lock screen; after the wake-up it
                 is locked (status) and the delay taken again. (The screen after the
                 wake-up is not judged, nor an unlock: virtio-gpu in Linux 6.1 has no
                 suspend support and stays dark for every client. It runs last.)
"""
import os
import time

from run_e2e import CheckFailed, inject, save
from run_kiosk import marks
from systemd_deploy import MONO, cell_hit, cell_stroke

CHECKS = ["logind: loginctl lock-sessions locks the running kiosk and no touch reaches the app",
          "logind: loginctl unlock-sessions leaves it locked",
          "logind: a suspend waits for the lock screen, and the device wakes up locked"]
SLEEP_S = 8                       # how long the guest sleeps before a line on its serial port wakes it
SLEEP_ENTRY_S = 30                # how long the host looks for the kernel's sleep entry on the console


def console_tail(path, offset):
    """What the guest's console printed after `offset` bytes."""
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read()


class LogindChecks:
    def __init__(self, deploy):
        self.d = deploy
        self.g = deploy.g
        self.unlock_result = "not reached"

    def names(self):
        return list(CHECKS)

    def lock_sessions(self):
        d, g = self.d, self.g
        d.ensure_kiosk("loginctl lock-sessions")
        before, kiosk = set(d.marks), d.kiosk_pids()
        t = time.monotonic()
        g.run("loginctl lock-sessions")
        img = d.poll(d.want_lock, 5, "the lock screen after loginctl lock-sessions", name="logind-lock.png")
        took = time.monotonic() - t
        save(d.out, "logind-lock-sessions.png", img)
        d.run.figure("loginctl lock-sessions to the lock screen (seen from the host)", f"{took:.2f} s")
        st = d.status()
        if st["state"] != "locked" or st.get("display") != "shown":
            raise CheckFailed("status after lock-sessions: " + str(st))
        cells = d.take_cells(2)
        for i, c in enumerate(cells):
            inject(g, cell_stroke(c), f"@@logind-cell-{i}")
        self.unlock_refused()
        img = d.unlock("the app after the pattern")
        touched = [c for c in cells if cell_hit(marks(img, d.rect) - before, c)]
        if touched:
            raise CheckFailed(f"{len(touched)} of {len(cells)} strokes made while locked reached the app")
        if d.kiosk_pids() != kiosk:
            raise CheckFailed(f"the kiosk was started again: {kiosk} -> {d.kiosk_pids()}")
        d.marks = marks(img, d.rect)

    def unlock_refused(self):
        d, g = self.d, self.g
        g.run("loginctl unlock-sessions")
        time.sleep(2)
        st = d.status()
        img = d.screendump()
        self.unlock_result = None
        if st["state"] != "locked" or d.classify(img) != "lock":
            self.unlock_result = f"after loginctl unlock-sessions: status {st['state']}, the screen shows {d.classify(img)}"
            save(d.out, "logind-unlocked.png", img)

    def unlock(self):
        if self.unlock_result:
            raise CheckFailed(self.unlock_result)

    def delay_held(self, when):
        _, lines = self.g.run("systemd-inhibit --list --no-pager --no-legend", check=False)
        held = [l for l in lines if "touchlock" in l and "sleep" in l and "delay" in l]
        if not held:
            raise CheckFailed(f"{when}: no sleep delay of touchlock in systemd-inhibit --list: " + " | ".join(lines))

    def sleep(self):
        d, g = self.d, self.g
        d.ensure_kiosk("the suspend")
        self.delay_held("before the suspend")
        # Suspend to idle: QEMU wakes a guest from S3 through the firmware's resume path,
        # which this directly booted kernel does not come back from (QEMU resets and, with
        # -no-reboot, exits). s2idle is the kernel's own sleep (what current laptops use);
        # logind, the inhibitors and PrepareForSleep are the same. A line on the agent's
        # serial port wakes the guest, as a key would (the RTC's alarm does not, here).
        # The kernel's info lines reach the console (ttyS1, a file on the host): its
        # "PM: suspend entry" tells the host when the sleep began. systemd-sleep may take
        # seconds to get there on a loaded host; the wake-up line is timed from it.
        _, lines = g.run("echo s2idle > /sys/power/mem_sleep; echo enabled > /sys/class/tty/ttyS0/power/wakeup;"
                         " echo 7 > /proc/sys/kernel/printk; cat /sys/power/state /sys/power/mem_sleep", check=False)
        print("vm-systemd: sleep states: " + " | ".join(lines), flush=True)
        console_from = os.path.getsize(g.console_path)
        rc, out = g.run("systemctl suspend; echo \"@@suspend $?\"", timeout=30, check=False)
        code = next((l.split()[1] for l in out if l.startswith("@@suspend ")), "?")
        if code != "0":
            raise CheckFailed(f"systemctl suspend exited {code}: " + " | ".join(out[-6:]))
        t = time.monotonic()
        while b"PM: suspend entry" not in console_tail(g.console_path, console_from):
            if time.monotonic() - t > SLEEP_ENTRY_S:
                # The kernel may hold its lines back until the wake-up (it printed them
                # only then in one run, the sleep entered 6 s after systemctl suspend).
                # The sleep began within this wait all the same; the journal, read after
                # the wake-up, says when, and whether it lasted.
                print(f"vm-systemd: no 'PM: suspend entry' on the guest's console {SLEEP_ENTRY_S} s after"
                      " systemctl suspend; the sleep is judged from the journal", flush=True)
                break
            time.sleep(0.2)
        else:
            d.run.figure("systemctl suspend to the kernel's sleep entry (seen from the host)",
                         f"{time.monotonic() - t:.1f} s")
        # Half way through the sleep: what the screen shows.
        time.sleep(SLEEP_S / 2)
        asleep = d.classify(d.screendump())
        save(d.out, "logind-asleep.png", d.screendump())
        time.sleep(SLEEP_S / 2)
        g.send("true")
        time.sleep(2)
        d.resync()
        # touchlockd's lines and the kernel's, one clock (two queries: -k and -u would be
        # one match on both); until the daemon has heard of the wake-up (logind tells it once
        # systemd-sleep is back, a moment after the guest answers).
        deadline = time.monotonic() + 15
        while True:
            _, j = g.run("{ journalctl -b -o short-monotonic --no-pager -u touchlockd; journalctl -b -k -o short-monotonic"
                         " --no-pager; } | grep -e 'logind:' -e 'PM: suspend'", check=False)
            if any("logind: woke up" in l for l in j) or time.monotonic() > deadline:
                break
            time.sleep(1)
        print("vm-systemd: the journal: " + " | ".join(j[-10:]), flush=True)

        def at(pattern):
            """The last line with `pattern`: there is one suspend in the boot."""
            found = None
            for l in j:
                mm = MONO.match(l)
                if mm and pattern in l:
                    found = float(mm.group(1))
            return found
        going, shown = at("logind: going to sleep"), at("logind: the lock screen is shown; the sleep may go on")
        entering, left = at("PM: suspend entry"), at("PM: suspend exit")
        woke = at("logind: woke up")
        if going is None or shown is None or entering is None or left is None:
            raise CheckFailed(f"in the journal: going to sleep {going}, lock screen shown {shown}, sleep entered"
                              f" {entering}, left {left}")
        if not going <= shown <= entering:
            raise CheckFailed(f"the lock screen was shown at {shown:.3f} s, the sleep entered at {entering:.3f} s")
        if left - entering < SLEEP_S / 2:
            raise CheckFailed(f"the guest slept only {left - entering:.1f} s (from {entering:.3f} s)")
        d.run.figure("asleep (guest journal)", f"{left - entering:.1f} s")
        if asleep != "lock":
            raise CheckFailed(f"while the guest slept the screen showed {asleep} (logind-asleep.png)")
        d.run.figure("PrepareForSleep to the lock screen shown (guest journal)", f"{shown - going:.2f} s")
        d.run.figure("lock screen shown to the sleep entered (guest journal)", f"{entering - shown:.2f} s")
        if woke is None:
            raise CheckFailed("no 'logind: woke up' in touchlockd's journal after the wake-up")
        # Only what the daemon says after the wake-up is judged: virtio-gpu in Linux 6.1 has
        # no suspend support, and the display stays dark after the wake-up for every client
        # (a touchlockd started afresh included); a frame sent to it never completes.
        st = d.status()
        if st["state"] != "locked" or st.get("display") != "shown":
            raise CheckFailed("status after the wake-up: " + str(st))
        time.sleep(1)
        self.delay_held("after the wake-up")

    def run_all(self, record):
        # The sleep last: the VM's display stays dark after it.
        record(CHECKS[0], self.lock_sessions)
        record(CHECKS[1], self.unlock)
        record(CHECKS[2], self.sleep)
