# runmon — build, test, demo, bench, fuzz, install.
# Sources are discovered by directory, so adding a module needs no Makefile edit:
#   base/ model/ runlog/ monitor/ summary/ sink/ report/ sweep/ record/
#                              -> librunmon.a (the layers, lowest first: docs/ARCHITECTURE.md)
#   cli/                       -> the runmon binary (main + one file per command)
#   tests/unit/test_*.c        -> one cmocka binary each (ASan+UBSan)
#   tests/e2e/test_*.sh        -> end-to-end scripts against the ASan runmon
#   fixtures/nvidia-smi/*.c    -> the fake nvidia-smi used by tests and the demo
#   fuzz/fuzz_*.c              -> libFuzzer targets (make fuzz)
# The version lives in VERSION only: runmon --version, runmon.pc, the man pages' footers and
# the installed Python package take it from there; tests/e2e/test_version.sh checks that
# debian/changelog, python/ and the program agree with it.

VERSION := $(strip $(file < VERSION))
PREFIX  ?= /usr/local
DESTDIR ?=
# Where make install puts things; all under $(PREFIX). The Debian build sets LIBDIR to the
# multiarch folder. PYTHONDIR is Debian's layout (/usr/lib/python3/dist-packages for
# PREFIX=/usr); under another PREFIX, put it on PYTHONPATH or pass PYTHONDIR.
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
DATADIR     ?= $(PREFIX)/share
MANDIR      ?= $(DATADIR)/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
PYTHONDIR   ?= $(PREFIX)/lib/python3/dist-packages
BUILD   ?= build
CC      ?= cc
SHELL   := /bin/bash

WARN    := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wformat=2 -Wwrite-strings -D_GNU_SOURCE
DEPFLAGS = -MMD -MP
INCS    := -I.
LIBS    := -lcsv -ljansson -lpcre2-8 -lncursesw -lpthread -lm
REL_CFLAGS  := $(WARN) $(INCS) -O2 -g $(CPPFLAGS) $(CFLAGS)
ASAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TEST_CFLAGS := $(WARN) $(INCS) -O1 -g $(ASAN_FLAGS) $(CFLAGS)

LAYERS    := base model runlog monitor summary sink report sweep record
LIB_SRCS  := $(sort $(foreach d,$(LAYERS),$(wildcard $(d)/*.c)))
CLI_SRCS  := $(sort $(wildcard cli/*.c))
HDRS      := $(foreach d,$(LAYERS) cli,$(wildcard $(d)/*.h))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
FAKE_SRCS := $(sort $(wildcard fixtures/nvidia-smi/*.c))
FUZZ_SRCS := $(sort $(wildcard fuzz/fuzz_*.c))

REL_OBJS  := $(patsubst %.c,$(BUILD)/rel/%.o,$(LIB_SRCS))
ASAN_OBJS := $(patsubst %.c,$(BUILD)/asan/%.o,$(LIB_SRCS))
REL_CLI   := $(patsubst %.c,$(BUILD)/rel/%.o,$(CLI_SRCS))
ASAN_CLI  := $(patsubst %.c,$(BUILD)/asan/%.o,$(CLI_SRCS))
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
FAKE_BIN  := $(BUILD)/fakebin/nvidia-smi
FUZZ_BINS := $(patsubst fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))

.PHONY: all deps test demo bench fuzz install uninstall deb release clean format valgrind chaos chaos-mutants
.DEFAULT_GOAL := all

# In parallel by default, one job per CPU (GNU make 4.3 takes -j from MAKEFLAGS set here);
# an explicit -jN wins, make -j1 builds one file at a time; not with clean among the goals
# (make clean all would remove what it builds).
# A make below this one (all's, test's) shares this one's jobs.
ifeq ($(MAKELEVEL)$(filter -j%,$(MAKEFLAGS))$(filter clean,$(MAKECMDGOALS)),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

# deps may install the libraries' headers: everything that compiles waits for it, so the
# compiling runs in a make of its own once deps is done (prerequisites of one rule would run
# side by side with -j: "jansson.h: No such file" on a fresh machine).
all: deps
	@$(MAKE) --no-print-directory $(BUILD)/runmon $(BUILD)/librunmon.a $(FAKE_BIN)

deps:
	@bash .ci/deps.sh build

# Header dependencies come from the compiler (-MMD): an object rebuilds when a header it
# includes changes, and only then.
$(BUILD)/rel/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(REL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/asan/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/librunmon.a: $(REL_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/librunmon-asan.a: $(ASAN_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/runmon: $(REL_CLI) $(BUILD)/librunmon.a
	$(CC) $(REL_CFLAGS) $(LDFLAGS) -o $@ $(REL_CLI) $(BUILD)/librunmon.a $(LIBS)

$(BUILD)/asan/runmon: $(ASAN_CLI) $(BUILD)/librunmon-asan.a
	$(CC) $(TEST_CFLAGS) -o $@ $(ASAN_CLI) $(BUILD)/librunmon-asan.a $(LIBS)

# Only cli/version.c sees the version, so a new VERSION rebuilds one object.
$(BUILD)/rel/cli/version.o: cli/version.c VERSION
	@mkdir -p $(@D)
	$(CC) $(REL_CFLAGS) -DRUNMON_VERSION='"$(VERSION)"' $(DEPFLAGS) -c $< -o $@

$(BUILD)/asan/cli/version.o: cli/version.c VERSION
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -DRUNMON_VERSION='"$(VERSION)"' $(DEPFLAGS) -c $< -o $@

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/librunmon-asan.a
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(DEPFLAGS) -MF $@.d -o $@ $< $(BUILD)/librunmon-asan.a -lcmocka $(LIBS)

# The fake nvidia-smi is a plain optimised build: tests measure runmon, not it.
$(FAKE_BIN): $(FAKE_SRCS) $(HDRS)
	@mkdir -p $(@D)
	$(if $(FAKE_SRCS),$(CC) $(REL_CFLAGS) -o $@ $(FAKE_SRCS) $(LIBS),@echo "no fake nvidia-smi sources yet")

test: deps
	@bash .ci/deps.sh test
	$(MAKE) --no-print-directory $(BUILD)/asan/runmon $(BUILD)/runmon $(BUILD)/librunmon.a $(UNIT_BINS) $(FAKE_BIN)
	@BUILD=$(abspath $(BUILD)) bash tests/run.sh

demo: all
	@BUILD=$(abspath $(BUILD)) bash tests/demo.sh

bench: all
	@bash .ci/deps.sh all
	@BUILD=$(abspath $(BUILD)) bash bench/run.sh

$(BUILD)/fuzz/%: fuzz/%.c $(LIB_SRCS) $(HDRS)
	@mkdir -p $(@D)
	clang $(WARN) $(INCS) -O1 -g -fsanitize=fuzzer,address,undefined -o $@ $< $(LIB_SRCS) $(LIBS)

# FUZZ_SECONDS per target (default 60).
fuzz: deps
	@$(MAKE) --no-print-directory $(FUZZ_BINS)
	@BUILD=$(abspath $(BUILD)) FUZZ_SECONDS=$${FUZZ_SECONDS:-60} bash fuzz/run.sh

# The sink under kills, concurrency, file-size limits and corruption (tests/chaos.sh):
# CHAOS_ROUNDS rounds (default 20) of 8 recorders, on the ASan+UBSan binary.
chaos: deps
	@bash .ci/deps.sh test
	@$(MAKE) --no-print-directory $(BUILD)/asan/runmon $(FAKE_BIN)
	@BUILD=$(abspath $(BUILD)) RUNMON=$(abspath $(BUILD))/asan/runmon \
	    FAKEBIN=$(abspath $(BUILD))/fakebin FIXTURES=$(abspath fixtures) \
	    ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1} \
	    UBSAN_OPTIONS=$${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} LC_ALL=C \
	    bash tests/chaos.sh

# tests/chaos.sh against mutants of the sink (tests/mutants/*.patch, each built in a copy under
# $(BUILD)/mutant-NAME/): it must fail on every one. Ends with "N of M mutants caught".
chaos-mutants: deps
	@bash .ci/deps.sh test
	@$(MAKE) --no-print-directory $(BUILD)/asan/runmon $(FAKE_BIN)
	@BUILD=$(abspath $(BUILD)) RUNMON=$(abspath $(BUILD))/asan/runmon CC="$(CC)" \
	    FAKEBIN=$(abspath $(BUILD))/fakebin FIXTURES=$(abspath fixtures) \
	    ASAN_OPTIONS=$${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1} \
	    UBSAN_OPTIONS=$${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} LC_ALL=C \
	    bash tests/chaos_mutants.sh

valgrind: all
	@$(MAKE) --no-print-directory $(UNIT_BINS)
	@BUILD=$(abspath $(BUILD)) bash tests/valgrind.sh

# What make install puts under $(DESTDIR)$(PREFIX): the same set as the Debian packages
# (debian/*.install name these paths). The public C API is the run-log writer: its headers
# include only system and jansson headers, so they work from $(INCLUDEDIR)/runmon/.
PUBLIC_HDRS := runlog/runlog.h runlog/kvargs.h
MAN_PAGES   := $(sort $(wildcard man/*.[1-8]))
PY_SRCS     := $(sort $(wildcard python/runmon/*.py))
COMPLETION  := contrib/bash-completion/runmon
ALERT_RULES := contrib/prometheus/runmon-alerts.yml
# runmon.pc paths under ${prefix}, so pkg-config --define-variable=prefix=... can move them.
pc_rel = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))

# The installed artefacts without the dependency check (what the Debian build compiles).
release: $(BUILD)/runmon $(BUILD)/librunmon.a

install: release
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR) \
	    $(DESTDIR)$(INCLUDEDIR)/runmon $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DATADIR)/runmon \
	    $(DESTDIR)$(PYTHONDIR)/runmon \
	    $(sort $(foreach p,$(MAN_PAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(p)))))
	install -m 0755 $(BUILD)/runmon $(DESTDIR)$(BINDIR)/runmon
	install -m 0644 $(BUILD)/librunmon.a $(DESTDIR)$(LIBDIR)/librunmon.a
	install -m 0644 $(PUBLIC_HDRS) $(DESTDIR)$(INCLUDEDIR)/runmon/
	sed -e 's|@VERSION@|$(VERSION)|' -e 's|@PREFIX@|$(PREFIX)|' \
	    -e 's|@LIBDIR@|$(call pc_rel,$(LIBDIR))|' -e 's|@INCLUDEDIR@|$(call pc_rel,$(INCLUDEDIR))|' \
	    runmon.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/runmon.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/runmon.pc
	set -e; for p in $(MAN_PAGES); do \
	    s=$${p##*.}; sed 's/@VERSION@/$(VERSION)/g' $$p >$(DESTDIR)$(MANDIR)/man$$s/$${p##*/}; \
	    chmod 0644 $(DESTDIR)$(MANDIR)/man$$s/$${p##*/}; done
	install -m 0644 $(COMPLETION) $(DESTDIR)$(BASHCOMPDIR)/runmon
	install -m 0644 $(ALERT_RULES) $(DESTDIR)$(DATADIR)/runmon/
	install -m 0644 $(PY_SRCS) $(DESTDIR)$(PYTHONDIR)/runmon/
	printf '# Written by make install from VERSION.\n__version__ = "%s"\n' '$(VERSION)' \
	    >$(DESTDIR)$(PYTHONDIR)/runmon/_version.py
	chmod 0644 $(DESTDIR)$(PYTHONDIR)/runmon/_version.py

# Removes exactly what install put there (and the folders only runmon uses).
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/runmon $(DESTDIR)$(LIBDIR)/librunmon.a \
	    $(DESTDIR)$(PKGCONFIGDIR)/runmon.pc $(DESTDIR)$(BASHCOMPDIR)/runmon \
	    $(addprefix $(DESTDIR)$(INCLUDEDIR)/runmon/,$(notdir $(PUBLIC_HDRS))) \
	    $(addprefix $(DESTDIR)$(DATADIR)/runmon/,$(notdir $(ALERT_RULES))) \
	    $(foreach p,$(MAN_PAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(notdir $(p))) \
	    $(addprefix $(DESTDIR)$(PYTHONDIR)/runmon/,$(notdir $(PY_SRCS)) _version.py)
	rm -rf $(DESTDIR)$(PYTHONDIR)/runmon/__pycache__
	for d in $(DESTDIR)$(INCLUDEDIR)/runmon $(DESTDIR)$(DATADIR)/runmon $(DESTDIR)$(PYTHONDIR)/runmon; do \
	    [ ! -d $$d ] || rmdir --ignore-fail-on-non-empty $$d; done

# The Debian packages, built from a copy of the working tree (dpkg-buildpackage writes into
# the parent folder, and the tree stays clean), into $(BUILD)/deb/. The project's tests are
# skipped there (nocheck): make test runs them.
deb:
	@bash debian/build-debs.sh $(abspath $(BUILD))/deb

# Every C file the project tracks, in .clang-format's layout (Debian's clang-format 14);
# tests/e2e/test_format.sh checks that the tree stays so.
format:
	clang-format -i $$(git ls-files '*.c' '*.h' | grep -v '^python/')

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
