// SPDX-License-Identifier: GPL-2.0
/*
 * Active-target epochs closed by a message that goes behind their puts and
 * gets on the same queue pairs, before they complete (kmod/pscw.c,
 * kmod/sync.c): PSCW's COMPLETE, and the fence's barrier when every target
 * is a barrier partner.  A target checks every byte put to it as soon as
 * its wait or fence returns, and at once overwrites what its origins got:
 * the puts must be placed, and the gets answered, by then.  Epochs that
 * may not close that way (an accumulate, a target out of the barrier's
 * reach) are counted apart: the module's counter early_completes says
 * which way each epoch took.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <rmawin.h>

#include "rmawin_test.h"

/* Every test on both of the library's paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

#define ROUNDS		8
#define PUT_BYTES	(64 * 1024)	/* put by each origin to each target, each round */
#define GET_BYTES	4096		/* got from each target, each round */
#define POISON		0xEE

static uint8_t pattern(int round, int src, size_t i)
{
	return (uint8_t)(i * 7 + round * 13 + src * 29 + 1);
}

/* Puts of several shapes (inline, bounced, pinned) covering [0, PUT_BYTES). */
static int put_pattern(struct rmawin_win *win, uint8_t *src, int me, int target,
		       size_t disp, int round)
{
	static const size_t cut[] = { 0, 8, 208, 5208, PUT_BYTES };
	size_t i;

	for (i = 0; i < PUT_BYTES; i++)
		src[i] = pattern(round, me, i);
	for (i = 0; i + 1 < ARRAY_SIZE(cut); i++)
		RMAWIN_TEST_TRY(40, rmawin_put(win, src + cut[i], cut[i + 1] - cut[i], target,
					       disp + cut[i]));
	return 0;
}

static int check_bytes(const char *what, int round, const uint8_t *p, size_t n, int src,
		       uint8_t xor)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (uint8_t)(pattern(round, src, i) ^ xor)) {
			fprintf(stderr, "round %d: %s[%zu] %#x from rank %d\n", round, what, i,
				p[i], src);
			return 50;
		}
	return 0;
}

/* What a target's origins get: its own pattern, flipped. */
static void set_gets(uint8_t *p, int round, int me)
{
	size_t i;

	for (i = 0; i < GET_BYTES; i++)
		p[i] = pattern(round, me, i) ^ 0x5A;
}

/*
 * PSCW, OSU's pattern: the roles swap each round; the target posts and
 * waits, the origin starts, puts, gets, completes.  Then one epoch with an
 * accumulate, which completes before it tells.
 */
static int pscw_round(struct rmawin_win *win, uint8_t *mem, uint8_t *src, uint8_t *got,
		      int me, int round)
{
	int other = 1 - me, ret;

	if (round % 2 != me) {
		set_gets(mem + PUT_BYTES, round, me);
		RMAWIN_TEST_TRY(20, rmawin_post(win, &other, 1));
		RMAWIN_TEST_TRY(21, rmawin_wait(win));
		memset(mem + PUT_BYTES, POISON, GET_BYTES);
		return check_bytes("window", round, mem, PUT_BYTES, other, 0);
	}
	memset(got, 0, GET_BYTES);
	RMAWIN_TEST_TRY(10, rmawin_start(win, &other, 1));
	ret = put_pattern(win, src, me, other, 0, round);
	if (ret)
		return ret;
	RMAWIN_TEST_TRY(11, rmawin_get(win, got, GET_BYTES, other, PUT_BYTES));
	RMAWIN_TEST_TRY(12, rmawin_complete(win));
	return check_bytes("got", round, got, GET_BYTES, other, 0x5A);
}

static int pscw_rank(struct rmawin_ep *ep, void *arg)
{
	uint8_t *mem = calloc(1, PUT_BYTES + GET_BYTES), *src = malloc(PUT_BYTES);
	int me = rmawin_rank(ep), other = 1 - me, round, ret;
	int64_t one = 1, *sum = (int64_t *)mem;
	uint8_t *got = malloc(GET_BYTES);
	struct rmawin_win *win;

	if (!mem || !src || !got)
		return 1;
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem, PUT_BYTES + GET_BYTES, 1, 0, &win));
	for (round = 0; round < ROUNDS; round++) {
		ret = pscw_round(win, mem, src, got, me, round);
		if (ret)
			return ret;
	}
	*sum = 41;
	if (me == 0) {
		RMAWIN_TEST_TRY(3, rmawin_start(win, &other, 1));
		RMAWIN_TEST_TRY(4, rmawin_accumulate(win, &one, 1, RMAWIN_INT64, other, 0,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(5, rmawin_complete(win));
	} else {
		RMAWIN_TEST_TRY(6, rmawin_post(win, &other, 1));
		RMAWIN_TEST_TRY(7, rmawin_wait(win));
		if (*sum != 42)
			return 8;
	}
	RMAWIN_TEST_TRY(9, rmawin_win_free(win));
	free(mem);
	free(src);
	free(got);
	return 0;
}

TEST_F(path, pscw_complete_behind_puts_and_gets)
{
	long early = rmawin_stat("early_completes");

	ASSERT_LE(0, early) TH_LOG("no counter early_completes");
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, pscw_rank, NULL, 60));
	/* every put and get epoch's COMPLETE, not the accumulate's */
	EXPECT_EQ(ROUNDS, rmawin_stat("early_completes") - early);
	EXPECT_EQ(0, rmawin_stat("windows"));
}

/*
 * Fences on 4 ranks: each rank puts to ranks me + 1 and me + 2 (barrier
 * partners: 2^0 and 2^1 on) and gets from me + 1.  Each round's epoch is
 * opened by one fence and closed by another; between them and the next
 * round's, the owner checks its window and overwrites what was got.
 * Then an epoch with a put to me + 3, which is not a partner.
 */
#define FENCE_RANKS	4
#define FENCE_WIN	(2 * PUT_BYTES + GET_BYTES)

static int fence_round(struct rmawin_win *win, uint8_t *mem, uint8_t *src, uint8_t *got,
		       int me, int round)
{
	int n = FENCE_RANKS, d, ret;

	set_gets(mem + 2 * PUT_BYTES, round, me);
	memset(got, 0, GET_BYTES);
	RMAWIN_TEST_TRY(30, rmawin_fence(win, 0));
	for (d = 1; d <= 2; d++) {
		ret = put_pattern(win, src, me, (me + d) % n, (d - 1) * PUT_BYTES, round);
		if (ret)
			return ret;
	}
	RMAWIN_TEST_TRY(31, rmawin_get(win, got, GET_BYTES, (me + 1) % n, 2 * PUT_BYTES));
	RMAWIN_TEST_TRY(32, rmawin_fence(win, 0));
	memset(mem + 2 * PUT_BYTES, POISON, GET_BYTES);
	for (d = 1; d <= 2; d++) {
		ret = check_bytes("window", round, mem + (d - 1) * PUT_BYTES, PUT_BYTES,
				  (me + n - d) % n, 0);
		if (ret)
			return ret;
	}
	return check_bytes("got", round, got, GET_BYTES, (me + 1) % n, 0x5A);
}

static int fence_rank(struct rmawin_ep *ep, void *arg)
{
	uint8_t *mem = calloc(1, FENCE_WIN), *src = malloc(PUT_BYTES);
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), round, ret;
	uint8_t *got = malloc(GET_BYTES);
	struct rmawin_win *win;
	uint64_t v = me;

	if (!mem || !src || !got)
		return 1;
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem, FENCE_WIN, 1, 0, &win));
	for (round = 0; round < ROUNDS; round++) {
		ret = fence_round(win, mem, src, got, me, round);
		if (ret)
			return ret;
	}
	RMAWIN_TEST_TRY(3, rmawin_fence(win, 0));
	RMAWIN_TEST_TRY(4, rmawin_put(win, &v, 8, (me + 3) % n, 0));
	RMAWIN_TEST_TRY(5, rmawin_fence(win, RMAWIN_MODE_NOSUCCEED));
	if (*(uint64_t *)mem != (uint64_t)(me + 1) % n)
		return 6;
	RMAWIN_TEST_TRY(7, rmawin_win_free(win));
	free(mem);
	free(src);
	free(got);
	return 0;
}

TEST_F(path, fence_barrier_behind_puts_and_gets)
{
	long early = rmawin_stat("early_completes");

	ASSERT_LE(0, early) TH_LOG("no counter early_completes");
	EXPECT_EQ(FENCE_RANKS, rmawin_test_run_eps(_metadata, FENCE_RANKS, fence_rank, NULL, 90));
	/* every rank's fences but the one after its put to a rank 3 on */
	EXPECT_EQ(FENCE_RANKS * (2 * ROUNDS + 1), rmawin_stat("early_completes") - early);
	EXPECT_EQ(0, rmawin_stat("windows"));
}

/*
 * The module parameter wait_spin_us: how long these waits poll before they
 * sleep (1000 us by default).  0 sleeps at once; a value past the cap
 * polls 100 ms at most.  Either way, every check above holds.
 */
#define SPIN_PARAM	"/sys/module/rmawin/parameters/wait_spin_us"

TEST_F(path, epochs_at_either_end_of_wait_spin_us)
{
	static const long spins[] = { 0, 4294967295L };
	long saved = rmawin_test_read_long(SPIN_PARAM);
	unsigned int i;

	ASSERT_EQ(1000, saved) TH_LOG("module parameter wait_spin_us: %ld", saved);
	for (i = 0; i < ARRAY_SIZE(spins); i++) {
		ASSERT_EQ(0, rmawin_test_write_long(SPIN_PARAM, spins[i]));
		EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, pscw_rank, NULL, 60));
		EXPECT_EQ(FENCE_RANKS, rmawin_test_run_eps(_metadata, FENCE_RANKS, fence_rank,
							   NULL, 90));
	}
	ASSERT_EQ(0, rmawin_test_write_long(SPIN_PARAM, saved));
	EXPECT_EQ(0, rmawin_stat("windows"));
}

TEST_HARNESS_MAIN
