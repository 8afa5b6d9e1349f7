// SPDX-License-Identifier: GPL-2.0
/*
 * Generalized active target (post/start/complete/wait/test): a ring where
 * each rank exposes to its left neighbour and accesses its right one, an
 * all-to-one pattern whose target polls with test(), and misuse errnos.
 */
#include <stdint.h>
#include <rmawin.h>

#include "rmawin_test.h"

/* Every test on both of the library's paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

/* Ten rounds: put round * 100 + me into the right neighbour's window. */
static int ring_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), n = rmawin_nranks(ep);
	int left = (me + n - 1) % n, right = (me + 1) % n, round;
	int32_t slot = -1, v;
	struct rmawin_win *win;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, &slot, sizeof(slot), 4, 0, &win));
	for (round = 0; round < 10; round++) {
		v = round * 100 + me;
		RMAWIN_TEST_TRY(2, rmawin_post(win, &left, 1));
		RMAWIN_TEST_TRY(3, rmawin_start(win, &right, 1));
		RMAWIN_TEST_TRY(4, rmawin_put(win, &v, 4, right, 0));
		RMAWIN_TEST_TRY(5, rmawin_complete(win));
		RMAWIN_TEST_TRY(6, rmawin_wait(win));
		if (slot != round * 100 + left) {
			fprintf(stderr, "rank %d round %d: slot %d\n", me, round, slot);
			return 7;
		}
	}
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	return 0;
}

TEST_F(path, ring_4_ranks)
{
	EXPECT_EQ(4, rmawin_test_run_eps(_metadata, 4, ring_rank, NULL, 25));
	EXPECT_EQ(0, rmawin_stat("windows"));
}

/* Everyone accumulates into rank 0, which polls test() until they are done. */
static int all_to_one_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), others[16], zero = 0, i, polls = 0, t;
	int64_t sum = 0, mine = me * 10;
	struct rmawin_win *win;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, &sum, me ? 0 : 8, 8, 0, &win));
	if (me == 0) {
		for (i = 1; i < n; i++)
			others[i - 1] = i;
		RMAWIN_TEST_TRY(2, rmawin_post(win, others, n - 1));
		while ((t = rmawin_test(win)) == 0) {
			polls++;
			usleep(1000);
		}
		if (t != 1)
			return 3;
		if (sum != 10LL * n * (n - 1) / 2) {
			fprintf(stderr, "sum %lld after %d polls\n", (long long)sum, polls);
			return 4;
		}
		/* the epoch is closed: test again is misuse */
		if (rmawin_test(win) != -EPERM)
			return 5;
	} else {
		RMAWIN_TEST_TRY(6, rmawin_start(win, &zero, 1));
		RMAWIN_TEST_TRY(7, rmawin_accumulate(win, &mine, 1, RMAWIN_INT64, 0, 0,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(8, rmawin_complete(win));
	}
	RMAWIN_TEST_TRY(9, rmawin_win_free(win));
	return 0;
}

TEST_F(path, all_to_one_with_test_polling)
{
	EXPECT_EQ(5, rmawin_test_run_eps(_metadata, 5, all_to_one_rank, NULL, 25));
}

static int misuse_rank(struct rmawin_ep *ep, void *arg)
{
	int32_t w = 0, v = 1;
	int other = 1 - rmawin_rank(ep), bad = 0, bogus[2] = { 1, 1 }, oob = 7;
	struct rmawin_win *win;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, &w, 4, 4, 0, &win));
	RMAWIN_TEST_WANT(-EPERM, rmawin_complete(win));			/* complete without start */
	RMAWIN_TEST_WANT(-EPERM, rmawin_wait(win));			/* wait without post */
	RMAWIN_TEST_WANT(-EPERM, rmawin_test(win));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_post(win, bogus, 2));		/* repeated rank */
	RMAWIN_TEST_WANT(-EINVAL, rmawin_start(win, &oob, 1));		/* no such rank */
	RMAWIN_TEST_WANT(0, rmawin_post(win, &other, 1));
	RMAWIN_TEST_WANT(-EBUSY, rmawin_post(win, &other, 1));
	/* fence inside an exposure epoch */
	RMAWIN_TEST_WANT(-EBUSY, rmawin_fence(win, 0));
	RMAWIN_TEST_WANT(0, rmawin_start(win, &other, 1));
	RMAWIN_TEST_WANT(-EBUSY, rmawin_start(win, &other, 1));
	RMAWIN_TEST_WANT(-EBUSY, rmawin_lock(win, RMAWIN_LOCK_SHARED, other));
	/* self not started */
	RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, &v, 4, rmawin_rank(ep), 0));
	RMAWIN_TEST_WANT(0, rmawin_put(win, &v, 4, other, 0));
	RMAWIN_TEST_WANT(0, rmawin_complete(win));
	RMAWIN_TEST_WANT(0, rmawin_wait(win));
	RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, &v, 4, other, 0));	/* epoch over */
	if (w != 1)
		bad = 1;
	RMAWIN_TEST_TRY(2, rmawin_win_free(win));
	return bad ? 3 : 0;
}

TEST_F(path, pscw_misuse_errors)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, misuse_rank, NULL, 25));
}

TEST_HARNESS_MAIN
