#!/usr/bin/env python3
"""Builds the end-to-end test guest's initramfs: an uncompressed newc cpio (it boots faster
than a compressed one under emulation), written without root (device nodes are cpio entries).

Contents: busybox-static and its applet links, the kernel modules prepared by prepare.sh
(in their load order), the given programs in /usr/bin (stripped) with every shared library `ldd` lists
for them (and the dynamic loader) at the same absolute paths, the DejaVu fonts of
fonts-dejavu-core with a minimal fontconfig configuration, and Tests/VM/init.sh as /init.

With --kiosk the image also holds the kiosk stacks of Tests/VM/run_kiosk.py, taken from the
host's Debian packages (scripts/vm/prepare-kiosk.sh installs them) at their own paths: weston
with kiosk-shell, its DRM backend and weston-simple-touch, cage, seatd, udevd (udevadm) with the
udev rules and libinput's helpers, libinput's quirks, the xkb data and libwacom's tablets, each
ELF with its full `ldd` closure (the plugins' too, as weston dlopens them), a stub
/usr/bin/Xwayland (cage will not start without one and never runs it), and an /etc/passwd and
/etc/group with a `kiosk` user in the `video` group (cage refuses to run as root).

--tree copies a host file or directory as it is (the measurement's reference daemon takes its
keyboard data, /usr/share/X11/xkb, that way).

--sysroot makes an image for another architecture (scripts/vm/arm64.sh): the programs' shared
libraries and the loader are those their ELF headers name (DT_NEEDED, found in the sysroot's
library directories as its loader finds them, readelf(1) reading the headers), the fonts are the
sysroot's, and --busybox names that architecture's static busybox, its applets listed by running
it under --emulator (e.g. qemu-aarch64-static).

usage: build-initramfs.py --modules DIR --out FILE [--kiosk] [--data FILE=PATH] [--tree PATH]
                          [--sysroot DIR --busybox FILE --emulator CMD] PROGRAM...
"""
import glob
import argparse
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

FONTS_CONF = b"""<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>/usr/share/fonts</dir>
  <cachedir>/tmp/fontconfig</cachedir>
</fontconfig>
"""


class Cpio:
    """A newc archive built in memory; parent directories are added on demand."""

    def __init__(self):
        self.out = bytearray()
        self.ino = 1
        self.names = set()

    def _entry(self, name, mode, data=b"", rdev=(0, 0), nlink=1):
        name = name.lstrip("/")
        if name in self.names:
            return
        self.names.add(name)
        encoded = name.encode() + b"\0"
        fields = [self.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdev[0], rdev[1], len(encoded), 0]
        self.ino += 1
        self.out += b"070701" + b"".join(b"%08X" % f for f in fields) + encoded
        self.out += b"\0" * (-len(self.out) % 4)
        self.out += data
        self.out += b"\0" * (-len(self.out) % 4)

    def dir(self, path):
        path = path.strip("/")
        if not path or path in self.names:
            return
        self.dir(os.path.dirname(path))
        self._entry(path, stat.S_IFDIR | 0o755, nlink=2)

    def file(self, path, data, mode=0o644):
        self.dir(os.path.dirname(path.strip("/")))
        self._entry(path, stat.S_IFREG | mode, data)

    def symlink(self, path, target):
        self.dir(os.path.dirname(path.strip("/")))
        self._entry(path, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, path, major, minor, mode=0o600):
        self.dir(os.path.dirname(path.strip("/")))
        self._entry(path, stat.S_IFCHR | mode, rdev=(major, minor))

    def finish(self):
        self._entry("TRAILER!!!", 0, nlink=1)
        self.out += b"\0" * (-len(self.out) % 512)
        return bytes(self.out)


# The kiosk payload (--kiosk): executables and plugins, each copied with its `ldd` closure.
KIOSK_ELFS = [
    "/usr/bin/weston",
    "/usr/bin/weston-simple-touch",
    "/usr/lib/x86_64-linux-gnu/weston/kiosk-shell.so",
    "/usr/lib/x86_64-linux-gnu/weston/libexec_weston.so.0",
    "/usr/lib/x86_64-linux-gnu/libweston-10/drm-backend.so",
    "/usr/bin/cage",
    "/usr/sbin/seatd",
    "/usr/bin/udevadm",
    "/lib/udev/libinput-device-group",
    "/lib/udev/libinput-fuzz-extract",
    "/lib/udev/libinput-fuzz-to-zero",
]
# Data trees and files copied as they are (symbolic links kept).
KIOSK_DATA = [
    "/lib/udev/rules.d",
    "/etc/udev/udev.conf",
    "/usr/share/libinput",
    "/usr/share/X11/xkb",
    "/usr/share/libwacom",
]
# udevd is udevadm under another name (the name selects the daemon), as Debian installs it.
KIOSK_LINKS = {"/lib/systemd/systemd-udevd": "/usr/bin/udevadm"}
KIOSK_PASSWD = b"root:x:0:0:root:/root:/bin/sh\nkiosk:x:1000:44:kiosk:/tmp:/bin/sh\n"
KIOSK_GROUP = (b"root:x:0:\ntty:x:5:\ndisk:x:6:\nkmem:x:15:\naudio:x:29:\nvideo:x:44:kiosk\n"
               b"input:x:101:\nrender:x:102:\nkiosk:x:1000:\n")
XWAYLAND_STUB = b"#!/bin/sh\necho 'Xwayland: not in this image' >&2\nexit 1\n"


def host_file(path):
    with open(path, "rb") as f:
        return f.read()


def program_image(path, strip):
    """The program's bytes, without symbols if `strip` and strip(1) is there."""
    if not strip or shutil.which("strip") is None:
        return host_file(path)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "stripped")
        if subprocess.run(["strip", "--strip-all", "-o", out, path]).returncode != 0:
            return host_file(path)
        return host_file(out)


def shared_libraries(program):
    """The absolute paths `ldd` lists for program (the loader included)."""
    out = subprocess.run(["ldd", program], capture_output=True, text=True)
    if out.returncode != 0:
        if "not a dynamic executable" in out.stdout + out.stderr:
            return []
        sys.exit(f"build-initramfs: ldd {program} failed: {out.stderr.strip()}")
    libs = []
    for line in out.stdout.splitlines():
        if "not found" in line:
            sys.exit(f"build-initramfs: {program}: {line.strip()}")
        m = re.search(r"(?:=>\s*)?(/\S+)\s+\(0x", line)
        if m:
            libs.append(m.group(1))
    return libs


def in_sysroot(sysroot, path):
    """The file a path of the target names, inside sysroot: symbolic links followed, an
    absolute target taken from the sysroot too (usr-merged roots link /lib to usr/lib)."""
    parts, done, hops = [p for p in path.split("/") if p], "/", 0
    while parts:
        part = parts.pop(0)
        here = os.path.join(done, part)
        real = sysroot + here
        if os.path.islink(real):
            hops += 1
            if hops > 40:
                sys.exit(f"build-initramfs: {path}: too many links in {sysroot}")
            target = os.readlink(real)
            parts = [p for p in target.split("/") if p] + parts
            done = "/" if target.startswith("/") else done
        else:
            done = os.path.normpath(here)
    return sysroot + done


def sysroot_libraries(program, sysroot):
    """The loader and the shared libraries program needs, recursively, as target paths:
    each DT_NEEDED looked up in the directories the sysroot's ld.so.conf names, then /lib
    and /usr/lib (the loader's own defaults)."""
    dirs = []
    for conf in sorted(glob.glob(os.path.join(sysroot, "etc/ld.so.conf.d/*.conf"))):
        dirs += [l.strip() for l in open(conf) if l.strip().startswith("/")]
    dirs += ["/lib", "/usr/lib"]

    def headers(path):
        out = subprocess.run(["readelf", "-d", "-l", "-W", path], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"build-initramfs: readelf {path} failed: {out.stderr.strip()}")
        return (re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout),
                re.findall(r"program interpreter: ([^\]]+)\]", out.stdout))

    libs = []
    needed, interp = headers(program)
    libs += interp
    queue = list(needed)
    while queue:
        name = queue.pop(0)
        where = next((os.path.join(d, name) for d in dirs if os.path.exists(in_sysroot(sysroot, os.path.join(d, name)))), None)
        if where is None:
            sys.exit(f"build-initramfs: {program}: {name} not found in {sysroot} ({', '.join(dirs)})")
        if where in libs:
            continue
        libs.append(where)
        queue += headers(in_sysroot(sysroot, where))[0]
    return libs


def add_tree(a, path):
    """Copies a file, or a directory recursively, at the same path; links stay links."""
    if os.path.islink(path):
        a.symlink(path, os.readlink(path))
    elif os.path.isdir(path):
        a.dir(path)
        for name in sorted(os.listdir(path)):
            add_tree(a, os.path.join(path, name))
    elif os.path.isfile(path):
        mode = 0o755 if os.access(path, os.X_OK) else 0o644
        a.file(path, host_file(path), mode)


def add_kiosk(a, libs):
    """The kiosk payload; the shared libraries it needs are appended to `libs`."""
    for elf in KIOSK_ELFS:
        if not os.path.exists(elf):
            sys.exit(f"build-initramfs: {elf} is missing (run scripts/vm/prepare-kiosk.sh)")
        a.file(elf, host_file(os.path.realpath(elf)), 0o755)
        for lib in shared_libraries(elf):
            if lib not in libs:
                libs.append(lib)
    for path in KIOSK_DATA:
        if not os.path.exists(path):
            sys.exit(f"build-initramfs: {path} is missing (run scripts/vm/prepare-kiosk.sh)")
        add_tree(a, path)
    for link, target in KIOSK_LINKS.items():
        a.symlink(link, target)
    a.file("usr/bin/Xwayland", XWAYLAND_STUB, 0o755)
    a.file("etc/passwd", KIOSK_PASSWD)
    a.file("etc/group", KIOSK_GROUP)
    a.dir("run/udev")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modules", required=True, help="directory with the .ko files and 'order'")
    ap.add_argument("--out", required=True)
    ap.add_argument("--init", default=os.path.join(ROOT, "Tests", "VM", "init.sh"))
    ap.add_argument("--no-strip", action="store_true",
                    help="keep the programs' symbols (stripped copies make a smaller image that boots faster)")
    ap.add_argument("--data", action="append", default=[], metavar="FILE=PATH",
                    help="copy FILE into the image at PATH (may be given several times)")
    ap.add_argument("--tree", action="append", default=[], metavar="PATH",
                    help="copy the host's file or directory PATH at the same path (may be given several times)")
    ap.add_argument("--kiosk", action="store_true",
                    help="add the kiosk stacks (weston kiosk-shell, cage, seatd, udevd) from the host")
    ap.add_argument("--sysroot", help="another architecture's root the programs' libraries and the fonts come from")
    ap.add_argument("--busybox", default="/bin/busybox", help="a static busybox (default: the host's)")
    ap.add_argument("--emulator", default="", help="command that runs --busybox here, to list its applets")
    ap.add_argument("programs", nargs="+")
    args = ap.parse_args()

    a = Cpio()
    for d in ("dev", "proc", "sys", "tmp", "run", "root", "etc", "lib", "usr/bin", "usr/sbin", "bin", "sbin"):
        a.dir(d)
    # The kernel opens /dev/console for init before anything is mounted.
    a.chardev("dev/console", 5, 1)
    a.chardev("dev/null", 1, 3, 0o666)

    if args.sysroot and args.kiosk:
        sys.exit("build-initramfs: --kiosk takes the host's programs, not a --sysroot's")
    busybox = args.busybox
    a.file("bin/busybox", host_file(busybox), 0o755)
    applets = subprocess.run(args.emulator.split() + [busybox, "--list-full"], capture_output=True, text=True,
                             check=True).stdout
    for applet in applets.split():
        if applet != "bin/busybox":
            a.symlink(applet, "/bin/busybox")

    a.file("init", host_file(args.init), 0o755)

    order = host_file(os.path.join(args.modules, "order")).decode().split()
    a.file("lib/modules/order", (" ".join(order) + "\n").encode())
    for m in order:
        a.file(f"lib/modules/{m}.ko", host_file(os.path.join(args.modules, f"{m}.ko")))

    libs = []
    for prog in args.programs:
        a.file("usr/bin/" + os.path.basename(prog), program_image(prog, not args.no_strip and not args.sysroot), 0o755)
        for lib in (sysroot_libraries(prog, args.sysroot) if args.sysroot else shared_libraries(prog)):
            if lib not in libs:
                libs.append(lib)
    if args.kiosk:
        add_kiosk(a, libs)
    for lib in libs:
        real = in_sysroot(args.sysroot, lib) if args.sysroot else os.path.realpath(lib)
        a.file(lib, host_file(real), 0o755)

    for spec in args.data:
        src, dest = spec.split("=", 1)
        a.file(dest.lstrip("/"), host_file(src))

    for path in args.tree:
        if not os.path.exists(path):
            sys.exit(f"build-initramfs: {path} is missing")
        add_tree(a, path)

    if args.sysroot:
        for real in sorted(glob.glob(os.path.join(args.sysroot, "usr/share/fonts/truetype/dejavu/*.ttf"))):
            a.file(os.path.relpath(real, args.sysroot), host_file(real))
    else:
        fonts = subprocess.run(["dpkg", "-L", "fonts-dejavu-core"], capture_output=True, text=True, check=True).stdout
        for path in fonts.split():
            if path.endswith(".ttf") and os.path.isfile(path):
                a.file(path, host_file(path))
    a.file("etc/fonts/fonts.conf", FONTS_CONF)
    a.file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
    a.file("etc/group", b"root:x:0:\ninput:x:101:\nvideo:x:44:\n")

    data = a.finish()
    with open(args.out + ".tmp", "wb") as f:
        f.write(data)
    os.replace(args.out + ".tmp", args.out)
    print(f"build-initramfs: {args.out}: {len(data) // 1024} KiB, {len(libs)} shared libraries")


if __name__ == "__main__":
    main()
