/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the rmawin selftests.  The tests run inside the test VM
 * (tools/vm), where /dev/rmawin exists and a soft-RoCE device is up; its
 * name comes from RMAWIN_VM_IBDEV.
 */
#ifndef RMAWIN_SELFTEST_H
#define RMAWIN_SELFTEST_H

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
 * Open rank @rank of @n through the library; rank r listens on @ip at
 * @port + r.  @ibdev NULL: the device that owns @ip.
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
	};
	int i;

	attr.job_key_len = rmawin_test_key(key);
	if (n > 64)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%.64s:%d", ip, port + i);
		addrs[i] = buf[i];
	}
	return rmawin_ep_open(&attr, ep);
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

/* Start fn(rank, n, arg) in a child process; returns its pid. */
/* The rank a forked rank's process plays, for its messages; -1 in the parent. */
static int rmawin_test_rank = -1;

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
 * rmawin_test_open(i, n, @port) and closed after fn returns (exit 100 if
 * the open fails, 101 if the close does).  Waits as rmawin_test_run_ranks_for()
 * does, at most @deadline_s seconds; returns the number of ranks that exited 0.
 */
static inline int rmawin_test_run_eps(struct __test_metadata *_metadata, int n, int port,
				      int (*fn)(struct rmawin_ep *ep, void *arg), void *arg,
				      int deadline_s)
{
	struct rmawin_test_eps e = { .port = port, .fn = fn, .arg = arg };

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

/*
 * Once every process of a test has exited, nothing of the module's may
 * be left: no endpoint, group, queue pair, window, MR, pinned page or
 * request.
 */
static inline void rmawin_test_expect_no_leaks(struct __test_metadata *_metadata)
{
	static const char *const names[] = {
		"endpoints", "groups", "qps", "windows", "mrs", "pinned_pages", "reqs",
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

#endif /* RMAWIN_SELFTEST_H */
