#!/usr/bin/env python3
"""Takes kernel modules and every module they depend on ("depends=" in each module's .modinfo
section) out of an unpacked Debian kernel package, for the VM images.

usage: kernel-modules.py --who NAME --layout flat|tree MODDIR OUT MODULE...

MODDIR is the package's lib/modules/VERSION; modules modules.builtin lists are skipped. With --layout flat, OUT gets each module
decompressed (NAME.ko) and "order": the names, each after the modules it depends on (the
order /init loads them in). With --layout tree, OUT is a lib/modules/VERSION of a root file
system: the modules as Debian ships them (compressed), at their own paths, with the
kernel's module lists, for depmod. --who names the script in messages. A module the kernel
has built in (modules.builtin: virtio_pci in Debian's arm64 kernel) has nothing to load and
is left out.
"""
import argparse
import lzma
import os
import re
import shutil
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--who", required=True)
    ap.add_argument("--layout", choices=("flat", "tree"), required=True)
    ap.add_argument("moddir")
    ap.add_argument("out")
    ap.add_argument("modules", nargs="+")
    args = ap.parse_args()

    paths = {}
    for d, _, files in os.walk(args.moddir):
        for f in files:
            m = re.match(r"(.+)\.ko(\.xz)?$", f)
            if m:
                paths[m.group(1).replace("-", "_")] = os.path.join(d, f)

    # Modules built into the kernel (Debian 13's has virtio_pci built in): nothing to take.
    builtin = set()
    listing = os.path.join(args.moddir, "modules.builtin")
    if os.path.exists(listing):
        for line in open(listing):
            builtin.add(os.path.basename(line.strip())[:-len(".ko")].replace("-", "_"))

    order, seen = [], set()

    def add(name, chain):
        if name in seen or name in builtin:
            return
        if name not in paths:
            sys.exit(f"{args.who}: module {name} not found in {args.moddir}"
                     f" (needed by {' <- '.join(chain) or 'the test'})")
        seen.add(name)
        p = paths[name]
        data = lzma.open(p).read() if p.endswith(".xz") else open(p, "rb").read()
        deps = re.search(rb"\0depends=([^\0]*)\0", data)
        for dep in (deps.group(1).decode().split(",") if deps and deps.group(1) else []):
            add(dep.replace("-", "_"), [name] + chain)
        if args.layout == "flat":
            with open(os.path.join(args.out, name + ".ko"), "wb") as f:
                f.write(data)
        else:
            dest = os.path.join(args.out, os.path.relpath(p, args.moddir))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copy2(p, dest)
        order.append(name)

    os.makedirs(args.out, exist_ok=True)
    for w in args.modules:
        add(w, [])
    if args.layout == "flat":
        with open(os.path.join(args.out, "order"), "w") as f:
            f.write(" ".join(order) + "\n")
    else:
        for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
            if os.path.exists(os.path.join(args.moddir, f)):
                shutil.copy2(os.path.join(args.moddir, f), os.path.join(args.out, f))
    print(f"{args.who}: modules " + " ".join(order))


if __name__ == "__main__":
    main()
