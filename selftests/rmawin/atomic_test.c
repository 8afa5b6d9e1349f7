// SPDX-License-Identifier: GPL-2.0
/*
 * NIC atomics: on a window created with RMAWIN_WIN_SAME_OP, every
 * accumulate-family operation on 8-byte integers goes through the
 * device's atomics (fetch-and-add for SUM and NO_OP, compare-and-swap for
 * compare_and_swap, a compare-and-swap loop from the origin for the other
 * ops), a rank's operations on its own window included.
 *
 * From every rank, the self path included: fetch_and_op SUM on int64
 * (positive and negative) and uint64 (wrapping around), each fetched value
 * checked against the chain a serial order gives; a counter and a mutex
 * built from compare_and_swap; REPLACE, whose fetched values and final
 * value are a permutation of what was written; MAX, MIN, PROD, the bitwise
 * and logical ops and SUM through accumulate; NO_OP; accumulate and
 * get_accumulate of 64 elements all to all.  int32 and double operations
 * on such a window keep the target-side path.  The debugfs counter
 * nic_atomics (module-wide and per endpoint) shows which path was taken,
 * and that a window without the flag never takes it.  The errors
 * (alignment, flags, the raw ioctls) are atomic_errors_test.c's.
 *
 * This file: fetch_and_op SUM, compare_and_swap and REPLACE.  The other
 * ops, 64 elements, a group of one and the mixed types are in
 * atomic_ops_test.c.
 */
#include "atomic_test.h"

/* ---- fetch_and_op SUM from every rank, rank 0 included -------------------- */

struct sum_case {
	enum rmawin_type type;
	uint64_t initial;	/* rank 0's counter before */
	int64_t add[NR];	/* what rank r adds each time; all of one sign */
	int lock_all;		/* lock_all, else a shared lock on rank 0 */
	int allocate;		/* rmawin_win_allocate(), else rmawin_win_create() */
};

#define NOOP_EVERY	8		/* a NO_OP among the SUMs after so many of them */
#define NNOOP		(K / NOOP_EVERY)	/* NO_OPs per rank among them */

/*
 * Every rank adds its value K times to rank 0's counter in one epoch,
 * with a NO_OP fetch_and_op after every NOOP_EVERY (same_op_no_op allows
 * them side by side), then, once all are done, reads it with a NO_OP.
 */
static int sum_rank(struct rmawin_ep *ep, void *arg)
{
	const struct sum_case *c = arg;
	int me = rmawin_rank(ep), i;
	uint64_t mem[8] = { 0 }, got[K], peek[NNOOP], noop = 0, *counter;
	struct rmawin_win *win;
	long before;
	void *base;

	RMAWIN_TEST_TRY(1, same_op_win(ep, c->allocate, mem, sizeof(mem), 8, &base, &win));
	counter = base;
	if (me == 0)
		*counter = c->initial;
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, c->lock_all ? rmawin_lock_all(win) :
			   rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
	for (i = 0; i < K; i++) {
		RMAWIN_TEST_TRY(4, rmawin_fetch_and_op(win, &c->add[me], &got[i], c->type, 0, 0,
						       RMAWIN_SUM));
		if (i % NOOP_EVERY == NOOP_EVERY - 1)
			RMAWIN_TEST_TRY(13, rmawin_fetch_and_op(win, &c->add[me],
								&peek[i / NOOP_EVERY], c->type,
								0, 0, RMAWIN_NO_OP));
	}
	RMAWIN_TEST_TRY(5, c->lock_all ? rmawin_unlock_all(win) : rmawin_unlock(win, 0));
	sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	memcpy(&sh->got[me * K], got, sizeof(got));
	memcpy(&sh->got[NR * K + me * NNOOP], peek, sizeof(peek));
	RMAWIN_TEST_TRY(6, rmawin_barrier(ep));
	/* NO_OP: an atomic read of the finished counter, which it leaves as it is */
	RMAWIN_TEST_TRY(7, rmawin_lock_all(win));
	RMAWIN_TEST_TRY(8, rmawin_fetch_and_op(win, &c->add[me], &noop, c->type, 0, 0,
					       RMAWIN_NO_OP));
	RMAWIN_TEST_TRY(9, rmawin_unlock_all(win));
	sh->noop[me] = noop;
	RMAWIN_TEST_TRY(10, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(11, rmawin_sync(win));
		sh->final[0] = *counter;
	}
	RMAWIN_TEST_TRY(12, rmawin_win_free(win));
	return 0;
}

/* Did the location hold @v: the value one of the @n adds fetched, or @final? */
static int held(const struct fetched *ops, size_t n, uint64_t final, uint64_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ops[i].got == v)
			return 1;
	return v == final;
}

static void sum_run(struct __test_metadata *_metadata, const struct sum_case *c)
{
	struct fetched ops[NR * K];
	uint64_t want = c->initial;
	long grew;
	int r, i;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, sum_rank, (void *)c, 50);
	for (r = 0; r < NR; r++) {
		for (i = 0; i < K; i++) {
			ops[r * K + i].got = sh->got[r * K + i];
			ops[r * K + i].add = c->add[r];
		}
		want += (uint64_t)c->add[r] * K;
	}
	EXPECT_EQ(want, sh->final[0]) TH_LOG("counter %#llx, want %#llx",
					     (unsigned long long)sh->final[0],
					     (unsigned long long)want);
	expect_chain(_metadata, "fetch_and_op SUM", ops, NR * K, c->initial, sh->final[0]);
	for (r = 0; r < NR; r++) {
		EXPECT_EQ(want, sh->noop[r]) TH_LOG("rank %d: NO_OP fetched %#llx, want %#llx", r,
						    (unsigned long long)sh->noop[r],
						    (unsigned long long)want);
	}
	/* a NO_OP among the adds fetched a value the counter held */
	for (i = 0; i < NR * NNOOP; i++) {
		EXPECT_TRUE(held(ops, NR * K, sh->final[0], sh->got[NR * K + i]))
			TH_LOG("rank %d's NO_OP %d among the adds fetched %#llx, never held",
			       i / NNOOP, i % NNOOP, (unsigned long long)sh->got[NR * K + i]);
	}
	/* each rank's adds and NO_OPs, rank 0's to itself (the loopback) */
	expect_ep_atomics(_metadata, NR, K + NNOOP);
	EXPECT_LE(NR * (K + NNOOP + 1), grew) TH_LOG("nic_atomics grew by %ld for %d operations",
						     grew, NR * (K + NNOOP + 1));
	expect_end(_metadata);
}

/* +1 from everyone: every value 0 .. NR*K-1 fetched exactly once */
static const struct sum_case sum_int64 = {
	.type = RMAWIN_INT64, .initial = 0, .add = { 1, 1, 1, 1 }, .lock_all = 1,
};

TEST_F_TIMEOUT(path, fetch_and_op_sum_int64, 60)
{
	sum_run(_metadata, &sum_int64);
}

/* negative values onto a negative counter, under shared locks */
static const struct sum_case sum_negative = {
	.type = RMAWIN_INT64, .initial = (uint64_t)-1000, .add = { -1, -2, -3, -1000000007 },
};

TEST_F_TIMEOUT(path, fetch_and_op_sum_int64_negative, 60)
{
	sum_run(_metadata, &sum_negative);
}

/* a uint64 counter that wraps around past 0, in an allocated window */
static const struct sum_case sum_uint64_wrap = {
	.type = RMAWIN_UINT64, .initial = UINT64_MAX - 300, .add = { 3, 5, 7, 11 },
	.lock_all = 1, .allocate = 1,
};

TEST_F_TIMEOUT(path, fetch_and_op_sum_uint64_wraparound, 60)
{
	sum_run(_metadata, &sum_uint64_wrap);
}

/* ---- compare_and_swap --------------------------------------------------- */

#define KC	25	/* increments per rank of the compare_and_swap counter */

/*
 * A counter on rank 0 incremented with compare_and_swap alone: guess its
 * value, try to swap in one more, retry with the value that came back.
 * The value each successful swap replaced is recorded.
 */
static int cas_counter_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), i;
	uint64_t mem[2] = { 0 }, guess = 0, next, old;
	struct rmawin_win *win;
	long before, tries = 0;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, RMAWIN_WIN_SAME_OP, &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	for (i = 0; i < KC; i++) {
		for (;;) {
			next = guess + 1;
			tries++;
			RMAWIN_TEST_TRY(4, rmawin_compare_and_swap(win, &next, &guess, &old,
								   RMAWIN_UINT64, 0, 0));
			RMAWIN_TEST_TRY(5, rmawin_flush(win, 0));
			if (old == guess)
				break;
			guess = old;
		}
		sh->got[me * KC + i] = guess;
		guess = next;
	}
	RMAWIN_TEST_TRY(6, rmawin_unlock_all(win));
	sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	sh->attempts[me] = tries;
	RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(8, rmawin_sync(win));
		sh->final[0] = mem[0];
	}
	RMAWIN_TEST_TRY(9, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(path, compare_and_swap_counter, 60)
{
	struct fetched ops[NR * KC];
	long grew, tries = 0;
	int r, i;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, cas_counter_rank, NULL, 50);
	for (r = 0; r < NR; r++) {
		for (i = 0; i < KC; i++)
			ops[r * KC + i] = (struct fetched){ .got = sh->got[r * KC + i], .add = 1 };
		tries += sh->attempts[r];
	}
	EXPECT_EQ(NR * KC, sh->final[0]);
	/* every value 0 .. NR*KC-1 replaced by exactly one successful swap */
	expect_chain(_metadata, "compare_and_swap counter", ops, NR * KC, 0, sh->final[0]);
	/* one device compare-and-swap per call, rank 0's to itself included */
	expect_ep_atomics(_metadata, NR, KC);
	EXPECT_LE(tries, grew) TH_LOG("nic_atomics grew by %ld for %ld compare_and_swap calls",
				      grew, tries);
	expect_end(_metadata);
}

#define KM	8	/* times each rank takes the mutex */

/*
 * A spin mutex from compare_and_swap on rank 0's word 0 guards a count in
 * its word 1, read with a get and written back with a put; the shared page
 * tells whether two ranks were ever inside at once.
 */
static int cas_mutex_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[2] = { 0 }, zero = 0, mine = rmawin_rank(ep) + 1, old, count;
	int me = rmawin_rank(ep), i, in;
	struct rmawin_win *win;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, RMAWIN_WIN_SAME_OP, &win));
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	for (i = 0; i < KM; i++) {
		do {
			RMAWIN_TEST_TRY(4, rmawin_compare_and_swap(win, &mine, &zero, &old,
								   RMAWIN_INT64, 0, 0));
			RMAWIN_TEST_TRY(5, rmawin_flush(win, 0));
		} while (old != 0);
		in = __atomic_add_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		if (in != 1) {
			RMAWIN_TEST_MSG("%d ranks inside the mutex at once", in);
			return 6;
		}
		RMAWIN_TEST_TRY(7, rmawin_get(win, &count, 8, 0, 1));
		RMAWIN_TEST_TRY(8, rmawin_flush(win, 0));
		count++;
		usleep(1000);
		RMAWIN_TEST_TRY(9, rmawin_put(win, &count, 8, 0, 1));
		RMAWIN_TEST_TRY(10, rmawin_flush(win, 0));
		__atomic_sub_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		RMAWIN_TEST_TRY(11, rmawin_compare_and_swap(win, &zero, &mine, &old, RMAWIN_INT64,
							    0, 0));
		RMAWIN_TEST_TRY(12, rmawin_flush(win, 0));
		if (old != mine) {
			RMAWIN_TEST_MSG("releasing the mutex: it held %llu, want %llu",
					(unsigned long long)old, (unsigned long long)mine);
			return 13;
		}
	}
	RMAWIN_TEST_TRY(14, rmawin_unlock_all(win));
	RMAWIN_TEST_TRY(15, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(16, rmawin_sync(win));
		sh->final[0] = mem[0];
		sh->final[1] = mem[1];
	}
	RMAWIN_TEST_TRY(17, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(path, compare_and_swap_mutex, 60)
{
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, cas_mutex_rank, NULL, 50);
	EXPECT_EQ(0, sh->final[0]) TH_LOG("the mutex is still held by rank %lld",
					  (long long)sh->final[0] - 1);
	EXPECT_EQ(NR * KM, sh->final[1]);
	/* at least a take and a release per round */
	EXPECT_LE(2 * NR * KM, grew);
	expect_end(_metadata);
}

/* ---- REPLACE: every value written is seen exactly once ------------------- */

#define REPLACE_INITIAL	0xdead0000beefULL

static uint64_t replace_val(int r, int i)
{
	return ((uint64_t)(r + 1) << 40) | ((uint64_t)i * 3 + 1);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every rank swaps K distinct values into rank 0's word with fetch_and_op REPLACE. */
static int replace_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[1] = { REPLACE_INITIAL }, vals[K], got[K];
	int me = rmawin_rank(ep), i;
	struct rmawin_win *win;
	long before;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, RMAWIN_WIN_SAME_OP, &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	for (i = 0; i < K; i++) {
		vals[i] = replace_val(me, i);	/* each origin stays until the unlock */
		RMAWIN_TEST_TRY(4, rmawin_fetch_and_op(win, &vals[i], &got[i], RMAWIN_UINT64, 0, 0,
						       RMAWIN_REPLACE));
	}
	RMAWIN_TEST_TRY(5, rmawin_unlock_all(win));
	sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	memcpy(&sh->got[me * K], got, sizeof(got));
	RMAWIN_TEST_TRY(6, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(7, rmawin_sync(win));
		sh->final[0] = mem[0];
	}
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(path, fetch_and_op_replace_permutation, 60)
{
	uint64_t written[NR * K + 1], seen[NR * K + 1];
	long grew;
	int r, i;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, replace_rank, NULL, 50);
	for (r = 0; r < NR; r++)
		for (i = 0; i < K; i++)
			written[r * K + i] = replace_val(r, i);
	written[NR * K] = REPLACE_INITIAL;
	memcpy(seen, sh->got, NR * K * sizeof(*seen));
	seen[NR * K] = sh->final[0];
	/* the values fetched and the one left: what was there and was written, once each */
	qsort(written, NR * K + 1, sizeof(*written), u64_cmp);
	qsort(seen, NR * K + 1, sizeof(*seen), u64_cmp);
	for (i = 0; i < NR * K + 1 && written[i] == seen[i]; i++)
		;
	EXPECT_EQ(NR * K + 1, i) {
		TH_LOG("REPLACE: fetched and final values are not a permutation of the written "
		       "ones: %#llx where %#llx (sorted, index %d)",
		       (unsigned long long)seen[i], (unsigned long long)written[i], i);
	}
	expect_ep_atomics(_metadata, NR, K);
	EXPECT_LE(NR * K, grew);
	expect_end(_metadata);
}

TEST_HARNESS_MAIN
