/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The selftests' ranks, through librmawin (rmawin_test.h includes this):
 * the library's two paths as variants of a fixture, opening rank r of n,
 * running ranks in child processes and waiting for them, and the checks
 * of a rank's function.  A rank reports through its exit status only: 0
 * for success, otherwise the step that failed; it prints why to stderr.
 */
#ifndef RMAWIN_SELFTEST_RANKS_H
#define RMAWIN_SELFTEST_RANKS_H

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <rmawin.h>

#include "kselftest_harness.h"
#include "rmawin_key.h"
#include "rmawin_ports.h"

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

/* Fixture @fixture_name, no state, with variants ring and no_ring. */
#define RMAWIN_TEST_PATH_FIXTURE(fixture_name)					\
	FIXTURE(fixture_name) {};						\
	FIXTURE_VARIANT(fixture_name) {						\
		int no_ring;							\
	};									\
	RMAWIN_TEST_PATH_VARIANT(fixture_name, ring, 0);			\
	RMAWIN_TEST_PATH_VARIANT(fixture_name, no_ring, 1)

/* Every test of @fixture_name on both of the library's paths. */
#define RMAWIN_TEST_PATHS(fixture_name)						\
	RMAWIN_TEST_PATH_FIXTURE(fixture_name);					\
	FIXTURE_SETUP(fixture_name)						\
	{									\
		rmawin_test_path(variant->no_ring);				\
	}									\
	FIXTURE_TEARDOWN(fixture_name) {}

/*
 * As RMAWIN_TEST_PATHS(), on a soft-RoCE device of the test's own: @ibdev
 * over a dummy netdev @netdev with address @ip (rmawin_test_tmpdev_add()),
 * made before each test and deleted after it; skipped where the VM's
 * tools or root are missing.
 */
#define RMAWIN_TEST_TMPDEV_PATHS(fixture_name, ibdev, netdev, ip)			\
	RMAWIN_TEST_PATH_FIXTURE(fixture_name);					\
	FIXTURE_SETUP(fixture_name)						\
	{									\
		const char *why;						\
										\
		rmawin_test_path(variant->no_ring);				\
		why = rmawin_test_tmpdev_why_not();				\
		if (why)							\
			SKIP(return, "%s", why);				\
		ASSERT_EQ(0, rmawin_test_tmpdev_add(ibdev, netdev, ip))		\
			TH_LOG(ibdev " could not be made, or never became ACTIVE"); \
	}									\
	FIXTURE_TEARDOWN(fixture_name)						\
	{									\
		if (!geteuid())							\
			rmawin_test_tmpdev_del(ibdev, netdev);			\
	}

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

#endif /* RMAWIN_SELFTEST_RANKS_H */
