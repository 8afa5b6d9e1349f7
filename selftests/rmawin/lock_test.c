// SPDX-License-Identifier: GPL-2.0
/*
 * Passive target: counters incremented under exclusive locks end exact;
 * shared locks really overlap and exclusive ones never do; a writer is
 * not starved by a stream of overlapping readers; the target makes
 * progress while its process sleeps; a compare_and_swap mutex; misuse
 * gets its errno.
 */
#include <stdint.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <rmawin.h>

#include "rmawin_test.h"

static int open_rank(int rank, int n, int port, struct rmawin_ep **ep)
{
	static char buf[16][32];
	static const char *addrs[16];
	struct rmawin_ep_attr attr = { .rank = rank, .nranks = n, .addrs = addrs };
	int i;

	for (i = 0; i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "198.18.0.1:%d", port + i);
		addrs[i] = buf[i];
	}
	return rmawin_ep_open(&attr, ep);
}

struct shared {
	int inside;		/* ranks inside the critical section now */
	int max_inside;		/* the most ever seen at once */
	int both;		/* readers that saw the other inside */
	int stop;		/* the writer got in: readers stop */
	int reader_rounds;
	long long woke_ns, done_ns[16];
};

static struct shared *sh;

/* Fork n ranks; each opens, runs fn, closes; returns how many exited 0. */
static int run(int n, int port, int (*fn)(struct rmawin_ep *ep))
{
	pid_t pid[16];
	int i, st, ok = 0;

	for (i = 0; i < n; i++) {
		pid[i] = fork();
		if (!pid[i]) {
			struct rmawin_ep *ep;
			int ret = open_rank(i, n, port, &ep);

			if (ret) {
				fprintf(stderr, "rank %d: open: %s\n", i, rmawin_strerror(ret));
				_exit(100);
			}
			ret = fn(ep);
			if (rmawin_ep_close(ep))
				ret = 101;
			_exit(ret);
		}
	}
	for (i = 0; i < n; i++) {
		if (waitpid(pid[i], &st, 0) != pid[i])
			continue;
		if (WIFEXITED(st) && !WEXITSTATUS(st))
			ok++;
		else
			fprintf(stderr, "rank %d: exit %d\n", i, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	return ok;
}

#define TRY(step, call) do { int _r = (call); if (_r) { \
	fprintf(stderr, "rank %d: step %d: %s: %s\n", rmawin_rank(ep), step, #call, \
		rmawin_strerror(_r)); return step; } } while (0)

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#define K 20

/* get, add one, put under an exclusive lock, K times per rank */
static int counter_rank(struct rmawin_ep *ep)
{
	int64_t counter = 0, v;
	int me = rmawin_rank(ep), n = rmawin_nranks(ep), i, in;
	struct rmawin_win *win;

	TRY(1, rmawin_win_create(ep, &counter, me ? 0 : 8, 8, 0, &win));
	TRY(2, rmawin_barrier(ep));
	for (i = 0; i < K; i++) {
		TRY(3, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		in = __atomic_add_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		if (in > __atomic_load_n(&sh->max_inside, __ATOMIC_SEQ_CST))
			__atomic_store_n(&sh->max_inside, in, __ATOMIC_SEQ_CST);
		TRY(4, rmawin_get(win, &v, 8, 0, 0));
		TRY(5, rmawin_flush(win, 0));
		v++;
		TRY(6, rmawin_put(win, &v, 8, 0, 0));
		__atomic_sub_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		TRY(7, rmawin_unlock(win, 0));
	}
	TRY(8, rmawin_barrier(ep));
	if (me == 0 && counter != (int64_t)n * K) {
		fprintf(stderr, "counter %lld, want %d\n", (long long)counter, n * K);
		return 9;
	}
	TRY(10, rmawin_win_free(win));
	return 0;
}

static void setup_shared(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(sh, 0, sizeof(*sh));
}

TEST(exclusive_lock_counter_4_ranks)
{
	setup_shared();
	EXPECT_EQ(4, run(4, 29000, counter_rank));
	EXPECT_EQ(1, sh->max_inside);	/* exclusive: never two inside */
	EXPECT_EQ(0, rmawin_stat("windows"));
}

/* Two readers hold shared locks at once: each waits inside for the other. */
static int readers_rank(struct rmawin_ep *ep)
{
	int me = rmawin_rank(ep), i;
	int32_t w[4] = { 0 };
	struct rmawin_win *win;

	TRY(1, rmawin_win_create(ep, w, sizeof(w), 4, 0, &win));
	TRY(2, rmawin_barrier(ep));
	if (me) {
		TRY(3, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
		__atomic_add_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		/* up to 20 s for the other reader to be inside too */
		for (i = 0; i < 2000 && __atomic_load_n(&sh->inside, __ATOMIC_SEQ_CST) < 2; i++)
			usleep(10000);
		if (__atomic_load_n(&sh->inside, __ATOMIC_SEQ_CST) == 2)
			__atomic_add_fetch(&sh->both, 1, __ATOMIC_SEQ_CST);
		TRY(4, rmawin_unlock(win, 0));
	}
	TRY(5, rmawin_barrier(ep));
	TRY(6, rmawin_win_free(win));
	return 0;
}

TEST(shared_locks_overlap)
{
	setup_shared();
	EXPECT_EQ(3, run(3, 29100, readers_rank));
	EXPECT_EQ(2, sh->both);
}

/*
 * Ranks 1 and 3 take shared locks in overlapping turns, so a shared lock
 * is always held; rank 2 asks for an exclusive one.  Granting in arrival
 * order lets it in; the readers stop when it has been.
 */
static int starve_rank(struct rmawin_ep *ep)
{
	int me = rmawin_rank(ep), r;
	int32_t w[4] = { 0 };
	struct rmawin_win *win;

	TRY(1, rmawin_win_create(ep, w, sizeof(w), 4, 0, &win));
	TRY(2, rmawin_barrier(ep));
	if (me == 1 || me == 3) {
		for (r = 0; r < 400 && !__atomic_load_n(&sh->stop, __ATOMIC_SEQ_CST); r++) {
			TRY(3, rmawin_lock(win, RMAWIN_LOCK_SHARED, 0));
			usleep(5000);
			TRY(4, rmawin_unlock(win, 0));
			__atomic_add_fetch(&sh->reader_rounds, 1, __ATOMIC_SEQ_CST);
		}
	} else if (me == 2) {
		usleep(100000);
		TRY(5, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		__atomic_store_n(&sh->stop, 1, __ATOMIC_SEQ_CST);
		TRY(6, rmawin_unlock(win, 0));
	}
	TRY(7, rmawin_barrier(ep));
	TRY(8, rmawin_win_free(win));
	return 0;
}

TEST(exclusive_not_starved_by_readers)
{
	setup_shared();
	EXPECT_EQ(4, run(4, 29200, starve_rank));
	EXPECT_EQ(1, sh->stop);
	/* the readers stopped long before running out of rounds */
	EXPECT_GT(2 * 400, sh->reader_rounds);
}

/* Rank 0 sleeps outside the library while the others work on its window. */
static int sleeper_rank(struct rmawin_ep *ep)
{
	int me = rmawin_rank(ep);
	double acc = 0, one = 1;
	struct rmawin_win *win;
	struct timespec ts = { 3, 0 };

	TRY(1, rmawin_win_create(ep, &acc, me ? 0 : sizeof(acc), 8, 0, &win));
	TRY(2, rmawin_barrier(ep));
	if (me == 0) {
		nanosleep(&ts, NULL);
		sh->woke_ns = now_ns();
	} else {
		TRY(3, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		TRY(4, rmawin_accumulate(win, &one, 1, RMAWIN_DOUBLE, 0, 0, RMAWIN_SUM));
		TRY(5, rmawin_flush(win, 0));
		TRY(6, rmawin_unlock(win, 0));
		sh->done_ns[me] = now_ns();
	}
	TRY(7, rmawin_barrier(ep));
	if (me == 0 && acc != rmawin_nranks(ep) - 1)
		return 8;
	TRY(9, rmawin_win_free(win));
	return 0;
}

TEST(progress_while_target_sleeps)
{
	int i;

	setup_shared();
	EXPECT_EQ(4, run(4, 29300, sleeper_rank));
	for (i = 1; i < 4; i++)
		EXPECT_LT(sh->done_ns[i], sh->woke_ns) TH_LOG("rank %d finished after the target woke", i);
}

/* A spin lock built from compare_and_swap under lock_all; checks it is alone. */
static int cas_mutex_rank(struct rmawin_ep *ep)
{
	int64_t mutex = 0, zero = 0, mine = rmawin_rank(ep) + 1, old, in;
	int me = rmawin_rank(ep), i;
	struct rmawin_win *win;

	TRY(1, rmawin_win_create(ep, &mutex, me ? 0 : 8, 8, 0, &win));
	TRY(2, rmawin_barrier(ep));
	TRY(3, rmawin_lock_all(win));
	for (i = 0; i < 10; i++) {
		do {
			TRY(4, rmawin_compare_and_swap(win, &mine, &zero, &old, RMAWIN_INT64, 0, 0));
			TRY(5, rmawin_flush(win, 0));
		} while (old != 0);
		in = __atomic_add_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		if (in != 1)
			return 6;
		usleep(1000);
		__atomic_sub_fetch(&sh->inside, 1, __ATOMIC_SEQ_CST);
		TRY(7, rmawin_compare_and_swap(win, &zero, &mine, &old, RMAWIN_INT64, 0, 0));
		TRY(8, rmawin_flush(win, 0));
		if (old != mine)
			return 9;
	}
	TRY(10, rmawin_unlock_all(win));
	TRY(11, rmawin_barrier(ep));
	TRY(12, rmawin_win_free(win));
	return 0;
}

TEST(compare_and_swap_mutex)
{
	setup_shared();
	EXPECT_EQ(3, run(3, 29400, cas_mutex_rank));
}

/* Misuse: each gets its own errno, and nothing hangs. */
static int misuse_rank(struct rmawin_ep *ep)
{
	int32_t w[4] = { 0 }, v = 1;
	struct rmawin_win *win;
	int bad = 0;

#define WANT(err, call) do { int _r = (call); if (_r != (err)) { \
	fprintf(stderr, "%s: %d, want %d\n", #call, _r, (err)); bad = 1; } } while (0)
	TRY(1, rmawin_win_create(ep, w, sizeof(w), 4, 0, &win));
	WANT(-EPERM, rmawin_put(win, &v, 4, 1, 0));		/* no epoch yet */
	WANT(-ENOLCK, rmawin_unlock(win, 1));			/* not locked */
	WANT(-ENOLCK, rmawin_flush(win, 1));
	WANT(-ENOLCK, rmawin_unlock_all(win));
	WANT(-EINVAL, rmawin_lock(win, RMAWIN_LOCK_SHARED, 2));	/* no rank 2 */
	WANT(-EINVAL, rmawin_lock(win, 7, 1));
	WANT(0, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
	WANT(-EBUSY, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));	/* twice */
	WANT(-EPERM, rmawin_put(win, &v, 4, 0, 0));		/* rank 0 not locked */
	WANT(0, rmawin_put(win, &v, 4, 1, 0));
	WANT(-EBUSY, rmawin_fence(win, 0));			/* fence inside a lock epoch */
	WANT(0, rmawin_unlock(win, 1));
	WANT(-EPERM, rmawin_put(win, &v, 4, 1, 0));		/* epoch over */
	TRY(2, rmawin_barrier(ep));
	WANT(0, rmawin_fence(win, 0));
	WANT(0, rmawin_put(win, &v, 4, 1, 0));
	WANT(-EBUSY, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));	/* fence epoch has ops */
	WANT(0, rmawin_fence(win, RMAWIN_MODE_NOSUCCEED));
	WANT(-EPERM, rmawin_put(win, &v, 4, 1, 0));		/* NOSUCCEED closed it */
	WANT(0, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 1));
	WANT(0, rmawin_unlock(win, 1));
	TRY(3, rmawin_barrier(ep));
	TRY(4, rmawin_win_free(win));
	return bad ? 5 : 0;
}

TEST(synchronization_misuse_errors)
{
	setup_shared();
	EXPECT_EQ(2, run(2, 29500, misuse_rank));
	EXPECT_EQ(0, rmawin_stat("windows"));
	EXPECT_EQ(0, rmawin_stat("reqs"));
}

TEST_HARNESS_MAIN
