// SPDX-License-Identifier: GPL-2.0
/*
 * Active-target epochs closed by a message that goes behind their puts and
 * gets on the same queue pairs, before they complete (kmod/pscw.c,
 * kmod/sync.c): PSCW's COMPLETE, and a fence's barrier in a group of two.
 * A target checks every byte put to it as soon as its wait or fence
 * returns, and at once overwrites what its origins got: the puts must be
 * placed, and the gets answered, by then.  Epochs that may not close that
 * way (an accumulate's, a fence of four ranks) are counted apart: the
 * module's counter early_completes says which way each epoch took.
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

/* A rank's memory: its window, and the origin buffers of its puts and gets. */
struct bufs {
	uint8_t *mem, *src, *got;
	struct rmawin_win *win;
};

/*
 * Run @body on a window of @size bytes and the buffers, freed after (the
 * window only if @body succeeded: it is collective).
 */
static int with_window(struct rmawin_ep *ep, size_t size,
		       int (*body)(struct rmawin_ep *ep, struct bufs *b))
{
	struct bufs b = { calloc(1, size), malloc(PUT_BYTES), malloc(GET_BYTES), NULL };
	int ret = 1;

	if (b.mem && b.src && b.got) {
		ret = rmawin_win_create(ep, b.mem, size, 1, 0, &b.win) ? 2 : body(ep, &b);
		if (!ret && rmawin_win_free(b.win))
			ret = 3;
	}
	free(b.mem);
	free(b.src);
	free(b.got);
	return ret;
}

/* Run @fn on @n ranks; the growth of early_completes, or -1 if a rank failed. */
static long counted_run(struct __test_metadata *_metadata, int n,
			int (*fn)(struct rmawin_ep *ep, void *arg), int secs)
{
	long before = rmawin_stat("early_completes");

	if (before < 0) {
		TH_LOG("no counter early_completes");
		return -1;
	}
	if (rmawin_test_run_eps(_metadata, n, fn, NULL, secs) != n)
		return -1;
	return rmawin_stat("early_completes") - before;
}

/*
 * PSCW, OSU's pattern: the roles swap each round; the target posts and
 * waits, the origin starts, puts, gets, completes.  Then one epoch with two
 * accumulates, which completes before it tells (one alone would travel in
 * the COMPLETE, carry_test.c).
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

static int pscw_body(struct rmawin_ep *ep, struct bufs *b)
{
	int me = rmawin_rank(ep), other = 1 - me, round, ret;
	int64_t one = 1, *sum = (int64_t *)b->mem;
	struct rmawin_win *win = b->win;

	for (round = 0; round < ROUNDS; round++) {
		ret = pscw_round(win, b->mem, b->src, b->got, me, round);
		if (ret)
			return ret;
	}
	*sum = 41;
	if (me == 0) {
		RMAWIN_TEST_TRY(3, rmawin_start(win, &other, 1));
		RMAWIN_TEST_TRY(4, rmawin_accumulate(win, &one, 1, RMAWIN_INT64, other, 0,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(4, rmawin_accumulate(win, &one, 1, RMAWIN_INT64, other, 0,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(5, rmawin_complete(win));
	} else {
		RMAWIN_TEST_TRY(6, rmawin_post(win, &other, 1));
		RMAWIN_TEST_TRY(7, rmawin_wait(win));
		if (*sum != 43)
			return 8;
	}
	return 0;
}

static int pscw_rank(struct rmawin_ep *ep, void *arg)
{
	return with_window(ep, PUT_BYTES + GET_BYTES, pscw_body);
}

TEST_F(path, pscw_complete_behind_puts_and_gets)
{
	/* every put and get epoch's COMPLETE, not the accumulate's */
	EXPECT_EQ(ROUNDS, counted_run(_metadata, 2, pscw_rank, 60));
	EXPECT_EQ(0, rmawin_stat("windows"));
}

/*
 * Fences on 2 and on 4 ranks: each rank puts to rank me + 1 (and me + 2,
 * on 4) and gets from me + 1.  Each round's epoch is opened by one fence
 * and closed by another; then the owner checks its window and overwrites
 * what was got.  On 4 ranks a third epoch reads at me + 1 what me - 1 put
 * there: a fence completes every rank's operations everywhere, not only
 * those to the rank that leaves it.  Only in a group of two does the
 * barrier go behind the operations (every fence of it); on 4 ranks none.
 */
#define FENCE_WIN	(2 * PUT_BYTES + GET_BYTES)

static int fence_round(struct rmawin_win *win, struct bufs *b, int me, int n, int round)
{
	int d, far = n > 2 ? 2 : 1, ret;

	set_gets(b->mem + 2 * PUT_BYTES, round, me);
	memset(b->got, 0, GET_BYTES);
	RMAWIN_TEST_TRY(30, rmawin_fence(win, 0));
	for (d = 1; d <= far; d++) {
		ret = put_pattern(win, b->src, me, (me + d) % n, (d - 1) * PUT_BYTES, round);
		if (ret)
			return ret;
	}
	RMAWIN_TEST_TRY(31, rmawin_get(win, b->got, GET_BYTES, (me + 1) % n, 2 * PUT_BYTES));
	RMAWIN_TEST_TRY(32, rmawin_fence(win, 0));
	memset(b->mem + 2 * PUT_BYTES, POISON, GET_BYTES);
	for (d = 1; d <= far; d++) {
		ret = check_bytes("window", round, b->mem + (d - 1) * PUT_BYTES, PUT_BYTES,
				  (me + n - d) % n, 0);
		if (ret)
			return ret;
	}
	ret = check_bytes("got", round, b->got, GET_BYTES, (me + 1) % n, 0x5A);
	if (ret || n == 2)
		return ret;
	/* what me - 1 put at me + 1 in the epoch just closed */
	RMAWIN_TEST_TRY(33, rmawin_get(win, b->got, GET_BYTES, (me + 1) % n, PUT_BYTES));
	RMAWIN_TEST_TRY(34, rmawin_fence(win, 0));
	return check_bytes("third party's", round, b->got, GET_BYTES, (me + n - 1) % n, 0);
}

static int fence_body(struct rmawin_ep *ep, struct bufs *b)
{
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), round, ret;

	for (round = 0; round < ROUNDS; round++) {
		ret = fence_round(b->win, b, me, n, round);
		if (ret)
			return ret;
	}
	RMAWIN_TEST_TRY(3, rmawin_fence(b->win, RMAWIN_MODE_NOSUCCEED));
	return 0;
}

static int fence_rank(struct rmawin_ep *ep, void *arg)
{
	return with_window(ep, FENCE_WIN, fence_body);
}

TEST_F(path, fence_barrier_behind_puts_and_gets_of_two_ranks)
{
	/* both ranks' fences: two a round, and the last */
	EXPECT_EQ(2 * (2 * ROUNDS + 1), counted_run(_metadata, 2, fence_rank, 60));
	EXPECT_EQ(0, rmawin_stat("windows"));
}

TEST_F(path, fence_of_four_ranks_completes_everything_first)
{
	EXPECT_EQ(0, counted_run(_metadata, 4, fence_rank, 90));
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
		EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, fence_rank, NULL, 60));
		EXPECT_EQ(4, rmawin_test_run_eps(_metadata, 4, fence_rank, NULL, 90));
	}
	ASSERT_EQ(0, rmawin_test_write_long(SPIN_PARAM, saved));
	EXPECT_EQ(0, rmawin_stat("windows"));
}

TEST_HARNESS_MAIN
