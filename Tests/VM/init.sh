#!/bin/sh
# /init of the end-to-end test guest (busybox sh, PID 1).
#
# Mounts the kernel file systems, loads the DRM (bochs) and input (uinput, evdev) modules,
# arms a power-off watchdog, then serves the host over the serial console: each line read is
# a shell command, run with eval in this shell; "@@rc STATUS" follows its output. Lines the
# host must recognise start with "@@".
export PATH=/usr/bin:/usr/sbin:/bin:/sbin
export HOME=/root TMPDIR=/tmp FONTCONFIG_FILE=/etc/fonts/fonts.conf XDG_CACHE_HOME=/tmp/cache

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /tmp /run /root
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run

for m in $(cat /lib/modules/order); do
    insmod "/lib/modules/$m.ko" || echo "@@error insmod $m"
done

# The host has its own watchdog; this one stops a guest whose host went away.
GUEST_TIMEOUT=${GUEST_TIMEOUT:-120}
(sleep "$GUEST_TIMEOUT"; echo "@@guest-timeout"; poweroff -f) </dev/null >/dev/console 2>&1 &

stty -echo 2>/dev/null
echo "@@ready $(cut -d' ' -f1 /proc/uptime)"
while IFS= read -r line; do
    eval "$line"
    echo "@@rc $?"
done
echo "@@eof"
poweroff -f
