// SPDX-License-Identifier: GPL-2.0
/*
 * Threads of one process on one endpoint (MPI_THREAD_MULTIPLE): a thread
 * waiting for peers (in a barrier, for a lock, for a POST) holds nothing
 * the process's other threads need.  Each test parks one thread of rank 0
 * in such a wait, makes sure it sleeps in the kernel, and has other
 * threads put, get and fetch-and-add to rank 1 meanwhile; rank 1 checks
 * their data before it releases the waiting thread.  Calls that would
 * undo what the waiting thread waits for are refused with -EBUSY.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <rmawin.h>

#include "rmawin_test.h"

RMAWIN_TEST_PATHS(path);

#define WORKERS		3
#define PUTS		1000	/* per worker */
#define ADDS		100	/* fetch-and-adds per worker */
#define COUNTER		(WORKERS * PUTS)	/* the fetch-and-add slot */
#define NOTE		(COUNTER + 1)		/* the notified put's */
#define SLOTS		(NOTE + 1)
#define DEADLINE_S	120

/* A thread parked in a call, with what it returned. */
struct parked {
	pthread_t thread;
	int (*fn)(struct parked *p);
	struct rmawin_ep *ep;
	struct rmawin_win *win;
	int target;
	volatile pid_t tid;
	volatile int done;
	int ret;
};

static void *parked_main(void *arg)
{
	struct parked *p = arg;

	p->tid = (pid_t)syscall(SYS_gettid);
	p->ret = p->fn(p);
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Start @p and wait until it sleeps in an ioctl, as /proc says: 0, or
 * -ETIMEDOUT after 20 s.
 */
static int park(struct parked *p)
{
	char path[96], buf[256], *s;
	int i, sys;
	FILE *f;

	if (pthread_create(&p->thread, NULL, parked_main, p))
		return -EAGAIN;
	for (i = 0; i < 20000; i++, usleep(1000)) {
		if (!p->tid || p->done)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)p->tid);
		f = fopen(path, "r");
		if (!f)
			continue;
		s = fgets(buf, sizeof(buf), f);
		fclose(f);
		s = s ? strrchr(buf, ')') : NULL;
		/* a killable sleep shows as D */
		if (!s || s[1] != ' ' || (s[2] != 'S' && s[2] != 'D'))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)p->tid);
		f = fopen(path, "r");
		if (!f)
			continue;
		sys = -1;
		if (fscanf(f, "%d", &sys) != 1)
			sys = -1;
		fclose(f);
		if (sys == SYS_ioctl)
			return 0;
	}
	RMAWIN_TEST_MSG("the parked thread never slept in an ioctl (done=%d)", p->done);
	return -ETIMEDOUT;
}

/* Joined: its call's result. */
static int unpark(struct parked *p)
{
	pthread_join(p->thread, NULL);
	return p->ret;
}

static int park_barrier(struct parked *p)
{
	return rmawin_barrier(p->ep);
}

static int park_lock(struct parked *p)
{
	return rmawin_lock(p->win, RMAWIN_LOCK_EXCLUSIVE, p->target);
}

static int park_start(struct parked *p)
{
	return rmawin_start(p->win, &p->target, 1);
}

struct worker {
	pthread_t thread;
	struct rmawin_win *win;
	int id;
	int ret;
	int64_t fetched[ADDS];
};

static uint64_t slot_value(int w, int i)
{
	return (uint64_t)(w + 1) << 32 | (uint64_t)i;
}

/* Puts to rank 1 with a flush every 100, reads them back, then fetch-and-adds. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t v[PUTS], back[PUTS];
	int64_t one = 1;
	int i, ret = 0;

	for (i = 0; i < PUTS && !ret; i++) {
		v[i] = slot_value(w->id, i);
		ret = rmawin_put(w->win, &v[i], 8, 1, w->id * PUTS + i);
		if (!ret && i % 100 == 99)
			ret = rmawin_flush(w->win, 1);
	}
	if (!ret)
		ret = rmawin_get(w->win, back, sizeof(back), 1, w->id * PUTS);
	if (!ret)
		ret = rmawin_flush(w->win, 1);
	if (!ret && memcmp(back, v, sizeof(v))) {
		RMAWIN_TEST_MSG("worker %d: its puts read back differ", w->id);
		ret = -EBADMSG;
	}
	for (i = 0; i < ADDS && !ret; i++) {
		ret = rmawin_fetch_and_op(w->win, &one, &w->fetched[i], RMAWIN_INT64, 1, COUNTER,
					  RMAWIN_SUM);
		if (!ret)
			ret = rmawin_flush(w->win, 1);
	}
	w->ret = ret;
	return NULL;
}

/* WORKERS threads on @win (locked to rank 1); every fetched value once. */
static int run_workers(struct rmawin_win *win)
{
	static struct worker w[WORKERS];
	static unsigned char seen[WORKERS * ADDS];
	int i, k, ret = 0;

	memset(seen, 0, sizeof(seen));
	for (i = 0; i < WORKERS; i++) {
		w[i].win = win;
		w[i].id = i;
		w[i].ret = 0;
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]))
			return -EAGAIN;
	}
	for (i = 0; i < WORKERS; i++) {
		pthread_join(w[i].thread, NULL);
		if (w[i].ret && !ret) {
			RMAWIN_TEST_MSG("worker %d: %s", i, rmawin_strerror(w[i].ret));
			ret = w[i].ret;
		}
	}
	for (i = 0; i < WORKERS && !ret; i++) {
		for (k = 0; k < ADDS; k++) {
			int64_t f = w[i].fetched[k];

			if (f < 0 || f >= WORKERS * ADDS || seen[f]++) {
				RMAWIN_TEST_MSG("fetch-and-add gave %lld twice or out of range",
						(long long)f);
				return -EBADMSG;
			}
		}
	}
	return ret;
}

/* Rank 1: the workers' data, once rank 0 says it is there. */
static int check_workers_data(struct rmawin_win *win, const uint64_t *mem, uint32_t tag)
{
	struct rmawin_notification note;
	int w, i, ret;

	ret = rmawin_notify_wait(win, &note, 60000);
	if (ret)
		return ret;
	if (note.tag != tag || note.source != 0 || mem[NOTE] != tag) {
		RMAWIN_TEST_MSG("notification tag %u from %d (data %llu), want %u from 0",
				note.tag, note.source, (unsigned long long)mem[NOTE], tag);
		return -EBADMSG;
	}
	for (w = 0; w < WORKERS; w++) {
		for (i = 0; i < PUTS; i++) {
			if (mem[w * PUTS + i] != slot_value(w, i)) {
				RMAWIN_TEST_MSG("slot %d: %#llx, want %#llx", w * PUTS + i,
						(unsigned long long)mem[w * PUTS + i],
						(unsigned long long)slot_value(w, i));
				return -EBADMSG;
			}
		}
	}
	if (mem[COUNTER] != WORKERS * ADDS) {
		RMAWIN_TEST_MSG("counter %llu, want %d", (unsigned long long)mem[COUNTER],
				WORKERS * ADDS);
		return -EBADMSG;
	}
	return 0;
}

/* Rank 0: the workers on @data, then a notification with @tag to rank 1. */
static int workers_then_notify(struct rmawin_win *data, struct parked *p, uint32_t tag)
{
	uint64_t t = tag;

	RMAWIN_TEST_TRY(30, run_workers(data));
	/* the parked thread still waits: rank 1 has not let it go */
	if (__atomic_load_n(&p->done, __ATOMIC_ACQUIRE)) {
		RMAWIN_TEST_MSG("the parked thread returned %d before rank 1 let it", p->ret);
		return 31;
	}
	RMAWIN_TEST_TRY(32, rmawin_put_notify(data, &t, 8, 1, NOTE, tag));
	RMAWIN_TEST_TRY(33, rmawin_flush(data, 1));
	return 0;
}

static uint64_t mem_a[SLOTS], mem_b[SLOTS];

static int barrier_rank(struct rmawin_ep *ep, void *arg)
{
	struct parked p = { .fn = park_barrier, .ep = ep };
	struct rmawin_win *win;
	int me = rmawin_rank(ep), ret;

	(void)arg;
	memset(mem_a, 0, sizeof(mem_a));
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem_a, sizeof(mem_a), 8, 0, &win));
	if (me == 0) {
		RMAWIN_TEST_TRY(2, rmawin_lock_all(win));
		RMAWIN_TEST_TRY(3, park(&p));
		ret = workers_then_notify(win, &p, 7);
		if (ret)
			return ret;
		RMAWIN_TEST_TRY(4, unpark(&p));
		RMAWIN_TEST_TRY(5, rmawin_unlock_all(win));
	} else {
		RMAWIN_TEST_TRY(6, check_workers_data(win, mem_a, 7));
		/* rank 0's parked barrier */
		RMAWIN_TEST_TRY(7, rmawin_barrier(ep));
	}
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	return 0;
}

/* WIN_FREE by ioctl, so that the library keeps its window when it is refused. */
static int win_free_raw(struct rmawin_ep *ep, uint32_t id)
{
	struct rmawin_win_free f = { .size = sizeof(f), .win = id };

	return ioctl(rmawin_ep_fd(ep), RMAWIN_IOC_WIN_FREE, &f) ? -errno : 0;
}

static int lock_rank(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_win *a, *b;
	struct parked p = { .fn = park_lock, .ep = ep, .target = 1 };
	int me = rmawin_rank(ep), ret, bad = 0;
	uint64_t v = 0xabcdef;

	(void)arg;
	memset(mem_a, 0, sizeof(mem_a));
	memset(mem_b, 0, sizeof(mem_b));
	/* the group's first window: handle 0 */
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem_a, sizeof(mem_a), 8, 0, &a));
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem_b, sizeof(mem_b), 8, 0, &b));
	if (me == 1)
		RMAWIN_TEST_TRY(3, rmawin_lock(a, RMAWIN_LOCK_EXCLUSIVE, 1));
	RMAWIN_TEST_TRY(4, rmawin_barrier(ep));
	if (me == 0) {
		RMAWIN_TEST_TRY(5, rmawin_lock_all(b));
		p.win = a;
		RMAWIN_TEST_TRY(6, park(&p));
		/* the lock it waits for may not be given back, nor its window freed */
		RMAWIN_TEST_WANT(-EBUSY, rmawin_unlock(a, 1));
		/* nor flushed: its epoch has not begun */
		RMAWIN_TEST_WANT(-EBUSY, rmawin_flush(a, 1));
		RMAWIN_TEST_WANT(-EBUSY, rmawin_flush_all(a));
		RMAWIN_TEST_WANT(-EBUSY, win_free_raw(ep, 0));
		/* the library keeps the window it could not free */
		RMAWIN_TEST_WANT(-EBUSY, rmawin_win_free(a));
		ret = workers_then_notify(b, &p, 9);
		if (ret)
			return ret;
		RMAWIN_TEST_TRY(7, unpark(&p));
		RMAWIN_TEST_TRY(8, rmawin_put(a, &v, 8, 1, 5));
		RMAWIN_TEST_TRY(9, rmawin_unlock(a, 1));
		RMAWIN_TEST_TRY(10, rmawin_unlock_all(b));
	} else {
		RMAWIN_TEST_TRY(11, check_workers_data(b, mem_b, 9));
		RMAWIN_TEST_TRY(12, rmawin_unlock(a, 1));
	}
	RMAWIN_TEST_TRY(13, rmawin_barrier(ep));
	if (me == 1 && mem_a[5] != v) {
		RMAWIN_TEST_MSG("the put under the granted lock: %#llx", (unsigned long long)mem_a[5]);
		bad = 1;
	}
	RMAWIN_TEST_TRY(14, rmawin_win_free(b));
	RMAWIN_TEST_TRY(15, rmawin_win_free(a));
	return bad ? 16 : 0;
}

static int start_rank(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_win *a, *b;
	struct parked p = { .fn = park_start, .ep = ep, .target = 1 };
	int me = rmawin_rank(ep), ret, bad = 0, origin = 0;
	uint64_t v = 0x5eed;

	(void)arg;
	memset(mem_a, 0, sizeof(mem_a));
	memset(mem_b, 0, sizeof(mem_b));
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem_a, sizeof(mem_a), 8, 0, &a));
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem_b, sizeof(mem_b), 8, 0, &b));
	if (me == 0) {
		RMAWIN_TEST_TRY(3, rmawin_lock_all(b));
		p.win = a;
		RMAWIN_TEST_TRY(4, park(&p));
		/* no other PSCW call on the window while START waits */
		RMAWIN_TEST_WANT(-EBUSY, rmawin_complete(a));
		RMAWIN_TEST_WANT(-EBUSY, rmawin_post(a, &p.target, 1));
		RMAWIN_TEST_WANT(-EBUSY, win_free_raw(ep, 0));
		ret = workers_then_notify(b, &p, 5);
		if (ret)
			return ret;
		RMAWIN_TEST_TRY(5, unpark(&p));
		RMAWIN_TEST_TRY(6, rmawin_put(a, &v, 8, 1, 3));
		RMAWIN_TEST_TRY(7, rmawin_complete(a));
		RMAWIN_TEST_TRY(8, rmawin_unlock_all(b));
	} else {
		RMAWIN_TEST_TRY(9, check_workers_data(b, mem_b, 5));
		RMAWIN_TEST_TRY(10, rmawin_post(a, &origin, 1));
		RMAWIN_TEST_TRY(11, rmawin_wait(a));
		if (mem_a[3] != v) {
			RMAWIN_TEST_MSG("the put of the access epoch: %#llx",
					(unsigned long long)mem_a[3]);
			bad = 1;
		}
	}
	RMAWIN_TEST_TRY(12, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(13, rmawin_win_free(b));
	RMAWIN_TEST_TRY(14, rmawin_win_free(a));
	return bad ? 15 : 0;
}

#define BARRIER_THREADS	4
#define BARRIERS	50

static void *barriers_main(void *arg)
{
	struct rmawin_ep *ep = arg;
	intptr_t ret = 0;
	int i;

	for (i = 0; i < BARRIERS && !ret; i++)
		ret = rmawin_barrier(ep);
	return (void *)ret;
}

/* Collectives from several threads at once: one at a time, none lost. */
static int barriers_rank(struct rmawin_ep *ep, void *arg)
{
	pthread_t t[BARRIER_THREADS];
	void *res;
	int i, ret = 0;

	(void)arg;
	for (i = 0; i < BARRIER_THREADS; i++)
		if (pthread_create(&t[i], NULL, barriers_main, ep))
			return 1;
	for (i = 0; i < BARRIER_THREADS; i++) {
		pthread_join(t[i], &res);
		if (res && !ret) {
			ret = (int)(intptr_t)res;
			RMAWIN_TEST_MSG("a barrier thread: %s", rmawin_strerror(ret));
		}
	}
	return ret ? 2 : 0;
}

/* Two ranks run @fn, at most DEADLINE_S seconds; nothing of them left after. */
#define THREADS_TEST(name, fn)								\
	TEST_F_TIMEOUT(path, name, DEADLINE_S + 30)					\
	{										\
		ASSERT_EQ(2, rmawin_test_run_eps(_metadata, 2, fn, NULL, DEADLINE_S));	\
		rmawin_test_expect_no_leaks(_metadata);					\
	}

THREADS_TEST(operations_go_on_while_a_thread_waits_in_a_barrier, barrier_rank)
THREADS_TEST(operations_go_on_while_a_thread_waits_for_a_lock, lock_rank)
THREADS_TEST(operations_go_on_while_a_thread_waits_in_start, start_rank)
THREADS_TEST(barriers_from_several_threads_at_once, barriers_rank)

/*
 * Device removal while a thread waits for a lock and another works: the
 * removal ends the wait (the group goes only after the sleeper left), the
 * worker's next call fails, and everything is released.
 */
#define TMP_IBDEV	"rmwthr"
#define TMP_NETDEV	"rmwthr0"
#define TMP_IP		"198.18.97.1"

RMAWIN_TEST_TMPDEV_PATHS(tmpdev, TMP_IBDEV, TMP_NETDEV, TMP_IP);

struct removal {
	int port;
	int parked;		/* rank 0's thread sleeps for the lock */
	int iters;		/* its worker's rounds before the removal */
	int lock_ret;
	int work_ret;
	int go;			/* the parent looked: free and close */
};

struct removal_worker {
	struct rmawin_win *win;
	struct removal *r;
	int ret;
};

/* Put and flush until a call fails (the device goes away). */
static void *removal_work(void *arg)
{
	struct removal_worker *w = arg;
	uint64_t v = 1;
	int ret = 0;

	while (!ret) {
		ret = rmawin_put(w->win, &v, 8, 1, 0) ?: rmawin_flush(w->win, 1);
		if (!ret)
			__atomic_add_fetch(&w->r->iters, 1, __ATOMIC_SEQ_CST);
	}
	w->ret = ret;
	return NULL;
}

static int removal_rank(int rank, int n, void *arg)
{
	struct removal *r = arg;
	struct parked p = { .fn = park_lock, .target = 1 };
	struct removal_worker w = { .r = r };
	struct rmawin_win *a, *b;
	struct rmawin_ep *ep;
	pthread_t t;

	RMAWIN_TEST_TRY(1, rmawin_test_open_on(TMP_IP, TMP_IBDEV, rank, n, r->port, 20000, &ep));
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem_a, sizeof(mem_a), 8, 0, &a));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, mem_b, sizeof(mem_b), 8, 0, &b));
	if (rank == 1)
		RMAWIN_TEST_TRY(4, rmawin_lock(a, RMAWIN_LOCK_EXCLUSIVE, 1));
	RMAWIN_TEST_TRY(5, rmawin_barrier(ep));
	if (rank == 0) {
		RMAWIN_TEST_TRY(6, rmawin_lock_all(b));
		w.win = b;
		if (pthread_create(&t, NULL, removal_work, &w))
			return 7;
		p.ep = ep;
		p.win = a;
		RMAWIN_TEST_TRY(8, park(&p));
		__atomic_store_n(&r->parked, 1, __ATOMIC_SEQ_CST);
		r->lock_ret = unpark(&p);
		pthread_join(t, NULL);
		r->work_ret = w.ret;
	}
	while (!__atomic_load_n(&r->go, __ATOMIC_SEQ_CST))
		usleep(10000);
	/* the device is gone: these fail, and must not hang or leak */
	rmawin_win_free(b);
	rmawin_win_free(a);
	RMAWIN_TEST_TRY(9, rmawin_ep_close(ep));
	return 0;
}

TEST_F_TIMEOUT(tmpdev, device_removal_ends_a_thread_s_lock_wait, DEADLINE_S + 60)
{
	static const char *const counters[] = { "groups", "qps", "windows", "mrs",
						"pinned_pages", "reqs" };
	struct removal *r = rmawin_test_shared(sizeof(*r));
	double end = rmawin_test_now() + 60;
	pid_t pids[2];
	unsigned int c;
	long v;
	int i;

	ASSERT_NE(NULL, r);
	r->port = rmawin_test_ports(2);
	for (i = 0; i < 2; i++)
		pids[i] = rmawin_test_fork_rank(i, 2, removal_rank, r);
	/* the lock wait parked, and the worker going on around it */
	while ((!__atomic_load_n(&r->parked, __ATOMIC_SEQ_CST) ||
		__atomic_load_n(&r->iters, __ATOMIC_SEQ_CST) < 20) && rmawin_test_now() < end)
		usleep(10000);
	EXPECT_TRUE(r->parked && r->iters >= 20)
		TH_LOG("parked %d, %d worker rounds: the test never got going", r->parked, r->iters);
	EXPECT_EQ(0, rmawin_test_sh("timeout 60 rdma link del " TMP_IBDEV));
	end = rmawin_test_now() + 30;
	while ((!r->lock_ret || !r->work_ret) && rmawin_test_now() < end)
		usleep(10000);
	EXPECT_TRUE(r->lock_ret == -ENODEV || r->lock_ret == -ECONNRESET)
		TH_LOG("the parked lock returned %d (%s)", r->lock_ret,
		       rmawin_strerror(r->lock_ret));
	EXPECT_TRUE(r->work_ret == -ENODEV || r->work_ret == -ECONNRESET)
		TH_LOG("the worker's last call returned %d (%s)", r->work_ret,
		       rmawin_strerror(r->work_ret));
	for (c = 0; c < ARRAY_SIZE(counters); c++) {
		v = rmawin_stat(counters[c]);
		EXPECT_EQ(0, v) TH_LOG("'%s' is %ld after the removal", counters[c], v);
	}
	__atomic_store_n(&r->go, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(2, rmawin_test_wait_ranks(_metadata, pids, 2, 30));
	rmawin_test_expect_no_leaks(_metadata);
	munmap(r, sizeof(*r));
}

/* What the tests above rely on, said where a library or an MPI can ask. */
TEST(module_says_threads_do_not_hold_each_other_up)
{
	__u64 features = rmawin_test_features();

	EXPECT_NE(0, features & RMAWIN_FEAT_THREADS)
		TH_LOG("features %#llx: no RMAWIN_FEAT_THREADS", (unsigned long long)features);
}

TEST_HARNESS_MAIN
