/* The kiosk app of the two-card check: takes DRM master on a card and shows one colour on
 * its first connected connector (a dumb buffer, SetCrtc), the way a kiosk's compositor
 * drives a card; then gives master up and takes it again when told, as a compositor does
 * when its VT is switched away and back.
 *
 *   drmfill /dev/dri/cardN RRGGBB </tmp/fifo
 *
 * Prints "shown WxH on CRTC N" (or "... failed: REASON" and exits 1). Commands on stdin:
 *   drop   drops DRM master (the picture stays): "master dropped"
 *   take   takes DRM master again and shows the colour again: "master taken" then
 *          "shown ...", or "set-master failed: REASON" while another process holds it
 * End of input: exits (the kernel frees the buffer).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <drm.h>
#include <drm_mode.h>

static int fd;
static uint32_t crtc_id, connector_id, fb_id;
static struct drm_mode_modeinfo mode;

static int xioctl(unsigned long request, void *arg)
{
    int r;
    do r = ioctl(fd, request, arg); while (r == -1 && (errno == EINTR || errno == EAGAIN));
    return r;
}

static int fail(const char *what)
{
    printf("%s failed: %s\n", what, strerror(errno));
    fflush(stdout);
    return 1;
}

/* Finds the first connected connector with a mode, its preferred mode and a CRTC. */
static int find_output(void)
{
    struct drm_mode_card_res res = {0};
    if (xioctl(DRM_IOCTL_MODE_GETRESOURCES, &res)) return fail("GETRESOURCES");
    uint32_t *connectors = calloc(res.count_connectors, sizeof *connectors);
    uint32_t *crtcs = calloc(res.count_crtcs, sizeof *crtcs);
    uint32_t *encoders = calloc(res.count_encoders, sizeof *encoders);
    res.connector_id_ptr = (uintptr_t)connectors;
    res.crtc_id_ptr = (uintptr_t)crtcs;
    res.encoder_id_ptr = (uintptr_t)encoders;
    res.count_fbs = 0;
    if (xioctl(DRM_IOCTL_MODE_GETRESOURCES, &res)) return fail("GETRESOURCES");
    for (uint32_t i = 0; i < res.count_connectors; i++) {
        struct drm_mode_get_connector c = {.connector_id = connectors[i]};
        if (xioctl(DRM_IOCTL_MODE_GETCONNECTOR, &c)) continue;
        if (c.connection != 1 || c.count_modes == 0) continue;
        struct drm_mode_modeinfo *modes = calloc(c.count_modes, sizeof *modes);
        uint32_t n = c.count_modes;
        struct drm_mode_get_connector full = {.connector_id = connectors[i], .count_modes = n,
                                              .modes_ptr = (uintptr_t)modes};
        if (xioctl(DRM_IOCTL_MODE_GETCONNECTOR, &full) || full.count_modes == 0) continue;
        mode = modes[0];
        for (uint32_t m = 0; m < full.count_modes && m < n; m++)
            if (modes[m].type & DRM_MODE_TYPE_PREFERRED) { mode = modes[m]; break; }
        connector_id = connectors[i];
        crtc_id = 0;
        if (full.encoder_id) {
            struct drm_mode_get_encoder e = {.encoder_id = full.encoder_id};
            if (xioctl(DRM_IOCTL_MODE_GETENCODER, &e) == 0) crtc_id = e.crtc_id;
        }
        if (!crtc_id && res.count_crtcs) crtc_id = crtcs[0];
        if (crtc_id) return 0;
    }
    errno = ENODEV;
    return fail("finding a connected output");
}

static int make_buffer(uint32_t rgb)
{
    struct drm_mode_create_dumb create = {.width = mode.hdisplay, .height = mode.vdisplay, .bpp = 32};
    if (xioctl(DRM_IOCTL_MODE_CREATE_DUMB, &create)) return fail("CREATE_DUMB");
    struct drm_mode_fb_cmd fb = {.width = mode.hdisplay, .height = mode.vdisplay, .pitch = create.pitch,
                                 .bpp = 32, .depth = 24, .handle = create.handle};
    if (xioctl(DRM_IOCTL_MODE_ADDFB, &fb)) return fail("ADDFB");
    fb_id = fb.fb_id;
    struct drm_mode_map_dumb map = {.handle = create.handle};
    if (xioctl(DRM_IOCTL_MODE_MAP_DUMB, &map)) return fail("MAP_DUMB");
    uint8_t *p = mmap(0, create.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, map.offset);
    if (p == MAP_FAILED) return fail("mmap");
    for (uint32_t y = 0; y < create.height; y++) {
        uint32_t *row = (uint32_t *)(p + (size_t)y * create.pitch);
        for (uint32_t x = 0; x < create.width; x++) row[x] = rgb;
    }
    munmap(p, create.size);
    return 0;
}

static int show(void)
{
    struct drm_mode_crtc set = {.set_connectors_ptr = (uintptr_t)&connector_id, .count_connectors = 1,
                                .crtc_id = crtc_id, .fb_id = fb_id, .mode_valid = 1, .mode = mode};
    if (xioctl(DRM_IOCTL_MODE_SETCRTC, &set)) return fail("SETCRTC");
    printf("shown %ux%u on CRTC %u\n", mode.hdisplay, mode.vdisplay, crtc_id);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    char *end;
    if (argc != 3 || strlen(argv[2]) != 6 || (strtoul(argv[2], &end, 16), *end != 0)) {
        fprintf(stderr, "usage: drmfill /dev/dri/cardN RRGGBB\n");
        return 2;
    }
    uint32_t rgb = (uint32_t)strtoul(argv[2], 0, 16);
    fd = open(argv[1], O_RDWR | O_CLOEXEC);
    if (fd < 0) return fail("open");
    if (ioctl(fd, DRM_IOCTL_SET_MASTER, 0)) return fail("set-master");
    if (find_output() || make_buffer(rgb) || show()) return 1;
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "drop", 4) == 0) {
            if (ioctl(fd, DRM_IOCTL_DROP_MASTER, 0)) fail("drop-master");
            else printf("master dropped\n");
        } else if (strncmp(line, "take", 4) == 0) {
            if (ioctl(fd, DRM_IOCTL_SET_MASTER, 0)) fail("set-master");
            else {
                printf("master taken\n");
                show();
            }
        }
        fflush(stdout);
    }
    close(fd);
    return 0;
}
