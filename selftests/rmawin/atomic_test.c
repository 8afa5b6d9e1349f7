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
 */
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
};

static struct shared *sh;

static void shared_setup(struct __test_metadata *_metadata)
{
	sh = rmawin_test_shared(sizeof(*sh));
	ASSERT_NE(NULL, sh);
}

#define DEBUGFS_DIR	"/sys/kernel/debug/rmawin"

/* A counter of this process's endpoint (the debugfs file naming our pid), or -1. */
static long ep_stat(const char *key)
{
	char path[300], line[128], name[64];
	long val, pid, found;
	struct dirent *d;
	DIR *dir = opendir(DEBUGFS_DIR);
	FILE *f;

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "ep", 2))
			continue;
		snprintf(path, sizeof(path), DEBUGFS_DIR "/%s", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		pid = found = -1;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%63s %ld", name, &val) != 2)
				continue;
			if (!strcmp(name, "pid"))
				pid = val;
			else if (!strcmp(name, key))
				found = val;
		}
		fclose(f);
		if (pid == getpid()) {
			closedir(dir);
			return found;
		}
	}
	closedir(dir);
	return -1;
}

static long delta(long before, long after)
{
	return before < 0 || after < 0 ? -1 : after - before;
}

/*
 * Run fn on @n ranks, each of which must succeed; returns how much the
 * module's nic_atomics counter grew meanwhile (-1 if it cannot be read).
 * The counter is module-wide: the tests run one at a time.
 */
static long run_counted(struct __test_metadata *_metadata, int n,
			int (*fn)(struct rmawin_ep *ep, void *arg), void *arg, int deadline_s)
{
	long before = rmawin_stat("nic_atomics"), after;

	EXPECT_LE(0, before) TH_LOG("no counter nic_atomics in " RMAWIN_STATS_PATH);
	ASSERT_EQ(n, rmawin_test_run_eps(_metadata, n, fn, arg, deadline_s));
	after = rmawin_stat("nic_atomics");
	return delta(before, after);
}

/* At least @min NIC atomics from each of the @n ranks' endpoints. */
static void expect_ep_atomics(struct __test_metadata *_metadata, int n, long min)
{
	int r;

	/* braces: the harness's EXPECT is two statements */
	for (r = 0; r < n; r++) {
		EXPECT_LE(min, sh->ep_atomics[r])
			TH_LOG("rank %d's endpoint posted %ld NIC atomics, want at least %ld%s", r,
			       sh->ep_atomics[r], min, r ? "" : " (rank 0 targets itself)");
	}
}

static void expect_end(struct __test_metadata *_metadata)
{
	rmawin_test_expect_no_leaks(_metadata);
	EXPECT_EQ(0, rmawin_stat("windows"));
	EXPECT_EQ(0, rmawin_stat("reqs"));
	munmap(sh, sizeof(*sh));
}

/* A window of @len bytes with RMAWIN_WIN_SAME_OP, at @mem or allocated; *@base is where. */
static int same_op_win(struct rmawin_ep *ep, int allocate, void *mem, size_t len,
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

static uint64_t fetched_dist(uint64_t v)
{
	return fetched_neg ? fetched_key - v : v - fetched_key;
}

static int fetched_cmp(const void *a, const void *b)
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
static int expect_chain(struct __test_metadata *_metadata, const char *what,
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
	before = ep_stat("nic_atomics");
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
	sh->ep_atomics[me] = delta(before, ep_stat("nic_atomics"));
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
	before = ep_stat("nic_atomics");
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
	sh->ep_atomics[me] = delta(before, ep_stat("nic_atomics"));
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
	before = ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	for (i = 0; i < K; i++) {
		vals[i] = replace_val(me, i);	/* each origin stays until the unlock */
		RMAWIN_TEST_TRY(4, rmawin_fetch_and_op(win, &vals[i], &got[i], RMAWIN_UINT64, 0, 0,
						       RMAWIN_REPLACE));
	}
	RMAWIN_TEST_TRY(5, rmawin_unlock_all(win));
	sh->ep_atomics[me] = delta(before, ep_stat("nic_atomics"));
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

/* ---- the other ops: a compare-and-swap loop from the origin --------------- */

#define KO	16	/* operations per rank on each location: NR * KO = 64 bits */

/* One location of rank 0's window per op; the result does not depend on the order. */
static const struct {
	const char *name;
	enum rmawin_op op;
	enum rmawin_type type;
	uint64_t initial;
} loop_slots[] = {
	{ "MAX int64", RMAWIN_MAX, RMAWIN_INT64, (uint64_t)-5000000000000LL },
	{ "MAX uint64", RMAWIN_MAX, RMAWIN_UINT64, 7 },
	{ "MIN int64", RMAWIN_MIN, RMAWIN_INT64, 5000000000000LL },
	{ "PROD uint64", RMAWIN_PROD, RMAWIN_UINT64, 1 },
	{ "BOR uint64", RMAWIN_BOR, RMAWIN_UINT64, 0 },
	{ "BAND uint64", RMAWIN_BAND, RMAWIN_UINT64, UINT64_MAX },
	{ "BXOR int64", RMAWIN_BXOR, RMAWIN_INT64, 0x5555 },
	{ "LXOR int64", RMAWIN_LXOR, RMAWIN_INT64, 0 },
	{ "LOR uint64", RMAWIN_LOR, RMAWIN_UINT64, 0 },
	{ "LAND int64", RMAWIN_LAND, RMAWIN_INT64, 9 },
	{ "SUM int64", RMAWIN_SUM, RMAWIN_INT64, (uint64_t)-3 },
};

#define NSLOTS	ARRAY_SIZE(loop_slots)

static uint64_t mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* What rank @r gives in its @i-th operation on slot @s */
static uint64_t loop_operand(unsigned int s, int r, int i)
{
	unsigned int k = r * KO + i;
	int64_t v = (int64_t)(mix(s * 1000 + k) % 2001) - 1000;

	switch (loop_slots[s].op) {
	case RMAWIN_MAX:
		if (loop_slots[s].type == RMAWIN_UINT64)	/* both halves of the range */
			return mix(k) >> (k % 2);
		/* fall through */
	case RMAWIN_MIN:
		return (uint64_t)(v * 1000000007LL);
	case RMAWIN_PROD:
		return 3;
	case RMAWIN_BOR:
		return 1ULL << k;
	case RMAWIN_BAND:
		return ~(1ULL << k);
	case RMAWIN_LXOR:
		return k != 0;		/* 63 toggles */
	case RMAWIN_LOR:
		return k == 37 ? 0x100000000ULL : 0;	/* one true value, above 32 bits */
	case RMAWIN_LAND:
		return k == 5 ? 0 : mix(k) | 1;		/* one false value */
	case RMAWIN_SUM:
		return (uint64_t)((int64_t)(r + 1) * (i + 1) * 1000000007LL * (i % 2 ? -1 : 1));
	default:
		return mix(k);
	}
}

/* target @op origin, in C: the reference */
static uint64_t loop_apply(unsigned int s, uint64_t t, uint64_t o)
{
	int sgn = loop_slots[s].type == RMAWIN_INT64;

	switch (loop_slots[s].op) {
	case RMAWIN_MAX:
		return (sgn ? (int64_t)o > (int64_t)t : o > t) ? o : t;
	case RMAWIN_MIN:
		return (sgn ? (int64_t)o < (int64_t)t : o < t) ? o : t;
	case RMAWIN_PROD:
		return t * o;
	case RMAWIN_BOR:
		return t | o;
	case RMAWIN_BAND:
		return t & o;
	case RMAWIN_BXOR:
		return t ^ o;
	case RMAWIN_LXOR:
		return !t != !o;
	case RMAWIN_LOR:
		return t || o;
	case RMAWIN_LAND:
		return t && o;
	case RMAWIN_SUM:
		return t + o;
	default:
		return t;
	}
}

/*
 * Every rank applies KO operands of each slot's op to rank 0's slot with
 * accumulate, all in one epoch with nothing waited for in between; the
 * last slot is MAX again through get_accumulate, whose fetched values
 * must each be a value the location held.
 */
static int loop_ops_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[NSLOTS + 1], origin[NSLOTS + 1][KO], got[KO];
	int me = rmawin_rank(ep), i;
	struct rmawin_win *win;
	unsigned int s;
	long before;

	(void)arg;
	for (s = 0; s < NSLOTS; s++)
		mem[s] = loop_slots[s].initial;
	mem[NSLOTS] = loop_slots[0].initial;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, RMAWIN_WIN_SAME_OP, &win));
	before = ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	for (i = 0; i < KO; i++) {
		for (s = 0; s < NSLOTS; s++) {
			origin[s][i] = loop_operand(s, me, i);
			RMAWIN_TEST_TRY(4, rmawin_accumulate(win, &origin[s][i], 1,
							     loop_slots[s].type, 0, s,
							     loop_slots[s].op));
		}
		origin[NSLOTS][i] = loop_operand(0, me, i) ^ 0x10;
		RMAWIN_TEST_TRY(5, rmawin_get_accumulate(win, &origin[NSLOTS][i], &got[i], 1,
							 RMAWIN_INT64, 0, NSLOTS, RMAWIN_MAX));
	}
	RMAWIN_TEST_TRY(6, rmawin_unlock_all(win));
	sh->ep_atomics[me] = delta(before, ep_stat("nic_atomics"));
	memcpy(&sh->got[me * KO], got, sizeof(got));
	RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(8, rmawin_sync(win));
		memcpy(sh->final, mem, sizeof(mem));
	}
	RMAWIN_TEST_TRY(9, rmawin_win_free(win));
	return 0;
}

/* get_accumulate MAX fetched @v: the initial value or an operand, never above the end */
static int loop_ga_ok(uint64_t v, uint64_t final)
{
	int r, i;

	if ((int64_t)v > (int64_t)final)
		return 0;
	if (v == loop_slots[0].initial)
		return 1;
	for (r = 0; r < NR; r++)
		for (i = 0; i < KO; i++)
			if (v == (loop_operand(0, r, i) ^ 0x10))
				return 1;
	return 0;
}

TEST_F_TIMEOUT(path, accumulate_other_ops_cas_loop, 90)
{
	uint64_t want, ga_max = loop_slots[0].initial;
	unsigned int s;
	long grew;
	int r, i;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, loop_ops_rank, NULL, 80);
	for (s = 0; s < NSLOTS; s++) {
		want = loop_slots[s].initial;
		for (r = 0; r < NR; r++)
			for (i = 0; i < KO; i++)
				want = loop_apply(s, want, loop_operand(s, r, i));
		EXPECT_EQ(want, sh->final[s]) TH_LOG("%s: %#llx, want %#llx", loop_slots[s].name,
						     (unsigned long long)sh->final[s],
						     (unsigned long long)want);
	}
	for (r = 0; r < NR; r++)
		for (i = 0; i < KO; i++)
			ga_max = loop_apply(0, ga_max, loop_operand(0, r, i) ^ 0x10);
	EXPECT_EQ(ga_max, sh->final[NSLOTS]);
	for (i = 0; i < NR * KO; i++) {
		EXPECT_TRUE(loop_ga_ok(sh->got[i], ga_max))
			TH_LOG("get_accumulate MAX fetched %lld, which the location never held",
			       (long long)sh->got[i]);
	}
	/* at least one compare-and-swap per operation */
	expect_ep_atomics(_metadata, NR, KO * (NSLOTS + 1));
	EXPECT_LE((long)(NR * KO * (NSLOTS + 1)), grew);
	expect_end(_metadata);
}

/* ---- accumulate and get_accumulate of 64 elements, all to all ------------- */

#define NE	64	/* elements per operation */

/* Region A: accumulate SUM of int64, both signs */
static int64_t acc_operand(int r, int i)
{
	return (int64_t)(r + 1) * (i + 1) * 1000003 * (i % 2 ? -1 : 1);
}

static uint64_t acc_initial(int i)
{
	return (uint64_t)(-(int64_t)i * 1000);
}

/* Region B: get_accumulate SUM of uint64, positive, wrapping for the first elements */
static uint64_t ga_operand(int r, int i)
{
	return (uint64_t)(r + 1) * (i + 1);
}

static uint64_t ga_initial(int i)
{
	return UINT64_MAX - 2 * i;
}

/* Region C: accumulate MAX of int64 (a compare-and-swap loop per element) */
static int64_t max_operand(int r, int i)
{
	return (int64_t)(mix(r * NE + i) % 2000001) - 1000000;
}

#define MAX_INITIAL	(-5000000LL)

/* Any rank's window once all @n ranks' operations are done, as it should be */
static void acc_expected(uint64_t *want, int n)
{
	int64_t m;
	int r, i;

	for (i = 0; i < NE; i++) {
		want[i] = acc_initial(i);
		want[NE + i] = ga_initial(i);
		m = MAX_INITIAL;
		for (r = 0; r < n; r++) {
			want[i] += (uint64_t)acc_operand(r, i);
			want[NE + i] += ga_operand(r, i);
			m = max_operand(r, i) > m ? max_operand(r, i) : m;
		}
		want[2 * NE + i] = (uint64_t)m;
	}
}

/*
 * Every rank sends each rank, itself included, an accumulate SUM of NE
 * int64s, a get_accumulate SUM of NE uint64s and an accumulate MAX of NE
 * int64s, in one fence epoch; each rank checks its own window after the
 * closing fence, and hands the previous values to the test.
 */
static int acc_many_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[3 * NE], want[3 * NE], a[NE], b[NE], c[NE], res[NR][NE];
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), t, i;
	struct rmawin_win *win;
	long before;

	(void)arg;
	for (i = 0; i < NE; i++) {
		mem[i] = acc_initial(i);
		mem[NE + i] = ga_initial(i);
		mem[2 * NE + i] = (uint64_t)MAX_INITIAL;
		a[i] = (uint64_t)acc_operand(me, i);
		b[i] = ga_operand(me, i);
		c[i] = (uint64_t)max_operand(me, i);
	}
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, RMAWIN_WIN_SAME_OP, &win));
	before = ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_fence(win, 0));
	for (t = 0; t < n; t++) {
		RMAWIN_TEST_TRY(3, rmawin_accumulate(win, a, NE, RMAWIN_INT64, t, 0, RMAWIN_SUM));
		RMAWIN_TEST_TRY(4, rmawin_get_accumulate(win, b, res[t], NE, RMAWIN_UINT64, t, NE,
							 RMAWIN_SUM));
		RMAWIN_TEST_TRY(5, rmawin_accumulate(win, c, NE, RMAWIN_INT64, t, 2 * NE,
						     RMAWIN_MAX));
	}
	RMAWIN_TEST_TRY(6, rmawin_fence(win, 0));
	sh->ep_atomics[me] = delta(before, ep_stat("nic_atomics"));
	for (t = 0; t < n; t++)
		memcpy(&sh->got[(t * NR + me) * NE], res[t], sizeof(res[t]));
	acc_expected(want, n);
	for (i = 0; i < 3 * NE; i++) {
		if (mem[i] != want[i]) {
			RMAWIN_TEST_MSG("element %d of region %c: %#llx, want %#llx", i % NE,
					'A' + i / NE, (unsigned long long)mem[i],
					(unsigned long long)want[i]);
			return 7;
		}
	}
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(path, accumulate_64_elements_all_to_all, 90)
{
	struct fetched ops[NR];
	uint64_t want[3 * NE];
	char what[64];
	long grew;
	int t, r, i, ok;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, acc_many_rank, NULL, 80);
	acc_expected(want, NR);
	/* each element of get_accumulate's results: the NR previous values form a chain */
	for (t = 0, ok = 1; t < NR && ok; t++) {
		for (i = 0; i < NE && ok; i++) {
			for (r = 0; r < NR; r++)
				ops[r] = (struct fetched){ .got = sh->got[(t * NR + r) * NE + i],
							   .add = (int64_t)ga_operand(r, i) };
			snprintf(what, sizeof(what), "get_accumulate to rank %d, element %d", t, i);
			ok = expect_chain(_metadata, what, ops, NR, ga_initial(i), want[NE + i]);
		}
	}
	/* one device atomic per element at least: NR targets x 3 x NE */
	expect_ep_atomics(_metadata, NR, 3 * NR * NE);
	EXPECT_LE(3 * NR * NR * NE, grew);
	expect_end(_metadata);
}

/* ---- a group of one rank ------------------------------------------------- */

/*
 * Alone in its group a rank's own operations are the only ones on its
 * window, and the kernel keeps its CPU path (design.rst): fetch_and_op SUM
 * and a MAX are exact, the alignment rule holds all the same.
 */
static int single_rank(struct rmawin_ep *ep, void *arg)
{
	static uint64_t mem[4] = { 5 }, one = 1, big = 77, got[K], r;
	struct rmawin_win *win;
	int i, bad = 0;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 1, RMAWIN_WIN_SAME_OP, &win));
	RMAWIN_TEST_TRY(2, rmawin_lock_all(win));
	for (i = 0; i < K; i++)
		RMAWIN_TEST_TRY(3, rmawin_fetch_and_op(win, &one, &got[i], RMAWIN_UINT64, 0, 0,
						       RMAWIN_SUM));
	RMAWIN_TEST_TRY(4, rmawin_accumulate(win, &big, 1, RMAWIN_INT64, 0, 8, RMAWIN_MAX));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_fetch_and_op(win, &one, &r, RMAWIN_INT64, 0, 4,
						      RMAWIN_SUM));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_compare_and_swap(win, &one, &big, &r, RMAWIN_UINT64,
							  0, 12));
	RMAWIN_TEST_TRY(5, rmawin_unlock_all(win));
	RMAWIN_TEST_TRY(6, rmawin_sync(win));
	memcpy(sh->got, got, sizeof(got));
	memcpy(sh->final, mem, sizeof(mem));
	RMAWIN_TEST_TRY(7, rmawin_win_free(win));
	return bad ? 8 : 0;
}

TEST_F(path, single_rank_group_cpu_path)
{
	struct fetched ops[K];
	long grew;
	int i;

	shared_setup(_metadata);
	grew = run_counted(_metadata, 1, single_rank, NULL, 25);
	for (i = 0; i < K; i++)
		ops[i] = (struct fetched){ .got = sh->got[i], .add = 1 };
	expect_chain(_metadata, "fetch_and_op SUM, one rank", ops, K, 5, sh->final[0]);
	EXPECT_EQ(5 + K, sh->final[0]);
	EXPECT_EQ(77, sh->final[1]);
	EXPECT_EQ(0, sh->final[2]);
	EXPECT_EQ(0, grew) TH_LOG("nic_atomics grew by %ld in a group of one", grew);
	expect_end(_metadata);
}

/* ---- other types on a same_op window keep the target-side path ----------- */

#define KX	10	/* rounds of the int32 and double accumulates */

/* Where things are in rank 0's window (disp_unit 4) of the mixing tests */
#define MIX_I64		0	/* int64 counter, bytes 0-7 */
#define MIX_I32		3	/* int32 counter, bytes 12-15: not 8-byte aligned */
#define MIX_ARR		4	/* int32[4], bytes 16-31 */
#define MIX_DBL		8	/* double, bytes 32-39 */

/*
 * Under a shared lock on rank 0, every rank fetch_and_ops +1 onto an int32
 * counter K times, and accumulates int32s and a double; with *@arg, it
 * also fetch_and_ops +1 onto an int64 counter beside them, which takes the
 * device's atomics while the rest stays with the target's kernel.
 */
static int mix_rank(struct rmawin_ep *ep, void *arg)
{
	int with_int64 = *(const int *)arg, me = rmawin_rank(ep), i, j;
	uint64_t mem[8] = { 0 }, got64[K];
	int32_t got32[K], one32 = 1, arr[4];
	int64_t one64 = 1;
	double dv = 0.5 * (me + 1);
	struct rmawin_win *win;
	long before;

	for (j = 0; j < 4; j++)
		arr[j] = (me + 1) * (j + 1);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 4, RMAWIN_WIN_SAME_OP, &win));
	before = ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
	for (i = 0; i < K; i++) {
		if (with_int64)
			RMAWIN_TEST_TRY(4, rmawin_fetch_and_op(win, &one64, &got64[i], RMAWIN_INT64,
							       0, MIX_I64, RMAWIN_SUM));
		RMAWIN_TEST_TRY(5, rmawin_fetch_and_op(win, &one32, &got32[i], RMAWIN_INT32, 0,
						       MIX_I32, RMAWIN_SUM));
		if (i >= KX)
			continue;
		RMAWIN_TEST_TRY(6, rmawin_accumulate(win, arr, 4, RMAWIN_INT32, 0, MIX_ARR,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(7, rmawin_accumulate(win, &dv, 1, RMAWIN_DOUBLE, 0, MIX_DBL,
						     RMAWIN_SUM));
	}
	RMAWIN_TEST_TRY(8, rmawin_unlock(win, 0));
	sh->ep_atomics[me] = delta(before, ep_stat("nic_atomics"));
	for (i = 0; i < K; i++) {
		sh->got[me * K + i] = (uint32_t)got32[i];
		sh->got[(NR + me) * K + i] = with_int64 ? got64[i] : 0;
	}
	RMAWIN_TEST_TRY(9, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(10, rmawin_sync(win));
		memcpy(sh->final, mem, sizeof(mem));
	}
	RMAWIN_TEST_TRY(11, rmawin_win_free(win));
	return 0;
}

/* The int32 and double results of mix_rank(), the same with or without the int64 counter */
static void mix_check(struct __test_metadata *_metadata, int with_int64)
{
	const unsigned char *w = (const unsigned char *)sh->final;
	struct fetched ops[NR * K];
	int32_t c32, arr[4];
	int64_t c64;
	double d;
	int i, j;

	memcpy(&c64, w + 4 * MIX_I64, 8);
	memcpy(&c32, w + 4 * MIX_I32, 4);
	memcpy(arr, w + 4 * MIX_ARR, sizeof(arr));
	memcpy(&d, w + 4 * MIX_DBL, 8);
	EXPECT_EQ(NR * K, c32);
	for (i = 0; i < NR * K; i++)
		ops[i] = (struct fetched){ .got = sh->got[i], .add = 1 };
	expect_chain(_metadata, "int32 fetch_and_op", ops, NR * K, 0, (uint32_t)c32);
	for (j = 0; j < 4; j++) {
		/* sum over ranks r of (r + 1) * (j + 1), KX times */
		EXPECT_EQ(KX * NR * (NR + 1) / 2 * (j + 1), arr[j]) TH_LOG("int32 element %d", j);
	}
	EXPECT_EQ(KX * 0.5 * NR * (NR + 1) / 2, d);
	if (!with_int64) {
		EXPECT_EQ(0, c64) TH_LOG("bytes 0-7 were written: %#llx", (unsigned long long)c64);
		return;
	}
	EXPECT_EQ(NR * K, c64);
	for (i = 0; i < NR * K; i++)
		ops[i] = (struct fetched){ .got = sh->got[NR * K + i], .add = 1 };
	expect_chain(_metadata, "int64 fetch_and_op", ops, NR * K, 0, (uint64_t)c64);
}

TEST_F_TIMEOUT(path, same_op_int32_and_double_stay_target_side, 60)
{
	int with_int64 = 0, r;
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, mix_rank, &with_int64, 50);
	mix_check(_metadata, 0);
	EXPECT_EQ(0, grew) TH_LOG("nic_atomics grew by %ld with no 8-byte integer operation",
				  grew);
	for (r = 0; r < NR; r++) {
		EXPECT_EQ(0, sh->ep_atomics[r]) TH_LOG("rank %d's endpoint: %ld NIC atomics", r,
						       sh->ep_atomics[r]);
	}
	expect_end(_metadata);
}

TEST_F_TIMEOUT(path, same_op_int64_beside_int32_and_double, 60)
{
	int with_int64 = 1;
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, mix_rank, &with_int64, 50);
	mix_check(_metadata, 1);
	expect_ep_atomics(_metadata, NR, K);
	EXPECT_LE(NR * K, grew);
	expect_end(_metadata);
}

/* ---- a window without the flag never takes the device's atomics ---------- */

/*
 * The same 8-byte integer operations on a window created without
 * RMAWIN_WIN_SAME_OP: fetch_and_op SUM K times, one compare_and_swap each
 * (one of them wins), an accumulate MAX of two uint64s.
 */
static int no_flag_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), i;
	uint64_t mem[4] = { 0 }, one = 1, got[K], mine = me + 1, zero = 0, old = 0;
	uint64_t maxv[2] = { me * 10, (1ULL << 63) | me };
	struct rmawin_win *win;
	long before;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	before = ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	for (i = 0; i < K; i++)
		RMAWIN_TEST_TRY(4, rmawin_fetch_and_op(win, &one, &got[i], RMAWIN_INT64, 0, 0,
						       RMAWIN_SUM));
	RMAWIN_TEST_TRY(5, rmawin_compare_and_swap(win, &mine, &zero, &old, RMAWIN_UINT64, 0, 1));
	RMAWIN_TEST_TRY(6, rmawin_accumulate(win, maxv, 2, RMAWIN_UINT64, 0, 2, RMAWIN_MAX));
	RMAWIN_TEST_TRY(7, rmawin_unlock_all(win));
	sh->ep_atomics[me] = delta(before, ep_stat("nic_atomics"));
	memcpy(&sh->got[me * K], got, sizeof(got));
	sh->cas_old[me] = old;
	RMAWIN_TEST_TRY(8, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(9, rmawin_sync(win));
		memcpy(sh->final, mem, sizeof(mem));
	}
	RMAWIN_TEST_TRY(10, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(path, no_flag_window_takes_no_nic_atomics, 60)
{
	struct fetched ops[NR * K];
	int r, i, winners = 0;
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, no_flag_rank, NULL, 50);
	EXPECT_EQ(0, grew) TH_LOG("nic_atomics grew by %ld on a window without the flag", grew);
	for (i = 0; i < NR * K; i++)
		ops[i] = (struct fetched){ .got = sh->got[i], .add = 1 };
	expect_chain(_metadata, "fetch_and_op SUM", ops, NR * K, 0, sh->final[0]);
	for (r = 0; r < NR; r++) {
		EXPECT_EQ(0, sh->ep_atomics[r]) TH_LOG("rank %d's endpoint: %ld NIC atomics", r,
						       sh->ep_atomics[r]);
		if (!sh->cas_old[r]) {
			winners++;
			EXPECT_EQ(r + 1, sh->final[1]);
		} else {
			EXPECT_EQ(sh->final[1], sh->cas_old[r]);
		}
	}
	EXPECT_EQ(1, winners);
	EXPECT_EQ((NR - 1) * 10, sh->final[2]);
	EXPECT_EQ((1ULL << 63) | (NR - 1), sh->final[3]);
	expect_end(_metadata);
}

TEST_HARNESS_MAIN
