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
 *   wait-open PID   blocks until process PID has this device's /dev/input/eventN open
 *                   (10 s at most), then prints "opened /dev/input/eventN"
 *   sleep MS        sleeps MS milliseconds
 *   echo TEXT       prints TEXT (a marker for whoever reads our stdout)
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
static int screen_w = 1280, screen_h = 800;
static int tracking_id;
static int finger_down;

static int to_axis(double px, int size)
{
    long v = (long)((px + 0.5) * (AXIS_MAX + 1) / size);
    if (v < 0)
        v = 0;
    if (v > AXIS_MAX)
        v = AXIS_MAX;
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

static void position(double x, double y)
{
    int ax = to_axis(x, screen_w), ay = to_axis(y, screen_h);
    emit(EV_ABS, ABS_MT_POSITION_X, ax);
    emit(EV_ABS, ABS_MT_POSITION_Y, ay);
    emit(EV_ABS, ABS_X, ax);
    emit(EV_ABS, ABS_Y, ay);
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

int main(void)
{
    struct libevdev *dev = libevdev_new();
    libevdev_set_name(dev, "touchlock test panel");
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

    int rc = libevdev_uinput_create_from_device(dev, LIBEVDEV_UINPUT_OPEN_MANAGED, &uidev);
    if (rc < 0) {
        fprintf(stderr, "touchinject: cannot create the uinput device: %s\n", strerror(-rc));
        return 1;
    }
    const char *node = libevdev_uinput_get_devnode(uidev);
    if (!node) {
        fprintf(stderr, "touchinject: the device has no /dev/input node (is sysfs mounted?)\n");
        return 1;
    }
    printf("device %s\n", node);
    fflush(stdout);

    char line[4096];
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
            emit(EV_ABS, ABS_MT_SLOT, 0);
            emit(EV_ABS, ABS_MT_TRACKING_ID, tracking_id++ & 0xffff);
            position(x, y);
            emit(EV_KEY, BTN_TOUCH, 1);
            emit(EV_SYN, SYN_REPORT, 0);
            finger_down = 1;
        } else if (strcmp(cmd, "move") == 0 && sscanf(line, "%*s %lf %lf", &x, &y) == 2) {
            emit(EV_ABS, ABS_MT_SLOT, 0);
            position(x, y);
            emit(EV_SYN, SYN_REPORT, 0);
        } else if (strcmp(cmd, "up") == 0) {
            emit(EV_ABS, ABS_MT_SLOT, 0);
            emit(EV_ABS, ABS_MT_TRACKING_ID, -1);
            emit(EV_KEY, BTN_TOUCH, 0);
            emit(EV_SYN, SYN_REPORT, 0);
            finger_down = 0;
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
    libevdev_uinput_destroy(uidev);
    libevdev_free(dev);
    return 0;
}
