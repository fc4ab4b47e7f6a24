#!/bin/sh
# The end-to-end test on a real kernel: prepares the VM ingredients, builds the release
# binaries (Swift runtime linked in statically), the uinput injector and the initramfs, then
# boots the guest and runs the checks (Tests/VM/run_e2e.py).
#
#   scripts/vm/e2e.sh [--smoke | --outputs | --cards | --clock-only] [run_e2e.py options, e.g. --out DIR --runs 5]
#
# Then the outputs test (Tests/VM/run_outputs.py: two virtio-gpu heads, hotplug, master
# loss) in a second guest, and the two-card test (Tests/VM/run_cards.py: bochs and
# virtio-gpu, the app on both, a card gone and back) in a third. --smoke checks the VM
# infrastructure only and does not build the daemon; --outputs runs the outputs and
# two-card tests only; --cards the two-card test only; --clock-only the clock's check (q) only.
# Cache and outputs: $TOUCHLOCK_VM_CACHE (default .vm/); screenshots in .vm/out unless --out.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TOUCHLOCK_VM_CACHE:-$ROOT/.vm}
export TOUCHLOCK_VM_CACHE="$CACHE"
SMOKE=0
OUTPUTS_ONLY=0
CARDS_ONLY=0
CLOCK_ONLY=0
for a in "$@"; do
    [ "$a" = "--smoke" ] && SMOKE=1
    [ "$a" = "--outputs" ] && OUTPUTS_ONLY=1
    [ "$a" = "--cards" ] && OUTPUTS_ONLY=1 && CARDS_ONLY=1
    [ "$a" = "--clock-only" ] && CLOCK_ONLY=1
done

"$ROOT/scripts/vm/prepare.sh"
BUILD_DAEMON=$((1 - SMOKE))
. "$ROOT/scripts/vm/guest-programs.sh"
CTL=""
[ -z "$BIN" ] || CTL="--ctl $BIN/touchlockctl"

# Real panel descriptions for the uinput clones (protocol A, single touch, 60 slots).
DATA=""
for d in ntrig-dell-xt2-protocol-a.desc elo-2700-intellitouch-singletouch.desc 3m-microtouch-0596-0502-22in.desc; do
    DATA="$DATA --data $ROOT/Tests/TouchlockInputTests/Fixtures/$d=/usr/share/touchlock-test/$d"
done
python3 "$ROOT/scripts/vm/build-initramfs.py" --modules "$CACHE/modules" --out "$CACHE/initrd.cpio" \
    $DATA $PROGRAMS

STATUS=0
if [ "$OUTPUTS_ONLY" -eq 0 ]; then
    python3 "$ROOT/Tests/VM/run_e2e.py" --vmlinux "$CACHE/vmlinux" --initrd "$CACHE/initrd.cpio" \
        --out "$CACHE/out" $CTL "$@" || STATUS=1
fi
if [ "$SMOKE" -eq 0 ] && [ "$CLOCK_ONLY" -eq 0 ]; then
    if [ "$CARDS_ONLY" -eq 0 ]; then
        python3 "$ROOT/Tests/VM/run_outputs.py" --vmlinux "$CACHE/vmlinux" --initrd "$CACHE/initrd.cpio" \
            --out "$CACHE/out" $CTL || STATUS=1
    fi
    python3 "$ROOT/Tests/VM/run_cards.py" --vmlinux "$CACHE/vmlinux" --initrd "$CACHE/initrd.cpio" \
        --out "$CACHE/out" $CTL || STATUS=1
fi
exit $STATUS
