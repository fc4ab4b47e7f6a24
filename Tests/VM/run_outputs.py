#!/usr/bin/env python3
"""Several outputs, display hotplug and losing the display, on a real kernel: Debian's
kernel under QEMU with `-device virtio-gpu-pci,max_outputs=2` (the virtio_gpu driver, two
connectors Virtual-1 and Virtual-2) and a uinput touchscreen, checked through status and
QEMU's `screendump` of each head (HMP: `screendump FILE gpu HEAD`).

QEMU without a window reports only the first head connected, and has no command to plug
or unplug a head at run time (only a window resize does, through the display's UI). The
guest forces the second head on and off through /sys/class/drm/card0-Virtual-2/status;
virtio_gpu sends no uevent for a forced connector (it does not poll), so the guest then
writes "change" to /sys/class/drm/card0/uevent: the kernel sends the card's change uevent
on the netlink socket, where touchlockd reads it and probes the connectors.

  (s1) two outputs  with Virtual-2 forced on before the start, status lists both active,
                    each with its own size, and each head's screendump shows the lock screen
                    (the idle nodes where that output's status places them);
  (s2) unplug       Virtual-2 forced off: the daemon tears it down (hotplug uevent) and
                    status lists one output;
  (s3) plug         forced on again: the daemon sets it up again and head 1 shows the lock
                    screen;
  (s4) unlock       the pattern drawn on the panel, which `[input] output = Virtual-2` puts on
                    the second head (its touches in Virtual-2's layout, moved to the same
                    nodes of the lock screen, which takes input in Virtual-1's), unlocks: both heads
                    are handed over (no node left on either), status says handed_over;
  (s5) master loss  another process (drmmaster) takes DRM master: `lock` is refused with
                    display_busy and status lists the outputs inactive, reason master_lost;
                    once it lets go, `lock` brings the lock screen back on both heads;
  (s6) panel quirk  a second panel (a clone of the 3M 22" one), which its quirk
                    `input_quirk = 0596:0502 output=Virtual-1` puts on the first head whatever
                    `[input] output` says, unlocks with the pattern drawn in Virtual-1's layout.

Python standard library only; shares the guest and the pixel checks with run_e2e.py.
"""
import argparse
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_e2e import (RIGHT, run_in_guest, CheckFailed, Run, hash_pattern, inject,  # noqa: E402
                     poll_screen, sample_points, save, stroke)

SOCKET = "/run/touchlock/outputs.sock"
STATUS2 = "/sys/class/drm/card0-Virtual-2/status"


class Outputs(Run):
    CHECKS = ["(s1) both outputs show the lock screen", "(s2) unplugging Virtual-2 tears it down",
              "(s3) plugging it again shows the lock screen on it", "(s4) a pattern on the panel unlocks both",
              "(s5) master taken by another process: inactive, then lock brings the screen back",
              "(s6) a second panel quirked to Virtual-1 unlocks in its layout"]

    def status(self, guest):
        _, lines = guest.run(f"touchlockctl --socket {SOCKET} status --json </dev/null")
        for l in lines:
            try:
                obj = json.loads(l)
            except ValueError:
                continue
            if isinstance(obj, dict) and "state" in obj:
                return obj
        raise CheckFailed("no status JSON: " + " | ".join(lines))

    def outputs(self, guest, want, timeout=20):
        """Waits until status lists `want` outputs; returns them by name."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.status(guest)
            outs = {o["name"]: o for o in st.get("outputs", [])}
            if len(outs) == want:
                return st, outs
            if time.monotonic() > deadline:
                raise CheckFailed(f"status lists {len(outs)} outputs, want {want}: {json.dumps(st.get('outputs'))}")
            time.sleep(0.2)

    def run_checks(self, guest, out, pattern_hash):
        self.expect_checks(self.CHECKS)
        self.boot(guest)
        guest.run(f"echo on > {STATUS2}")
        node = self.start_injector(guest)
        conf = ["pattern_hash = " + pattern_hash, "socket = " + SOCKET, "[input]", "output = Virtual-2",
                "quirk = 0596:0502 output=Virtual-1"]
        guest.run("mkdir -p /run/touchlock && printf '%s\\n' " + " ".join(f"'{c}'" for c in conf)
                  + " >/tmp/outputs.conf")
        since = guest.mark()
        guest.run("touchlockd -C /tmp/outputs.conf --display drm --input evdev </dev/null"
                  " >/dev/console 2>&1 & DPID=$!; echo \"wait-open $DPID\" >&3")
        guest.expect(r"first frame shown", 40, since, what="the daemon's first frame")
        guest.expect(r"^opened " + re.escape(node), 15, since, what="the daemon opening the touchscreen")
        guest.run(f"i=0; while [ ! -S {SOCKET} ] && [ $i -lt 200 ]; do usleep 50000; i=$((i+1)); done; test -S {SOCKET}")
        nodes = {}

        def both(mode, timeout=10, names=("Virtual-1", "Virtual-2")):
            shots = {}
            for head, name in enumerate(names):
                shots[name] = poll_screen(guest, nodes[name], RIGHT, mode, timeout, head=head)
            return shots

        def two():
            st, outs = self.outputs(guest, 2)
            for name in ("Virtual-1", "Virtual-2"):
                o = outs.get(name)
                if not o or o["state"] != "active" or not o.get("pattern"):
                    raise CheckFailed(f"{name} in status: {json.dumps(o)}")
                nodes[name] = [tuple(p) for p in o["pattern"]["nodes"]]
            sizes = {n: (o["screen"]["width"], o["screen"]["height"]) for n, o in outs.items()}
            print(f"vm-outputs: outputs {sizes}", flush=True)
            shots = both("idle", 15)
            for name, img in shots.items():
                if (img.width, img.height) != sizes[name]:
                    raise CheckFailed(f"{name}'s head is {img.width}x{img.height}, status says {sizes[name]}")
                save(out, f"output-{name}.png", img)
            w, h = sizes["Virtual-2"]
            guest.run(f"echo 'size {w} {h}' >&3")

        def unplug():
            since = guest.mark()
            guest.run(f"echo off > {STATUS2} && echo change > /sys/class/drm/card0/uevent")
            guest.expect(r"Virtual-2 disconnected", 15, since, what="the daemon seeing Virtual-2 unplugged")
            guest.expect(r"Virtual-2 released", 15, since, what="Virtual-2 torn down")
            _, outs = self.outputs(guest, 1)
            if outs["Virtual-1"]["state"] != "active":
                raise CheckFailed(f"Virtual-1 after the unplug: {json.dumps(outs['Virtual-1'])}")

        def plug():
            since = guest.mark()
            guest.run(f"echo on > {STATUS2} && echo change > /sys/class/drm/card0/uevent")
            guest.expect(r"Virtual-2 \d+x\d+@\d+Hz on CRTC", 15, since, what="Virtual-2 set up again")
            _, outs = self.outputs(guest, 2)
            nodes["Virtual-2"] = [tuple(p) for p in outs["Virtual-2"]["pattern"]["nodes"]]
            save(out, "output-Virtual-2-replugged.png", poll_screen(guest, nodes["Virtual-2"], RIGHT, "idle", 15, head=1))

        def unlock():
            since = guest.mark()
            guest.run(f"touchlockctl --socket {SOCKET} subscribe </dev/null >/dev/console 2>&1 &")
            time.sleep(0.5)
            guest.expect(r"belongs to output Virtual-2", 1, 0, what="the panel placed on Virtual-2")
            inject(guest, stroke(nodes["Virtual-2"], RIGHT, lift=True), "@@outputs-unlock")
            guest.expect(r'"event"\s*:\s*"unlocked"', 10, since, what="the unlocked event")
            guest.expect(r"DRM master dropped", 10, since, what="DRM master dropped once both are handed over")
            for head, name in enumerate(("Virtual-1", "Virtual-2")):
                img = guest.screendump(head)
                left = [label for label, x, y, _ in sample_points(nodes[name], RIGHT)
                        if img.classify(x, y)[0] != "background"]
                if left:
                    raise CheckFailed(f"{name} after the unlock still shows {', '.join(left)}")
                save(out, f"handed-over-{name}.png", img)
            st = self.status(guest)
            states = {o["name"]: o["state"] for o in st["outputs"]}
            if st["state"] != "unlocked" or set(states.values()) != {"handed_over"}:
                raise CheckFailed(f"status after the unlock: {st['state']}, outputs {states}")

        def master():
            guest.run("mkfifo /tmp/master && exec 5<>/tmp/master")
            since = guest.mark()
            guest.run("drmmaster /dev/dri/card0 </tmp/master >/dev/console 2>&1 &")
            guest.expect(r"^master taken$", 10, since, what="drmmaster taking DRM master")
            rc, lines = guest.run(f"touchlockctl --socket {SOCKET} lock </dev/null", timeout=30, check=False)
            if rc == 0:
                raise CheckFailed("lock succeeded while another process holds DRM master: " + " | ".join(lines))
            if not any("display_busy" in l or "another process" in l or "display" in l for l in lines):
                raise CheckFailed("lock refused without saying why: " + " | ".join(lines))
            st = self.status(guest)
            lost = {o["name"]: (o["state"], o.get("reason")) for o in st["outputs"]}
            print(f"vm-outputs: while another process holds master: display {st.get('display')}, outputs {lost}", flush=True)
            if st.get("display") != "not_shown":
                raise CheckFailed(f"display is {st.get('display')} while the outputs are lost, want not_shown")
            if ("inactive", "master_lost") not in lost.values():
                raise CheckFailed(f"status does not report an output inactive for master_lost: {json.dumps(st['outputs'])}")
            since = guest.mark()
            guest.run("echo drop >&5")
            guest.expect(r"^master dropped$", 10, since, what="drmmaster letting go")
            guest.run(f"touchlockctl --socket {SOCKET} lock </dev/null", timeout=30)
            shots = both("idle", 15)
            for name, img in shots.items():
                save(out, f"relocked-{name}.png", img)
            st = self.status(guest)
            states = {o["name"]: o["state"] for o in st["outputs"]}
            if st.get("display") != "shown" or set(states.values()) != {"active"}:
                raise CheckFailed(f"after lock: display {st.get('display')}, outputs {states}")

        def quirked():
            since = guest.mark()
            guest.run("mkfifo /tmp/inject2 && exec 4<>/tmp/inject2")
            guest.run("touchinject --desc /usr/share/touchlock-test/3m-microtouch-0596-0502-22in.desc"
                      " </tmp/inject2 3>&- >/dev/console 2>&1 &")
            m, _, _ = guest.expect(r"^device (/dev/input/event\d+)$", 10, since, what="the second uinput device")
            guest.run("echo \"wait-open $DPID\" >&4")
            guest.expect(r"^opened " + re.escape(m.group(1)), 15, since, what="the daemon adopting the second panel")
            guest.expect(r"\(3M-3M-MicroTouch-USB-controller Virtual Device\) belongs to output Virtual-1", 5, since,
                         what="the second panel placed on Virtual-1 by its quirk")
            _, outs = self.outputs(guest, 2)
            o = outs["Virtual-1"]
            nodes["Virtual-1"] = [tuple(p) for p in o["pattern"]["nodes"]]
            guest.run(f"echo 'size {o['screen']['width']} {o['screen']['height']}' >&4")
            since = guest.mark()
            guest.run(f"touchlockctl --socket {SOCKET} subscribe </dev/null >/dev/console 2>&1 &")
            time.sleep(0.5)
            inject(guest, stroke(nodes["Virtual-1"], RIGHT, lift=True), "@@outputs-quirked", fd=4)
            guest.expect(r'"event"\s*:\s*"unlocked"', 10, since, what="the unlocked event")
            st = self.status(guest)
            if st["state"] != "unlocked":
                raise CheckFailed(f"status after the pattern on the second panel: {st['state']}")

        for name, fn in zip(self.CHECKS, (two, unplug, plug, unlock, master, quirked)):
            self.record(name, fn)


def main():
    ap = argparse.ArgumentParser(description="touchlock outputs test under QEMU (virtio-gpu, two heads)")
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--ctl", required=True, help="touchlockctl on the host (to hash the test pattern)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".vm", "out"))
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--timeout", type=float, default=240, help="seconds before QEMU is killed")
    ap.add_argument("--boot-timeout", type=float, default=60)
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    pattern_hash = hash_pattern(args.ctl, RIGHT)
    def configure(guest):
        guest.display_device = "virtio-gpu-pci,max_outputs=2,id=gpu"
        guest.memory = "1024"
        guest.append += " GUEST_TIMEOUT=300"
    results = run_in_guest("outputs", args, out, pattern_hash, Outputs, configure)
    if results is None:
        return 1
    passed = sum(1 for p in results.values() if p is None)
    failed = len(results) - passed
    print(f"vm-outputs: screenshots and console log in {out}")
    print(f"vm-outputs: {passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
