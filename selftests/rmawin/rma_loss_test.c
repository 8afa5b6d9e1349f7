// SPDX-License-Identifier: GPL-2.0
/*
 * Losses under put and get: a rank killed in the middle of an epoch; a
 * rank killed while accumulates stream to it (in fragments, or through
 * its inbox); a group torn down under a thread waiting for notifications.
 * The others fail cleanly, never hang, and every page, MR and queue pair
 * is released.  Faults in the memory of put and get: rma_fault_test.c;
 * the RDMA device deleted under traffic: device_test.c.
 *
 * Every test runs on both of the library's paths: variants ring and
 * no_ring of its fixture.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "rma_fault_test.h"

/* ---- a rank killed during an epoch --------------------------------------- */

/* The victim: wait up to 20 s until ranks 0 and 2 have both set their @flag. */
static int others_got_there(const int *flag, const char *what)
{
	double t0 = rmawin_test_now();

	while (!(__atomic_load_n(&flag[0], __ATOMIC_SEQ_CST) &&
		 __atomic_load_n(&flag[2], __ATOMIC_SEQ_CST))) {
		if (rmawin_test_now() - t0 > 20) {
			RMAWIN_TEST_MSG("the others never %s", what);
			return 0;
		}
		usleep(1000);
	}
	return 1;
}

#define KILL_WIN	(4 * MIB)

struct killed {
	int port;
	int issued[3];
	int fence_ret[3];
	double fence_s[3];
	int put_ret[3];
	int free_ret[3];
};

/*
 * Every rank puts to every other; rank 1 waits until the others have
 * issued theirs (and gone on to the fence), issues its own (large ones
 * still in flight) and is SIGKILLed before its fence.
 */
static int killed_rank(int rank, int n, void *arg)
{
	struct killed *k = arg;
	unsigned char *mem = map_rw(KILL_WIN), *src = map_rw(2 * MIB);
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	double t0;
	int t, i;

	if (!mem || !src)
		return 1;
	fill(src, 2 * MIB, rank);
	RMAWIN_TEST_TRY(2, rmawin_test_open(rank, n, k->port, &ep));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, mem, KILL_WIN, 1, 0, &win));
	RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));
	if (rank == 1) {
		if (!others_got_there(k->issued, "issued their puts"))
			return 5;
		for (t = 0; t < n; t += 2) {
			RMAWIN_TEST_TRY(6, rmawin_put(win, src, 2 * MIB, t, MIB));
			for (i = 0; i < 8; i++)
				RMAWIN_TEST_TRY(7, rmawin_put(win, src + i * 100, 100, t, i * 100));
		}
		kill(getpid(), SIGKILL);
		return 8;
	}
	for (t = 0; t < n; t++) {
		if (t == rank)
			continue;
		RMAWIN_TEST_TRY(9, rmawin_put(win, src, MIB, t, 3 * MIB - rank * KIB));
		for (i = 0; i < 8; i++)
			RMAWIN_TEST_TRY(10, rmawin_put(win, src + i * 100, 100, t, 4000 + rank * 1000 + i * 100));
	}
	__atomic_store_n(&k->issued[rank], 1, __ATOMIC_SEQ_CST);
	t0 = rmawin_test_now();
	k->fence_ret[rank] = rmawin_fence(win, 0);
	k->fence_s[rank] = rmawin_test_now() - t0;
	/* the dead rank is unreachable for good */
	k->put_ret[rank] = rmawin_put(win, src, 100, 1, 0);
	k->free_ret[rank] = rmawin_win_free(win);
	RMAWIN_TEST_TRY(11, rmawin_ep_close(ep));
	return 0;
}

TEST_F_TIMEOUT(path, peer_killed_during_epoch, 150)
{
	struct killed *k = rmawin_test_shared(sizeof(*k));
	pid_t pids[3];
	int r, st;

	ASSERT_NE(NULL, k);
	k->port = rmawin_test_ports(3);
	for (r = 0; r < 3; r++)
		pids[r] = rmawin_test_fork_rank(r, 3, killed_rank, k);
	/* the victim first: it must die of SIGKILL, not of anything else */
	ASSERT_EQ(pids[1], waitpid(pids[1], &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		TH_LOG("rank 1 was to be SIGKILLed, status 0x%x", st);
	pids[1] = 0;
	EXPECT_EQ(2, rmawin_test_wait_ranks(_metadata, pids, 3, 120));
	for (r = 0; r < 3; r += 2) {
		EXPECT_EQ(-ECONNRESET, k->fence_ret[r]) {
			TH_LOG("rank %d: fence with rank 1 dead: %d (%s), want -ECONNRESET", r,
			       k->fence_ret[r], rmawin_strerror(k->fence_ret[r]));
		}
		TH_LOG("rank %d: the fence failed after %.1f s with %d (%s)", r, k->fence_s[r],
		       k->fence_ret[r], rmawin_strerror(k->fence_ret[r]));
		EXPECT_EQ(-ECONNRESET, k->put_ret[r]) {
			TH_LOG("rank %d: put to the dead rank after the fence: %d (%s)", r,
			       k->put_ret[r], rmawin_strerror(k->put_ret[r]));
		}
		EXPECT_NE(0, k->free_ret[r]) TH_LOG("rank %d: win_free with a rank dead "
						    "succeeded", r);
	}
	/* every page the dead rank (or anyone) pinned is released */
	rmawin_test_expect_no_leaks(_metadata);
	munmap(k, sizeof(*k));
}

/* ---- a rank killed in WIN_FREE with an operation in flight ---------------- */

#define FREE_DELAY_MS	2000	/* the receive hook: each control message waits this long */

struct killed_free {
	int port;
	int fenced[2];
	int go;
	int freeing[2];		/* the rank is about to call rmawin_win_free() */
	int free_ret;		/* rank 1's */
};

/*
 * After a fence, rank 1 frees the window; rank 0 accumulates into rank 1's
 * window and frees it too.  With the receive hook on, rank 1 applies the
 * accumulate FREE_DELAY_MS after it came, and rank 0 takes the reply
 * FREE_DELAY_MS after that, behind rank 1's barrier message: for a second
 * or so rank 0 has the barrier message and the accumulate in flight.  The
 * test SIGKILLs it then.
 */
static int killed_free_rank(int rank, int n, void *arg)
{
	struct killed_free *k = arg;
	int64_t mem[8] = { 0 }, one = 1;
	struct rmawin_win *win;
	struct rmawin_ep *ep;

	RMAWIN_TEST_TRY(2, rmawin_test_open(rank, n, k->port, &ep));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));
	__atomic_store_n(&k->fenced[rank], 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&k->go, __ATOMIC_SEQ_CST))
		usleep(1000);
	if (rank == 1) {
		__atomic_store_n(&k->freeing[rank], 1, __ATOMIC_SEQ_CST);
		k->free_ret = rmawin_win_free(win);
		return rmawin_ep_close(ep) ? 5 : 0;
	}
	RMAWIN_TEST_TRY(6, rmawin_accumulate(win, &one, 1, RMAWIN_INT64, 1, 0, RMAWIN_SUM));
	__atomic_store_n(&k->freeing[rank], 1, __ATOMIC_SEQ_CST);
	/* killed in there; returning from it is a failure either way */
	RMAWIN_TEST_MSG("rmawin_win_free() returned %d before the kill", rmawin_win_free(win));
	return 7;
}

/* Is process @pid's kernel stack in @fn now? */
static int in_kernel_fn(pid_t pid, const char *fn)
{
	char path[64], line[256];
	size_t len = strlen(fn);
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ' ');

		found = p && !strncmp(p + 1, fn, len) && p[1 + len] == '+';
	}
	fclose(f);
	return found;
}

/* Wait up to @s seconds for all of @n flags. */
static int flags_set(int *flags, int n, double s)
{
	double t0 = rmawin_test_now();
	int i, all = 0;

	while (!all && rmawin_test_now() - t0 < s) {
		for (all = 1, i = 0; i < n; i++)
			all = all && __atomic_load_n(&flags[i], __ATOMIC_SEQ_CST);
		usleep(1000);
	}
	return all;
}

/*
 * WIN_FREE completes the window's operations, then meets the others in a
 * barrier, then frees it.  A fatal signal cuts the first wait short with
 * an operation still in flight; the barrier may still pass (rank 1's
 * message is there already), and the window must not be freed under its
 * requests: the group goes instead, so rank 1's WIN_FREE fails.
 */
TEST_F_TIMEOUT(path, killed_in_win_free_with_op_in_flight, 120)
{
	struct killed_free *k = rmawin_test_shared(sizeof(*k));
	int r, st, waiting = 0;
	pid_t pids[2];
	double t0;

	ASSERT_NE(NULL, k);
	k->port = rmawin_test_ports(2);
	for (r = 0; r < 2; r++)
		pids[r] = rmawin_test_fork_rank(r, 2, killed_free_rank, k);
	EXPECT_TRUE(flags_set(k->fenced, 2, 60)) TH_LOG("the ranks never passed their fence");
	EXPECT_EQ(0, rmawin_test_set_hook("recv_delay_ms", FREE_DELAY_MS));
	t0 = rmawin_test_now();
	__atomic_store_n(&k->go, 1, __ATOMIC_SEQ_CST);
	if (flags_set(k->freeing, 2, 10))
		while (!waiting && rmawin_test_now() - t0 < FREE_DELAY_MS / 1000.0) {
			usleep(1000);
			waiting = in_kernel_fn(pids[0], "rmawin_win_complete") &&
				  in_kernel_fn(pids[0], "rmawin_ioctl_win_free");
		}
	/* halfway between rank 1's barrier message and the accumulate's reply */
	while (rmawin_test_now() < t0 + 1.5 * FREE_DELAY_MS / 1000.0)
		usleep(1000);
	waiting = waiting && in_kernel_fn(pids[0], "rmawin_win_complete");
	EXPECT_TRUE(waiting) TH_LOG("rank 0 was never seen waiting in WIN_FREE for its accumulate");
	kill(pids[0], SIGKILL);
	EXPECT_EQ(0, rmawin_test_set_hook("recv_delay_ms", 0));
	ASSERT_EQ(pids[0], waitpid(pids[0], &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		TH_LOG("rank 0 was to be SIGKILLed, status 0x%x", st);
	pids[0] = 0;
	EXPECT_EQ(1, rmawin_test_wait_ranks(_metadata, pids, 2, 60));
	EXPECT_EQ(-ECONNRESET, k->free_ret) {
		TH_LOG("rank 1: win_free with rank 0 killed in its own: %d (%s), want -ECONNRESET",
		       k->free_ret, rmawin_strerror(k->free_ret));
	}
	rmawin_test_expect_no_leaks(_metadata);
	munmap(k, sizeof(*k));
}

/* ---- the group torn down under a thread waiting for notifications ------- */

#define NW_WAIT_MS	30000	/* the parked NOTIFY_WAIT's own timeout */

struct notify_gone {
	int port;
	int parked;		/* rank 1's thread sleeps in NOTIFY_WAIT */
	int dead;		/* the test has killed rank 0 */
	int free_ret;		/* rank 1's WIN_FREE, with rank 0 dead */
	int wait_ret;		/* what the parked NOTIFY_WAIT returned */
	double free_s;		/* how long that WIN_FREE took */
	double wait_after_free_s;	/* and how long the wait went on after it */
};

struct nw_thread {
	struct rmawin_win *win;
	volatile pid_t tid;
	int ret;
};

static void *nw_main(void *arg)
{
	struct nw_thread *t = arg;
	struct rmawin_notification n;

	t->tid = (pid_t)syscall(SYS_gettid);
	t->ret = rmawin_notify_wait(t->win, &n, NW_WAIT_MS);
	return NULL;
}

/*
 * Rank 1 parks a thread in NOTIFY_WAIT on window A; rank 0 is killed;
 * rank 1's WIN_FREE of window B fails its barrier and tears the group
 * down.  The parked wait must end then, with -ENOTCONN: no notification
 * can come to a group that is gone.
 */
static int notify_gone_rank(int rank, int n, void *arg)
{
	struct notify_gone *k = arg;
	static int64_t a[8], b[8];
	struct nw_thread t = { 0 };
	struct rmawin_win *wa, *wb;
	struct rmawin_ep *ep;
	pthread_t th;
	double t0;
	int i;

	RMAWIN_TEST_TRY(2, rmawin_test_open(rank, n, k->port, &ep));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, a, sizeof(a), 8, 0, &wa));
	RMAWIN_TEST_TRY(4, rmawin_win_create(ep, b, sizeof(b), 8, 0, &wb));
	RMAWIN_TEST_TRY(5, rmawin_fence(wb, 0));
	if (rank == 0) {
		pause();	/* killed here */
		return 6;
	}
	t.win = wa;
	if (pthread_create(&th, NULL, nw_main, &t))
		return 7;
	for (i = 0; i < 20000 && !(t.tid && in_kernel_fn(t.tid, "rmawin_ioctl_notify_wait")); i++)
		usleep(1000);
	if (i == 20000) {
		RMAWIN_TEST_MSG("the thread was never seen waiting in NOTIFY_WAIT");
		return 8;
	}
	__atomic_store_n(&k->parked, 1, __ATOMIC_SEQ_CST);
	if (!flags_set(&k->dead, 1, 30))
		return 9;
	t0 = rmawin_test_now();
	k->free_ret = rmawin_win_free(wb);
	k->free_s = rmawin_test_now() - t0;
	t0 = rmawin_test_now();
	pthread_join(th, NULL);
	k->wait_after_free_s = rmawin_test_now() - t0;
	k->wait_ret = t.ret;
	return rmawin_ep_close(ep) ? 10 : 0;
}

TEST_F_TIMEOUT(path, group_torn_down_ends_a_notify_wait, 120)
{
	struct notify_gone *k = rmawin_test_shared(sizeof(*k));
	pid_t pids[2];
	int r, st;

	ASSERT_NE(NULL, k);
	k->port = rmawin_test_ports(2);
	for (r = 0; r < 2; r++)
		pids[r] = rmawin_test_fork_rank(r, 2, notify_gone_rank, k);
	EXPECT_TRUE(flags_set(&k->parked, 1, 60)) TH_LOG("rank 1 never parked its thread");
	kill(pids[0], SIGKILL);
	ASSERT_EQ(pids[0], waitpid(pids[0], &st, 0));
	pids[0] = 0;
	__atomic_store_n(&k->dead, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(1, rmawin_test_wait_ranks(_metadata, pids, 2, 90));
	EXPECT_EQ(-ECONNRESET, k->free_ret) {
		TH_LOG("rank 1: win_free with rank 0 dead: %d (%s), want -ECONNRESET",
		       k->free_ret, rmawin_strerror(k->free_ret));
	}
	TH_LOG("rank 1: win_free with rank 0 dead took %.1f s", k->free_s);
	EXPECT_EQ(-ENOTCONN, k->wait_ret) {
		TH_LOG("the parked notify_wait returned %d (%s) %.1f s after the group went, "
		       "want -ENOTCONN at once", k->wait_ret, rmawin_strerror(k->wait_ret),
		       k->wait_after_free_s);
	}
	rmawin_test_expect_no_leaks(_metadata);
	munmap(k, sizeof(*k));
}

/* ---- a rank killed holding, or waiting for, a window's lock ------------- */

struct killed_lock {
	int port;
	int held[4];		/* the rank holds rank 0's lock */
	int asking[4];		/* the rank is about to ask for it */
	int dead3;		/* the test has killed rank 3 */
	int done2;		/* rank 2 has unlocked */
	int64_t seen;		/* what rank 0 read under its own lock */
	int lock_ret[4], unlock_ret[4];
};

/*
 * Rank 1 takes rank 0's window lock and is SIGKILLed holding it, with rank
 * 2 in line; rank 3 asks while rank 2 holds it and is SIGKILLed in line.
 * Rank 2 must get the lock, and rank 0 its own after rank 2 unlocks.
 */
static int killed_lock_rank(int rank, int n, void *arg)
{
	struct killed_lock *k = arg;
	int64_t mem[8] = { 0 }, v = 42 + rank;
	struct rmawin_win *win;
	struct rmawin_ep *ep;

	RMAWIN_TEST_TRY(2, rmawin_test_open(rank, n, k->port, &ep));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	RMAWIN_TEST_TRY(4, rmawin_barrier(ep));
	switch (rank) {
	case 1:
		RMAWIN_TEST_TRY(5, rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0));
		RMAWIN_TEST_TRY(6, rmawin_put(win, &v, 8, 0, 1));
		RMAWIN_TEST_TRY(7, rmawin_flush(win, 0));
		__atomic_store_n(&k->held[rank], 1, __ATOMIC_SEQ_CST);
		pause();	/* SIGKILLed holding it */
		return 8;
	case 3:
		while (!__atomic_load_n(&k->held[2], __ATOMIC_SEQ_CST))
			usleep(1000);
		__atomic_store_n(&k->asking[rank], 1, __ATOMIC_SEQ_CST);
		k->lock_ret[rank] = rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0);
		pause();	/* SIGKILLed in line, or given the lock: either way */
		return 9;
	case 2:
		while (!__atomic_load_n(&k->held[1], __ATOMIC_SEQ_CST))
			usleep(1000);
		__atomic_store_n(&k->asking[rank], 1, __ATOMIC_SEQ_CST);
		k->lock_ret[rank] = rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0);
		if (k->lock_ret[rank])
			return 10;
		RMAWIN_TEST_TRY(11, rmawin_put(win, &v, 8, 0, 0));
		RMAWIN_TEST_TRY(12, rmawin_flush(win, 0));
		__atomic_store_n(&k->held[rank], 1, __ATOMIC_SEQ_CST);
		while (!__atomic_load_n(&k->dead3, __ATOMIC_SEQ_CST))
			usleep(1000);
		k->unlock_ret[rank] = rmawin_unlock(win, 0);
		__atomic_store_n(&k->done2, 1, __ATOMIC_SEQ_CST);
		break;
	default:
		while (!__atomic_load_n(&k->done2, __ATOMIC_SEQ_CST))
			usleep(1000);
		k->lock_ret[rank] = rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, 0);
		if (k->lock_ret[rank])
			return 13;
		k->seen = __atomic_load_n(&mem[0], __ATOMIC_SEQ_CST);
		k->unlock_ret[rank] = rmawin_unlock(win, 0);
		break;
	}
	/* ranks 1 and 3 are gone: the collective free cannot succeed */
	if (!rmawin_win_free(win))
		return 14;
	return rmawin_ep_close(ep) ? 15 : 0;
}

/* Kill rank @r of @pids once @flag is set and a moment has passed; 1 if done. */
static int kill_when(struct __test_metadata *_metadata, pid_t *pids, int r, int *flag)
{
	double t0 = rmawin_test_now();
	int st;

	while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST) && rmawin_test_now() - t0 < 60)
		usleep(1000);
	/* its LOCK has reached rank 0 by then: the call sends it before it waits */
	usleep(300000);
	kill(pids[r], SIGKILL);
	if (waitpid(pids[r], &st, 0) != pids[r] || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL) {
		TH_LOG("rank %d was to be SIGKILLed, status 0x%x", r, st);
		return 0;
	}
	pids[r] = 0;
	return 1;
}

/*
 * A member that fails never unlocks: the target's kernel lets go of what
 * it held or waited for, as if it had unlocked, so that neither the next
 * in line nor the target itself waits for it for ever.
 */
TEST_F_TIMEOUT(path, killed_holding_or_waiting_for_a_lock, 120)
{
	struct killed_lock *k = rmawin_test_shared(sizeof(*k));
	pid_t pids[4];
	int r;

	ASSERT_NE(NULL, k);
	k->port = rmawin_test_ports(4);
	for (r = 0; r < 4; r++)
		pids[r] = rmawin_test_fork_rank(r, 4, killed_lock_rank, k);
	/* rank 1 holds the lock, rank 2 is in line */
	EXPECT_TRUE(kill_when(_metadata, pids, 1, &k->asking[2]));
	/* rank 2 holds it, rank 3 is in line */
	EXPECT_TRUE(kill_when(_metadata, pids, 3, &k->asking[3]));
	__atomic_store_n(&k->dead3, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(2, rmawin_test_wait_ranks(_metadata, pids, 4, 60));
	EXPECT_EQ(0, k->lock_ret[2]) TH_LOG("rank 2's lock after rank 1 died: %d", k->lock_ret[2]);
	EXPECT_EQ(0, k->unlock_ret[2]);
	EXPECT_EQ(0, k->lock_ret[0]) TH_LOG("rank 0's lock after rank 3 died in line: %d",
					    k->lock_ret[0]);
	EXPECT_EQ(0, k->unlock_ret[0]);
	EXPECT_EQ(44, k->seen) TH_LOG("rank 0 read %lld, rank 2 put 44", (long long)k->seen);
	rmawin_test_expect_no_leaks(_metadata);
	munmap(k, sizeof(*k));
}

/* ---- a rank killed while accumulates stream to it ------------------------ */

#define KA_N		(1024 * 1024)	/* int32s to the victim: 4 MiB, 9363 fragments */
#define KA_OTHER	16384		/* int32s to the other survivor afterwards: 64 KiB */
#define BULK_MIN	"/sys/module/rmawin/parameters/acc_bulk_min"

struct killed_acc {
	int port;
	int issuing[3];
	int acc_ret[3], unlock_ret[3];		/* the accumulate to the victim */
	int other_ret[3];			/* lock, accumulate, unlock to the other */
	int done[3];
	long msgs[3];				/* control messages sent by then */
	long bad_at[3];				/* the first wrong element, or -1 */
	int free_ret[3];
};

static int32_t ka_value(int rank, long i)
{
	return (int32_t)(i * 7 + rank * 100003);
}

/*
 * Ranks 0 and 2 each accumulate 4 MiB into rank 1's window under a shared
 * lock; rank 1 SIGKILLs itself once both have begun, so their sending
 * usually stops part way (the fragments sent quiet since the last answered
 * one, or the inbox chunk in flight, are never answered).  Each survivor's
 * unlock of rank 1 then gives -ECONNRESET (and so does its accumulate on
 * the ioctl path, where the call itself sends); then each accumulates 64 KiB into the other's
 * window under a lock of its own, which must work and land exactly.
 */
static int killed_acc_rank(int rank, int n, void *arg)
{
	struct killed_acc *k = arg;
	int32_t *mem = map_rw(KA_N * 4), *src = map_rw(KA_N * 4);
	int other = 2 - rank, ret;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	long i;

	if (!mem || !src)
		return 1;
	for (i = 0; i < KA_N; i++)
		src[i] = ka_value(rank, i);
	RMAWIN_TEST_TRY(2, rmawin_test_open(rank, n, k->port, &ep));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, mem, KA_N * 4, 4, 0, &win));
	RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));
	if (rank == 1) {
		if (!others_got_there(k->issuing, "began their accumulates"))
			return 5;
		usleep(20000);
		kill(getpid(), SIGKILL);
		return 6;
	}
	RMAWIN_TEST_TRY(7, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
	__atomic_store_n(&k->issuing[rank], 1, __ATOMIC_SEQ_CST);
	k->acc_ret[rank] = rmawin_accumulate(win, src, KA_N, RMAWIN_INT32, 1, 0, RMAWIN_SUM);
	k->unlock_ret[rank] = rmawin_unlock(win, 1);
	k->msgs[rank] = rmawin_test_ep_stat("ctrl_msgs");
	/* the endpoint goes on with the living */
	ret = rmawin_lock(win, RMAWIN_LOCK_SHARED, other);
	if (!ret)
		ret = rmawin_accumulate(win, src, KA_OTHER, RMAWIN_INT32, other, 0, RMAWIN_SUM);
	if (!ret)
		ret = rmawin_unlock(win, other);
	k->other_ret[rank] = ret;
	__atomic_store_n(&k->done[rank], 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&k->done[other], __ATOMIC_SEQ_CST))
		usleep(1000);
	/* the other's accumulate is in our window, and nothing else is */
	k->bad_at[rank] = -1;
	for (i = 0; i < KA_N && k->bad_at[rank] < 0; i++)
		if (mem[i] != (i < KA_OTHER && !k->other_ret[other] ? ka_value(other, i) : 0))
			k->bad_at[rank] = i;
	k->free_ret[rank] = rmawin_win_free(win);
	RMAWIN_TEST_TRY(8, rmawin_ep_close(ep));
	return 0;
}

/* @bulk: the accumulates through the target's inbox, else in fragments */
static void killed_acc_case(struct __test_metadata *_metadata, bool bulk, bool no_ring)
{
	struct killed_acc *k = rmawin_test_shared(sizeof(*k));
	long whole = bulk ? KA_N * 4 / 8192 : KA_N * 4 / 448 + 1;
	long was = rmawin_test_read_long(BULK_MIN);
	pid_t pids[3], pids_victim, w;
	int r, st, want;

	ASSERT_NE(NULL, k);
	ASSERT_LT(0, was) TH_LOG("no module parameter acc_bulk_min, or it is 0");
	ASSERT_EQ(0, rmawin_test_write_long(BULK_MIN, bulk ? was : 0));
	k->port = rmawin_test_ports(3);
	for (r = 0; r < 3; r++)
		pids[r] = rmawin_test_fork_rank(r, 3, killed_acc_rank, k);
	pids_victim = pids[1];
	w = waitpid(pids[1], &st, 0);
	pids[1] = 0;
	EXPECT_EQ(2, rmawin_test_wait_ranks(_metadata, pids, 3, 120));
	ASSERT_EQ(0, rmawin_test_write_long(BULK_MIN, was));
	ASSERT_EQ(pids_victim, w);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		TH_LOG("rank 1 was to be SIGKILLed, status 0x%x", st);
	for (r = 0; r < 3; r += 2) {
		/*
		 * On the ring only queued: the transfer's error comes from the
		 * unlock.  The ioctl sends the fragments or chunks itself, and
		 * fails when the peer is lost under it, unless it had sent all.
		 */
		want = !no_ring || k->msgs[r] >= whole ? 0 : -ECONNRESET;
		EXPECT_EQ(want, k->acc_ret[r]) {
			TH_LOG("rank %d: accumulate to rank 1 (%s path): %d (%s), want %d", r,
			       no_ring ? "ioctl" : "ring", k->acc_ret[r],
			       rmawin_strerror(k->acc_ret[r]), want);
		}
		/*
		 * A dying target's kernel serves its peers until its teardown
		 * finds the group quiet: now and then it served the whole
		 * accumulate first, and the unlock may then have found it
		 * still there.  Cut off part way, the unlock must fail.
		 */
		if (k->msgs[r] < whole || k->unlock_ret[r]) {
			EXPECT_EQ(-ECONNRESET, k->unlock_ret[r]) {
				TH_LOG("rank %d: unlock of the dead rank: %d (%s), want -ECONNRESET",
				       r, k->unlock_ret[r], rmawin_strerror(k->unlock_ret[r]));
			}
		}
		EXPECT_EQ(0, k->other_ret[r]) {
			TH_LOG("rank %d: lock, accumulate, unlock to rank %d: %d (%s)", r, 2 - r,
			       k->other_ret[r], rmawin_strerror(k->other_ret[r]));
		}
		EXPECT_EQ(-1, k->bad_at[r]) TH_LOG("rank %d's window: element %ld is wrong", r,
						   k->bad_at[r]);
		EXPECT_NE(0, k->free_ret[r]) TH_LOG("rank %d: win_free with a rank dead "
						    "succeeded", r);
		TH_LOG("rank %d: %ld control messages sent when its unlock of rank 1 returned "
		       "(the whole accumulate: %ld %s)", r, k->msgs[r], whole,
		       bulk ? "chunks" : "fragments");
	}
	rmawin_test_expect_no_leaks(_metadata);
	munmap(k, sizeof(*k));
}

TEST_F_TIMEOUT(path, peer_killed_under_fragmented_accumulates, 150)
{
	killed_acc_case(_metadata, false, variant->no_ring);
}

TEST_F_TIMEOUT(path, peer_killed_under_inbox_accumulates, 150)
{
	killed_acc_case(_metadata, true, variant->no_ring);
}

TEST_HARNESS_MAIN
