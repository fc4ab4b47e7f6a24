#!/bin/sh
# Prepares what the kiosk VM test (scripts/vm/kiosk.sh) needs on top of prepare.sh, idempotently:
#   - the kiosk compositors and what the guest runs beside them, from Debian's packages:
#     weston (kiosk-shell, DRM backend, weston-simple-touch), cage, seatd, udev, libinput's
#     udev helpers and quirks, xkb data;
#   - the kernel modules of both stacks in their load order, dependencies first (bochs for
#     weston, virtio_gpu + virtio_pci for cage, which wlroots cannot run on bochs), in
#     $CACHE/modules-kiosk; the e2e test's own module set is left as it is.
# Cache: $TOUCHLOCK_VM_CACHE, default .vm/ at the repository root.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TOUCHLOCK_VM_CACHE:-$ROOT/.vm}
export TOUCHLOCK_VM_CACHE="$CACHE"
# The modules asked for; their dependencies are added from the modules' own .modinfo.
WANTED="bochs virtio_gpu virtio_pci uinput evdev"
OUT="$CACHE/modules-kiosk"

"$ROOT/scripts/vm/prepare.sh"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# --- host packages ---------------------------------------------------------------
# package:file-that-proves-it-is-installed
NEEDED="weston:/usr/bin/weston-simple-touch
cage:/usr/bin/cage
seatd:/usr/sbin/seatd
udev:/bin/udevadm
libinput-bin:/lib/udev/libinput-device-group
libinput10:/usr/share/libinput
xkb-data:/usr/share/X11/xkb/rules/evdev"
# shellcheck disable=SC2086
"$ROOT/scripts/install-packages" prepare-kiosk $NEEDED

# --- kernel modules ------------------------------------------------------------------
KVER=$(cat "$CACHE/kernel.version")
if [ "$(cat "$OUT/kernel.version" 2>/dev/null || true)" = "$KVER" ] && [ -f "$OUT/order" ] \
    && [ "$(cat "$OUT/wanted" 2>/dev/null || true)" = "$WANTED" ]; then
    echo "prepare-kiosk: modules ready in $OUT: $(cat "$OUT/order")"
    exit 0
fi

echo "prepare-kiosk: fetching the modules of kernel $KVER"
TMP="$CACHE/deb-kiosk"
rm -rf "$TMP" "$OUT"
mkdir -p "$TMP" "$OUT"
chmod 0777 "$TMP" 2>/dev/null || true
(cd "$TMP" && apt-get download "linux-image-$KVER") \
    || { as_root apt-get update && (cd "$TMP" && apt-get download "linux-image-$KVER"); }
dpkg -x "$TMP"/linux-image-"$KVER"_*.deb "$TMP/kernel"

python3 "$ROOT/scripts/vm/kernel-modules.py" --who prepare-kiosk --layout flat \
    "$TMP/kernel/lib/modules/$KVER" "$OUT" $WANTED
rm -rf "$TMP"
echo "$WANTED" > "$OUT/wanted"
echo "$KVER" > "$OUT/kernel.version"
echo "prepare-kiosk: modules ready in $OUT"
