"""A stand-in for systemd-logind on a private system bus, for touchlockd's process tests.

It owns org.freedesktop.login1 and answers what touchlockd asks of logind: a session's
Seat (Properties.Get), Manager.Inhibit (a delay: the write end of a pipe, held until
touchlockd closes it), Manager.ListSessions and Session.SetIdleHint. One session,
/org/freedesktop/login1/session/_31, is on seat0.

The test drives it on its standard input, one command a line, each answered with one line
on its standard output:
  lock PATH     Session.Lock from PATH, as logind sends it (to everyone)    -> "ok"
  unlock PATH   Session.Unlock from PATH                                    -> "ok"
  sleep         Manager.PrepareForSleep(true), then waits, as logind does, until every
                delay is let go (at most 5 s)  -> "slept released=0|1 ms=N"
  wake          Manager.PrepareForSleep(false)                              -> "ok"
  calls         the method calls received so far -> "calls N Get=.. Inhibit=.. ..."
  delays        the delays held now                                          -> "delays N"
  idle          the idle hints set so far, in order    -> "idle 0 1 ..." ("idle" if none)
Usage: logind_standin.py BUS-ADDRESS
"""
import os
import sys
import time

import dbus
import dbus.lowlevel
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

LOGIN1 = "org.freedesktop.login1"
MANAGER = "org.freedesktop.login1.Manager"
SESSION = "org.freedesktop.login1.Session"
SESSION_PATH = "/org/freedesktop/login1/session/_31"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
calls = {}
delays = {}  # read end of each delay's pipe -> its GLib watch
idle_hints = []  # each SetIdleHint's argument, in order


def counted(message):
    if message.get_type() == dbus.lowlevel.MESSAGE_TYPE_METHOD_CALL:
        calls[message.get_member()] = calls.get(message.get_member(), 0) + 1
    return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED


bus.add_message_filter(lambda _bus, message: counted(message))


class Manager(dbus.service.Object):
    @dbus.service.method(MANAGER, in_signature="ssss", out_signature="h")
    def Inhibit(self, what, who, why, mode):
        r, w = os.pipe()

        def closed(fd, _condition):
            os.close(fd)
            delays.pop(fd, None)
            return False

        delays[r] = GLib.io_add_watch(r, GLib.IO_HUP | GLib.IO_ERR, closed)
        fd = dbus.types.UnixFd(w)
        os.close(w)
        return fd

    @dbus.service.method(MANAGER, in_signature="", out_signature="a(susso)")
    def ListSessions(self):
        return [("31", 1000, "kiosk", "seat0", dbus.ObjectPath(SESSION_PATH))]

    @dbus.service.signal(MANAGER, signature="b")
    def PrepareForSleep(self, before):
        pass


class Session(dbus.service.Object):
    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        if interface == SESSION and name == "Seat":
            return dbus.Struct(("seat0", dbus.ObjectPath("/org/freedesktop/login1/seat/seat0")), signature="so")
        raise dbus.exceptions.DBusException("no such property", name="org.freedesktop.DBus.Error.UnknownProperty")

    @dbus.service.method(SESSION, in_signature="b", out_signature="")
    def SetIdleHint(self, idle):
        idle_hints.append(1 if idle else 0)


def emit(path, interface, member, signature=None, *args):
    m = dbus.lowlevel.SignalMessage(path, interface, member)
    if signature:
        m.append(signature=signature, *args)
    bus.send_message(m)
    bus.flush()


name = dbus.service.BusName(LOGIN1, bus, do_not_queue=True)
manager = Manager(bus, "/org/freedesktop/login1")
session = Session(bus, SESSION_PATH)


def answer(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def sleep():
    emit("/org/freedesktop/login1", MANAGER, "PrepareForSleep", "b", True)
    start = time.monotonic()

    def check():
        waited = time.monotonic() - start
        if delays and waited < 5:
            return True
        answer("slept released=%d ms=%d" % (0 if delays else 1, waited * 1000))
        return False

    GLib.timeout_add(5, check)


def command(fd, _condition):
    line = os.read(fd, 4096).decode()
    if not line:
        loop.quit()
        return False
    for words in (l.split() for l in line.splitlines() if l.strip()):
        if words[0] == "lock":
            emit(words[1], SESSION, "Lock")
            answer("ok")
        elif words[0] == "unlock":
            emit(words[1], SESSION, "Unlock")
            answer("ok")
        elif words[0] == "sleep":
            sleep()
        elif words[0] == "wake":
            emit("/org/freedesktop/login1", MANAGER, "PrepareForSleep", "b", False)
            answer("ok")
        elif words[0] == "calls":
            answer("calls %d %s" % (sum(calls.values()), " ".join("%s=%d" % kv for kv in sorted(calls.items()))))
        elif words[0] == "delays":
            answer("delays %d" % len(delays))
        elif words[0] == "idle":
            answer(" ".join(["idle"] + ["%d" % h for h in idle_hints]))
        else:
            answer("unknown command " + words[0])
    return True


loop = GLib.MainLoop()
GLib.io_add_watch(0, GLib.IO_IN | GLib.IO_HUP, command)
answer("ready " + bus.get_unique_name())
loop.run()
