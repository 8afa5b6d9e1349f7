// SPDX-License-Identifier: GPL-2.0
/*
 * The device's atomics for integers smaller than 8 bytes on windows created
 * with RMAWIN_WIN_SAME_OP | RMAWIN_WIN_NIC_SMALL_INTS: the elements of 1, 2
 * and 4 bytes are updated through compare-and-swap loops on the aligned
 * 8-byte words they lie in, from four ranks at once, rank 0 on its own
 * window too.  Elements that share a word with other ranks' elements keep
 * their own values (no rank's loop overwrites another's lanes); elements
 * that all ranks update come out exact, and what their fetching operations
 * fetched forms a serial chain; the module's nic_atomics counter grows.
 * Then operations of more words than an operation keeps in flight at once
 * (RMAWIN_ATOMIC_LANES, 32), from four ranks at once: every element comes
 * out exact and every fetched value is one the element held.  Last, one
 * origin repeating an accumulate of bytes over 64 words takes one device
 * atomic per word after the first time (its loops guess what the one
 * before left), not two.  The first two run on a window with
 * RMAWIN_WIN_SAME_OP alone too, where the smaller integers go to the
 * target's kernel: the same exact results, and no device atomic for them
 * (the int64 elements beside them, one each).
 */
#include "atomic_test.h"

/* Rank 0's window: 64 bytes, disp_unit 1 */
#define W_LANES		0	/* int8[8]: rank r adds 1 to byte r, every rank to byte 7 */
#define W_I8_FOP	8	/* int8 fetch_and_op SUM +1 from every rank; bytes 9-15 stay 0x5a */
#define W_I16		16	/* uint16[4]: MAX of (rank + 1) * 100 + i, BOR of 1 << rank */
#define W_I32		24	/* int32 counter by compare_and_swap, beside an int32 by SUM */
#define W_SPAN		34	/* int16[5] at bytes 34-43, across two words: get_accumulate SUM */
#define W_LEN		64

#define KI	25	/* rounds per rank: 4 * 25 * 2 < 256 for the int8 counters */

/* The windows of the device's path for the smaller integers */
#define SMALL	(RMAWIN_WIN_SAME_OP | RMAWIN_WIN_NIC_SMALL_INTS)

static int ints_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[W_LEN / 8];
	int me = rmawin_rank(ep), i, j;
	int8_t one8 = 1, got8[KI];
	uint16_t max16[2], bor16[2], old16[5];
	int32_t one32 = 1, cur, want, prev;
	int16_t add16[5];
	struct rmawin_win *win;
	long before;

	memset(mem, 0, sizeof(mem));
	memset((char *)mem + W_I8_FOP + 1, 0x5a, 7);
	for (j = 0; j < 5; j++)
		add16[j] = (int16_t)(j + 1);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 1, *(const unsigned int *)arg,
					     &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
	for (i = 0; i < KI; i++) {
		/* lanes of one word: our own byte, and the shared last one */
		RMAWIN_TEST_TRY(4, rmawin_accumulate(win, &one8, 1, RMAWIN_INT8, 0,
						     W_LANES + me, RMAWIN_SUM));
		RMAWIN_TEST_TRY(5, rmawin_accumulate(win, &one8, 1, RMAWIN_INT8, 0, W_LANES + 7,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(6, rmawin_fetch_and_op(win, &one8, &got8[i], RMAWIN_INT8, 0,
						       W_I8_FOP, RMAWIN_SUM));
		max16[0] = max16[1] = (uint16_t)((me + 1) * 100 + i);
		RMAWIN_TEST_TRY(7, rmawin_accumulate(win, max16, 2, RMAWIN_UINT16, 0, W_I16,
						     RMAWIN_MAX));
		bor16[0] = bor16[1] = (uint16_t)(1 << me);
		RMAWIN_TEST_TRY(8, rmawin_accumulate(win, bor16, 2, RMAWIN_UINT16, 0, W_I16 + 4,
						     RMAWIN_BOR));
		RMAWIN_TEST_TRY(9, rmawin_accumulate(win, &one32, 1, RMAWIN_INT32, 0, W_I32 + 4,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(10, rmawin_get_accumulate(win, add16, old16, 5, RMAWIN_INT16, 0,
							  W_SPAN, RMAWIN_SUM));
		RMAWIN_TEST_TRY(11, rmawin_flush(win, 0));
		/* the fetched previous values of the spanning elements: multiples of j + 1 */
		for (j = 0; j < 5; j++)
			if (old16[j] % (j + 1)) {
				RMAWIN_TEST_MSG("int16 element %d fetched %u", j, old16[j]);
				return 12;
			}
		/* an int32 counter incremented by compare_and_swap, retried until it takes */
		RMAWIN_TEST_TRY(13, rmawin_fetch_and_op(win, &one32, &cur, RMAWIN_INT32, 0, W_I32,
							RMAWIN_NO_OP));
		RMAWIN_TEST_TRY(14, rmawin_flush(win, 0));
		for (;;) {
			want = cur + 1;
			RMAWIN_TEST_TRY(15, rmawin_compare_and_swap(win, &want, &cur, &prev,
								    RMAWIN_INT32, 0, W_I32));
			RMAWIN_TEST_TRY(16, rmawin_flush(win, 0));
			if (prev == cur)
				break;
			cur = prev;
		}
	}
	RMAWIN_TEST_TRY(17, rmawin_unlock(win, 0));
	for (i = 0; i < KI; i++)
		sh->got[me * KI + i] = (uint8_t)got8[i];
	return rank_end(ep, win, mem, sizeof(mem), before);
}

/* What ints_rank() left in rank 0's window, whichever path it took */
static void ints_check(struct __test_metadata *_metadata)
{
	const unsigned char *w;
	struct fetched ops[NR * KI];
	uint16_t u16[4];
	int32_t i32[2];
	int16_t s16[5];
	int r, i, j;

	w = (const unsigned char *)sh->final;
	for (r = 0; r < NR; r++)
		EXPECT_EQ(KI, w[W_LANES + r]) TH_LOG("rank %d's own byte", r);
	for (j = NR; j < 7; j++)
		EXPECT_EQ(0, w[W_LANES + j]) TH_LOG("byte %d, which nobody updates", j);
	EXPECT_EQ(NR * KI, w[W_LANES + 7]);
	EXPECT_EQ(NR * KI, w[W_I8_FOP]);
	for (j = 1; j < 8; j++)
		EXPECT_EQ(0x5a, w[W_I8_FOP + j]) TH_LOG("byte %d beside the int8 counter", j);
	for (i = 0; i < NR * KI; i++)
		ops[i] = (struct fetched){ .got = sh->got[i], .add = 1 };
	expect_chain(_metadata, "int8 fetch_and_op", ops, NR * KI, 0, w[W_I8_FOP]);
	memcpy(u16, w + W_I16, sizeof(u16));
	EXPECT_EQ(NR * 100 + KI - 1, u16[0]);
	EXPECT_EQ(NR * 100 + KI - 1, u16[1]);
	EXPECT_EQ((1 << NR) - 1, u16[2]);
	EXPECT_EQ((1 << NR) - 1, u16[3]);
	memcpy(i32, w + W_I32, sizeof(i32));
	EXPECT_EQ(NR * KI, i32[0]) TH_LOG("int32 counter by compare_and_swap");
	EXPECT_EQ(NR * KI, i32[1]) TH_LOG("int32 counter by SUM");
	memcpy(s16, w + W_SPAN, sizeof(s16));
	for (j = 0; j < 5; j++)
		EXPECT_EQ(NR * KI * (j + 1), s16[j]) TH_LOG("int16 element %d across the words", j);
	EXPECT_EQ(0, w[W_SPAN - 1]);
	EXPECT_EQ(0, w[W_SPAN + 10]);
}

TEST_F_TIMEOUT(path, small_integers_through_the_device, 120)
{
	unsigned int flags = SMALL;
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, ints_rank, &flags, 100);
	ints_check(_metadata);
	/* every operation above took at least one device atomic */
	EXPECT_LE((long)NR * KI * 9, grew);
	expect_ep_atomics(_metadata, NR, KI * 9);
	expect_end(_metadata);
}

/* The same on a window with RMAWIN_WIN_SAME_OP alone: the target's kernel, as exact */
TEST_F_TIMEOUT(path, small_integers_target_side_without_the_flag, 120)
{
	unsigned int flags = RMAWIN_WIN_SAME_OP;

	shared_setup(_metadata);
	run_counted(_metadata, NR, ints_rank, &flags, 100);
	ints_check(_metadata);
	expect_ep_atomics_eq(_metadata, NR, 0);
	expect_end(_metadata);
}

/* A uint8 REPLACE from every rank: what was fetched and what is left are what was written. */
static int replace8_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[1] = { 0 };
	int me = rmawin_rank(ep), i;
	struct rmawin_win *win;
	uint8_t v[KI], got[KI];

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 1, SMALL, &win));
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
	for (i = 0; i < KI; i++) {
		v[i] = (uint8_t)(1 + me * KI + i);
		RMAWIN_TEST_TRY(4, rmawin_fetch_and_op(win, &v[i], &got[i], RMAWIN_UINT8, 0, 3,
						       RMAWIN_REPLACE));
	}
	RMAWIN_TEST_TRY(5, rmawin_unlock(win, 0));
	for (i = 0; i < KI; i++)
		sh->got[me * KI + i] = got[i];
	/* -2: no count of this rank's device atomics */
	return rank_end(ep, win, mem, sizeof(mem), -2);
}

TEST_F_TIMEOUT(path, uint8_replace_is_a_permutation, 60)
{
	int seen[NR * KI + 1] = { 0 }, i, bad, first = 0;
	const unsigned char *w;
	unsigned int v;

	shared_setup(_metadata);
	run_counted(_metadata, NR, replace8_rank, NULL, 50);
	w = (const unsigned char *)sh->final;
	/* the fetched values and the final one are 0 and every value written, once each */
	for (i = 0; i <= NR * KI; i++) {
		v = i < NR * KI ? sh->got[i] : w[3];
		ASSERT_GE(NR * KI, v);
		if (v <= NR * KI)
			seen[v]++;
	}
	for (i = 0, bad = 0; i <= NR * KI; i++) {
		if (seen[i] != 1 && !bad++)
			first = i;
	}
	EXPECT_EQ(0, bad) TH_LOG("%d values not seen exactly once, the first %d (%d times)", bad,
				 first, seen[first]);
	for (i = 0; i < 8; i++) {
		if (i != 3)
			EXPECT_EQ(0, w[i]) TH_LOG("byte %d beside the replaced one", i);
	}
	expect_end(_metadata);
}

/* Many words per operation: 48 of int8 (get_accumulate), 16 of int64 (get_accumulate) */
#define M_I8		384	/* bytes 0-383: rank r adds j % 7 + 1 to byte j */
#define M_I64		16	/* int64[16] at byte 384: every rank adds j + 1 to element j */
#define KM		8	/* rounds per rank: 4 * 8 * 7 < 256 for the int8 elements */

static int many_words_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[64];
	int8_t add8[M_I8], old8[M_I8];
	int64_t add64[M_I64], old64[M_I64];
	int me = rmawin_rank(ep), i, j;
	struct rmawin_win *win;
	long before;

	memset(mem, 0, sizeof(mem));
	for (j = 0; j < M_I8; j++)
		add8[j] = (int8_t)(j % 7 + 1);
	for (j = 0; j < M_I64; j++)
		add64[j] = j + 1;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 1, *(const unsigned int *)arg,
					     &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
	for (i = 0; i < KM; i++) {
		RMAWIN_TEST_TRY(4, rmawin_get_accumulate(win, add8, old8, M_I8, RMAWIN_INT8, 0, 0,
							 RMAWIN_SUM));
		RMAWIN_TEST_TRY(5, rmawin_get_accumulate(win, add64, old64, M_I64, RMAWIN_INT64, 0,
							 M_I8, RMAWIN_SUM));
		RMAWIN_TEST_TRY(6, rmawin_flush(win, 0));
		/* what an element held: a multiple of what every rank adds to it */
		for (j = 0; j < M_I8; j++)
			if ((uint8_t)old8[j] % (j % 7 + 1) ||
			    (uint8_t)old8[j] >= NR * KM * (j % 7 + 1)) {
				RMAWIN_TEST_MSG("round %d: int8 element %d fetched %u", i, j,
						(uint8_t)old8[j]);
				return 7;
			}
		for (j = 0; j < M_I64; j++)
			sh->got[(me * KM + i) * M_I64 + j] = (uint64_t)old64[j];
	}
	RMAWIN_TEST_TRY(8, rmawin_unlock(win, 0));
	return rank_end(ep, win, mem, sizeof(mem), before);
}

/* What many_words_rank() left in rank 0's window, whichever path it took */
static void many_words_check(struct __test_metadata *_metadata)
{
	struct fetched ops[NR * KM];
	const unsigned char *w;
	int64_t v;
	int i, j;

	w = (const unsigned char *)sh->final;
	for (j = 0; j < M_I8; j++)
		EXPECT_EQ(NR * KM * (j % 7 + 1), w[j]) TH_LOG("int8 element %d", j);
	for (j = 0; j < M_I64; j++) {
		memcpy(&v, w + M_I8 + j * 8, sizeof(v));
		EXPECT_EQ(NR * KM * (j + 1), v) TH_LOG("int64 element %d", j);
		/* each element's fetch-and-adds: one serial chain */
		for (i = 0; i < NR * KM; i++)
			ops[i] = (struct fetched){ .got = sh->got[i * M_I64 + j], .add = j + 1 };
		expect_chain(_metadata, "int64 get_accumulate", ops, NR * KM, 0, (uint64_t)v);
	}
}

TEST_F_TIMEOUT(path, more_words_than_lanes_from_every_rank, 120)
{
	unsigned int flags = SMALL;
	long grew;

	shared_setup(_metadata);
	grew = run_counted(_metadata, NR, many_words_rank, &flags, 100);
	many_words_check(_metadata);
	/* one device atomic per word at least, per operation */
	EXPECT_LE((long)NR * KM * (M_I8 / 8 + M_I64), grew);
	expect_ep_atomics(_metadata, NR, KM * (M_I8 / 8 + M_I64));
	expect_end(_metadata);
}

/*
 * RMAWIN_WIN_SAME_OP alone: the int8 array goes to the target's kernel
 * whole, and the int64 elements beside it take one fetch-and-add each,
 * no more: exactly M_I64 device atomics per round.
 */
TEST_F_TIMEOUT(path, more_words_int8_target_side_without_the_flag, 120)
{
	unsigned int flags = RMAWIN_WIN_SAME_OP;

	shared_setup(_metadata);
	run_counted(_metadata, NR, many_words_rank, &flags, 100);
	many_words_check(_metadata);
	expect_ep_atomics_eq(_metadata, NR, KM * M_I64);
	expect_end(_metadata);
}

#define KR	8	/* repeats of the accumulate over the whole window */

/*
 * Rank 0 adds 1 to every byte of rank 1's 64 words, KR times, flushing
 * each; the bytes start at 1, so a first guess of 0 is wrong everywhere.
 */
static int repeat_rank(struct rmawin_ep *ep, void *arg)
{
	uint64_t mem[64];
	int8_t ones[sizeof(mem)];
	int me = rmawin_rank(ep), i;
	struct rmawin_win *win;
	long before;

	(void)arg;
	memset(mem, 1, sizeof(mem));
	memset(ones, 1, sizeof(ones));
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, me ? sizeof(mem) : 0, 1, SMALL, &win));
	before = rmawin_test_ep_stat("nic_atomics");
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
		for (i = 0; i < KR; i++) {
			RMAWIN_TEST_TRY(4, rmawin_accumulate(win, ones, sizeof(ones), RMAWIN_INT8,
							     1, 0, RMAWIN_SUM));
			RMAWIN_TEST_TRY(5, rmawin_flush(win, 1));
		}
		RMAWIN_TEST_TRY(6, rmawin_unlock(win, 1));
	}
	sh->ep_atomics[me] = delta(before, rmawin_test_ep_stat("nic_atomics"));
	RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	if (me == 1)
		memcpy(sh->final, mem, sizeof(mem));
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(path, a_repeated_loop_guesses_what_the_last_one_left, 60)
{
	const unsigned char *w;
	size_t j;

	shared_setup(_metadata);
	run_counted(_metadata, 2, repeat_rank, NULL, 50);
	w = (const unsigned char *)sh->final;
	for (j = 0; j < sizeof(sh->final); j++)
		ASSERT_EQ(1 + KR, w[j]) TH_LOG("byte %zu", j);
	/* 2 per word the first time (guessed 0), then 1: without the guesses 2 * 64 * KR */
	EXPECT_LE(64 * KR, sh->ep_atomics[0]);
	EXPECT_GE(64 * (KR + 1), sh->ep_atomics[0]) TH_LOG("rank 0 posted %ld device atomics",
							   sh->ep_atomics[0]);
	EXPECT_EQ(0, sh->ep_atomics[1]);
	expect_end(_metadata);
}

TEST_HARNESS_MAIN
