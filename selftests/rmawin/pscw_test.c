// SPDX-License-Identifier: GPL-2.0
/*
 * Generalized active target (post/start/complete/wait/test): a ring where
 * each rank exposes to its left neighbour and accesses its right one, an
 * all-to-one pattern whose target polls with test(), and misuse errnos.
 */
#include <stdint.h>
#include <sys/wait.h>
#include <rmawin.h>

#include "rmawin_test.h"

static int open_rank(int rank, int n, int port, struct rmawin_ep **ep)
{
	static char buf[16][32];
	static const char *addrs[16];
	struct rmawin_ep_attr attr = { .rank = rank, .nranks = n, .addrs = addrs };
	int i;

	for (i = 0; i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "198.18.0.1:%d", port + i);
		addrs[i] = buf[i];
	}
	return rmawin_ep_open(&attr, ep);
}

static int run(int n, int port, int (*fn)(struct rmawin_ep *ep))
{
	pid_t pid[16];
	int i, st, ok = 0;

	for (i = 0; i < n; i++) {
		pid[i] = fork();
		if (!pid[i]) {
			struct rmawin_ep *ep;
			int ret = open_rank(i, n, port, &ep);

			if (ret) {
				fprintf(stderr, "rank %d: open: %s\n", i, rmawin_strerror(ret));
				_exit(100);
			}
			ret = fn(ep);
			if (rmawin_ep_close(ep))
				ret = 101;
			_exit(ret);
		}
	}
	for (i = 0; i < n; i++) {
		if (waitpid(pid[i], &st, 0) != pid[i])
			continue;
		if (WIFEXITED(st) && !WEXITSTATUS(st))
			ok++;
		else
			fprintf(stderr, "rank %d: exit %d\n", i, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	return ok;
}

#define TRY(step, call) do { int _r = (call); if (_r) { \
	fprintf(stderr, "rank %d: step %d: %s: %s\n", rmawin_rank(ep), step, #call, \
		rmawin_strerror(_r)); return step; } } while (0)

/* Ten rounds: put round * 100 + me into the right neighbour's window. */
static int ring_rank(struct rmawin_ep *ep)
{
	int me = rmawin_rank(ep), n = rmawin_nranks(ep);
	int left = (me + n - 1) % n, right = (me + 1) % n, round;
	int32_t slot = -1, v;
	struct rmawin_win *win;

	TRY(1, rmawin_win_create(ep, &slot, sizeof(slot), 4, 0, &win));
	for (round = 0; round < 10; round++) {
		v = round * 100 + me;
		TRY(2, rmawin_post(win, &left, 1));
		TRY(3, rmawin_start(win, &right, 1));
		TRY(4, rmawin_put(win, &v, 4, right, 0));
		TRY(5, rmawin_complete(win));
		TRY(6, rmawin_wait(win));
		if (slot != round * 100 + left) {
			fprintf(stderr, "rank %d round %d: slot %d\n", me, round, slot);
			return 7;
		}
	}
	TRY(8, rmawin_win_free(win));
	return 0;
}

TEST(ring_4_ranks)
{
	EXPECT_EQ(4, run(4, 31000, ring_rank));
	EXPECT_EQ(0, rmawin_stat("windows"));
}

/* Everyone accumulates into rank 0, which polls test() until they are done. */
static int all_to_one_rank(struct rmawin_ep *ep)
{
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), others[16], zero = 0, i, polls = 0, t;
	int64_t sum = 0, mine = me * 10;
	struct rmawin_win *win;

	TRY(1, rmawin_win_create(ep, &sum, me ? 0 : 8, 8, 0, &win));
	if (me == 0) {
		for (i = 1; i < n; i++)
			others[i - 1] = i;
		TRY(2, rmawin_post(win, others, n - 1));
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
		TRY(6, rmawin_start(win, &zero, 1));
		TRY(7, rmawin_accumulate(win, &mine, 1, RMAWIN_INT64, 0, 0, RMAWIN_SUM));
		TRY(8, rmawin_complete(win));
	}
	TRY(9, rmawin_win_free(win));
	return 0;
}

TEST(all_to_one_with_test_polling)
{
	EXPECT_EQ(5, run(5, 31100, all_to_one_rank));
}

static int misuse_rank(struct rmawin_ep *ep)
{
	int32_t w = 0, v = 1;
	int other = 1 - rmawin_rank(ep), bad = 0, bogus[2] = { 1, 1 }, oob = 7;
	struct rmawin_win *win;

#define WANT(err, call) do { int _r = (call); if (_r != (err)) { \
	fprintf(stderr, "%s: %d, want %d\n", #call, _r, (err)); bad = 1; } } while (0)
	TRY(1, rmawin_win_create(ep, &w, 4, 4, 0, &win));
	WANT(-EPERM, rmawin_complete(win));		/* complete without start */
	WANT(-EPERM, rmawin_wait(win));			/* wait without post */
	WANT(-EPERM, rmawin_test(win));
	WANT(-EINVAL, rmawin_post(win, bogus, 2));	/* repeated rank */
	WANT(-EINVAL, rmawin_start(win, &oob, 1));	/* no such rank */
	WANT(0, rmawin_post(win, &other, 1));
	WANT(-EBUSY, rmawin_post(win, &other, 1));
	WANT(-EBUSY, rmawin_fence(win, 0));		/* fence inside an exposure epoch */
	WANT(0, rmawin_start(win, &other, 1));
	WANT(-EBUSY, rmawin_start(win, &other, 1));
	WANT(-EBUSY, rmawin_lock(win, RMAWIN_LOCK_SHARED, other));
	WANT(-EPERM, rmawin_put(win, &v, 4, rmawin_rank(ep), 0)); /* self not started */
	WANT(0, rmawin_put(win, &v, 4, other, 0));
	WANT(0, rmawin_complete(win));
	WANT(0, rmawin_wait(win));
	WANT(-EPERM, rmawin_put(win, &v, 4, other, 0));	/* epoch over */
	if (w != 1)
		bad = 1;
	TRY(2, rmawin_win_free(win));
	return bad ? 3 : 0;
}

TEST(pscw_misuse_errors)
{
	EXPECT_EQ(2, run(2, 31200, misuse_rank));
}

TEST_HARNESS_MAIN
