#!/bin/sh
# Prepares the base of the systemd VM test's guest (scripts/vm/systemd.sh), idempotently:
# a small Debian 12 root file system made by mmdebstrap from the Debian archive apt uses
# here, with systemd as init, udev, kmod, D-Bus (so systemd-logind runs, as on any Debian
# with a system bus: without one, getty-static.service puts gettys on tty2-tty6), the
# packages touchlock's .deb depends on, and a Debian kiosk's stack: libpam-systemd (a PAM
# login gets a logind session), polkitd (logind asks it before Session.Activate, which
# libseat calls), cage (its libseat logind backend), weston (for weston-simple-touch),
# libinput-bin, xkb-data and kbd (chvt); plymouth and its themes, for the boot
# with a splash (Tests/VM/systemd_plymouth.py); plus the kernel modules the guest needs
# (virtio_gpu, which wlroots can use, and bochs, with their DRM helpers; uinput, evdev)
# from Debian's package of the kernel the VM boots, with their modules.dep.
#   scripts/vm/prepare-systemd.sh DEB
# The result is a tarball, $CACHE/systemd/base-KEY.tar, KEY naming the kernel, the
# package list and this script; an existing one is reused, older ones are removed.
# Cache: $TOUCHLOCK_VM_CACHE, default .vm/ at the repository root.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TOUCHLOCK_VM_CACHE:-$ROOT/.vm}
export TOUCHLOCK_VM_CACHE="$CACHE"
DEB=$1
# The modules asked for; their dependencies are added from the modules' own .modinfo.
WANTED="virtio_pci virtio_gpu bochs uinput evdev"

"$ROOT/scripts/vm/prepare.sh"
# package:file-that-proves-it-is-installed
"$ROOT/scripts/install-packages" prepare-systemd mmdebstrap:/usr/bin/mmdebstrap \
    debian-archive-keyring:/usr/share/keyrings/debian-archive-keyring.gpg cpio:/usr/bin/cpio

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

KVER=$(cat "$CACHE/kernel.version")
# The package's own dependencies (first of each alternative, without versions).
DEPS=$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/ //g' \
    | grep . | sort -u | tr '\n' ',' | sed 's/,$//')
KIOSK="libpam-systemd,polkitd,cage,weston,libinput-bin,xkb-data,kbd,plymouth,plymouth-themes"
INCLUDE="systemd,systemd-sysv,udev,kmod,dbus,$KIOSK,$DEPS"
KEY=$( (echo "$KVER $INCLUDE $WANTED"; cat "$0" "$ROOT/scripts/vm/kernel-modules.py") | sha256sum | cut -c1-16)
DIR="$CACHE/systemd"
BASE="$DIR/base-$KEY.tar"
mkdir -p "$DIR"
if [ -f "$BASE" ]; then
    echo "prepare-systemd: base root file system ready: $BASE"
    exit 0
fi

# The Debian archive apt uses on this machine: its enabled source files for Debian.
SOURCES=""
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && grep -q '^[^#]*debian' "$f" && SOURCES="$SOURCES $f"
done
[ -n "$SOURCES" ] || { echo "prepare-systemd: no Debian archive in apt's sources" >&2; exit 1; }
echo "prepare-systemd: building the base root file system (bookworm, from$SOURCES): $INCLUDE"

WORK="$DIR/work"
rm -rf "$WORK"
mkdir -p "$WORK"
# Documentation, man pages and translations are left out of the packages installed here
# (not of touchlock's, installed later: systemd.sh removes this dpkg setting first).
# shellcheck disable=SC2086
as_root mmdebstrap --variant=minbase --include="$INCLUDE" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/zoneinfo/*' \
    bookworm "$WORK/root" $SOURCES

# The kernel's modules: the wanted ones and their dependencies, compressed as Debian ships
# them, with the kernel's own module lists; depmod is run in the root.
echo "prepare-systemd: modules of kernel $KVER"
mkdir -p "$WORK/deb"
chmod 0777 "$WORK/deb" 2>/dev/null || true
(cd "$WORK/deb" && apt-get download "linux-image-$KVER") \
    || { as_root apt-get update && (cd "$WORK/deb" && apt-get download "linux-image-$KVER"); }
dpkg -x "$WORK"/deb/linux-image-"$KVER"_*.deb "$WORK/kernel"
python3 "$ROOT/scripts/vm/kernel-modules.py" --who prepare-systemd --layout tree \
    "$WORK/kernel/lib/modules/$KVER" "$WORK/root/lib/modules/$KVER" $WANTED
as_root chroot "$WORK/root" depmod "$KVER"
# Loaded at boot whatever udev finds (virtio_gpu and bochs also load from their PCI
# aliases; uinput has a static /dev/uinput node).
printf '%s\n' $WANTED > "$WORK/root/etc/modules-load.d/touchlock-vm.conf"

(cd "$WORK/root" && as_root tar --numeric-owner --xattrs -cf "$BASE.tmp" .)
mv "$BASE.tmp" "$BASE"
find "$DIR" -maxdepth 1 -name 'base-*.tar' ! -name "base-$KEY.tar" -delete
as_root rm -rf "$WORK"
echo "prepare-systemd: base root file system ready: $BASE ($(du -m "$BASE" | cut -f1) MB)"
