#!/bin/sh
# touchlock on real kiosk compositors: prepares the VM ingredients and the kiosk stacks from
# Debian's packages (weston kiosk-shell, cage, seatd, udev), builds the release binaries, the
# uinput injector and the kiosk guest image (.vm/initrd-kiosk.cpio, apart from the e2e one),
# then boots one guest per stack and runs the checks (Tests/VM/run_kiosk.py).
#
#   scripts/vm/kiosk.sh [--stand] [run_kiosk.py options, e.g. --stack cage --runs 3]
#
# --stand runs the compositors, the touches and the VT hand-off by hand only, without
# building touchlockd. Ends with "vm-kiosk: N passed, M failed".
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TOUCHLOCK_VM_CACHE:-$ROOT/.vm}
export TOUCHLOCK_VM_CACHE="$CACHE"
STAND=0
for a in "$@"; do [ "$a" = "--stand" ] && STAND=1; done

"$ROOT/scripts/vm/prepare-kiosk.sh"
BUILD_DAEMON=$((1 - STAND))
. "$ROOT/scripts/vm/guest-programs.sh"
DAEMON=""
[ -z "$BIN" ] || DAEMON="--daemon $BIN/touchlockd --ctl $BIN/touchlockctl"

python3 "$ROOT/scripts/vm/build-initramfs.py" --kiosk --modules "$CACHE/modules-kiosk" \
    --out "$CACHE/initrd-kiosk.cpio" $PROGRAMS

exec python3 "$ROOT/Tests/VM/run_kiosk.py" --vmlinux "$CACHE/vmlinux" --initrd "$CACHE/initrd-kiosk.cpio" \
    --out "$CACHE/out-kiosk" $DAEMON "$@"
