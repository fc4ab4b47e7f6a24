#!/usr/bin/env python3
"""Runs the VM measurement protocol (measure-in-guest.sh from the shared vm-measure tools) on
touchlockd in the end-to-end test guest and prints its figures next to the targets and the
reference daemon's figures.

The guest is the one of run_e2e.py (same kernel, bochs KMS, uinput; /init runs the lines sent
on the serial console). The image must hold touchlockd, mtool (/usr/bin) and the protocol
script (--script). This script boots it, mounts tracefs, turns schedstats on, writes a pattern
config, runs the protocol on `touchlockd -C CONF --display drm --input evdev`, answers its
"MEASURE SNAP" requests with QEMU screendumps (PNG in --out) and, with --visible, times the
first visible frame by polling screendumps between "MEASURE EXEC" and the first changed picture.
--profile adds the protocol's start-up timeline and per-mapping memory (-O) and, after the
runs, the daemon's smaps summary (Pss and private memory per mapping).

Every "MEASURE" line is kept in --out/measure.log; the console in --out/console.log.
Python standard library only.
"""
import argparse
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_e2e import RIGHT, SOCKET, CheckFailed, Guest, InfraError, hash_pattern, save  # noqa: E402

CONF = "/tmp/touchlock.conf"
DAEMON = f"touchlockd -C {CONF} --display drm --input evdev"

# The reference daemon (an LVGL-based DRM unlocker) measured the same way (vm-measure README).
REFERENCE = {
    "first_frame": "220 / 251 / 345",
    "pss": "5.3 MB (pixel buffers not counted)",
    "wakeups": "29.9",
    "drag_cpu": "150 (5 frames)",
}


class Measure:
    def __init__(self, args, guest, out):
        self.args, self.guest, self.out = args, guest, out
        self.summary = {}        # key -> {"min":, "median":, "max":, "n":}
        self.config = ""
        self.visible = {}        # run -> ms from the EXEC line to a changed screendump
        self.per_run = {}        # key -> [value per run]
        self.timeline = []       # (ms after exec, what) of run 1, with --profile
        self.mlog = open(os.path.join(out, "measure.log"), "w", buffering=1)

    def setup(self, pattern_hash):
        g = self.guest
        g.start()
        g.expect(r"^@@ready", self.args.boot_timeout, what="the guest's /init")
        errors = [l for _, l in g.lines if l.startswith("@@error")]
        if errors:
            raise InfraError("guest set-up failed: " + "; ".join(errors))
        # The protocol needs ftrace (the function tracer on the KMS helpers) and schedstats.
        g.run("mount -t tracefs nodev /sys/kernel/tracing")
        g.run("grep -q '^drm_atomic_helper_commit_planes ' /sys/kernel/tracing/available_filter_functions"
              " || { echo 'no ftrace function tracing of drm_atomic_helper_commit_planes'; false; }")
        g.run("sysctl -w kernel.sched_schedstats=1 >/dev/null 2>&1 || true")
        conf = ["pattern_hash = " + pattern_hash, "socket = " + SOCKET]
        g.run("mkdir -p /run/touchlock && printf '%s\\n' " + " ".join(f"'{c}'" for c in conf) + f" >{CONF}")

    def protocol(self):
        a = self.args
        opts = f"-r {a.runs}" + (" -O" if a.profile else "") + (f" {a.protocol_args}" if a.protocol_args else "")
        cmd = f"MTOOL=/usr/bin/mtool sh {a.script} {opts} -- {DAEMON} </dev/null"
        g = self.guest
        since = g.mark()
        g.send(cmd)
        baseline, exec_at = None, {}
        i = since
        deadline = time.monotonic() + a.protocol_timeout
        while True:
            with g.cond:
                while i >= len(g.lines) and not g.closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise CheckFailed(f"the protocol did not finish in {a.protocol_timeout} s")
                    g.cond.wait(left)
                if i >= len(g.lines):
                    raise InfraError(g._death("the protocol"))
                stamp, line = g.lines[i]
            i += 1
            m = re.match(r"^@@rc (\d+)$", line)
            if m:
                if m.group(1) != "0":
                    raise CheckFailed(f"measure-in-guest.sh exited {m.group(1)}")
                return
            if not line.startswith("MEASURE"):
                continue
            self.mlog.write(line + "\n")
            if line.startswith("MEASURE ERROR"):
                raise CheckFailed(line)
            if m := re.match(r"^MEASURE CONFIG (.*)$", line):
                self.config = m.group(1)
            elif m := re.match(r"^MEASURE SUMMARY (\S+) min=(\S+) median=(\S+) max=(\S+) n=(\d+)$", line):
                self.summary[m.group(1)] = {k: float(m.group(j)) for j, k in
                                            ((2, "min"), (3, "median"), (4, "max"), (5, "n"))}
            elif m := re.match(r"^MEASURE SNAP (\S+)$", line):
                save(self.out, f"{m.group(1)}.png", g.screendump())
            elif a.visible and (m := re.match(r"^MEASURE POLL-BASELINE (\d+)$", line)):
                baseline = g.screendump().rgb
            elif a.visible and (m := re.match(r"^MEASURE EXEC (\d+)$", line)) and baseline is not None:
                run = m.group(1)
                t_exec = stamp
                limit = time.monotonic() + 5
                while time.monotonic() < limit:
                    img = g.screendump()
                    if img.rgb != baseline:
                        self.visible[run] = (g.elapsed() - t_exec) * 1000
                        break
                    time.sleep(0.01)
                baseline = None
            elif m := re.match(r"^MEASURE 1 TIMELINE +([0-9.]+) ms (.*)$", line):
                self.timeline.append((float(m.group(1)), m.group(2)))
            elif a.profile and re.match(r"^MEASURE 1 (SMAPS_RSS_KB|MAPPED_FILES|STDERR)", line):
                print(line, flush=True)
            elif re.match(r"^MEASURE \d+ (STDERR|EXIT_STATUS|ALIVE=0)", line):
                print(line, flush=True)
            if m := re.match(r"^MEASURE (\d+) ([A-Z_a-z]+)=(-?[0-9.]+)$", line):
                self.per_run.setdefault(m.group(2), []).append(m.group(3))

    def smaps_profile(self):
        """One more daemon: its memory per mapping (Pss, private clean/dirty, anonymous) after start."""
        g = self.guest
        g.run(f"{DAEMON} </dev/null >/tmp/profile.log 2>&1 & PPID_=$!; sleep 3")
        _, lines = g.run("cat /proc/$PPID_/smaps_rollup")
        for l in lines:
            print(f"smaps_rollup: {l}", flush=True)
        # Per mapping name: Rss, Pss, Private_Clean, Private_Dirty, Anonymous (kB), largest Pss first.
        awk = ("awk '/^[0-9a-f]+-[0-9a-f]+ / { n = ($6 == \"\") ? \"[anon]\" : $6; c[n]++ }"
               " /^(Rss|Pss|Private_Clean|Private_Dirty|Anonymous):/ { v[n, $1] += $2 }"
               " END { for (k in c) printf \"%6d %6d %6d %6d %6d %3d %s\\n\", v[k, \"Rss:\"], v[k, \"Pss:\"],"
               " v[k, \"Private_Clean:\"], v[k, \"Private_Dirty:\"], v[k, \"Anonymous:\"], c[k], k }'"
               " /proc/$PPID_/smaps | sort -k2 -rn | head -40")
        per_mapping = awk
        _, lines = g.run(awk)
        print("smaps:    Rss    Pss  PrivC  PrivD   Anon  #  mapping (kB, after start)", flush=True)
        for l in lines:
            print(f"smaps: {l}", flush=True)
        # The largest anonymous mappings one by one (heap, the shadow buffer, thread stacks).
        awk = ("awk '/^[0-9a-f]+-[0-9a-f]+ / { m = $1; n = $6 } $1 == \"Pss:\" && n == \"\" && $2 > 64"
               " { print \"anon\", m, $2, \"kB\" } $1 == \"Pss:\" && n == \"[heap]\" { print \"heap\", m, $2, \"kB\" }'"
               " /proc/$PPID_/smaps")
        _, lines = g.run(awk)
        for l in lines:
            print(f"smaps: {l}", flush=True)
        g.run("kill $PPID_; wait $PPID_; true")
        # The same with fault-around off: only the pages the daemon itself touched are mapped
        # (the kernel default maps up to 64 kB around each file page fault).
        g.run("mount -t debugfs none /sys/kernel/debug 2>/dev/null; echo 4096 > /sys/kernel/debug/fault_around_bytes")
        g.run(f"sleep 1; {DAEMON} </dev/null >/tmp/profile.log 2>&1 & PPID_=$!; sleep 3")
        _, lines = g.run("grep -E '^(Rss|Pss|Pss_Anon|Pss_File|Pss_Shmem):' /proc/$PPID_/smaps_rollup")
        for l in lines:
            print(f"smaps_rollup (fault-around off): {l}", flush=True)
        _, lines = g.run(per_mapping.replace("head -25", "head -12"))
        for l in lines:
            print(f"smaps (fault-around off): {l}", flush=True)
        g.run("kill $PPID_; wait $PPID_; echo 65536 > /sys/kernel/debug/fault_around_bytes")

    def phases(self):
        """What happens between exec and the first frame (run 1, from the -O timeline)."""
        marks = [("shared libraries loaded", r'path="/lib/x86_64-linux-gnu/[^"]*"'),
                 ("config read", r'touchlock\.conf'),
                 ("DRM card opened", r'path="/dev/dri/card'),
                 ("input devices opened", r'path="/dev/input"'),
                 ("fontconfig starts", r'fonts\.conf'),
                 ("first KMS commit", r'drm_mode_(setcrtc|atomic_ioctl|page_flip)'),
                 ("plane programmed", r'drm_atomic_helper_commit_planes')]
        last = 0.0
        for name, rx in marks:
            hits = [t for t, what in self.timeline if re.search(rx, what)]
            if not hits:
                continue
            t = hits[-1] if name == "shared libraries loaded" else hits[0]
            print(f"measure: start-up run 1: {t:7.1f} ms {name} (+{t - last:.1f})")
            last = t

    def table(self):
        s = self.summary
        scr = re.search(r"screen=(\d+)x(\d+)", self.config)
        w, h = (int(scr.group(1)), int(scr.group(2))) if scr else (0, 0)
        shadow_kb = w * h * 4 // 1024

        def fig(key, field="median", fmt="{:.0f}"):
            return fmt.format(s[key][field]) if key in s else "NA"

        def mmm(key, fmt="{:.0f}"):
            return " / ".join(fig(key, f, fmt) for f in ("min", "median", "max")) if key in s else "NA"

        def mb(kb):
            return f"{kb / 1024:.1f} MB"

        def pss(key):
            if key not in s:
                return "NA"
            p = s[key]["median"]
            return f"{mb(p)} - {mb(shadow_kb)} shadow = {mb(p - shadow_kb)}"

        rows = [
            ("exec -> first frame (ms, min/median/max)", mmm("FIRST_FRAME_MS", "{:.0f}"),
             "<= 125 median", REFERENCE["first_frame"]),
            ("exec -> first KMS commit ioctl (ms)", mmm("FIRST_KMS_IOCTL_MS", "{:.0f}"), "", ""),
            ("Pss after start (median)", pss("START_Pss"), "<= 8 MB without shadow", REFERENCE["pss"]),
            ("Pss after the drag (median)", pss("DRAG_Pss"), "<= 8 MB without shadow", REFERENCE["pss"]),
            ("idle 10 s: wake-ups/s (median)", fig("IDLE_WAKEUPS_PER_S", fmt="{:.2f}")
             + f" ({fig('IDLE_VCSW')} in {fig('IDLE_WINDOW_MS')} ms)", "0", REFERENCE["wakeups"]),
            ("idle 10 s: CPU ms (median, schedstat)", fig("IDLE_CPU_SCHED_MS", fmt="{:.1f}"), "", "116"),
            ("idle 10 s: frames", fig("IDLE_FRAMES"), "0", ""),
            ("2 s drag: CPU ms (min/median/max, schedstat)", mmm("DRAG_CPU_SCHED_MS", "{:.0f}"),
             "<= 150", REFERENCE["drag_cpu"]),
            ("2 s drag: frames drawn (min/median/max)", mmm("DRAG_FRAMES"), "every touch frame (~200)", "5"),
            ("2 s drag: wake-ups/s (median)", fig("DRAG_WAKEUPS_PER_S", fmt="{:.1f}"), "", ""),
            ("executable (bytes)", fig("BIN_BYTES"), "", ""),
            ("mapped shared libraries (count / bytes)", f"{fig('MAPPED_LIB_COUNT')} / {fig('MAPPED_LIB_BYTES')}", "", ""),
        ]
        ff = self.per_run.get("FIRST_FRAME_MS")
        if ff:
            rows.insert(1, ("  first frame per run (ms)", ", ".join(f"{float(x):.0f}" for x in ff), "", ""))
        if self.visible:
            v = sorted(self.visible.values())
            rows.append(("exec line -> changed screendump (ms, host)",
                         " / ".join(f"{x:.0f}" for x in (v[0], v[len(v) // 2], v[-1])), "", ""))
        widths = [max(len(r[i]) for r in rows + [("figure", "touchlockd", "target", "reference")]) for i in range(4)]
        print(f"measure: {self.config}")
        print(f"measure: shadow buffer {w}x{h}x4 = {shadow_kb} kB")
        for r in [("figure", "touchlockd", "target", "reference")] + rows:
            print("measure: " + "  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip())


def main():
    ap = argparse.ArgumentParser(description="touchlockd through the vm-measure protocol under QEMU")
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--ctl", required=True, help="touchlockctl on the host (to hash the pattern)")
    ap.add_argument("--script", default="/usr/share/touchlock-measure/measure-in-guest.sh",
                    help="the protocol script's path in the guest")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".vm", "measure"))
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--runs", type=int, default=3, help="daemon starts (the protocol's -r)")
    ap.add_argument("--protocol-args", default="", help="more measure-in-guest.sh options, e.g. '-i 20'")
    ap.add_argument("--visible", action="store_true",
                    help="also time the first visible frame by polling screendumps (perturbs the guest)")
    ap.add_argument("--profile", action="store_true",
                    help="start-up timeline and memory per mapping (-O) and the daemon's smaps after the runs")
    ap.add_argument("--boot-timeout", type=float, default=30)
    args = ap.parse_args()
    args.protocol_timeout = 60 + args.runs * 90
    args.timeout = args.protocol_timeout + 120          # QEMU's watchdog (run_e2e.Guest)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    pattern_hash = hash_pattern(args.ctl, RIGHT)

    for attempt in (1, 2):
        workdir = tempfile.mkdtemp(prefix="touchlock-measure-")
        with open(os.path.join(out, "console.log"), "w", buffering=1) as log:
            guest = Guest(args, workdir, log)
            guest.append += f" GUEST_TIMEOUT={int(args.timeout)}"
            m = Measure(args, guest, out)
            try:
                m.setup(pattern_hash)
                m.protocol()
                if args.profile:
                    m.smaps_profile()
                break
            except InfraError as e:
                print(f"measure: attempt {attempt}: {e}", flush=True)
                if attempt == 2:
                    return 1
            except CheckFailed as e:
                print(f"measure: FAILED: {e} (console log in {out})", flush=True)
                return 1
            finally:
                guest.quit()
                shutil.rmtree(workdir, ignore_errors=True)
    if args.profile:
        m.phases()
    m.table()
    print(f"measure: every MEASURE line in {out}/measure.log, console in {out}/console.log, screendumps in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
