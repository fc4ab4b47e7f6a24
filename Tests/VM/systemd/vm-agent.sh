#!/bin/sh
# The systemd test guest's command channel (touchlock-vm-agent.service, on ttyS0; the
# kernel's and systemd's console is ttyS1): each line read is a shell command, run with
# eval in this shell; "@@rc STATUS" follows its output. Lines the host must recognise
# start with "@@".
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TMPDIR=/tmp SYSTEMD_PAGER= SYSTEMD_COLORS=0 TERM=dumb COLUMNS=200

# The host has its own watchdog; this one stops a guest whose host went away.
timeout=$(sed -n 's/.*guest_timeout=\([0-9]*\).*/\1/p' /proc/cmdline)
(sleep "${timeout:-300}"; echo "@@guest-timeout"; systemctl poweroff --force --force) </dev/null >/dev/ttyS0 2>&1 &

stty -echo 2>/dev/null
echo "@@ready $(cut -d' ' -f1 /proc/uptime)"
while IFS= read -r line; do
    eval "$line"
    echo "@@rc $?"
done
echo "@@eof"
