/* Takes DRM master on a card the way a kiosk compositor does when touchlockd has dropped it,
 * holds it while stdin stays open, then drops it and exits: the other process of the e2e
 * test's master-loss check.
 *
 *   drmmaster /dev/dri/card0 </tmp/fifo     prints "master taken" or "set-master failed: ..."
 *                                           then "master dropped" at "drop" or end of input
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define DRM_IOCTL_SET_MASTER _IO('d', 0x1e)
#define DRM_IOCTL_DROP_MASTER _IO('d', 0x1f)

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: drmmaster /dev/dri/cardN\n");
        return 2;
    }
    int fd = open(argv[1], O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        printf("open %s failed: %s\n", argv[1], strerror(errno));
        return 1;
    }
    if (ioctl(fd, DRM_IOCTL_SET_MASTER, 0) != 0) {
        printf("set-master failed: %s\n", strerror(errno));
        return 1;
    }
    printf("master taken\n");
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin) && strncmp(line, "drop", 4) != 0) {
    }
    if (ioctl(fd, DRM_IOCTL_DROP_MASTER, 0) != 0) printf("drop-master failed: %s\n", strerror(errno));
    close(fd);
    printf("master dropped\n");
    return 0;
}
