# Sourced by scripts/vm/e2e.sh and kiosk.sh (after ROOT and CACHE are set): builds what
# the guest runs. With BUILD_DAEMON=1 the release binaries (Swift runtime linked in
# statically) are built and BIN names their folder; the uinput injector, drmmaster (the
# master-loss check's other process) and drmfill (the two-card check's app) are always built.
# PROGRAMS lists the files to put in the guest image.
PROGRAMS=""
BIN=""
if [ "${BUILD_DAEMON:-1}" -eq 1 ]; then
    (cd "$ROOT" && for product in touchlockd touchlockctl; do
        swift build -c release --static-swift-stdlib -Xlinker -L"$ROOT/scripts/static-libstdc++" --product "$product"
    done)
    BIN=$(cd "$ROOT" && swift build -c release --static-swift-stdlib -Xlinker -L"$ROOT/scripts/static-libstdc++" --show-bin-path)
    PROGRAMS="$BIN/touchlockd $BIN/touchlockctl"
fi
mkdir -p "$CACHE/bin"
# libevdev linked in, as in touchlockd: a guest with the package installed has no libevdev2.
# shellcheck disable=SC2046
gcc -O2 -Wall -o "$CACHE/bin/touchinject" "$ROOT/Tests/VM/touchinject.c" $(pkg-config --cflags libevdev) \
    -Wl,-Bstatic -levdev -Wl,-Bdynamic
gcc -O2 -Wall -o "$CACHE/bin/drmmaster" "$ROOT/Tests/VM/drmmaster.c"
# drmfill: the app of the two-card check (the kernel's DRM ioctls only; libdrm's headers).
gcc -O2 -Wall -I/usr/include/libdrm -o "$CACHE/bin/drmfill" "$ROOT/Tests/VM/drmfill.c"
PROGRAMS="$PROGRAMS $CACHE/bin/touchinject $CACHE/bin/drmmaster $CACHE/bin/drmfill"
