#!/bin/sh
# A locked Debian 12 kiosk upgraded to Debian 13 with apt full-upgrade, in the VM: a
# release's demonstration (it takes 30-60 minutes under TCG), not part of scripts/test.
#
#   scripts/vm/dist-upgrade.sh [--deb FILE] [run_dist_upgrade.py options, e.g. --out DIR]
#
# 1. The guest's Debian 12 root exactly as scripts/vm/systemd.sh makes it (its
#    --prepare-only: the base, the package from out/deb or --deb installed with dpkg);
#    Tests/VM/run_dist_upgrade.py adds build_image's settings (cage@tty1 running
#    weston-simple-touch, touchlockd on VT 8, the pattern secret).
# 2. The local repository: a copy of that root, its sources changed to trixie (the archive
#    scripts/debian-archive prints; only the copy's apt configuration changes, never this
#    machine's), `apt-get update` and `apt-get -y full-upgrade --download-only` chrooted in
#    the copy, so that its /var/cache/apt/archives holds exactly the packages the upgrade
#    needs. touchlock's Debian 13 build (out/debian13/touchlock_*_amd64.deb, made by
#    scripts/release-debian13), repacked as VERSION+deb13u1, is offered to the copy's apt
#    from a flat repository of its own, so the same download brings what it depends on and
#    apt upgrades touchlock to it in the same full-upgrade. Without that file the upgrade
#    keeps the Debian 12 build (said below). The packages go, as a flat repository
#    (dpkg-scanpackages), into the guest's root at /srv/trixie, its only source:
#    `deb [trusted=yes] file:/srv/trixie ./`.
# 3. run_dist_upgrade.py boots it (4096 MB: the root and the repository live in RAM),
#    unlocks, locks and runs the full-upgrade while locked, and checks the lock held.
# Ends with "dist-upgrade: N passed, M failed". Cache: $TOUCHLOCK_VM_CACHE (default .vm/),
# this script's files in its dist-upgrade/; outputs in .vm/out-dist-upgrade unless --out.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TOUCHLOCK_VM_CACHE:-$ROOT/.vm}
export TOUCHLOCK_VM_CACHE="$CACHE"
DEB=""
if [ "${1:-}" = "--deb" ]; then
    DEB=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
    shift 2
fi
[ "$(id -u)" -eq 0 ] || { echo "dist-upgrade: run as root (apt-get in a chroot)"; exit 1; }
# dpkg-scanpackages, for the flat repository.
"$ROOT/scripts/install-packages" dist-upgrade dpkg-dev:/usr/bin/dpkg-scanpackages

t0=$(date +%s)
if [ -n "$DEB" ]; then
    "$ROOT/scripts/vm/systemd.sh" --release bookworm --deb "$DEB" --prepare-only
else
    "$ROOT/scripts/vm/systemd.sh" --release bookworm --prepare-only
fi
R="$CACHE/systemd/root"
DIR="$CACHE/dist-upgrade"
COPY="$DIR/copy"
REPO="$DIR/trixie"
mkdir -p "$DIR"
rm -rf "$COPY" "$REPO"
t1=$(date +%s)
cp -a "$R" "$COPY"
mkdir -p "$REPO"

# The copy's sources: trixie's, and touchlock's Debian 13 build from a flat repository.
scripts_archive=$("$ROOT/scripts/debian-archive" trixie)
rm -f "$COPY"/etc/apt/sources.list.d/*
printf '%s\n' "$scripts_archive" > "$COPY/etc/apt/sources.list"
DEB13=$(ls "$ROOT"/out/debian13/touchlock_*_amd64.deb 2>/dev/null | head -n 1 || true)
if [ -n "$DEB13" ]; then
    VERSION=$(dpkg-deb -f "$DEB13" Version)
    dpkg-deb -R "$DEB13" "$DIR/deb13"
    sed -i "s/^Version: .*/Version: $VERSION+deb13u1/" "$DIR/deb13/DEBIAN/control"
    mkdir -p "$COPY/srv/deb13"
    dpkg-deb -Zxz -b "$DIR/deb13" "$COPY/srv/deb13/touchlock_${VERSION}+deb13u1_amd64.deb" >/dev/null
    rm -rf "$DIR/deb13"
    (cd "$COPY/srv/deb13" && dpkg-scanpackages . /dev/null > Packages 2>/dev/null)
    echo "deb [trusted=yes] file:/srv/deb13 ./" >> "$COPY/etc/apt/sources.list"
    echo "dist-upgrade: touchlock's Debian 13 build $DEB13, repacked as $VERSION+deb13u1"
else
    echo "dist-upgrade: no out/debian13/touchlock_*_amd64.deb (scripts/release-debian13 makes it):" \
        "the upgrade keeps touchlock's Debian 12 build"
fi
echo "dist-upgrade: the copy's sources:"
sed 's/^/    /' "$COPY/etc/apt/sources.list"
cp /etc/resolv.conf "$COPY/etc/resolv.conf"
# The packages downloaded are kept across runs in $DIR/archives (a later run downloads only
# what is new); the repository takes from it exactly those the upgrade installs.
mkdir -p "$DIR/archives/partial"
mount -t proc proc "$COPY/proc"
mount --bind "$DIR/archives" "$COPY/var/cache/apt/archives"
trap 'umount "$COPY/var/cache/apt/archives" "$COPY/proc" 2>/dev/null || true' EXIT
chroot "$COPY" apt-get -q update > "$DIR/update.log" 2>&1 \
    || { tail -n 20 "$DIR/update.log"; echo "dist-upgrade: apt-get update failed in the copy"; exit 1; }
chroot "$COPY" env DEBIAN_FRONTEND=noninteractive apt-get -q -y full-upgrade --download-only \
    > "$DIR/download.log" 2>&1 \
    || { tail -n 30 "$DIR/download.log"; echo "dist-upgrade: the download failed in the copy"; exit 1; }
# What the upgrade installs: "Inst NAME [OLD] (VERSION ...)", as NAME_VERSION.
chroot "$COPY" apt-get -s full-upgrade > "$DIR/simulate.log" 2>&1
sed -n 's/^Inst \([^ ]*\) \(\[[^]]*\] \)\{0,1\}(\([^ ]*\) .*/\1_\3/p' "$DIR/simulate.log" | sort -u > "$DIR/wanted"
umount "$COPY/var/cache/apt/archives" "$COPY/proc"
trap - EXIT
grep -E '^[0-9]+ upgraded' "$DIR/download.log" | sed 's/^/dist-upgrade: the upgrade: /'
for f in "$DIR"/archives/*.deb; do
    if grep -qxF "$(dpkg-deb -f "$f" Package)_$(dpkg-deb -f "$f" Version)" "$DIR/wanted"; then
        cp "$f" "$REPO/"
    fi
done
[ -z "$DEB13" ] || cp "$COPY"/srv/deb13/*.deb "$REPO/"
(cd "$REPO" && dpkg-scanpackages . /dev/null > Packages 2>"$DIR/scan.log")
n=$(ls "$REPO"/*.deb | wc -l)
echo "dist-upgrade: the repository: $n packages (the upgrade installs $(wc -l < "$DIR/wanted")), $(du -sm "$REPO" | cut -f1) MB"
[ "$n" -eq "$(wc -l < "$DIR/wanted")" ] || { echo "dist-upgrade: the repository lacks packages the upgrade installs"; exit 1; }
rm -rf "$COPY"

# Into the guest's root, as its only source.
rm -rf "$R/srv/trixie"
mkdir -p "$R/srv"
cp -a "$REPO" "$R/srv/trixie"
rm -f "$R"/etc/apt/sources.list.d/*
echo "deb [trusted=yes] file:/srv/trixie ./" > "$R/etc/apt/sources.list"
t2=$(date +%s)
echo "dist-upgrade: root in $((t1 - t0)) s, the repository in $((t2 - t1)) s"

exec python3 "$ROOT/Tests/VM/run_dist_upgrade.py" --vmlinux "$CACHE/vmlinux" --root "$R" \
    --initrd "$DIR/initrd.cpio" --out "$CACHE/out-dist-upgrade" "$@"
