/*
 * touchinject: a uinput multitouch touchscreen driven by commands on stdin.
 *
 * Creates a direct-touch device ("touchlock test panel": INPUT_PROP_DIRECT, ten MT slots,
 * ABS_MT_POSITION_X/Y and ABS_X/Y over 0..32767, BTN_TOUCH) through libevdev's uinput API,
 * then reads one command per line and writes the events:
 *
 *   size W H        screen size in pixels, used to convert pixel positions (default 1280 800)
 *   down X Y        finger down at pixel (X, Y): slot 0, new tracking id, BTN_TOUCH 1, SYN
 *   move X Y        the finger moves to (X, Y), SYN
 *   up              the finger lifts: tracking id -1, BTN_TOUCH 0, SYN
 *   down2 X Y, move2 X Y, up2
 *                   the same for a second finger, in slot 1 (protocol B only); BTN_TOUCH
 *                   stays 1 while either is down
 *   wait-open PID   blocks until process PID has this device's /dev/input/eventN open
 *                   (10 s at most), then prints "opened /dev/input/eventN"
 *   unplug          destroys the device (mid gesture, if a finger is down)
 *   replug          creates it again; prints "device /dev/input/eventN"
 *   flood N         N frames of position reports back and forth, written at once (more
 *                   than the evdev client buffer holds when N is large); the finger
 *                   stays down or up as it was
 *   sleep MS        sleeps MS milliseconds
 *   echo TEXT       prints TEXT (a marker for whoever reads our stdout)
 *
 * With --desc FILE the device is a clone of an evemu description (N:, I:, P:, B:, A: lines,
 * as evemu-describe writes them) and speaks the protocol the description implies: slots
 * (protocol B), multitouch axes without slots (protocol A, SYN_MT_REPORT), or ABS_X/ABS_Y
 * with BTN_TOUCH or BTN_LEFT (single touch). Positions are scaled to the axes' ranges.
 *
 * With --name NAME the panel is the same under another name (for a udev rule to match).
 *
 * With --keyboard the device is a keypad ("touchlock test keypad": KEY_0 ... KEY_9,
 * KEY_BACKSPACE, KEY_ENTER, KEY_ESC) and takes one more command:
 *
 *   key CODE        presses and releases the key with that code (e.g. 2 is KEY_1), SYN each
 *
 * On start it prints "device /dev/input/eventN". Exit status: 0 at end of input, 1 if the
 * device cannot be created, 2 if a wait-open timed out, 3 on a malformed command.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libevdev/libevdev.h>
#include <libevdev/libevdev-uinput.h>

#define AXIS_MAX 32767
/* Units per millimetre: a 217 x 136 mm panel, the size of a 10" 1280x800 display. */
#define RES_X 151
#define RES_Y 241

static struct libevdev_uinput *uidev;
static struct libevdev *dev;
static int screen_w = 1280, screen_h = 800;
static int tracking_id;
static int finger_down;
enum protocol { PROTOCOL_B, PROTOCOL_A, SINGLE };
static enum protocol proto = PROTOCOL_B;
static unsigned button = BTN_TOUCH;

/* Pixel to the range of axis `code`, [min, max] spanning the screen edge to edge. */
static int to_axis(double px, int size, unsigned code)
{
    const struct input_absinfo *a = libevdev_get_abs_info(dev, code);
    int min = a ? a->minimum : 0, max = a ? a->maximum : AXIS_MAX;
    long v = min + (long)((px + 0.5) * ((long)max - min + 1) / size);
    if (v < min)
        v = min;
    if (v > max)
        v = max;
    return (int)v;
}

static void emit(unsigned type, unsigned code, int value)
{
    int rc = libevdev_uinput_write_event(uidev, type, code, value);
    if (rc < 0) {
        fprintf(stderr, "touchinject: write event: %s\n", strerror(-rc));
        exit(1);
    }
}

static int has(unsigned type, unsigned code) { return libevdev_has_event_code(dev, type, code); }

static void position(double x, double y)
{
    if (proto != SINGLE) {
        emit(EV_ABS, ABS_MT_POSITION_X, to_axis(x, screen_w, ABS_MT_POSITION_X));
        emit(EV_ABS, ABS_MT_POSITION_Y, to_axis(y, screen_h, ABS_MT_POSITION_Y));
        if (proto == PROTOCOL_A)
            emit(EV_SYN, SYN_MT_REPORT, 0);
    }
    if (has(EV_ABS, ABS_X) && has(EV_ABS, ABS_Y)) {
        emit(EV_ABS, ABS_X, to_axis(x, screen_w, ABS_X));
        emit(EV_ABS, ABS_Y, to_axis(y, screen_h, ABS_Y));
    }
}

/* A second contact (protocol B, slot 1), for a finger beside a resting one. */
static int second_down;

static void finger(int down, double x, double y)
{
    if (proto == PROTOCOL_B) {
        emit(EV_ABS, ABS_MT_SLOT, 0);
        if (down && !finger_down)
            emit(EV_ABS, ABS_MT_TRACKING_ID, tracking_id++ & 0xffff);
        if (!down)
            emit(EV_ABS, ABS_MT_TRACKING_ID, -1);
    }
    if (down)
        position(x, y);
    else if (proto == PROTOCOL_A)
        emit(EV_SYN, SYN_MT_REPORT, 0);    /* an empty report: no contact */
    if (has(EV_KEY, button) && (down || second_down) != (finger_down || second_down))
        emit(EV_KEY, button, down || second_down);
    emit(EV_SYN, SYN_REPORT, 0);
    finger_down = down;
}

static void second(int down, double x, double y)
{
    emit(EV_ABS, ABS_MT_SLOT, 1);
    if (down && !second_down)
        emit(EV_ABS, ABS_MT_TRACKING_ID, tracking_id++ & 0xffff);
    if (!down)
        emit(EV_ABS, ABS_MT_TRACKING_ID, -1);
    if (down)
        position(x, y);
    if (has(EV_KEY, button) && (down || finger_down) != (second_down || finger_down))
        emit(EV_KEY, button, down || finger_down);
    emit(EV_SYN, SYN_REPORT, 0);
    second_down = down;
}

/* Reads an evemu description into `dev` (see FORMATS: P:/B: bitmasks, A: axes with a
 * resolution from format 1.2 on). Returns 0, or -1 with a message. */
static int read_description(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "touchinject: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[4096];
    int mask_bytes[EV_CNT] = { 0 }, prop_bytes = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        unsigned v[9];
        int n, vals[5];
        if (strncmp(line, "N: ", 3) == 0) {
            libevdev_set_name(dev, line + 3);
        } else if (sscanf(line, "I: %x %x %x %x", &v[0], &v[1], &v[2], &v[3]) == 4) {
            libevdev_set_id_bustype(dev, v[0]);
            libevdev_set_id_vendor(dev, v[1]);
            libevdev_set_id_product(dev, v[2]);
            libevdev_set_id_version(dev, v[3]);
        } else if ((n = sscanf(line, "P: %x %x %x %x %x %x %x %x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7])) > 0) {
            for (int j = 0; j < n; j++)
                for (int i = 0; i < 8; i++)
                    if (v[j] & (1u << i))
                        libevdev_enable_property(dev, 8 * (prop_bytes + j) + i);
            prop_bytes += n;
        } else if ((n = sscanf(line, "B: %x %x %x %x %x %x %x %x %x", &v[8], &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7])) > 1) {
            unsigned type = v[8];
            if (type >= EV_CNT)
                continue;
            for (int j = 0; j < n - 1; j++)
                for (int i = 0; i < 8; i++) {
                    unsigned code = 8 * (mask_bytes[type] + j) + i;
                    if (!(v[j] & (1u << i)) || type == EV_SYN || type == EV_ABS)
                        continue;   /* EV_ABS codes come with their A: line */
                    if (type == EV_REP)
                        continue;
                    libevdev_enable_event_code(dev, type, code, NULL);
                }
            mask_bytes[type] += n - 1;
        } else if ((n = sscanf(line, "A: %x %d %d %d %d %d", &v[0], &vals[0], &vals[1], &vals[2], &vals[3], &vals[4])) >= 5) {
            struct input_absinfo abs = { .minimum = vals[0], .maximum = vals[1], .fuzz = vals[2],
                                         .flat = vals[3], .resolution = n == 6 ? vals[4] : 0 };
            libevdev_enable_event_code(dev, EV_ABS, v[0], &abs);
        }
    }
    fclose(f);
    if (has(EV_ABS, ABS_MT_POSITION_X))
        proto = has(EV_ABS, ABS_MT_SLOT) ? PROTOCOL_B : PROTOCOL_A;
    else
        proto = SINGLE;
    button = has(EV_KEY, BTN_TOUCH) ? BTN_TOUCH : BTN_LEFT;
    return 0;
}

static const char *create(void)
{
    int rc = libevdev_uinput_create_from_device(dev, LIBEVDEV_UINPUT_OPEN_MANAGED, &uidev);
    if (rc < 0) {
        fprintf(stderr, "touchinject: cannot create the uinput device: %s\n", strerror(-rc));
        exit(1);
    }
    const char *node = libevdev_uinput_get_devnode(uidev);
    if (!node) {
        fprintf(stderr, "touchinject: the device has no /dev/input node (is sysfs mounted?)\n");
        exit(1);
    }
    printf("device %s\n", node);
    fflush(stdout);
    return node;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Does /proc/PID/fd hold a link to `node`? */
static int has_open(long pid, const char *node)
{
    char dir[64], link[PATH_MAX], target[PATH_MAX];
    snprintf(dir, sizeof dir, "/proc/%ld/fd", pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(link, sizeof link, "%s/%s", dir, e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        found = strcmp(target, node) == 0;
    }
    closedir(d);
    return found;
}

static void enable_abs(struct libevdev *dev, unsigned code, int min, int max, int res)
{
    struct input_absinfo abs = { .minimum = min, .maximum = max, .resolution = res };
    libevdev_enable_event_code(dev, EV_ABS, code, &abs);
}

int main(int argc, char **argv)
{
    dev = libevdev_new();
    if (argc == 3 && strcmp(argv[1], "--desc") == 0) {
        if (read_description(argv[2]) < 0)
            return 1;
    } else if (argc == 2 && strcmp(argv[1], "--keyboard") == 0) {
        libevdev_set_name(dev, "touchlock test keypad");
        libevdev_set_id_bustype(dev, BUS_VIRTUAL);
        libevdev_set_id_vendor(dev, 0x1d6b);
        libevdev_set_id_product(dev, 0x7412);
        libevdev_enable_event_type(dev, EV_KEY);
        for (unsigned k = KEY_1; k <= KEY_0; k++)
            libevdev_enable_event_code(dev, EV_KEY, k, NULL);
        libevdev_enable_event_code(dev, EV_KEY, KEY_BACKSPACE, NULL);
        libevdev_enable_event_code(dev, EV_KEY, KEY_ENTER, NULL);
        libevdev_enable_event_code(dev, EV_KEY, KEY_ESC, NULL);
    } else {
        libevdev_set_name(dev, argc == 3 && strcmp(argv[1], "--name") == 0 ? argv[2] : "touchlock test panel");
        libevdev_set_id_bustype(dev, BUS_VIRTUAL);
        libevdev_set_id_vendor(dev, 0x1d6b);
        libevdev_set_id_product(dev, 0x7411);
        libevdev_enable_property(dev, INPUT_PROP_DIRECT);
        libevdev_enable_event_type(dev, EV_KEY);
        libevdev_enable_event_code(dev, EV_KEY, BTN_TOUCH, NULL);
        libevdev_enable_event_type(dev, EV_ABS);
        enable_abs(dev, ABS_X, 0, AXIS_MAX, RES_X);
        enable_abs(dev, ABS_Y, 0, AXIS_MAX, RES_Y);
        enable_abs(dev, ABS_MT_SLOT, 0, 9, 0);
        enable_abs(dev, ABS_MT_TRACKING_ID, 0, 65535, 0);
        enable_abs(dev, ABS_MT_POSITION_X, 0, AXIS_MAX, RES_X);
        enable_abs(dev, ABS_MT_POSITION_Y, 0, AXIS_MAX, RES_Y);
    }
    char node[PATH_MAX];
    snprintf(node, sizeof node, "%s", create());

    char line[4096];
    double last_x = 0, last_y = 0;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        char cmd[32] = "";
        double x, y;
        long n;
        int w, h;
        if (sscanf(line, "%31s", cmd) != 1 || cmd[0] == '#')
            continue;
        if (strcmp(cmd, "size") == 0 && sscanf(line, "%*s %d %d", &w, &h) == 2 && w > 0 && h > 0) {
            screen_w = w;
            screen_h = h;
        } else if (strcmp(cmd, "down") == 0 && sscanf(line, "%*s %lf %lf", &x, &y) == 2) {
            if (finger_down)
                fprintf(stderr, "touchinject: down while the finger is already down\n");
            finger(1, x, y);
            last_x = x, last_y = y;
        } else if (strcmp(cmd, "move") == 0 && sscanf(line, "%*s %lf %lf", &x, &y) == 2) {
            finger(1, x, y);
            last_x = x, last_y = y;
        } else if (strcmp(cmd, "up") == 0) {
            finger(0, 0, 0);
        } else if (proto == PROTOCOL_B && (strcmp(cmd, "down2") == 0 || strcmp(cmd, "move2") == 0)
                   && sscanf(line, "%*s %lf %lf", &x, &y) == 2) {
            second(1, x, y);
        } else if (proto == PROTOCOL_B && strcmp(cmd, "up2") == 0) {
            second(0, 0, 0);
        } else if (strcmp(cmd, "key") == 0 && sscanf(line, "%*s %ld", &n) == 1 && n > 0 && n < KEY_MAX) {
            libevdev_uinput_write_event(uidev, EV_KEY, (unsigned)n, 1);
            libevdev_uinput_write_event(uidev, EV_SYN, SYN_REPORT, 0);
            libevdev_uinput_write_event(uidev, EV_KEY, (unsigned)n, 0);
            libevdev_uinput_write_event(uidev, EV_SYN, SYN_REPORT, 0);
        } else if (strcmp(cmd, "unplug") == 0) {
            libevdev_uinput_destroy(uidev);
            uidev = NULL;
            finger_down = 0;
        } else if (strcmp(cmd, "replug") == 0) {
            snprintf(node, sizeof node, "%s", create());
        } else if (strcmp(cmd, "flood") == 0 && sscanf(line, "%*s %ld", &n) == 1) {
            /* Position reports only: with the finger up they are hovering, not a touch. */
            for (long i = 0; i < n; i++) {
                if (proto == PROTOCOL_B)
                    emit(EV_ABS, ABS_MT_SLOT, 0);
                position(last_x + (i & 1 ? 2 : -2), last_y);
                emit(EV_SYN, SYN_REPORT, 0);
            }
        } else if (strcmp(cmd, "wait-open") == 0 && sscanf(line, "%*s %ld", &n) == 1) {
            int waited = 0;
            while (!has_open(n, node)) {
                if (waited >= 10000) {
                    fprintf(stderr, "touchinject: process %ld did not open %s within 10 s\n", n, node);
                    return 2;
                }
                sleep_ms(10);
                waited += 10;
            }
            printf("opened %s\n", node);
            fflush(stdout);
        } else if (strcmp(cmd, "sleep") == 0 && sscanf(line, "%*s %ld", &n) == 1) {
            sleep_ms(n);
        } else if (strcmp(cmd, "echo") == 0) {
            const char *text = line + strspn(line, " \t") + 4;
            text += strspn(text, " \t");
            printf("%s\n", text);
            fflush(stdout);
        } else {
            fprintf(stderr, "touchinject: bad command: %s\n", line);
            return 3;
        }
    }
    if (uidev)
        libevdev_uinput_destroy(uidev);
    libevdev_free(dev);
    return 0;
}
