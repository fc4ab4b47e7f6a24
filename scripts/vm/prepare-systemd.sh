#!/bin/sh
# Prepares the base of the systemd VM test's guest (scripts/vm/systemd.sh), idempotently:
# a small Debian 12 (or, with --release trixie, Debian 13) root file system made by
# mmdebstrap from the Debian archive apt uses here, with systemd as init, udev, kmod, D-Bus (so systemd-logind runs, as on any Debian
# with a system bus: without one, getty-static.service puts gettys on tty2-tty6), the
# packages touchlock's .deb depends on, and a Debian kiosk's stack: libpam-systemd (a PAM
# login gets a logind session), polkitd (logind asks it before Session.Activate, which
# libseat calls), cage (its libseat logind backend), weston (for weston-simple-touch),
# libinput-bin, xkb-data and kbd (chvt); plymouth and its themes, for the boot
# with a splash (Tests/VM/systemd_plymouth.py); plus the kernel modules the guest needs
# (virtio_gpu, which wlroots can use, and bochs, with their DRM helpers; uinput, evdev)
# from Debian's package of the kernel the VM boots, with their modules.dep.
#   scripts/vm/prepare-systemd.sh [--release bookworm|trixie] DEB
# The result is a tarball, $CACHE/systemd/base-KEY.tar, KEY naming the kernel, the
# package list and this script; an existing one is reused, older ones are removed.
# Cache: $TOUCHLOCK_VM_CACHE, default .vm/ at the repository root.
#
# Debian 13 (trixie; cached in $CACHE/systemd-trixie/): the root has trixie's own sources
# (the URIs of the Debian archive apt uses here, with the trixie suites, as
# scripts/debian13 makes its root; this machine's apt configuration is not changed), and
# its own kernel: linux-image-amd64 (6.12) is downloaded in the root by its apt, the VM
# boots its vmlinuz ($CACHE/systemd-trixie/vmlinuz, its version in kernel.version) and
# the root gets its modules. The kiosk's stack adds labwc and greetd (started as
# Raspberry Pi OS starts labwc: greetd's autologin), foot, sway (the session lock checks)
# and wlr-randr (an output's scale changed while locked).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TOUCHLOCK_VM_CACHE:-$ROOT/.vm}
export TOUCHLOCK_VM_CACHE="$CACHE"
RELEASE=bookworm
if [ "${1:-}" = "--release" ]; then
    RELEASE=$2
    shift 2
fi
case "$RELEASE" in
    bookworm|trixie) ;;
    *) echo "prepare-systemd: --release bookworm or trixie, not '$RELEASE'" >&2; exit 2 ;;
esac
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

if [ "$RELEASE" = bookworm ]; then
    KVER=$(cat "$CACHE/kernel.version")
    DIR="$CACHE/systemd"
else
    # The kernel is trixie's, whichever version its archive has when the root is made.
    KVER=trixie
    DIR="$CACHE/systemd-trixie"
fi
# The package's own dependencies (first of each alternative, without versions).
DEPS=$(dpkg-deb -f "$DEB" Depends | tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/ //g' \
    | grep . | sort -u | tr '\n' ',' | sed 's/,$//')
KIOSK="libpam-systemd,polkitd,cage,weston,libinput-bin,xkb-data,kbd,plymouth,plymouth-themes"
[ "$RELEASE" = bookworm ] || KIOSK="$KIOSK,labwc,greetd,foot,sway,wlr-randr"
INCLUDE="systemd,systemd-sysv,udev,kmod,dbus,$KIOSK,$DEPS"
KEY=$( (echo "$RELEASE $KVER $INCLUDE $WANTED"; cat "$0" "$ROOT/scripts/vm/kernel-modules.py") | sha256sum | cut -c1-16)
BASE="$DIR/base-$KEY.tar"
mkdir -p "$DIR"
if [ -f "$BASE" ]; then
    echo "prepare-systemd: base root file system ready: $BASE"
    exit 0
fi

WORK="$DIR/work"
rm -rf "$WORK"
mkdir -p "$WORK/deb"
chmod 0777 "$WORK/deb" 2>/dev/null || true
# Documentation, man pages and translations are left out of the packages installed here
# (not of touchlock's, installed later: systemd.sh removes this dpkg setting first).
if [ "$RELEASE" = bookworm ]; then
    # The Debian archive apt uses on this machine: its enabled source files for Debian.
    SOURCES=""
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && grep -q '^[^#]*debian' "$f" && SOURCES="$SOURCES $f"
    done
    [ -n "$SOURCES" ] || { echo "prepare-systemd: no Debian archive in apt's sources" >&2; exit 1; }
    echo "prepare-systemd: building the base root file system (bookworm, from$SOURCES): $INCLUDE"
    # shellcheck disable=SC2086
    as_root mmdebstrap --variant=minbase --include="$INCLUDE" \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        --dpkgopt='path-exclude=/usr/share/zoneinfo/*' \
        bookworm "$WORK/root" $SOURCES
    (cd "$WORK/deb" && apt-get download "linux-image-$KVER") \
        || { as_root apt-get update && (cd "$WORK/deb" && apt-get download "linux-image-$KVER"); }
else
    # The URIs of the Debian archive apt uses here, with trixie's suites.
    URIS=$(for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
               [ -f "$f" ] || continue
               sed -n -e 's/^URIs:[[:space:]]*//p' -e 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]*\)\{0,1\}\([^[:space:]]*\).*/\2/p' "$f"
           done | tr ' ' '\n' | grep '/debian\(-security\)\{0,1\}/*$' | sort -u)
    MAIN=$(echo "$URIS" | grep -v -- '-security' | head -n 1)
    SECURITY=$(echo "$URIS" | grep -- '-security' | head -n 1)
    [ -n "$MAIN" ] || { echo "prepare-systemd: no Debian archive in apt's sources" >&2; exit 1; }
    set -- "deb $MAIN trixie main" "deb $MAIN trixie-updates main"
    [ -z "$SECURITY" ] || set -- "$@" "deb $SECURITY trixie-security main"
    echo "prepare-systemd: building the base root file system (trixie, from $MAIN): $INCLUDE"
    # The kernel linux-image-amd64 depends on, downloaded by the root's own apt (its
    # package lists are gone once mmdebstrap ends).
    # shellcheck disable=SC2016
    as_root mmdebstrap --variant=minbase --include="$INCLUDE" \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        --dpkgopt='path-exclude=/usr/share/zoneinfo/*' \
        --customize-hook='mkdir -p "$1/tmp/kernel" && chmod 0777 "$1/tmp/kernel"' \
        --customize-hook='chroot "$1" sh -c "cd /tmp/kernel && apt-get download \$(apt-cache depends linux-image-amd64 | sed -n \"s/^ *Depends: \\(linux-image-[0-9][^ ]*\\)\$/\\1/p\" | head -n 1)"' \
        --customize-hook="sync-out /tmp/kernel $WORK/deb" \
        --customize-hook='rm -rf "$1/tmp/kernel"' \
        trixie "$WORK/root" "$@"
    KDEB=$(ls "$WORK"/deb/linux-image-*.deb)
    KVER=$(dpkg-deb -f "$KDEB" Package | sed 's/^linux-image-//')
fi

# The kernel's modules: the wanted ones and their dependencies, compressed as Debian ships
# them, with the kernel's own module lists; depmod is run in the root.
echo "prepare-systemd: modules of kernel $KVER"
dpkg -x "$WORK"/deb/linux-image-"$KVER"_*.deb "$WORK/kernel"
if [ "$RELEASE" != bookworm ]; then
    # The kernel the VM boots, beside the base.
    cp "$WORK/kernel/boot/vmlinuz-$KVER" "$DIR/vmlinuz.tmp"
    mv "$DIR/vmlinuz.tmp" "$DIR/vmlinuz"
    echo "$KVER" > "$DIR/kernel.version"
fi
# (Debian 13's kernel package has them under /usr/lib.)
MODDIR="$WORK/kernel/lib/modules/$KVER"
[ -d "$MODDIR" ] || MODDIR="$WORK/kernel/usr/lib/modules/$KVER"
python3 "$ROOT/scripts/vm/kernel-modules.py" --who prepare-systemd --layout tree \
    "$MODDIR" "$WORK/root/lib/modules/$KVER" $WANTED
as_root chroot "$WORK/root" depmod "$KVER"
# Loaded at boot whatever udev finds (virtio_gpu and bochs also load from their PCI
# aliases; uinput has a static /dev/uinput node).
printf '%s\n' $WANTED > "$WORK/root/etc/modules-load.d/touchlock-vm.conf"

(cd "$WORK/root" && as_root tar --numeric-owner --xattrs -cf "$BASE.tmp" .)
mv "$BASE.tmp" "$BASE"
find "$DIR" -maxdepth 1 -name 'base-*.tar' ! -name "base-$KEY.tar" -delete
as_root rm -rf "$WORK"
echo "prepare-systemd: base root file system ready: $BASE ($(du -m "$BASE" | cut -f1) MB)"
