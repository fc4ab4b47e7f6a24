#include "arguments.h"

#include <stdlib.h>  // and with it, on glibc, __GLIBC__

static char *const *captured_argv;
static int captured_argc;

#if defined(__GLIBC__)
// glibc calls the functions of .init_array with main's argc, argv and envp (csu/libc-start.c,
// call_init), before main and before anything else in the program could ask for them.
// Other C libraries (musl) call them without arguments: nothing is captured there.
static void capture(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc >= 0 && argv != NULL && argv[argc] == NULL) {
        captured_argv = argv;
        captured_argc = argc;
    }
}

__attribute__((used, section(".init_array")))
static void (*const capture_at_start)(int, char **, char **) = capture;
#endif

char *const *carguments_argv(void) { return captured_argv; }
int carguments_argc(void) { return captured_argc; }
