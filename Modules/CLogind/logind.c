#define _GNU_SOURCE
#include "logind.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

// The functions used, looked up in libsystemd.so.0 with the types of their declarations.
#define SYMBOLS(X)                         \
    X(sd_bus_open_system)                  \
    X(sd_bus_set_description)              \
    X(sd_bus_flush_close_unref)            \
    X(sd_bus_get_fd)                       \
    X(sd_bus_get_events)                   \
    X(sd_bus_get_timeout)                  \
    X(sd_bus_process)                      \
    X(sd_bus_match_signal_async)           \
    X(sd_bus_add_match_async)              \
    X(sd_bus_call_method_async)            \
    X(sd_bus_message_get_path)             \
    X(sd_bus_message_get_sender)           \
    X(sd_bus_message_get_error)            \
    X(sd_bus_message_is_method_error)      \
    X(sd_bus_message_enter_container)      \
    X(sd_bus_message_read)

static struct {
    void *library;
#define FIELD(name) __typeof__(&name) name;
    SYMBOLS(FIELD)
#undef FIELD
} sd;

static int load(const char **why) {
    if (sd.library != NULL) return 0;
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        *why = "libsystemd.so.0 cannot be loaded";
        return -ELIBACC;
    }
#define LOOKUP(name)                                                 \
    sd.name = (__typeof__(&name))dlsym(library, #name);              \
    if (sd.name == NULL) {                                           \
        *why = "libsystemd.so.0 has no " #name;                      \
        dlclose(library);                                            \
        return -ENOSYS;                                              \
    }
    SYMBOLS(LOOKUP)
#undef LOOKUP
    sd.library = library;
    return 0;
}

struct tl_logind {
    sd_bus *bus;
    tl_logind_handler handler;
    void *context;
    // The unique name of org.freedesktop.login1's owner, the only sender whose signals are
    // logind's: NULL until the bus has said, "" while nobody owns the name.
    char *owner;
    // Signals from anyone else, counted and otherwise dropped.
    uint64_t ignored;
};

static const char *const login1 = "org.freedesktop.login1";
static const char *const manager_path = "/org/freedesktop/login1";
static const char *const manager_interface = "org.freedesktop.login1.Manager";
static const char *const session_interface = "org.freedesktop.login1.Session";
static const char *const properties_interface = "org.freedesktop.DBus.Properties";
// The bus itself: the daemon sets the sender of every message it passes on to the sender's
// unique name, and this name is the bus's own, which no connection can own.
static const char *const bus_name = "org.freedesktop.DBus";
static const char *const bus_path = "/org/freedesktop/DBus";
static const char *const owner_changes =
    "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
    "member='NameOwnerChanged',arg0='org.freedesktop.login1'";

int tl_logind_open(tl_logind **out, tl_logind_handler handler, void *context, const char **why) {
    *out = NULL;
    int r = load(why);
    if (r < 0) return r;
    tl_logind *l = calloc(1, sizeof *l);
    if (l == NULL) {
        *why = "out of memory";
        return -ENOMEM;
    }
    r = sd.sd_bus_open_system(&l->bus);
    if (r < 0) {
        *why = "cannot connect to the system bus";
        free(l);
        return r;
    }
    sd.sd_bus_set_description(l->bus, "touchlockd");
    l->handler = handler;
    l->context = context;
    *out = l;
    return 0;
}

void tl_logind_close(tl_logind *l) {
    if (l == NULL) return;
    sd.sd_bus_flush_close_unref(l->bus);
    free(l->owner);
    free(l);
}

uint64_t tl_logind_ignored(tl_logind *l) { return l->ignored; }

int tl_logind_fd(tl_logind *l) { return sd.sd_bus_get_fd(l->bus); }
int tl_logind_events(tl_logind *l) { return sd.sd_bus_get_events(l->bus); }
int tl_logind_timeout(tl_logind *l, uint64_t *usec) { return sd.sd_bus_get_timeout(l->bus, usec); }

int tl_logind_process(tl_logind *l, int most) {
    for (int i = 0; i < most; i++) {
        int r = sd.sd_bus_process(l->bus, NULL);
        if (r <= 0) return r;
    }
    return 1;
}

// A method call's reply: 0, or the error's text handed to the handler as `request`'s failure.
static int failed(tl_logind *l, sd_bus_message *m, int request, const char *what) {
    if (!sd.sd_bus_message_is_method_error(m, NULL)) return 0;
    const sd_bus_error *e = sd.sd_bus_message_get_error(m);
    char text[512];
    snprintf(text, sizeof text, "%s: %s", what, e != NULL && e->message != NULL ? e->message : "an error");
    l->handler(l->context, TL_LOGIND_FAILED, NULL, text, request);
    return 1;
}

static void unreadable(tl_logind *l, int request, const char *what, int r) {
    char text[512];
    snprintf(text, sizeof text, "%s: cannot read the answer: %s", what, strerror(-r));
    l->handler(l->context, TL_LOGIND_FAILED, NULL, text, request);
}

// Whether a signal is logind's: sent by the current owner of org.freedesktop.login1. The
// bus does not check a signal sent to us by name (a unicast one) against the sender a
// match names, and its policy lets anyone send one: anything else is counted, and that is
// all the work it costs.
static int from_logind(tl_logind *l, sd_bus_message *m) {
    const char *sender = sd.sd_bus_message_get_sender(m);
    if (l->owner != NULL && l->owner[0] != '\0' && sender != NULL && strcmp(sender, l->owner) == 0) return 1;
    l->ignored++;
    return 0;
}

static int on_lock(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    tl_logind *l = userdata;
    if (!from_logind(l, m)) return 0;
    const char *path = sd.sd_bus_message_get_path(m);
    if (path != NULL) l->handler(l->context, TL_LOGIND_LOCK, path, NULL, 0);
    return 0;
}

static int on_unlock(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    tl_logind *l = userdata;
    if (!from_logind(l, m)) return 0;
    const char *path = sd.sd_bus_message_get_path(m);
    if (path != NULL) l->handler(l->context, TL_LOGIND_UNLOCK, path, NULL, 0);
    return 0;
}

static int on_sleep(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    tl_logind *l = userdata;
    if (!from_logind(l, m)) return 0;
    int before = 0;
    int r = sd.sd_bus_message_read(m, "b", &before);
    if (r < 0) unreadable(l, TL_LOGIND_PREPARE_FOR_SLEEP, "PrepareForSleep", r);
    else l->handler(l->context, TL_LOGIND_PREPARE_FOR_SLEEP, NULL, NULL, before);
    return 0;
}

static int on_installed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    tl_logind *l = userdata;
    if (!failed(l, m, TL_LOGIND_WATCHING, "AddMatch")) l->handler(l->context, TL_LOGIND_WATCHING, NULL, NULL, 0);
    return 0;
}

// The new owner of org.freedesktop.login1 ("" for none), told to the handler.
static void set_owner(tl_logind *l, const char *owner) {
    char *copy = strdup(owner);
    free(l->owner);
    // Out of memory: nobody is believed until the bus says again.
    l->owner = copy;
    l->handler(l->context, TL_LOGIND_OWNER, NULL, owner[0] != '\0' ? owner : NULL, 0);
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    tl_logind *l = userdata;
    const char *sender = sd.sd_bus_message_get_sender(m);
    if (sender == NULL || strcmp(sender, bus_name) != 0) {
        l->ignored++;
        return 0;
    }
    const char *name = NULL, *old = NULL, *now = NULL;
    int r = sd.sd_bus_message_read(m, "sss", &name, &old, &now);
    if (r < 0) {
        // Nobody is believed until the bus says again.
        free(l->owner);
        l->owner = NULL;
        unreadable(l, TL_LOGIND_OWNER, "NameOwnerChanged", r);
    } else if (strcmp(name, login1) == 0) {
        set_owner(l, now);
    }
    return 0;
}

static int on_owner(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    tl_logind *l = userdata;
    if (sd.sd_bus_message_is_method_error(m, "org.freedesktop.DBus.Error.NameHasNoOwner")) {
        set_owner(l, "");
        return 0;
    }
    if (failed(l, m, TL_LOGIND_OWNER, "GetNameOwner")) return 0;
    const char *owner = NULL;
    int r = sd.sd_bus_message_read(m, "s", &owner);
    if (r < 0) unreadable(l, TL_LOGIND_OWNER, "GetNameOwner", r);
    else set_owner(l, owner);
    return 0;
}

int tl_logind_watch(tl_logind *l) {
    // The owner first: the bus answers GetNameOwner after it has installed the match on
    // its changes (one connection's messages are handled in order), and logind's signals
    // come only once their matches are installed, after that answer.
    int r = sd.sd_bus_add_match_async(l->bus, NULL, owner_changes, on_owner_changed, NULL, l);
    if (r >= 0)
        r = sd.sd_bus_call_method_async(l->bus, NULL, bus_name, bus_path, bus_name, "GetNameOwner", on_owner, l, "s",
                                        login1);
    // Only the three matches' last installation is reported: they go out in order on one
    // connection, and a bus that refuses one refuses them all.
    if (r >= 0) r = sd.sd_bus_match_signal_async(l->bus, NULL, login1, NULL, session_interface, "Lock", on_lock, NULL, l);
    if (r >= 0) r = sd.sd_bus_match_signal_async(l->bus, NULL, login1, NULL, session_interface, "Unlock", on_unlock, NULL, l);
    if (r >= 0)
        r = sd.sd_bus_match_signal_async(l->bus, NULL, login1, manager_path, manager_interface, "PrepareForSleep",
                                         on_sleep, on_installed, l);
    return r < 0 ? r : 0;
}

// A request whose answer needs what was asked: freed when the answer comes.
struct request {
    tl_logind *l;
    int idle;
    char path[];
};

static struct request *request_new(tl_logind *l, const char *path, int idle) {
    size_t n = strlen(path);
    struct request *q = malloc(sizeof *q + n + 1);
    if (q == NULL) return NULL;
    q->l = l;
    q->idle = idle;
    memcpy(q->path, path, n + 1);
    return q;
}

// Reads a property of type (so), the answer to Properties.Get.
static int read_id_and_path(sd_bus_message *m, const char **id, const char **path) {
    int r = sd.sd_bus_message_enter_container(m, 'v', "(so)");
    if (r < 0) return r;
    return sd.sd_bus_message_read(m, "(so)", id, path);
}

static int on_seat(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    struct request *q = userdata;
    tl_logind *l = q->l;
    if (!failed(l, m, TL_LOGIND_SESSION_SEAT, "the session's seat")) {
        const char *seat = NULL, *path = NULL;
        int r = read_id_and_path(m, &seat, &path);
        if (r < 0) unreadable(l, TL_LOGIND_SESSION_SEAT, "the session's seat", r);
        else l->handler(l->context, TL_LOGIND_SESSION_SEAT, q->path, seat, 0);
    }
    free(q);
    return 0;
}

int tl_logind_ask_seat(tl_logind *l, const char *session_path) {
    struct request *q = request_new(l, session_path, 0);
    if (q == NULL) return -ENOMEM;
    int r = sd.sd_bus_call_method_async(l->bus, NULL, login1, session_path, properties_interface, "Get", on_seat, q,
                                        "ss", session_interface, "Seat");
    if (r < 0) free(q);
    return r < 0 ? r : 0;
}

static int on_inhibit(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    tl_logind *l = userdata;
    if (failed(l, m, TL_LOGIND_SLEEP_DELAY, "Inhibit")) return 0;
    int fd = -1;
    int r = sd.sd_bus_message_read(m, "h", &fd);
    if (r < 0) {
        unreadable(l, TL_LOGIND_SLEEP_DELAY, "Inhibit", r);
        return 0;
    }
    // The message owns its descriptor: the handler gets a copy of its own.
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (own < 0) {
        unreadable(l, TL_LOGIND_SLEEP_DELAY, "Inhibit", -errno);
        return 0;
    }
    l->handler(l->context, TL_LOGIND_SLEEP_DELAY, NULL, NULL, own);
    return 0;
}

int tl_logind_inhibit_sleep(tl_logind *l, const char *who, const char *why) {
    int r = sd.sd_bus_call_method_async(l->bus, NULL, login1, manager_path, manager_interface, "Inhibit", on_inhibit, l,
                                        "ssss", "sleep", who, why, "delay");
    return r < 0 ? r : 0;
}

static int on_hint_set(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    struct request *q = userdata;
    if (!failed(q->l, m, TL_LOGIND_IDLE_HINT, q->path))
        q->l->handler(q->l->context, TL_LOGIND_IDLE_HINT, q->path, NULL, q->idle);
    free(q);
    return 0;
}

// The answer to ListSessions, a(susso): each session's id, uid, user, seat and path. The
// hint is set on every session of the seat (the seat is idle when all of them are).
static int on_sessions(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    struct request *q = userdata;
    tl_logind *l = q->l;
    int r = 0, set = 0;
    if (failed(l, m, TL_LOGIND_IDLE_HINT, "ListSessions")) goto done;
    r = sd.sd_bus_message_enter_container(m, 'a', "(susso)");
    while (r >= 0) {
        const char *id = NULL, *user = NULL, *seat = NULL, *path = NULL;
        uint32_t uid = 0;
        r = sd.sd_bus_message_read(m, "(susso)", &id, &uid, &user, &seat, &path);
        if (r <= 0) break;
        if (strcmp(seat, q->path) != 0) continue;
        struct request *next = request_new(l, path, q->idle);
        if (next == NULL) break;
        int c = sd.sd_bus_call_method_async(l->bus, NULL, login1, path, session_interface, "SetIdleHint", on_hint_set,
                                            next, "b", q->idle);
        if (c < 0) {
            free(next);
            r = c;
            break;
        }
        set++;
    }
    if (r < 0) unreadable(l, TL_LOGIND_IDLE_HINT, "ListSessions", r);
    else if (set == 0) l->handler(l->context, TL_LOGIND_IDLE_HINT, "", NULL, q->idle);
done:
    free(q);
    return 0;
}

int tl_logind_set_idle_hint(tl_logind *l, const char *seat, int idle) {
    struct request *q = request_new(l, seat, idle != 0);
    if (q == NULL) return -ENOMEM;
    int r = sd.sd_bus_call_method_async(l->bus, NULL, login1, manager_path, manager_interface, "ListSessions",
                                        on_sessions, q, NULL);
    if (r < 0) free(q);
    return r < 0 ? r : 0;
}
