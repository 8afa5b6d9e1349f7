/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the rmawin selftests.  The tests run inside the test VM
 * (tools/vm), where /dev/rmawin exists and a soft-RoCE device is up; its
 * name comes from RMAWIN_VM_IBDEV.
 */
#ifndef RMAWIN_SELFTEST_H
#define RMAWIN_SELFTEST_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/rmawin.h>

#include "kselftest_harness.h"
#include "rmawin_key.h"
#include "rmawin_ports.h"

/*
 * The harness gives a TEST() without a timeout of its own 30 s: too short
 * under make check-debug's kernel (KASAN, lockdep, kmemleak) in a TCG
 * guest, where fail_nth_every_call and rings_of_one_poller_closed_at_once
 * took longer.  (Read where TEST() is expanded, so redefining it here
 * serves every test below.)
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	180

#define RMAWIN_DEV_PATH		"/dev/rmawin"
#define RMAWIN_STATS_PATH	"/sys/kernel/debug/rmawin/stats"

/* Assert that @call fails with exactly @err. */
#define EXPECT_ERRNO(err, call)						\
	({								\
		errno = 0;						\
		EXPECT_EQ(-1, (call));					\
		EXPECT_EQ((err), errno);				\
	})
#define ASSERT_ERRNO(err, call)						\
	({								\
		errno = 0;						\
		ASSERT_EQ(-1, (call));					\
		ASSERT_EQ((err), errno);				\
	})

static inline const char *rmawin_test_ibdev(void)
{
	const char *s = getenv("RMAWIN_VM_IBDEV");

	return s && *s ? s : "rxe0";
}

/* One counter from the module's debugfs stats file, or -1. */
static inline long rmawin_stat(const char *key)
{
	char name[64];
	long val, found = -1;
	FILE *f = fopen(RMAWIN_STATS_PATH, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &val) == 2) {
		if (!strcmp(name, key)) {
			found = val;
			break;
		}
	}
	fclose(f);
	return found;
}

static inline int rmawin_query_raw(int fd, struct rmawin_query *q,
				   struct rmawin_dev_info *devs, unsigned int n)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->devs_ptr = (uintptr_t)devs;
	q->devs_len = n;
	q->dev_entry_size = n ? sizeof(*devs) : 0;
	return ioctl(fd, RMAWIN_IOC_QUERY, q);
}

/* The running module's RMAWIN_FEAT_* bits, or 0 if it cannot be asked. */
static inline __u64 rmawin_test_features(void)
{
	struct rmawin_query q;
	int fd = open(RMAWIN_DEV_PATH, O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return 0;
	ret = rmawin_query_raw(fd, &q, NULL, 0);
	close(fd);
	return ret ? 0 : q.features;
}

/* The number in file @path (a module parameter, a cgroup's counter), or -1. */
static inline long rmawin_test_read_long(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Write @v to file @path.  Return: 0 or -1. */
static inline int rmawin_test_write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* The module's root-only test hooks, in debugfs: recv_delay_ms, teardown_delay_ms. */
#define RMAWIN_HOOK_DIR		"/sys/kernel/debug/rmawin/"

/* Set hook @name to @ms.  Return: 0 or -errno. */
static inline int rmawin_test_set_hook(const char *name, int ms)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), RMAWIN_HOOK_DIR "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fprintf(f, "%d\n", ms) < 0 ? -EIO : 0;
	return fclose(f) ? -errno : ret;
}

/* Counter @key of this process's endpoint (the debugfs file naming our pid), or -1. */
static inline long rmawin_test_ep_stat(const char *key)
{
	char path[300], line[128], name[64];
	long val, pid, found;
	struct dirent *d;
	DIR *dir = opendir(RMAWIN_HOOK_DIR);
	FILE *f;

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (strncmp(d->d_name, "ep", 2))
			continue;
		snprintf(path, sizeof(path), RMAWIN_HOOK_DIR "%s", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		pid = found = -1;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%63s %ld", name, &val) != 2)
				continue;
			if (!strcmp(name, "pid"))
				pid = val;
			else if (!strcmp(name, key))
				found = val;
		}
		fclose(f);
		if (pid == getpid()) {
			closedir(dir);
			return found;
		}
	}
	closedir(dir);
	return -1;
}

static inline int rmawin_bind_raw(int fd, const char *ibdev, unsigned int port)
{
	struct rmawin_ep_bind b = { .size = sizeof(b), .port = port };

	strncpy(b.ibdev, ibdev, sizeof(b.ibdev) - 1);
	return ioctl(fd, RMAWIN_IOC_EP_BIND, &b);
}

/* Is there a device port called @name in QUERY's list?  -1 on error. */
static inline int rmawin_has_dev(int fd, const char *name)
{
	struct rmawin_dev_info devs[32];
	struct rmawin_query q;
	unsigned int i;

	if (rmawin_query_raw(fd, &q, devs, 32))
		return -1;
	for (i = 0; i < q.ndevs && i < 32; i++)
		if (!strcmp(devs[i].name, name))
			return 1;
	return 0;
}

/*
 * Helpers for tests that run several ranks of a group as child processes
 * (they need librmawin).  A rank reports through its exit status only: 0
 * for success, otherwise the step that failed; it prints why to stderr.
 */
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <rmawin.h>

/* The guest's address on its rxe device (tools/vm sets RMAWIN_VM_ADDRS). */
static inline const char *rmawin_test_ip(void)
{
	static char ip[64];
	const char *s = getenv("RMAWIN_VM_ADDRS");

	snprintf(ip, sizeof(ip), "%s", s && *s ? s : "198.18.0.1");
	ip[strcspn(ip, ",")] = 0;
	return ip;
}

/*
 * The library's two paths.  With its ring (the default) librmawin issues
 * small puts and gets, the accumulate family and flushes through the
 * endpoint's mmap'd ring; without one (RMAWIN_EP_NO_RING, RMAWIN_NO_RING=1)
 * every call is an ioctl.  The suites that test through the library run
 * each such test on both paths, as the variants "ring" and "no_ring" of its
 * fixture: RMAWIN_TEST_PATHS(f) declares a fixture f with just these two
 * variants; a fixture of its own has an int no_ring in its FIXTURE_VARIANT,
 * adds its variants with RMAWIN_TEST_VARIANT_ADD (NAME_ring and
 * NAME_no_ring) and calls rmawin_test_path() first thing in its
 * FIXTURE_SETUP, before any rank is forked.
 *
 * RMAWIN_TEST_PATH=ring (or no_ring) in the environment runs one path only:
 * the other path's variants are not registered at all (make check-debug,
 * whose checkers look at the kernel, which both paths share), so they are
 * neither run nor counted.
 */
static int rmawin_test_no_ring;

/* Is the path @no_ring one this run takes (RMAWIN_TEST_PATH)? */
static inline int rmawin_test_path_wanted(int no_ring)
{
	const char *only = getenv("RMAWIN_TEST_PATH");

	return !only || !*only || !strcmp(only, no_ring ? "no_ring" : "ring");
}

/*
 * Take the path of the variant: every endpoint the test and its ranks open
 * afterwards uses the ring or does not, whether through rmawin_test_open_on()
 * (RMAWIN_EP_NO_RING) or another way (RMAWIN_NO_RING, which the library
 * reads too).  For FIXTURE_SETUP, before any rank is forked.
 */
static inline void rmawin_test_path(int no_ring)
{
	rmawin_test_no_ring = no_ring;
	if (no_ring)
		setenv("RMAWIN_NO_RING", "1", 1);
	else
		unsetenv("RMAWIN_NO_RING");
}

/*
 * FIXTURE_VARIANT_ADD() for a variant on the library path @nr (1: no ring),
 * registered only when this run takes that path.  It registers the way
 * FIXTURE_VARIANT_ADD() does, with the condition added.
 */
#define RMAWIN_TEST_PATH_VARIANT(fixture_name, variant_name, nr, ...)			\
	extern FIXTURE_VARIANT(fixture_name)						\
		_##fixture_name##_##variant_name##_variant;				\
	static struct __fixture_variant_metadata					\
		_##fixture_name##_##variant_name##_object =				\
		{ .name = #variant_name,						\
		  .data = &_##fixture_name##_##variant_name##_variant };		\
	static void __attribute__((constructor))					\
		_register_##fixture_name##_##variant_name(void)				\
	{										\
		if (rmawin_test_path_wanted(nr))					\
			__register_fixture_variant(&_##fixture_name##_fixture_object,	\
				&_##fixture_name##_##variant_name##_object);		\
	}										\
	FIXTURE_VARIANT(fixture_name)							\
		_##fixture_name##_##variant_name##_variant = { .no_ring = nr, __VA_ARGS__ }

#define RMAWIN_TEST_PATHS(fixture_name)						\
	FIXTURE(fixture_name) {};						\
	FIXTURE_VARIANT(fixture_name) {						\
		int no_ring;							\
	};									\
	RMAWIN_TEST_PATH_VARIANT(fixture_name, ring, 0);			\
	RMAWIN_TEST_PATH_VARIANT(fixture_name, no_ring, 1);			\
	FIXTURE_SETUP(fixture_name)						\
	{									\
		rmawin_test_path(variant->no_ring);				\
	}									\
	FIXTURE_TEARDOWN(fixture_name) {}

/* Variants @name_ring and @name_no_ring of @fixture_name, the rest as given. */
#define RMAWIN_TEST_VARIANT_ADD(fixture_name, name, ...)				\
	RMAWIN_TEST_PATH_VARIANT(fixture_name, name##_ring, 0, __VA_ARGS__);		\
	RMAWIN_TEST_PATH_VARIANT(fixture_name, name##_no_ring, 1, __VA_ARGS__)

/*
 * Open rank @rank of @n through the library; rank r listens on @ip at
 * @port + r.  @ibdev NULL: the device that owns @ip.  On the path the test
 * runs on (rmawin_test_path()): without a ring, an endpoint that has one
 * anyway is closed again and -EPROTO.
 */
static inline int rmawin_test_open_on(const char *ip, const char *ibdev, int rank, int n,
				      int port, unsigned int timeout_ms, struct rmawin_ep **ep)
{
	char buf[64][96];
	const char *addrs[64];
	uint8_t key[RMAWIN_JOB_KEY_MAX];
	struct rmawin_ep_attr attr = {
		.rank = rank, .nranks = n, .addrs = addrs, .ibdev = ibdev,
		.timeout_ms = timeout_ms, .job_key = key,
		.flags = rmawin_test_no_ring ? RMAWIN_EP_NO_RING : 0,
	};
	int i, ret;

	attr.job_key_len = rmawin_test_key(key);
	if (n > 64)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%.64s:%d", ip, port + i);
		addrs[i] = buf[i];
	}
	ret = rmawin_ep_open(&attr, ep);
	if (!ret && rmawin_test_no_ring && rmawin_ep_ring_active(*ep)) {
		fprintf(stderr, "#   rank %d: a ring though RMAWIN_EP_NO_RING\n", rank);
		rmawin_ep_close(*ep);
		*ep = NULL;
		return -EPROTO;
	}
	return ret;
}

/* Rank @rank of @n on the guest's rxe0 address, ports @port.. */
static inline int rmawin_test_open(int rank, int n, int port, struct rmawin_ep **ep)
{
	return rmawin_test_open_on(rmawin_test_ip(), NULL, rank, n, port, 60000, ep);
}

/* Anonymous memory shared by the test and its ranks, zeroed; NULL on failure. */
static inline void *rmawin_test_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static inline double rmawin_test_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The rank this process plays, for its messages: set in a forked rank's
 * process; -1 in the test's, unless the test plays a rank itself.
 */
static int rmawin_test_rank = -1;

/* Start fn(rank, n, arg) in a child process; returns its pid. */
static inline pid_t rmawin_test_fork_rank(int rank, int n, int (*fn)(int, int, void *),
					  void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		rmawin_test_rank = rank;
		_exit(fn(rank, n, arg) & 0xff);
	}
	return pid;
}

/* Wait for rank @rank's process; expect it to have exited 0.  Returns 1 if it did. */
static inline int rmawin_test_wait_rank(struct __test_metadata *_metadata, pid_t pid, int rank)
{
	int st = 0;

	if (pid <= 0 || waitpid(pid, &st, 0) != pid) {
		TH_LOG("rank %d: no such child process", rank);
		_metadata->passed = 0;
		return 0;
	}
	if (WIFSIGNALED(st)) {
		TH_LOG("rank %d was killed by signal %d", rank, WTERMSIG(st));
		_metadata->passed = 0;
		return 0;
	}
	if (WEXITSTATUS(st)) {
		TH_LOG("rank %d failed at step %d (see its messages above)", rank,
		       WEXITSTATUS(st));
		_metadata->passed = 0;
		return 0;
	}
	return 1;
}

/* Log a stuck process's kernel stack (root only), one TH_LOG line per frame. */
static inline void rmawin_test_log_stack(struct __test_metadata *_metadata, pid_t pid, int rank)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		TH_LOG("  rank %d kernel stack: %s", rank, line);
	}
	fclose(f);
}

/*
 * Wait for the @n rank processes @pids, each of which must exit 0.  After
 * @deadline_s seconds (0: no limit) a rank still running is reported as
 * hung, with its kernel stack, and killed.  Returns how many exited 0.
 */
static inline int rmawin_test_wait_ranks(struct __test_metadata *_metadata, pid_t *pids, int n,
					 int deadline_s)
{
	double end = rmawin_test_now() + deadline_s;
	int i, left = n, ok = 0, st;
	pid_t pid;

	while (deadline_s && left) {
		pid = waitpid(-1, &st, WNOHANG);
		if (pid < 0)
			break;
		if (pid == 0) {
			if (rmawin_test_now() > end)
				break;
			usleep(20000);
			continue;
		}
		for (i = 0; i < n; i++) {
			if (pids[i] != pid)
				continue;
			pids[i] = 0;
			left--;
			if (WIFEXITED(st) && !WEXITSTATUS(st)) {
				ok++;
			} else if (WIFSIGNALED(st)) {
				TH_LOG("rank %d was killed by signal %d", i, WTERMSIG(st));
				_metadata->passed = 0;
			} else {
				TH_LOG("rank %d failed at step %d (see its messages above)", i,
				       WEXITSTATUS(st));
				_metadata->passed = 0;
			}
		}
	}
	/* every hung rank's stack first: killing one changes what the others do */
	for (i = 0; deadline_s && i < n; i++) {
		if (!pids[i])
			continue;
		TH_LOG("rank %d (pid %d) hangs: still running after %d s", i, pids[i],
		       deadline_s);
		rmawin_test_log_stack(_metadata, pids[i], i);
		_metadata->passed = 0;
	}
	for (i = 0; i < n; i++) {
		if (!pids[i])
			continue;
		if (deadline_s) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &st, 0);
		} else {
			ok += rmawin_test_wait_rank(_metadata, pids[i], i);
		}
	}
	return ok;
}

/*
 * Run fn(rank, n, arg) in @n child processes and wait for all of them,
 * at most @deadline_s seconds (0: no limit); each must exit 0.  Returns
 * the number that did.
 */
static inline int rmawin_test_run_ranks_for(struct __test_metadata *_metadata, int n,
					    int (*fn)(int, int, void *), void *arg,
					    int deadline_s)
{
	pid_t pids[64];
	int i;

	if (n > 64)
		return 0;
	for (i = 0; i < n; i++)
		pids[i] = rmawin_test_fork_rank(i, n, fn, arg);
	return rmawin_test_wait_ranks(_metadata, pids, n, deadline_s);
}

/* The same, with no deadline of its own (the harness's timeout applies). */
static inline int rmawin_test_run_ranks(struct __test_metadata *_metadata, int n,
					int (*fn)(int, int, void *), void *arg)
{
	return rmawin_test_run_ranks_for(_metadata, n, fn, arg, 0);
}

struct rmawin_test_eps {
	int port;
	int (*fn)(struct rmawin_ep *ep, void *arg);
	void *arg;
};

/* One rank of rmawin_test_run_eps(): open, run, close. */
static inline int rmawin_test_ep_rank(int rank, int n, void *arg)
{
	struct rmawin_test_eps *e = arg;
	struct rmawin_ep *ep;
	int ret = rmawin_test_open(rank, n, e->port, &ep);

	if (ret) {
		fprintf(stderr, "rank %d: open: %s\n", rank, rmawin_strerror(ret));
		return 100;
	}
	ret = e->fn(ep, e->arg);
	if (rmawin_ep_close(ep)) {
		fprintf(stderr, "rank %d: close failed\n", rank);
		return 101;
	}
	return ret;
}

/*
 * Run fn(ep, arg) in @n child processes, ep being rank i of @n opened with
 * rmawin_test_open(i, n, port) on @n ports of its own and closed after fn
 * returns (exit 100 if the open fails, 101 if the close does).  Waits as
 * rmawin_test_run_ranks_for() does, at most @deadline_s seconds; returns the
 * number of ranks that exited 0.
 */
static inline int rmawin_test_run_eps(struct __test_metadata *_metadata, int n,
				      int (*fn)(struct rmawin_ep *ep, void *arg), void *arg,
				      int deadline_s)
{
	struct rmawin_test_eps e = { .port = rmawin_test_ports(n), .fn = fn, .arg = arg };

	return rmawin_test_run_ranks_for(_metadata, n, rmawin_test_ep_rank, &e, deadline_s);
}

/*
 * The one pair of checks for a rank's function (or any helper that returns
 * a status): RMAWIN_TEST_TRY fails with exit status @step, saying where and
 * why, if @call returns an error; RMAWIN_TEST_WANT expects @call to return
 * exactly @err and otherwise says so and sets the caller's `bad`.
 */
#define RMAWIN_TEST_TRY(step, call)						\
	do {									\
		int __r = (call);						\
		if (__r) {							\
			fprintf(stderr, "#   rank %d: %s:%d: step %d: %s: %s\n",	\
				rmawin_test_rank, __FILE__, __LINE__, (step),	\
				#call, rmawin_strerror(__r));			\
			return (step);						\
		}								\
	} while (0)

#define RMAWIN_TEST_WANT(err, call)						\
	do {									\
		int __r = (call);						\
		if (__r != (err)) {						\
			fprintf(stderr, "#   rank %d: %s:%d: %s: %d, want %d\n",\
				rmawin_test_rank, __FILE__, __LINE__, #call,	\
				__r, (err));					\
			bad = 1;						\
		}								\
	} while (0)

/* A rank's message to the test's output, as RMAWIN_TEST_TRY's. */
#define RMAWIN_TEST_MSG(fmt, ...)						\
	fprintf(stderr, "#   rank %d: " fmt "\n", rmawin_test_rank, ##__VA_ARGS__)

/* The window ioctls by hand, for tests of their argument checks: -1 and errno on failure. */
static inline int rmawin_rma_raw(int fd, const struct rmawin_op_desc *ops, __u32 nops)
{
	struct rmawin_rma r = {
		.size = sizeof(r), .ops_ptr = (uintptr_t)ops, .nops = nops,
		.op_size = sizeof(*ops),
	};

	return ioctl(fd, RMAWIN_IOC_RMA, &r);
}

static inline int rmawin_fence_raw(int fd, __u32 win, __u32 flags)
{
	struct rmawin_fence f = { .size = sizeof(f), .flags = flags, .win = win };

	return ioctl(fd, RMAWIN_IOC_FENCE, &f);
}

static inline int rmawin_create_raw(int fd, void *base, __u64 len, __u32 unit, __u32 *win)
{
	struct rmawin_win_create c = {
		.size = sizeof(c), .base = (uintptr_t)base, .length = len, .disp_unit = unit,
	};
	int ret = ioctl(fd, RMAWIN_IOC_WIN_CREATE, &c);

	if (!ret)
		*win = c.win;
	return ret;
}

static inline int rmawin_free_raw(int fd, __u32 win)
{
	struct rmawin_win_free f = { .size = sizeof(f), .win = win };

	return ioctl(fd, RMAWIN_IOC_WIN_FREE, &f);
}

/* Load the module at @path with @params (root): 0, or -1 and errno. */
static inline int rmawin_test_load_module(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret, err;

	if (fd < 0)
		return -1;
	ret = syscall(__NR_finit_module, fd, params, 0);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

/* Unload module @name without waiting for its users: 0, or -1 and errno. */
static inline int rmawin_test_unload_module(const char *name)
{
	return syscall(__NR_delete_module, name, O_NONBLOCK);
}

/* Run @cmd with sh: its exit status, -1 if it did not exit. */
static inline int rmawin_test_sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * A soft-RoCE device of the test's own, @ibdev on a veth @netdev (and its
 * peer @netdev"p"), with @ip/24 on it unless NULL, up and ACTIVE: 0, -1 if
 * a step failed, -2 if it never became ACTIVE.  Needs root and iproute2,
 * which the callers check first (a SKIP says so).  Gone again with
 * rmawin_test_tmpdev_del().
 */
static inline int rmawin_test_tmpdev_add(const char *ibdev, const char *netdev, const char *ip)
{
	char cmd[512], addr[128] = "";
	int i;

	if (ip)
		snprintf(addr, sizeof(addr), " && ip addr add %s/24 dev %s", ip, netdev);
	snprintf(cmd, sizeof(cmd),
		 "ip link add %s type veth peer name %sp && ip link set %sp up && "
		 "ip link set %s up%s && rdma link add %s type rxe netdev %s",
		 netdev, netdev, netdev, netdev, addr, ibdev, netdev);
	if (rmawin_test_sh(cmd))
		return -1;
	snprintf(cmd, sizeof(cmd), "rdma link show %s/1 2>/dev/null | grep -q 'state ACTIVE'",
		 ibdev);
	for (i = 0; i < 100; i++, usleep(50000))
		if (!rmawin_test_sh(cmd))
			return 0;
	return -2;
}

static inline void rmawin_test_tmpdev_del(const char *ibdev, const char *netdev)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rdma link del %s 2>/dev/null; ip link del %s 2>/dev/null",
		 ibdev, netdev);
	rmawin_test_sh(cmd);
}

/* Can this process make devices of its own?  NULL, or why not (for SKIP). */
static inline const char *rmawin_test_tmpdev_why_not(void)
{
	if (geteuid())
		return "creating an rxe device needs root";
	if (rmawin_test_sh("command -v rdma >/dev/null && command -v ip >/dev/null"))
		return "the iproute2 tools ip and rdma are not installed";
	return NULL;
}

/*
 * The poller threads (rmawin_poll/<n>) now: their count.  *@pid, if not
 * NULL, gets the pid of the last one seen, or with @id >= 0 that of
 * rmawin_poll/@id (-1 if there is none).
 */
static inline int rmawin_test_pollers(pid_t *pid, int id)
{
	char path[300], comm[64], want[64];
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int n = 0;
	FILE *f;

	snprintf(want, sizeof(want), "rmawin_poll/%d\n", id);
	if (pid)
		*pid = -1;
	while (dir && (d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "rmawin_poll/", 12)) {
			n++;
			if (pid && (id < 0 || !strcmp(comm, want)))
				*pid = atoi(d->d_name);
		}
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return n;
}

/* Wait up to 5 s for the number of poller threads to become @n; the number then. */
static inline int rmawin_test_pollers_become(int n)
{
	int i;

	for (i = 0; i < 500 && rmawin_test_pollers(NULL, -1) != n; i++)
		usleep(10000);
	return rmawin_test_pollers(NULL, -1);
}

/*
 * Once every process of a test has exited, nothing of the module's may
 * be left: no endpoint, group, queue pair, window, MR, pinned page,
 * request or poller thread.
 */
static inline void rmawin_test_expect_no_leaks(struct __test_metadata *_metadata)
{
	static const char *const names[] = {
		"endpoints", "groups", "qps", "windows", "mrs", "pinned_pages", "reqs", "pollers",
	};
	unsigned int i;
	long v;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		v = rmawin_stat(names[i]);
		EXPECT_EQ(0, v) {
			TH_LOG("leak: debugfs counter '%s' is %ld after every rank exited",
			       names[i], v);
		}
	}
}

/* Like EXPECT_ERRNO, with a message saying which case failed. */
#define EXPECT_ERRNO_LOG(err, call, fmt, ...)					\
	do {									\
		int __r, __e;							\
		errno = 0;							\
		__r = (call);							\
		__e = errno;							\
		EXPECT_EQ(-1, __r) {						\
			TH_LOG(fmt ": succeeded, want %s", ##__VA_ARGS__,	\
			       strerror(err));					\
		}								\
		if (__r == -1) {						\
			EXPECT_EQ((err), __e) {					\
				TH_LOG(fmt ": %s, want %s", ##__VA_ARGS__,	\
				       strerror(__e), strerror(err));		\
			}							\
		}								\
	} while (0)

/* Index of the first of @len bytes at @p that is not @v, or -1. */
static inline long rmawin_test_check_fill(const unsigned char *p, size_t len, unsigned char v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return i;
	return -1;
}

/* A put/get-shaped operation descriptor, every other field zero. */
static inline struct rmawin_op_desc rmawin_test_op(int opcode, __u32 win, int target,
						   const void *origin, size_t len, size_t disp)
{
	struct rmawin_op_desc d;

	memset(&d, 0, sizeof(d));
	d.opcode = opcode;
	d.target = target;
	d.win = win;
	d.origin = (uintptr_t)origin;
	d.len = len;
	d.target_disp = disp;
	return d;
}

#endif /* RMAWIN_SELFTEST_H */
