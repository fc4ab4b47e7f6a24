#pragma once
// Linux interfaces that Glibc's Swift module does not bring in.
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/vt.h>
#include <linux/kd.h>
#include <linux/netlink.h>
#include <malloc.h>

// accept4 is declared only under _GNU_SOURCE, which Glibc's module is not built with.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
static inline int clinux_accept4(int fd, int flags) {
    return accept4(fd, 0, 0, flags);
}

// ioctl is variadic, which Swift cannot call: one wrapper for an integer argument, one
// for a pointer.
static inline int clinux_ioctl_value(int fd, unsigned long request, unsigned long value) {
    return ioctl(fd, request, value);
}
static inline int clinux_ioctl_pointer(int fd, unsigned long request, void *arg) {
    return ioctl(fd, request, arg);
}

#include <sys/prctl.h>
// prctl is variadic too.
/* A descriptor that becomes readable when process `pid` ends (pidfd_open(2)). */
static inline int clinux_pidfd_open(int pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}
static inline int clinux_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}
static inline int clinux_set_process_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

#include <syslog.h>
// syslog is variadic: the message goes as "%s", never as a format.
static inline void clinux_syslog(int priority, const char *message) {
    syslog(priority, "%s", message);
}
