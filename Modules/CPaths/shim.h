#pragma once
/* Where touchlock's files live: the one place these paths are written down. The values
   here are the defaults; `make` passes others (from PREFIX, SYSCONFDIR, RUNSTATEDIR,
   LOCALSTATEDIR) as -Xcc -DTOUCHLOCK_DATADIR='"..."' and so on. Swift reads them through
   the TL_ names: a macro given only on the command line is not imported by itself, one
   that names it from a module header is. */
#ifndef TOUCHLOCK_DATADIR
#define TOUCHLOCK_DATADIR "/usr/share/touchlock"
#endif
#ifndef TOUCHLOCK_CONFDIR
#define TOUCHLOCK_CONFDIR "/etc/touchlock"
#endif
#ifndef TOUCHLOCK_RUNDIR
#define TOUCHLOCK_RUNDIR "/run/touchlock"
#endif
#ifndef TOUCHLOCK_STATEDIR
#define TOUCHLOCK_STATEDIR "/var/lib/touchlock"
#endif
#define TL_DATADIR TOUCHLOCK_DATADIR
#define TL_CONFDIR TOUCHLOCK_CONFDIR
#define TL_RUNDIR TOUCHLOCK_RUNDIR
#define TL_STATEDIR TOUCHLOCK_STATEDIR
