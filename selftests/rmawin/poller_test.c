// SPDX-License-Identifier: GPL-2.0
/*
 * The shared poller: the rings of one process's endpoints, and of the
 * processes of one user in one cgroup, are consumed by one thread
 * (rmawin_poll/<n>), which sits in their cgroup and counts each ring's
 * share of its time in the endpoint's poll_ns; another user, or another
 * cgroup, gets a thread of its own.  The thread is gone with the last
 * ring.  The doorbell that wakes a sleeping poller clears the ring's
 * RMAWIN_SQ_NEED_WAKEUP, so that the submissions after it ring none.  And
 * while the poller has given its CPU away (the test hook poll_force_yield),
 * an operation on an empty ring goes by ioctl, its errors still waiting for
 * the synchronization.  A long accumulate of one process (the library
 * issues it in its own thread) holds no other process's ring up.
 * Endpoints of one poller closed from several threads at once let go of
 * it cleanly, over and over.
 */
#include <dirent.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "rmawin_test.h"

#define CGROUP_ROOT	"/sys/fs/cgroup"
#define CGROUP_TEST	CGROUP_ROOT "/rmawin_poller_test"

/* The pid of thread rmawin_poll/@id, or -1. */
static pid_t poller_pid(int id)
{
	pid_t pid;

	rmawin_test_pollers(&pid, id);
	return pid;
}

/*
 * The debugfs files of the endpoints of process @pid: each one's poller id
 * and poll_ns, up to @max of them.  Returns how many there are.
 */
static int ep_pollers(pid_t pid, int *ids, long *ns, int max)
{
	char path[300], key[64], line[128];
	struct dirent *d;
	DIR *dir = opendir("/sys/kernel/debug/rmawin");
	long val, owner, id, poll;
	int n = 0;
	FILE *f;

	while (dir && (d = readdir(dir))) {
		if (strncmp(d->d_name, "ep", 2))
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/debug/rmawin/%s", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		owner = id = poll = -1;
		/* line by line: some values are words ("device rxe0") */
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%63s %ld", key, &val) != 2)
				continue;
			if (!strcmp(key, "pid"))
				owner = val;
			else if (!strcmp(key, "poller"))
				id = val;
			else if (!strcmp(key, "poll_ns"))
				poll = val;
		}
		fclose(f);
		if (owner != pid)
			continue;
		if (n < max) {
			ids[n] = id;
			ns[n] = poll;
		}
		n++;
	}
	if (dir)
		closedir(dir);
	return n;
}

/* The one poller of process @pid's one endpoint, or -1. */
static int poller_of(pid_t pid)
{
	int id;
	long ns;

	return ep_pollers(pid, &id, &ns, 1) == 1 ? id : -1;
}

/* The cgroup line of /proc/@pid/cgroup ("0::/path"), in @buf. */
static char *cgroup_of(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "r");
	buf[0] = 0;
	if (f) {
		if (!fgets(buf, len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/*
 * @n (a multiple of 16, at most 64) puts of 1000 + i to slot i % 16 of our
 * own window through the ring, flushed; then every slot must hold its last
 * value.  Each from its own origin: a queued put reads it when the poller
 * takes the entry (MPI: not before the origin completes locally).
 */
static int own_puts(struct rmawin_ep *ep, int n)
{
	uint64_t mem[16] = { 0 }, v[64];
	struct rmawin_win *win;
	int i, ret = 0;

	if (n % 16 || n > 64)
		return -EINVAL;
	RMAWIN_TEST_TRY(1, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	RMAWIN_TEST_TRY(2, rmawin_lock_all(win));
	for (i = 0; i < n; i++) {
		v[i] = 1000 + i;
		RMAWIN_TEST_TRY(3, rmawin_put(win, &v[i], sizeof(v[i]), 0, i % 16));
	}
	RMAWIN_TEST_TRY(4, rmawin_flush_all(win));
	RMAWIN_TEST_TRY(5, rmawin_unlock_all(win));
	for (i = 0; i < 16; i++)
		if (mem[i] != (uint64_t)(1000 + n - 16 + i)) {
			fprintf(stderr, "#   slot %d holds %llu, not %d\n", i,
				(unsigned long long)mem[i], 1000 + n - 16 + i);
			ret = -EIO;
		}
	RMAWIN_TEST_TRY(6, rmawin_win_free(win));
	return ret;
}

TEST(endpoints_of_one_process_share_one_poller)
{
	struct rmawin_ep *a, *b;
	int ids[4], i;
	long ns[4];

	ASSERT_EQ(0, rmawin_test_pollers(NULL, -1));
	ASSERT_EQ(0, rmawin_test_open(0, 1, rmawin_test_ports(1), &a));
	ASSERT_EQ(0, rmawin_test_open(0, 1, rmawin_test_ports(1), &b));
	ASSERT_EQ(1, rmawin_ep_ring_active(a));
	ASSERT_EQ(1, rmawin_ep_ring_active(b));
	EXPECT_EQ(1, rmawin_test_pollers(NULL, -1));
	EXPECT_EQ(1, rmawin_stat("pollers"));
	/*
	 * Both rings work, through the one thread.  A poller that yields its
	 * CPU (another task wanted it) leaves single puts to the ioctl: again
	 * until the thread has run each ring's entries at least once.
	 */
	for (i = 0; i < 20 && (!i || !ns[0] || !ns[1]); i++) {
		EXPECT_EQ(0, own_puts(a, 64));
		EXPECT_EQ(0, own_puts(b, 64));
		ASSERT_EQ(2, ep_pollers(getpid(), ids, ns, 4));
	}
	EXPECT_LT(0, ids[0]);
	EXPECT_EQ(ids[0], ids[1]);
	EXPECT_LT(0, poller_pid(ids[0]));
	/* each ring's share of the poller's time is counted for its endpoint */
	EXPECT_LT(0, ns[0]);
	EXPECT_LT(0, ns[1]);
	/* the thread stays for the other ring, and goes with the last */
	EXPECT_EQ(0, rmawin_ep_close(a));
	EXPECT_EQ(1, rmawin_test_pollers(NULL, -1));
	EXPECT_EQ(0, own_puts(b, 32));
	EXPECT_EQ(0, rmawin_ep_close(b));
	EXPECT_EQ(0, rmawin_test_pollers_become(0));
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * A child that opens an endpoint with a ring (as user @uid unless -1, in
 * cgroup @cgroup unless NULL), puts through it, says 0 (or why it failed)
 * on @out, and keeps the endpoint until @in closes.  (Its poller is read
 * from debugfs by the test: the child may not be root.)
 */
static pid_t child_ep(int port, uid_t uid, const char *cgroup, int *in_w, int *out_r)
{
	int in[2], out[2], res = 1, ok = 0;
	struct rmawin_ep *ep = NULL;
	char c, pid[32];
	pid_t p;
	FILE *f;

	if (pipe(in) || pipe(out))
		return -1;
	fflush(stdout);
	fflush(stderr);
	p = fork();
	if (p)
		goto parent;
	close(in[1]);
	close(out[0]);
	if (cgroup) {
		f = fopen(cgroup, "w");
		snprintf(pid, sizeof(pid), "%d\n", getpid());
		ok = f && fputs(pid, f) >= 0;
		if (f && fclose(f))
			ok = 0;
		if (!ok)
			_exit(2);
	}
	if (uid != (uid_t)-1 && (setgid(uid) || setuid(uid)))
		_exit(3);
	if (!rmawin_test_open(0, 1, port, &ep) && rmawin_ep_ring_active(ep) == 1 &&
	    !own_puts(ep, 16))
		res = 0;
	if (write(out[1], &res, sizeof(res)) != sizeof(res))
		_exit(4);
	/* until the test closes its end */
	while (read(in[0], &c, 1) > 0)
		;
	if (ep)
		rmawin_ep_close(ep);
	_exit(res);
parent:
	close(in[0]);
	close(out[1]);
	*in_w = in[1];
	*out_r = out[0];
	return p;
}

/* Once child_ep() @p says its endpoint works: its poller's id, or -1. */
static int child_id(pid_t p, int out_r)
{
	int res = -1;

	if (read(out_r, &res, sizeof(res)) != sizeof(res) || res)
		return -1;
	return poller_of(p);
}

/* Let the child go and reap it: 1 if it exited 0. */
static int child_end(pid_t p, int in_w, int out_r)
{
	int st = 0;

	close(in_w);
	close(out_r);
	return waitpid(p, &st, 0) == p && WIFEXITED(st) && !WEXITSTATUS(st);
}

TEST(processes_of_one_user_and_cgroup_share_a_poller)
{
	char cg_parent[256], cg_poller[256];
	int in1, out1, in2, out2, mine, id1, id2;
	struct rmawin_ep *ep;
	pid_t c1, c2;

	ASSERT_EQ(0, rmawin_test_open(0, 1, rmawin_test_ports(1), &ep));
	ASSERT_EQ(0, own_puts(ep, 16));
	mine = poller_of(getpid());
	ASSERT_LT(0, mine);
	/* the thread works in its owner's cgroup */
	EXPECT_STREQ(cgroup_of(getpid(), cg_parent, sizeof(cg_parent)),
		     cgroup_of(poller_pid(mine), cg_poller, sizeof(cg_poller)));

	/* another process of the same user and cgroup: the same thread */
	c1 = child_ep(rmawin_test_ports(1), -1, NULL, &in1, &out1);
	ASSERT_LT(0, c1);
	id1 = child_id(c1, out1);
	EXPECT_EQ(mine, id1);
	EXPECT_EQ(1, rmawin_test_pollers(NULL, -1));

	/* another user: a thread of its own */
	c2 = child_ep(rmawin_test_ports(1), 65534, NULL, &in2, &out2);
	ASSERT_LT(0, c2);
	id2 = child_id(c2, out2);
	EXPECT_LT(0, id2);
	EXPECT_NE(mine, id2);
	EXPECT_EQ(2, rmawin_test_pollers(NULL, -1));
	EXPECT_EQ(2, rmawin_stat("pollers"));

	EXPECT_TRUE(child_end(c2, in2, out2));
	EXPECT_EQ(1, rmawin_test_pollers_become(1)) TH_LOG("the other user's poller outlived its ring");
	EXPECT_TRUE(child_end(c1, in1, out1));
	EXPECT_EQ(1, rmawin_test_pollers(NULL, -1));
	EXPECT_EQ(0, own_puts(ep, 16));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_test_pollers_become(0));
	rmawin_test_expect_no_leaks(_metadata);
}

/* cgroup2 at CGROUP_ROOT (mounted here if need be): NULL, or why not. */
static const char *cgroup2_why_not(void)
{
	struct stat st;

	if (!stat(CGROUP_ROOT "/cgroup.procs", &st))
		return NULL;
	if (mount("none", CGROUP_ROOT, "cgroup2", 0, NULL))
		return "cgroup2 cannot be mounted on " CGROUP_ROOT;
	return NULL;
}

TEST(another_cgroup_gets_its_own_poller_in_that_cgroup)
{
	char cg_child[256], cg_poller[256];
	struct rmawin_ep *ep;
	int in, out, mine, id;
	const char *why;
	pid_t c;

	why = cgroup2_why_not();
	if (why)
		SKIP(return, "%s", why);
	rmdir(CGROUP_TEST);
	ASSERT_EQ(0, mkdir(CGROUP_TEST, 0755));
	ASSERT_EQ(0, rmawin_test_open(0, 1, rmawin_test_ports(1), &ep));
	ASSERT_EQ(0, own_puts(ep, 16));
	mine = poller_of(getpid());
	ASSERT_LT(0, mine);

	c = child_ep(rmawin_test_ports(1), -1, CGROUP_TEST "/cgroup.procs", &in, &out);
	ASSERT_LT(0, c);
	id = child_id(c, out);
	EXPECT_LT(0, id);
	EXPECT_NE(mine, id);
	EXPECT_EQ(2, rmawin_test_pollers(NULL, -1));
	/* the new thread is charged where its process is */
	EXPECT_STREQ("0::/rmawin_poller_test", cgroup_of(c, cg_child, sizeof(cg_child)));
	EXPECT_STREQ(cg_child, cgroup_of(poller_pid(id), cg_poller, sizeof(cg_poller)));

	EXPECT_TRUE(child_end(c, in, out));
	EXPECT_EQ(1, rmawin_test_pollers_become(1));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_test_pollers_become(0));
	EXPECT_EQ(0, rmdir(CGROUP_TEST));
	rmawin_test_expect_no_leaks(_metadata);
}

/* Our endpoint's poll_ns (the poller's time on its ring), or -1. */
static long my_poll_ns(void)
{
	int id;
	long ns;

	return ep_pollers(getpid(), &id, &ns, 1) == 1 ? ns : -1;
}

TEST(operations_go_by_ioctl_while_the_poller_yields_its_cpu)
{
	uint64_t mem[4] = { 0 }, v = 5, one = 1, r = 7;
	unsigned long wakeups;
	struct rmawin_ep *ep;
	struct rmawin_win *win;
	long sleeps, ns;
	int i;

	/* the poller behaves as if another task always wanted its CPU */
	ASSERT_EQ(0, rmawin_test_set_hook("poll_force_yield", 1));
	sleeps = rmawin_stat("poll_sleeps_shared");
	ASSERT_EQ(0, rmawin_test_open(0, 1, rmawin_test_ports(1), &ep));
	ASSERT_EQ(1, rmawin_ep_ring_active(ep));
	ASSERT_EQ(0, rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win));
	ASSERT_EQ(0, rmawin_lock_all(win));
	for (i = 0; i < 500 && rmawin_stat("poll_sleeps_shared") == sleeps; i++)
		usleep(10000);
	ASSERT_LT(sleeps, rmawin_stat("poll_sleeps_shared")) TH_LOG("the poller never yielded");
	wakeups = rmawin_ep_ring_wakeups(ep);
	ns = my_poll_ns();
	ASSERT_LE(0, ns);

	/* an operation on the empty ring goes by ioctl: no doorbell, no poller time */
	EXPECT_EQ(0, rmawin_put(win, &v, sizeof(v), 0, 1));
	EXPECT_EQ(0, rmawin_fetch_and_op(win, &one, &r, RMAWIN_UINT64, 0, 2, RMAWIN_SUM));
	EXPECT_EQ(0, rmawin_flush(win, 0));
	EXPECT_EQ(5, mem[1]);
	EXPECT_EQ(1, mem[2]);
	EXPECT_EQ(0, r);
	/* a transfer error waits for the synchronization, as on the ring */
	EXPECT_EQ(0, rmawin_put(win, (void *)8, sizeof(v), 0, 0));
	EXPECT_EQ(-EFAULT, rmawin_flush(win, 0));
	EXPECT_EQ(0, rmawin_flush(win, 0));
	/* argument errors come back at once, as on the ring */
	EXPECT_EQ(-ERANGE, rmawin_put(win, &v, sizeof(v), 0, 4));
	EXPECT_EQ(-EINVAL, rmawin_put(win, &v, sizeof(v), 1, 0));
	EXPECT_EQ(-EINVAL, rmawin_fetch_and_op(win, &one, &r, RMAWIN_UINT64, 0, 2, 255));
	EXPECT_EQ(0, rmawin_flush(win, 0));
	EXPECT_EQ(5, mem[1]);
	EXPECT_EQ(1, mem[2]);
	EXPECT_EQ(wakeups, rmawin_ep_ring_wakeups(ep));
	EXPECT_EQ(ns, my_poll_ns());

	ASSERT_EQ(0, rmawin_test_set_hook("poll_force_yield", 0));
	EXPECT_EQ(0, rmawin_unlock_all(win));
	EXPECT_EQ(0, rmawin_win_free(win));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_test_pollers_become(0));
	rmawin_test_expect_no_leaks(_metadata);
}

/* The raw ring of an endpoint: its flags word. */
struct flags_ring {
	struct rmawin_ring_setup s;
	char *m;
	uint32_t *sq_flags;
};

TEST(doorbell_that_wakes_the_poller_clears_need_wakeup)
{
	struct rmawin_ring_enter e = { .size = sizeof(e), .flags = RMAWIN_ENTER_WAKEUP };
	struct flags_ring r;
	struct rmawin_ep *ep;
	int fd, i;

	/* a raw ring of our own: the library sets up none with RMAWIN_NO_RING */
	setenv("RMAWIN_NO_RING", "1", 1);
	ASSERT_EQ(0, rmawin_test_open(0, 1, rmawin_test_ports(1), &ep));
	unsetenv("RMAWIN_NO_RING");
	fd = rmawin_ep_fd(ep);
	memset(&r, 0, sizeof(r));
	r.s.size = sizeof(r.s);
	/* 1 s of idle time: room to look at the flag after the doorbell */
	r.s.idle_us = 1000000;
	ASSERT_EQ(0, ioctl(fd, RMAWIN_IOC_RING_SETUP, &r.s));
	r.m = mmap(NULL, r.s.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, r.s.mmap_offset);
	ASSERT_NE(MAP_FAILED, r.m);
	r.sq_flags = (uint32_t *)(r.m + r.s.off.sq_flags);
	for (i = 0; i < 500 && !(*r.sq_flags & RMAWIN_SQ_NEED_WAKEUP); i++)
		usleep(10000);
	ASSERT_TRUE(*r.sq_flags & RMAWIN_SQ_NEED_WAKEUP) TH_LOG("the idle poller never slept");
	ASSERT_EQ(0, ioctl(fd, RMAWIN_IOC_RING_ENTER, &e));
	EXPECT_FALSE(__atomic_load_n(r.sq_flags, __ATOMIC_ACQUIRE) & RMAWIN_SQ_NEED_WAKEUP);
	/* and once idle again, it sleeps and says so again */
	for (i = 0; i < 500 && !(*r.sq_flags & RMAWIN_SQ_NEED_WAKEUP); i++)
		usleep(10000);
	EXPECT_TRUE(*r.sq_flags & RMAWIN_SQ_NEED_WAKEUP);
	munmap(r.m, r.s.mmap_len);
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_test_pollers_become(0));
	rmawin_test_expect_no_leaks(_metadata);
}

/* Endpoints with rings of one poller, closed by several threads at once. */
#define CLOSERS		8
#define CLOSE_ROUNDS	30

/* ---- a long accumulate holds no other process's ring ----------------------- */

#define LA_N		131072	/* int32s: 512 KiB, 8 inbox chunks of 64 KiB */
#define LA_PUTS		100
#define LA_DELAY_MS	200	/* each control message handled this late */

struct long_acc {
	int32_t a_win[LA_N];	/* rank 1 of group A's window, seen by everyone */
	uint64_t b_win[LA_PUTS];	/* rank 1 of group B's */
	int ports[2];
	int arrived, go, b_done, a_done, ended;
	int poller[4];
	long a_applied;		/* elements of A's accumulate in place when B was done */
	long a_applied0;	/* ... when B began */
	double b_s;		/* how long B's puts and flush took (logged only) */
	unsigned long b_wakeups;	/* B's doorbells meanwhile */
	long b_poll_ns;		/* the poller's time on B's ring during the puts */
	int a_ret, b_ret;
};

static void la_meet(int *count, int n)
{
	__atomic_add_fetch(count, 1, __ATOMIC_SEQ_CST);
	/* seldom awake: a task that keeps waking makes the poller give its CPU up */
	while (__atomic_load_n(count, __ATOMIC_SEQ_CST) < n)
		usleep(20000);
}

/*
 * Processes 0 and 1 are group A, 2 and 3 group B, all of one user and
 * cgroup: one poller consumes their rings.  Once every message is handled
 * LA_DELAY_MS late, A's rank 0 accumulates 512 KiB into A's rank 1 (8
 * chunks, each answered before the next goes: 3.2 s), and then B's rank 0
 * puts LA_PUTS times into B's rank 1 through its ring and flushes: done
 * while at most 2 chunks of A's are in place, so not behind it in the
 * poller.
 */
static int long_acc_rank(int r, int n, void *arg)
{
	struct long_acc *la = arg;
	static int32_t one[LA_N], mine[LA_N];
	static uint64_t v[LA_PUTS];
	int grp = r / 2, me = r % 2, i, ret;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	long ns0 = 0, ids;
	unsigned long wk;
	double t0;
	int id;

	(void)n;
	RMAWIN_TEST_TRY(1, rmawin_test_open(me, 2, la->ports[grp], &ep));
	if (grp == 0)
		RMAWIN_TEST_TRY(2, rmawin_win_create(ep, me ? la->a_win : mine, sizeof(mine), 4,
						     0, &win));
	else
		RMAWIN_TEST_TRY(2, rmawin_win_create(ep, me ? la->b_win : (uint64_t *)mine,
						     sizeof(la->b_win), 8, 0, &win));
	RMAWIN_TEST_TRY(3, rmawin_lock_all(win));
	RMAWIN_TEST_TRY(4, rmawin_barrier(ep));
	la->poller[r] = poller_of(getpid());
	la_meet(&la->arrived, 4);
	if (r == 0) {
		RMAWIN_TEST_TRY(5, rmawin_test_set_hook("recv_delay_ms", LA_DELAY_MS));
		for (i = 0; i < LA_N; i++)
			one[i] = 1;
		__atomic_store_n(&la->go, 1, __ATOMIC_SEQ_CST);
		/* the poller awake: these wake it, the accumulate finds it polling */
		for (i = 0; i < 4; i++)
			RMAWIN_TEST_TRY(6, rmawin_put(win, &one[i], 4, 0, i));
		la->a_ret = rmawin_accumulate(win, one, LA_N, RMAWIN_INT32, 1, 0, RMAWIN_SUM);
		if (!la->a_ret)
			la->a_ret = rmawin_flush(win, 1);
		__atomic_store_n(&la->a_done, 1, __ATOMIC_SEQ_CST);
		/* after B: its flush needs no message, its barrier does */
		while (!__atomic_load_n(&la->b_done, __ATOMIC_SEQ_CST))
			usleep(20000);
		RMAWIN_TEST_TRY(7, rmawin_test_set_hook("recv_delay_ms", 0));
	} else if (r == 2) {
		while (!__atomic_load_n(&la->go, __ATOMIC_SEQ_CST))
			usleep(5000);
		/* the poller has had time to take A's accumulate, had it been queued */
		usleep(50000);
		ep_pollers(getpid(), &id, &ns0, 1);
		for (i = 0; i < LA_N; i++)
			la->a_applied0 += __atomic_load_n(&la->a_win[i], __ATOMIC_SEQ_CST) != 0;
		t0 = rmawin_test_now();
		wk = rmawin_ep_ring_wakeups(ep);
		ret = 0;
		for (i = 0; i < LA_PUTS && !ret; i++) {
			v[i] = 7000 + i;
			ret = rmawin_put(win, &v[i], 8, 1, i);
		}
		la->b_ret = ret ?: rmawin_flush(win, 1);
		la->b_s = rmawin_test_now() - t0;
		la->b_wakeups = rmawin_ep_ring_wakeups(ep) - wk;
		for (i = 0; i < LA_N; i++)
			la->a_applied += __atomic_load_n(&la->a_win[i], __ATOMIC_SEQ_CST) != 0;
		ids = 0;
		ep_pollers(getpid(), &id, &ids, 1);
		la->b_poll_ns = ids - ns0;
		__atomic_store_n(&la->b_done, 1, __ATOMIC_SEQ_CST);
	}
	la_meet(&la->ended, 4);
	RMAWIN_TEST_TRY(8, rmawin_unlock_all(win));
	RMAWIN_TEST_TRY(9, rmawin_barrier(ep));
	RMAWIN_TEST_TRY(10, rmawin_win_free(win));
	RMAWIN_TEST_TRY(11, rmawin_ep_close(ep));
	return 0;
}

TEST(a_long_accumulate_holds_no_other_ring_of_the_poller)
{
	struct long_acc *la = rmawin_test_shared(sizeof(*la));
	pid_t pids[4];
	int r, i;

	ASSERT_NE(NULL, la);
	ASSERT_EQ(0, rmawin_test_pollers(NULL, -1));
	la->ports[0] = rmawin_test_ports(2);
	la->ports[1] = rmawin_test_ports(2);
	for (r = 0; r < 4; r++)
		pids[r] = rmawin_test_fork_rank(r, 4, long_acc_rank, la);
	EXPECT_EQ(4, rmawin_test_wait_ranks(_metadata, pids, 4, 120));
	/* in case rank 0 stopped before it could */
	rmawin_test_set_hook("recv_delay_ms", 0);
	for (r = 1; r < 4; r++)
		EXPECT_EQ(la->poller[0], la->poller[r]) TH_LOG("process %d's poller", r);
	EXPECT_LT(0, la->poller[0]);
	EXPECT_EQ(0, la->a_ret) TH_LOG("A's accumulate and flush: %d (%s)", la->a_ret,
				       rmawin_strerror(la->a_ret));
	EXPECT_EQ(0, la->b_ret) TH_LOG("B's puts and flush: %d (%s)", la->b_ret,
				       rmawin_strerror(la->b_ret));
	for (i = 0; i < LA_N; i++)
		if (la->a_win[i] != 1)
			break;
	EXPECT_EQ(LA_N, i) TH_LOG("A's window: element %d is %d, want 1", i, la->a_win[i]);
	for (i = 0; i < LA_PUTS; i++)
		if (la->b_win[i] != (uint64_t)(7000 + i))
			break;
	EXPECT_EQ(LA_PUTS, i) TH_LOG("B's window: slot %d holds %llu", i,
				     i < LA_PUTS ? (unsigned long long)la->b_win[i] : 0ULL);
	/* B needs tens of ms, A's chunks come one every 2 * LA_DELAY_MS */
	EXPECT_GE(LA_N / 4, la->a_applied) {
		TH_LOG("B's %d puts and flush were done only once %ld of A's %d elements were "
		       "in place: the poller held them behind A's accumulate", LA_PUTS,
		       la->a_applied, LA_N);
	}
	TH_LOG("B's puts and flush: %.3f s, %lu doorbells; %ld and %ld of %d elements of "
	       "A's accumulate in place when B began and was done; the poller spent %ld us "
	       "on B's ring", la->b_s, la->b_wakeups, la->a_applied0, la->a_applied, LA_N,
	       la->b_poll_ns / 1000);
	EXPECT_EQ(0, rmawin_test_pollers_become(0));
	rmawin_test_expect_no_leaks(_metadata);
	munmap(la, sizeof(*la));
}

struct closer {
	pthread_barrier_t *bar;
	struct rmawin_ep *ep;
	int ret;
};

static void *close_at_once(void *arg)
{
	struct closer *c = arg;

	pthread_barrier_wait(c->bar);
	c->ret = rmawin_ep_close(c->ep);
	return NULL;
}

TEST(rings_of_one_poller_closed_at_once)
{
	struct closer c[CLOSERS];
	pthread_t t[CLOSERS];
	pthread_barrier_t bar;
	int round, i;

	ASSERT_EQ(0, rmawin_test_pollers(NULL, -1));
	ASSERT_EQ(0, pthread_barrier_init(&bar, NULL, CLOSERS));
	for (round = 0; round < CLOSE_ROUNDS; round++) {
		for (i = 0; i < CLOSERS; i++) {
			c[i].bar = &bar;
			c[i].ret = -1;
			ASSERT_EQ(0, rmawin_test_open(0, 1, rmawin_test_ports(1), &c[i].ep));
			ASSERT_EQ(1, rmawin_ep_ring_active(c[i].ep));
		}
		/* one thread for all of them: the last detach stops it */
		ASSERT_EQ(1, rmawin_test_pollers(NULL, -1)) TH_LOG("round %d", round);
		for (i = 0; i < CLOSERS; i++)
			ASSERT_EQ(0, pthread_create(&t[i], NULL, close_at_once, &c[i]));
		for (i = 0; i < CLOSERS; i++) {
			ASSERT_EQ(0, pthread_join(t[i], NULL));
			EXPECT_EQ(0, c[i].ret) TH_LOG("round %d, endpoint %d", round, i);
		}
		ASSERT_EQ(0, rmawin_test_pollers_become(0)) TH_LOG("round %d", round);
	}
	pthread_barrier_destroy(&bar);
	EXPECT_EQ(0, rmawin_stat("pollers"));
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_HARNESS_MAIN
