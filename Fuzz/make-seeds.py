#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets (Fuzz/corpus/TARGET) from the real
recordings in Tests/TouchlockInputTests/Fixtures and the config examples. Each seed is
cut short (a few kilobytes): the fuzzer needs the shapes, not the length.
Run from the repository root; the output is kept in the repository."""
import os, struct, subprocess, sys

FIX = "Tests/TouchlockInputTests/Fixtures"
OUT = "Fuzz/corpus"


def write(target, name, data):
    os.makedirs(f"{OUT}/{target}", exist_ok=True)
    with open(f"{OUT}/{target}/{name}", "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def manifest():
    rows = []
    for line in open(f"{FIX}/MANIFEST.tsv"):
        if line.startswith("#") or not line.strip():
            continue
        rec, desc, proto = line.rstrip("\n").split("\t")[:3]
        rows.append((rec, desc, proto))
    return rows


def events(text):
    out = []
    for line in text.splitlines():
        p = line.split("#")[0].split()
        if len(p) == 5 and p[0] == "E:":
            out.append((int(p[2], 16), int(p[3], 16), int(p[4])))
    return out


def slots(desc):
    for line in desc.splitlines():
        p = line.split()
        if len(p) >= 4 and p[0] == "A:" and int(p[1], 16) == 0x2F:
            return int(p[3]) + 1
    return 1


def assembler_seed(proto, desc, evs):
    """The assembler target's format (see Fuzz/assembler.swift)."""
    if proto == "B":
        mode = ((min(slots(desc), 64) - 1) << 2) | 0
    elif proto == "A":
        mode = 1
    else:
        left = any(t == 1 and c == 0x110 for t, c, _ in evs)
        quirk = not any(t == 3 and c == 0x00 for t, c, _ in evs)
        mode = 2 | (4 if left else 0) | (8 if quirk else 0)
    out = bytearray([mode])
    for t, c, v in evs:
        v = max(-32768, min(32767, v))
        if t == 0:
            kind, code = (0, 0) if c == 0 else (1, c)
        elif t == 3:
            kind, code = 2, c
        elif t == 1 and 0x100 <= c < 0x200:
            kind, code = 4, c - 0x100
        else:
            continue
        out += bytes([kind, code]) + struct.pack("<h", v)
        if len(out) >= 512:
            break
    return bytes(out)


def main():
    seen_devices = set()
    for rec, desc_name, proto in manifest():
        text = open(f"{FIX}/{rec}", errors="replace").read()
        desc = open(f"{FIX}/{desc_name}", errors="replace").read()
        base = os.path.splitext(rec)[0]
        write("assembler", base, assembler_seed(proto, desc, events(text)))
        # evemu: the description and the first events, one seed per recording.
        whole = text if desc_name == rec else desc + text
        cut = whole[:2048]
        write("evemu", base + ".evemu", cut[: cut.rfind("\n") + 1])
        if desc_name not in seen_devices:
            seen_devices.add(desc_name)
            write("evemu", os.path.splitext(desc_name)[0] + ".desc", desc[:4096])

    # state: the target's header (count, lines, cut, change), then a record's text.
    record = ("# touchlock state: written by touchlockd; do not edit while it runs\nversion = 1\n"
              "boot_id = 5b0c6a4e-3f6d-4a1e-9c35-2f6b1a7d8e90\nfailures = 19\ndeadline_us = 812345678\n")
    write("state", "cut-in-count", struct.pack("<IBHBB", 19, 31, 150, 0, 0) + record.encode())
    write("state", "whole", struct.pack("<IBHBB", 5, 3, 65535, 0, 0) + record.encode())
    write("state", "changed", struct.pack("<IBHBB", 7, 1, 65535, ord("0"), 120))

    # config: the full default settings as --check-config prints them, the examples.
    bindir = subprocess.check_output(["swift", "build", "--show-bin-path"], text=True).strip()
    full = subprocess.check_output([f"{bindir}/touchlockd", "--check-config"], text=True)
    write("config", "defaults.conf", "".join(l + "\n" for l in full.splitlines() if not l.startswith("# touchlockd") and not l.startswith("#   ")))
    write("config", "zh.conf", open("docs/screens/zh.conf").read())
    write("config", "flat.conf", "error_hold_ms = 1000   # flat names still work\n"
          "input_quirk = 0eef:0001 x=ABS_Z y=ABS_RX\ntouch_rotation = 90\ntouch_flip = x\n")
    write("config", "both.conf", "; comment\n[screen]\nunlock_method = both\n[pattern]\ngrid = 4x3\n"
          "[code]\nlength = 6\nsecure = true\nkeypad_shuffle = true\n[lockout]\nschedule = 0,0,0,0,60,300\n"
          "[input]\nquirk = \"ILITEK Multi-Touch\" swap_xy invert_y\n[theme]\npath_color = #00aaff80 ; translucent\n")

    # control: byte 0 picks the peer, then request lines.
    lines = ['{"id":1,"request":"hello"}', '{"id":2,"request":"status"}', '{"id":3,"request":"subscribe"}',
             '{"id":4,"request":"lock"}', '{"id":5,"request":"metrics"}',
             '{"id":6,"request":"enroll","method":"pattern","hash":"$y$j9T$abcdefghijklmnopqrstu$vwxyz"}',
             '{"id":7,"request":"enroll","method":"code","screen":true}', '{"id":8,"request":"enroll","method":"code"}',
             '{"id":9,"request":"nope"}', '{"request":"hello"}', '[1,2]', '', '{"id":"x","request":"status"}']
    for who in range(3):
        write("control", f"session-{who}", bytes([who]) + "\n".join(lines).encode() + b"\n")


if __name__ == "__main__":
    sys.exit(main())
