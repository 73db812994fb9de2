# runmon — build, test, demo, bench, fuzz, install.
# Sources are discovered by directory, so adding a module needs no Makefile edit:
#   base/ model/ runlog/ monitor/ summary/ sink/ report/ record/
#                              -> librunmon.a (the layers, lowest first: docs/ARCHITECTURE.md)
#   cli/                       -> the runmon binary (main + one file per command)
#   tests/unit/test_*.c        -> one cmocka binary each (ASan+UBSan)
#   tests/e2e/test_*.sh        -> end-to-end scripts against the ASan runmon
#   fixtures/nvidia-smi/*.c    -> the fake nvidia-smi used by tests and the demo
#   fuzz/fuzz_*.c              -> libFuzzer targets (make fuzz)

PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
CC      ?= cc
SHELL   := /bin/bash

WARN    := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wformat=2 -Wwrite-strings -D_GNU_SOURCE
DEPFLAGS = -MMD -MP
INCS    := -I.
LIBS    := -lcsv -ljansson -lpcre2-8 -lncursesw -lpthread -lm
REL_CFLAGS  := $(WARN) $(INCS) -O2 -g $(CFLAGS)
ASAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TEST_CFLAGS := $(WARN) $(INCS) -O1 -g $(ASAN_FLAGS) $(CFLAGS)

LAYERS    := base model runlog monitor summary sink report record
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

.PHONY: all deps test demo bench fuzz install clean format valgrind
.DEFAULT_GOAL := all

all: deps $(BUILD)/runmon $(BUILD)/librunmon.a $(FAKE_BIN)

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
	$(CC) $(REL_CFLAGS) -o $@ $(REL_CLI) $(BUILD)/librunmon.a $(LIBS)

$(BUILD)/asan/runmon: $(ASAN_CLI) $(BUILD)/librunmon-asan.a
	$(CC) $(TEST_CFLAGS) -o $@ $(ASAN_CLI) $(BUILD)/librunmon-asan.a $(LIBS)

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
fuzz: deps $(FUZZ_BINS)
	@BUILD=$(abspath $(BUILD)) FUZZ_SECONDS=$${FUZZ_SECONDS:-60} bash fuzz/run.sh

valgrind: all $(UNIT_BINS)
	@BUILD=$(abspath $(BUILD)) bash tests/valgrind.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/runmon $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BUILD)/runmon $(DESTDIR)$(PREFIX)/bin/runmon
	install -m 0644 $(BUILD)/librunmon.a $(DESTDIR)$(PREFIX)/lib/librunmon.a
	install -m 0644 runlog/runlog.h $(DESTDIR)$(PREFIX)/include/runmon/runlog.h
	install -m 0644 man/runmon.1 $(DESTDIR)$(PREFIX)/share/man/man1/runmon.1

format:
	clang-format -i $(LIB_SRCS) $(CLI_SRCS) $(HDRS) $(UNIT_SRCS) $(FAKE_SRCS) $(FUZZ_SRCS)

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
