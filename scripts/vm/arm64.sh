#!/bin/sh
# The arm64 package on a real arm64 kernel: Debian 13's arm64 kernel under
# qemu-system-aarch64 (-M virt, -cpu max, TCG, virtio-gpu-pci), an initramfs with the
# package's touchlockd and touchlockctl, their arm64 libraries, an arm64 busybox and the
# uinput injector built for arm64; then Tests/VM/run_e2e.py --arch arm64: the lock screen
# shown and compared with `touchlockctl preview` of the same size and density, a wrong
# pattern failing, the right one unlocking, a code-pad daemon unlocking by taps.
#   scripts/vm/arm64.sh [run_e2e.py options, e.g. --runs 3, or --full for the panel checks too]
# Run by `scripts/release-arm64 --vm` after the package is built: it needs the Debian 13
# root of scripts/debian13 with arm64 as its foreign architecture, and the arm64 root
# .build/arm64/root with the package unpacked (release-arm64's steps 1 and 4).
# Cache: $TOUCHLOCK_VM_CACHE/arm64 (default .vm/arm64); screendumps and the console log in
# out/arm64/vm. Each step's time is printed; the last line is "vm-e2e: N passed, N failed".
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TOUCHLOCK_VM_CACHE:-$ROOT/.vm}/arm64
A="$ROOT/.build/arm64/root"
OUT="$ROOT/out/arm64/vm"
WORK="$ROOT/out/arm64/vm-build"    # written by the Debian 13 root (it sees out/ as /out)
die() { echo "arm64-vm: $*" >&2; exit 1; }
t=$(date +%s)
step() { now=$(date +%s); echo "arm64-vm: $1: $((now - t)) s"; t=$now; }

[ -x "$A/usr/sbin/touchlockd" ] && [ -x "$A/usr/bin/touchlockctl" ] \
    || die "no arm64 package unpacked in $A: run scripts/release-arm64 first"
"$ROOT/scripts/install-packages" arm64-vm qemu-system-arm:/usr/bin/qemu-system-aarch64 \
    qemu-user-static:/usr/bin/qemu-aarch64-static
in13() { "$ROOT/scripts/debian13" --run "$@"; }
mkdir -p "$CACHE" "$OUT" "$WORK"

FULL=0
for a in "$@"; do [ "$a" = "--full" ] && FULL=1; done

# 1. The kernel (the package linux-image-arm64 depends on) and busybox-static, Debian 13's
#    arm64 packages, fetched by the Debian 13 root's apt (this machine's apt is not told
#    of arm64 or of Debian 13).
# The virtio-gpu card, uinput and evdev, with what they depend on; the PCI transport is
# built into Debian's arm64 kernel (listed in case another kernel has it as a module).
MODULES="virtio_pci virtio_gpu uinput evdev"
KPKG=$(in13 apt-cache depends linux-image-arm64:arm64 2>/dev/null \
    | sed -n 's/^ *Depends: \(linux-image-[0-9][^ :]*\).*/\1/p' | head -n 1)
[ -n "$KPKG" ] || die "the Debian 13 root's apt names no kernel for linux-image-arm64 (is arm64 a foreign architecture there?)"
KVER=${KPKG#linux-image-}
if [ "$(cat "$CACHE/kernel.version" 2>/dev/null || true)" != "$KVER $MODULES" ] || [ ! -f "$CACHE/Image" ]; then
    rm -rf "$WORK/debs" "$CACHE/kernel" "$CACHE/modules" "$CACHE/Image" "$CACHE/busybox" "$CACHE/kernel.version"
    mkdir -p "$WORK/debs"
    chmod 0777 "$WORK/debs"    # apt-get download runs as _apt where it can
    in13 sh -c "cd /out/arm64/vm-build/debs && apt-get -q download $KPKG:arm64 busybox-static:arm64" \
        > "$WORK/download.log" 2>&1 || { tail -n 20 "$WORK/download.log"; die "the arm64 kernel was not downloaded"; }
    dpkg-deb -x "$WORK"/debs/"$KPKG"_*.deb "$CACHE/kernel"
    # Debian 13 ships both in /usr (usr-merged); older packages had them in / .
    dpkg-deb --fsys-tarfile "$WORK"/debs/busybox-static_*.deb | tar -xO --wildcards './*bin/busybox' > "$CACHE/busybox"
    chmod 755 "$CACHE/busybox"
    # Debian 13's arm64 vmlinuz is the kernel's Image as it is (EFI stub, not compressed);
    # one compressed with gzip, or an EFI zboot image holding it, is decompressed here, as
    # QEMU loads the plain Image fastest.
    python3 - "$CACHE/kernel/boot/vmlinuz-$KVER" "$CACHE/Image" <<'PY'
import gzip, struct, sys
data = open(sys.argv[1], "rb").read()
if data[:2] == b"MZ" and data[4:8] == b"zimg":
    offset, size = struct.unpack("<II", data[8:16])
    kind = data[24:32].rstrip(b"\0").decode()
    if kind != "gzip":
        sys.exit(f"arm64-vm: the EFI zboot kernel is compressed with {kind}, not gzip")
    data = data[offset:offset + size]
if data[:2] == b"\x1f\x8b":
    data = gzip.decompress(data)
if data[56:60] != b"ARM\x64":
    sys.exit(f"arm64-vm: {sys.argv[1]} is no arm64 Image (magic {data[56:60]!r})")
open(sys.argv[2], "wb").write(data)
print(f"arm64-vm: Image {len(data)} bytes")
PY
    MODDIR=$(ls -d "$CACHE/kernel/usr/lib/modules/$KVER" "$CACHE/kernel/lib/modules/$KVER" 2>/dev/null | head -n 1)
    # shellcheck disable=SC2086
    python3 "$ROOT/scripts/vm/kernel-modules.py" --who arm64-vm --layout flat "$MODDIR" "$CACHE/modules" $MODULES
    rm -rf "$CACHE/kernel" "$WORK/debs"
    echo "$KVER $MODULES" > "$CACHE/kernel.version"
fi
step "kernel $KVER and busybox (Debian 13, arm64)"

# 2. The uinput injector for arm64: the root's clang (swiftlang's) with its arm64 libevdev
#    (a Build-Depends, installed for arm64 by release-arm64), linked in as on amd64.
in13 sh -eu -c '
    PKG_CONFIG_PATH=/usr/lib/aarch64-linux-gnu/pkgconfig
    export PKG_CONFIG_PATH
    /usr/libexec/swift/bin/clang --target=aarch64-linux-gnu -fuse-ld=lld -O2 -Wall \
        -o /out/arm64/vm-build/touchinject /src/Tests/VM/touchinject.c $(pkg-config --cflags libevdev) \
        -Wl,-Bstatic -levdev -Wl,-Bdynamic
' > "$WORK/touchinject.log" 2>&1 || { cat "$WORK/touchinject.log"; die "touchinject was not built for arm64"; }
cp "$WORK/touchinject" "$CACHE/touchinject"
step "touchinject (arm64)"

# 3. The initramfs: the package's binaries and their libraries from the arm64 root.
DATA=""
for d in ntrig-dell-xt2-protocol-a.desc elo-2700-intellitouch-singletouch.desc 3m-microtouch-0596-0502-22in.desc; do
    DATA="$DATA --data $ROOT/Tests/TouchlockInputTests/Fixtures/$d=/usr/share/touchlock-test/$d"
done
# shellcheck disable=SC2086
python3 "$ROOT/scripts/vm/build-initramfs.py" --sysroot "$A" --busybox "$CACHE/busybox" \
    --emulator qemu-aarch64-static --modules "$CACHE/modules" --out "$CACHE/initrd.cpio" $DATA \
    "$A/usr/sbin/touchlockd" "$A/usr/bin/touchlockctl" "$CACHE/touchinject"
step "initramfs"

# The host's touchlockctl for the test (hashes of the pattern and the code, the previews):
# the arm64 one of the package, under qemu-aarch64 with the arm64 root.
cat > "$CACHE/touchlockctl" <<EOF
#!/bin/sh
FONTCONFIG_FILE=$A/etc/fonts/fonts.conf exec qemu-aarch64-static -L $A $A/usr/bin/touchlockctl "\$@"
EOF
chmod 755 "$CACHE/touchlockctl"

# 4. The checks. TCG emulates every arm64 instruction: the timeouts are longer than amd64's.
ARGS=""
[ "$FULL" -eq 1 ] || ARGS="--basic"
STATUS=0
# shellcheck disable=SC2086
python3 "$ROOT/Tests/VM/run_e2e.py" --arch arm64 --preview $ARGS --vmlinux "$CACHE/Image" \
    --initrd "$CACHE/initrd.cpio" --ctl "$CACHE/touchlockctl" --out "$OUT" --timeout 600 --boot-timeout 240 \
    $(for a in "$@"; do [ "$a" = "--full" ] || printf '%s ' "$a"; done) || STATUS=1
step "the checks in the arm64 guest"
exit $STATUS
