// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA devices coming and going under rmawin: a soft-RoCE device created
 * for the test shows up in QUERY, an endpoint binds to it, and `rdma link
 * del` makes it disappear and releases everything the endpoint held,
 * also under traffic between two ranks (linkdev, on both of the
 * library's paths).  Needs root and the iproute2 tools (ip, rdma), as the test VM has.
 */
#include <sys/wait.h>
#include <rmawin.h>

#include "rmawin_test.h"
#include "rma_pattern.h"

#define TEST_IBDEV	"rmwtst"
#define TEST_NETDEV	"rmwtst0"

FIXTURE(tmpdev) {
	int fd;
	long pds0;
};

FIXTURE_SETUP(tmpdev)
{
	const char *why = rmawin_test_tmpdev_why_not();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, rmawin_test_tmpdev_add(TEST_IBDEV, TEST_NETDEV, NULL));
	self->fd = open(RMAWIN_DEV_PATH, O_RDWR);
	ASSERT_LE(0, self->fd);
	self->pds0 = rmawin_stat("pds");
}

FIXTURE_TEARDOWN(tmpdev)
{
	if (geteuid())
		return;
	rmawin_test_tmpdev_del(TEST_IBDEV, TEST_NETDEV);
	EXPECT_EQ(0, close(self->fd));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
	EXPECT_EQ(0, rmawin_stat("pds"));
}

TEST_F(tmpdev, added_device_appears_in_query)
{
	EXPECT_EQ(1, rmawin_has_dev(self->fd, TEST_IBDEV));
	EXPECT_EQ(1, rmawin_has_dev(self->fd, rmawin_test_ibdev()));
}

TEST_F(tmpdev, removed_device_disappears_and_releases_endpoint)
{
	int other;

	ASSERT_EQ(0, rmawin_bind_raw(self->fd, TEST_IBDEV, 0));
	/* a second endpoint on the device that stays */
	other = open(RMAWIN_DEV_PATH, O_RDWR);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, rmawin_bind_raw(other, rmawin_test_ibdev(), 0));
	EXPECT_EQ(self->pds0 + 2, rmawin_stat("pds"));

	ASSERT_EQ(0, rmawin_test_sh("rdma link del " TEST_IBDEV));
	EXPECT_EQ(0, rmawin_has_dev(self->fd, TEST_IBDEV));
	EXPECT_EQ(1, rmawin_has_dev(self->fd, rmawin_test_ibdev()));
	/* the endpoint's PD went with the device; the other one is untouched */
	EXPECT_EQ(self->pds0 + 1, rmawin_stat("pds"));
	/* the endpoint is still open, and says its device is gone */
	EXPECT_ERRNO(ENODEV, rmawin_bind_raw(self->fd, TEST_IBDEV, 0));
	EXPECT_ERRNO(ENODEV, rmawin_bind_raw(self->fd, rmawin_test_ibdev(), 0));
	EXPECT_ERRNO(EBUSY, rmawin_bind_raw(other, rmawin_test_ibdev(), 0));
	EXPECT_EQ(0, close(other));
}

TEST_F(tmpdev, removed_device_cannot_be_bound)
{
	ASSERT_EQ(0, rmawin_test_sh("rdma link del " TEST_IBDEV));
	EXPECT_ERRNO(ENODEV, rmawin_bind_raw(self->fd, TEST_IBDEV, 0));
	/* a failed bind leaves the endpoint free to bind elsewhere */
	EXPECT_EQ(0, rmawin_bind_raw(self->fd, rmawin_test_ibdev(), 0));
}

TEST_F(tmpdev, port_down_enetdown)
{
	int i, state = 0;

	ASSERT_EQ(0, rmawin_test_sh("ip link set " TEST_NETDEV " down"));
	/* rxe learns of the link change through a netdev notifier */
	for (i = 0; i < 50; i++) {
		struct rmawin_dev_info devs[32];
		struct rmawin_query q;
		unsigned int j;

		ASSERT_EQ(0, rmawin_query_raw(self->fd, &q, devs, 32));
		for (j = 0; j < q.ndevs && j < 32; j++)
			if (!strcmp(devs[j].name, TEST_IBDEV))
				state = devs[j].state;
		if (state == RMAWIN_PORT_DOWN)
			break;
		usleep(100 * 1000);
	}
	ASSERT_EQ(RMAWIN_PORT_DOWN, state);
	EXPECT_ERRNO(ENETDOWN, rmawin_bind_raw(self->fd, TEST_IBDEV, 0));
	EXPECT_ERRNO(ENETDOWN, rmawin_bind_raw(self->fd, TEST_IBDEV, 1));
	EXPECT_EQ(self->pds0, rmawin_stat("pds"));
}

/* Closing an endpoint after its device left must not touch the device. */
TEST_F(tmpdev, close_after_removal)
{
	int fd2 = open(RMAWIN_DEV_PATH, O_RDWR);

	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, rmawin_bind_raw(fd2, TEST_IBDEV, 0));
	ASSERT_EQ(0, rmawin_test_sh("rdma link del " TEST_IBDEV " && ip link del " TEST_NETDEV));
	EXPECT_EQ(0, close(fd2));
	EXPECT_EQ(self->pds0, rmawin_stat("pds"));
}

/* ---- the RDMA device deleted under traffic ------------------------------- */

#define FLT_IBDEV	"rmwflt"
#define FLT_NETDEV	"rmwflt0"
#define FLT_IP		"198.18.99.1"

RMAWIN_TEST_TMPDEV_PATHS(linkdev, FLT_IBDEV, FLT_NETDEV, FLT_IP);

struct traffic {
	int port;
	int iters[2];
	int err[2];		/* the first error, negative */
	char call[2][16];	/* which call returned it */
	int free_ret[2];
	int go;
};

static int traffic_rank(int rank, int n, void *arg)
{
	struct traffic *tr = arg;
	unsigned char *mem = map_rw(256 * KIB), *src = map_rw(64 * KIB);
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	const char *call = NULL;
	int ret = 0, i;

	if (!mem || !src)
		return 1;
	fill(src, 64 * KIB, rank);
	RMAWIN_TEST_TRY(2, rmawin_test_open_on(FLT_IP, FLT_IBDEV, rank, n, tr->port, 20000, &ep));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, mem, 256 * KIB, 1, 0, &win));
	RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));
	while (!ret) {
		ret = rmawin_put(win, src, 64 * KIB, 1 - rank, 0);
		call = "put (64 KiB)";
		for (i = 0; i < 4 && !ret; i++)
			ret = rmawin_put(win, src + i * 64, 64, 1 - rank, 128 * KIB + i * 64);
		if (!ret) {
			ret = rmawin_get(win, src + 32 * KIB, 100, 1 - rank, 200 * KIB);
			call = "get";
		}
		if (!ret) {
			ret = rmawin_fence(win, 0);
			call = "fence";
		}
		if (!ret)
			__atomic_add_fetch(&tr->iters[rank], 1, __ATOMIC_SEQ_CST);
	}
	snprintf(tr->call[rank], sizeof(tr->call[rank]), "%s", call);
	__atomic_store_n(&tr->err[rank], ret, __ATOMIC_SEQ_CST);
	/* the parent checks the counters while the endpoint is still open */
	while (!__atomic_load_n(&tr->go, __ATOMIC_SEQ_CST))
		usleep(10000);
	tr->free_ret[rank] = rmawin_win_free(win);
	RMAWIN_TEST_TRY(5, rmawin_ep_close(ep));
	return 0;
}

/* After the device went away: a new group on the test VM's rxe0 works. */
static int after_rank(int rank, int n, void *arg)
{
	unsigned char mem[4096], src[4096];
	struct rmawin_win *win;
	struct rmawin_ep *ep;

	memset(mem, 0, sizeof(mem));
	fill(src, sizeof(src), rank + 50);
	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem, sizeof(mem), 1, 0, &win));
	RMAWIN_TEST_TRY(3, rmawin_fence(win, 0));
	RMAWIN_TEST_TRY(4, rmawin_put(win, src, sizeof(src), 1 - rank, 0));
	RMAWIN_TEST_TRY(5, rmawin_fence(win, 0));
	if (check(mem, sizeof(mem), 1 - rank + 50) >= 0) {
		RMAWIN_TEST_MSG("put on rxe0 after the other device went away did not land");
		return 6;
	}
	RMAWIN_TEST_TRY(7, rmawin_win_free(win));
	RMAWIN_TEST_TRY(8, rmawin_ep_close(ep));
	return 0;
}

/* Run @cmd; after @secs seconds, log the kernel stacks of it and of @pids, and give up. */
static int sh_deadline(struct __test_metadata *_metadata, const char *cmd, int secs,
		       pid_t *pids, int n)
{
	double end = rmawin_test_now() + secs;
	pid_t pid;
	int st, i;

	fflush(stderr);
	pid = fork();
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (rmawin_test_now() > end) {
			TH_LOG("'%s' hangs: still running after %d s", cmd, secs);
			rmawin_test_log_stack(_metadata, pid, -1);
			for (i = 0; i < n; i++)
				if (pids[i])
					rmawin_test_log_stack(_metadata, pids[i], i);
			return -1;
		}
		usleep(20000);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST_F_TIMEOUT(linkdev, rdma_link_del_under_traffic, 150)
{
	static const char *const counters[] = {
		"groups", "qps", "windows", "mrs", "pinned_pages", "reqs",
	};
	struct traffic *tr = rmawin_test_shared(sizeof(*tr));
	double t0, end;
	unsigned int c;
	pid_t pids[2];
	long v;
	FILE *f;
	int r, port = rmawin_test_ports(2);

	ASSERT_NE(NULL, tr);
	tr->port = rmawin_test_ports(2);
	for (r = 0; r < 2; r++)
		pids[r] = rmawin_test_fork_rank(r, 2, traffic_rank, tr);
	/* both ranks in full swing */
	end = rmawin_test_now() + 30;
	while ((__atomic_load_n(&tr->iters[0], __ATOMIC_SEQ_CST) < 5 ||
		__atomic_load_n(&tr->iters[1], __ATOMIC_SEQ_CST) < 5) &&
	       !tr->err[0] && !tr->err[1] && rmawin_test_now() < end)
		usleep(10000);
	ASSERT_TRUE(tr->iters[0] >= 5 && tr->iters[1] >= 5) {
		TH_LOG("traffic never got going: %d and %d iterations, errors %d (%s) and %d (%s)",
		       tr->iters[0], tr->iters[1], tr->err[0], tr->call[0], tr->err[1],
		       tr->call[1]);
		tr->go = 1;
		rmawin_test_wait_ranks(_metadata, pids, 2, 20);
	}
	t0 = rmawin_test_now();
	EXPECT_EQ(0, sh_deadline(_metadata, "exec rdma link del " FLT_IBDEV, 60, pids, 2));
	TH_LOG("(rdma link del took %.1f s, after %d and %d iterations)", rmawin_test_now() - t0,
	       tr->iters[0], tr->iters[1]);
	/* each rank's next call fails */
	end = rmawin_test_now() + 30;
	while ((!__atomic_load_n(&tr->err[0], __ATOMIC_SEQ_CST) ||
		!__atomic_load_n(&tr->err[1], __ATOMIC_SEQ_CST)) && rmawin_test_now() < end)
		usleep(10000);
	for (r = 0; r < 2; r++) {
		EXPECT_TRUE(tr->err[r] == -ENODEV || tr->err[r] == -ECONNRESET) {
			TH_LOG("rank %d: %s after the device went away: %d (%s), want -ENODEV "
			       "(or -ECONNRESET)", r, tr->call[r], tr->err[r],
			       rmawin_strerror(tr->err[r]));
			rmawin_test_log_stack(_metadata, pids[r], r);
		}
		TH_LOG("(rank %d: %s failed with %d: %s)", r, tr->call[r], tr->err[r],
		       rmawin_strerror(tr->err[r]));
	}
	/* the device's removal released everything, though both files are still open */
	for (c = 0; c < ARRAY_SIZE(counters); c++) {
		v = rmawin_stat(counters[c]);
		EXPECT_EQ(0, v) TH_LOG("'%s' is %ld after rdma link del, with the endpoints open",
				       counters[c], v);
	}
	EXPECT_EQ(2, rmawin_stat("endpoints"));
	__atomic_store_n(&tr->go, 1, __ATOMIC_SEQ_CST);
	EXPECT_EQ(2, rmawin_test_wait_ranks(_metadata, pids, 2, 30));
	for (r = 0; r < 2; r++)
		TH_LOG("(rank %d: win_free after the removal: %d)", r, tr->free_ret[r]);
	rmawin_test_expect_no_leaks(_metadata);
	/* nothing holds the module any more (module_test unloads it) */
	f = fopen("/sys/module/rmawin/refcnt", "r");
	if (f) {
		EXPECT_EQ(1, fscanf(f, "%ld", &v));
		EXPECT_EQ(0, v) TH_LOG("the module's reference count is %ld", v);
		fclose(f);
	}
	/* and the device the guest keeps still works */
	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, after_rank, &port, 25));
	rmawin_test_expect_no_leaks(_metadata);
	munmap(tr, sizeof(*tr));
}

TEST_HARNESS_MAIN
