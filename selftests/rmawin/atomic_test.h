/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What atomic_test.c, atomic_ops_test.c and atomic_order_test.c share: the
 * page the ranks report in, the nic_atomics counters, same_op windows, and
 * the check that fetch-and-adds form a serial chain.
 */
#ifndef RMAWIN_ATOMIC_TEST_H
#define RMAWIN_ATOMIC_TEST_H

#include <dirent.h>
#include <stdint.h>
#include <sys/mman.h>
#include <rmawin.h>

#include "rmawin_test.h"

/* Every test through the library on both of its paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

#define NR	4	/* ranks of the multi-rank tests */
#define K	40	/* operations per rank on one location */
#define NGOT	8192	/* fetched values the shared page holds */

/* What the ranks tell the test process, which checks it once they are gone. */
struct shared {
	uint64_t got[NGOT];	/* fetched values, by rank and operation */
	uint64_t final[64];	/* the target's memory at the end */
	uint64_t noop[NR];	/* what each rank's NO_OP fetched at the end */
	long ep_atomics[NR];	/* growth of each rank's endpoint's nic_atomics, or -1 */
	long attempts[NR];	/* compare_and_swap calls each rank made */
	uint64_t cas_old[NR];	/* what each rank's one compare_and_swap fetched */
	int inside;		/* ranks inside the compare_and_swap mutex now */
	/* atomic_order_test.c: */
	long misordered[NR];	/* operations of each origin that saw a later one's effect */
	uint64_t first_bad[NR][3];	/* the first: fetched, wanted, round << 16 | op index */
	long between[NR];	/* another rank's operation landed between two of ours */
	long raced[NR];		/* operations a racer made */
	int stop;		/* the racers stop once it is set */
};

static struct shared *sh;

static inline void shared_setup(struct __test_metadata *_metadata)
{
	sh = rmawin_test_shared(sizeof(*sh));
	ASSERT_NE(NULL, sh);
}

static inline long delta(long before, long after)
{
	return before < 0 || after < 0 ? -1 : after - before;
}

/*
 * Run fn on @n ranks, each of which must succeed; returns how much the
 * module's nic_atomics counter grew meanwhile (-1 if it cannot be read).
 * The counter is module-wide: the tests run one at a time.
 */
static inline long run_counted(struct __test_metadata *_metadata, int n,
			int (*fn)(struct rmawin_ep *ep, void *arg), void *arg, int deadline_s)
{
	long before = rmawin_stat("nic_atomics"), after;

	EXPECT_LE(0, before) TH_LOG("no counter nic_atomics in " RMAWIN_STATS_PATH);
	ASSERT_EQ(n, rmawin_test_run_eps(_metadata, n, fn, arg, deadline_s));
	after = rmawin_stat("nic_atomics");
	return delta(before, after);
}

/* At least @min NIC atomics from each of the @n ranks' endpoints. */
static inline void expect_ep_atomics(struct __test_metadata *_metadata, int n, long min)
{
	int r;

	/* braces: the harness's EXPECT is two statements */
	for (r = 0; r < n; r++) {
		EXPECT_LE(min, sh->ep_atomics[r])
			TH_LOG("rank %d's endpoint posted %ld NIC atomics, want at least %ld%s", r,
			       sh->ep_atomics[r], min, r ? "" : " (rank 0 targets itself)");
	}
}

/* Every one of the @n ranks' endpoints posted exactly @want device atomics. */
static inline void expect_ep_atomics_eq(struct __test_metadata *_metadata, int n, long want)
{
	int r;

	for (r = 0; r < n; r++) {
		EXPECT_EQ(want, sh->ep_atomics[r])
			TH_LOG("rank %d's endpoint posted %ld NIC atomics, want %ld", r,
			       sh->ep_atomics[r], want);
	}
}

static inline void expect_end(struct __test_metadata *_metadata)
{
	rmawin_test_expect_no_leaks(_metadata);
	EXPECT_EQ(0, rmawin_stat("windows"));
	EXPECT_EQ(0, rmawin_stat("reqs"));
	munmap(sh, sizeof(*sh));
}

/*
 * The end of a rank's run on @win, whose memory is @mem (@len bytes):
 * its endpoint's nic_atomics growth since @before to the test, a barrier,
 * rank 0's memory to the test, the window freed.  Return: 0, or the step
 * that failed (100 and up).
 */
static inline int rank_end(struct rmawin_ep *ep, struct rmawin_win *win, const void *mem,
			   size_t len, long before)
{
	int me = rmawin_rank(ep);

	if (before != -2)
		sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	RMAWIN_TEST_TRY(100, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(101, rmawin_sync(win));
		memcpy(sh->final, mem, len);
	}
	RMAWIN_TEST_TRY(102, rmawin_win_free(win));
	return 0;
}

/* A window of @len bytes with RMAWIN_WIN_SAME_OP, at @mem or allocated; *@base is where. */
static inline int same_op_win(struct rmawin_ep *ep, int allocate, void *mem, size_t len,
		       unsigned int unit, void **base, struct rmawin_win **win)
{
	*base = mem;
	if (allocate)
		return rmawin_win_allocate(ep, len, unit, RMAWIN_WIN_SAME_OP, base, win);
	return rmawin_win_create(ep, mem, len, unit, RMAWIN_WIN_SAME_OP, win);
}

/* ---- linearizability of fetch-and-add ------------------------------------ */

struct fetched {
	uint64_t got;		/* what the operation fetched */
	int64_t add;		/* what it added; every one of the same sign */
};

static uint64_t fetched_key;	/* sorting by distance from the initial value */
static int fetched_neg;

static inline uint64_t fetched_dist(uint64_t v)
{
	return fetched_neg ? fetched_key - v : v - fetched_key;
}

static inline int fetched_cmp(const void *a, const void *b)
{
	uint64_t x = fetched_dist(((const struct fetched *)a)->got);
	uint64_t y = fetched_dist(((const struct fetched *)b)->got);

	return x < y ? -1 : x > y;
}

/*
 * @n fetch-and-adds on one location that held @initial and ends at
 * @final.  Atomic means there is a serial order of them: sorted by how far
 * from @initial what they fetched is (in the direction of the adds), each
 * fetched what the one before it left, and the last left @final.  Two
 * operations that fetched the same value (a lost update) or one that
 * fetched a value nobody left break the chain.  Values are 64-bit two's
 * complement, so uint64 wraps around and int64 is the same arithmetic.
 * Returns 1 if the chain holds.
 */
static inline int expect_chain(struct __test_metadata *_metadata, const char *what,
			struct fetched *ops, size_t n, uint64_t initial, uint64_t final)
{
	uint64_t at = initial;
	size_t i;

	fetched_key = initial;
	fetched_neg = n && ops[0].add < 0;
	qsort(ops, n, sizeof(*ops), fetched_cmp);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(at, ops[i].got) {
			TH_LOG("%s: the %zu-th operation (adding %lld) fetched %#llx, want %#llx",
			       what, i, (long long)ops[i].add, (unsigned long long)ops[i].got,
			       (unsigned long long)at);
			return 0;
		}
		at += (uint64_t)ops[i].add;
	}
	EXPECT_EQ(at, final) {
		TH_LOG("%s: final value %#llx, want %#llx", what, (unsigned long long)final,
		       (unsigned long long)at);
		return 0;
	}
	return 1;
}

#endif /* RMAWIN_ATOMIC_TEST_H */
