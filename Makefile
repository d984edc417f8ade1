# klog: one Makefile for the library, the tools, the tests and the docs.
#   make            build build/libklog.a and bin/*
#   make check      install missing packages, build, run every test
#   make run        start a standalone broker on its defaults, or on
#                   LISTEN=host:port with its data in DATA=dir
#   make bench      benchmarks (never part of check)
#   make soak       fault loops for SOAK_SECONDS each (SOAK=replication faults;
#                   SOAK=partitions, as root: network partitions; never part
#                   of check)
#   make fuzz       libFuzzer targets for a bounded time (FUZZ_SECONDS);
#                   make check replays their seed corpora once
#   make install    PREFIX/DESTDIR-aware install; make uninstall

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
DESTDIR ?=

CC ?= cc
CFLAGS ?= -O2 -g
KLOG_CFLAGS = -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -DTHREADED \
	-Werror=implicit-function-declaration -Iinclude -pthread -MMD -MP
LDFLAGS ?=
LDLIBS = -Wl,--as-needed -lzookeeper_mt -ldeflate -lisal -lz -lsnappy -llz4 -lzstd -lssl -lcrypto -pthread
# The sanitizer build uses clang: its UBSan also catches pointer arithmetic
# on NULL (p + 0), which gcc's does not.
ASAN_CC ?= clang
# Its library is also the fuzz harnesses': fuzzer-no-link adds libFuzzer's
# coverage hooks (the ASan runtime answers them in the unit tests).
ASAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
ASAN_LIB_FLAGS = $(ASAN_FLAGS) -fsanitize=fuzzer-no-link

LIB_SRC := $(sort $(wildcard lib/*/*.c))
LIB_OBJ := $(LIB_SRC:lib/%.c=build/lib/%.o)
ASAN_LIB_OBJ := $(LIB_SRC:lib/%.c=build/asan/lib/%.o)
CMD_SRC := $(sort $(wildcard cmd/*.c))
BINS := $(CMD_SRC:cmd/%.c=bin/%)
# What every main shares (usage errors, option parsing, stdout checks): it
# prints and exits, so it cannot live in the library.
CLI_SRC := $(sort $(wildcard cmd/cli/*.c))
CLI_OBJ := $(CLI_SRC:cmd/cli/%.c=build/cmd/cli/%.o)
# A tool's commands beyond its main, in a folder of its own
# (cmd/group/ for klog-group, cmd/serve/ for klog-serve, cmd/produce/ for
# klog-produce), linked into that tool alone.
GROUP_SRC := $(sort $(wildcard cmd/group/*.c))
GROUP_OBJ := $(GROUP_SRC:cmd/group/%.c=build/cmd/group/%.o)
SERVE_SRC := $(sort $(wildcard cmd/serve/*.c))
SERVE_OBJ := $(SERVE_SRC:cmd/serve/%.c=build/cmd/serve/%.o)
PRODUCE_SRC := $(sort $(wildcard cmd/produce/*.c))
PRODUCE_OBJ := $(PRODUCE_SRC:cmd/produce/%.c=build/cmd/produce/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/*/test_*.c))
UNIT_BINS := $(UNIT_SRC:tests/unit/%.c=build/tests/%)
ASAN_UNIT_BINS := $(UNIT_SRC:tests/unit/%.c=build/asan/tests/%)
BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_BINS := $(BENCH_SRC:bench/%.c=build/bench/%)
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
MAN1 := $(sort $(wildcard man/*.1))
MAN5 := $(sort $(wildcard man/*.5))
MAN7 := $(sort $(wildcard man/*.7))
HEADERS := $(sort $(wildcard include/klog/*/*.h))

.PHONY: all check deps unit unit-asan bats clients lint run bench soak fuzz fuzz-replay \
	install uninstall clean

all: build/libklog.a $(BINS)

build/libklog.a: $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

build/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(KLOG_CFLAGS) $(CFLAGS) -c -o $@ $<

build/cmd/%.o: cmd/%.c
	@mkdir -p $(@D)
	$(CC) $(KLOG_CFLAGS) -Icmd $(CFLAGS) -c -o $@ $<

bin/%: build/cmd/%.o $(CLI_OBJ) build/libklog.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) build/libklog.a \
		$(LDLIBS)

bin/klog-group: $(GROUP_OBJ)
bin/klog-serve: $(SERVE_OBJ)
bin/klog-produce: $(PRODUCE_OBJ)

build/tests/%: tests/unit/%.c build/libklog.a
	@mkdir -p $(@D)
	$(CC) $(KLOG_CFLAGS) -Itests/unit $(CFLAGS) -o $@ $< build/libklog.a -lcmocka $(LDLIBS)

build/asan/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(ASAN_CC) $(KLOG_CFLAGS) $(ASAN_LIB_FLAGS) -c -o $@ $<

build/asan/libklog.a: $(ASAN_LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

build/asan/tests/%: tests/unit/%.c build/asan/libklog.a
	@mkdir -p $(@D)
	$(ASAN_CC) $(KLOG_CFLAGS) -Itests/unit $(ASAN_FLAGS) -o $@ $< build/asan/libklog.a \
		-lcmocka $(LDLIBS)

build/bench/%: bench/%.c build/libklog.a
	@mkdir -p $(@D)
	$(CC) $(KLOG_CFLAGS) -O2 -g -o $@ $< build/libklog.a $(LDLIBS)

# Fuzz targets link the ASan library, built with libFuzzer's coverage.
build/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) build/asan/libklog.a
	@mkdir -p $(@D)
	$(ASAN_CC) $(KLOG_CFLAGS) $(ASAN_FLAGS) -fsanitize=fuzzer -o $@ $< \
		build/asan/libklog.a $(LDLIBS)

deps:
	@tests/deps.sh

# The builds on every core; the plain and ASan unit suites side by side
# (each one program at a time: 33-42 s for both, against 54-69 s one after
# the other, in 8 runs here); the bats files two at a time (run-bats.sh).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check: deps
	$(MAKE) -j$(JOBS) all $(UNIT_BINS) $(ASAN_UNIT_BINS) $(FUZZ_BINS)
	$(MAKE) -j2 unit unit-asan
	$(MAKE) fuzz-replay
	$(MAKE) lint
	$(MAKE) bats

unit: $(UNIT_BINS)
	@tests/run-unit.sh $(UNIT_BINS)

unit-asan: $(ASAN_UNIT_BINS)
	@ASAN_OPTIONS=detect_leaks=1 tests/run-unit.sh $(ASAN_UNIT_BINS)

bats: all clients
	@tests/run-bats.sh

# Kafka client libraries beyond librdkafka's, for the bats suites: Go's
# sarama (inside Filebeat and Telegraf) from Debian's packages, built in
# GOPATH mode with no network, its cache under build/ (8-12 s and 20 MB
# from a clean clone, 0.2 s after).  Without Go, tests/bats/160 skips and
# says why.
GO ?= go
GOPATH_DEB = /usr/share/gocode
clients:
	@if command -v $(GO) >/dev/null && \
	    [ -d $(GOPATH_DEB)/src/github.com/Shopify/sarama ]; then \
		GO111MODULE=off GOPATH=$(GOPATH_DEB) GOFLAGS= \
		GOCACHE="$(CURDIR)/build/gocache" \
		CGO_CFLAGS="-g -O2 -Wno-deprecated-declarations" \
		$(GO) build -o build/clients/sarama ./tests/clients/sarama; \
	else echo "clients: no Go or no Debian sarama: tests/bats/160 skips"; fi

lint: $(LIB_OBJ)
	@if [ -n "$(MAN1)$(MAN5)$(MAN7)" ]; then \
		mandoc -Tlint -Wwarning $(MAN1) $(MAN5) $(MAN7); fi
	@bash -n completions/klog.bash
	@if command -v zsh >/dev/null; then zsh -n completions/_klog; fi
	@out=$$(tests/layers.sh) || { echo "$$out"; exit 1; }

# Empty: klog-serve's own defaults (127.0.0.1:9092, ./klog-data, or
# $KLOG_DATA_DIR).
LISTEN ?=
DATA ?=
run: all
	@if [ -x bin/klog-serve ]; then exec bin/klog-serve \
	    $(if $(LISTEN),-l '$(LISTEN)') $(if $(DATA),-d '$(DATA)'); \
	else echo "make run: klog-serve is not built yet"; exit 1; fi

bench: all $(BENCH_BINS)
	@bench/run.sh $(SCENARIO)

# Long fault loops, with their figures (tests/soak/): replication, a
# longer version of tests/bats/112's kill loop; faults, one broker under
# every kind of client, retention, hostile connections and kill -9;
# idempotence, an idempotent Kafka producer through kill -9 and lost
# acknowledgements, each record once;
# partitions (not in the default list: it needs root and takes about 10
# minutes), a cluster in network namespaces cut, healed and slowed in six
# scenarios, three timings each (SOAK_SCENARIOS="b c", SOAK_TIMINGS="1"
# pick a few; exit 1 when the broker misses a target, 2 when the harness
# fails).
SOAK_SECONDS ?= 300
SOAK ?= replication faults idempotence
soak: all
	@for s in $(SOAK); do echo "soak: $$s for $(SOAK_SECONDS)s"; \
		SOAK_SECONDS=$(SOAK_SECONDS) tests/soak/$$s.sh || exit 1; done

# Every harness replays its seed corpus once (no fuzzing): one that no
# longer builds or crashes on a seed fails check instead of rotting unseen.
fuzz-replay: $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do name=$${f##*/}; \
		$$f -runs=0 tests/fuzz/corpus/$$name >$$f.replay 2>&1 || { \
		cat $$f.replay; echo "fuzz: $$name fails on its seed corpus"; \
		exit 1; }; done
	@echo "fuzz: $(words $(FUZZ_BINS)) harnesses replayed their seed corpora"

FUZZ_SECONDS ?= 60
fuzz: $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do \
		name=$${f##*/}; mkdir -p build/corpus/$$name; \
		echo "fuzz: $$name for $(FUZZ_SECONDS)s"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			build/corpus/$$name tests/fuzz/corpus/$$name || exit 1; \
	done

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(INCLUDEDIR)/klog $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)
	install -m 0644 build/libklog.a $(DESTDIR)$(LIBDIR)
	for h in $(HEADERS:include/klog/%=%); do \
		install -D -m 0644 include/klog/$$h $(DESTDIR)$(INCLUDEDIR)/klog/$$h; \
	done
	$(if $(MAN1),install -m 0644 $(MAN1) $(DESTDIR)$(MANDIR)/man1)
	$(if $(MAN5),install -m 0644 $(MAN5) $(DESTDIR)$(MANDIR)/man5)
	$(if $(MAN7),install -m 0644 $(MAN7) $(DESTDIR)$(MANDIR)/man7)
	for b in $(BINS:bin/%=%); do \
		install -m 0644 completions/klog.bash $(DESTDIR)$(BASHCOMPDIR)/$$b; \
	done
	install -m 0644 completions/_klog $(DESTDIR)$(ZSHCOMPDIR)/_klog

uninstall:
	rm -f $(BINS:bin/%=$(DESTDIR)$(BINDIR)/%) $(DESTDIR)$(LIBDIR)/libklog.a
	rm -f $(HEADERS:include/klog/%=$(DESTDIR)$(INCLUDEDIR)/klog/%)
	for d in $(sort $(dir $(HEADERS:include/klog/%=%))); do \
		rmdir $(DESTDIR)$(INCLUDEDIR)/klog/$$d 2>/dev/null || :; done
	rmdir $(DESTDIR)$(INCLUDEDIR)/klog 2>/dev/null || :
	rm -f $(MAN1:man/%=$(DESTDIR)$(MANDIR)/man1/%) \
		$(MAN5:man/%=$(DESTDIR)$(MANDIR)/man5/%) \
		$(MAN7:man/%=$(DESTDIR)$(MANDIR)/man7/%)
	rm -f $(BINS:bin/%=$(DESTDIR)$(BASHCOMPDIR)/%) $(DESTDIR)$(ZSHCOMPDIR)/_klog

clean:
	rm -rf build bin

.SECONDARY:
-include $(shell find build -name '*.d' 2>/dev/null)
