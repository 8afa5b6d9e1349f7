# SPDX-License-Identifier: GPL-2.0
#
# rmawin top-level build.  `make` builds the module (against Debian's
# packaged kernel, never the running one), the library, the selftests and
# the tools; `make check` lints, builds and runs the selftests in the VM;
# `make demo` runs the halo exchange example in the VM; `make bench` runs the
# benchmarks beside perftest in the VM.

TOP := $(CURDIR)
KVER ?= $(shell $(TOP)/tools/kver)
KDIR ?= /lib/modules/$(KVER)/build
# tools/vm and tools/lint boot and check the same kernel the module is built for
export KVER
LINUX_SRC := $(TOP)/build/linux-source-6.1
# The project's one version: the library's (lib/include/rmawin.h).
VERSION := $(shell awk '/^\#define RMAWIN_VERSION_MAJOR/ { ma = $$3 } \
	/^\#define RMAWIN_VERSION_MINOR/ { mi = $$3 } END { print ma "." mi }' $(TOP)/lib/include/rmawin.h)

.PHONY: all deps module test-module lib selftests tools examples lint check check-debug check-rt fuzz demo bench clean install
.PHONY: man htmldocs deb dkms dkms-remove check-install mpi mpi-bench mpi-compare

all: module lib selftests tools examples

deps:
	@$(TOP)/tools/deps

module: deps
	@test -n "$(KVER)" || { echo "no Debian kernel with headers found under /lib/modules" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(TOP) modules

# The selftests' helper module (selftests/rmawin/stall/: cq_teardown_test), never packaged.
test-module: module
	$(MAKE) -C $(KDIR) M=$(TOP)/selftests/rmawin/stall modules

lib: deps
	$(MAKE) -C lib

selftests: deps lib test-module
	$(MAKE) -C selftests/rmawin LINUX_SRC=$(LINUX_SRC)

tools: deps lib
	$(MAKE) -C tools

examples: deps lib
	$(MAKE) -C examples

# rmawin-mpi (mpi/, Documentation/mpi.rst): the PMPI library, once against
# Open MPI and once against MPICH, and its test programs; installs both MPIs.
mpi: lib
	@$(TOP)/tools/deps mpi
	$(MAKE) -C mpi
	$(MAKE) -C selftests/rmawin/mpi

# Issue 14's benchmarks (Documentation/mpi.rst): OSU 5.7's one-sided suite,
# built out of tree from ../shared with each MPI's mpicc, and bench/mpi/overlap.c,
# on rmawin-mpi and on the MPIs' own one-sided, in one guest on rxe0; then
# build/osu/results.csv, table.txt and the PNGs on the host.
# OSU_BUDGET: seconds the matrix may take in the guest (what is left is
# reported as skipped); the VM gets 150 more.
OSU_BUDGET ?= 1350
mpi-bench: mpi
	$(TOP)/bench/mpi/osu.sh build
	$(TOP)/tools/vm --timeout $$(($(OSU_BUDGET) + 150)) -- \
		env OSU_BUDGET=$(OSU_BUDGET) $(TOP)/bench/mpi/osu.sh run
	$(TOP)/bench/mpi/osu.sh report

# Issue 14's 8-byte latency comparison, robust to the guest's spread:
# ROUNDS (default 3) interleaved rounds of the OSU latency programs at
# 8 bytes on every stack, in the modes COMPARE_SYNCS (default flush and
# lock), medians in build/osu/$(COMPARE_OUT).txt (Documentation/mpi.rst).
ROUNDS ?= 3
COMPARE_SYNCS ?= flush lock
COMPARE_OUT ?= compare
COMPARE_CSV = $(TOP)/build/osu/$(COMPARE_OUT).csv
mpi-compare: mpi
	$(TOP)/bench/mpi/osu.sh build
	$(TOP)/tools/vm --timeout $$(($(ROUNDS) * 900 + 150)) -- \
		env ROUNDS=$(ROUNDS) COMPARE_SYNCS="$(COMPARE_SYNCS)" \
		COMPARE_CSV=$(COMPARE_CSV) $(TOP)/bench/mpi/osu.sh compare
	COMPARE_CSV=$(COMPARE_CSV) $(TOP)/bench/mpi/osu.sh compare-report

# checkpatch --strict, sparse (C=2 checks every file) and W=1, all silent.
lint: deps
	$(TOP)/tools/lint

# The manual pages and the HTML build first: kernel-doc and Sphinx warnings fail.
# mpi: rmawin-mpi and its programs, for selftests/rmawin/mpi_test.sh.
check: lint all mpi man htmldocs
	$(TOP)/tools/check

# The whole suite, one guest and two, under a debug kernel built from Debian's
# linux-source-6.1 (KASAN, lockdep, kmemleak, UBSAN, fault injection), kept in
# build/debug: the first run builds it (about 10 minutes), later runs reuse it.
# mpi: as for check, or mpi_test.sh would skip.
check-debug: all mpi
	@$(TOP)/tools/deps debug
	$(TOP)/tools/debug/build-kernel
	RMAWIN_VM_KERNEL_DIR=$(TOP)/build/debug RMAWIN_KO=$(TOP)/build/debug/mod/kmod/rmawin.ko \
		RMAWIN_CHECK_SLOW=3 RMAWIN_CHECK_RING_ONLY=1 RMAWIN_CHECK_MPI_FLAVORS=openmpi \
		RMAWIN_CHECK_MPI_WHY="MPICH's own UCX traffic over rxe trips KASAN in rxe_mr_copy (Documentation/testing.rst)" \
		$(TOP)/tools/check

# The ioctl fuzzer (selftests/rmawin/ioctl_fuzz.c) under the debug kernel:
# FUZZ_CALLS calls from FUZZ_SEED (a fresh one by default: the run prints it).
FUZZ_SEED ?= $(shell date +%s)
FUZZ_CALLS ?= 100000

fuzz: all
	@$(TOP)/tools/deps debug
	$(TOP)/tools/debug/build-kernel
	RMAWIN_VM_KERNEL_DIR=$(TOP)/build/debug RMAWIN_KO=$(TOP)/build/debug/mod/kmod/rmawin.ko \
		$(TOP)/tools/vm --timeout 7200 -- selftests/rmawin/fuzz.sh $(FUZZ_SEED) $(FUZZ_CALLS)

# The same suite on Debian's PREEMPT_RT kernel (linux-image-rt-amd64), the
# module built against its headers; installs both first.
check-rt:
	@$(TOP)/tools/deps rt
	$(MAKE) check KVER=$$($(TOP)/tools/kver rt)

# The halo exchange on 4 ranks in the VM, checked against a serial solve;
# writes build/demo/halo.{txt,png}.
demo: all
	$(TOP)/examples/demo.sh $(TOP)/build/demo

# rmawin beside perftest and ibv_reg_mr in one VM (bench/run.sh), then the
# plots and the table of ratios against the targets (bench/report.sh).
# BENCH_OUT must be inside the repository: the guest writes it.
BENCH_OUT ?= $(TOP)/bench/results
# BENCH_STEPS: some of bench/run.sh's steps only (e.g. "put_lat atomics")
# BENCH_ROUNDS: rounds of the step "rounds" (the 8-byte latency lines again)
BENCH_STEPS ?=
BENCH_ROUNDS ?= 5

bench: all
	$(MAKE) -C bench
	@echo "bench: host load average $$(cut -d' ' -f1-3 /proc/loadavg) before the run" \
		"(the VM's two CPUs need the host's: other load skews the figures)"
	st=0; $(TOP)/tools/vm --mem 3072 --timeout 2400 -- \
		env BENCH_STEPS="$(BENCH_STEPS)" BENCH_ROUNDS="$(BENCH_ROUNDS)" \
		$(TOP)/bench/run.sh $(BENCH_OUT) || st=$$?; \
	$(TOP)/bench/report.sh $(BENCH_OUT) || st=1; \
	echo "bench: host load average $$(cut -d' ' -f1-3 /proc/loadavg) after the run"; \
	exit $$st

install: all
	$(MAKE) -C $(KDIR) M=$(TOP) modules_install
	$(MAKE) -C lib install

# Manual pages into build/man: section 3 from the public header's kernel-doc
# comments, 1 and 4 from man/ (Documentation/packaging.rst).
man: deps
	$(TOP)/tools/man $(TOP)/build/man

# Documentation/ as HTML in build/htmldocs, references from kernel-doc; any
# Sphinx warning fails the build.
htmldocs: deps
	@$(TOP)/tools/deps docs
	RMAWIN_KDOC=$$($(TOP)/tools/kdoc) RMAWIN_VERSION=$(VERSION) \
		sphinx-build -E -a -W --keep-going -q -b html $(TOP)/Documentation $(TOP)/build/htmldocs
	@echo "htmldocs: $(TOP)/build/htmldocs/index.html"

# Debian packages into build/deb (lintian must be clean).
deb:
	@$(TOP)/tools/deps pkg
	$(TOP)/tools/deb

# The module under DKMS on this host, for the packaged kernel; nothing is loaded.
dkms:
	@$(TOP)/tools/deps pkg
	$(TOP)/tools/dkms install

dkms-remove:
	$(TOP)/tools/dkms remove

# Installs the packages onto THIS host, tests them in the VM, removes them:
# for throwaway machines (CI), not a workstation.
check-install: deb
	$(TOP)/tools/install-test

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	-$(MAKE) -C $(KDIR) M=$(TOP)/selftests/rmawin/stall clean
	-$(MAKE) -C lib clean
	-$(MAKE) -C selftests/rmawin clean
	-$(MAKE) -C tools clean
	-$(MAKE) -C examples clean
	-$(MAKE) -C bench clean
	-$(MAKE) -C mpi clean
	-$(MAKE) -C selftests/rmawin/mpi clean
	rm -rf build/check build/vm build/man build/htmldocs build/deb build/install-test
