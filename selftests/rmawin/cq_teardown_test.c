// SPDX-License-Identifier: GPL-2.0
/*
 * A group's teardown must not free its completion queues while ib_core's
 * softirq poller is still re-arming them.  ib_poll_handler() gives a CQ
 * back (irq_poll_complete()) before it calls the driver's req_notify_cq,
 * so ib_free_cq()'s irq_poll_disable() on another CPU can return, and
 * soft-RoCE free the CQ's queue, while that call is still to come: the
 * guest then oopses in rxe_req_notify_cq (seen once in CI, two guests with
 * two vCPUs each on two host CPUs).  The window is a few instructions, so
 * the test widens it: the helper module rmawin_stall (stall/) holds every
 * softirq call of rxe_req_notify_cq for STALL_MS while the ranks close
 * their endpoints.  Without the module's wait (group.c) the guest's kernel
 * oopses or KASAN reports a use after free, which fails the run; with it,
 * every teardown ends cleanly and nothing is left behind.
 *
 * Needs root and the helper built beside the module (RMAWIN_KO's tree):
 * the test VM has both.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <rmawin.h>

#include "rmawin_test.h"

#define STALL_PARAM	"/sys/module/rmawin_stall/parameters/"
#define STALL_MS	200
#define ROUNDS		3
#define WORDS		1024

/*
 * Each rank: a window, a put of its own pattern to the peer, checked after
 * a fence; then rank 0 arms the stall and both close with it armed.
 */
static int teardown_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), peer = !me, round = *(int *)arg, i;
	static uint64_t mem[WORDS], src[WORDS];
	struct rmawin_win *win;

	for (i = 0; i < WORDS; i++)
		src[i] = (uint64_t)round << 40 | (uint64_t)me << 32 | i;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_fence(win, 0));
	RMAWIN_TEST_TRY(3, rmawin_put(win, src, sizeof(src), peer, 0));
	RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));
	for (i = 0; i < WORDS; i++) {
		uint64_t want = (uint64_t)round << 40 | (uint64_t)peer << 32 | i;

		if (mem[i] != want) {
			RMAWIN_TEST_MSG("word %d is %#llx, want %#llx", i,
					(unsigned long long)mem[i], (unsigned long long)want);
			return 5;
		}
	}
	RMAWIN_TEST_TRY(6, rmawin_barrier(ep));
	if (me == 0 && rmawin_test_write_long(STALL_PARAM "stall_ms", STALL_MS)) {
		RMAWIN_TEST_MSG("arming the stall: %s", strerror(errno));
		return 7;
	}
	RMAWIN_TEST_TRY(8, rmawin_barrier(ep));
	/* the window is left to the endpoint's close, as a dying process leaves it */
	return 0;
}

FIXTURE(cq_teardown) {
	char ko[PATH_MAX];
};

FIXTURE_SETUP(cq_teardown)
{
	const char *mod = getenv("RMAWIN_KO");
	char dir[PATH_MAX];

	if (geteuid())
		SKIP(return, "loading the helper module needs root");
	ASSERT_NE(NULL, mod) TH_LOG("RMAWIN_KO does not name the built module");
	snprintf(dir, sizeof(dir), "%s", mod);
	/* .../kmod/rmawin.ko -> .../selftests/rmawin/stall/rmawin_stall.ko */
	snprintf(self->ko, sizeof(self->ko), "%s/../selftests/rmawin/stall/rmawin_stall.ko",
		 dirname(dir));
	ASSERT_EQ(0, access(self->ko, R_OK)) TH_LOG("%s: %s (make builds it)", self->ko,
						     strerror(errno));
	if (rmawin_test_load_module(self->ko, "stall_ms=0") && errno != EEXIST)
		ASSERT_EQ(0, errno) TH_LOG("loading %s: %s", self->ko, strerror(errno));
}

FIXTURE_TEARDOWN(cq_teardown)
{
	if (geteuid())
		return;
	rmawin_test_write_long(STALL_PARAM "stall_ms", 0);
	rmawin_test_unload_module("rmawin_stall");
}

TEST_F_TIMEOUT(cq_teardown, close_while_the_cq_is_rearmed, 600)
{
	long before = rmawin_test_read_long(STALL_PARAM "stalls"), after;
	int round;

	ASSERT_LE(0, before);
	for (round = 0; round < ROUNDS; round++) {
		ASSERT_EQ(2, rmawin_test_run_eps(_metadata, 2, teardown_rank, &round, 300))
			TH_LOG("round %d", round);
		ASSERT_EQ(0, rmawin_test_write_long(STALL_PARAM "stall_ms", 0));
	}
	after = rmawin_test_read_long(STALL_PARAM "stalls");
	/* the window was held open: re-arms from softirq happened during the closes */
	EXPECT_LT(before, after);
	TH_LOG("%ld re-arms held %d ms each over %d rounds", after - before, STALL_MS, ROUNDS);
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_HARNESS_MAIN
