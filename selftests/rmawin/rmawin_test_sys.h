/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The system around the module, for the selftests (rmawin_test.h includes
 * this): its debugfs counters and test hooks, files such as its
 * parameters, loading and unloading it, a shell command, soft-RoCE
 * devices of a test's own, its poller threads, and the leak check at the
 * end of a test.
 */
#ifndef RMAWIN_SELFTEST_SYS_H
#define RMAWIN_SELFTEST_SYS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "rmawin_test_files.h"

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

#endif /* RMAWIN_SELFTEST_SYS_H */
