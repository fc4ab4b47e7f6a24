#!/bin/sh
# Runs the VM measurement protocol (vm-measure, kept beside the repository in
# ../shared/tools/vm-measure, not part of it) on the release touchlockd in the end-to-end test
# guest and prints its figures against the targets of the benchmarks and a reference daemon.
# Slow (a few minutes under emulation): run by hand and by the benchmark run, not by scripts/test.
#
#   scripts/vm/measure.sh [Tests/VM/measure.py options, e.g. --runs 5 --profile --visible]
#
# $TOUCHLOCK_MEASURE_TOOLS overrides where the protocol's files are; cache and outputs as in
# e2e.sh ($TOUCHLOCK_VM_CACHE, default .vm/; figures, console log and screendumps in .vm/measure).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TOUCHLOCK_VM_CACHE:-$ROOT/.vm}
export TOUCHLOCK_VM_CACHE="$CACHE"
TOOLS=${TOUCHLOCK_MEASURE_TOOLS:-$ROOT/../shared/tools/vm-measure}
for f in measure-in-guest.sh mtool.c; do
    [ -f "$TOOLS/$f" ] || { echo "measure: $TOOLS/$f not found (set TOUCHLOCK_MEASURE_TOOLS)" >&2; exit 1; }
done

"$ROOT/scripts/vm/prepare.sh"
mkdir -p "$CACHE/bin"

cd "$ROOT"
for product in touchlockd touchlockctl; do
    swift build -c release --static-swift-stdlib -Xlinker -L"$ROOT/scripts/static-libstdc++" --product "$product"
done
BIN=$(swift build -c release --static-swift-stdlib -Xlinker -L"$ROOT/scripts/static-libstdc++" --show-bin-path)

# The protocol's touchscreen injector, static as its README asks.
gcc -static -O2 -o "$CACHE/bin/mtool" "$TOOLS/mtool.c"
python3 "$ROOT/scripts/vm/build-initramfs.py" --modules "$CACHE/modules" --out "$CACHE/measure-initrd.cpio" \
    --data "$TOOLS/measure-in-guest.sh=/usr/share/touchlock-measure/measure-in-guest.sh" \
    "$BIN/touchlockd" "$CACHE/bin/mtool"

exec python3 "$ROOT/Tests/VM/measure.py" --vmlinux "$CACHE/vmlinux" --initrd "$CACHE/measure-initrd.cpio" \
    --ctl "$BIN/touchlockctl" --out "$CACHE/measure" "$@"
