#!/bin/sh
# Runs the VM measurement protocol (vm-measure, kept beside the repository in
# ../shared/tools/vm-measure, not part of it) on the release touchlockd in the end-to-end test
# guest and, in the same boot and taking turns with it, on the reference daemon (unl0kr, built
# out of tree by scripts/vm/build-reference.sh), and prints both columns against the targets.
# Slow (a few minutes under emulation): run by hand and by the benchmark run, not by scripts/test.
#
#   scripts/vm/measure.sh [--reference PATH/TO/unl0kr] [Tests/VM/measure.py options, e.g. --runs 5 --profile]
#   ... --perf also puts Debian's perf and strace and touchlockd with its symbols in the image,
#   and profiles the drag inside the guest after the runs (installs linux-perf and strace).
#
# The reference may also be given as $TOUCHLOCK_REFERENCE; without it its column says "not
# measured". $TOUCHLOCK_MEASURE_TOOLS overrides where the protocol's files are; cache and outputs
# as in e2e.sh ($TOUCHLOCK_VM_CACHE, default .vm/; figures, console log and screendumps in .vm/measure).
set -eu
REFERENCE=${TOUCHLOCK_REFERENCE:-}
if [ "${1:-}" = --reference ]; then
    [ $# -ge 2 ] || { echo "measure: --reference needs the unl0kr executable" >&2; exit 2; }
    REFERENCE=$2; shift 2
fi
if [ -n "$REFERENCE" ]; then
    [ -x "$REFERENCE" ] || { echo "measure: the reference $REFERENCE is not an executable" >&2; exit 1; }
    REFERENCE=$(cd "$(dirname "$REFERENCE")" && pwd)/$(basename "$REFERENCE")
fi

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

# With --perf: the profilers, and the daemon with its symbols beside the stripped one.
PERF=""
case " $* " in *" --perf "*)
    for tool in perf strace; do
        command -v $tool >/dev/null || { apt-get install -y -q linux-perf strace >/dev/null || exit 1; }
    done
    PERF="$(command -v perf) $(command -v strace)" ;;
esac

# The protocol's touchscreen injector, static as its README asks.
gcc -static -O2 -o "$CACHE/bin/mtool" "$TOOLS/mtool.c"
# With the reference: its keyboard maps (it compiles one at start) and libinput's device quirks.
[ -z "$REFERENCE" ] || set -- --reference "$(basename "$REFERENCE")" "$@"
python3 "$ROOT/scripts/vm/build-initramfs.py" --modules "$CACHE/modules" --out "$CACHE/measure-initrd.cpio" \
    --data "$TOOLS/measure-in-guest.sh=/usr/share/touchlock-measure/measure-in-guest.sh" \
    ${REFERENCE:+--tree /usr/share/X11/xkb --tree /usr/share/libinput} \
    ${PERF:+--data "$BIN/touchlockd=/usr/lib/touchlock-measure/touchlockd"} \
    "$BIN/touchlockd" "$BIN/touchlockctl" "$CACHE/bin/mtool" ${REFERENCE:+"$REFERENCE"} $PERF

exec python3 "$ROOT/Tests/VM/measure.py" --vmlinux "$CACHE/vmlinux" --initrd "$CACHE/measure-initrd.cpio" \
    --ctl "$BIN/touchlockctl" --out "$CACHE/measure" "$@"
