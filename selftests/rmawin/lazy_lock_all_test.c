// SPDX-License-Identifier: GPL-2.0
/*
 * librmawin's lazy lock_all (RMAWIN_FEAT_LAZY_LOCK_ALL): on a window with
 * rmawin_win_set_lazy_lock(), rmawin_lock_all() takes only the rank's own
 * lock and notes the others'; an epoch whose one operation to another rank
 * is small goes there as a shared one-message epoch at rmawin_unlock_all().
 * Cases: each operation of such an epoch does what it should and is one
 * control message (an empty epoch none, one with an operation on the
 * rank's own window beside it one); fuller epochs take the other locks
 * and do everything; the rank's own lock is really taken at lock_all (it
 * waits for another rank's exclusive epoch on its window, and holds off
 * another rank's exclusive lock until unlock_all); a busy target answers
 * the epoch -EAGAIN and the locks are then taken; misuse errnos at once;
 * four ranks' counters under lazy lock_all; and the kernel's side through
 * raw ioctls: RMAWIN_LOCK_F_OTHERS's checks, and an epoch operation while
 * the window holds a lock of a rank other than its target.
 */
#include "epoch_test.h"

#define A_LEN	256
#define A_GSRC	128	/* rank 2: 64 bytes of pattern 8 */
#define A_FOP	200	/* rank 1: int64 1000 */
#define A_ACC	208	/* rank 2: int32[2] {10, 20} */
#define A_CAS	216	/* rank 1: int64 42 */

/* The epochs whose control messages rank 0 counts */
enum { C_PUT, C_GET, C_FOP, C_ACC, C_CAS, C_EMPTY, C_SELF, C_N };
static const char *const c_names[C_N] = {
	"put", "get", "fetch_and_op", "accumulate", "compare_and_swap", "empty",
	"own put beside a put",
};
static const long c_want[C_N] = { 1, 1, 1, 1, 1, 0, 1 };
static long *msgs;

static void init_targets(unsigned char *mem, int me)
{
	int64_t i64;
	int32_t i32[2] = { 10, 20 };

	if (me == 2) {
		fill(mem + A_GSRC, 64, 8);
		memcpy(mem + A_ACC, i32, 8);
	} else if (me == 1) {
		i64 = 1000;
		memcpy(mem + A_FOP, &i64, 8);
		i64 = 42;
		memcpy(mem + A_CAS, &i64, 8);
	}
}

/* What ranks 1 and 2 hold after all_rank(); the count of wrong things */
static int check_targets(const unsigned char *mem, int me)
{
	int64_t r, cr;
	int32_t i32[2];
	int bad = 0;

	if (me == 1) {
		memcpy(&r, mem + A_FOP, 8);
		memcpy(&cr, mem + A_CAS, 8);
		CHECK(check_pat(mem, 64, 10) < 0, "the lazy lock_all put is not at rank 1");
		CHECK(check_pat(mem + 64, 32, 11) < 0, "the put beside an own put is not there");
		CHECK(check_pat(mem + 96, 16, 12) < 0, "the put of two targets is not at rank 1");
		CHECK(check_pat(mem + 112, 16, 13) < 0, "the flushed put is not at rank 1");
		CHECK(r == 1005, "counter %lld, want 1005", (long long)r);
		CHECK(cr == 43, "compare_and_swap left %lld, want 43", (long long)cr);
	} else if (me == 2) {
		memcpy(i32, mem + A_ACC, 8);
		CHECK(check_pat(mem + A_GSRC, 64, 8) < 0, "a get changed rank 2's window");
		CHECK(i32[0] == 13 && i32[1] == 24, "accumulated %d %d, want 13 24", i32[0],
		      i32[1]);
		CHECK(check_pat(mem + 96, 16, 12) < 0, "the put of two targets is not at rank 2");
		CHECK(rmawin_test_check_fill(mem, 96, 0) < 0, "rank 2's window has bytes nobody put");
	} else {
		CHECK(check_pat(mem + 64, 32, 11) < 0, "rank 0's own put is not in its window");
		CHECK(rmawin_test_check_fill(mem, 64, 0) < 0 &&
		      rmawin_test_check_fill(mem + 96, A_LEN - 96, 0) < 0,
		      "rank 0's window has bytes nobody put");
	}
	return bad;
}

#define COUNT(c, ...)								\
	do {									\
		long before_ = rmawin_test_ep_stat("ctrl_msgs");		\
		__VA_ARGS__;							\
		msgs[c] = before_ < 0 ? -1 : rmawin_test_ep_stat("ctrl_msgs") - before_;	\
	} while (0)

/*
 * Rank 0 runs lazy lock_all epochs of one operation to rank 1 or 2, each
 * counted; then fuller ones: two targets, and a flush inside.
 */
static int all_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[A_LEN];
	unsigned char p[64], q[32], s[16], t[16], g[64], g3[16];
	int64_t five = 5, r = -1, c42 = 42, n43 = 43, cr = -1;
	int32_t add[2] = { 3, 4 };
	int me = rmawin_rank(ep), bad = 0;
	struct rmawin_win *win;

	(void)arg;
	init_targets(mem, me);
	fill(p, sizeof(p), 10);
	fill(q, sizeof(q), 11);
	fill(s, sizeof(s), 12);
	fill(t, sizeof(t), 13);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, A_LEN, 1, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_win_set_lazy_lock(win, 1));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	if (me == 0) {
		COUNT(C_PUT, RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		      RMAWIN_TEST_WANT(0, rmawin_put(win, p, 64, 1, 0));
		      RMAWIN_TEST_WANT(0, rmawin_unlock_all(win)));
		memset(g, 0, sizeof(g));
		COUNT(C_GET, RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		      RMAWIN_TEST_WANT(0, rmawin_get(win, g, 64, 2, A_GSRC));
		      RMAWIN_TEST_WANT(0, rmawin_unlock_all(win)));
		CHECK(check_pat(g, 64, 8) < 0, "lazy lock_all get: wrong data");
		COUNT(C_FOP, RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		      RMAWIN_TEST_WANT(0, rmawin_fetch_and_op(win, &five, &r, RMAWIN_INT64, 1,
							      A_FOP, RMAWIN_SUM));
		      RMAWIN_TEST_WANT(0, rmawin_unlock_all(win)));
		CHECK(r == 1000, "fetch_and_op fetched %lld, want 1000", (long long)r);
		COUNT(C_ACC, RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		      RMAWIN_TEST_WANT(0, rmawin_accumulate(win, add, 2, RMAWIN_INT32, 2, A_ACC,
							    RMAWIN_SUM));
		      RMAWIN_TEST_WANT(0, rmawin_unlock_all(win)));
		COUNT(C_CAS, RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		      RMAWIN_TEST_WANT(0, rmawin_compare_and_swap(win, &n43, &c42, &cr,
								  RMAWIN_INT64, 1, A_CAS));
		      RMAWIN_TEST_WANT(0, rmawin_unlock_all(win)));
		CHECK(cr == 42, "compare_and_swap fetched %lld, want 42", (long long)cr);
		COUNT(C_EMPTY, RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		      RMAWIN_TEST_WANT(0, rmawin_unlock_all(win)));
		/* an operation on the own window goes at once, under the own lock */
		COUNT(C_SELF, RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		      RMAWIN_TEST_WANT(0, rmawin_put(win, q, 32, 0, 64));
		      RMAWIN_TEST_WANT(0, rmawin_put(win, q, 32, 1, 64));
		      RMAWIN_TEST_WANT(0, rmawin_unlock_all(win)));
		/* two targets: the others' locks are taken at the second */
		RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		RMAWIN_TEST_WANT(0, rmawin_put(win, s, 16, 1, 96));
		RMAWIN_TEST_WANT(0, rmawin_put(win, s, 16, 2, 96));
		RMAWIN_TEST_WANT(0, rmawin_unlock_all(win));
		/* a flush takes them; the put is complete after it */
		memset(g3, 0, sizeof(g3));
		RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		RMAWIN_TEST_WANT(0, rmawin_put(win, t, 16, 1, 112));
		RMAWIN_TEST_WANT(0, rmawin_flush_all(win));
		RMAWIN_TEST_WANT(0, rmawin_get(win, g3, 16, 1, 112));
		RMAWIN_TEST_WANT(0, rmawin_unlock_all(win));
		CHECK(check_pat(g3, 16, 13) < 0, "get after put and flush_all: wrong data");
	}
	RMAWIN_TEST_TRY(4, rmawin_barrier(ep));
	bad += check_targets(mem, me);
	RMAWIN_TEST_TRY(5, rmawin_win_free(win));
	return bad ? 6 : 0;
}

TEST_F_TIMEOUT(path, lazy_lock_all_epochs_one_message, 90)
{
	int c;

	msgs = rmawin_test_shared(C_N * sizeof(*msgs));
	ASSERT_NE(NULL, msgs);
	EXPECT_EQ(3, rmawin_test_run_eps(_metadata, 3, all_rank, NULL, 80));
	for (c = 0; c < C_N; c++) {
		EXPECT_EQ(c_want[c], msgs[c]) TH_LOG("%s epoch: %ld control messages, want %ld",
						     c_names[c], msgs[c], c_want[c]);
	}
	expect_end(_metadata);
}

/*
 * The own lock is real.  Rank 1 holds rank 0's lock exclusive, sleeps,
 * puts a marker there and lets go: rank 0's lazy lock_all returns only
 * after that, and then its own window shows the marker.  Then rank 0
 * holds a lazy lock_all, sleeps, stores to its own window and lets go:
 * rank 1's exclusive lock of rank 0 is granted only after that.
 */
static int own_lock_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[64];
	unsigned char mark[8], got[8];
	int me = rmawin_rank(ep), bad = 0, i;
	struct rmawin_win *win;
	int64_t one = 1, r = -1;

	(void)arg;
	fill(mark, sizeof(mark), 15);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 1, 0, &win));
	/* only rank 0's locks are lazy: rank 1's are taken when asked */
	if (me == 0)
		RMAWIN_TEST_TRY(2, rmawin_win_set_lazy_lock(win, 1));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	if (me == 1) {
		RMAWIN_TEST_TRY(4, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		__atomic_store_n(&sh->holding, 1, __ATOMIC_SEQ_CST);
		sleep_ms(200);
		RMAWIN_TEST_TRY(5, rmawin_put(win, mark, 8, 0, 0));
		RMAWIN_TEST_TRY(6, rmawin_flush(win, 0));
		__atomic_store_n(&sh->released, 1, __ATOMIC_SEQ_CST);
		RMAWIN_TEST_TRY(7, rmawin_unlock(win, 0));
	} else {
		for (i = 0; i < 2000 && !__atomic_load_n(&sh->holding, __ATOMIC_SEQ_CST); i++)
			sleep_ms(10);
		CHECK(i < 2000, "rank 1 never held rank 0's lock");
		RMAWIN_TEST_TRY(8, rmawin_lock_all(win));
		CHECK(__atomic_load_n(&sh->released, __ATOMIC_SEQ_CST) == 1,
		      "lazy lock_all returned while rank 1 held rank 0's lock exclusive");
		memcpy(got, (void *)mem, 8);
		CHECK(!memcmp(got, mark, 8), "rank 1's put is not in rank 0's window under lock_all");
		RMAWIN_TEST_TRY(9, rmawin_fetch_and_op(win, &one, &r, RMAWIN_INT64, 1, 8,
						       RMAWIN_SUM));
		RMAWIN_TEST_TRY(10, rmawin_unlock_all(win));
		CHECK(r == 0, "fetch_and_op fetched %lld, want 0", (long long)r);
	}
	RMAWIN_TEST_TRY(11, rmawin_barrier(ep));
	__atomic_store_n(&sh->holding, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sh->released, 0, __ATOMIC_SEQ_CST);
	RMAWIN_TEST_TRY(12, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(13, rmawin_lock_all(win));
		__atomic_store_n(&sh->holding, 1, __ATOMIC_SEQ_CST);
		sleep_ms(200);
		mem[16] = 0x5a;
		__atomic_store_n(&sh->released, 1, __ATOMIC_SEQ_CST);
		RMAWIN_TEST_TRY(14, rmawin_unlock_all(win));
	} else {
		for (i = 0; i < 2000 && !__atomic_load_n(&sh->holding, __ATOMIC_SEQ_CST); i++)
			sleep_ms(10);
		CHECK(i < 2000, "rank 0 never held its lazy lock_all");
		RMAWIN_TEST_TRY(15, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		sh->released_seen = __atomic_load_n(&sh->released, __ATOMIC_SEQ_CST);
		CHECK(sh->released_seen == 1,
		      "rank 1's exclusive lock was granted inside rank 0's lazy lock_all");
		RMAWIN_TEST_TRY(16, rmawin_get(win, got, 1, 0, 16));
		RMAWIN_TEST_TRY(17, rmawin_unlock(win, 0));
		CHECK(got[0] == 0x5a, "rank 0's store under lock_all: got %#x", got[0]);
	}
	RMAWIN_TEST_TRY(18, rmawin_barrier(ep));
	if (me == 1) {
		memcpy(&r, mem + 8, 8);
		CHECK(r == 1, "rank 1's counter %lld, want 1", (long long)r);
	}
	RMAWIN_TEST_TRY(19, rmawin_win_free(win));
	return bad ? 20 : 0;
}

TEST_F_TIMEOUT(path, lazy_lock_all_takes_the_own_lock, 90)
{
	setup_shared(_metadata);
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, own_lock_rank, NULL, 80));
	EXPECT_EQ(1, sh->released_seen);
	expect_end(_metadata);
}

/*
 * Rank 1 holds its own window's lock exclusive, sleeps 200 ms, says so and
 * lets it go; rank 0's lazy lock_all, put to rank 1 and unlock_all (the
 * one-message epoch answered -EAGAIN, then the locks taken the usual way)
 * must wait for it: when its unlock_all returns rank 1 has said so, and
 * the data is at the target.
 */
static int busy_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[64];
	unsigned char v[40];
	int me = rmawin_rank(ep), bad = 0, i;
	struct rmawin_win *win;

	(void)arg;
	fill(v, sizeof(v), 18);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 1, 0, &win));
	if (me == 0)
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
		RMAWIN_TEST_TRY(6, rmawin_lock_all(win));
		RMAWIN_TEST_TRY(7, rmawin_put(win, v, 40, 1, 0));
		RMAWIN_TEST_TRY(8, rmawin_unlock_all(win));
		sh->released_seen = __atomic_load_n(&sh->released, __ATOMIC_SEQ_CST);
		CHECK(sh->released_seen == 1, "the lazy lock_all epoch ended inside rank 1's lock");
	}
	RMAWIN_TEST_TRY(9, rmawin_barrier(ep));
	if (me == 1)
		CHECK(check_pat(mem, 40, 18) < 0, "the lazy lock_all put is not at the target");
	RMAWIN_TEST_TRY(10, rmawin_win_free(win));
	return bad ? 11 : 0;
}

TEST_F_TIMEOUT(path, lazy_lock_all_waits_for_a_busy_target, 90)
{
	setup_shared(_metadata);
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, busy_rank, NULL, 80));
	EXPECT_EQ(1, sh->released_seen);
	expect_end(_metadata);
}

/*
 * Misuse under a lazy lock_all gets the errno an eager one's would, at
 * once: -EPERM for an operation outside it, argument errors of the
 * operation (which leave nothing to send: the epoch's unlock_all sends no
 * message), -ENOLCK to unlock_all outside it, -EBUSY to lock_all or lock
 * a rank again or to fence inside.  Rank 1's window stays untouched.
 */
static int misuse_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[64];
	unsigned char v[16];
	int me = rmawin_rank(ep), bad = 0;
	struct rmawin_win *win;
	long before, sent;

	(void)arg;
	fill(v, sizeof(v), 16);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 1, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_win_set_lazy_lock(win, 1));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	if (me == 0) {
		/* first, while the library knows the epochs: a failed call makes it ask the kernel */
		RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, v, 16, 1, 0));
		before = rmawin_test_ep_stat("ctrl_msgs");
		RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		RMAWIN_TEST_WANT(-ERANGE, rmawin_put(win, v, 16, 1, 60));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_put(win, v, 16, 2, 0));
		RMAWIN_TEST_WANT(-EINVAL, rmawin_accumulate(win, v, 2, RMAWIN_DOUBLE, 1, 0,
							    RMAWIN_BAND));
		RMAWIN_TEST_WANT(0, rmawin_unlock_all(win));
		sent = before < 0 ? -1 : rmawin_test_ep_stat("ctrl_msgs") - before;
		CHECK(sent == 0, "an epoch of refused operations sent %ld messages", sent);
		RMAWIN_TEST_WANT(-ENOLCK, rmawin_unlock_all(win));
		RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		RMAWIN_TEST_WANT(-EBUSY, rmawin_lock_all(win));
		RMAWIN_TEST_WANT(0, rmawin_unlock_all(win));
		RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		RMAWIN_TEST_WANT(-EBUSY, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
		RMAWIN_TEST_WANT(0, rmawin_unlock_all(win));
		RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		RMAWIN_TEST_WANT(-EBUSY, rmawin_fence(win, 0));
		RMAWIN_TEST_WANT(0, rmawin_unlock_all(win));
		/* that unlock_all left no epoch: the library knows again, the locks are lazy */
		before = rmawin_test_ep_stat("ctrl_msgs");
		RMAWIN_TEST_WANT(0, rmawin_lock_all(win));
		RMAWIN_TEST_WANT(0, rmawin_get(win, v, 16, 1, 0));
		RMAWIN_TEST_WANT(0, rmawin_unlock_all(win));
		sent = before < 0 ? -1 : rmawin_test_ep_stat("ctrl_msgs") - before;
		CHECK(sent == 1, "a lazy lock_all epoch after the misuse sent %ld messages", sent);
		CHECK(rmawin_test_check_fill(v, 16, 0) < 0, "the get did not read rank 1's zeros");
	}
	RMAWIN_TEST_TRY(4, rmawin_barrier(ep));
	if (me == 1)
		CHECK(rmawin_test_check_fill(mem, sizeof(mem), 0) < 0, "rank 1's window was written");
	RMAWIN_TEST_TRY(5, rmawin_win_free(win));
	return bad ? 6 : 0;
}

TEST_F_TIMEOUT(path, lazy_lock_all_misuse_errors, 90)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, misuse_rank, NULL, 80));
	expect_end(_metadata);
}

/*
 * Every rank, KC times: lazy lock_all, fetch_and_op +1 on rank 0's
 * counter, unlock_all.  The counter ends exact and the fetched values are
 * each value below it once.
 */
static int counter_rank(struct rmawin_ep *ep, void *arg)
{
	static int64_t mem[2];
	int64_t one = 1;
	int me = rmawin_rank(ep), i;
	struct rmawin_win *win;

	(void)arg;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_win_set_lazy_lock(win, 1));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	for (i = 0; i < KC; i++) {
		RMAWIN_TEST_TRY(4, rmawin_lock_all(win));
		RMAWIN_TEST_TRY(5, rmawin_fetch_and_op(win, &one, &sh->fetched[me][i],
						       RMAWIN_INT64, 0, 0, RMAWIN_SUM));
		RMAWIN_TEST_TRY(6, rmawin_unlock_all(win));
	}
	RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	if (me == 0)
		sh->counter = mem[0];
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	return 0;
}

TEST_F_TIMEOUT(path, lazy_lock_all_counter_4_ranks, 150)
{
	static char seen[NR * KC];
	int64_t v;
	int r, i;

	setup_shared(_metadata);
	EXPECT_EQ(NR, rmawin_test_run_eps(_metadata, NR, counter_rank, NULL, 140));
	EXPECT_EQ(NR * KC, sh->counter);
	memset(seen, 0, sizeof(seen));
	for (r = 0; r < NR; r++) {
		for (i = 0; i < KC; i++) {
			v = sh->fetched[r][i];
			ASSERT_TRUE(v >= 0 && v < NR * KC) TH_LOG("rank %d fetched %lld", r,
								  (long long)v);
			EXPECT_EQ(0, seen[v]++) TH_LOG("value %lld fetched twice", (long long)v);
		}
	}
	expect_end(_metadata);
}

/* ---- the kernel's side, through raw ioctls ----------------------------------- */

static int passive_raw(struct rmawin_ep *ep, unsigned long req, __u32 flags, __u32 win,
		       __u32 target, __u32 type)
{
	struct rmawin_passive p = {
		.size = sizeof(p), .flags = flags, .win = win, .target = target, .type = type,
	};

	return ioctl(rmawin_ep_fd(ep), req, &p) ? -errno : 0;
}

/*
 * RMAWIN_LOCK_F_OTHERS: only on LOCK of every rank, shared (-EINVAL else);
 * it locks every rank but the caller, whose lock it leaves as it is; again
 * while held, -EBUSY.  An epoch operation while the window holds the lock
 * of a rank other than its target works, and lands; while it holds its
 * target's, -EBUSY.
 */
static int raw_rank(struct rmawin_ep *ep, void *arg)
{
	static unsigned char mem[64];
	unsigned char v[8], buf[8];
	int me = rmawin_rank(ep), bad = 0, other = 1 - me;
	struct rmawin_win *win;
	__u32 id;

	(void)arg;
	fill(v, sizeof(v), 17);
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 1, 0, &win));
	RMAWIN_TEST_TRY(2, win_id(ep, NULL, 0, &id));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_WANT(-EINVAL, passive_raw(ep, RMAWIN_IOC_LOCK, RMAWIN_LOCK_F_OTHERS, id,
						      other, RMAWIN_LOCK_TYPE_SHARED));
		RMAWIN_TEST_WANT(-EINVAL, passive_raw(ep, RMAWIN_IOC_LOCK, 0x2, id,
						      RMAWIN_ALL_RANKS, RMAWIN_LOCK_TYPE_SHARED));
		RMAWIN_TEST_WANT(-EINVAL, passive_raw(ep, RMAWIN_IOC_LOCK,
						      RMAWIN_LOCK_F_OTHERS | 0x2, id,
						      RMAWIN_ALL_RANKS, RMAWIN_LOCK_TYPE_SHARED));
		RMAWIN_TEST_WANT(-EINVAL, passive_raw(ep, RMAWIN_IOC_LOCK, RMAWIN_LOCK_F_OTHERS, id,
						      RMAWIN_ALL_RANKS,
						      RMAWIN_LOCK_TYPE_EXCLUSIVE));
		RMAWIN_TEST_WANT(-EINVAL, passive_raw(ep, RMAWIN_IOC_UNLOCK, RMAWIN_LOCK_F_OTHERS,
						      id, RMAWIN_ALL_RANKS, 0));
		RMAWIN_TEST_WANT(-EINVAL, passive_raw(ep, RMAWIN_IOC_FLUSH, RMAWIN_LOCK_F_OTHERS,
						      id, RMAWIN_ALL_RANKS, 0));
		/* the own lock first, then the others' */
		RMAWIN_TEST_WANT(0, passive_raw(ep, RMAWIN_IOC_LOCK, 0, id, me,
						RMAWIN_LOCK_TYPE_SHARED));
		RMAWIN_TEST_WANT(0, rma1(ep, eop(RMAWIN_OP_PUT, id, other, SH, v, 8, 0)));
		RMAWIN_TEST_WANT(0, passive_raw(ep, RMAWIN_IOC_LOCK, RMAWIN_LOCK_F_OTHERS, id,
						RMAWIN_ALL_RANKS, RMAWIN_LOCK_TYPE_SHARED));
		RMAWIN_TEST_WANT(-EBUSY, passive_raw(ep, RMAWIN_IOC_LOCK, RMAWIN_LOCK_F_OTHERS, id,
						     RMAWIN_ALL_RANKS, RMAWIN_LOCK_TYPE_SHARED));
		RMAWIN_TEST_WANT(-EBUSY, rma1(ep, eop(RMAWIN_OP_GET, id, other, SH, buf, 8, 0)));
		/* held everywhere: an ordinary get reads the epoch's put */
		memset(buf, 0, sizeof(buf));
		RMAWIN_TEST_WANT(0, rma1(ep, rmawin_test_op(RMAWIN_OP_GET, id, other, buf, 8, 0)));
		RMAWIN_TEST_WANT(0, passive_raw(ep, RMAWIN_IOC_UNLOCK, 0, id, RMAWIN_ALL_RANKS, 0));
		CHECK(!memcmp(buf, v, 8), "get under the lock: not what the epoch put");
		/* without the own lock: the others only; the own rank is no target then */
		RMAWIN_TEST_WANT(0, passive_raw(ep, RMAWIN_IOC_LOCK, RMAWIN_LOCK_F_OTHERS, id,
						RMAWIN_ALL_RANKS, RMAWIN_LOCK_TYPE_SHARED));
		RMAWIN_TEST_WANT(-EPERM, rma1(ep, rmawin_test_op(RMAWIN_OP_PUT, id, me, v, 8, 0)));
		RMAWIN_TEST_WANT(-ENOLCK, passive_raw(ep, RMAWIN_IOC_UNLOCK, 0, id, me, 0));
		RMAWIN_TEST_WANT(0, passive_raw(ep, RMAWIN_IOC_UNLOCK, 0, id, other, 0));
	}
	RMAWIN_TEST_TRY(4, rmawin_barrier(ep));
	if (me == 1) {
		CHECK(!memcmp(mem, v, 8), "the epoch put under the own lock is not at rank 1");
		CHECK(rmawin_test_check_fill(mem + 8, sizeof(mem) - 8, 0) < 0,
		      "rank 1's window has bytes nobody put");
	} else {
		CHECK(rmawin_test_check_fill(mem, sizeof(mem), 0) < 0, "rank 0's window was written");
	}
	RMAWIN_TEST_TRY(5, rmawin_win_free(win));
	return bad ? 6 : 0;
}

/* raw ioctls: the library's path does not matter, once is enough */
TEST(raw_lock_others_and_epoch_beside_a_lock)
{
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, raw_rank, NULL, 80));
	expect_end(_metadata);
}

RMAWIN_TEST_FEATURE(feature_lazy_lock_all, RMAWIN_FEAT_LAZY_LOCK_ALL)

TEST_HARNESS_MAIN
