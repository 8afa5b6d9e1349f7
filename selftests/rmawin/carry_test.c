// SPDX-License-Identifier: GPL-2.0
/*
 * Operations carried by their PSCW epoch's COMPLETE
 * (RMAWIN_OP_F_EPOCH_COMPLETE): an access epoch of one target whose only
 * operation is a small put or accumulate sends it in the COMPLETE message,
 * and the target applies it before its WAIT can return.  librmawin keeps
 * such an operation at rmawin_put() or rmawin_accumulate() and sends it
 * so from rmawin_complete().
 *
 * Cases: puts of 1 to RMAWIN_EPOCH_OP_MAX bytes and accumulates land,
 * exactly, by the time WAIT returns, each one carried (the module's
 * carried_ops counter); what may not be carried (too large, a second
 * operation, a get, an 8-byte accumulate on a same_op window, which the
 * device's atomics apply) still lands, and none is carried; a same_op
 * window's small integers are carried; every argument and state error of the raw flag, each
 * with its errno, and the target's window holds exactly the operations
 * that were accepted.
 */
/* epoch_test.h: the raw descriptors, and every test on both library paths */
#include "epoch_test.h"

#define CO	RMAWIN_OP_F_EPOCH_COMPLETE
#define C_LEN	2048
#define C_ROUNDS 24
#define C_ACC	1024	/* int64[56] the accumulate rounds add to: RMAWIN_EPOCH_OP_MAX bytes */
#define C_NACC	(RMAWIN_EPOCH_OP_MAX / 8)

RMAWIN_TEST_FEATURE(feature_complete_op, RMAWIN_FEAT_COMPLETE_OP)

/*
 * Run @fn on two ranks: the operations carried meanwhile (the module's
 * carried_ops), or -1 if a rank failed or there is no such counter.
 */
static long carried_run(struct __test_metadata *_metadata,
			int (*fn)(struct rmawin_ep *ep, void *arg))
{
	long before = rmawin_stat("carried_ops");

	if (before < 0) {
		TH_LOG("no counter carried_ops");
		return -1;
	}
	if (rmawin_test_run_eps(_metadata, 2, fn, NULL, 60) != 2)
		return -1;
	return rmawin_stat("carried_ops") - before;
}

/* ---- carried operations land ---------------------------------------------- */

/* Round @round's put: its length and offset (rounds of either rank alike) */
static size_t put_len(int round)
{
	static const size_t lens[] = { 1, 8, 100, RMAWIN_EPOCH_OP_MAX };

	return lens[(round / 2) % 4];
}

static size_t put_off(int round)
{
	return 1 + 3 * (size_t)round;
}

/*
 * The window of the target of @round, as it must be after it: the put
 * rounds' patterns (later ones over earlier ones), the accumulate's sums.
 */
static long expect_window(const unsigned char *mem, int round)
{
	unsigned char want[C_ACC];
	int64_t sums[C_NACC];
	int r, k;

	memset(want, 0, sizeof(want));
	memset(sums, 0, sizeof(sums));
	for (r = round % 2; r <= round; r += 2) {
		if (r % 4 == 3) {
			for (k = 0; k < C_NACC; k++)
				sums[k] += r * 1000 + k;
			continue;
		}
		fill(want + put_off(r), put_len(r), r + 1);
	}
	for (k = 0; k < C_ACC && mem[k] == want[k]; k++)
		;
	if (k < C_ACC)
		return k;
	for (k = 0; k < C_NACC; k++)
		if (((const int64_t *)(mem + C_ACC))[k] != sums[k])
			return C_ACC + 8 * k;
	return -1;
}

/*
 * The ranks take turns: the origin starts an epoch to the other, issues
 * one put (or, every fourth round, one accumulate of 56 int64) and
 * completes; the target posts, waits and checks its whole window.
 */
static int land_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[C_LEN] __attribute__((aligned(8)));
	int me = rmawin_rank(ep), other = !me, round, k;
	unsigned char src[RMAWIN_EPOCH_OP_MAX];
	int64_t add[C_NACC];
	struct rmawin_win *win;
	long at;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, C_LEN, 1, 0, &win));
	for (round = 0; round < C_ROUNDS; round++) {
		if (round % 2 != me) {
			RMAWIN_TEST_TRY(2, rmawin_post(win, &other, 1));
			RMAWIN_TEST_TRY(3, rmawin_wait(win));
			at = expect_window(mem, round);
			if (at >= 0) {
				RMAWIN_TEST_MSG("round %d: byte %ld of the window is wrong", round,
						at);
				return 4;
			}
			continue;
		}
		RMAWIN_TEST_TRY(5, rmawin_start(win, &other, 1));
		if (round % 4 == 3) {
			for (k = 0; k < C_NACC; k++)
				add[k] = round * 1000 + k;
			RMAWIN_TEST_TRY(6, rmawin_accumulate(win, add, C_NACC, RMAWIN_INT64, other,
							     C_ACC, RMAWIN_SUM));
		} else {
			fill(src, put_len(round), round + 1);
			RMAWIN_TEST_TRY(7, rmawin_put(win, src, put_len(round), other,
						      put_off(round)));
		}
		RMAWIN_TEST_TRY(8, rmawin_complete(win));
	}
	RMAWIN_TEST_TRY(9, rmawin_win_free(win));
	return 0;
}

TEST_F(path, carried_ops_land_before_wait)
{
	/* every round's operation went in its COMPLETE */
	EXPECT_EQ(C_ROUNDS, carried_run(_metadata, land_rank));
	expect_end(_metadata);
}

/* ---- what is not carried still lands -------------------------------------- */

/*
 * Epochs the library may not carry, rank 0 to rank 1: a put of
 * RMAWIN_EPOCH_OP_MAX + 1 bytes; two puts; a get; an accumulate on a
 * same_op window; a put after a start of two ranks (ranks 1 and itself).
 * Rank 1 checks each after its WAIT.
 */
static int not_carried_origin(struct rmawin_win *win, struct rmawin_win *same, unsigned char *src)
{
	int one = 1, both[2] = { 1, 0 }, zero = 0;
	int64_t inc = 5;
	unsigned char got[16];

	fill(src, RMAWIN_EPOCH_OP_MAX + 1, 11);
	RMAWIN_TEST_TRY(10, rmawin_start(win, &one, 1));
	RMAWIN_TEST_TRY(11, rmawin_put(win, src, RMAWIN_EPOCH_OP_MAX + 1, 1, 0));
	RMAWIN_TEST_TRY(12, rmawin_complete(win));
	RMAWIN_TEST_TRY(13, rmawin_start(win, &one, 1));
	RMAWIN_TEST_TRY(14, rmawin_put(win, src, 8, 1, 600));
	RMAWIN_TEST_TRY(15, rmawin_put(win, src + 8, 8, 1, 608));
	RMAWIN_TEST_TRY(16, rmawin_complete(win));
	RMAWIN_TEST_TRY(17, rmawin_start(win, &one, 1));
	RMAWIN_TEST_TRY(18, rmawin_get(win, got, 16, 1, 700));
	RMAWIN_TEST_TRY(19, rmawin_complete(win));
	if (check_pat(got, 16, 12) >= 0) {
		RMAWIN_TEST_MSG("the get read the wrong bytes");
		return 20;
	}
	RMAWIN_TEST_TRY(21, rmawin_start(same, &one, 1));
	RMAWIN_TEST_TRY(22, rmawin_accumulate(same, &inc, 1, RMAWIN_INT64, 1, 0, RMAWIN_SUM));
	RMAWIN_TEST_TRY(23, rmawin_complete(same));
	RMAWIN_TEST_TRY(24, rmawin_post(win, &zero, 1));
	RMAWIN_TEST_TRY(25, rmawin_start(win, both, 2));
	RMAWIN_TEST_TRY(26, rmawin_put(win, src, 8, 1, 800));
	RMAWIN_TEST_TRY(27, rmawin_complete(win));
	return rmawin_wait(win) ? 28 : 0;
}

static int not_carried_target(struct rmawin_win *win, struct rmawin_win *same,
			      unsigned char *mem, int64_t *counter)
{
	unsigned char want[RMAWIN_EPOCH_OP_MAX + 1];
	int zero = 0, round;

	fill(want, sizeof(want), 11);
	fill(mem + 700, 16, 12);
	for (round = 0; round < 3; round++) {
		RMAWIN_TEST_TRY(30, rmawin_post(win, &zero, 1));
		RMAWIN_TEST_TRY(31, rmawin_wait(win));
	}
	if (memcmp(mem, want, sizeof(want)) || memcmp(mem + 600, want, 16)) {
		RMAWIN_TEST_MSG("a put that was not carried did not land");
		return 32;
	}
	RMAWIN_TEST_TRY(33, rmawin_post(same, &zero, 1));
	RMAWIN_TEST_TRY(34, rmawin_wait(same));
	if (*counter != 12) {
		RMAWIN_TEST_MSG("the same_op accumulate: %lld, want 12", (long long)*counter);
		return 35;
	}
	RMAWIN_TEST_TRY(36, rmawin_post(win, &zero, 1));
	RMAWIN_TEST_TRY(37, rmawin_wait(win));
	if (memcmp(mem + 800, want, 8)) {
		RMAWIN_TEST_MSG("the put of a two-target epoch did not land");
		return 38;
	}
	return 0;
}

static int not_carried_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[C_LEN];
	static int64_t counter = 7;
	unsigned char src[RMAWIN_EPOCH_OP_MAX + 1];
	struct rmawin_win *win, *same;
	int ret;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, C_LEN, 1, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, &counter, 8, 8, RMAWIN_WIN_SAME_OP, &same));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	if (rmawin_rank(ep) == 0)
		ret = not_carried_origin(win, same, src);
	else
		ret = not_carried_target(win, same, mem, &counter);
	if (ret)
		return ret;
	RMAWIN_TEST_TRY(4, rmawin_win_free(same));
	RMAWIN_TEST_TRY(5, rmawin_win_free(win));
	return 0;
}

TEST_F(path, what_is_not_carried_still_lands)
{
	EXPECT_EQ(0, carried_run(_metadata, not_carried_rank));
	expect_end(_metadata);
}

/*
 * On a same_op window the target's CPU applies integers smaller than 8
 * bytes (no RMAWIN_WIN_NIC_SMALL_INTS): an int8 accumulate there is
 * carried, and lands.
 */
static int small_ints_rank(struct rmawin_ep *ep, void *arg)
{
	static int8_t bytes[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	int8_t add[8] = { 10, 20, 30, 40, 50, 60, 70, -80 };
	int me = rmawin_rank(ep), other = !me, k;
	struct rmawin_win *win;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, bytes, sizeof(bytes), 1, RMAWIN_WIN_SAME_OP,
					     &win));
	if (me == 0) {
		RMAWIN_TEST_TRY(2, rmawin_start(win, &other, 1));
		RMAWIN_TEST_TRY(3, rmawin_accumulate(win, add, 8, RMAWIN_INT8, other, 0,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(4, rmawin_complete(win));
	} else {
		RMAWIN_TEST_TRY(5, rmawin_post(win, &other, 1));
		RMAWIN_TEST_TRY(6, rmawin_wait(win));
		for (k = 0; k < 8; k++)
			if (bytes[k] != (int8_t)(k + 1 + add[k])) {
				RMAWIN_TEST_MSG("byte %d is %d, want %d", k, bytes[k],
						(int8_t)(k + 1 + add[k]));
				return 7;
			}
	}
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	return 0;
}

TEST_F(path, same_op_small_ints_are_carried)
{
	EXPECT_EQ(1, carried_run(_metadata, small_ints_rank));
	expect_end(_metadata);
}

/* ---- the raw flag's errors ------------------------------------------------- */

/*
 * Rank 0's errors in an access epoch to rank 1 alone, each of which
 * leaves the epoch open (@ro: read-only memory, @gone: unmapped).
 * Returns whether a check failed.
 */
static int errors_in_epoch(struct rmawin_ep *ep, __u32 id, unsigned char *v, void *gone)
{
	struct rmawin_op_desc two[2];
	int64_t one = 1, r;
	int bad = 0;

	/* operations that cannot be carried */
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_GET, id, 1, CO, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT_NOTIFY, id, 1, CO, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, CO, RMAWIN_ACC_SUM,
						RMAWIN_TYPE_INT64, &one, 8, 0, &r, NULL)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eacc(RMAWIN_OP_CAS, id, 1, CO, 0, RMAWIN_TYPE_INT64,
						&one, 8, 0, &r, &one)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, CO, v, 0, 0)));
	/* to itself, to a rank outside the epoch, to no rank */
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 0, CO, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 2, CO, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 3, CO, v, 8, 0)));
	/* with another flag, or not alone */
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, CO | SH, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, 0x8, v, 8, 0)));
	two[0] = rmawin_test_op(RMAWIN_OP_PUT, id, 1, v, 8, 0);
	two[1] = eop(RMAWIN_OP_PUT, id, 1, CO, v, 8, 8);
	RMAWIN_TEST_WANT(-EINVAL, rma(ep, two, 2));
	/* fields the operation has anyway */
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eacc(RMAWIN_OP_ACC, id, 1, CO, RMAWIN_ACC_BAND,
						RMAWIN_TYPE_DOUBLE, v, 8, 0, NULL, NULL)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eacc(RMAWIN_OP_PUT, id, 1, CO, RMAWIN_ACC_SUM,
						RMAWIN_TYPE_INT64, v, 8, 0, NULL, NULL)));
	RMAWIN_TEST_WANT(-ENOENT, rma1(ep, eop(RMAWIN_OP_PUT, id + 1000, 1, CO, v, 8, 0)));
	/* too large, out of range, an origin that is not there */
	RMAWIN_TEST_WANT(-EMSGSIZE, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, CO, v,
						 RMAWIN_EPOCH_OP_MAX + 1, 0)));
	RMAWIN_TEST_WANT(-ERANGE, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, CO, v, 8, C_LEN - 4)));
	RMAWIN_TEST_WANT(-ERANGE, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, CO, v, 8, ~0ULL)));
	RMAWIN_TEST_WANT(-EFAULT, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, CO, gone, 8, 0)));
	RMAWIN_TEST_WANT(-EFAULT, rma1(ep, eacc(RMAWIN_OP_ACC, id, 1, CO, RMAWIN_ACC_SUM,
						RMAWIN_TYPE_INT64, gone, 8, 0, NULL, NULL)));
	return bad;
}

/* Rank 1's window after the first epoch: the one put accepted, 16 bytes at 64 */
static int errors_landed(const unsigned char *mem, const unsigned char *v)
{
	unsigned char want[C_LEN];

	memset(want, 0, sizeof(want));
	memcpy(want + 64, v, 16);
	if (memcmp(mem, want, sizeof(want))) {
		RMAWIN_TEST_MSG("the window holds more than the carried put");
		return 1;
	}
	return 0;
}

/*
 * Rank 0 drives raw descriptors at rank 1's windows, which ranks 1 and 2
 * expose to it: outside an epoch; in an epoch to rank 1 every error, then
 * one carried put (to 64), after which the epoch is over (COMPLETE:
 * -EPERM); in an epoch to ranks 1 and 2; on a same_op window, an
 * accumulate (-EOPNOTSUPP) and a put (carried, to 8).  Rank 1 then checks
 * that exactly the carried put landed.
 */
static int errors_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[C_LEN];
	static int64_t counter[2];
	int me = rmawin_rank(ep), zero = 0, one = 1, two[2] = { 1, 2 }, bad = 0;
	struct rmawin_win *win, *same;
	unsigned char v[RMAWIN_EPOCH_OP_MAX + 1];
	int64_t inc = 3;
	__u32 id, sid;
	void *gone;

	(void)arg;
	fill(v, sizeof(v), 5);
	gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (gone == MAP_FAILED || munmap(gone, 4096))
		return 1;
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem, C_LEN, 1, 0, &win));
	RMAWIN_TEST_TRY(3, win_id(ep, NULL, 0, &id));
	RMAWIN_TEST_TRY(4, rmawin_win_create(ep, counter, sizeof(counter), 1, RMAWIN_WIN_SAME_OP,
					     &same));
	RMAWIN_TEST_TRY(5, win_id(ep, &id, 1, &sid));
	RMAWIN_TEST_TRY(6, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_WANT(-EPERM, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, CO, v, 8, 64)));
		RMAWIN_TEST_TRY(7, rmawin_start(win, &one, 1));
		bad |= errors_in_epoch(ep, id, v, gone);
		RMAWIN_TEST_WANT(0, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, CO, v, 16, 64)));
		/* the carried put ended it: nothing is left to complete */
		RMAWIN_TEST_WANT(-EPERM, rmawin_complete(win));
		RMAWIN_TEST_WANT(-EPERM, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, CO, v, 8, 64)));
		RMAWIN_TEST_TRY(8, rmawin_start(win, two, 2));
		RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, CO, v, 8, 128)));
		RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 2, CO, v, 8, 128)));
		RMAWIN_TEST_TRY(9, rmawin_complete(win));
		RMAWIN_TEST_TRY(10, rmawin_start(same, &one, 1));
		RMAWIN_TEST_WANT(-EOPNOTSUPP, rma1(ep, eacc(RMAWIN_OP_ACC, sid, 1, CO,
							    RMAWIN_ACC_SUM, RMAWIN_TYPE_INT64,
							    &inc, 8, 0, NULL, NULL)));
		RMAWIN_TEST_WANT(0, rma1(ep, eop(RMAWIN_OP_PUT, sid, 1, CO, &inc, 8, 8)));
		RMAWIN_TEST_WANT(-EPERM, rmawin_complete(same));
	} else {
		if (me == 1) {
			RMAWIN_TEST_TRY(11, rmawin_post(win, &zero, 1));
			RMAWIN_TEST_TRY(12, rmawin_wait(win));
			bad |= errors_landed(mem, v);
		}
		/* the epoch to ranks 1 and 2 */
		RMAWIN_TEST_TRY(13, rmawin_post(win, &zero, 1));
		RMAWIN_TEST_TRY(14, rmawin_wait(win));
		if (me == 1) {
			RMAWIN_TEST_TRY(15, rmawin_post(same, &zero, 1));
			RMAWIN_TEST_TRY(16, rmawin_wait(same));
			if (counter[0] != 0 || counter[1] != 3) {
				RMAWIN_TEST_MSG("same_op window: %lld %lld, want 0 3",
						(long long)counter[0], (long long)counter[1]);
				bad = 1;
			}
		}
	}
	RMAWIN_TEST_TRY(18, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(19, rmawin_win_free(same));
	RMAWIN_TEST_TRY(20, rmawin_win_free(win));
	return bad ? 21 : 0;
}

TEST_F_TIMEOUT(path, errors_each_with_its_errno, 90)
{
	EXPECT_EQ(3, rmawin_test_run_eps(_metadata, 3, errors_rank, NULL, 80));
	expect_end(_metadata);
}

TEST_HARNESS_MAIN
