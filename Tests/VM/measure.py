#!/usr/bin/env python3
"""Runs the VM measurement protocol (measure-in-guest.sh from the shared vm-measure tools) on
touchlockd and, with --reference, on a reference daemon in the same guest boot, and prints both
columns of figures next to the targets.

The guest is the one of run_e2e.py (same kernel, bochs KMS, uinput; /init runs the lines sent
on the serial console). The image must hold touchlockd, touchlockctl, mtool (/usr/bin), the protocol script
(--script) and, with --reference, the reference program (unl0kr, the LVGL-based DRM unlocker;
scripts/vm/build-reference.sh builds it) with its keyboard data (/usr/share/X11/xkb).

The daemons take turns: run i starts touchlockd then the reference, run i + 1 the reference
then touchlockd (the protocol with -r 1 each time), so that both see the same guest state over
the boot. Both get the same screen (-g, the bochs mode 1280x800), the same drag (-p: from the
pattern's first node to its last through the centre, as touchlockd lays them out; asked once
with touchlockctl status, which the image must hold too) and the udev database entries for the
injected touchscreen (-u: the reference finds its devices through libudev; touchlockd ignores
them). The protocol answers its "MEASURE SNAP" requests with QEMU
screendumps (PNG in --out, named after the daemon and its run); with --visible it also times the
first visible frame by polling screendumps between "MEASURE EXEC" and the first changed picture.
--perf adds a profile of the drag (perf record and strace -c, see drag_profile).
--profile adds, after the measured runs, one more touchlockd run with the protocol's start-up
timeline and per-mapping memory (-O), not counted in the figures, and the daemon's smaps summary
(Pss and private memory per mapping).

Figures are the median (and min / max) over the runs of each daemon, from the per-run lines.
Lines "verdict: NAME: met|MISSED|not measured: DETAIL" name each target's outcome.
Every "MEASURE" line is kept in --out/measure.log, the console in --out/console.log and the
figures in --out/figures.json. Python standard library only.
"""
import argparse
import json
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
SCREEN = "1280x800"
STATE = "/tmp/touchlock-state/state"   # in a directory of its own: /tmp is writable by all, and not trusted
# The masks of the lock screen's text, kept beside the state file.
TEXT_IMAGES = "/tmp/touchlock-state/text-images"
# touchlockd with its symbols, for --perf (the image's /usr/bin copy is stripped).
UNSTRIPPED = "/usr/lib/touchlock-measure/touchlockd"
# The reference's own configuration: the DRM backend (its default is fbdev), the rest as shipped.
REFERENCE_CONF = "/tmp/unl0kr.conf"
REFERENCE_CONF_LINES = ["[general]", "backend=drm"]
# The targets of issue 11 (figures in the VM protocol).
TARGET_FIRST_FRAME_MS = 150
TARGET_PSS_APART_MB = 8
TARGET_DRAG_CPU_MS = 200
TARGET_IDLE_WAKEUPS = 0
# The verdict lines: figure -> (name, the start of its table row).
VERDICTS = {"FIRST_FRAME_MS": (f"VM: exec to first frame, median <= {TARGET_FIRST_FRAME_MS} ms", "exec -> first frame"),
            "START_Pss": (f"VM: Pss after start apart from the shadow buffer <= {TARGET_PSS_APART_MB} MB", "Pss after start"),
            "IDLE_WAKEUPS_PER_S": ("VM: idle wake-ups 0", "idle 10 s: wake-ups/s"),
            "DRAG_CPU_SCHED_MS": (f"VM: CPU for the 2 s drag <= {TARGET_DRAG_CPU_MS} ms, drawing every change",
                                  "2 s drag: CPU ms")}


def stats(values):
    v = sorted(values)
    n = len(v)
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    return {"min": v[0], "median": med, "max": v[-1], "n": n, "values": values}


class Measure:
    def __init__(self, args, guest, out):
        self.args, self.guest, self.out = args, guest, out
        self.daemons = [("touchlockd", DAEMON)]
        if args.reference:
            self.daemons.append((os.path.basename(args.reference.split()[0]), f"{args.reference} -C {REFERENCE_CONF}"))
        self.config = {}         # label -> the protocol's CONFIG line
        self.per_run = {}        # label -> key -> [value per run]
        self.visible = {}        # label -> [ms from the EXEC line to a changed screendump]
        self.problems = {}       # label -> [STDERR / EXIT_STATUS / ALIVE=0 lines]
        self.runs = {}           # label -> runs done
        self.path = ""           # the drag: "X0 Y0 X1 Y1"
        self.timeline = []       # (ms after exec, what) of the profile run
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
        _, modes = g.run("cat /sys/class/drm/card0-*/modes | head -n1")
        if not modes or modes[0].strip() != SCREEN:
            raise InfraError(f"the bochs display's first mode is {modes[:1]}, want {SCREEN}")
        conf = ["pattern_hash = " + pattern_hash, "socket = " + SOCKET, "state_file = " + STATE]
        g.run("mkdir -p /run/touchlock && printf '%s\\n' " + " ".join(f"'{c}'" for c in conf) + f" >{CONF}")
        self.drag_path()
        if self.args.reference:
            g.run("printf '%s\\n' " + " ".join(f"'{c}'" for c in REFERENCE_CONF_LINES) + f" >{REFERENCE_CONF}")

    def drag_path(self):
        """The drag of every run: from the pattern's first node to its last through the centre one,
        as touchlockd lays them out on this screen (asked once over its socket, before the runs;
        its state file, the masks of its text and fontconfig's cache are removed after, so run 1
        starts as cold as a first start after installing; the runs after it find the masks run 1
        kept, as every later start does)."""
        g = self.guest
        g.run(f"{DAEMON} </dev/null >/tmp/layout.log 2>&1 & LPID=$!")
        g.run(f"i=0; while [ ! -S {SOCKET} ] && [ $i -lt 200 ]; do usleep 50000; i=$((i+1)); done; test -S {SOCKET}")
        _, lines = g.run(f"touchlockctl --socket {SOCKET} status --json </dev/null")
        g.run(f"kill $LPID; wait $LPID; rm -rf {STATE} {TEXT_IMAGES} /tmp/cache /tmp/fontconfig; true")
        for l in lines:
            try:
                status = json.loads(l)
            except ValueError:
                continue
            if isinstance(status, dict) and "pattern" in status:
                nodes = status["pattern"]["nodes"]
                (x0, y0), (x1, y1) = nodes[0], nodes[-1]
                self.path = f"{x0:.0f} {y0:.0f} {x1:.0f} {y1:.0f}"
                return
        raise CheckFailed("no pattern layout from touchlockctl status: " + " | ".join(lines))

    def protocol(self, label, cmd, runs=1, profile=False):
        a = self.args
        if label == "touchlockd":
            # No failures carried over from the run before: the drag ends as a wrong attempt.
            self.guest.run(f"rm -f {STATE}")
        opts = f"-r {runs} -g {SCREEN} -u -l {label} -p '{self.path}'" + (" -O" if profile else "") \
            + (f" {a.protocol_args}" if a.protocol_args else "")
        line = f"MTOOL=/usr/bin/mtool sh {a.script} {opts} -- {cmd} </dev/null"
        g = self.guest
        since = g.mark()
        g.send(line)
        baseline = None
        i = since
        deadline = time.monotonic() + 60 + runs * 90
        first = self.runs.get(label, 0)
        while True:
            with g.cond:
                while i >= len(g.lines) and not g.closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise CheckFailed(f"the protocol on {label} did not finish in time")
                    g.cond.wait(left)
                if i >= len(g.lines):
                    raise InfraError(g._death("the protocol"))
                stamp, line = g.lines[i]
            i += 1
            m = re.match(r"^@@rc (\d+)$", line)
            if m:
                if m.group(1) != "0":
                    raise CheckFailed(f"measure-in-guest.sh on {label} exited {m.group(1)}")
                if not profile:
                    self.runs[label] = first + runs
                return
            if not line.startswith("MEASURE"):
                continue
            self.mlog.write(line + "\n")
            if line.startswith("MEASURE ERROR"):
                raise CheckFailed(line)
            if m := re.match(r"^MEASURE CONFIG (.*)$", line):
                self.config.setdefault(label, m.group(1))
            elif m := re.match(r"^MEASURE SNAP r(\d+)-(\S+)$", line):
                tag = "profile" if profile else str(first + int(m.group(1)))
                save(self.out, f"{label}-{tag}-{m.group(2)}.png", g.screendump())
            elif a.visible and not profile and re.match(r"^MEASURE POLL-BASELINE (\d+)$", line):
                baseline = g.screendump().rgb
            elif a.visible and not profile and re.match(r"^MEASURE EXEC (\d+)$", line) and baseline is not None:
                t_exec = stamp
                limit = time.monotonic() + 5
                while time.monotonic() < limit:
                    if g.screendump().rgb != baseline:
                        self.visible.setdefault(label, []).append((g.elapsed() - t_exec) * 1000)
                        break
                    time.sleep(0.01)
                baseline = None
            elif m := re.match(r"^MEASURE 1 TIMELINE +([0-9.]+) ms (.*)$", line):
                if profile:
                    self.timeline.append((float(m.group(1)), m.group(2)))
            elif profile and re.match(r"^MEASURE 1 (SMAPS_RSS_KB|MAPPED_FILES|STDERR)", line):
                print(line, flush=True)
            elif re.match(r"^MEASURE \d+ (STDERR:|EXIT_STATUS=[^0]|ALIVE=0)", line):
                self.problems.setdefault(label, []).append(line)
                print(f"measure: {label}: {line}", flush=True)
            if not profile and (m := re.match(r"^MEASURE (\d+) ([A-Z_a-z]+)=(-?[0-9.]+)$", line)):
                self.per_run.setdefault(label, {}).setdefault(m.group(2), []).append(float(m.group(3)))

    def interleaved(self):
        """runs x each daemon, taking turns (ABBA...)."""
        for i in range(self.args.runs):
            order = self.daemons if i % 2 == 0 else list(reversed(self.daemons))
            for label, cmd in order:
                print(f"measure: run {i + 1}/{self.args.runs}: {label}", flush=True)
                self.protocol(label, cmd)

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

    def drag_profile(self):
        """Where the drag's CPU goes inside the guest: the protocol's drag played on a daemon
        built with its symbols (UNSTRIPPED, put in the image by measure.sh --perf), once to
        warm up, once under `perf record -g` (cpu-clock: the emulated CPU has no counters) and
        once under `strace -c`; the report's shares by object and by function, and the
        syscalls, are printed."""
        g = self.guest
        w, h = SCREEN.split("x")
        g.run(f"cp {UNSTRIPPED} /tmp/touchlockd-symbols && chmod 755 /tmp/touchlockd-symbols && rm -f {STATE}")
        g.run("rm -f /run/measure-perf.cmd /run/measure-perf.ack; mkfifo /run/measure-perf.cmd /run/measure-perf.ack")
        g.run(f"mtool touchd {w} {h} /run/measure-perf.cmd /run/measure-perf.ack & PTPID=$!;"
              " exec 4> /run/measure-perf.cmd; echo node >&4; read -r ACK < /run/measure-perf.ack")
        g.run(f"/tmp/touchlockd-symbols -C {CONF} --display drm --input evdev </dev/null >/tmp/perf-daemon.log 2>&1 &"
              " PDPID=$!; sleep 3")
        drag = f"echo 'drag {self.path} 2000 10' >&4; read -r ACK < /run/measure-perf.ack; sleep 0.5"
        g.run(drag, timeout=120)
        g.run("perf record -F 4000 -g -o /tmp/drag.perf -p $PDPID >/tmp/perf.log 2>&1 & RPID=$!; sleep 1")
        g.run(drag, timeout=120)
        g.run("kill -INT $RPID; wait $RPID; true", timeout=120)
        report = "perf report -i /tmp/drag.perf --stdio --no-children -g none"
        for what, cmd in [("by object", f"{report} --sort dso"), ("by function", f"{report} --sort dso,sym")]:
            _, lines = g.run(f"{cmd} 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40", timeout=300)
            print(f"perf: the drag's samples {what} (%)", flush=True)
            for l in lines:
                print(f"perf: {l.rstrip()}", flush=True)
        g.run("strace -c -o /tmp/drag.strace -p $PDPID & SPID=$!; sleep 1")
        g.run(drag, timeout=120)
        g.run("kill -INT $SPID; wait $SPID; true", timeout=60)
        _, lines = g.run("cat /tmp/drag.strace")
        print("strace: the drag's syscalls", flush=True)
        for l in lines:
            print(f"strace: {l.rstrip()}", flush=True)
        g.run("kill $PDPID $PTPID; wait $PDPID $PTPID; exec 4>&-; true")

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

    def summary(self, label):
        return {k: stats(v) for k, v in self.per_run.get(label, {}).items()}

    def table(self):
        scr = re.search(r"screen=(\d+)x(\d+)", self.config.get("touchlockd", ""))
        w, h = (int(scr.group(1)), int(scr.group(2))) if scr else (0, 0)
        shadow_kb = w * h * 4 // 1024
        ref = self.daemons[1][0] if len(self.daemons) > 1 else None
        tl = self.summary("touchlockd")
        rs = self.summary(ref) if ref else {}

        def fig(s, key, field="median", fmt="{:.0f}"):
            return fmt.format(s[key][field]) if key in s else "NA"

        def mmm(s, key, fmt="{:.0f}"):
            if key not in s:
                return "NA"
            return f"{fig(s, key, 'median', fmt)} ({fig(s, key, 'min', fmt)} - {fig(s, key, 'max', fmt)})"

        def mb(kb):
            return f"{kb / 1024:.1f} MB"

        def pss_apart(s, key):
            if key not in s:
                return "NA"
            p = s[key]["median"]
            return f"{mb(p)} - {mb(shadow_kb)} shadow = {mb(p - shadow_kb)}"

        def pss_whole(s, key):
            return f"{mb(s[key]['median'])} (whole process)" if key in s else "NA"

        def both(fn, *a):
            return fn(tl, *a), (fn(rs, *a) if ref else "not measured")

        def verdict(key, field, limit):
            if key not in tl:
                return "not measured"
            return "met" if tl[key][field] <= limit else "MISSED"

        rows = [
            ("exec -> first frame, ms: median (min - max)", *both(mmm, "FIRST_FRAME_MS"),
             f"<= {TARGET_FIRST_FRAME_MS}", verdict("FIRST_FRAME_MS", "median", TARGET_FIRST_FRAME_MS)),
            ("exec -> first KMS commit ioctl, ms", *both(mmm, "FIRST_KMS_IOCTL_MS"), "", ""),
            ("Pss after start", pss_apart(tl, "START_Pss"), pss_whole(rs, "START_Pss") if ref else "not measured",
             f"<= {TARGET_PSS_APART_MB} MB apart from the shadow",
             verdict("START_Pss", "median", TARGET_PSS_APART_MB * 1024 + shadow_kb)),
            ("Pss after the drag", pss_apart(tl, "DRAG_Pss"), pss_whole(rs, "DRAG_Pss") if ref else "not measured",
             f"<= {TARGET_PSS_APART_MB} MB apart from the shadow",
             verdict("DRAG_Pss", "median", TARGET_PSS_APART_MB * 1024 + shadow_kb)),
            ("private memory after start (RssAnon), kB", *both(fig, "START_RssAnon"), "", ""),
            ("idle 10 s: wake-ups/s", *both(fig, "IDLE_WAKEUPS_PER_S", "median", "{:.2f}"),
             str(TARGET_IDLE_WAKEUPS), verdict("IDLE_WAKEUPS_PER_S", "median", TARGET_IDLE_WAKEUPS)),
            ("idle 10 s: CPU ms (schedstat)", *both(fig, "IDLE_CPU_SCHED_MS", "median", "{:.1f}"), "", ""),
            ("idle 10 s: frames", *both(fig, "IDLE_FRAMES"), "0", ""),
            ("2 s drag: CPU ms (schedstat): median (min - max)", *both(mmm, "DRAG_CPU_SCHED_MS"),
             f"<= {TARGET_DRAG_CPU_MS}", verdict("DRAG_CPU_SCHED_MS", "median", TARGET_DRAG_CPU_MS)),
            ("2 s drag: frames shown: median (min - max)", *both(mmm, "DRAG_FRAMES"),
             "every change of the touch reports", ""),
            ("2 s drag: wake-ups/s", *both(fig, "DRAG_WAKEUPS_PER_S", "median", "{:.1f}"), "", ""),
            ("executable, bytes", *both(fig, "BIN_BYTES"), "", ""),
            ("mapped shared libraries: count / bytes",
             f"{fig(tl, 'MAPPED_LIB_COUNT')} / {fig(tl, 'MAPPED_LIB_BYTES')}",
             f"{fig(rs, 'MAPPED_LIB_COUNT')} / {fig(rs, 'MAPPED_LIB_BYTES')}" if ref else "not measured", "", ""),
            ("first frame per run, ms",
             ", ".join(f"{x:.0f}" for x in tl.get("FIRST_FRAME_MS", {}).get("values", [])),
             ", ".join(f"{x:.0f}" for x in rs.get("FIRST_FRAME_MS", {}).get("values", [])) if ref else "", "", ""),
        ]
        for label, col in (("touchlockd", 1), (ref, 2)):
            v = sorted(self.visible.get(label, []) if label else [])
            if v:
                cells = ["", "", "", "", ""]
                cells[0] = "exec line -> changed screendump, ms (host)"
                cells[col] = " / ".join(f"{x:.0f}" for x in (v[0], v[len(v) // 2], v[-1]))
                rows.append(tuple(cells))
        head = ("figure", "touchlockd", ref or "reference", "target", "")
        n_tl, n_ref = self.runs.get("touchlockd", 0), self.runs.get(ref, 0) if ref else 0
        print(f"measure: {n_tl} runs of touchlockd" + (f" and {n_ref} of {ref}, taking turns in one boot" if ref
              else "; no reference daemon given (--reference): its column is not measured")
              + f"; shadow buffer {w}x{h}x4 = {shadow_kb} kB. The protocol's settings:")
        print("measure:")
        for label, _ in self.daemons:
            print(f"measure:     {self.config.get(label, label + ': no CONFIG line')}")
        print("measure:")
        print("measure: | " + " | ".join(head) + " |")
        print("measure: | " + " | ".join("---" for _ in head) + " |")
        for r in rows:
            print("measure: | " + " | ".join(r) + " |")
        print("measure:")
        for key, (name, start) in VERDICTS.items():
            row = next(r for r in rows if r[0].startswith(start))
            print(f"verdict: {name}: {row[4]}: touchlockd {row[1]}; {ref or 'reference'} {row[2]}")
        figures = {"config": self.config, "shadow_kb": shadow_kb, "reference": ref,
                   "daemons": {label: self.summary(label) for label, _ in self.daemons},
                   "visible_ms": self.visible, "problems": self.problems}
        with open(os.path.join(self.out, "figures.json"), "w") as f:
            json.dump(figures, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description="touchlockd beside a reference daemon through the vm-measure protocol under QEMU")
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--ctl", required=True, help="touchlockctl on the host (to hash the pattern)")
    ap.add_argument("--script", default="/usr/share/touchlock-measure/measure-in-guest.sh",
                    help="the protocol script's path in the guest")
    ap.add_argument("--reference", default="",
                    help="the reference daemon's command in the guest (e.g. unl0kr); its column says"
                         " 'not measured' without it")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".vm", "measure"))
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--runs", type=int, default=3, help="daemon starts of each daemon")
    ap.add_argument("--protocol-args", default="", help="more measure-in-guest.sh options, e.g. '-i 20'")
    ap.add_argument("--visible", action="store_true",
                    help="also time the first visible frame by polling screendumps (perturbs the guest)")
    ap.add_argument("--profile", action="store_true",
                    help="one more touchlockd run with the start-up timeline and memory per mapping (-O),"
                         " and its smaps after start")
    ap.add_argument("--perf", action="store_true",
                    help="after the runs, where the drag's CPU goes: perf record and strace -c of a"
                         " daemon with its symbols over the same drag (the image must hold perf, strace"
                         f" and {UNSTRIPPED}: measure.sh --perf puts them in)")
    ap.add_argument("--boot-timeout", type=float, default=30)
    args = ap.parse_args()
    daemons = 2 if args.reference else 1
    args.timeout = 180 + (args.runs * daemons + (2 if args.profile else 0) + (6 if args.perf else 0)) * 90   # QEMU's watchdog (run_e2e.Guest)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".png") or f == "figures.json":
            os.remove(os.path.join(out, f))
    pattern_hash = hash_pattern(args.ctl, RIGHT)

    for attempt in (1, 2):
        workdir = tempfile.mkdtemp(prefix="touchlock-measure-")
        with open(os.path.join(out, "console.log"), "w", buffering=1) as log:
            guest = Guest(args, workdir, log)
            guest.append += f" GUEST_TIMEOUT={int(args.timeout)}"
            m = Measure(args, guest, out)
            try:
                m.setup(pattern_hash)
                m.interleaved()
                if args.profile:
                    m.protocol("touchlockd", DAEMON, profile=True)
                    m.smaps_profile()
                if args.perf:
                    m.drag_profile()
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
