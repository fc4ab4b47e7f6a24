#pragma once
// logind over the system bus: sd-bus from libsystemd, opened with dlopen the first time
// (touchlockd does so once its lock screen is shown: nothing of libsystemd and the
// libraries it needs is loaded at start, and a system without libsystemd runs without
// logind). sd-bus's variadic calls and message parsing are here, where C can make them;
// the daemon sees a file descriptor to poll, a timeout and one callback.
#include <stdint.h>

typedef struct tl_logind tl_logind;

enum tl_logind_event {
    TL_LOGIND_LOCK = 1,              // path: the session asked to lock (Session.Lock)
    TL_LOGIND_UNLOCK = 2,            // path: the session asked to unlock (Session.Unlock)
    TL_LOGIND_PREPARE_FOR_SLEEP = 3, // number: 1 before a sleep, 0 after it (Manager.PrepareForSleep)
    TL_LOGIND_SESSION_SEAT = 4,      // path: the session asked about; text: its seat ("" for none)
    TL_LOGIND_SLEEP_DELAY = 5,       // number: a delay inhibitor's descriptor, now the handler's
    TL_LOGIND_IDLE_HINT = 6,         // path: a session whose hint was set ("" none on the seat); number: the hint
    TL_LOGIND_WATCHING = 7,          // the signal matches are installed
    TL_LOGIND_FAILED = 8,            // text: what failed; number: which request (an enum tl_logind_event)
    TL_LOGIND_OWNER = 9,             // text: the unique name now owning org.freedesktop.login1 (NULL: none)
};

// Called on the caller's thread, from tl_logind_process only. text and path are valid
// during the call.
typedef void (*tl_logind_handler)(void *context, int event, const char *path, const char *text, int number);

// Loads libsystemd.so.0 and connects to the system bus. 0, or a negative errno with *why
// saying what failed (static text): -ELIBACC or -ENOSYS when libsystemd cannot be used,
// anything else from the connection.
int tl_logind_open(tl_logind **out, tl_logind_handler handler, void *context, const char **why);
void tl_logind_close(tl_logind *l);
int tl_logind_fd(tl_logind *l);
// The poll events to wait for (POLLIN, POLLOUT: the same bits as EPOLLIN, EPOLLOUT).
int tl_logind_events(tl_logind *l);
// When to call tl_logind_process at the latest (CLOCK_MONOTONIC, microseconds);
// UINT64_MAX: no deadline.
int tl_logind_timeout(tl_logind *l, uint64_t *usec);
// Reads, writes and dispatches until nothing is left, or `most` messages are dispatched:
// 0 when nothing is left, 1 when more may be (call it again soon), or a negative errno:
// the connection is lost.
int tl_logind_process(tl_logind *l, int most);
// How many signals were dropped so far for not coming from logind (the current owner of
// org.freedesktop.login1, which the bus tells: GetNameOwner, then its NameOwnerChanged).
uint64_t tl_logind_ignored(tl_logind *l);

// Each of these sends a request and returns; the answer comes to the handler.
// Lock, Unlock and PrepareForSleep from org.freedesktop.login1 (TL_LOGIND_WATCHING once set),
// believed only from the name's current owner (TL_LOGIND_OWNER each time it is told).
int tl_logind_watch(tl_logind *l);
// The seat of a session (TL_LOGIND_SESSION_SEAT).
int tl_logind_ask_seat(tl_logind *l, const char *session_path);
// A delay inhibitor on sleep (TL_LOGIND_SLEEP_DELAY).
int tl_logind_inhibit_sleep(tl_logind *l, const char *who, const char *why);
// The idle hint of every session on the seat (TL_LOGIND_IDLE_HINT for each).
int tl_logind_set_idle_hint(tl_logind *l, const char *seat, int idle);
