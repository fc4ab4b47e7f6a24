#pragma once
// The program's arguments as the C library passed them to it, captured before main.
// Swift's CommandLine.arguments reads /proc/self/cmdline on Linux, which a chroot or a
// container without /proc does not have (the arguments were then empty).

// argv, NULL-terminated, and argc; NULL and 0 when they could not be captured (a C
// library other than glibc, which passes them to ELF constructors).
char *const *carguments_argv(void);
int carguments_argc(void);
