// SPDX-License-Identifier: GPL-2.0
/*
 * librmawin's lazy locks (rmawin_win_set_lazy_lock()): a lock epoch of one
 * small operation goes to the target with its lock and unlock in one
 * message (epoch_test.c has those messages' own cases), anything more
 * takes the lock the usual way first.  Cases: each operation of a lazy
 * epoch does what it should, empty and fuller epochs too; the errors of
 * misuse, at once; a get/put counter under lazy exclusive locks from four
 * ranks; a lazy epoch whose target holds its own lock waits for it.
 */
#include "epoch_test.h"


#define L_LEN	256
#define L_GSRC	128	/* 64 bytes of pattern 8, the target's own */
#define L_FOP	200	/* int64 1000 */
#define L_ACC	208	/* int32[2] {10, 20} */
#define L_CAS	216	/* int64 42 */

/* The targets' windows: a pattern to get, a counter, two int32s, a word to swap */
static void lazy_target_init(unsigned char *mem)
{
	int64_t i64;
	int32_t i32[2];

	fill(mem + L_GSRC, 64, 8);
	i64 = 1000;
	memcpy(mem + L_FOP, &i64, 8);
	i32[0] = 10;
	i32[1] = 20;
	memcpy(mem + L_ACC, i32, 8);
	i64 = 42;
	memcpy(mem + L_CAS, &i64, 8);
}

/*
 * Rank 0: a lazy epoch of one operation each, put, get, fetch_and_op,
 * accumulate and compare_and_swap, to rank 1.  Return: 1 if a check failed.
 */
static int lazy_one_op_epochs(struct rmawin_win *win)
{
	unsigned char p[64], g[64];
	int64_t five = 5, r = -1, c42 = 42, n43 = 43, cr = -1;
	int32_t add[2] = { 3, 4 };
	int bad = 0;

	fill(p, sizeof(p), 10);
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
	RMAWIN_TEST_WANT(0, rmawin_put(win, p, 64, 1, 0));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
	memset(g, 0, sizeof(g));
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
	RMAWIN_TEST_WANT(0, rmawin_get(win, g, 64, 1, L_GSRC));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
	CHECK(check_pat(g, 64, 8) < 0, "lazy get: wrong data");
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
	RMAWIN_TEST_WANT(0, rmawin_fetch_and_op(win, &five, &r, RMAWIN_INT64, 1, L_FOP,
						RMAWIN_SUM));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
	CHECK(r == 1000, "lazy fetch_and_op fetched %lld, want 1000", (long long)r);
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
	RMAWIN_TEST_WANT(0, rmawin_accumulate(win, add, 2, RMAWIN_INT32, 1, L_ACC,
					      RMAWIN_SUM));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
	RMAWIN_TEST_WANT(0, rmawin_compare_and_swap(win, &n43, &c42, &cr, RMAWIN_INT64, 1,
						    L_CAS));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
	CHECK(cr == 42, "lazy compare_and_swap fetched %lld, want 42", (long long)cr);
	return bad;
}

/*
 * Rank 0: lazy epochs of other shapes, empty, of two operations, with a
 * flush, and a second lock while one is noted.  Return: 1 if a check failed.
 */
static int lazy_other_epochs(struct rmawin_win *win)
{
	unsigned char q[32], s[16], t[24], g2[32], g3[16];
	int bad = 0;

	fill(q, sizeof(q), 11);
	fill(s, sizeof(s), 12);
	fill(t, sizeof(t), 13);
	/* nothing in it */
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 2));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 2));
	/* two operations: the lock is taken at the second */
	memset(g2, 0, sizeof(g2));
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
	RMAWIN_TEST_WANT(0, rmawin_put(win, q, 32, 1, 64));
	RMAWIN_TEST_WANT(0, rmawin_get(win, g2, 32, 1, 0));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
	CHECK(check_pat(g2, 32, 10) < 0, "get after a put in one lazy epoch: wrong data");
	/* a flush takes the lock; the put is complete after it */
	memset(g3, 0, sizeof(g3));
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
	RMAWIN_TEST_WANT(0, rmawin_put(win, s, 16, 1, 96));
	RMAWIN_TEST_WANT(0, rmawin_flush(win, 1));
	RMAWIN_TEST_WANT(0, rmawin_get(win, g3, 16, 1, 96));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
	CHECK(check_pat(g3, 16, 12) < 0, "get after put and flush: wrong data");
	/* a second lock while one is noted */
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
	RMAWIN_TEST_WANT(0, rmawin_put(win, t, 24, 1, 232));
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_SHARED, 2));
	RMAWIN_TEST_WANT(0, rmawin_put(win, t, 24, 2, 0));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 2));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
	return bad;
}

/*
 * Rank @me's window @mem after rank 0's epochs: at rank 1 every put and
 * operation landed and the gets changed nothing, at rank 2 only the nested
 * epoch's put, and nothing at rank 0.  Return: 1 if a check failed.
 */
static int lazy_epochs_landed(int me, const unsigned char *mem)
{
	int64_t r, cr;
	int32_t i32[2];
	int bad = 0;

	if (me == 1) {
		memcpy(&r, mem + L_FOP, 8);
		memcpy(i32, mem + L_ACC, 8);
		memcpy(&cr, mem + L_CAS, 8);
		CHECK(check_pat(mem, 64, 10) < 0, "the lazy put is not at the target");
		CHECK(check_pat(mem + 64, 32, 11) < 0, "the put of two is not at the target");
		CHECK(check_pat(mem + 96, 16, 12) < 0, "the flushed put is not at the target");
		CHECK(check_pat(mem + L_GSRC, 64, 8) < 0, "a get changed the target");
		CHECK(r == 1005, "counter %lld, want 1005", (long long)r);
		CHECK(i32[0] == 13 && i32[1] == 24, "accumulated %d %d, want 13 24", i32[0],
		      i32[1]);
		CHECK(cr == 43, "compare_and_swap left %lld, want 43", (long long)cr);
		CHECK(check_pat(mem + 232, 24, 13) < 0,
		      "the put before a second lock is not there");
	} else if (me == 2) {
		CHECK(check_pat(mem, 24, 13) < 0, "the put of the second lock is not at rank 2");
		CHECK(rmawin_test_check_fill(mem + 24, L_GSRC - 24, 0) < 0,
		      "rank 2's window has bytes nobody put");
	} else {
		CHECK(rmawin_test_check_fill(mem, L_LEN, 0) < 0, "rank 0's window was written");
	}
	return bad;
}

/*
 * Rank 0 runs lock epochs of one operation under a lazy lock to ranks 1
 * and 2: a put, a get, a fetch_and_op, an accumulate and a
 * compare_and_swap each do what they should; an epoch with nothing in it
 * returns 0; one with a put and a get, one with a flush between, and two
 * nested lock epochs to different ranks do everything.
 */
static int lazy_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[L_LEN];
	int me = rmawin_rank(ep), bad = 0;
	struct rmawin_win *win;

	(void)arg;
	if (me)
		lazy_target_init(mem);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, L_LEN, 1, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_win_set_lazy_lock(win, 1));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	if (me == 0) {
		bad |= lazy_one_op_epochs(win);
		bad |= lazy_other_epochs(win);
	}
	RMAWIN_TEST_TRY(4, rmawin_barrier(ep));
	bad |= lazy_epochs_landed(me, mem);
	RMAWIN_TEST_TRY(5, rmawin_win_free(win));
	return bad ? 6 : 0;
}

TEST_F_TIMEOUT(path, lazy_lock_epochs_do_their_operations, 90)
{
	EXPECT_EQ(3, rmawin_test_run_eps(_metadata, 3, lazy_rank, NULL, 80));
	expect_end(_metadata);
}

/*
 * A lazy lock's misuse gets the errno a held lock's would, at once: its
 * argument errors, -EPERM outside the epoch, -EBUSY to lock twice or fence
 * inside, -ENOLCK to unlock or flush what is not locked; a put refused
 * with -ERANGE leaves nothing to send; and the only good put lands.
 */
static int lazy_misuse_rank(struct rmawin_ep *ep, void *arg)
{
	static int32_t mem[16];
	int32_t v = 0x1234, w = 0x5678, res;
	double d = 1;
	int me = rmawin_rank(ep), bad = 0;
	struct rmawin_win *win;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 4, 0, &win));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_win_set_lazy_lock(NULL, 1));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_win_set_lazy_lock(win, 2));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_win_set_lazy_lock(win, -1));
	RMAWIN_TEST_WANT(0, rmawin_win_set_lazy_lock(win, 1));
	RMAWIN_TEST_WANT(0, rmawin_win_set_lazy_lock(win, 0));
	RMAWIN_TEST_WANT(0, rmawin_win_set_lazy_lock(win, 1));
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, &v, 4, 1, 0));		/* no epoch */
		RMAWIN_TEST_WANT(-ENOLCK, rmawin_unlock(win, 1));
		RMAWIN_TEST_WANT(-ENOLCK, rmawin_flush(win, 1));
		/* no rank 3 */
		RMAWIN_TEST_WANT(-EINVAL, rmawin_lock(win, RMAWIN_LOCK_SHARED, 3));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_lock(win, 7, 1));
		RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		RMAWIN_TEST_WANT(-EBUSY, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));	/* twice */
		/* ranks 2 and 0 are not locked */
		RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, &v, 4, 2, 0));
		RMAWIN_TEST_WANT(-EPERM, rmawin_get(win, &res, 4, 0, 0));
		RMAWIN_TEST_WANT(-ERANGE, rmawin_put(win, &v, 8, 1, 15));
		RMAWIN_TEST_WANT(-ERANGE, rmawin_get(win, &res, 4, 1, 16));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, &d, 1, RMAWIN_DOUBLE, 1, 0,
							    RMAWIN_BAND));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_put(win, &v, 4, 3, 0));
		RMAWIN_TEST_WANT(-ENOLCK, rmawin_flush(win, 2));
		RMAWIN_TEST_WANT(-ENOLCK, rmawin_unlock(win, 2));
		RMAWIN_TEST_WANT(0, rmawin_put(win, &v, 4, 1, 3));
		RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
		RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, &v, 4, 1, 0));		/* epoch over */
		RMAWIN_TEST_WANT(-ENOLCK, rmawin_unlock(win, 1));
		/* refused at once, nothing kept: the unlock has nothing to send */
		RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		RMAWIN_TEST_WANT(-ERANGE, rmawin_put(win, &w, 4, 1, 16));
		RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
		/* fencing inside a (lazy) lock epoch */
		RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_SHARED, 2));
		RMAWIN_TEST_WANT(-EBUSY, rmawin_fence(win, 0));
		RMAWIN_TEST_WANT(0, rmawin_unlock(win, 2));
	}
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	if (me == 1) {
		CHECK(mem[3] == 0x1234, "rank 1's word 3: %#x, want 0x1234", mem[3]);
		mem[3] = 0;
	}
	CHECK(rmawin_test_check_fill((unsigned char *)mem, sizeof(mem), 0) < 0,
	      "rank %d's window has bytes nobody put", me);
	RMAWIN_TEST_TRY(4, rmawin_win_free(win));
	return bad ? 5 : 0;
}

TEST_F_TIMEOUT(path, lazy_lock_misuse_errors, 90)
{
	EXPECT_EQ(3, rmawin_test_run_eps(_metadata, 3, lazy_misuse_rank, NULL, 80));
	expect_end(_metadata);
}

/*
 * lock_test's counter under lazy exclusive locks: get, flush, add one,
 * put, KC times per rank; exact at the end, and never two ranks between
 * their flush (the lock surely held then) and their unlock.
 */
static int lazy_counter_rank(struct rmawin_ep *ep, void *arg)
{
	int64_t counter = 0, v;
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), i, in, bad = 0;
	struct rmawin_win *win;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, &counter, me ? 0 : 8, 8, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_win_set_lazy_lock(win, 1));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	for (i = 0; i < KC; i++) {
		RMAWIN_TEST_TRY(4, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		RMAWIN_TEST_TRY(5, rmawin_get(win, &v, 8, 0, 0));
		RMAWIN_TEST_TRY(6, rmawin_flush(win, 0));
		/* the flush took the lock: held from here to the unlock */
		in = __atomic_add_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		if (in > __atomic_load_n(&sh->max_inside, __ATOMIC_SEQ_CST))
			__atomic_store_n(&sh->max_inside, in, __ATOMIC_SEQ_CST);
		v++;
		RMAWIN_TEST_TRY(7, rmawin_put(win, &v, 8, 0, 0));
		__atomic_sub_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		RMAWIN_TEST_TRY(8, rmawin_unlock(win, 0));
	}
	RMAWIN_TEST_TRY(9, rmawin_barrier(ep));
	if (me == 0)
		CHECK(counter == (int64_t)n * KC, "counter %lld, want %d", (long long)counter,
		      n * KC);
	RMAWIN_TEST_TRY(10, rmawin_win_free(win));
	return bad ? 11 : 0;
}

TEST_F_TIMEOUT(path, lazy_lock_get_put_counter_4_ranks, 150)
{
	setup_shared(_metadata);
	EXPECT_EQ(NR, rmawin_test_run_eps(_metadata, NR, lazy_counter_rank, NULL, 140));
	EXPECT_EQ(1, sh->max_inside);
	expect_end(_metadata);
}


/*
 * Rank 1 holds its own window's lock, sleeps 200 ms, says so and lets it
 * go; rank 0's lazy lock, put and unlock must wait for it: when its
 * unlock returns rank 1 has said so, and the data is at the target.
 */
static int lazy_busy_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[64];
	unsigned char v[40];
	int64_t one = 1, r = -1, cnt;
	int me = rmawin_rank(ep), bad = 0, i;
	struct rmawin_win *win;

	(void)arg;
	fill(v, sizeof(v), 14);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 1, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_win_set_lazy_lock(win, 1));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	if (me == 1) {
		RMAWIN_TEST_TRY(4, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		__atomic_store_n(&sh->holding, 1, __ATOMIC_SEQ_CST);
		sleep_ms(200);
		__atomic_store_n(&sh->released, 1, __ATOMIC_SEQ_CST);
		RMAWIN_TEST_TRY(5, rmawin_unlock(win, 1));
	} else {
		for (i = 0; i < 2000 && !__atomic_load_n(&sh->holding, __ATOMIC_SEQ_CST); i++)
			sleep_ms(10);
		CHECK(i < 2000, "rank 1 never held its lock");
		RMAWIN_TEST_TRY(6, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		RMAWIN_TEST_TRY(7, rmawin_put(win, v, 40, 1, 0));
		RMAWIN_TEST_TRY(8, rmawin_unlock(win, 1));
		sh->released_seen = __atomic_load_n(&sh->released, __ATOMIC_SEQ_CST);
		CHECK(sh->released_seen == 1, "the lazy epoch ended while rank 1 held its lock");
	}
	RMAWIN_TEST_TRY(9, rmawin_barrier(ep));
	if (me == 1)
		CHECK(check_pat(mem, 40, 14) < 0, "the lazy put is not at the target");
	/* again with a fetch_and_op, the target holding its lock shared */
	__atomic_store_n(&sh->holding, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sh->released, 0, __ATOMIC_SEQ_CST);
	RMAWIN_TEST_TRY(10, rmawin_barrier(ep));
	if (me == 1) {
		RMAWIN_TEST_TRY(11, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
		__atomic_store_n(&sh->holding, 1, __ATOMIC_SEQ_CST);
		sleep_ms(200);
		__atomic_store_n(&sh->released, 1, __ATOMIC_SEQ_CST);
		RMAWIN_TEST_TRY(12, rmawin_unlock(win, 1));
	} else {
		for (i = 0; i < 2000 && !__atomic_load_n(&sh->holding, __ATOMIC_SEQ_CST); i++)
			sleep_ms(10);
		CHECK(i < 2000, "rank 1 never held its lock");
		RMAWIN_TEST_TRY(13, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		RMAWIN_TEST_TRY(14, rmawin_fetch_and_op(win, &one, &r, RMAWIN_INT64, 1, 48,
							RMAWIN_SUM));
		RMAWIN_TEST_TRY(15, rmawin_unlock(win, 1));
		CHECK(__atomic_load_n(&sh->released, __ATOMIC_SEQ_CST) == 1,
		      "the exclusive lazy epoch ended while rank 1 held its lock shared");
		CHECK(r == 0, "fetch_and_op fetched %lld, want 0", (long long)r);
	}
	RMAWIN_TEST_TRY(16, rmawin_barrier(ep));
	if (me == 1) {
		memcpy(&cnt, mem + 48, 8);
		CHECK(cnt == 1, "counter %lld, want 1", (long long)cnt);
	}
	RMAWIN_TEST_TRY(17, rmawin_win_free(win));
	return bad ? 18 : 0;
}

TEST_F_TIMEOUT(path, lazy_lock_waits_for_a_busy_target, 90)
{
	setup_shared(_metadata);
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, lazy_busy_rank, NULL, 80));
	EXPECT_EQ(1, sh->released_seen);
	expect_end(_metadata);
}

TEST_HARNESS_MAIN
