// SPDX-License-Identifier: GPL-2.0
/*
 * One-message lock epochs of accumulate-family operations where atomicity
 * is at stake (epoch_test.c has the rest): on a RMAWIN_WIN_SAME_OP window,
 * whose 8-byte integer accumulates run on the device's atomics, a shared
 * epoch's accumulate takes the target's lock exclusive; and four ranks'
 * exclusive epochs and locked fetch_and_ops on one counter, falling back
 * to the lock on -EAGAIN, stay atomic, as do four ranks' lazy lock epochs
 * of one fetch_and_op.
 */
#include "epoch_test.h"

/* One int64 accumulate-family epoch descriptor to word @disp of rank 1's window @id */
static struct rmawin_op_desc w64(int opcode, __u32 id, unsigned int flags, int acc_op,
				 const int64_t *origin, size_t disp, int64_t *result,
				 const int64_t *compare)
{
	return eacc(opcode, id, 1, flags, acc_op, RMAWIN_TYPE_INT64, origin, 8, disp, result,
		    compare);
}

/*
 * Rank 0, before rank 1 locks anything: every accumulate-family epoch to
 * rank 1's same_op window works, shared ones too, and so does a shared
 * int32 accumulate.  Return: 1 if a check failed, else 0.
 */
static int same_op_unheld(struct rmawin_ep *ep, __u32 soid)
{
	int64_t three = 3, nine = 9, one = 1, c503 = 503, n600 = 600, r;
	int32_t i32[2] = { 1, 2 };
	int bad = 0;

	r = -1;
	RMAWIN_TEST_WANT(0, rma1(ep, w64(RMAWIN_OP_FETCH_OP, soid, SH, RMAWIN_ACC_SUM,
					 &three, 1, &r, NULL)));
	CHECK(r == 500, "shared fetch_and_op fetched %lld, want 500", (long long)r);
	RMAWIN_TEST_WANT(0, rma1(ep, w64(RMAWIN_OP_ACC, soid, SH, RMAWIN_ACC_SUM, &nine, 2,
					 NULL, NULL)));
	r = -1;
	RMAWIN_TEST_WANT(0, rma1(ep, w64(RMAWIN_OP_GET_ACC, soid, SH, RMAWIN_ACC_NO_OP,
					 &nine, 1, &r, NULL)));
	CHECK(r == 503, "shared get_accumulate NO_OP fetched %lld, want 503", (long long)r);
	r = -1;
	RMAWIN_TEST_WANT(0, rma1(ep, w64(RMAWIN_OP_CAS, soid, SH, 0, &n600, 1, &r, &c503)));
	CHECK(r == 503, "shared compare_and_swap fetched %lld, want 503", (long long)r);
	r = -1;
	RMAWIN_TEST_WANT(0, rma1(ep, w64(RMAWIN_OP_FETCH_OP, soid, EX, RMAWIN_ACC_SUM,
					 &one, 1, &r, NULL)));
	CHECK(r == 600, "exclusive fetch_and_op fetched %lld, want 600", (long long)r);
	RMAWIN_TEST_WANT(0, rma1(ep, eacc(RMAWIN_OP_ACC, soid, 1, SH, RMAWIN_ACC_SUM,
					  RMAWIN_TYPE_INT32, i32, 8, 4, NULL, NULL)));
	return bad;
}

/*
 * Rank 0, while rank 1 holds both its windows shared: every 8-byte
 * accumulate-family epoch to the same_op window is -EAGAIN and writes no
 * result; a shared put, get and int32 accumulate there work, and so does a
 * shared fetch_and_op on the plain window.  Return: 1 if a check failed.
 */
static int same_op_held_shared(struct rmawin_ep *ep, __u32 soid, __u32 pmid)
{
	int64_t one = 1, c601 = 601, n700 = 700, x77 = 0x77, r;
	int32_t i32[2] = { 1, 2 };
	int bad = 0;

	r = -1;
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, w64(RMAWIN_OP_FETCH_OP, soid, SH, RMAWIN_ACC_SUM,
					       &one, 1, &r, NULL)));
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, w64(RMAWIN_OP_ACC, soid, SH, RMAWIN_ACC_SUM,
					       &one, 2, NULL, NULL)));
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, w64(RMAWIN_OP_GET_ACC, soid, SH,
					       RMAWIN_ACC_NO_OP, &one, 1, &r, NULL)));
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, w64(RMAWIN_OP_CAS, soid, SH, 0, &n700, 1, &r,
					       &c601)));
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, w64(RMAWIN_OP_FETCH_OP, soid, EX, RMAWIN_ACC_SUM,
					       &one, 1, &r, NULL)));
	CHECK(r == -1, "a refused operation wrote %lld to its result", (long long)r);
	RMAWIN_TEST_WANT(0, rma1(ep, eop(RMAWIN_OP_PUT, soid, 1, SH, &x77, 8, 3)));
	RMAWIN_TEST_WANT(0, rma1(ep, eop(RMAWIN_OP_GET, soid, 1, SH, &r, 8, 1)));
	CHECK(r == 601, "shared get fetched %lld, want 601", (long long)r);
	RMAWIN_TEST_WANT(0, rma1(ep, eacc(RMAWIN_OP_ACC, soid, 1, SH, RMAWIN_ACC_SUM,
					  RMAWIN_TYPE_INT32, i32, 8, 4, NULL, NULL)));
	r = -1;
	RMAWIN_TEST_WANT(0, rma1(ep, w64(RMAWIN_OP_FETCH_OP, pmid, SH, RMAWIN_ACC_SUM,
					 &one, 1, &r, NULL)));
	CHECK(r == 500, "shared fetch_and_op on the plain window fetched %lld, want 500",
	      (long long)r);
	return bad;
}

/*
 * Rank 1, after rank 0's epochs under its shared locks: its windows hold
 * what the refused operations left and what the shared put, int32
 * accumulate and plain fetch_and_op wrote.  Return: 1 if a check failed.
 */
static int same_op_held_landed(const int64_t *so, const int64_t *pm)
{
	int32_t got32[2];
	int bad = 0;

	CHECK(so[1] == 601 && so[2] == 9 && so[3] == 0x77,
	      "rank 1's same_op window: %lld %lld %lld, want 601 9 119", (long long)so[1],
	      (long long)so[2], (long long)so[3]);
	memcpy(got32, &so[4], 8);
	CHECK(got32[0] == 2 && got32[1] == 4,
	      "int32 accumulated twice, under rank 1's shared lock the second: %d %d, want 2 4",
	      got32[0], got32[1]);
	CHECK(pm[1] == 501, "rank 1's plain window: %lld, want 501", (long long)pm[1]);
	return bad;
}

/*
 * On a RMAWIN_WIN_SAME_OP window (its accumulates on the device's atomics)
 * epoch accumulates, shared ones too, are applied right; but a shared one
 * of 8-byte integers takes the target's lock exclusive while it is
 * applied: with rank 1 holding its own lock shared it is -EAGAIN and
 * changes nothing, where a shared put and get there work, and so do a
 * shared int32 accumulate (the target's kernel applies it, without
 * RMAWIN_WIN_NIC_SMALL_INTS) and a shared fetch_and_op on a plain window
 * held the same way.  Once rank 1 unlocks it works again.
 */
static int same_op_rank(struct rmawin_ep *ep, void *arg)
{
	static int64_t so[8], pm[8];
	int64_t one = 1, r;
	int32_t got32[2];
	int me = rmawin_rank(ep), bad = 0;
	struct rmawin_win *sow, *pmw;
	__u32 soid, pmid;

	(void)arg;
	if (me) {
		so[1] = 500;
		pm[1] = 500;
	}
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, so, sizeof(so), 8, RMAWIN_WIN_SAME_OP, &sow));
	RMAWIN_TEST_TRY(2, win_id(ep, NULL, 0, &soid));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, pm, sizeof(pm), 8, 0, &pmw));
	RMAWIN_TEST_TRY(4, win_id(ep, &soid, 1, &pmid));
	RMAWIN_TEST_TRY(5, rmawin_barrier(ep));
	if (me == 0)
		bad |= same_op_unheld(ep, soid);
	RMAWIN_TEST_TRY(6, rmawin_barrier(ep));
	if (me == 1) {
		memcpy(got32, &so[4], 8);
		CHECK(so[1] == 601 && so[2] == 9 && got32[0] == 1 && got32[1] == 2,
		      "rank 1's same_op window: %lld %lld, int32 %d %d; want 601 9, 1 2",
		      (long long)so[1], (long long)so[2], got32[0], got32[1]);
		RMAWIN_TEST_TRY(7, rmawin_lock(sow, RMAWIN_LOCK_SHARED, 1));
		RMAWIN_TEST_TRY(8, rmawin_lock(pmw, RMAWIN_LOCK_SHARED, 1));
	}
	RMAWIN_TEST_TRY(9, rmawin_barrier(ep));
	if (me == 0)
		bad |= same_op_held_shared(ep, soid, pmid);
	RMAWIN_TEST_TRY(10, rmawin_barrier(ep));
	if (me == 1) {
		bad |= same_op_held_landed(so, pm);
		RMAWIN_TEST_TRY(11, rmawin_unlock(pmw, 1));
		RMAWIN_TEST_TRY(12, rmawin_unlock(sow, 1));
	}
	RMAWIN_TEST_TRY(13, rmawin_barrier(ep));
	if (me == 0) {
		r = -1;
		RMAWIN_TEST_WANT(0, rma1(ep, w64(RMAWIN_OP_FETCH_OP, soid, SH, RMAWIN_ACC_SUM,
						 &one, 1, &r, NULL)));
		CHECK(r == 601, "shared fetch_and_op after the unlock fetched %lld, want 601",
		      (long long)r);
	}
	RMAWIN_TEST_TRY(14, rmawin_barrier(ep));
	if (me == 1)
		CHECK(so[1] == 602, "rank 1's same_op counter %lld, want 602", (long long)so[1]);
	else
		CHECK(!so[1] && !so[2] && !so[3] && !pm[1] && !pm[0],
		      "rank 0's windows were written");
	RMAWIN_TEST_TRY(15, rmawin_win_free(pmw));
	RMAWIN_TEST_TRY(16, rmawin_win_free(sow));
	return bad ? 17 : 0;
}

TEST_F_TIMEOUT(path, same_op_window_shared_accumulate_takes_lock_exclusive, 90)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, same_op_rank, NULL, 80));
	expect_end(_metadata);
}

/* ---- contention ------------------------------------------------------------ */

/* Counter test modes */
#define C_RAW	0	/* ranks 1..3: epoch fetch_and_op, the lock on -EAGAIN */
#define C_LAZY	1	/* every rank: lazy lock, fetch_and_op, unlock */

/* One locked fetch_and_op SUM +1 of rank 0's counter */
static int locked_fop(struct rmawin_win *win, int64_t *got)
{
	static const int64_t one = 1;
	int ret;

	ret = rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0);
	if (ret)
		return ret;
	ret = rmawin_fetch_and_op(win, &one, got, RMAWIN_INT64, 0, 0, RMAWIN_SUM);
	if (ret) {
		rmawin_unlock(win, 0);
		return ret;
	}
	return rmawin_unlock(win, 0);
}

/*
 * Each rank adds 1 to rank 0's counter KC times: C_RAW, ranks 1..3 by an
 * exclusive epoch fetch_and_op, taking the lock when it says -EAGAIN, and
 * rank 0 (which cannot epoch itself) under the lock; C_LAZY, everyone
 * under a lazy lock.
 */
static int counter_fop_rank(struct rmawin_ep *ep, void *arg)
{
	static const int64_t one = 1;
	int me = rmawin_rank(ep), mode = *(int *)arg, i, ret, bad = 0;
	int64_t counter = 0, got;
	struct rmawin_win *win;
	__u32 id;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, &counter, me ? 0 : 8, 8, 0, &win));
	RMAWIN_TEST_TRY(2, win_id(ep, NULL, 0, &id));
	if (mode == C_LAZY)
		RMAWIN_TEST_TRY(3, rmawin_win_set_lazy_lock(win, 1));
	RMAWIN_TEST_TRY(4, rmawin_barrier(ep));
	for (i = 0; i < KC; i++) {
		got = -1;
		if (mode == C_RAW && me) {
			ret = rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 0, EX, RMAWIN_ACC_SUM,
					    RMAWIN_TYPE_INT64, &one, 8, 0, &got, NULL));
			if (ret == -EAGAIN) {
				sh->eagain[me]++;
				got = -1;
				ret = locked_fop(win, &got);
			}
		} else {
			ret = locked_fop(win, &got);
		}
		RMAWIN_TEST_TRY(5, ret);
		sh->fetched[me][i] = got;
	}
	RMAWIN_TEST_TRY(6, rmawin_barrier(ep));
	if (me == 0) {
		sh->counter = counter;
		CHECK(counter == (int64_t)NR * KC, "counter %lld, want %d", (long long)counter,
		      NR * KC);
	}
	RMAWIN_TEST_TRY(7, rmawin_win_free(win));
	return bad ? 8 : 0;
}

/* Every fetched value once, 0 .. NR*KC-1, and rising within each rank */
static void check_fetched(struct __test_metadata *_metadata)
{
	static int seen[NR * KC];
	int64_t v;
	int r, i;

	memset(seen, 0, sizeof(seen));
	EXPECT_EQ((int64_t)NR * KC, sh->counter);
	for (r = 0; r < NR; r++) {
		for (i = 0; i < KC; i++) {
			v = sh->fetched[r][i];
			EXPECT_TRUE(v >= 0 && v < NR * KC)
				TH_LOG("rank %d's operation %d fetched %lld", r, i, (long long)v);
			if (v < 0 || v >= NR * KC)
				continue;
			EXPECT_EQ(0, seen[v]) TH_LOG("%lld fetched twice (rank %d, op %d)",
						     (long long)v, r, i);
			seen[v]++;
			if (i)
				EXPECT_LT(sh->fetched[r][i - 1], v)
					TH_LOG("rank %d: op %d fetched %lld after %lld", r, i,
					       (long long)v, (long long)sh->fetched[r][i - 1]);
		}
	}
}

/*
 * Exclusive epoch fetch_and_ops from three ranks and locked ones from
 * rank 0, on one counter: every value fetched once and the sum exact.
 */
TEST_F_TIMEOUT(path, epoch_fetch_and_op_contention_4_ranks, 150)
{
	int mode = C_RAW, r;

	setup_shared(_metadata);
	EXPECT_EQ(NR, rmawin_test_run_eps(_metadata, NR, counter_fop_rank, &mode, 140));
	check_fetched(_metadata);
	for (r = 1; r < NR; r++)
		TH_LOG("rank %d: %d of %d epochs fell back to the lock", r, sh->eagain[r], KC);
	expect_end(_metadata);
}

/*
 * Lazy lock epochs of one fetch_and_op each, from four ranks to rank 0's
 * counter (each sent as one message, or under the lock when the target's
 * is busy): every value fetched once and the sum exact.
 */
TEST_F_TIMEOUT(path, lazy_lock_fetch_and_op_counter_4_ranks, 150)
{
	int mode = C_LAZY;

	setup_shared(_metadata);
	EXPECT_EQ(NR, rmawin_test_run_eps(_metadata, NR, counter_fop_rank, &mode, 140));
	check_fetched(_metadata);
	expect_end(_metadata);
}

TEST_HARNESS_MAIN
