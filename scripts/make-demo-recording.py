#!/usr/bin/env python3
"""Writes data/demo-pattern.evemu: a synthetic evemu recording of one finger on a
10-slot direct touchscreen (axes 0..32767) drawing, on the default 3x3 grid of a
1280x800 screen, first a wrong pattern (0-3-6-7) and then the demo pattern Z
(0-1-2-4-6-7-8). Frames come every 8 ms, the finger moves about 12 px a frame.

The node centres follow touchlockd's layout for 1280x800 at the default 160 dpi
(ScreenLayout, pattern only): cells of 120 px from (688, 220). A test replays this file through the lock screen and checks
that the second pattern unlocks, so the two cannot drift apart unnoticed."""
import math, sys

W, H, AXIS = 1280, 800, 32767
CELL, OX, OY = 120.0, 688.0, 220.0

def centre(n):
    return (OX + (n % 3 + 0.5) * CELL, OY + (n // 3 + 0.5) * CELL)

def dev(v, pixels):
    return int(round(v * (AXIS + 1) / pixels))

lines = []
t = [1]  # microseconds

def ev(typ, code, value):
    lines.append("E: %d.%06d %04x %04x %04d" % (t[0] // 1000000, t[0] % 1000000, typ, code, value))

def frame(x, y, first=False, tracking=None):
    if tracking is not None:
        ev(3, 0x2f, 0)
        ev(3, 0x39, tracking)
        ev(1, 0x14a, 1)
    ev(3, 0x35, dev(x, W)); ev(3, 0x36, dev(y, H))
    ev(3, 0x00, dev(x, W)); ev(3, 0x01, dev(y, H))
    ev(0, 0, 0)
    t[0] += 8000

def stroke(nodes, tracking):
    pts = [centre(n) for n in nodes]
    # Start a little off the first node, as a finger does.
    x, y = pts[0][0] - 9, pts[0][1] + 6
    frame(x, y, tracking=tracking)
    for px, py in pts:
        d = math.hypot(px - x, py - y)
        steps = max(1, int(d / 12))
        for i in range(1, steps + 1):
            frame(x + (px - x) * i / steps, y + (py - y) * i / steps)
        x, y = px, py
    # Linger on the last node, then lift.
    for _ in range(5):
        frame(x, y)
    ev(3, 0x39, -1); ev(1, 0x14a, 0); ev(0, 0, 0)
    t[0] += 8000

stroke([0, 3, 6, 7], tracking=1)
t[0] += 1500000          # the error shows, then input opens again
stroke([0, 1, 2, 4, 6, 7, 8], tracking=2)

header = """# EVEMU 1.3
# Synthetic recording made by scripts/make-demo-recording.py: one finger draws a
# wrong pattern (0-3-6-7), then the demo pattern Z (0-1-2-4-6-7-8), on a 3x3 grid
# laid out on a 1280x800 screen.
N: touchlock demo panel
I: 0006 0000 0000 0000
P: 02 00 00 00 00 00 00 00
B: 00 0b 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 00 00 00 00 00 00 00
B: 01 00 04 00 00 00 00 00 00
B: 03 03 00 00 00 00 80 60 02
A: 00 0 32767 0 0 0
A: 01 0 32767 0 0 0
A: 2f 0 9 0 0 0
A: 35 0 32767 0 0 0
A: 36 0 32767 0 0 0
A: 39 0 65535 0 0 0
"""
out = sys.argv[1] if len(sys.argv) > 1 else "data/demo-pattern.evemu"
with open(out, "w") as f:
    f.write(header + "\n".join(lines) + "\n")
