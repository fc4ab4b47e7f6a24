#!/bin/sh
# Builds the reference daemon of the VM measurement (scripts/vm/measure.sh --reference):
# unl0kr, the LVGL-based DRM unlocker of buffybox, from its public sources, out of tree and for
# the measurement only. Neither its sources nor its build belong in this repository: give the
# source trees as arguments and the build directory outside the work tree (or under .vm/).
#
#   scripts/vm/build-reference.sh BUFFYBOX_SRC LVGL_SRC BUILD_DIR
#
# The figures in docs/benchmarks.md were taken with buffybox 437ff2c (its lvgl submodule at
# 75557e5f); for example, from git directories:
#   git --git-dir=buffybox.git archive 437ff2c | tar x -C BUFFYBOX_SRC
#   git --git-dir=lvgl.git archive 75557e5f | tar x -C LVGL_SRC
# A release build with meson (buildtype=release, LTO as buffybox asks), the DRM backend, no
# manual pages or systemd units; linked against Debian's shared libraries (libinput, libudev,
# libxkbcommon, libinih, libdrm) as distributions ship it. build-initramfs.py copies those into
# the guest with the executable. Prints the executable's path last.
set -eu

[ $# -eq 3 ] || { echo "usage: $0 BUFFYBOX_SRC LVGL_SRC BUILD_DIR" >&2; exit 2; }
BUFFYBOX=$(cd "$1" && pwd)
LVGL=$(cd "$2" && pwd)
mkdir -p "$3"
BUILD=$(cd "$3" && pwd)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

[ -f "$BUFFYBOX/unl0kr/main.c" ] || { echo "build-reference: $BUFFYBOX is not a buffybox tree (no unl0kr/main.c)" >&2; exit 1; }
[ -f "$LVGL/lvgl.h" ] || { echo "build-reference: $LVGL is not an LVGL tree (no lvgl.h)" >&2; exit 1; }
case "$BUILD/" in
    "$ROOT/.vm/"*) ;;
    "$ROOT/"*) echo "build-reference: build under .vm/ or outside the repository, not in $BUILD" >&2; exit 1;;
esac

"$ROOT/scripts/install-packages" build-reference meson:/usr/bin/meson ninja-build:/usr/bin/ninja \
    pkg-config:/usr/bin/pkg-config libinih-dev:/usr/include/ini.h libinput-dev:/usr/include/libinput.h \
    libudev-dev:/usr/include/libudev.h libxkbcommon-dev:/usr/include/xkbcommon/xkbcommon.h \
    libdrm-dev:/usr/include/xf86drm.h xkb-data:/usr/share/X11/xkb/rules/evdev

# buffybox expects LVGL in its own tree (lvgl/, a submodule): a copy of buffybox with a link.
SRC="$BUILD/src"
rm -rf "$SRC"
mkdir -p "$SRC"
(cd "$BUFFYBOX" && tar cf - --exclude=./lvgl .) | (cd "$SRC" && tar xf -)
ln -s "$LVGL" "$SRC/lvgl"

if [ ! -f "$BUILD/out/build.ninja" ]; then
    meson setup "$BUILD/out" "$SRC" --buildtype=release -Dwith-drm=enabled -Dman=false \
        -Dsystemd-password-agent=disabled -Dsystemd-buffyboard-service=disabled
fi
ninja -C "$BUILD/out" unl0kr/unl0kr
echo "$BUILD/out/unl0kr/unl0kr"
