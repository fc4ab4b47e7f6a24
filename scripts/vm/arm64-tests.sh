#!/bin/sh
# The unit tests on arm64, inside an arm64 guest: Debian 13's arm64 kernel under
# qemu-system-aarch64 (-M virt, TCG, -smp 2), its root file system a disk image (ext4 on
# virtio-blk) holding an arm64 Debian 13 root with what the tests use (scripts/setup's
# lists, as the amd64 tests have them), the Swift runtime of the arm64 swiftlang package,
# the cross-built test bundle with the programs it starts beside it, and the tree at /src
# (where the bundle was compiled, so the tests find their fixtures). The children the tests
# start (touchlockd, touchlockctl, weston, journald...) are arm64 programs run by the
# guest's kernel. The bundle's output comes back on the serial console.
#   scripts/vm/arm64-tests.sh [--filter REGEX] [--timeout MINUTES]
# Run by `scripts/release-arm64 --tests` after the bundle is cross-built: it needs the
# Debian 13 root of scripts/debian13 with arm64 as its foreign architecture, the SDK's
# runtime and the build in its /var/tmp/touchlock-arm64-tests (release-arm64's steps).
# Cache: $TOUCHLOCK_VM_CACHE/arm64 (default .vm/arm64): the kernel's Image (shared with
# scripts/vm/arm64.sh) and the modules the guest loads; the arm64 root in
# .build/arm64/tests-root. The console log is out/arm64/tests/console.log. Each step's time
# is printed; the tests skipped under emulation are listed with their reason, then
# "arm64-tests: N skipped", and the last line is "arm64-tests: N passed, N failed" (tests).
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TOUCHLOCK_VM_CACHE:-$ROOT/.vm}/arm64
A="$ROOT/.build/arm64/tests-root"
OUT="$ROOT/out/arm64/tests"
WORK="$ROOT/out/arm64/tests-build"    # written by the Debian 13 root (it sees out/ as /out)
die() { echo "arm64-tests: $*" >&2; exit 1; }
t=$(date +%s)
step() { now=$(date +%s); echo "arm64-tests: $1: $((now - t)) s"; t=$now; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

FILTER=""
TIMEOUT=240
while [ $# -gt 0 ]; do
    case "$1" in
        --filter) FILTER=$2; shift 2 ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        *) echo "usage: scripts/vm/arm64-tests.sh [--filter REGEX] [--timeout MINUTES]" >&2; exit 2 ;;
    esac
done
# How many times longer the tests wait where the wait is their own choice (an emulated
# arm64 runs some ten times slower than this machine); bounds of the product stay as they are.
SCALE=${TOUCHLOCK_TEST_TIME_SCALE:-10}
case "$TIMEOUT" in ''|*[!0-9]*) die "--timeout takes whole minutes, not '$TIMEOUT'" ;; esac

"$ROOT/scripts/install-packages" arm64-tests qemu-system-arm:/usr/bin/qemu-system-aarch64 \
    mmdebstrap:/usr/bin/mmdebstrap e2fsprogs:/usr/sbin/mke2fs cpio:/usr/bin/cpio
in13() { "$ROOT/scripts/debian13" --run "$@"; }
R13=$(ls -d "$ROOT"/.build/debian13/root-* 2>/dev/null | head -n 1)
[ -n "$R13" ] || die "no Debian 13 root: run scripts/release-arm64 first"
BUILD=$R13/var/tmp/touchlock-arm64-tests/aarch64-unknown-linux-gnu/debug
RT=$(ls -d "$R13"/var/tmp/swift-arm64-* 2>/dev/null | head -n 1)
[ -n "$RT" ] || die "no arm64 Swift runtime in the Debian 13 root: run scripts/release-arm64 first"
mkdir -p "$CACHE" "$OUT" "$WORK"

# 1. The kernel: Debian 13's arm64 kernel (the package linux-image-arm64 depends on), its
#    Image as scripts/vm/arm64.sh caches it, and the modules this guest loads: the disk
#    and its file system (ext4 with its checksums, crc32c), and uinput and evdev for the tests that make input devices.
MODULES="virtio_blk ext4 crc32c_generic uinput evdev"
KPKG=$(in13 apt-cache depends linux-image-arm64:arm64 2>/dev/null \
    | sed -n 's/^ *Depends: \(linux-image-[0-9][^ :]*\).*/\1/p' | head -n 1)
[ -n "$KPKG" ] || die "the Debian 13 root's apt names no kernel for linux-image-arm64 (is arm64 a foreign architecture there?)"
KVER=${KPKG#linux-image-}
if [ "$(cat "$CACHE/tests-kernel.version" 2>/dev/null || true)" != "$KVER $MODULES" ] || [ ! -f "$CACHE/tests-Image" ] \
        || [ ! -f "$CACHE/tests-busybox" ]; then
    rm -rf "$WORK/debs" "$CACHE/tests-modules" "$CACHE/tests-Image" "$CACHE/tests-busybox" "$CACHE/tests-kernel.version"
    mkdir -p "$WORK/debs"
    chmod 0777 "$WORK/debs"    # apt-get download runs as _apt where it can
    in13 sh -c "cd /out/arm64/tests-build/debs && apt-get -q download $KPKG:arm64 busybox-static:arm64" \
        > "$WORK/download.log" 2>&1 || { tail -n 20 "$WORK/download.log"; die "the arm64 kernel was not downloaded"; }
    rm -rf "$WORK/kernel"
    dpkg-deb --fsys-tarfile "$WORK"/debs/busybox-static_*.deb | tar -xO --wildcards './*bin/busybox' > "$CACHE/tests-busybox"
    chmod 755 "$CACHE/tests-busybox"
    dpkg-deb -x "$WORK"/debs/"$KPKG"_*.deb "$WORK/kernel"
    # Debian 13's arm64 vmlinuz is the kernel's Image as it is (scripts/vm/arm64.sh
    # checks the same magic and decompresses older ones).
    python3 - "$WORK/kernel/boot/vmlinuz-$KVER" "$CACHE/tests-Image" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
if data[56:60] != b"ARM\x64":
    sys.exit(f"arm64-tests: {sys.argv[1]} is no plain arm64 Image (magic {data[56:60]!r})")
open(sys.argv[2], "wb").write(data)
PY
    MODDIR=$(ls -d "$WORK/kernel/usr/lib/modules/$KVER" "$WORK/kernel/lib/modules/$KVER" 2>/dev/null | head -n 1)
    # shellcheck disable=SC2086
    python3 "$ROOT/scripts/vm/kernel-modules.py" --who arm64-tests --layout flat "$MODDIR" "$CACHE/tests-modules" $MODULES
    rm -rf "$WORK/kernel" "$WORK/debs"
    echo "$KVER $MODULES" > "$CACHE/tests-kernel.version"
fi
step "kernel $KVER, its modules and busybox"

# 2. The arm64 root: Debian 13's packages the tests use, as scripts/setup lists them for
#    the build and the tests (its NEEDED and TEST lists, GCC 14 as on Debian 13), with the
#    essential set, unpacked by mmdebstrap (--variant=extract: nothing run in it, so no
#    emulation is needed to make it). What maintainer scripts would have made, the tests
#    need little of: the users and groups (base-passwd's), a machine id, /etc/hosts.
PKGS=$(sed -n '/^NEEDED="/,/^DEB="/p' "$ROOT/scripts/setup" | sed -n 's/^\(NEEDED="\|TEST="\)\{0,1\}\([a-z0-9][a-z0-9.+$-]*\):\/.*/\2/p' \
    | sed 's/\$GCC/14/' | tr '\n' ',')
ESSENTIAL=base-files,base-passwd,bash,bsdutils,coreutils,dash,debianutils,diffutils,dpkg,findutils,grep,gzip,hostname,libc-bin,ncurses-base,ncurses-bin,perl-base,sed,sysvinit-utils,tar,util-linux,mount,procps,perl,python3
INCLUDE="$ESSENTIAL,${PKGS%,}"
KEY=$( (echo "$INCLUDE"; sed -n '/^# 2\. The arm64 root/,/^step "arm64 root/p' "$0") | sha256sum | cut -c1-16)
if [ ! -f "$A/.ready-$KEY" ]; then
    as_root rm -rf "$A"
    mkdir -p "$(dirname "$A")"
    MIRROR=$(sed -n 's/^deb \([^ ]*\) trixie main$/\1/p' "$ROOT/.build/debian13/sources.list" | head -n 1)
    as_root mmdebstrap --variant=extract --architectures=arm64 --include="$INCLUDE" \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
        trixie "$A" "deb ${MIRROR:-http://deb.debian.org/debian} trixie main" > "$WORK/root.log" 2>&1 \
        || { tail -n 20 "$WORK/root.log"; die "the arm64 root was not made"; }
    # Merged /usr, as an installed Debian 13 has it.
    for d in bin sbin lib; do
        if [ -d "$A/$d" ] && [ ! -L "$A/$d" ]; then as_root cp -a "$A/$d/." "$A/usr/$d/" && as_root rm -rf "${A:?}/$d"; fi
        [ -e "$A/$d" ] || as_root ln -s "usr/$d" "$A/$d"
    done
    cp "$A/usr/share/base-passwd/passwd.master" "$A/etc/passwd"
    cp "$A/usr/share/base-passwd/group.master" "$A/etc/group"
    sed 's/:.*$/:*:20000:0:99999:7:::/' "$A/etc/passwd" > "$A/etc/shadow"
    chmod 0640 "$A/etc/shadow"
    od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$A/etc/machine-id"
    echo >> "$A/etc/machine-id"
    echo arm64-tests > "$A/etc/hostname"
    printf '127.0.0.1\tlocalhost arm64-tests\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$A/etc/hosts"
    touch "$A/.ready-$KEY"
fi
step "arm64 root ($(du -sm "$A" | cut -f1) MB)"

# 3. The guest's disk: the root, the runtime, the bundle and its programs, the tree; its
#    init (an initramfs of busybox and the modules) mounts it and runs the tests there.
[ -x "$BUILD/touchlockPackageTests.xctest" ] || die "no arm64 test bundle in $BUILD: run scripts/release-arm64 --tests"
S="$WORK/stage"
as_root rm -rf "$S"
cp -al "$A" "$S"
# The runtime at the path the bundle was linked against (its RUNPATH names it).
RTG=${RT#"$R13"}/usr/libexec/swift/lib/swift/linux
mkdir -p "$(dirname "$S$RTG")"
cp -a "$RT/usr/libexec/swift/lib/swift/linux" "$S$RTG"
BG=/var/tmp/touchlock-arm64-tests/aarch64-unknown-linux-gnu/debug
mkdir -p "$S$BG"
# The bundle and the executables beside it (what the tests start), not the objects.
find "$BUILD" -maxdepth 1 -type f -perm -u+x -exec cp -a {} "$S$BG/" \;
find "$BUILD" -maxdepth 1 -type d -name '*.resources' -exec cp -a {} "$S$BG/" \;
mkdir -p "$S/src"
tar -C "$ROOT" --exclude=./.build --exclude=./out --exclude=./.git --exclude=./.vm -cf - . | tar -C "$S/src" -xf -
L=$S/usr/local/lib/touchlock-tests
mkdir -p "$L"
cp "$CACHE/tests-busybox" "$L/busybox"
printf '%s\n' "$FILTER" > "$L/filter"
echo "::sysinit:/usr/local/lib/touchlock-tests/run" > "$S/etc/inittab"
cat > "$L/run" <<EOF
#!/bin/sh
# Runs in the guest under busybox's init (which reaps what the tests leave behind).
B=/usr/local/lib/touchlock-tests/busybox
mount -t proc proc /proc 2>/dev/null
mount -t sysfs sysfs /sys 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
# The links a booted system's /dev has (systemd-udevd makes them; devtmpfs does not):
# scripts and tools write to /dev/stdout.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
\$B hostname arm64-tests
\$B ip link set lo up
echo "arm64-tests: guest ready after \$(cut -d' ' -f1 /proc/uptime) s"
F=\$(cat /usr/local/lib/touchlock-tests/filter)
# What runs, every two minutes: a run that stops printing shows where it waits.
( while sleep 120; do
    echo "arm64-tests: at \$(cut -d' ' -f1 /proc/uptime) s, load \$(cut -d' ' -f1-3 /proc/loadavg):"
    ps -e -o pid=,ppid=,stat=,etime=,time=,wchan:24=,args= | grep -v ' \[' | sed 's/^/arm64-tests: ps /' | cut -c1-200
  done ) &
cd /src
start=\$(cut -d' ' -f1 /proc/uptime)
env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root LANG=C.UTF-8 \
    LD_LIBRARY_PATH=$RTG TOUCHLOCK_TEST_TIME_SCALE=$SCALE \
    $BG/touchlockPackageTests.xctest --testing-library swift-testing \${F:+--filter "\$F"} 2>&1
echo "arm64-tests: bundle exited \$? after \$(cut -d' ' -f1 /proc/uptime) s (started at \$start s)"
sync
\$B poweroff -f
EOF
chmod 755 "$L/run"
IMG="$WORK/disk.img"
rm -f "$IMG"
MB=$(( $(du -sm "$S" | cut -f1) * 5 / 4 + 256 ))
mke2fs -q -t ext4 -O ^has_journal -L arm64-tests -d "$S" "$IMG" "${MB}M" || die "mke2fs -d failed"
as_root rm -rf "$S"
step "disk image ($MB MB)"

# The initramfs: busybox, the modules, an /init that mounts the disk and hands over to it.
I="$WORK/initrd"
rm -rf "$I"
mkdir -p "$I/bin" "$I/modules" "$I/dev" "$I/proc" "$I/sys" "$I/newroot"
cp "$CACHE/tests-busybox" "$I/bin/busybox"
cp "$CACHE/tests-modules"/*.ko "$CACHE/tests-modules/order" "$I/modules/"
cat > "$I/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
for m in $(/bin/busybox cat /modules/order); do /bin/busybox insmod /modules/$m.ko; done
n=0
while [ ! -b /dev/vda ] && [ $n -lt 100 ]; do /bin/busybox sleep 0.1; n=$((n + 1)); done
/bin/busybox mount -t ext4 /dev/vda /newroot || { echo "arm64-tests: no root disk"; /bin/busybox poweroff -f; }
/bin/busybox mount --move /dev /newroot/dev
/bin/busybox umount /proc /sys
exec /bin/busybox switch_root /newroot /usr/local/lib/touchlock-tests/busybox init
EOF
chmod 755 "$I/init"
(cd "$I" && find . | cpio -o -H newc --quiet) > "$WORK/initrd.cpio"
rm -rf "$I"
step "initramfs"

# 4. The run: the console is the guest's only output.
LOG="$OUT/console.log"
rm -f "$LOG"
qstart=$(date +%s)
timeout $((TIMEOUT * 60)) qemu-system-aarch64 -M virt -accel tcg -cpu max,pauth-impdef=on -smp 2 -m 4096 \
    -nodefaults -display none -no-reboot -kernel "$CACHE/tests-Image" -initrd "$WORK/initrd.cpio" \
    -append "console=ttyAMA0 quiet panic=-1" \
    -drive file="$IMG",format=raw,if=none,id=root,cache=unsafe -device virtio-blk-pci,drive=root \
    -serial file:"$LOG" || echo "arm64-tests: QEMU ended with $? (124: the ${TIMEOUT} min timeout)"
qend=$(date +%s)
ready=$(sed -n 's/^arm64-tests: guest ready after \([0-9.]*\) s.*/\1/p' "$LOG" | tr -d '\r' | head -n 1)
ran=$(sed -n 's/^arm64-tests: bundle exited .* after \([0-9.]*\) s (started at \([0-9.]*\) s).*/\1 \2/p' "$LOG" | tr -d '\r' | head -n 1)
echo "arm64-tests: QEMU ran $((qend - qstart)) s; the guest ready at ${ready:-?} s of its uptime;" \
    "the bundle ran $(echo "${ran:-}" | awk '{ if (NF == 2) printf "%.0f", $1 - $2; else printf "?" }') s"
step "the tests in the arm64 guest"
tr -d '\r' < "$LOG" > "$OUT/tests.log"
# swift-testing's lines: "✘ Test NAME failed after S seconds with N issues." per failed
# test, and at the end "✔ Test run with N tests passed after S seconds." (or "✘ ... failed").
# A run that did not finish has the issues recorded so far.
{ grep -a ' Test .* failed after ' "$OUT/tests.log" | grep -av ' Test run with ' \
    | sed 's/^[^ ]* Test \(.*\) failed after .*/\1/'
  sed -n 's/^[^ ]* Test \(.*\) recorded an issue .*/\1/p' "$OUT/tests.log"; } | sort -u > "$OUT/failed"
grep -a ' Test run with ' "$OUT/tests.log" | tail -n 1
sed 's/^/arm64-tests: failed: /' "$OUT/failed"
total=$(sed -n 's/.* Test run with \([0-9]*\) tests\{0,1\} .*/\1/p' "$OUT/tests.log" | tail -n 1)
failing=$(wc -l < "$OUT/failed")
# A test not run here says why: "✘ Test NAME skipped: "REASON"".
sed -n 's/^[^ ]* Test \(.*\) skipped: \(.*\)/arm64-tests: skipped: \1: \2/p' "$OUT/tests.log"
skipped=$(grep -ac '^[^ ]* Test .* skipped: ' "$OUT/tests.log" || true)
if [ -z "$total" ]; then
    echo "arm64-tests: the run did not finish: $(grep -ac ' Test .* passed after ' "$OUT/tests.log") tests had passed (console: $LOG)"
    echo "arm64-tests: 0 passed, $failing failed"
    exit 1
fi
echo "arm64-tests: $skipped skipped"
echo "arm64-tests: $((total - failing - skipped)) passed, $failing failed"
[ "$failing" -eq 0 ]
