// SPDX-License-Identifier: GPL-2.0
/*
 * The accumulate family: atomicity of concurrent fetch_and_op from every
 * rank, accumulate of doubles all to all, get_accumulate's previous
 * values, compare_and_swap, and every op x type pair against a reference
 * computed here with the same C expressions; invalid pairs are EINVAL.
 * The fetch_and_op messages and their replies are handled in the receive
 * completion's softirq context (the module's ctrl_msgs_softirq counter),
 * not in the receive work (Documentation/design.rst), and a target asleep
 * meanwhile is not woken for each reply its kernel sends.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <rmawin.h>

#include "rmawin_test.h"
#include "../../kmod/wire.h"	/* rmawin_bulk_chunk() */

/* Every test on both of the library's paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

#define K	40

/* Every rank adds 1 to rank 0's counter K times, fetching the old value. */
static int fetch_add_rank(struct rmawin_ep *ep, void *arg)
{
	int64_t counter = 0, one = 1, fetched[K];
	int64_t *seen = arg;	/* shared: nranks * K fetched values */
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), i;
	struct rmawin_win *win;

	if (rmawin_win_create(ep, &counter, me ? 0 : sizeof(counter), 8, 0, &win))
		return 1;
	if (rmawin_fence(win, 0))
		return 2;
	for (i = 0; i < K; i++)
		if (rmawin_fetch_and_op(win, &one, &fetched[i], RMAWIN_INT64, 0, 0, RMAWIN_SUM))
			return 3;
	if (rmawin_fence(win, 0))
		return 4;
	memcpy(&seen[me * K], fetched, sizeof(fetched));
	if (me == 0 && counter != (int64_t)n * K)
		return 5;
	return rmawin_win_free(win) ? 6 : 0;
}

static void fetch_add_case(struct __test_metadata *_metadata, int n, int deadline_s)
{
	int64_t *seen = mmap(NULL, 16 * K * 8, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *hit = calloc(n * K, 1);
	long softirq = rmawin_stat("ctrl_msgs_softirq");
	int i;

	ASSERT_NE(MAP_FAILED, seen);
	ASSERT_LE(0, softirq) TH_LOG("no counter ctrl_msgs_softirq");
	ASSERT_EQ(n, rmawin_test_run_eps(_metadata, n, fetch_add_rank, seen, deadline_s));
	/*
	 * Each remote fetch_and_op is a message to rank 0 and a reply; once
	 * the window exists nothing waits for the receive work, so at least
	 * one of the two is handled in softirq context, in practice both.
	 */
	softirq = rmawin_stat("ctrl_msgs_softirq") - softirq;
	EXPECT_LE((long)(n - 1) * K, softirq);
	/* atomic: every value 0 .. n*K-1 was fetched exactly once */
	for (i = 0; i < n * K; i++) {
		ASSERT_LE(0, seen[i]);
		ASSERT_GT(n * K, seen[i]);
		ASSERT_EQ(0, hit[seen[i]]) TH_LOG("value %ld fetched twice", (long)seen[i]);
		hit[seen[i]] = 1;
	}
	free(hit);
	munmap(seen, 16 * K * 8);
	EXPECT_EQ(0, rmawin_stat("reqs"));
	EXPECT_EQ(0, rmawin_stat("windows"));
}

TEST_F(path, fetch_and_op_sum_atomic_2_ranks) { fetch_add_case(_metadata, 2, 25); }
TEST_F(path, fetch_and_op_sum_atomic_4_ranks) { fetch_add_case(_metadata, 4, 25); }

TEST_F_TIMEOUT(path, fetch_and_op_sum_atomic_8_ranks, 120)
{
	fetch_add_case(_metadata, 8, 110);
}

/* Every rank adds (rank + 1) * (i + 0.5) to element i of every rank's window. */
static int acc_double_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), t, i;
	double win_mem[100] = { 0 }, mine[100], expect;
	struct rmawin_win *win;

	(void)arg;
	for (i = 0; i < 100; i++)
		mine[i] = (me + 1) * (i + 0.5);
	if (rmawin_win_create(ep, win_mem, sizeof(win_mem), sizeof(double), 0, &win) ||
	    rmawin_fence(win, 0))
		return 1;
	for (t = 0; t < n; t++)
		if (rmawin_accumulate(win, mine, 100, RMAWIN_DOUBLE, t, 0, RMAWIN_SUM))
			return 2;
	if (rmawin_fence(win, 0))
		return 3;
	for (i = 0; i < 100; i++) {
		/* sum over ranks r of (r + 1) * (i + 0.5): exact in binary */
		expect = (double)n * (n + 1) / 2 * (i + 0.5);
		if (win_mem[i] != expect)
			return 4;
	}
	return rmawin_win_free(win) ? 5 : 0;
}

TEST_F(path, accumulate_double_sum_all_to_all)
{
	EXPECT_EQ(4, rmawin_test_run_eps(_metadata, 4, acc_double_rank, NULL, 25));
	EXPECT_EQ(0, rmawin_stat("reqs"));
}

/* ---- a large accumulate: answered in runs of fragments ---- */

#define BIG_N		8229	/* int64s: 147 fragments, 2 chunks of 64 KiB (the last short) */
#define FRAG_BYTES	448	/* kmod's RMAWIN_ACC_FRAG */
#define ANSWER_EVERY	16	/* kmod's RMAWIN_ACC_ANSWER_EVERY */
#define BULK_MIN	"/sys/module/rmawin/parameters/acc_bulk_min"

struct big_acc {
	long msgs[2];		/* rank 0's control messages in each phase */
};

static int64_t big_value(int rank, int i)
{
	return (int64_t)i * 3 + (int64_t)rank * 1000003;
}

/*
 * One phase: every rank but 0 takes rank 0's lock (shared), makes sure it
 * has it, accumulates @count int64s there, and lets go; rank 0 counts the
 * control messages it sent meanwhile (its barrier's, the grants, the
 * replies).  The two phases differ only in the accumulate's length.
 */
static int big_phase(struct rmawin_ep *ep, struct rmawin_win *win, const int64_t *mine,
		     int count, long *msgs)
{
	int me = rmawin_rank(ep);
	long before = rmawin_test_ep_stat("ctrl_msgs");

	RMAWIN_TEST_TRY(1, rmawin_barrier(ep));
	if (me) {
		RMAWIN_TEST_TRY(2, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
		/* no lazy lock: the lock is had before the accumulate goes */
		RMAWIN_TEST_TRY(3, rmawin_flush(win, 0));
		RMAWIN_TEST_TRY(4, rmawin_accumulate(win, mine, count, RMAWIN_INT64, 0, 0,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(5, rmawin_unlock(win, 0));
	}
	RMAWIN_TEST_TRY(6, rmawin_barrier(ep));
	if (!me)
		*msgs = before < 0 ? -1 : rmawin_test_ep_stat("ctrl_msgs") - before;
	/* nobody asks rank 0 for anything more before it counted */
	RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	return 0;
}

static int big_acc_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), i, r;
	int64_t *mem = calloc(BIG_N, 8), *mine = calloc(BIG_N, 8), *old = calloc(BIG_N, 8);
	int64_t *got = calloc(BIG_N, 8);
	struct big_acc *sh = arg;
	struct rmawin_win *win;
	int64_t want;

	if (!mem || !mine || !old || !got)
		return 1;
	for (i = 0; i < BIG_N; i++)
		mine[i] = big_value(me, i);
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem, me ? 0 : BIG_N * 8, 8, 0, &win));
	RMAWIN_TEST_TRY(3, big_phase(ep, win, mine, 1, &sh->msgs[0]));
	RMAWIN_TEST_TRY(4, big_phase(ep, win, mine, BIG_N, &sh->msgs[1]));
	/* get_accumulate: NO_OP reads it all, SUM adds this rank's again */
	if (me == n - 1) {
		RMAWIN_TEST_TRY(5, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
		RMAWIN_TEST_TRY(6, rmawin_get_accumulate(win, NULL, old, BIG_N, RMAWIN_INT64, 0, 0,
							 RMAWIN_NO_OP));
		RMAWIN_TEST_TRY(7, rmawin_flush(win, 0));
		RMAWIN_TEST_TRY(8, rmawin_get_accumulate(win, mine, got, BIG_N, RMAWIN_INT64, 0, 0,
							 RMAWIN_SUM));
		RMAWIN_TEST_TRY(9, rmawin_unlock(win, 0));
	}
	RMAWIN_TEST_TRY(10, rmawin_barrier(ep));
	for (i = 0; i < BIG_N; i++) {
		for (want = 0, r = 1; r < n; r++)
			want += big_value(r, i) * (i ? 1 : 2);
		/* rank n - 1 read @want twice; rank 0 holds its values once more */
		if ((me == 0 && mem[i] != want + big_value(n - 1, i)) ||
		    (me == n - 1 && (old[i] != want || got[i] != want))) {
			RMAWIN_TEST_MSG("rank %d: element %d %lld %lld, want %lld", me, i,
					(long long)(me ? old[i] : mem[i]),
					(long long)(me ? got[i] : 0), (long long)want);
			return 11;
		}
	}
	RMAWIN_TEST_TRY(12, rmawin_win_free(win));
	free(mem);
	free(mine);
	free(old);
	free(got);
	return 0;
}

/*
 * @bulk: through the target's inbox (the module's default for 2 KiB and
 * more), else with the inbox turned off (acc_bulk_min 0): fragments.
 */
static void big_acc_case(struct __test_metadata *_metadata, int n, bool bulk)
{
	struct big_acc *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int frags = (BIG_N * 8 + FRAG_BYTES - 1) / FRAG_BYTES;
	long chunk = rmawin_bulk_chunk(n);
	long replies = bulk ? (BIG_N * 8 + chunk - 1) / chunk :
			      (frags + ANSWER_EVERY - 1) / ANSWER_EVERY;
	long was = rmawin_test_read_long(BULK_MIN);

	ASSERT_NE(MAP_FAILED, sh);
	ASSERT_LT(0, was) TH_LOG("no module parameter acc_bulk_min, or it is 0");
	ASSERT_EQ(0, rmawin_test_write_long(BULK_MIN, bulk ? was : 0));
	EXPECT_EQ(n, rmawin_test_run_eps(_metadata, n, big_acc_rank, sh,
					 n > 17 ? 540 : n > 9 ? 360 : n > 4 ? 200 : 60));
	ASSERT_EQ(0, rmawin_test_write_long(BULK_MIN, was));
	ASSERT_LE(0, sh->msgs[0]) TH_LOG("no counter ctrl_msgs");
	/*
	 * The phases differ by one accumulate from each other rank: one
	 * fragment (answered) against 65 832 bytes: 2 chunks through the
	 * inbox (64 KiB in groups this small), each answered, or 147
	 * fragments answered in runs of 16 (10 replies, not 147).  The data
	 * is checked by the ranks.
	 */
	EXPECT_EQ((n - 1) * (replies - 1), sh->msgs[1] - sh->msgs[0])
		TH_LOG("rank 0 sent %ld and %ld control messages", sh->msgs[0], sh->msgs[1]);
	EXPECT_EQ(0, rmawin_stat("reqs"));
	munmap(sh, sizeof(*sh));
}

TEST_F(path, large_accumulate_through_the_inbox_2_ranks) { big_acc_case(_metadata, 2, true); }
TEST_F(path, large_accumulate_through_the_inbox_4_ranks) { big_acc_case(_metadata, 4, true); }
/* 9 ranks: 32 KiB chunks (rmawin_bulk_chunk()), 3 for the 65 832 bytes */
TEST_F_TIMEOUT(path, large_accumulate_through_the_inbox_9_ranks, 240)
{
	ASSERT_EQ(32768, rmawin_bulk_chunk(9));
	big_acc_case(_metadata, 9, true);
}
/*
 * 17 ranks: 16 KiB chunks, 5 for the 65 832 bytes.  Once, on the default
 * path: the chunk is the kernel's arithmetic, which both paths share, and
 * a group this large is the suite's slowest to set up.
 */
FIXTURE(large_groups) {};
FIXTURE_SETUP(large_groups) {}
FIXTURE_TEARDOWN(large_groups) {}
TEST_F_TIMEOUT(large_groups, large_accumulate_through_the_inbox_17_ranks, 400)
{
	ASSERT_EQ(16384, rmawin_bulk_chunk(17));
	big_acc_case(_metadata, 17, true);
}
/* 33 ranks: 8 KiB chunks, the smallest, 9 for the 65 832 bytes */
TEST_F_TIMEOUT(large_groups, large_accumulate_through_the_inbox_33_ranks, 600)
{
	ASSERT_EQ(8192, rmawin_bulk_chunk(33));
	big_acc_case(_metadata, 33, true);
}
TEST_F(path, large_accumulate_answered_in_runs_2_ranks) { big_acc_case(_metadata, 2, false); }
TEST_F(path, large_accumulate_answered_in_runs_4_ranks) { big_acc_case(_metadata, 4, false); }

/* get_accumulate REPLACE as a swap; NO_OP as an atomic read; CAS. */
static int fetch_ops_rank(struct rmawin_ep *ep, void *arg)
{
	int32_t win_mem[8] = { 10, 20, 30, 40, 50, 60, 70, 80 };
	int32_t origin[4] = { 1, 2, 3, 4 }, result[4] = { 0 }, cmp, val, old;
	int me = rmawin_rank(ep);
	struct rmawin_win *win;

	(void)arg;
	if (rmawin_win_create(ep, win_mem, sizeof(win_mem), 4, 0, &win) || rmawin_fence(win, 0))
		return 1;
	if (me == 1) {
		if (rmawin_get_accumulate(win, origin, result, 4, RMAWIN_INT32, 0, 2,
					  RMAWIN_REPLACE))
			return 2;
	}
	if (rmawin_fence(win, 0))
		return 3;
	if (me == 1 && (result[0] != 30 || result[3] != 60))
		return 4;
	if (me == 0 && (win_mem[2] != 1 || win_mem[5] != 4 || win_mem[6] != 70))
		return 5;
	if (me == 1) {
		/* NO_OP: read atomically without changing */
		if (rmawin_get_accumulate(win, NULL, result, 2, RMAWIN_INT32, 0, 0, RMAWIN_NO_OP))
			return 6;
		cmp = 10, val = 99;	/* matches: swapped */
		if (rmawin_compare_and_swap(win, &val, &cmp, &old, RMAWIN_INT32, 0, 0))
			return 7;
	}
	if (rmawin_fence(win, 0))
		return 8;
	if (me == 1 && (result[0] != 10 || result[1] != 20 || old != 10))
		return 9;
	if (me == 1) {
		cmp = 10, val = 5;	/* no longer matches: unchanged */
		if (rmawin_compare_and_swap(win, &val, &cmp, &old, RMAWIN_INT32, 0, 0))
			return 10;
	}
	if (rmawin_fence(win, 0))
		return 11;
	if (me == 1 && old != 99)
		return 12;
	if (me == 0 && win_mem[0] != 99)
		return 13;
	return rmawin_win_free(win) ? 14 : 0;
}

TEST_F(path, get_accumulate_and_cas)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, fetch_ops_rank, NULL, 25));
}

/*
 * A target asleep in a fence while its kernel answers an origin's
 * operations is not woken for each answer: the kernel's replies are sent
 * for it, and a send completion wakes the process's sleepers only when one
 * waits for a send buffer.  Counted as the sleeping thread's voluntary
 * context switches (each wake-up that finds its fence not done puts it
 * back to sleep: one switch), never as a time.
 */
#define NSLEEP	1000

static int sleeper_rank(struct rmawin_ep *ep, void *arg)
{
	int64_t counter = 0, one = 1, *fetched = arg;
	int me = rmawin_rank(ep), i;
	struct rmawin_win *win;
	struct rusage r0, r1;
	long switches;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, &counter, sizeof(counter), 8, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_fence(win, 0));
	if (me == 0)
		for (i = 0; i < NSLEEP; i++)
			RMAWIN_TEST_TRY(3, rmawin_fetch_and_op(win, &one, &fetched[i],
							       RMAWIN_INT64, 1, 0, RMAWIN_SUM));
	getrusage(RUSAGE_THREAD, &r0);
	RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));
	getrusage(RUSAGE_THREAD, &r1);
	switches = r1.ru_nvcsw - r0.ru_nvcsw;
	if (me == 1) {
		RMAWIN_TEST_MSG("%d fetch_and_ops answered while asleep in a fence: %ld voluntary "
				"context switches", NSLEEP, switches);
		if (counter != NSLEEP)
			return 5;
		if (switches >= NSLEEP / 10)
			return 6;
	}
	for (i = 0; me == 0 && i < NSLEEP; i++)
		if (fetched[i] != i)
			return 7;
	return rmawin_win_free(win) ? 8 : 0;
}

TEST_F_TIMEOUT(path, target_asleep_in_a_fence_is_not_woken_by_each_answer, 120)
{
	int64_t *fetched = rmawin_test_shared(NSLEEP * sizeof(*fetched));

	ASSERT_NE(NULL, fetched);
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, sleeper_rank, fetched, 100));
}

/* ---- every op x type against a local reference ---- */

#define NOPS	12
#define NTYPES	10
static const size_t type_size[NTYPES] = { 1, 1, 2, 2, 4, 4, 8, 8, 4, 8 };

static int valid_pair(int op, int type)
{
	return type < RMAWIN_FLOAT || op <= RMAWIN_MAX || op >= RMAWIN_REPLACE;
}

#define REF(T)								\
	do {								\
		T *tt = (T *)t, *oo = (T *)o;				\
		for (i = 0; i < n; i++) {				\
			switch (op) {					\
			case RMAWIN_SUM: tt[i] = (T)(tt[i] + oo[i]); break; \
			case RMAWIN_PROD: tt[i] = (T)(tt[i] * oo[i]); break; \
			case RMAWIN_MIN: tt[i] = oo[i] < tt[i] ? oo[i] : tt[i]; break; \
			case RMAWIN_MAX: tt[i] = oo[i] > tt[i] ? oo[i] : tt[i]; break; \
			case RMAWIN_REPLACE: tt[i] = oo[i]; break;	\
			default: break;					\
			}						\
		}							\
	} while (0)

#define REF_INT(T)							\
	do {								\
		T *tt = (T *)t, *oo = (T *)o;				\
		for (i = 0; i < n; i++) {				\
			switch (op) {					\
			case RMAWIN_BAND: tt[i] &= oo[i]; break;	\
			case RMAWIN_BOR: tt[i] |= oo[i]; break;		\
			case RMAWIN_BXOR: tt[i] ^= oo[i]; break;	\
			case RMAWIN_LAND: tt[i] = tt[i] && oo[i]; break; \
			case RMAWIN_LOR: tt[i] = tt[i] || oo[i]; break;	\
			case RMAWIN_LXOR: tt[i] = !tt[i] != !oo[i]; break; \
			default: break;					\
			}						\
		}							\
		REF(T);							\
	} while (0)

static void reference(int op, int type, void *t, const void *o, int n)
{
	int i;

	switch (type) {
	case RMAWIN_INT8: REF_INT(int8_t); break;
	case RMAWIN_UINT8: REF_INT(uint8_t); break;
	case RMAWIN_INT16: REF_INT(int16_t); break;
	case RMAWIN_UINT16: REF_INT(uint16_t); break;
	case RMAWIN_INT32: REF_INT(int32_t); break;
	case RMAWIN_UINT32: REF_INT(uint32_t); break;
	case RMAWIN_INT64: REF_INT(int64_t); break;
	case RMAWIN_UINT64: REF_INT(uint64_t); break;
	case RMAWIN_FLOAT: REF(float); break;
	case RMAWIN_DOUBLE: REF(double); break;
	}
}

/* Bytes that make interesting values of every type: signs, zeros, NaN-free floats. */
static void init_vals(unsigned char *p, size_t bytes, int seed, int type)
{
	size_t i;

	for (i = 0; i < bytes; i++)
		p[i] = (unsigned char)((i * 37 + seed * 101) ^ (i % 3 ? 0x80 : 0));
	if (type == RMAWIN_FLOAT)
		for (i = 0; i < bytes / 4; i++)
			((float *)p)[i] = (float)(((int)i % 7) - 3) * 1.25f + seed;
	if (type == RMAWIN_DOUBLE)
		for (i = 0; i < bytes / 8; i++)
			((double *)p)[i] = (double)(((int)i % 5) - 2) * 2.5 + seed;
	if (type < RMAWIN_FLOAT)
		for (i = 0; i < bytes; i += 5)
			p[i] = 0;	/* zeros for the logical ops */
}

#define NELEM	16

/* Rank 1 applies every valid pair to its own slot of rank 0's window. */
static int pairs_rank(struct rmawin_ep *ep, void *arg)
{
	/* one slot per pair, then one for get_accumulate */
	static unsigned char win_mem[(NOPS * NTYPES + 1) * NELEM * 8];
	/* an origin per operation: each may be read until the fence (MPI's rule) */
	static unsigned char origins[NOPS * NTYPES][NELEM * 8];
	const size_t ga_slot = NOPS * NTYPES * NELEM * 8;
	unsigned char o[NELEM * 8], t0[NELEM * 8], res[NELEM * 8];
	int me = rmawin_rank(ep), op, type, bad = 0;
	struct rmawin_win *win;
	size_t slot, bytes;

	(void)arg;
	for (op = 0; op < NOPS; op++)
		for (type = 0; type < NTYPES; type++) {
			slot = (op * NTYPES + type) * NELEM * 8;
			init_vals(win_mem + slot, NELEM * type_size[type], 1, type);
		}
	init_vals(win_mem + ga_slot, NELEM * 8, 1, RMAWIN_DOUBLE);
	if (rmawin_win_create(ep, win_mem, sizeof(win_mem), 1, 0, &win) || rmawin_fence(win, 0))
		return 1;
	for (op = 0; me == 1 && op < NOPS; op++)
		for (type = 0; type < NTYPES; type++) {
			bytes = NELEM * type_size[type];
			slot = (op * NTYPES + type) * NELEM * 8;
			init_vals(origins[op * NTYPES + type], bytes, 2, type);
			int ret = rmawin_accumulate(win, origins[op * NTYPES + type], NELEM, type,
						    0, slot, op);

			if (valid_pair(op, type) ? ret != 0 : ret != -EINVAL) {
				fprintf(stderr, "op %d type %d: %d\n", op, type, ret);
				bad = 1;
			}
		}
	if (rmawin_fence(win, 0))
		return 2;
	for (op = 0; me == 0 && op < NOPS; op++)
		for (type = 0; type < NTYPES; type++) {
			bytes = NELEM * type_size[type];
			slot = (op * NTYPES + type) * NELEM * 8;
			init_vals(t0, bytes, 1, type);
			init_vals(o, bytes, 2, type);
			if (valid_pair(op, type))
				reference(op, type, t0, o, NELEM);
			if (memcmp(t0, win_mem + slot, bytes)) {
				fprintf(stderr, "op %d type %d: result differs\n", op, type);
				bad = 1;
			}
		}
	/* the same through get_accumulate: the previous values come back */
	if (me == 1) {
		init_vals(o, 8 * NELEM, 3, RMAWIN_DOUBLE);
		if (rmawin_get_accumulate(win, o, res, NELEM, RMAWIN_DOUBLE, 0, ga_slot, RMAWIN_MAX))
			bad = 1;
	}
	if (rmawin_fence(win, 0))
		return 3;
	if (me == 1) {
		init_vals(t0, 8 * NELEM, 1, RMAWIN_DOUBLE);
		if (memcmp(t0, res, 8 * NELEM)) {
			fprintf(stderr, "get_accumulate: previous values differ\n");
			bad = 1;
		}
	}
	if (me == 0) {
		init_vals(t0, 8 * NELEM, 1, RMAWIN_DOUBLE);
		init_vals(o, 8 * NELEM, 3, RMAWIN_DOUBLE);
		reference(RMAWIN_MAX, RMAWIN_DOUBLE, t0, o, NELEM);
		if (memcmp(t0, win_mem + ga_slot, 8 * NELEM)) {
			fprintf(stderr, "get_accumulate: new values differ\n");
			bad = 1;
		}
	}
	if (rmawin_win_free(win))
		return 4;
	return bad ? 5 : 0;
}

TEST_F(path, every_op_and_type_against_reference)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, pairs_rank, NULL, 25));
	EXPECT_EQ(0, rmawin_stat("reqs"));
}

/*
 * Integer pairs again, at lengths that are not whole words and window
 * offsets off a word, of bytes that carry out of every lane: 3 elements,
 * a few past two fragments, and a few past acc_bulk_min (the inbox).  SUM
 * goes by get_accumulate, whose previous values come back too.
 */
#define UNEVEN_LENS	3
#define UNEVEN_SLOT	2560	/* bytes: the longest accumulate, and an element's offset */

static size_t uneven_count(int len, int type)
{
	static const size_t bytes[UNEVEN_LENS] = { 0, 2 * 448, 2048 };

	return bytes[len] / type_size[type] + 3;
}

static size_t uneven_slot(int op, int type, int len)
{
	/* one element past the slot's start: off a word for every type narrower than one */
	return ((op * RMAWIN_FLOAT + type) * UNEVEN_LENS + len) * UNEVEN_SLOT + type_size[type];
}

/* Bytes of every value, from @seed. */
static void uneven_vals(unsigned char *p, size_t bytes, uint32_t seed)
{
	size_t i;

	for (i = 0; i < bytes; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 17;
		seed ^= seed << 5;
		p[i] = seed >> 24;
	}
}

/* @arg: the rank that issues them (rank 1, or rank 0 on its own window) */
static int uneven_rank(struct rmawin_ep *ep, void *arg)
{
	const size_t size = NOPS * RMAWIN_FLOAT * UNEVEN_LENS * UNEVEN_SLOT;
	unsigned char *mem = malloc(size), *o = malloc(size), *want = malloc(size);
	unsigned char *res = calloc(1, size), *orig = malloc(size);
	int me = rmawin_rank(ep), origin = *(const int *)arg, op, type, len;
	struct rmawin_win *win;
	size_t at, count, i;

	RMAWIN_TEST_TRY(1, !mem || !o || !want || !res || !orig);
	uneven_vals(mem, size, 7);
	uneven_vals(orig, size, 7);
	uneven_vals(want, size, 7);
	uneven_vals(o, size, 11);
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem, me ? 0 : size, 1, 0, &win));
	RMAWIN_TEST_TRY(3, rmawin_fence(win, 0));
	for (op = 0; op < NOPS; op++)
		for (type = 0; type < RMAWIN_FLOAT; type++)
			for (len = 0; len < UNEVEN_LENS; len++) {
				at = uneven_slot(op, type, len);
				count = uneven_count(len, type);
				reference(op, type, want + at, o + at, count);
				if (me != origin)
					continue;
				RMAWIN_TEST_TRY(4, op == RMAWIN_SUM ?
					rmawin_get_accumulate(win, o + at, res + at, count, type,
							      0, at, op) :
					rmawin_accumulate(win, o + at, count, type, 0, at, op));
			}
	RMAWIN_TEST_TRY(5, rmawin_fence(win, 0));
	/* the origin: the previous values; rank 0: the whole window, between slots too */
	for (type = 0; me == origin && type < RMAWIN_FLOAT; type++)
		for (len = 0; len < UNEVEN_LENS; len++) {
			at = uneven_slot(RMAWIN_SUM, type, len);
			count = uneven_count(len, type);
			if (memcmp(res + at, orig + at, count * type_size[type])) {
				RMAWIN_TEST_MSG("type %d, %zu elements: previous values differ",
						type, count);
				return 6;
			}
		}
	for (i = 0; me == 0 && i < size; i++)
		if (mem[i] != want[i]) {
			RMAWIN_TEST_MSG("window byte %zu (op %zu type %zu): %#x, want %#x", i,
					i / UNEVEN_SLOT / UNEVEN_LENS / RMAWIN_FLOAT,
					i / UNEVEN_SLOT / UNEVEN_LENS % RMAWIN_FLOAT, mem[i], want[i]);
			return 7;
		}
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	free(mem);
	free(o);
	free(want);
	free(res);
	free(orig);
	return 0;
}

TEST_F(path, integers_at_uneven_lengths_and_offsets_against_reference)
{
	int origin = 1;

	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, uneven_rank, &origin, 60));
	EXPECT_EQ(0, rmawin_stat("reqs"));
}

/* The same, rank 0 on its own window: the module applies them at once, in steps */
TEST_F(path, integers_at_uneven_lengths_and_offsets_on_own_window)
{
	int origin = 0;

	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, uneven_rank, &origin, 60));
	EXPECT_EQ(0, rmawin_stat("reqs"));
}

/* Argument checks of the accumulate family, with exact errnos. */
static int args_rank(struct rmawin_ep *ep, void *arg)
{
	int32_t w[4] = { 0 }, v = 1, r;
	int bad = 0, ring = rmawin_ep_ring_active(ep) == 1;
	struct rmawin_win *win;

	(void)arg;
	if (rmawin_win_create(ep, w, sizeof(w), 4, 0, &win) || rmawin_fence(win, 0))
		return 1;
	RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, &v, 1, RMAWIN_DOUBLE, 1, 0, RMAWIN_BAND));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, &v, 1, RMAWIN_FLOAT, 1, 0, RMAWIN_LXOR));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, &v, 1, 99, 1, 0, RMAWIN_SUM));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, &v, 1, RMAWIN_INT32, 1, 0, 99));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, &v, 0, RMAWIN_INT32, 1, 0, RMAWIN_SUM));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, &v, 1, RMAWIN_INT32, 2, 0, RMAWIN_SUM));
	RMAWIN_TEST_WANT(-ERANGE, rmawin_accumulate(win, &v, 1, RMAWIN_INT32, 1, 4, RMAWIN_SUM));
	RMAWIN_TEST_WANT(-ERANGE, rmawin_accumulate(win, w, 4, RMAWIN_INT32, 1, 1, RMAWIN_SUM));
	/*
	 * An unmapped origin, a read-only result: only the transfer tells.
	 * On the ring the operation is queued and the fence reports it.
	 */
	RMAWIN_TEST_WANT(ring ? 0 : -EFAULT, rmawin_accumulate(win, (void *)8, 1, RMAWIN_INT32,
							       1, 0, RMAWIN_SUM));
	RMAWIN_TEST_WANT(ring ? -EFAULT : 0, rmawin_fence(win, 0));
	RMAWIN_TEST_WANT(ring ? 0 : -EFAULT, rmawin_fetch_and_op(win, &v, (void *)"ro",
								 RMAWIN_INT8, 1, 0, RMAWIN_SUM));
	RMAWIN_TEST_WANT(ring ? -EFAULT : 0, rmawin_fence(win, 0));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_fetch_and_op(win, &v, NULL, RMAWIN_INT32, 1, 0,
						      RMAWIN_SUM));
	RMAWIN_TEST_WANT(0, rmawin_fetch_and_op(win, &v, &r, RMAWIN_INT32, 1, 0, RMAWIN_SUM));
	if (rmawin_fence(win, 0) || rmawin_win_free(win))
		return 2;
	return bad ? 3 : 0;
}

TEST_F(path, accumulate_argument_errors)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, args_rank, NULL, 25));
}

TEST_HARNESS_MAIN
