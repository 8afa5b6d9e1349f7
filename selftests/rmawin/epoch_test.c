// SPDX-License-Identifier: GPL-2.0
/*
 * One-message lock epochs: an operation descriptor with
 * RMAWIN_OP_F_EPOCH_SHARED or RMAWIN_OP_F_EPOCH_EXCLUSIVE, alone in an
 * RMAWIN_IOC_RMA, is a whole passive-target epoch that the target's
 * kernel locks, applies and unlocks; and librmawin's lazy lock
 * (rmawin_win_set_lazy_lock()), which sends a lock epoch of one small
 * operation that way.
 *
 * The raw descriptors go to windows created through the library, so that
 * the library's own locks and operations can set the scene and check the
 * result; their kernel id is the one WIN_INFO answers for (win_id()).
 * Cases: every operation, exclusive and shared, lands (or fetches) what
 * it should; a target's lock that is held gives -EAGAIN and changes
 * nothing, and the same operation works once it is free; every argument
 * and state error with its errno; an epoch, raw or lazy, is one message.
 * epoch_atomic_test.c has the same_op window's and the shared counters'
 * cases, lazy_lock_test.c the rest of the lazy lock's.
 */
#include "epoch_test.h"

RMAWIN_TEST_FEATURE(feature_epoch_op, RMAWIN_FEAT_EPOCH_OP)

/* ---- every operation as an epoch ------------------------------------------ */

/* Where ops_rank()'s operations land in rank 1's 1024-byte window (unit 1) */
#define W_LEN	1024
#define O_PEX	0	/* put, exclusive: 100 bytes of pattern 1 */
#define O_PSH	128	/* put, shared: 100 bytes of pattern 2 */
#define O_GSRC	256	/* 128 bytes of pattern 9, the target's own, for the gets */
#define O_ACC	384	/* int32[4] {10, 20, 30, 40}: ACC SUM {1, -2, 3, -4}, then {100 x4} */
#define O_GACC	400	/* int32[2] {5, 6}: GET_ACC SUM {1, 1}, then {2, 2} */
#define O_FOP	408	/* int64 1000: FETCH_OP SUM +5, +7, then NO_OP */
#define O_CAS	416	/* int64 42: CAS 42->43, 42->99 (fails), 43->44 */
#define O_MAX	512	/* put of RMAWIN_EPOCH_OP_MAX bytes of pattern 3 */

/* Rank 1's window before (@after 0) and after ops_rank()'s operations */
static void ops_image(unsigned char *m, int after)
{
	int32_t acc[4] = { 10, 20, 30, 40 }, gacc[2] = { 5, 6 };
	int32_t acc_end[4] = { 111, 118, 133, 136 }, gacc_end[2] = { 8, 9 };
	int64_t fop = after ? 1012 : 1000, cas = after ? 44 : 42;

	memset(m, 0, W_LEN);
	fill(m + O_GSRC, 128, 9);
	memcpy(m + O_ACC, after ? acc_end : acc, sizeof(acc));
	memcpy(m + O_GACC, after ? gacc_end : gacc, sizeof(gacc));
	memcpy(m + O_FOP, &fop, 8);
	memcpy(m + O_CAS, &cas, 8);
	if (after) {
		fill(m + O_PEX, 100, 1);
		fill(m + O_PSH, 100, 2);
		fill(m + O_MAX, RMAWIN_EPOCH_OP_MAX, 3);
	}
}

/* First byte where @m differs from ops_image(after), or -1 */
static long ops_diff(const unsigned char *m, int after)
{
	static unsigned char want[W_LEN];
	int i;

	ops_image(want, after);
	for (i = 0; i < W_LEN; i++)
		if (m[i] != want[i])
			return i;
	return -1;
}

/*
 * ops_rank()'s puts, and its gets of what they wrote and of the target's own
 * bytes.  Return: 0, or the step that failed, as the rank's own steps; a
 * failed check sets *@failed and goes on, as it would in the rank.
 */
static int ops_puts_gets(struct rmawin_ep *ep, __u32 id, int *failed)
{
	unsigned char p1[100], p2[100], back[100], g[64];
	int bad = 0;
	long at;

	fill(p1, sizeof(p1), 1);
	fill(p2, sizeof(p2), 2);
	/* put, and a get of what it wrote: the put was done when its call returned */
	RMAWIN_TEST_TRY(4, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, p1, 100, O_PEX)));
	RMAWIN_TEST_TRY(5, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, SH, p2, 100, O_PSH)));
	memset(back, 0, sizeof(back));
	RMAWIN_TEST_TRY(6, rma1(ep, eop(RMAWIN_OP_GET, id, 1, EX, back, 100, O_PEX)));
	at = check_pat(back, 100, 1);
	CHECK(at < 0, "exclusive get of the exclusive put: byte %ld is %#x, want %#x",
	      at, back[at], pat(1, at));
	memset(back, 0, sizeof(back));
	RMAWIN_TEST_TRY(7, rma1(ep, eop(RMAWIN_OP_GET, id, 1, SH, back, 100, O_PSH)));
	at = check_pat(back, 100, 2);
	CHECK(at < 0, "shared get of the shared put: byte %ld is %#x, want %#x",
	      at, back[at], pat(2, at));
	/* gets of the target's own bytes */
	memset(g, 0, sizeof(g));
	RMAWIN_TEST_TRY(8, rma1(ep, eop(RMAWIN_OP_GET, id, 1, SH, g, 64, O_GSRC)));
	at = check_pat(g, 64, 9);
	CHECK(at < 0, "shared get: byte %ld is %#x, want %#x", at, g[at], pat(9, at));
	memset(g, 0, sizeof(g));
	RMAWIN_TEST_TRY(9, rma1(ep, eop(RMAWIN_OP_GET, id, 1, EX, g, 64, O_GSRC + 64)));
	for (at = 0; at < 64 && g[at] == pat(9, 64 + at); at++)
		;
	CHECK(at == 64, "exclusive get: byte %ld is %#x, want %#x", at, g[at],
	      pat(9, 64 + at));
	*failed |= bad;
	return 0;
}

/*
 * ops_rank()'s accumulate family: accumulate, get_accumulate, fetch_and_op
 * and compare_and_swap, each exclusive and shared, and what each fetched.
 * Returns as ops_puts_gets() does.
 */
static int ops_atomics(struct rmawin_ep *ep, __u32 id, int *failed)
{
	int32_t a1[4] = { 1, -2, 3, -4 }, a2[4] = { 100, 100, 100, 100 };
	int32_t ga1[2] = { 1, 1 }, ga2[2] = { 2, 2 }, gr[2];
	int64_t five = 5, seven = 7, fr, c42 = 42, c43 = 43, n43 = 43, n44 = 44, n99 = 99, cr;
	int bad = 0;

	/* accumulate SUM int32 */
	RMAWIN_TEST_TRY(10, rma1(ep, eacc(RMAWIN_OP_ACC, id, 1, EX, RMAWIN_ACC_SUM,
					   RMAWIN_TYPE_INT32, a1, 16, O_ACC, NULL, NULL)));
	RMAWIN_TEST_TRY(11, rma1(ep, eacc(RMAWIN_OP_ACC, id, 1, SH, RMAWIN_ACC_SUM,
					   RMAWIN_TYPE_INT32, a2, 16, O_ACC, NULL, NULL)));
	/* get_accumulate SUM int32 */
	gr[0] = gr[1] = -1;
	RMAWIN_TEST_TRY(12, rma1(ep, eacc(RMAWIN_OP_GET_ACC, id, 1, EX, RMAWIN_ACC_SUM,
					   RMAWIN_TYPE_INT32, ga1, 8, O_GACC, gr, NULL)));
	CHECK(gr[0] == 5 && gr[1] == 6, "exclusive get_accumulate fetched %d %d, want 5 6",
	      gr[0], gr[1]);
	gr[0] = gr[1] = -1;
	RMAWIN_TEST_TRY(13, rma1(ep, eacc(RMAWIN_OP_GET_ACC, id, 1, SH, RMAWIN_ACC_SUM,
					   RMAWIN_TYPE_INT32, ga2, 8, O_GACC, gr, NULL)));
	CHECK(gr[0] == 6 && gr[1] == 7, "shared get_accumulate fetched %d %d, want 6 7",
	      gr[0], gr[1]);
	/* fetch_and_op SUM int64, then NO_OP */
	fr = -1;
	RMAWIN_TEST_TRY(14, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, EX, RMAWIN_ACC_SUM,
					   RMAWIN_TYPE_INT64, &five, 8, O_FOP, &fr, NULL)));
	CHECK(fr == 1000, "exclusive fetch_and_op fetched %lld, want 1000", (long long)fr);
	fr = -1;
	RMAWIN_TEST_TRY(15, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, SH, RMAWIN_ACC_SUM,
					   RMAWIN_TYPE_INT64, &seven, 8, O_FOP, &fr,
					   NULL)));
	CHECK(fr == 1005, "shared fetch_and_op fetched %lld, want 1005", (long long)fr);
	fr = -1;
	RMAWIN_TEST_TRY(16, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, EX, RMAWIN_ACC_NO_OP,
					   RMAWIN_TYPE_INT64, &five, 8, O_FOP, &fr, NULL)));
	CHECK(fr == 1012, "fetch_and_op NO_OP fetched %lld, want 1012", (long long)fr);
	/* compare_and_swap int64: a swap, a failed compare, a swap */
	cr = -1;
	RMAWIN_TEST_TRY(17, rma1(ep, eacc(RMAWIN_OP_CAS, id, 1, EX, 0, RMAWIN_TYPE_INT64,
					   &n43, 8, O_CAS, &cr, &c42)));
	CHECK(cr == 42, "exclusive compare_and_swap fetched %lld, want 42", (long long)cr);
	cr = -1;
	RMAWIN_TEST_TRY(18, rma1(ep, eacc(RMAWIN_OP_CAS, id, 1, SH, 0, RMAWIN_TYPE_INT64,
					   &n99, 8, O_CAS, &cr, &c42)));
	CHECK(cr == 43, "shared compare_and_swap fetched %lld, want 43", (long long)cr);
	cr = -1;
	RMAWIN_TEST_TRY(19, rma1(ep, eacc(RMAWIN_OP_CAS, id, 1, EX, 0, RMAWIN_TYPE_INT64,
					   &n44, 8, O_CAS, &cr, &c43)));
	CHECK(cr == 43, "second compare_and_swap fetched %lld, want 43", (long long)cr);
	*failed |= bad;
	return 0;
}

/*
 * Rank 0 issues every operation to rank 1 as an exclusive and as a shared
 * epoch: each call returns with its put applied (the next epoch's get reads
 * it back), its get's data and its fetched values in place; a locked get of
 * the whole window, and rank 1 itself, see exactly the expected bytes.
 */
static int ops_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[W_LEN], whole[W_LEN];
	unsigned char p3[RMAWIN_EPOCH_OP_MAX];
	int me = rmawin_rank(ep), bad = 0, ret;
	struct rmawin_win *win;
	long at;
	__u32 id;

	(void)arg;
	if (me == 1)
		ops_image(mem, 0);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, W_LEN, 1, 0, &win));
	RMAWIN_TEST_TRY(2, win_id(ep, NULL, 0, &id));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	if (me == 0) {
		ret = ops_puts_gets(ep, id, &bad);
		if (ret)
			return ret;
		ret = ops_atomics(ep, id, &bad);
		if (ret)
			return ret;
		/* the largest epoch operation */
		fill(p3, sizeof(p3), 3);
		RMAWIN_TEST_TRY(20, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, p3,
						  RMAWIN_EPOCH_OP_MAX, O_MAX)));
		/* the whole window through an ordinary lock epoch */
		RMAWIN_TEST_TRY(21, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
		RMAWIN_TEST_TRY(22, rmawin_get(win, whole, W_LEN, 1, 0));
		RMAWIN_TEST_TRY(23, rmawin_unlock(win, 1));
		at = ops_diff(whole, 1);
		CHECK(at < 0, "locked get of rank 1's window: byte %ld differs (%#x)", at,
		      whole[at]);
	}
	RMAWIN_TEST_TRY(24, rmawin_barrier(ep));
	if (me == 1) {
		at = ops_diff(mem, 1);
		CHECK(at < 0, "rank 1's own window: byte %ld is %#x", at, mem[at]);
	} else {
		/* nothing came to the origin's window */
		CHECK(rmawin_test_check_fill(mem, W_LEN, 0) < 0, "rank 0's window was written");
	}
	RMAWIN_TEST_TRY(25, rmawin_win_free(win));
	return bad ? 26 : 0;
}

TEST_F_TIMEOUT(path, every_op_as_exclusive_and_shared_epoch, 90)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, ops_rank, NULL, 80));
	expect_end(_metadata);
}

/* ---- one message ------------------------------------------------------------ */

/* What msgs_rank() measured: control messages rank 0's endpoint sent for each epoch */
enum { M_PUT, M_GET, M_FOP, M_LAZY_PUT, M_LAZY_GET, M_LAZY_FOP, M_LAZY_EMPTY, M_EAGER, M_N };
static const char *const m_names[M_N] = {
	"exclusive epoch put", "shared epoch get", "exclusive epoch fetch_and_op",
	"lazy lock, put, unlock", "lazy lock, get, unlock", "lazy lock, fetch_and_op, unlock",
	"lazy lock, unlock", "lock, put, unlock",
};
static long *msgs;

/*
 * Rank 0 counts the control messages its endpoint sends (ctrl_msgs) for
 * each of its epochs to rank 1 while rank 1 waits in a barrier: an epoch
 * operation and a lazy lock epoch of one operation are one message, a lazy
 * epoch with nothing in it none, and the data of each is right.
 */
static int msgs_rank(struct rmawin_ep *ep, void *arg)
{
	static int64_t mem[16];
	int64_t v[4] = { 11, 12, 13, 14 }, g[4], one = 1, r;
	int me = rmawin_rank(ep), bad = 0, i;
	struct rmawin_win *win;
	long before;
	__u32 id;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	RMAWIN_TEST_TRY(2, win_id(ep, NULL, 0, &id));
	RMAWIN_TEST_TRY(3, rmawin_win_set_lazy_lock(win, 1));
	RMAWIN_TEST_TRY(4, rmawin_barrier(ep));
#define MEASURE(m, call)							\
	do {									\
		before = rmawin_test_ep_stat("ctrl_msgs");					\
		RMAWIN_TEST_TRY(10 + (m), (call));				\
		msgs[m] = before < 0 ? -1 : rmawin_test_ep_stat("ctrl_msgs") - before;	\
	} while (0)
	if (me == 0) {
		MEASURE(M_PUT, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, v, 32, 0)));
		memset(g, 0, sizeof(g));
		MEASURE(M_GET, rma1(ep, eop(RMAWIN_OP_GET, id, 1, SH, g, 32, 0)));
		CHECK(!memcmp(g, v, 32), "epoch get: wrong data");
		r = -1;
		MEASURE(M_FOP, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, EX, RMAWIN_ACC_SUM,
					     RMAWIN_TYPE_INT64, &one, 8, 8, &r, NULL)));
		CHECK(r == 0, "epoch fetch_and_op fetched %lld, want 0", (long long)r);

		before = rmawin_test_ep_stat("ctrl_msgs");
		RMAWIN_TEST_TRY(20, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		RMAWIN_TEST_TRY(21, rmawin_put(win, v, 32, 1, 4));
		RMAWIN_TEST_TRY(22, rmawin_unlock(win, 1));
		msgs[M_LAZY_PUT] = before < 0 ? -1 : rmawin_test_ep_stat("ctrl_msgs") - before;

		memset(g, 0, sizeof(g));
		before = rmawin_test_ep_stat("ctrl_msgs");
		RMAWIN_TEST_TRY(23, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
		RMAWIN_TEST_TRY(24, rmawin_get(win, g, 32, 1, 4));
		RMAWIN_TEST_TRY(25, rmawin_unlock(win, 1));
		msgs[M_LAZY_GET] = before < 0 ? -1 : rmawin_test_ep_stat("ctrl_msgs") - before;
		CHECK(!memcmp(g, v, 32), "lazy get: wrong data");

		r = -1;
		before = rmawin_test_ep_stat("ctrl_msgs");
		RMAWIN_TEST_TRY(26, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		RMAWIN_TEST_TRY(27, rmawin_fetch_and_op(win, &one, &r, RMAWIN_INT64, 1, 8,
							RMAWIN_SUM));
		RMAWIN_TEST_TRY(28, rmawin_unlock(win, 1));
		msgs[M_LAZY_FOP] = before < 0 ? -1 : rmawin_test_ep_stat("ctrl_msgs") - before;
		CHECK(r == 1, "lazy fetch_and_op fetched %lld, want 1", (long long)r);

		before = rmawin_test_ep_stat("ctrl_msgs");
		RMAWIN_TEST_TRY(29, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		RMAWIN_TEST_TRY(30, rmawin_unlock(win, 1));
		msgs[M_LAZY_EMPTY] = before < 0 ? -1 : rmawin_test_ep_stat("ctrl_msgs") - before;

		RMAWIN_TEST_TRY(31, rmawin_win_set_lazy_lock(win, 0));
		before = rmawin_test_ep_stat("ctrl_msgs");
		RMAWIN_TEST_TRY(32, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		RMAWIN_TEST_TRY(33, rmawin_put(win, v, 32, 1, 12));
		RMAWIN_TEST_TRY(34, rmawin_unlock(win, 1));
		msgs[M_EAGER] = before < 0 ? -1 : rmawin_test_ep_stat("ctrl_msgs") - before;
	}
#undef MEASURE
	RMAWIN_TEST_TRY(40, rmawin_barrier(ep));
	if (me == 1) {
		/* v at words 0, 4 and 12, the counter at word 8 */
		for (i = 0; i < 16; i++) {
			int64_t want = i == 8 ? 2 : (i >= 9 && i < 12) ? 0 : v[i % 4];

			CHECK(mem[i] == want, "rank 1's word %d: %lld, want %lld", i,
			      (long long)mem[i], (long long)want);
		}
	}
	RMAWIN_TEST_TRY(41, rmawin_win_free(win));
	return bad ? 42 : 0;
}

TEST_F_TIMEOUT(path, an_epoch_is_one_message, 90)
{
	int m;

	msgs = rmawin_test_shared(M_N * sizeof(*msgs));
	ASSERT_NE(NULL, msgs);
	for (m = 0; m < M_N; m++)
		msgs[m] = -2;
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, msgs_rank, NULL, 80));
	for (m = 0; m < M_N; m++) {
		if (m == M_EAGER) {
			EXPECT_LT(1, msgs[m]) TH_LOG("%s: %ld messages, want more than 1",
						     m_names[m], msgs[m]);
		} else {
			EXPECT_EQ(m == M_LAZY_EMPTY ? 0 : 1, msgs[m])
				TH_LOG("%s: %ld messages sent", m_names[m], msgs[m]);
		}
	}
	expect_end(_metadata);
}

/* ---- the target's lock is not free: -EAGAIN ------------------------------ */

#define B_LEN	256
#define B_CNT	64	/* int64 counter, 7 at first */

/*
 * busy_rank()'s rank 0 while rank 1 holds its window's lock exclusively:
 * every epoch operation, exclusive or shared, is -EAGAIN, writes none of
 * rank 0's get and result buffers and counts as no error.  @v: the put's
 * data.  Returns whether a check failed.
 */
static int busy_refused(struct rmawin_ep *ep, __u32 id, const unsigned char *v)
{
	unsigned char buf[32];
	int64_t one = 1, r;
	int bad = 0;
	long errors;

	errors = rmawin_test_ep_stat("errors");
	CHECK(errors >= 0, "no errors counter in the endpoint's debugfs file");
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, v, 32, 0)));
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, SH, v, 32, 0)));
	memset(buf, 0x5a, sizeof(buf));
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, eop(RMAWIN_OP_GET, id, 1, EX, buf, 32, B_CNT)));
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, eop(RMAWIN_OP_GET, id, 1, SH, buf, 32, B_CNT)));
	CHECK(rmawin_test_check_fill(buf, sizeof(buf), 0x5a) < 0,
	      "a refused get wrote its buffer");
	r = -1;
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, EX,
						RMAWIN_ACC_SUM, RMAWIN_TYPE_INT64, &one,
						8, B_CNT, &r, NULL)));
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, eacc(RMAWIN_OP_ACC, id, 1, SH, RMAWIN_ACC_SUM,
						RMAWIN_TYPE_INT64, &one, 8, B_CNT,
						NULL, NULL)));
	CHECK(r == -1, "a refused fetch_and_op wrote %lld to its result", (long long)r);
	/* a refusal is the target's answer, not a failed operation */
	CHECK(rmawin_test_ep_stat("errors") == errors,
	      "six refused epochs took the errors counter from %ld to %ld", errors,
	      rmawin_test_ep_stat("errors"));
	return bad;
}

/*
 * busy_rank()'s rank 0 while rank 1 holds its lock shared: an exclusive
 * epoch is -EAGAIN, a shared one goes through.  @w: the puts' data.
 * Returns whether a check failed.
 */
static int busy_shared_held(struct rmawin_ep *ep, __u32 id, const unsigned char *w)
{
	unsigned char buf[32];
	int64_t one = 1, r;
	int bad = 0;

	/* held shared: exclusive refused, shared goes through */
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, w, 24, 100)));
	r = -1;
	RMAWIN_TEST_WANT(-EAGAIN, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, EX,
						RMAWIN_ACC_SUM, RMAWIN_TYPE_INT64, &one,
						8, B_CNT, &r, NULL)));
	CHECK(r == -1, "a refused fetch_and_op wrote %lld to its result", (long long)r);
	RMAWIN_TEST_WANT(0, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, SH, w, 24, 128)));
	memset(buf, 0, sizeof(buf));
	RMAWIN_TEST_WANT(0, rma1(ep, eop(RMAWIN_OP_GET, id, 1, SH, buf, 32, 0)));
	CHECK(check_pat(buf, 32, 4) < 0, "shared get beside a shared holder: wrong data");
	return bad;
}

/*
 * Rank 1 holds its own window's lock exclusively: every epoch operation
 * of rank 0, exclusive or shared, is -EAGAIN and changes nothing, neither
 * the target nor rank 0's get and result buffers; once rank 1 unlocks the
 * same operations work.  Rank 1 holding it shared: an exclusive epoch is
 * -EAGAIN, a shared one works; and after an -EAGAIN rank 0's ordinary lock
 * waits for the holder and its put lands.
 */
static int busy_rank(struct rmawin_ep *ep, void *arg)
{
	static int64_t mem[B_LEN / 8];
	unsigned char v[32], w[24], x[16];
	int64_t one = 1, r, *cnt = &mem[B_CNT / 8];
	int me = rmawin_rank(ep), bad = 0;
	struct rmawin_win *win;
	__u32 id;

	(void)arg;
	*cnt = 7;
	fill(v, sizeof(v), 4);
	fill(w, sizeof(w), 5);
	fill(x, sizeof(x), 6);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, B_LEN, 1, 0, &win));
	RMAWIN_TEST_TRY(2, win_id(ep, NULL, 0, &id));
	if (me == 1)
		RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
	RMAWIN_TEST_TRY(4, rmawin_barrier(ep));
	if (me == 0)
		bad |= busy_refused(ep, id, v);
	RMAWIN_TEST_TRY(5, rmawin_barrier(ep));
	if (me == 1) {
		CHECK(rmawin_test_check_fill((unsigned char *)mem, B_CNT, 0) < 0,
		      "a refused put reached the target");
		CHECK(*cnt == 7, "counter %lld after refused accumulates, want 7",
		      (long long)*cnt);
		RMAWIN_TEST_TRY(6, rmawin_unlock(win, 1));
	}
	RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	if (me == 0) {
		/* free now: the same operations go through */
		RMAWIN_TEST_WANT(0, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, v, 32, 0)));
		r = -1;
		RMAWIN_TEST_WANT(0, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, EX, RMAWIN_ACC_SUM,
						  RMAWIN_TYPE_INT64, &one, 8, B_CNT, &r, NULL)));
		CHECK(r == 7, "fetch_and_op fetched %lld, want 7", (long long)r);
	}
	RMAWIN_TEST_TRY(8, rmawin_barrier(ep));
	if (me == 1) {
		CHECK(check_pat(mem, 32, 4) < 0, "the exclusive put is not at the target");
		CHECK(*cnt == 8, "counter %lld, want 8", (long long)*cnt);
		RMAWIN_TEST_TRY(9, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
	}
	RMAWIN_TEST_TRY(10, rmawin_barrier(ep));
	if (me == 0)
		bad |= busy_shared_held(ep, id, w);
	RMAWIN_TEST_TRY(11, rmawin_barrier(ep));
	if (me == 1) {
		CHECK(rmawin_test_check_fill((unsigned char *)mem + 100, 24, 0) < 0,
		      "the refused exclusive put reached the target");
		CHECK(*cnt == 8, "counter %lld after a refused fetch_and_op, want 8",
		      (long long)*cnt);
		CHECK(check_pat((unsigned char *)mem + 128, 24, 5) < 0,
		      "the shared put is not at the target");
		/* rank 0 is in (or about to be in) an ordinary exclusive lock: let it in */
		sleep_ms(100);
		RMAWIN_TEST_TRY(12, rmawin_unlock(win, 1));
	} else {
		/* after its -EAGAINs, the ordinary lock path: waits for rank 1's unlock */
		RMAWIN_TEST_TRY(13, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		RMAWIN_TEST_TRY(14, rmawin_put(win, x, 16, 1, 200));
		RMAWIN_TEST_TRY(15, rmawin_unlock(win, 1));
	}
	RMAWIN_TEST_TRY(16, rmawin_barrier(ep));
	if (me == 1)
		CHECK(check_pat((unsigned char *)mem + 200, 16, 6) < 0,
		      "the put under the ordinary lock is not at the target");
	RMAWIN_TEST_TRY(17, rmawin_win_free(win));
	return bad ? 18 : 0;
}

TEST_F_TIMEOUT(path, target_lock_held_gives_eagain, 90)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, busy_rank, NULL, 80));
	expect_end(_metadata);
}

/* ---- the errors ------------------------------------------------------------ */

#define E_LEN	1024

/*
 * errors_rank()'s argument errors of an epoch operation: its flags, not
 * alone in the batch, to itself, empty, an opcode that cannot be an epoch,
 * too large.  Returns whether a check failed.
 */
static int errors_args(struct rmawin_ep *ep, __u32 id, unsigned char *v, unsigned char *buf)
{
	struct rmawin_op_desc two[2];
	int64_t one = 1, r;
	int bad = 0;

	/* flags */
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX | SH, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, 0x8, v, 8, 0)));
	/* RMAWIN_OP_F_EPOCH_COMPLETE outside a PSCW epoch (carry_test.c has the rest) */
	RMAWIN_TEST_WANT(-EPERM, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, 0x4, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, SH | 0x4, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, 0x80, v, 8, 0)));
	/* not alone in the batch */
	two[0] = eop(RMAWIN_OP_PUT, id, 1, EX, v, 8, 0);
	two[1] = eop(RMAWIN_OP_PUT, id, 1, EX, v, 8, 8);
	RMAWIN_TEST_WANT(-EINVAL, rma(ep, two, 2));
	two[1] = eop(RMAWIN_OP_GET, id, 1, SH, buf, 8, 8);
	RMAWIN_TEST_WANT(-EINVAL, rma(ep, two, 2));
	/* to itself */
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 0, EX, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_GET, id, 0, SH, buf, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 0, EX,
						RMAWIN_ACC_SUM, RMAWIN_TYPE_INT64, &one,
						8, 0, &r, NULL)));
	/* empty */
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, v, 0, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_GET, id, 1, SH, buf, 0, 0)));
	/* opcodes that cannot be an epoch */
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT_NOTIFY, id, 1, EX, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_FLUSH, id, 1, EX, NULL, 0, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_FLUSH, id, 1, SH, NULL, 0, 0)));
	/* too large: -EMSGSIZE, though the window has room */
	RMAWIN_TEST_WANT(-EMSGSIZE, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, v,
						 RMAWIN_EPOCH_OP_MAX + 1, 0)));
	RMAWIN_TEST_WANT(-EMSGSIZE, rma1(ep, eop(RMAWIN_OP_GET, id, 1, SH, v,
						 RMAWIN_EPOCH_OP_MAX + 1, 0)));
	RMAWIN_TEST_WANT(-EMSGSIZE, rma1(ep, eacc(RMAWIN_OP_ACC, id, 1, EX,
						  RMAWIN_ACC_SUM, RMAWIN_TYPE_INT32, v,
						  RMAWIN_EPOCH_OP_MAX + 4, 0, NULL, NULL)));
	return bad;
}

/*
 * errors_rank()'s ordinary operation errors through an epoch descriptor,
 * and the accumulate fields checked as without the flag.  @ro: read-only
 * memory, @gone: unmapped.  Returns whether a check failed.
 */
static int errors_ordinary(struct rmawin_ep *ep, __u32 id, unsigned char *v,
			   unsigned char *buf, void *ro, void *gone)
{
	int64_t one = 1, r;
	int bad = 0;

	/* the ordinary operation errors */
	RMAWIN_TEST_WANT(-ENOENT, rma1(ep, eop(RMAWIN_OP_PUT, id + 1000, 1, EX, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_PUT, id, 2, EX, v, 8, 0)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eop(RMAWIN_OP_GET, id, -1, SH, buf, 8, 0)));
	RMAWIN_TEST_WANT(-ERANGE, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, v, 100,
					       E_LEN - 99)));
	RMAWIN_TEST_WANT(-ERANGE, rma1(ep, eop(RMAWIN_OP_GET, id, 1, SH, buf, 1, E_LEN)));
	RMAWIN_TEST_WANT(-ERANGE, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, EX,
						RMAWIN_ACC_SUM, RMAWIN_TYPE_INT64, &one,
						8, E_LEN - 4, &r, NULL)));
	RMAWIN_TEST_WANT(-EFAULT, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, gone, 8, 0)));
	RMAWIN_TEST_WANT(-EFAULT, rma1(ep, eop(RMAWIN_OP_GET, id, 1, EX, ro, 8, 0)));
	RMAWIN_TEST_WANT(-EFAULT, rma1(ep, eop(RMAWIN_OP_GET, id, 1, SH, gone, 8, 0)));
	RMAWIN_TEST_WANT(-EFAULT, rma1(ep, eacc(RMAWIN_OP_ACC, id, 1, EX, RMAWIN_ACC_SUM,
						RMAWIN_TYPE_INT32, gone, 8, 0, NULL,
						NULL)));
	RMAWIN_TEST_WANT(-EFAULT, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, EX,
						RMAWIN_ACC_SUM, RMAWIN_TYPE_INT64, &one,
						8, 0, ro, NULL)));
	RMAWIN_TEST_WANT(-EFAULT, rma1(ep, eacc(RMAWIN_OP_CAS, id, 1, EX, 0,
						RMAWIN_TYPE_INT64, &one, 8, 0, &r,
						gone)));
	/* accumulate fields as without the flag */
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, EX,
						RMAWIN_ACC_SUM, RMAWIN_TYPE_INT64, &one,
						4, 0, &r, NULL)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eacc(RMAWIN_OP_ACC, id, 1, SH, RMAWIN_ACC_BAND,
						RMAWIN_TYPE_DOUBLE, v, 8, 0, NULL,
						NULL)));
	RMAWIN_TEST_WANT(-EINVAL, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, EX,
						RMAWIN_ACC_SUM, RMAWIN_TYPE_INT64, &one,
						8, 0, NULL, NULL)));
	return bad;
}

/*
 * What errors_rank() leaves in the windows (@v: what its puts wrote).
 * Returns whether a check failed.
 */
static int errors_windows(const unsigned char *mem, const unsigned char *v, int me)
{
	int bad = 0;

	if (me == 1) {
		unsigned char want[E_LEN];
		long k;

		memset(want, 0, sizeof(want));
		memcpy(want + 640, v, 16);
		memcpy(want + 672, v, 16);
		memcpy(want + 704, v, 8);
		for (k = 0; k < E_LEN && mem[k] == want[k]; k++)
			;
		/* only the puts at 640, 672 and 704 may have landed */
		CHECK(k == E_LEN, "rank 1's window: byte %ld is %#x, want %#x", k, mem[k],
		      want[k]);
	} else {
		CHECK(rmawin_test_check_fill(mem, E_LEN, 0) < 0, "rank 0's window was written");
	}
	return bad;
}

/*
 * Every argument error of an epoch operation, and every epoch of the
 * origin's window that forbids one (-EBUSY), each with its errno; the
 * ordinary operation errors through an epoch descriptor.  Rank 1's window
 * ends with exactly the operations that were accepted.
 */
static int errors_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[E_LEN];
	unsigned char v[E_LEN], buf[64];
	int me = rmawin_rank(ep), other = !me, bad = 0;
	struct rmawin_op_desc two[2];
	struct rmawin_win *win;
	int64_t one = 1, r;
	void *ro, *gone;
	__u32 id;

	(void)arg;
	fill(v, sizeof(v), 7);
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED || gone == MAP_FAILED || munmap(gone, 4096))
		return 1;
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem, E_LEN, 1, 0, &win));
	RMAWIN_TEST_TRY(3, win_id(ep, NULL, 0, &id));
	RMAWIN_TEST_TRY(6, rmawin_barrier(ep));

	if (me == 0) {
		bad |= errors_args(ep, id, v, buf);
		bad |= errors_ordinary(ep, id, v, buf, ro, gone);

		/* -EBUSY: the target's lock held (a lock_all holds it too, below) */
		RMAWIN_TEST_TRY(7, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
		RMAWIN_TEST_WANT(-EBUSY, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, v, 8, 0)));
		RMAWIN_TEST_WANT(-EBUSY, rma1(ep, eop(RMAWIN_OP_GET, id, 1, SH, buf, 8, 0)));
		RMAWIN_TEST_TRY(8, rmawin_unlock(win, 1));
		/* another rank's lock held (here our own): allowed, it lands at 704 */
		RMAWIN_TEST_TRY(9, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		RMAWIN_TEST_WANT(0, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, v, 8, 704)));
		RMAWIN_TEST_TRY(10, rmawin_unlock(win, 0));
		RMAWIN_TEST_TRY(11, rmawin_lock_all(win));
		RMAWIN_TEST_WANT(-EBUSY, rma1(ep, eacc(RMAWIN_OP_FETCH_OP, id, 1, SH,
						       RMAWIN_ACC_SUM, RMAWIN_TYPE_INT64, &one,
						       8, 0, &r, NULL)));
		RMAWIN_TEST_TRY(12, rmawin_unlock_all(win));
	}
	RMAWIN_TEST_TRY(13, rmawin_barrier(ep));

	/* -EBUSY in a PSCW access epoch, on both ranks */
	RMAWIN_TEST_TRY(14, rmawin_post(win, &other, 1));
	RMAWIN_TEST_TRY(15, rmawin_start(win, &other, 1));
	RMAWIN_TEST_WANT(-EBUSY, rma1(ep, eop(RMAWIN_OP_PUT, id, other, EX, v, 8, 0)));
	RMAWIN_TEST_WANT(-EBUSY, rma1(ep, eop(RMAWIN_OP_GET, id, other, SH, buf, 8, 0)));
	RMAWIN_TEST_TRY(16, rmawin_complete(win));
	RMAWIN_TEST_TRY(17, rmawin_wait(win));

	/* fences: a batch of an ordinary put and an epoch one sends neither */
	RMAWIN_TEST_TRY(18, rmawin_fence(win, 0));
	if (me == 0) {
		two[0] = rmawin_test_op(RMAWIN_OP_PUT, id, 1, v, 16, 600);
		two[1] = eop(RMAWIN_OP_PUT, id, 1, EX, v, 16, 616);
		RMAWIN_TEST_WANT(-EINVAL, rma(ep, two, 2));
		/* a fence epoch with an operation in it: -EBUSY */
		RMAWIN_TEST_WANT(0, rma1(ep, rmawin_test_op(RMAWIN_OP_PUT, id, 1, v, 16, 640)));
		RMAWIN_TEST_WANT(-EBUSY, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, v, 16, 656)));
		RMAWIN_TEST_WANT(-EBUSY, rma1(ep, eop(RMAWIN_OP_GET, id, 1, SH, buf, 8, 0)));
	}
	RMAWIN_TEST_TRY(19, rmawin_fence(win, 0));
	/* the epoch the fence opened has no operation in it yet: allowed */
	if (me == 0)
		RMAWIN_TEST_WANT(0, rma1(ep, eop(RMAWIN_OP_PUT, id, 1, EX, v, 16, 672)));
	RMAWIN_TEST_TRY(20, rmawin_fence(win, RMAWIN_MODE_NOSUCCEED));
	RMAWIN_TEST_TRY(21, rmawin_barrier(ep));

	bad |= errors_windows(mem, v, me);
	RMAWIN_TEST_TRY(23, rmawin_win_free(win));
	munmap(ro, 4096);
	return bad ? 24 : 0;
}

TEST_F_TIMEOUT(path, errors_each_with_its_errno, 90)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, errors_rank, NULL, 80));
	expect_end(_metadata);
}

TEST_HARNESS_MAIN
