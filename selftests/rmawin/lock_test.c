// SPDX-License-Identifier: GPL-2.0
/*
 * Passive target: counters incremented under exclusive locks end exact;
 * shared locks really overlap and exclusive ones never do; a writer is
 * not starved by a stream of overlapping readers; the target makes
 * progress while its process sleeps; a compare_and_swap mutex; misuse
 * gets its errno; a lock grant that comes due while the target tears its
 * group down is not sent to a peer already cut off.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <time.h>
#include <sys/mman.h>
#include <rmawin.h>

#include "rmawin_test.h"

/* Every test on both of the library's paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

struct shared {
	int asking;		/* teardown test: rank 1 is about to ask for the lock */
	int closing;		/* teardown test: rank 0 is closing its endpoint */
	int unlock_ret, lock_ret;
	int inside;		/* ranks inside the critical section now */
	int max_inside;		/* the most ever seen at once */
	int both;		/* readers that saw the other inside */
	int stop;		/* the writer got in: readers stop */
	int reader_rounds;
	long long woke_ns, done_ns[16];
};

static struct shared *sh;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define K 20

/* get, add one, put under an exclusive lock, K times per rank */
static int counter_rank(struct rmawin_ep *ep, void *arg)
{
	int64_t counter = 0, v;
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), i, in;
	struct rmawin_win *win;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, &counter, me ? 0 : 8, 8, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	for (i = 0; i < K; i++) {
		RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		in = __atomic_add_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		if (in > __atomic_load_n(&sh->max_inside, __ATOMIC_SEQ_CST))
			__atomic_store_n(&sh->max_inside, in, __ATOMIC_SEQ_CST);
		RMAWIN_TEST_TRY(4, rmawin_get(win, &v, 8, 0, 0));
		RMAWIN_TEST_TRY(5, rmawin_flush(win, 0));
		v++;
		RMAWIN_TEST_TRY(6, rmawin_put(win, &v, 8, 0, 0));
		__atomic_sub_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		RMAWIN_TEST_TRY(7, rmawin_unlock(win, 0));
	}
	RMAWIN_TEST_TRY(8, rmawin_barrier(ep));
	if (me == 0 && counter != (int64_t)n * K) {
		fprintf(stderr, "counter %lld, want %d\n", (long long)counter, n * K);
		return 9;
	}
	RMAWIN_TEST_TRY(10, rmawin_win_free(win));
	return 0;
}

static void setup_shared(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(sh, 0, sizeof(*sh));
}

TEST_F(path, exclusive_lock_counter_4_ranks)
{
	setup_shared();
	EXPECT_EQ(4, rmawin_test_run_eps(_metadata, 4, counter_rank, NULL, 25));
	EXPECT_EQ(1, sh->max_inside);	/* exclusive: never two inside */
	EXPECT_EQ(0, rmawin_stat("windows"));
}

/* Two readers hold shared locks at once: each waits inside for the other. */
static int readers_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), i;
	int32_t w[4] = { 0 };
	struct rmawin_win *win;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, w, sizeof(w), 4, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	if (me) {
		RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
		__atomic_add_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		/* up to 20 s for the other reader to be inside too */
		for (i = 0; i < 2000 && __atomic_load_n(&sh->inside, __ATOMIC_SEQ_CST) < 2; i++)
			usleep(10000);
		if (__atomic_load_n(&sh->inside, __ATOMIC_SEQ_CST) == 2)
			__atomic_add_fetch(&sh->both, 1, __ATOMIC_SEQ_CST);
		RMAWIN_TEST_TRY(4, rmawin_unlock(win, 0));
	}
	RMAWIN_TEST_TRY(5, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(6, rmawin_win_free(win));
	return 0;
}

TEST_F(path, shared_locks_overlap)
{
	setup_shared();
	EXPECT_EQ(3, rmawin_test_run_eps(_metadata, 3, readers_rank, NULL, 25));
	EXPECT_EQ(2, sh->both);
}

/*
 * Ranks 1 and 3 take shared locks in overlapping turns, so a shared lock
 * is always held; rank 2 asks for an exclusive one.  Granting in arrival
 * order lets it in; the readers stop when it has been.
 */
static int starve_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep), r;
	int32_t w[4] = { 0 };
	struct rmawin_win *win;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, w, sizeof(w), 4, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	if (me == 1 || me == 3) {
		for (r = 0; r < 400 && !__atomic_load_n(&sh->stop, __ATOMIC_SEQ_CST); r++) {
			RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
			usleep(5000);
			RMAWIN_TEST_TRY(4, rmawin_unlock(win, 0));
			__atomic_add_fetch(&sh->reader_rounds, 1, __ATOMIC_SEQ_CST);
		}
	} else if (me == 2) {
		usleep(100000);
		RMAWIN_TEST_TRY(5, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		__atomic_store_n(&sh->stop, 1, __ATOMIC_SEQ_CST);
		RMAWIN_TEST_TRY(6, rmawin_unlock(win, 0));
	}
	RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	return 0;
}

TEST_F(path, exclusive_not_starved_by_readers)
{
	setup_shared();
	EXPECT_EQ(4, rmawin_test_run_eps(_metadata, 4, starve_rank, NULL, 25));
	EXPECT_EQ(1, sh->stop);
	/* the readers stopped long before running out of rounds */
	EXPECT_GT(2 * 400, sh->reader_rounds);
}

/* Rank 0 sleeps outside the library while the others work on its window. */
static int sleeper_rank(struct rmawin_ep *ep, void *arg)
{
	int me = rmawin_rank(ep);
	double acc = 0, one = 1;
	struct rmawin_win *win;
	struct timespec ts = { 3, 0 };

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, &acc, me ? 0 : sizeof(acc), 8, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	if (me == 0) {
		nanosleep(&ts, NULL);
		sh->woke_ns = now_ns();
	} else {
		RMAWIN_TEST_TRY(3, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		RMAWIN_TEST_TRY(4, rmawin_accumulate(win, &one, 1, RMAWIN_DOUBLE, 0, 0,
						     RMAWIN_SUM));
		RMAWIN_TEST_TRY(5, rmawin_flush(win, 0));
		RMAWIN_TEST_TRY(6, rmawin_unlock(win, 0));
		sh->done_ns[me] = now_ns();
	}
	RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	if (me == 0 && acc != rmawin_nranks(ep) - 1)
		return 8;
	RMAWIN_TEST_TRY(9, rmawin_win_free(win));
	return 0;
}

TEST_F(path, progress_while_target_sleeps)
{
	int i;

	setup_shared();
	EXPECT_EQ(4, rmawin_test_run_eps(_metadata, 4, sleeper_rank, NULL, 25));
	for (i = 1; i < 4; i++)
		EXPECT_LT(sh->done_ns[i], sh->woke_ns) TH_LOG("rank %d finished after the target woke", i);
}

/* A spin lock built from compare_and_swap under lock_all; checks it is alone. */
static int cas_mutex_rank(struct rmawin_ep *ep, void *arg)
{
	int64_t mutex = 0, zero = 0, mine = rmawin_rank(ep) + 1, old, in;
	int me = rmawin_rank(ep), i;
	struct rmawin_win *win;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, &mutex, me ? 0 : 8, 8, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	for (i = 0; i < 10; i++) {
		do {
			RMAWIN_TEST_TRY(4, rmawin_compare_and_swap(win, &mine, &zero, &old,
								   RMAWIN_INT64, 0, 0));
			RMAWIN_TEST_TRY(5, rmawin_flush(win, 0));
		} while (old != 0);
		in = __atomic_add_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		if (in != 1)
			return 6;
		usleep(1000);
		__atomic_sub_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		RMAWIN_TEST_TRY(7, rmawin_compare_and_swap(win, &zero, &mine, &old,
							   RMAWIN_INT64, 0, 0));
		RMAWIN_TEST_TRY(8, rmawin_flush(win, 0));
		if (old != mine)
			return 9;
	}
	RMAWIN_TEST_TRY(10, rmawin_unlock_all(win));
	RMAWIN_TEST_TRY(11, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(12, rmawin_win_free(win));
	return 0;
}

TEST_F(path, compare_and_swap_mutex)
{
	setup_shared();
	EXPECT_EQ(3, rmawin_test_run_eps(_metadata, 3, cas_mutex_rank, NULL, 25));
}

/* Misuse: each gets its own errno, and nothing hangs. */
static int misuse_rank(struct rmawin_ep *ep, void *arg)
{
	int32_t w[4] = { 0 }, v = 1;
	struct rmawin_win *win;
	int bad = 0;

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, w, sizeof(w), 4, 0, &win));
	RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, &v, 4, 1, 0));		/* no epoch yet */
	RMAWIN_TEST_WANT(-ENOLCK, rmawin_unlock(win, 1));		/* not locked */
	RMAWIN_TEST_WANT(-ENOLCK, rmawin_flush(win, 1));
	RMAWIN_TEST_WANT(-ENOLCK, rmawin_unlock_all(win));
	RMAWIN_TEST_WANT(-EINVAL, rmawin_lock(win, RMAWIN_LOCK_SHARED, 2));	/* no rank 2 */
	RMAWIN_TEST_WANT(-EINVAL, rmawin_lock(win, 7, 1));
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
	RMAWIN_TEST_WANT(-EBUSY, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));	/* twice */
	RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, &v, 4, 0, 0));		/* rank 0 not locked */
	RMAWIN_TEST_WANT(0, rmawin_put(win, &v, 4, 1, 0));
	/* fence inside a lock epoch */
	RMAWIN_TEST_WANT(-EBUSY, rmawin_fence(win, 0));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
	RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, &v, 4, 1, 0));		/* epoch over */
	RMAWIN_TEST_TRY(2, rmawin_barrier(ep));
	RMAWIN_TEST_WANT(0, rmawin_fence(win, 0));
	RMAWIN_TEST_WANT(0, rmawin_put(win, &v, 4, 1, 0));
	/* fence epoch has ops */
	RMAWIN_TEST_WANT(-EBUSY, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
	RMAWIN_TEST_WANT(0, rmawin_fence(win, RMAWIN_MODE_NOSUCCEED));
	RMAWIN_TEST_WANT(-EPERM, rmawin_put(win, &v, 4, 1, 0));		/* NOSUCCEED closed it */
	RMAWIN_TEST_WANT(0, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
	RMAWIN_TEST_WANT(0, rmawin_unlock(win, 1));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(4, rmawin_win_free(win));
	return bad ? 5 : 0;
}

TEST_F(path, synchronization_misuse_errors)
{
	setup_shared();
	EXPECT_EQ(2, rmawin_test_run_eps(_metadata, 2, misuse_rank, NULL, 25));
	EXPECT_EQ(0, rmawin_stat("windows"));
	EXPECT_EQ(0, rmawin_stat("reqs"));
}

/* The module's test hook: a teardown waits @ms after each peer it cut off. */
static int set_teardown_delay(int ms)
{
	return rmawin_test_set_hook("teardown_delay_ms", ms);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * The target's teardown meets a lock grant: rank 2 holds rank 0's lock
 * and rank 1 waits for it; rank 0 closes its endpoint, and its teardown
 * (slowed by the hook) cuts off rank 1 first, then waits.  Meanwhile rank
 * 2 unlocks: the grant that rank 0's completion work would send to rank 1
 * must not reach rank 1's queue pair, which is gone (a NULL dereference
 * before the teardown kept completion handlers from posting).
 */
static int teardown_grant_rank(struct rmawin_ep *ep, void *arg)
{
	static uint64_t mem[8];
	struct rmawin_win *win;
	int me = rmawin_rank(ep);

	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	if (me == 2)
		RMAWIN_TEST_TRY(2, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
	RMAWIN_TEST_TRY(3, rmawin_barrier(ep));
	switch (me) {
	case 0:
		while (!__atomic_load_n(&sh->asking, __ATOMIC_ACQUIRE))
			sleep_ms(10);
		sleep_ms(500);		/* for rank 1's request to arrive and queue */
		RMAWIN_TEST_TRY(4, set_teardown_delay(2000));
		__atomic_store_n(&sh->closing, 1, __ATOMIC_RELEASE);
		return 0;		/* and closes, with rank 1 queued for the lock */
	case 1:
		__atomic_store_n(&sh->asking, 1, __ATOMIC_RELEASE);
		sh->lock_ret = rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0);
		break;
	default:
		while (!__atomic_load_n(&sh->closing, __ATOMIC_ACQUIRE))
			sleep_ms(10);
		sleep_ms(700);		/* rank 1 is cut off by now, rank 2 not yet */
		sh->unlock_ret = rmawin_unlock(win, 0);
		break;
	}
	/* rank 0 is gone: the window goes with an error, and goes */
	rmawin_win_free(win);
	return 0;
}

TEST_F_TIMEOUT(path, grant_during_target_teardown, 120)
{
	if (access(RMAWIN_HOOK_DIR "teardown_delay_ms", W_OK))
		SKIP(return, RMAWIN_HOOK_DIR "teardown_delay_ms: %s (debugfs not mounted?)",
		     strerror(errno));
	setup_shared();
	sh->lock_ret = sh->unlock_ret = 1;
	EXPECT_EQ(3, rmawin_test_run_eps(_metadata, 3, teardown_grant_rank, NULL, 100));
	EXPECT_EQ(0, set_teardown_delay(0));
	/* rank 1 never got the lock: its target went away */
	EXPECT_EQ(-ECONNRESET, sh->lock_ret) TH_LOG("rank 1's lock: %d", sh->lock_ret);
	/* the unlock went out before rank 0 cut rank 2 off */
	EXPECT_TRUE(sh->unlock_ret == 0 || sh->unlock_ret == -ECONNRESET)
		TH_LOG("rank 2's unlock: %d", sh->unlock_ret);
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_HARNESS_MAIN
