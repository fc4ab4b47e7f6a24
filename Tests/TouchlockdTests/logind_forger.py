"""A local user forging logind's signals on the system bus, for touchlockd's process tests.

The system bus lets anyone send a signal to anyone (Debian's policy allows signals): this
sends logind's signals straight to the connection of the process PID, from its own
connection. It ends with a call to the bus, whose answer comes once the bus has taken
every signal sent before it.
  logind_forger.py BUS-ADDRESS PID lock [COUNT]   Session.Lock, from session _31 (COUNT:
                                                  from as many sessions, _1 to _COUNT)
  logind_forger.py BUS-ADDRESS PID sleep          Manager.PrepareForSleep(true)
  logind_forger.py BUS-ADDRESS PID owner          the bus's NameOwnerChanged saying this
                                                  connection now owns login1, then Lock
Prints "sent N from NAME to NAME".
"""
import sys

import dbus
import dbus.lowlevel

address, pid, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
count = int(sys.argv[4]) if len(sys.argv) > 4 else 0
bus = dbus.bus.BusConnection(address)
driver = bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus")
target = None
for name in driver.ListNames(dbus_interface="org.freedesktop.DBus"):
    if name.startswith(":"):
        try:
            if driver.GetConnectionUnixProcessID(name, dbus_interface="org.freedesktop.DBus") == pid:
                target = name
        except dbus.exceptions.DBusException:
            pass
if target is None:
    sys.exit("no connection of process %d on the bus" % pid)


def signal(path, interface, member, signature=None, *args):
    m = dbus.lowlevel.SignalMessage(path, interface, member)
    m.set_destination(target)
    if signature:
        m.append(signature=signature, *args)
    bus.send_message(m)


SESSION = "org.freedesktop.login1.Session"
sent = 0
if kind == "lock" and count > 0:
    for i in range(1, count + 1):
        signal("/org/freedesktop/login1/session/_%d" % i, SESSION, "Lock")
        sent += 1
elif kind == "lock":
    signal("/org/freedesktop/login1/session/_31", SESSION, "Lock")
    sent = 1
elif kind == "sleep":
    signal("/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep", "b", True)
    sent = 1
elif kind == "owner":
    owner = driver.GetNameOwner("org.freedesktop.login1", dbus_interface="org.freedesktop.DBus")
    signal("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", "sss",
           "org.freedesktop.login1", owner, bus.get_unique_name())
    signal("/org/freedesktop/login1/session/_31", SESSION, "Lock")
    sent = 2
else:
    sys.exit("unknown kind " + kind)
bus.flush()
driver.GetId(dbus_interface="org.freedesktop.DBus")
print("sent %d from %s to %s" % (sent, bus.get_unique_name(), target))
