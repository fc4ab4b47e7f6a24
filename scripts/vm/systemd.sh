#!/bin/sh
# touchlock installed from its .deb on a small Debian 12 (or 13) booted with systemd as PID 1:
# builds the package (scripts/deb) unless --deb names one, prepares the base root file
# system (scripts/vm/prepare-systemd.sh, cached in .vm/systemd/), unpacks it, installs
# the package there with dpkg in a chroot, then runs Tests/VM/run_systemd.py: it adds
# the test's settings and files, enables the unit as README.Debian says, adds the kiosk
# (cage@tty1 as cage's wiki has it, with the drop-in of docs/integrating.md), packs the root into an
# initramfs, boots it under QEMU and runs the checks. Two copies of the package with
# higher versions are put in the root for the upgrade checks. Runs as root.
#
#   scripts/vm/systemd.sh [--release bookworm|trixie] [--deb FILE] [--prepare-only] [run_systemd.py options, e.g. --out DIR]
#
# --prepare-only: stops once the root with the package is ready ($CACHE/systemd/root, or
# $CACHE/systemd-RELEASE/root), for a script that boots it otherwise (scripts/vm/dist-upgrade.sh).
#
# --release trixie: the same on Debian 13, with its own kernel (6.12), systemd 257 and cage
# 0.2.0, the package built here (on Debian 12) installed as it is; its root and kernel are
# cached in .vm/systemd-trixie/, its outputs go to .vm/out-systemd-trixie.
# Ends with "vm-systemd: N passed, M failed". Cache and outputs: $TOUCHLOCK_VM_CACHE
# (default .vm/); screenshots and the console log in .vm/out-systemd unless --out.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TOUCHLOCK_VM_CACHE:-$ROOT/.vm}
export TOUCHLOCK_VM_CACHE="$CACHE"
DEB=""
RELEASE=bookworm
if [ "${1:-}" = "--release" ]; then
    RELEASE=$2
    shift 2
fi
if [ "${1:-}" = "--deb" ]; then
    DEB=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
    shift 2
fi
PREPARE_ONLY=0
if [ "${1:-}" = "--prepare-only" ]; then
    PREPARE_ONLY=1
    shift
fi

# dpkg and systemctl run in a chroot, and the root's files are root's.
[ "$(id -u)" -eq 0 ] || { echo "vm-systemd: run as root (dpkg -i and systemctl enable in a chroot)"; exit 1; }

t0=$(date +%s)
if [ -z "$DEB" ]; then
    "$ROOT/scripts/deb" > "$CACHE/deb.log" 2>&1 || { tail -n 30 "$CACHE/deb.log"; echo "vm-systemd: the package did not build"; exit 1; }
    DEB=$(ls "$ROOT"/out/deb/touchlock_*_*.deb)
fi
"$ROOT/scripts/vm/prepare-systemd.sh" --release "$RELEASE" "$DEB"
BUILD_DAEMON=0
. "$ROOT/scripts/vm/guest-programs.sh"
t1=$(date +%s)

# The guest's root: the base, and the package installed as on any Debian system.
if [ "$RELEASE" = bookworm ]; then
    DIR="$CACHE/systemd"
    KERNEL="$CACHE/vmlinux"
    OUT="$CACHE/out-systemd"
else
    DIR="$CACHE/systemd-$RELEASE"
    KERNEL="$DIR/vmlinuz"
    OUT="$CACHE/out-systemd-$RELEASE"
fi
R="$DIR/root"
rm -rf "$R"
mkdir -p "$R"
BASE=$(ls -t "$DIR"/base-*.tar | head -n 1)
tar --numeric-owner --xattrs -xf "$BASE" -C "$R"
# The base's packages were installed without their docs and man pages; touchlock's are
# installed whole.
rm -f "$R/etc/dpkg/dpkg.cfg.d/99mmdebstrap"
cp "$DEB" "$R/tmp/touchlock.deb"
chroot "$R" dpkg -i /tmp/touchlock.deb > "$DIR/dpkg.log" 2>&1 \
    || { cat "$DIR/dpkg.log"; echo "vm-systemd: dpkg -i failed in the guest's root"; exit 1; }
rm -f "$R/tmp/touchlock.deb"
# touchinject, built on this Debian 12 (libevdev linked in).
install -m 0755 "$CACHE/bin/touchinject" "$R/usr/local/bin/touchinject"
# The upgrades the deployment checks install with dpkg -i: the same package with higher
# versions (only its control file changed), as an upgrade from the archive would be.
VERSION=$(dpkg-deb -f "$DEB" Version)
rm -rf "$DIR/upgrade"
dpkg-deb -R "$DEB" "$DIR/upgrade"
for n in 1 2 3 4; do
    sed -i "s/^Version: .*/Version: $VERSION+vmupgrade$n/" "$DIR/upgrade/DEBIAN/control"
    dpkg-deb -Zgzip -z1 -b "$DIR/upgrade" "$R/root/touchlock-upgrade-$n.deb" >/dev/null
done
rm -rf "$DIR/upgrade"
t2=$(date +%s)
echo "vm-systemd: prepared in $((t1 - t0)) s, root with the package in $((t2 - t1)) s"
if [ "$PREPARE_ONLY" = 1 ]; then
    echo "vm-systemd: the root with the package: $R"
    exit 0
fi

exec python3 "$ROOT/Tests/VM/run_systemd.py" --release "$RELEASE" --vmlinux "$KERNEL" --root "$R" \
    --initrd "$DIR/initrd.cpio" --out "$OUT" "$@"
