#!/usr/bin/env python3
"""A locked Debian 12 kiosk upgraded to Debian 13 (scripts/vm/dist-upgrade.sh): the guest of
the systemd VM test (run_systemd.py: its root, build_image's settings, its boot without
plymouth) with a flat repository of the packages the upgrade needs at /srv/trixie, its only
source. A release's demonstration: it takes 30-60 minutes under TCG and is not part of
scripts/test.

The first unlock, the kiosk up (cage@tty1 running weston-simple-touch, systemd_deploy.py's
Deploy.kiosk_up), `apt-get update`, `touchlockctl lock`, then, with the QMP screendump loop
running (systemd_deploy.Dumper), a stroke on the app every second (as many as there are
places for them) and Ctrl+Alt+F1 pressed every few seconds, `apt-get -y full-upgrade`
(noninteractive, the old configuration files kept). Checked and printed: /etc/debian_version
before and after (12.x, then 13.x), touchlock's version before and after (its Debian 13
build, when the repository has it), the screendumps (count, interval), those showing the
app (none), the strokes that reached the app (none, seen on the app after the unlock), the
longest time the lock screen was off the screen and when, touchlockd's main PIDs through
the upgrade (and the journal's lines on who restarted it), status locked after the
upgrade, the active VT still touchlockd's tty8, then the right pattern unlocks, the app
comes back and takes touches. PNGs of the first and last screendumps (and the first not
showing the lock screen, if any) in --out. Ends with "dist-upgrade: N passed, M failed".
Python standard library only.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_e2e import CheckFailed, InfraError, save  # noqa: E402
from run_kiosk import marks  # noqa: E402
from run_systemd import CHECKS as SYSTEMD_CHECKS, Run, SystemdGuest, build_image  # noqa: E402
from systemd_deploy import (LOCK_BACK_LIMIT_S, Deploy, Kiosk, cell_hit, cell_stroke,  # noqa: E402
                            check_names, gaps)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# The guest's memory (the root is in RAM): used and available, from /proc/meminfo.
MEM = ("awk '/^MemTotal:/ {t = $2} /^MemAvailable:/ {a = $2} END"
       " {printf \"%d MB used, %d MB available\\n\", (t - a) / 1024, a / 1024}' /proc/meminfo")
KEEP_CELLS = 6                    # places kept for the strokes after the unlock
UPGRADE = ("DEBIAN_FRONTEND=noninteractive apt-get -y -o Dpkg::Options::=--force-confold"
           " -o Dpkg::Options::=--force-confdef full-upgrade")

C_UPGRADE = "full-upgrade: apt-get -y full-upgrade from /srv/trixie exits 0"
C_RELEASE = "release: /etc/debian_version is 12.x before and 13.x after"
C_TOUCHLOCK = "touchlock: upgraded to the repository's build in the same full-upgrade"
C_APP = "no screendump through the upgrade shows the app"
C_BACK = f"the lock screen comes back whenever it left the screen (within {LOCK_BACK_LIMIT_S:.0f} s)"
C_KEYS = "Ctrl+Alt+F1 through the upgrade switches nothing (tty8 still active)"
C_LOCKED = "status locked and shown after the upgrade"
C_UNLOCK = "the right pattern unlocks, the app comes back and takes touches"
C_TOUCH = "no stroke made during the upgrade reached the app"
C_KIOSK = "the kiosk is not stopped (same cage and app PIDs, its marks kept)"
CHECKS = [SYSTEMD_CHECKS[0], "first unlock: the right pattern unlocks and cage@tty1 starts after it",
          check_names(Kiosk("cage"))[0], C_UPGRADE, C_RELEASE, C_TOUCHLOCK, C_APP, C_BACK, C_KEYS, C_LOCKED,
          C_UNLOCK, C_TOUCH, C_KIOSK]


def one(g, cmd, timeout=120):
    """The last line of a command's output ('' if none); a slow guest gets time."""
    _, lines = g.run(cmd, timeout=timeout, check=False)
    return lines[-1].strip() if lines else ""


def dist_upgrade(args):
    """run_systemd.Run's `then`: everything after the first unlock."""
    def then(run, g, nodes):
        d = Deploy(run, g, nodes, g.qmp_path, g.workdir, kiosk="cage")
        run.record(CHECKS[2], d.kiosk_up)
        if run.results[CHECKS[2]] is not None:
            return
        fig = run.figure
        before = {
            "release": one(g, "cat /etc/debian_version"),
            "touchlock": one(g, "dpkg-query -W -f='${Version}\\n' touchlock"),
            "mem": one(g, MEM),
        }
        t = time.monotonic()
        rc, lines = g.run("apt-get -q update </dev/null 2>&1 | tail -n 3", timeout=600, check=False)
        fig("apt-get update (the local repository)", f"{time.monotonic() - t:.1f} s")
        _, lines = g.run("apt-get -s full-upgrade </dev/null | grep -E '^[0-9]+ upgraded'", timeout=600, check=False)
        fig("the upgrade apt plans", lines[-1] if lines else "?")
        candidate = one(g, "apt-cache policy touchlock | sed -n 's/^ *Candidate: //p'")
        fig("/etc/debian_version before", before["release"])
        fig("touchlock before (candidate)", f"{before['touchlock']} ({candidate})")
        fig("guest memory before the upgrade", before["mem"])

        d.lock("before the upgrade")
        before_marks, kiosk = set(d.marks), dict(d.kiosk)
        old = d.main_pid()
        n_restarts0 = g.show("touchlockd.service", "NRestarts")["NRestarts"]
        cells = d.take_cells(max(0, len(d.cells) - d.next_cell - KEEP_CELLS))
        script = []
        for cell in cells:
            script += ["sleep 1000"] + cell_stroke(cell)
        script.append("echo @@touches-done")
        g.run("rm -f /tmp/touches")
        for k in range(0, len(script), 60):
            g.run("printf '%s\\n' " + " ".join(f"'{x}'" for x in script[k:k + 60]) + " >>/tmp/touches")
        print(f"dist-upgrade: {len(cells)} strokes, one a second, from the start of the upgrade", flush=True)

        since = g.mark()
        d.dumper.keep = ("other",)
        d.dumper.start(keys=True, keys_every=args.keys_every)
        time.sleep(0.3)
        t0 = time.monotonic()
        g.run("(cat /tmp/touches >&3 &); rm -f /root/upgrade.rc; (" + UPGRADE
              + " </dev/null >/root/upgrade.log 2>&1; echo $? >/root/upgrade.rc) &", check=False)
        pids = [(0.0, old)]
        rc, last_print, low = None, 0.0, 1 << 30
        while time.monotonic() - t0 < args.upgrade_timeout:
            time.sleep(5)
            try:
                now = time.monotonic() - t0
                p = d.main_pid()
                if p != pids[-1][1]:
                    pids.append((now, p))
                    print(f"dist-upgrade: {now:.0f} s: touchlockd's main PID {pids[-2][1]} -> {p}", flush=True)
                done = one(g, "cat /root/upgrade.rc 2>/dev/null; true")
                if now - last_print >= 60 or done:
                    last_print = now
                    prog = one(g, "echo \"$(grep -c '^Unpacking ' /root/upgrade.log) unpacked,"
                                  " $(grep -c '^Setting up ' /root/upgrade.log) set up:"
                                  " $(tail -n 1 /root/upgrade.log | cut -c1-100)\"")
                    mem = one(g, MEM)
                    low = min(low, int(mem.split(" MB available")[0].split()[-1])) if "available" in mem else low
                    print(f"dist-upgrade: {now:.0f} s: {prog}; {mem}; screendumps {len(d.dumper.frames)},"
                          f" showing the app {sum(1 for _, k in d.dumper.frames if k == 'app')}", flush=True)
                if done:
                    rc = done
                    break
            except CheckFailed as e:
                print(f"dist-upgrade: {time.monotonic() - t0:.0f} s: the guest was slow to answer: {e}", flush=True)
                d.resync()
        t_done = time.monotonic()
        # The strokes' end, then screendumps until the lock screen stayed a second.
        try:
            g.expect(r"^@@touches-done$", max(10, len(cells) * 1.5 - (t_done - t0) + 60), since,
                     what="the strokes' end")
        except CheckFailed as e:
            print(f"dist-upgrade: {e}", flush=True)
        end = time.monotonic() + 15
        while time.monotonic() < end:
            recent = d.dumper.kinds_since(time.monotonic() - 1.0)
            if len(recent) >= 5 and all(k == "lock" for k in recent):
                break
            time.sleep(0.2)
        frames = d.dumper.stop()
        t_end = time.monotonic()
        keys_sent = d.dumper.keys_sent
        p = d.main_pid()
        if p != pids[-1][1]:
            pids.append((t_end - t0, p))

        # What happened, the guest's own word.
        after = {
            "release": one(g, "cat /etc/debian_version"),
            "touchlock": one(g, "dpkg-query -W -f='${Version}\\n' touchlock"),
            "mem": one(g, MEM),
        }
        n_restarts = g.show("touchlockd.service", "NRestarts")["NRestarts"]
        vt = d.active_vt()
        st = d.status(check=False)
        _, tail = g.run("tail -n 8 /root/upgrade.log", check=False)
        _, journal = g.run("journalctl -b -o short-monotonic --no-pager _PID=1 | grep -i -e touchlock -e Reexecut"
                           " -e 'Reloading' -e 'systemd-logind.service' -e 'systemd-udevd.service' -e 'cage@'"
                           " | tail -n 60", timeout=120, check=False)
        _, tl = g.run("journalctl -b -o short-monotonic --no-pager -u touchlockd | grep -v -i -e 'attempt' | tail -n 40",
                      timeout=120, check=False)
        _, dpkg_log = g.run("grep -e ' touchlock:' -e ' systemd:amd64' -e ' udev:' /var/log/dpkg.log"
                            " | grep -e 'configure' -e 'status installed' | tail -n 12", check=False)
        print("dist-upgrade: the end of apt's output: " + " | ".join(tail), flush=True)
        print("dist-upgrade: systemd (PID 1) on touchlockd, re-executions and reloads, logind, udevd, cage:", flush=True)
        for l in journal:
            print("    " + l, flush=True)
        print("dist-upgrade: touchlockd's journal:", flush=True)
        for l in tl:
            print("    " + l, flush=True)
        print("dist-upgrade: dpkg.log (touchlock, systemd, udev):", flush=True)
        for l in dpkg_log:
            print("    " + l, flush=True)

        n = len(frames)
        intervals = [b[0] - a[0] for a, b in zip(frames, frames[1:])]
        app = [tt - t0 for tt, k in frames if k == "app" and tt >= t0]
        off = [(a - t0, (b - a) if b else None) for a, b in gaps([f for f in frames if f[0] >= t0])]
        longest = max(off, key=lambda x: x[1] if x[1] is not None else t_end - t0 - x[0]) if off else None
        kinds = {k: sum(1 for _, kk in frames if kk == k) for k in ("lock", "app", "other")}
        fig("full-upgrade", f"exit {rc} after {t_done - t0:.0f} s")
        fig("/etc/debian_version", f"{before['release']} -> {after['release']}")
        fig("touchlock", f"{before['touchlock']} -> {after['touchlock']}")
        fig("guest memory after the upgrade", after["mem"] + (f" (the least available during it: {low} MB)"
                                                            if low < 1 << 30 else ""))
        fig("screendumps", f"{n}, every {1000 * sum(intervals) / max(1, len(intervals)):.0f} ms"
            f" (longest {1000 * max(intervals or [0]):.0f} ms): {kinds['lock']} lock screen, {kinds['app']} app,"
            f" {kinds['other']} other")
        fig("lock screen off the screen", ", ".join(
            f"at {a:.1f} s for {dd:.2f} s" if dd is not None else f"from {a:.1f} s on" for a, dd in off) or "never")
        fig("longest off", "none" if not longest else
            f"{longest[1] if longest[1] is not None else t_end - t0 - longest[0]:.2f} s at {longest[0]:.1f} s")
        fig("touchlockd main PIDs", " -> ".join(f"{pid} ({tt:.0f} s)" for tt, pid in pids)
            + f"; NRestarts {n_restarts0} -> {n_restarts}")
        fig("Ctrl+Alt+F1 sent", f"{keys_sent}, every {args.keys_every:.0f} s; active VT after: {vt}")
        fig("strokes during the upgrade", str(len(cells)))
        save(run.out, "dist-upgrade-first.png", d.dumper.first)
        if d.dumper.last is not None:
            save(run.out, "dist-upgrade-last.png", d.dumper.last)
        if "other" in d.dumper.kept:
            save(run.out, "dist-upgrade-first-off.png", d.dumper.kept["other"])
        if d.dumper.first_app is not None:
            save(run.out, "dist-upgrade-app-shown.png", d.dumper.first_app)

        def upgraded():
            if rc != "0":
                raise CheckFailed(f"exit status {rc}: " + " | ".join(tail))

        def release():
            if not (before["release"].startswith("12.") and after["release"].startswith("13.")):
                raise CheckFailed(f"/etc/debian_version {before['release']} -> {after['release']}")

        def touchlock():
            if not candidate or after["touchlock"] != candidate or candidate == before["touchlock"]:
                raise CheckFailed(f"touchlock {before['touchlock']} -> {after['touchlock']}, the repository's {candidate}")

        def no_app():
            if app:
                raise CheckFailed(f"{len(app)} of {n} screendumps show the app, the first {app[0]:.2f} s into the"
                                  " upgrade (dist-upgrade-app-shown.png)")

        def back():
            if not longest:
                return
            if longest[1] is None:
                raise CheckFailed(f"the lock screen left the screen {longest[0]:.1f} s in and was not back")
            if longest[1] > LOCK_BACK_LIMIT_S:
                raise CheckFailed(f"the lock screen was off the screen {longest[1]:.2f} s from {longest[0]:.1f} s")

        def keys():
            if keys_sent < 5 or vt != "tty8":
                raise CheckFailed(f"{keys_sent} Ctrl+Alt+F1 sent; the active VT is {vt}")

        def locked():
            if not st or st["state"] != "locked" or st.get("display") != "shown":
                raise CheckFailed(f"status {st}")

        shown = {}

        def unlock():
            shown["img"] = d.unlock("the app after the unlock")
            save(run.out, "dist-upgrade-unlocked.png", shown["img"])
            img, _ = d.strokes_until_marked("a touch after the unlock", d.take_cells(3))
            save(run.out, "dist-upgrade-touched.png", img)

        def no_touch():
            if "img" not in shown:
                raise CheckFailed("not reached: the app did not come back")
            new = marks(shown["img"], d.rect) - before_marks
            hit = [c for c in cells if cell_hit(new, c)]
            fig("strokes that reached the app", f"{len(hit)} of {len(cells)}")
            if hit:
                raise CheckFailed(f"{len(hit)} of {len(cells)} strokes made during the upgrade reached the app")

        def kept():
            now = d.kiosk_pids()
            lost = before_marks - marks(shown["img"], d.rect) if "img" in shown else None
            if now != kiosk or lost is None or lost:
                raise CheckFailed(f"PIDs {kiosk} -> {now}; marks lost: {'?' if lost is None else len(lost)}")

        for name, fn in ((C_UPGRADE, upgraded), (C_RELEASE, release), (C_TOUCHLOCK, touchlock), (C_APP, no_app),
                         (C_BACK, back), (C_KEYS, keys), (C_LOCKED, locked), (C_UNLOCK, unlock), (C_TOUCH, no_touch),
                         (C_KIOSK, kept)):
            run.record(name, fn)
    return then


def main():
    ap = argparse.ArgumentParser(description="a locked Debian 12 kiosk upgraded to Debian 13, in QEMU")
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--root", required=True, help="the guest's root with /srv/trixie (dist-upgrade.sh)")
    ap.add_argument("--initrd", required=True, help="the initramfs to write from --root")
    ap.add_argument("--out", default=os.path.join(REPO, ".vm", "out-dist-upgrade"))
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--memory", type=int, default=4096, help="the guest's MB (the root and repository live in RAM)")
    ap.add_argument("--timeout", type=float, default=5400, help="seconds before QEMU is killed")
    ap.add_argument("--boot-timeout", type=float, default=400, help="seconds from QEMU's start to the guest's shell")
    ap.add_argument("--upgrade-timeout", type=float, default=3600, help="seconds the full-upgrade may take")
    ap.add_argument("--keys-every", type=float, default=5.0, help="seconds between Ctrl+Alt+F1 presses")
    args = ap.parse_args()
    args.release, args.deploy = "bookworm", False
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    t = time.monotonic()
    build_image(args)
    workdir = tempfile.mkdtemp(prefix="touchlock-vm-dist-upgrade-")
    with open(os.path.join(out, "agent.log"), "w", buffering=1) as log:
        run = Run(args, out, log, CHECKS, then=dist_upgrade(args))
        run.label = "[dist-upgrade] "
        guest = SystemdGuest(args, workdir, log, os.path.join(out, "console.log"))
        guest.memory = str(args.memory)
        try:
            run.run(guest)
        except (CheckFailed, InfraError) as e:
            print(f"dist-upgrade: stopped: {e}", flush=True)
        finally:
            guest.quit()
            shutil.rmtree(workdir, ignore_errors=True)
    passed = sum(1 for v in run.results.values() if v is None)
    failed = len(run.results) - passed
    print("dist-upgrade: figures:")
    for k, v in run.figures.items():
        print(f"dist-upgrade: | {k:<50} | {v}")
    for k, v in run.results.items():
        if v is not None:
            print(f"dist-upgrade: FAILED: {k}: {v}")
    print(f"dist-upgrade: screenshots, the console log and the agent's log in {out}; {time.monotonic() - t:.0f} s in all")
    print(f"dist-upgrade: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
