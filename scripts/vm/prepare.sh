#!/bin/sh
# Prepares what the end-to-end VM test needs, idempotently:
#   - host packages (qemu-system-x86, busybox-static, cpio, libevdev-dev, ...);
#   - Debian's kernel (the package linux-image-amd64 depends on), unpacked into the cache;
#   - an uncompressed ELF vmlinux extracted from its xz bzImage (QEMU boots it through PVH,
#     which saves the decompression under emulation);
#   - the kernel modules the guest loads, decompressed.
# Cache: $TOUCHLOCK_VM_CACHE, default .vm/ at the repository root.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${TOUCHLOCK_VM_CACHE:-$ROOT/.vm}
# bochs for the e2e test's display; virtio_gpu (with its dependencies, in load order) for the
# outputs test's two heads.
MODULES="drm drm_kms_helper ttm drm_ttm_helper drm_vram_helper bochs virtio_ring virtio drm_shmem_helper virtio_dma_buf virtio_gpu virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci uinput evdev"
mkdir -p "$CACHE"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# --- host packages ---------------------------------------------------------------
# package:file-that-proves-it-is-installed
NEEDED="qemu-system-x86:/usr/bin/qemu-system-x86_64
busybox-static:/bin/busybox
cpio:/usr/bin/cpio
libevdev-dev:/usr/include/libevdev-1.0/libevdev/libevdev-uinput.h
gcc:/usr/bin/gcc
libdrm-dev:/usr/include/libdrm/drm_mode.h
python3:/usr/bin/python3
fonts-dejavu-core:/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
pkg-config:/usr/bin/pkg-config"
# libdrm-dev: the headers of the kernel's DRM ioctls, for drmfill (the two-card check's app).
# shellcheck disable=SC2086
"$ROOT/scripts/install-packages" prepare $NEEDED

# --- the kernel ---------------------------------------------------------------------
KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
if [ -z "$KPKG" ]; then
    as_root apt-get update
    KPKG=$(apt-cache depends linux-image-amd64 | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
fi
[ -n "$KPKG" ] || { echo "prepare: cannot tell which kernel linux-image-amd64 depends on" >&2; exit 1; }
KVER=${KPKG#linux-image-}

if [ "$(cat "$CACHE/kernel.version" 2>/dev/null || true)" = "$KVER" ] && [ -f "$CACHE/vmlinux" ] \
    && [ "$(cat "$CACHE/modules/order" 2>/dev/null || true)" = "$MODULES" ]; then
    echo "prepare: kernel $KVER ready in $CACHE"
    exit 0
fi

echo "prepare: fetching kernel $KVER"
rm -rf "$CACHE/deb" "$CACHE/kernel" "$CACHE/modules" "$CACHE/vmlinux" "$CACHE/kernel.version"
mkdir -p "$CACHE/deb" "$CACHE/modules"
# apt-get download drops privileges to _apt when it can write the directory.
chmod 0777 "$CACHE/deb" 2>/dev/null || true
(cd "$CACHE/deb" && apt-get download "$KPKG") \
    || { as_root apt-get update && (cd "$CACHE/deb" && apt-get download "$KPKG"); }
dpkg -x "$CACHE"/deb/"$KPKG"_*.deb "$CACHE/kernel"

python3 - "$CACHE/kernel/boot/vmlinuz-$KVER" "$CACHE/vmlinux" <<'PY'
# Finds the xz stream inside the bzImage and decompresses it into the ELF vmlinux
# (what the kernel's scripts/extract-vmlinux does for xz).
import lzma, sys
data = open(sys.argv[1], "rb").read()
magic = b"\xfd7zXZ\x00"
pos = data.find(magic)
while pos >= 0:
    try:
        d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
        out = d.decompress(data[pos:])
        if out[:4] == b"\x7fELF":
            open(sys.argv[2], "wb").write(out)
            print(f"prepare: vmlinux {len(out)} bytes (xz stream at offset {pos})")
            sys.exit(0)
    except lzma.LZMAError:
        pass
    pos = data.find(magic, pos + 1)
sys.exit("prepare: no xz-compressed ELF found in " + sys.argv[1])
PY

MODDIR="$CACHE/kernel/lib/modules/$KVER"
for m in $MODULES; do
    # A module's file may spell its name with dashes (virtio-gpu.ko for virtio_gpu).
    alt=$(echo "$m" | tr _ -)
    f=$(find "$MODDIR" -name "$m.ko.xz" -o -name "$m.ko" -o -name "$alt.ko.xz" -o -name "$alt.ko" | head -n1)
    [ -n "$f" ] || { echo "prepare: module $m not found in $MODDIR" >&2; exit 1; }
    case "$f" in
        *.xz) python3 -c 'import lzma,sys; open(sys.argv[2],"wb").write(lzma.open(sys.argv[1]).read())' "$f" "$CACHE/modules/$m.ko" ;;
        *) cp "$f" "$CACHE/modules/$m.ko" ;;
    esac
done
echo "$MODULES" > "$CACHE/modules/order"
# Only vmlinux and the modules are kept.
rm -rf "$CACHE/deb" "$CACHE/kernel"
echo "$KVER" > "$CACHE/kernel.version"
echo "prepare: kernel $KVER ready in $CACHE"
