#!/usr/bin/env python3
"""Two DRM cards, on a real kernel: Debian's kernel under QEMU with two display devices,
`-device bochs-display,id=bochs` (the bochs driver, card0) and `-device virtio-gpu-pci,id=gpu`
(virtio_gpu, card1), as a Raspberry Pi 5 has its DSI panel on one KMS device and HDMI on
another. "The app" is Tests/VM/drmfill.c on each card: DRM master, a magenta picture on the
card's first output. Checked through status and QEMU's `screendump FILE DEVICE` of each
device.

  (k1) the app      drmfill shows magenta on both cards (then lets master go, as a
                    compositor does when its VT is switched away);
  (k2) lock         touchlockd, started locked, covers both cards: status lists an output
                    on card0 and one on card1, each device's screendump shows the lock
                    screen (the idle nodes where status places them on that output) and not
                    one magenta pixel;
  (k3) card gone    virtio_gpu unbound from its device while locked: the card goes away, the
                    daemon drops it (status lists card0's output only, still shown); bound
                    again: the card appears late, the daemon adopts it and the lock screen is
                    on it again;
  (k4) unlock       the pattern drawn on the panel unlocks: DRM master is dropped on both
                    cards and status says handed_over for both; the app takes master on each
                    again (the one on the card that came back is started again: its card is a
                    new device) and magenta is shown on both devices;
  (k5) late, unlocked  the app on the virtio card ends, the card is unbound and bound
                    again while unlocked: the daemon adopts it and drops DRM master on it
                    at once (status: handed_over), and the app started on it takes master
                    and shows magenta;
  (k6) swapped      the apps and the daemon end, both drivers let their devices go and
                    bind again the other way round (virtio-gpu card0, bochs card1, as two
                    drivers may bind in either order at boot): the daemon started again
                    (unlocked before, so both cards handed over) covers both cards, and
                    `lock` shows the lock screen on each device;
  (k7) pinned       the daemon stopped and started with `[display] device` naming bochs's
                    card by a /dev/dri/by-path link (made by hand: no udev here): status
                    lists that card's output alone, locked and shown, card0 is not opened.

Python standard library only; shares the guest and the pixel checks with run_e2e.py.
Run by scripts/vm/e2e.sh --outputs after Tests/VM/run_outputs.py.
"""
import argparse
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_e2e import (RIGHT, run_in_guest, CheckFailed, Image, InfraError, Run, hash_pattern, inject,  # noqa: E402
                     save, stroke, verify)

SOCKET = "/run/touchlock/cards.sock"
APP = "ff00ff"
# QEMU's device ids, by the driver of each card's device (virtio_gpu's card is on the PCI
# device, whose driver is virtio-pci; virtio_gpu binds the virtio device below it).
DEVICES = {"bochs-drm": "bochs", "virtio-pci": "gpu"}


def magenta(img):
    """The share of the picture's pixels that are the app's colour (within 40 per channel)."""
    r, g, b = img.rgb[0::3], img.rgb[1::3], img.rgb[2::3]
    n = sum(1 for x, y, z in zip(r, g, b) if x > 215 and y < 40 and z > 215)
    return n / (img.width * img.height)


class Cards(Run):
    CHECKS = ["(k1) the app shows its colour on both cards",
              "(k2) touchlockd covers both cards: the lock screen on each, nothing of the app",
              "(k3) a card that goes away is dropped, and adopted again when it comes back",
              "(k4) the pattern unlocks: both cards handed back, the app shown on both again",
              "(k5) a card that appears while unlocked is adopted handed over: the app takes it",
              "(k6) a restart with the card numbers swapped covers both cards again",
              "(k7) [display] device pins one card by a stable link"]

    def screendump(self, guest, device):
        """The picture of one QEMU display device (HMP: screendump FILE DEVICE)."""
        if guest.monitor is None:
            guest.connect_monitor()
        guest.dumps += 1
        path = os.path.join(guest.workdir, f"dump{guest.dumps}.ppm")
        guest.prompts += 1
        try:
            guest.monitor.sendall(f"screendump {path} {device}\n".encode())
            guest._monitor_read_prompt(guest.prompts)
        except OSError as e:
            raise InfraError(f"screendump through the monitor failed: {e}")
        with open(path, "rb") as f:
            data = f.read()
        os.unlink(path)
        return Image.from_ppm(data)

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

    def outputs(self, guest, cards, timeout=20):
        """Waits until status lists one output on each of `cards` and no other; returns
        status and the outputs by card."""
        deadline = time.monotonic() + timeout
        while True:
            st = self.status(guest)
            outs = {o.get("card"): o for o in st.get("outputs", [])}
            if sorted(outs) == sorted(cards) and len(st.get("outputs", [])) == len(cards):
                return st, outs
            if time.monotonic() > deadline:
                raise CheckFailed(f"status lists outputs {json.dumps(st.get('outputs'))}, want one on each of {cards}")
            time.sleep(0.2)

    def device_of(self, guest, card):
        """QEMU's id of the device card (card0) is on, by the driver bound to it."""
        _, lines = guest.run(f"basename $(readlink /sys/class/drm/{card}/device/driver)")
        driver = lines[-1].strip() if lines else ""
        if driver not in DEVICES:
            raise CheckFailed(f"{card}'s device is driven by '{driver}', not by bochs-drm or virtio-pci")
        return DEVICES[driver]

    def poll_lock(self, guest, device, nodes, timeout=15):
        """Screendumps of `device` until the idle lock screen is at `nodes`; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            img = self.screendump(guest, device)
            problems = verify(img, nodes, RIGHT, "idle")
            if not problems:
                return img
            if time.monotonic() > deadline:
                raise CheckFailed(f"{device}: no lock screen after {timeout} s: " + "; ".join(problems))
            time.sleep(0.1)

    def poll_app(self, guest, device, timeout=15):
        deadline = time.monotonic() + timeout
        while True:
            img = self.screendump(guest, device)
            share = magenta(img)
            if share > 0.95:
                return img, share
            if time.monotonic() > deadline:
                raise CheckFailed(f"{device}: the app's colour covers {share:.1%} of the picture after {timeout} s")
            time.sleep(0.1)

    def run_checks(self, guest, out, pattern_hash):
        self.expect_checks(self.CHECKS)
        self.boot(guest)
        guest.run("test -c /dev/dri/card0 && test -c /dev/dri/card1")
        devices = {c: self.device_of(guest, c) for c in ("card0", "card1")}
        print(f"vm-cards: devices {devices}", flush=True)
        node = self.start_injector(guest)
        conf = ["pattern_hash = " + pattern_hash, "socket = " + SOCKET]
        guest.run("mkdir -p /run/touchlock && printf '%s\\n' " + " ".join(f"'{c}'" for c in conf)
                  + " >/tmp/cards.conf")
        guest.run("mkfifo /tmp/app0 /tmp/app1 && exec 5<>/tmp/app0 6<>/tmp/app1")
        state = {}

        def app():
            for card, fd in (("card0", 5), ("card1", 6)):
                since = guest.mark()
                guest.run(f"drmfill /dev/dri/{card} {APP} </tmp/app{card[-1]} >/dev/console 2>&1 & echo $! >/tmp/app{card[-1]}.pid")
                guest.expect(r"^shown \d+x\d+ on CRTC \d+$", 15, since, what=f"the app on {card}")
            for card in ("card0", "card1"):
                img, share = self.poll_app(guest, devices[card])
                print(f"vm-cards: the app on {card} ({devices[card]}): {share:.1%} magenta", flush=True)
                save(out, f"cards-app-{card}.png", img)
            for fd in (5, 6):
                since = guest.mark()
                guest.run(f"echo drop >&{fd}")
                guest.expect(r"^master dropped$", 10, since, what="the app letting master go")

        def lock():
            since = guest.mark()
            guest.run("touchlockd -C /tmp/cards.conf --display drm --input evdev </dev/null"
                      " >/dev/console 2>&1 & DPID=$!; echo \"wait-open $DPID\" >&3")
            t0 = guest.elapsed()
            guest.expect(r"first frame shown", 40, since, what="the daemon's first frame")
            guest.expect(r"^opened " + re.escape(node), 15, since, what="the daemon opening the touchscreen")
            guest.run(f"i=0; while [ ! -S {SOCKET} ] && [ $i -lt 200 ]; do usleep 50000; i=$((i+1)); done; test -S {SOCKET}")
            # What a user sees first: the app gone from both screens.
            for card in ("card0", "card1"):
                deadline = time.monotonic() + 15
                while (share := magenta(self.screendump(guest, devices[card]))) > 0:
                    if time.monotonic() > deadline:
                        raise CheckFailed(f"{card} still shows the app ({share:.1%} magenta) while locked")
                    time.sleep(0.2)
            for card in ("card0", "card1"):
                guest.expect(r"drm: covering " + card + r" \(", 5, since, what=f"the daemon covering {card}")
            st, outs = self.outputs(guest, ["card0", "card1"])
            if st["state"] != "locked" or st.get("display") != "shown":
                raise CheckFailed(f"status: {st['state']}, display {st.get('display')}")
            for card, o in outs.items():
                if o["state"] != "active" or not o.get("pattern"):
                    raise CheckFailed(f"{card}'s output in status: {json.dumps(o)}")
                img = self.poll_lock(guest, devices[card], [tuple(p) for p in o["pattern"]["nodes"]])
                share = magenta(img)
                if share > 0:
                    raise CheckFailed(f"{card} shows the lock screen with {share:.3%} of the app's colour left")
                save(out, f"cards-locked-{card}.png", img)
            state["outputs"] = outs
            print(f"vm-cards: both cards locked {guest.elapsed() - t0:.1f} s after the start, 0 magenta pixels;"
                  f" outputs {[(c, o['name'], o['screen']['width'], o['screen']['height']) for c, o in outs.items()]}",
                  flush=True)

        def needs_lock():
            if "outputs" not in state:
                raise CheckFailed("not reached: the cards were not both locked (k2)")

        def gone():
            needs_lock()
            # The app on card1 ends first (it could not drive the device that comes back: that
            # is a new one).
            guest.run("kill $(cat /tmp/app1.pid); while kill -0 $(cat /tmp/app1.pid) 2>/dev/null; do usleep 50000; done")
            since = guest.mark()
            virtio = guest.run("basename /sys/class/drm/card1/device/virtio*")[1][-1].strip()
            guest.run(f"echo {virtio} > /sys/bus/virtio/drivers/virtio_gpu/unbind")
            guest.expect(r"drm: card1 \(.*\) went away", 15, since, what="the daemon dropping card1")
            st, outs = self.outputs(guest, ["card0"])
            if outs["card0"]["state"] != "active" or st.get("display") != "shown":
                raise CheckFailed(f"card0 after card1 went away: {json.dumps(outs['card0'])}, display {st.get('display')}")
            self.poll_lock(guest, devices["card0"], [tuple(p) for p in outs["card0"]["pattern"]["nodes"]])
            since = guest.mark()
            guest.run(f"echo {virtio} > /sys/bus/virtio/drivers/virtio_gpu/bind")
            m, _, _ = guest.expect(r"drm: covering (card\d+) \(", 20, since, what="the daemon adopting the card again")
            late = m.group(1)
            st, outs = self.outputs(guest, ["card0", late])
            o = outs[late]
            img = self.poll_lock(guest, DEVICES["virtio-pci"], [tuple(p) for p in o["pattern"]["nodes"]])
            save(out, f"cards-adopted-{late}.png", img)
            state["late"] = late
            state["outputs"] = outs
            print(f"vm-cards: virtio-gpu unbound and bound again: dropped, then adopted as {late}", flush=True)

        def unlock():
            needs_lock()
            outs = state["outputs"]
            late = state.get("late", "card1")
            primary = self.status(guest)["outputs"][0]
            w, h = primary["screen"]["width"], primary["screen"]["height"]
            guest.run(f"echo 'size {w} {h}' >&3")
            since = guest.mark()
            guest.run(f"touchlockctl --socket {SOCKET} subscribe </dev/null >/dev/console 2>&1 &")
            time.sleep(0.5)
            inject(guest, stroke([tuple(p) for p in primary["pattern"]["nodes"]], RIGHT, lift=True), "@@cards-unlock")
            guest.expect(r'"event"\s*:\s*"unlocked"', 10, since, what="the unlocked event")
            for card in outs:
                guest.expect(r"drm: /dev/dri/" + card + r": DRM master dropped", 10, since,
                             what=f"DRM master dropped on {card}")
            st = self.status(guest)
            states = {o.get("card"): o["state"] for o in st["outputs"]}
            if st["state"] != "unlocked" or set(states.values()) != {"handed_over"} or len(states) != 2:
                raise CheckFailed(f"status after the unlock: {st['state']}, outputs {states}")
            since = guest.mark()
            guest.run("echo take >&5")
            guest.expect(r"^master taken$", 10, since, what="the app taking card0 again")
            since = guest.mark()
            guest.run(f"drmfill /dev/dri/{late} {APP} </tmp/app1 >/dev/console 2>&1 & echo $! >/tmp/app1.pid")
            guest.expect(r"^shown \d+x\d+ on CRTC \d+$", 15, since, what=f"the app on {late}")
            for card, device in (("card0", devices["card0"]), (late, DEVICES["virtio-pci"])):
                img, share = self.poll_app(guest, device)
                save(out, f"cards-handed-back-{card}.png", img)
                print(f"vm-cards: after the unlock, the app on {card}: {share:.1%} magenta", flush=True)

        def late_unlocked():
            needs_lock()
            late = state.get("late", "card1")
            guest.run("kill $(cat /tmp/app1.pid); while kill -0 $(cat /tmp/app1.pid) 2>/dev/null; do usleep 50000; done")
            virtio = guest.run(f"basename /sys/class/drm/{late}/device/virtio*")[1][-1].strip()
            since = guest.mark()
            guest.run(f"echo {virtio} > /sys/bus/virtio/drivers/virtio_gpu/unbind")
            guest.expect(r"drm: " + late + r" \(.*\) went away", 15, since, what=f"the daemon dropping {late}")
            since = guest.mark()
            guest.run(f"echo {virtio} > /sys/bus/virtio/drivers/virtio_gpu/bind")
            m, _, _ = guest.expect(r"drm: covering (card\d+) \(", 20, since, what="the daemon adopting the card")
            late = m.group(1)
            adopted = since
            # What the user sees first: the app starts on the new card and shows.
            since = guest.mark()
            guest.run(f"drmfill /dev/dri/{late} {APP} </tmp/app1 >/dev/console 2>&1 & echo $! >/tmp/app1.pid")
            m, _, _ = guest.expect(r"^(shown \d+x\d+ on CRTC \d+|set-master failed: .*)$", 15, since, what=f"the app on {late}")
            if m.group(1).startswith("set-master failed"):
                raise CheckFailed(f"the app cannot take {late}, adopted while unlocked: {m.group(1)}")
            img, share = self.poll_app(guest, DEVICES["virtio-pci"])
            save(out, f"cards-adopted-unlocked-{late}.png", img)
            guest.expect(r"drm: /dev/dri/" + late + r": DRM master dropped", 10, adopted,
                         what="DRM master dropped at once on the card adopted while unlocked")
            st, outs = self.outputs(guest, ["card0", late])
            states = {c: o["state"] for c, o in outs.items()}
            if st["state"] != "unlocked" or set(states.values()) != {"handed_over"}:
                raise CheckFailed(f"after adopting {late} while unlocked: {st['state']}, outputs {states}")
            state["late"] = late
            print(f"vm-cards: {late} adopted while unlocked: handed over at once, the app took it ({share:.1%} magenta)",
                  flush=True)

        def swapped():
            needs_lock()
            late = state.get("late", "card1")
            # The apps and the daemon end (every file of the cards closed: a card's number is
            # free again only then), both drivers let their devices go, and virtio_gpu binds
            # first: it gets card0, bochs card1, as two drivers may bind in either order at boot.
            since = guest.mark()
            guest.run("kill $(cat /tmp/app0.pid) $(cat /tmp/app1.pid) $DPID; for p in $(cat /tmp/app0.pid)"
                      " $(cat /tmp/app1.pid) $DPID; do while kill -0 $p 2>/dev/null; do usleep 50000; done; done")
            pci = guest.run("basename $(readlink /sys/class/drm/card0/device)")[1][-1].strip()
            virtio = guest.run(f"basename /sys/class/drm/{late}/device/virtio*")[1][-1].strip()
            guest.run(f"echo {pci} > /sys/bus/pci/drivers/bochs-drm/unbind"
                      f" && echo {virtio} > /sys/bus/virtio/drivers/virtio_gpu/unbind")
            guest.run("i=0; while [ -e /dev/dri/card0 ] || [ -e /dev/dri/card1 ]; do usleep 50000; i=$((i+1));"
                      " [ $i -lt 100 ] || break; done; ! [ -e /dev/dri/card0 ] && ! [ -e /dev/dri/card1 ]")
            guest.run(f"echo {virtio} > /sys/bus/virtio/drivers/virtio_gpu/bind"
                      " && i=0; while [ ! -e /dev/dri/card0 ] && [ $i -lt 100 ]; do usleep 50000; i=$((i+1)); done"
                      f" && echo {pci} > /sys/bus/pci/drivers/bochs-drm/bind"
                      " && i=0; while [ ! -e /dev/dri/card1 ] && [ $i -lt 100 ]; do usleep 50000; i=$((i+1)); done")
            _, listed = guest.run("ls /dev/dri")
            now = {c: self.device_of(guest, c) for c in ("card0", "card1")}
            if now != {"card0": "gpu", "card1": "bochs"}:
                raise CheckFailed(f"the numbers did not swap: {now}, /dev/dri: {' '.join(listed)}")
            since = guest.mark()
            guest.run("touchlockd -C /tmp/cards.conf --display drm --input evdev </dev/null"
                      " >/dev/console 2>&1 & DPID=$!; echo \"wait-open $DPID\" >&3")
            # Unlocked before the restart: it stays so (both cards handed over) until `lock`.
            for card in ("card0", "card1"):
                guest.expect(r"drm: covering " + card + r" \(", 40, since, what=f"the restarted daemon covering {card}")
            guest.run(f"i=0; while [ ! -S {SOCKET} ] && [ $i -lt 200 ]; do usleep 50000; i=$((i+1)); done; test -S {SOCKET}")
            st, outs = self.outputs(guest, ["card0", "card1"])
            states = {c: o["state"] for c, o in outs.items()}
            if st["state"] != "unlocked" or set(states.values()) != {"handed_over"}:
                raise CheckFailed(f"the restarted daemon: {st['state']}, outputs {states}")
            guest.run(f"touchlockctl --socket {SOCKET} lock </dev/null", timeout=30)
            st, outs = self.outputs(guest, ["card0", "card1"])
            for card, o in outs.items():
                if o["state"] != "active":
                    raise CheckFailed(f"{card}'s output after the restart: {json.dumps(o)}")
                img = self.poll_lock(guest, now[card], [tuple(p) for p in o["pattern"]["nodes"]])
                save(out, f"cards-swapped-{card}.png", img)
            print(f"vm-cards: restarted with the numbers swapped ({now}): the lock screen on both", flush=True)

        def pinned():
            needs_lock()
            # bochs is card1 now (k6); its link as udev would make it (this guest has no udev).
            pci = guest.run("basename $(readlink /sys/class/drm/card1/device)")[1][-1].strip()
            link = f"/dev/dri/by-path/pci-{pci}-card"
            guest.run(f"mkdir -p /dev/dri/by-path && ln -sf ../card1 {link}")
            guest.run(f"kill $DPID; while kill -0 $DPID 2>/dev/null; do usleep 50000; done;"
                      f" cp /tmp/cards.conf /tmp/pinned.conf && printf '[display]\\ndevice = %s\\n' {link} >>/tmp/pinned.conf")
            since = guest.mark()
            guest.run("touchlockd -C /tmp/pinned.conf --display drm --input evdev </dev/null"
                      " >/dev/console 2>&1 & DPID=$!; echo \"wait-open $DPID\" >&3")
            guest.expect(r"drm: covering card1 \(", 40, since, what="the daemon covering the pinned card1")
            guest.run(f"i=0; while [ ! -S {SOCKET} ] && [ $i -lt 200 ]; do usleep 50000; i=$((i+1)); done; test -S {SOCKET}")
            st, outs = self.outputs(guest, ["card1"])
            if outs["card1"]["state"] != "active" or st["state"] != "locked":
                raise CheckFailed(f"the pinned card1: {st['state']}, {json.dumps(outs['card1'])}")
            if any("drm: covering card0" in l for _, l in guest.lines[since:]):
                raise CheckFailed("card0 was covered though [display] device names card1 only")
            self.poll_lock(guest, "bochs", [tuple(p) for p in outs["card1"]["pattern"]["nodes"]])
            print(f"vm-cards: [display] device = {link}: card1 (bochs) covered, card0 left alone", flush=True)

        for name, fn in zip(self.CHECKS, (app, lock, gone, unlock, late_unlocked, swapped, pinned)):
            self.record(name, fn)


def main():
    ap = argparse.ArgumentParser(description="touchlock two-card test under QEMU (bochs-display and virtio-gpu)")
    ap.add_argument("--vmlinux", required=True)
    ap.add_argument("--initrd", required=True)
    ap.add_argument("--ctl", required=True, help="touchlockctl on the host (to hash the test pattern)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".vm", "out"))
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--timeout", type=float, default=300, help="seconds before QEMU is killed")
    ap.add_argument("--boot-timeout", type=float, default=60)
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    pattern_hash = hash_pattern(args.ctl, RIGHT)
    started = time.monotonic()
    def configure(guest):
        guest.display_device = "bochs-display,id=bochs"
        guest.extra_args = ["-device", "virtio-gpu-pci,id=gpu"]
        guest.memory = "1024"
        guest.append += " GUEST_TIMEOUT=360"
    results = run_in_guest("cards", args, out, pattern_hash, Cards, configure)
    if results is None:
        return 1
    passed = sum(1 for p in results.values() if p is None)
    failed = len(results) - passed
    print(f"vm-cards: screenshots and console log in {out}")
    print(f"vm-cards: {passed} passed, {failed} failed, guest run {time.monotonic() - started:.0f} s")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
