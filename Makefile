# Builds touchlock's release binaries (Swift runtime linked in statically) and installs
# them with everything a system needs around them.
#
#   make                                    build, and generate the files to install
#   make install PREFIX=/usr DESTDIR=/tmp/root
#   make uninstall PREFIX=/usr
#
# The directories the binaries read and write are fixed here, at build time: they are
# passed to the compiler as -Xcc -DTOUCHLOCK_...DIR (Modules/CPaths/shim.h has the
# defaults, those of PREFIX=/usr), and the unit, tmpfiles.d and the man pages, written
# with those defaults, are rewritten to match. Change PREFIX (or SYSCONFDIR,
# RUNSTATEDIR, LOCALSTATEDIR) and run `make` again before `make install`.
# touchlock-bench is a development tool and is not installed. touchlock-mqtt, the bridge
# to an MQTT broker, is built with the rest and installed apart: make install-mqtt.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
DATAROOTDIR ?= $(PREFIX)/share
MANDIR ?= $(DATAROOTDIR)/man
DOCDIR ?= $(DATAROOTDIR)/doc/touchlock
MQTTDOCDIR ?= $(DATAROOTDIR)/doc/touchlock-mqtt
SYSCONFDIR ?= /etc
RUNSTATEDIR ?= /run
LOCALSTATEDIR ?= /var
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
BASHCOMPLETIONDIR ?= $(DATAROOTDIR)/bash-completion/completions
ZSHCOMPLETIONDIR ?= $(DATAROOTDIR)/zsh/site-functions
FISHCOMPLETIONDIR ?= $(DATAROOTDIR)/fish/vendor_completions.d

# touchlock's own directories, as the binaries see them.
PKGDATADIR = $(DATAROOTDIR)/touchlock
PKGCONFDIR = $(SYSCONFDIR)/touchlock
PKGRUNDIR = $(RUNSTATEDIR)/touchlock
PKGSTATEDIR = $(LOCALSTATEDIR)/lib/touchlock

SWIFT ?= swift
# Extra flags for the linker, as -Xlinker ... (debian/rules asks for RELRO and BIND_NOW).
SWIFT_LDFLAGS ?=
# Extra options for swift build: a cross build's Swift SDK (--swift-sdks-path DIR
# --swift-sdk NAME; debian/rules passes it when the host architecture is another).
SWIFT_BUILD_FLAGS ?=
# What runs the built touchlockd on the build machine, where `make` runs it once (to write
# touchlock.conf): nothing for a native build, an emulator (qemu-aarch64) for a cross one.
RUN_BUILT ?=
# The linker, when it must be another than the toolchain's own: Debian 13's swiftlang
# links with the lld 17 it bundles, which aborts on scripts/touchlockd.ld (an assertion
# on its SECTIONS commands), and Debian's own lld (the lld package, 19 in Debian 13)
# links it. By default Debian's lld where the compiler is Debian's swiftlang.
SWIFT_REAL := $(realpath $(shell command -v $(SWIFT)))
LLD ?= $(if $(filter /usr/libexec/swift/%,$(SWIFT_REAL)),$(wildcard /usr/bin/ld.lld))
LLD_FLAGS = $(if $(LLD),-Xswiftc -Xclang-linker -Xswiftc --ld-path=$(LLD))
# Its own build directory: other flags than a plain `swift build -c release`.
SCRATCH ?= .build/make
# The static Swift runtime's libstdc++ from its archive too (see scripts/static-libstdc++).
SWIFTFLAGS = -c release --static-swift-stdlib --scratch-path $(SCRATCH) -Xlinker -L$(CURDIR)/scripts/static-libstdc++ \
	-Xcc '-DTOUCHLOCK_DATADIR="$(PKGDATADIR)"' \
	-Xcc '-DTOUCHLOCK_CONFDIR="$(PKGCONFDIR)"' \
	-Xcc '-DTOUCHLOCK_RUNDIR="$(PKGRUNDIR)"' \
	-Xcc '-DTOUCHLOCK_STATEDIR="$(PKGSTATEDIR)"' \
	$(LLD_FLAGS) $(SWIFT_LDFLAGS) $(SWIFT_BUILD_FLAGS)
BIN = $(SCRATCH)/release
GEN = $(SCRATCH)/gen

INSTALL ?= install

# The defaults (shim.h, and the files in systemd/ and man/) -> the configured paths.
SUBST = sed -e 's|/usr/sbin/touchlockd|$(SBINDIR)/touchlockd|g' \
	-e 's|/usr/sbin/touchlock-mqtt|$(SBINDIR)/touchlock-mqtt|g' \
	-e 's|/usr/share/doc/touchlock-mqtt|$(MQTTDOCDIR)|g' \
	-e 's|/usr/bin/touchlockctl|$(BINDIR)/touchlockctl|g' \
	-e 's|/usr/share/touchlock|$(PKGDATADIR)|g' \
	-e 's|/usr/share/doc/touchlock|$(DOCDIR)|g' \
	-e 's|/etc/touchlock|$(PKGCONFDIR)|g' \
	-e 's|/run/touchlock|$(PKGRUNDIR)|g' \
	-e 's|/var/lib/touchlock|$(PKGSTATEDIR)|g'

MANPAGES = touchlockd.8 touchlockctl.1 touchlock.conf.5
DOCS = README.md docs/protocol.md docs/operations.md docs/integrating.md docs/configuring.md docs/fleet.md

all: build generated

# Each link also writes what it took from static archives (lld's --why-extract), from
# which scripts/linked-notices finds the licence notices to install.
build:
	$(SWIFT) build $(SWIFTFLAGS) -Xlinker --why-extract=$(abspath $(SCRATCH))/touchlockd.why --product touchlockd
	$(SWIFT) build $(SWIFTFLAGS) -Xlinker --why-extract=$(abspath $(SCRATCH))/touchlockctl.why --product touchlockctl
	$(SWIFT) build $(SWIFTFLAGS) -Xlinker --why-extract=$(abspath $(SCRATCH))/touchlock-mqtt.why --product touchlock-mqtt

generated: $(GEN)/touchlockd.service $(GEN)/touchlock-wait-unlock.service $(GEN)/touchlock-splash-release.service \
	$(GEN)/touchlock-splash-quit.service $(GEN)/touchlock-shutdown.service $(GEN)/tmpfiles.conf $(GEN)/touchlock.conf \
	$(GEN)/touchlock-mqtt.service $(GEN)/mqtt.conf $(GEN)/touchlock-mqtt.8 \
	$(addprefix $(GEN)/,$(MANPAGES))

$(GEN)/%.service: systemd/%.service Makefile
	@mkdir -p $(GEN)
	$(SUBST) $< > $@
$(GEN)/tmpfiles.conf: systemd/tmpfiles.d/touchlock.conf Makefile
	@mkdir -p $(GEN)
	$(SUBST) $< > $@
$(GEN)/mqtt.conf: data/mqtt.conf.example Makefile
	@mkdir -p $(GEN)
	$(SUBST) $< > $@
$(GEN)/%: man/% Makefile
	@mkdir -p $(GEN)
	$(SUBST) $< > $@

# Every key at its default, commented out: the daemon prints its merged settings
# reading no file at all (an empty --config-root), and each key line is commented.
$(GEN)/touchlock.conf: build
	@mkdir -p $(GEN)
	empty=$$(mktemp -d) && $(RUN_BUILT) $(BIN)/touchlockd --config-root "$$empty" --check-config > $@.defaults; \
		status=$$?; rmdir "$$empty"; [ $$status -eq 0 ]
	{ printf '%s\n' \
		'# touchlock: every setting at its default, commented out (touchlock.conf(5)).' \
		'# This file belongs to the package and is replaced when it is upgraded: set' \
		'# things in $(PKGCONFDIR)/touchlock.conf or $(PKGCONFDIR)/touchlock.conf.d/*.conf.' \
		'# `touchlockd --check-config` prints the settings in force and their files.' ''; \
	  sed -e '/^# touchlockd --check-config/d' -e '/^#   /d' \
		-e 's/^# \([a-z_]* =\)$$/#\1/' -e 's/^\([a-z_]* = \)/#\1/' $@.defaults; } > $@.tmp
	rm -f $@.defaults
	mv $@.tmp $@

install: all
	$(INSTALL) -Dm755 $(BIN)/touchlockd $(DESTDIR)$(SBINDIR)/touchlockd
	$(INSTALL) -Dm755 $(BIN)/touchlockctl $(DESTDIR)$(BINDIR)/touchlockctl
	$(INSTALL) -Dm644 $(GEN)/touchlockd.service $(DESTDIR)$(SYSTEMDUNITDIR)/touchlockd.service
	$(INSTALL) -Dm644 $(GEN)/touchlock-wait-unlock.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/touchlock-wait-unlock.service
	$(INSTALL) -Dm644 $(GEN)/touchlock-splash-release.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/touchlock-splash-release.service
	$(INSTALL) -Dm644 $(GEN)/touchlock-splash-quit.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/touchlock-splash-quit.service
	$(INSTALL) -Dm644 $(GEN)/touchlock-shutdown.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/touchlock-shutdown.service
	$(INSTALL) -Dm644 systemd/sysusers.d/touchlock.conf $(DESTDIR)$(SYSUSERSDIR)/touchlock.conf
	$(INSTALL) -Dm644 $(GEN)/tmpfiles.conf $(DESTDIR)$(TMPFILESDIR)/touchlock.conf
	$(INSTALL) -Dm644 $(GEN)/touchlock.conf $(DESTDIR)$(PKGDATADIR)/touchlock.conf
	$(INSTALL) -Dm644 data/demo-pattern.evemu $(DESTDIR)$(PKGDATADIR)/demo-pattern.evemu
	@# The administrator's file: installed once, never overwritten.
	[ -e $(DESTDIR)$(PKGCONFDIR)/touchlock.conf ] || \
		$(INSTALL) -Dm644 data/touchlock.conf.etc $(DESTDIR)$(PKGCONFDIR)/touchlock.conf
	$(INSTALL) -Dm644 $(GEN)/touchlockd.8 $(DESTDIR)$(MANDIR)/man8/touchlockd.8
	$(INSTALL) -Dm644 $(GEN)/touchlockctl.1 $(DESTDIR)$(MANDIR)/man1/touchlockctl.1
	$(INSTALL) -Dm644 $(GEN)/touchlock.conf.5 $(DESTDIR)$(MANDIR)/man5/touchlock.conf.5
	$(INSTALL) -Dm644 completions/touchlockctl.bash $(DESTDIR)$(BASHCOMPLETIONDIR)/touchlockctl
	$(INSTALL) -Dm644 completions/_touchlockctl $(DESTDIR)$(ZSHCOMPLETIONDIR)/_touchlockctl
	$(INSTALL) -Dm644 completions/touchlockctl.fish $(DESTDIR)$(FISHCOMPLETIONDIR)/touchlockctl.fish
	$(INSTALL) -d $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m644 $(DOCS) $(DESTDIR)$(DOCDIR)/
	@# The notices of the libraries linked in from static archives (scripts/linked-notices).
	scripts/linked-notices $(DESTDIR)$(DOCDIR)/linked $(SCRATCH)/touchlockd.why $(SCRATCH)/touchlockctl.why
	$(INSTALL) -Dm644 systemd/examples/kiosk-app.service.d/touchlock.conf \
		$(DESTDIR)$(DOCDIR)/examples/kiosk-app.service.d/touchlock.conf
	$(INSTALL) -Dm644 systemd/examples/touchlockd.service.d/metrics.conf \
		$(DESTDIR)$(DOCDIR)/examples/touchlockd.service.d/metrics.conf
	$(INSTALL) -Dm644 systemd/examples/touchlockd.service.d/backlight.conf \
		$(DESTDIR)$(DOCDIR)/examples/touchlockd.service.d/backlight.conf
	$(INSTALL) -Dm644 data/prometheus/touchlock.rules.yml $(DESTDIR)$(DOCDIR)/examples/prometheus/touchlock.rules.yml

# touchlock-mqtt (docs/mqtt.md): the binary, its unit (installed disabled), its user, and
# its settings file, every key commented, 0640: the password file's path is named there.
install-mqtt: all
	$(INSTALL) -Dm755 $(BIN)/touchlock-mqtt $(DESTDIR)$(SBINDIR)/touchlock-mqtt
	$(INSTALL) -Dm644 $(GEN)/touchlock-mqtt.service $(DESTDIR)$(SYSTEMDUNITDIR)/touchlock-mqtt.service
	$(INSTALL) -Dm644 systemd/sysusers.d/touchlock-mqtt.conf $(DESTDIR)$(SYSUSERSDIR)/touchlock-mqtt.conf
	[ -e $(DESTDIR)$(PKGCONFDIR)/mqtt.conf ] || \
		$(INSTALL) -Dm640 $(GEN)/mqtt.conf $(DESTDIR)$(PKGCONFDIR)/mqtt.conf
	$(INSTALL) -Dm644 $(GEN)/touchlock-mqtt.8 $(DESTDIR)$(MANDIR)/man8/touchlock-mqtt.8
	$(INSTALL) -Dm644 docs/mqtt.md $(DESTDIR)$(MQTTDOCDIR)/mqtt.md
	scripts/linked-notices $(DESTDIR)$(MQTTDOCDIR)/linked $(SCRATCH)/touchlock-mqtt.why

# OpenRC (Alpine, postmarketOS) instead of the systemd files: the service script.
install-openrc:
	$(INSTALL) -d $(DESTDIR)$(SYSCONFDIR)/init.d
	$(SUBST) openrc/touchlockd > $(DESTDIR)$(SYSCONFDIR)/init.d/touchlockd
	chmod 755 $(DESTDIR)$(SYSCONFDIR)/init.d/touchlockd

# Leaves the administrator's touchlock.conf and the state.
uninstall:
	rm -f $(DESTDIR)$(SBINDIR)/touchlockd $(DESTDIR)$(BINDIR)/touchlockctl \
		$(DESTDIR)$(SYSTEMDUNITDIR)/touchlockd.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/touchlock-wait-unlock.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/touchlock-splash-release.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/touchlock-splash-quit.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/touchlock-shutdown.service \
		$(DESTDIR)$(SYSUSERSDIR)/touchlock.conf $(DESTDIR)$(TMPFILESDIR)/touchlock.conf \
		$(DESTDIR)$(PKGDATADIR)/touchlock.conf $(DESTDIR)$(PKGDATADIR)/demo-pattern.evemu \
		$(DESTDIR)$(MANDIR)/man8/touchlockd.8 $(DESTDIR)$(MANDIR)/man1/touchlockctl.1 \
		$(DESTDIR)$(MANDIR)/man5/touchlock.conf.5 \
		$(DESTDIR)$(BASHCOMPLETIONDIR)/touchlockctl $(DESTDIR)$(ZSHCOMPLETIONDIR)/_touchlockctl \
		$(DESTDIR)$(FISHCOMPLETIONDIR)/touchlockctl.fish \
		$(DESTDIR)$(SBINDIR)/touchlock-mqtt $(DESTDIR)$(SYSTEMDUNITDIR)/touchlock-mqtt.service \
		$(DESTDIR)$(SYSUSERSDIR)/touchlock-mqtt.conf $(DESTDIR)$(MANDIR)/man8/touchlock-mqtt.8
	rm -rf $(DESTDIR)$(DOCDIR) $(DESTDIR)$(MQTTDOCDIR)
	-rmdir $(DESTDIR)$(PKGDATADIR)

clean:
	rm -rf $(SCRATCH)

.PHONY: all build generated install install-mqtt install-openrc uninstall clean
