// SPDX-License-Identifier: GPL-2.0
/*
 * Groups: N processes in one guest join a group over soft-RoCE, pass
 * barriers that really hold everyone back, and fail cleanly when a peer is
 * missing, refuses, or dies.
 */
#include <signal.h>
#include <stddef.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <rmawin.h>

#include "rmawin_test.h"

/*
 * The tests that join through the library run on both of its paths
 * (path.ring.NAME and path.no_ring.NAME); those of raw ioctls once.
 */
RMAWIN_TEST_PATHS(path);

/* Rank @rank of @n on the guest's address, ports @port.., waiting @timeout_ms to join. */
static int open_rank(int rank, int n, int port, unsigned int timeout_ms,
		     struct rmawin_ep **ep)
{
	return rmawin_test_open_on(rmawin_test_ip(), NULL, rank, n, port, timeout_ms, ep);
}

struct barrier_arg {
	int port;
	int rounds;
	int *arrived;	/* shared: how many ranks entered barrier i */
};

/*
 * Every rank counts itself in, then waits; after the barrier every rank
 * must see the whole group counted.  Rank 0 is late each time, so a
 * barrier that lets anyone through early is caught.
 */
static int barrier_rank(int rank, int n, void *p)
{
	struct barrier_arg *a = p;
	struct rmawin_ep *ep;
	int i, ret;

	ret = open_rank(rank, n, a->port, 20000, &ep);
	if (ret) {
		fprintf(stderr, "rank %d: open: %s\n", rank, rmawin_strerror(ret));
		return 1;
	}
	for (i = 0; i < a->rounds; i++) {
		if (rank == 0)
			usleep(20000);
		__atomic_add_fetch(&a->arrived[i], 1, __ATOMIC_SEQ_CST);
		ret = rmawin_barrier(ep);
		if (ret) {
			fprintf(stderr, "rank %d: barrier %d: %s\n", rank, i,
				rmawin_strerror(ret));
			return 1;
		}
		if (__atomic_load_n(&a->arrived[i], __ATOMIC_SEQ_CST) != n) {
			fprintf(stderr, "rank %d left barrier %d early\n", rank, i);
			return 1;
		}
	}
	return rmawin_ep_close(ep);
}

static void barrier_case(struct __test_metadata *_metadata, int n)
{
	struct barrier_arg a = { .port = rmawin_test_ports(n), .rounds = 10 };

	a.arrived = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, a.arrived);
	EXPECT_EQ(n, rmawin_test_run_ranks(_metadata, n, barrier_rank, &a));
	EXPECT_EQ(0, rmawin_stat("groups"));
	EXPECT_EQ(0, rmawin_stat("qps"));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
	munmap(a.arrived, 4096);
}

TEST_F(path, join_and_barrier_2_ranks) { barrier_case(_metadata, 2); }
TEST_F(path, join_and_barrier_3_ranks) { barrier_case(_metadata, 3); }
TEST_F(path, join_and_barrier_4_ranks) { barrier_case(_metadata, 4); }
/* Emulated RDMA is slow: the harness's 30 s is too little for 8 ranks. */
TEST_F_TIMEOUT(path, join_and_barrier_8_ranks, 180) { barrier_case(_metadata, 8); }

TEST_F(path, singleton_group)
{
	struct rmawin_ep *ep;

	ASSERT_EQ(0, open_rank(0, 1, rmawin_test_ports(1), 0, &ep));
	EXPECT_EQ(1, rmawin_stat("groups"));
	EXPECT_EQ(0, rmawin_barrier(ep));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_stat("groups"));
}

/* Rank 1 of 2 alone: nobody listens at rank 0's address. */
TEST_F(path, join_timeout_etimedout)
{
	struct rmawin_ep *ep = NULL;

	EXPECT_EQ(-ETIMEDOUT, open_rank(1, 2, rmawin_test_ports(2), 1500, &ep));
	EXPECT_EQ(0, rmawin_stat("groups"));
	EXPECT_EQ(0, rmawin_stat("qps"));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
	/* rank 0 alone waits for rank 1 the same way */
	EXPECT_EQ(-ETIMEDOUT, open_rank(0, 2, rmawin_test_ports(2), 1000, &ep));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
}

/* Join rank @rank of @n with a 16-byte key of bytes @key. */
static int raw_join(int fd, int rank, int n, int port, __u8 key, unsigned int tmo)
{
	struct rmawin_addr addrs[8];
	struct rmawin_group_join j = { .size = sizeof(j) };
	__u8 kbuf[16];
	int i;

	memset(addrs, 0, sizeof(addrs));
	for (i = 0; i < n; i++) {
		addrs[i].family = AF_INET;
		addrs[i].port = port + i;
		inet_pton(AF_INET, rmawin_test_ip(), addrs[i].addr);
	}
	j.rank = rank;
	j.nranks = n;
	j.addrs_ptr = (uintptr_t)addrs;
	memset(kbuf, key, sizeof(kbuf));
	j.key_ptr = (uintptr_t)kbuf;
	j.key_len = sizeof(kbuf);
	j.timeout_ms = tmo;
	return ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j);
}

/*
 * Rank 0 of @n0 (key bytes @key0) joins in a child and must fail with
 * @err0; rank 1 of 2 (key bytes @key1) joins here, on the same ports, and
 * must fail with @err1.
 */
static void two_joins(struct __test_metadata *_metadata, int n0, __u8 key0, int err0,
		      __u8 key1, int err1)
{
	int fd, st, port = rmawin_test_ports(n0 > 2 ? n0 : 2);
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		fd = open(RMAWIN_DEV_PATH, O_RDWR);
		_exit(raw_join(fd, 0, n0, port, key0, 3000) == -1 && errno == err0 ? 0 : 1);
	}
	fd = open(RMAWIN_DEV_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	usleep(300000);
	EXPECT_ERRNO(err1, raw_join(fd, 1, 2, port, key1, 3000));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(0, rmawin_stat("groups"));
}

/*
 * Two processes that hold different job keys never form a group: each
 * sees the other fail its proof, counts it, and gives up at the timeout
 * with -EKEYREJECTED.
 */
/*
 * The ports the tests listen on are never ones rdma_cm may give a
 * connection of its own (the ephemeral range): one of those, drawn by a
 * connect a moment earlier, made a rank's join fail with EADDRINUSE.
 * The draw spans more than a block, so it crosses into the next one.
 */
TEST(test_ports_avoid_the_ephemeral_range)
{
	unsigned int lo, hi, first, last;
	int n = RMAWIN_TEST_PORT_BLOCK + 2;

	ASSERT_EQ(0, rmawin_test_ephemeral(&lo, &hi));
	first = rmawin_test_ports(n);
	last = first + n - 1;
	EXPECT_TRUE(last < lo || first > hi)
		TH_LOG("ports %u..%u overlap ip_local_port_range %u..%u", first, last, lo, hi);
	EXPECT_GE(first, RMAWIN_TEST_PORT_MIN);
	EXPECT_LE(last, RMAWIN_TEST_PORT_MAX);
}

TEST(join_wrong_key_ekeyrejected)
{
	long before = rmawin_stat("auth_failures");

	two_joins(_metadata, 2, 0x11, EKEYREJECTED, 0x22, EKEYREJECTED);
	EXPECT_LE(before + 2, rmawin_stat("auth_failures"));
}

/* A group of another shape on the same ports: refused, whatever the key. */
TEST(join_other_group_econnrefused)
{
	/* rank 0 of 3 on the test's ports; rank 1 of 2 asks for another group */
	two_joins(_metadata, 3, 0x11, ETIMEDOUT, 0x11, ECONNREFUSED);
}

/*
 * GROUP_JOIN's flags and job key, each case on a copy of @j (rank 0 of 1,
 * no key) that breaks one thing: -EINVAL, or -EFAULT for a key it cannot
 * read.
 */
static void join_key_errors(struct __test_metadata *_metadata, int fd, struct rmawin_group_join j)
{
	__u8 kbuf[RMAWIN_JOB_KEY_MAX + 1] = { 0 };

	j.flags = 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	j.flags = 0;
	/* the job key: both or neither of pointer and length, 16..64 bytes */
	j.key_len = 16;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	j.key_ptr = (uintptr_t)kbuf;
	j.key_len = 0;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	j.key_len = RMAWIN_JOB_KEY_MIN - 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	j.key_len = RMAWIN_JOB_KEY_MAX + 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	j.key_ptr = 16;
	j.key_len = RMAWIN_JOB_KEY_MIN;
	EXPECT_ERRNO(EFAULT, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
}

/*
 * GROUP_JOIN's ranks and address table, each case on a copy of @j (rank 0
 * of 1 at @addrs, whose first entry is the guest's address at @port),
 * breaking one thing; @addrs is mended after each case.
 */
static void join_shape_errors(struct __test_metadata *_metadata, int fd, struct rmawin_group_join j,
			      struct rmawin_addr *addrs, int port)
{
	/* a group with peers and no key */
	j.nranks = 2;
	EXPECT_ERRNO(ENOKEY, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	j.nranks = 1;
	j.rank = 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	j.rank = 0;
	j.nranks = 0;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	j.nranks = RMAWIN_MAX_RANKS + 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	j.nranks = 1;
	j.addrs_ptr = 16;
	EXPECT_ERRNO(EFAULT, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	j.addrs_ptr = (uintptr_t)addrs;
	addrs[0].family = 12345;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	addrs[0].family = AF_INET;
	addrs[0].port = 0;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	addrs[0].port = port;
	addrs[0].addr[15] = 1;	/* IPv4 with junk after the address */
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	addrs[0].addr[15] = 0;
	/* an address no RDMA device has */
	inet_pton(AF_INET, "127.0.0.1", addrs[0].addr);
	EXPECT_ERRNO(EADDRNOTAVAIL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	inet_pton(AF_INET, rmawin_test_ip(), addrs[0].addr);
}

TEST(join_validation)
{
	struct rmawin_addr addrs[2];
	struct rmawin_group_join j;
	struct rmawin_barrier b = { .size = sizeof(b) };
	int fd = open(RMAWIN_DEV_PATH, O_RDWR), port = rmawin_test_ports(2);

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(ENOTCONN, ioctl(fd, RMAWIN_IOC_BARRIER, &b));
	b.flags = 1;
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_BARRIER, &b));

	memset(addrs, 0, sizeof(addrs));
	addrs[0].family = addrs[1].family = AF_INET;
	addrs[0].port = port;
	addrs[1].port = port + 1;
	inet_pton(AF_INET, rmawin_test_ip(), addrs[0].addr);
	inet_pton(AF_INET, rmawin_test_ip(), addrs[1].addr);
	memset(&j, 0, sizeof(j));
	j.size = sizeof(j);
	j.rank = 0;
	j.nranks = 1;
	j.addrs_ptr = (uintptr_t)addrs;

	/* the helpers break copies of j: it stays the good join they start from */
	join_key_errors(_metadata, fd, j);
	join_shape_errors(_metadata, fd, j, addrs, port);
	EXPECT_EQ(0, rmawin_stat("groups"));
	EXPECT_EQ(0, rmawin_stat("pds"));	/* the failed joins bound nothing */

	ASSERT_EQ(0, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	EXPECT_EQ(1, rmawin_stat("pds"));
	EXPECT_ERRNO(EBUSY, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	b.flags = 0;
	EXPECT_EQ(0, ioctl(fd, RMAWIN_IOC_BARRIER, &b));
	EXPECT_EQ(0, close(fd));
	EXPECT_EQ(0, rmawin_stat("groups"));
	EXPECT_EQ(0, rmawin_stat("pds"));
}

/* The same address twice in one guest: the second listener can't have it. */
TEST(join_address_in_use)
{
	int a = open(RMAWIN_DEV_PATH, O_RDWR), b = open(RMAWIN_DEV_PATH, O_RDWR);
	int port = rmawin_test_ports(1);

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, raw_join(a, 0, 1, port, 1, 1000));
	EXPECT_ERRNO(EADDRINUSE, raw_join(b, 0, 1, port, 1, 1000));
	EXPECT_EQ(0, close(a));
	EXPECT_EQ(0, close(b));
}

static int victim_rank(int rank, int n, void *p)
{
	int port = *(int *)p;
	struct rmawin_ep *ep;
	int ret;

	ret = open_rank(rank, n, port, 20000, &ep);
	if (ret) {
		fprintf(stderr, "rank %d: open: %s\n", rank, rmawin_strerror(ret));
		return 1;
	}
	/* everyone's join is complete, on every side, before anyone dies */
	ret = rmawin_barrier(ep);
	if (ret) {
		fprintf(stderr, "rank %d: first barrier: %s\n", rank, rmawin_strerror(ret));
		return 1;
	}
	if (rank == 1) {
		/* die without closing anything: the kernel must clean up */
		kill(getpid(), SIGKILL);
	}
	ret = rmawin_barrier(ep);	/* rank 1 never comes */
	if (ret != -ECONNRESET) {
		fprintf(stderr, "rank %d: barrier gave %d, want -ECONNRESET\n", rank, ret);
		return 1;
	}
	return rmawin_ep_close(ep);
}

/* A rank killed mid-job fails its peers' barrier instead of hanging it. */
TEST_F(path, peer_killed_barrier_econnreset)
{
	int port = rmawin_test_ports(3);
	pid_t pids[3];
	int i, st;

	for (i = 0; i < 3; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(victim_rank(i, 3, &port));
	}
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		if (i == 1) {
			EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		} else {
			EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
	}
	EXPECT_EQ(0, rmawin_stat("groups"));
	EXPECT_EQ(0, rmawin_stat("qps"));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
}

/* Rank 1 waits in a barrier that rank 0 enters only when told to. */
static int busy_rank(int rank, int port, int up, int go)
{
	struct rmawin_ep *ep;
	char c = 'i';

	if (open_rank(rank, 2, port, 20000, &ep) || rmawin_barrier(ep))
		return 1;
	if (rank == 1 && write(up, &c, 1) != 1)
		return 2;
	if (rank == 0 && read(go, &c, 1) != 1)
		return 3;
	if (rmawin_barrier(ep))
		return 4;
	return rmawin_ep_close(ep) ? 5 : 0;
}

/*
 * Exit 0 if some endpoint's debugfs file names @pid, says one thread waits
 * for peers, and still gives the group's fields (a wait for peers holds no
 * lock the reader would need).
 */
static int read_ep_files(pid_t pid)
{
	char path[64], line[128];
	int id, found = 0;
	long val, p, waiting, nranks;
	FILE *f;

	for (id = 0; id < 4096 && !found; id++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/rmawin/ep%d", id);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = waiting = nranks = -1;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "pid %ld", &val) == 1)
				p = val;
			else if (sscanf(line, "waiting %ld", &val) == 1)
				waiting = val;
			else if (sscanf(line, "nranks %ld", &val) == 1)
				nranks = val;
		}
		fclose(f);
		found = p == pid && waiting == 1 && nranks == 2;
	}
	return found ? 0 : 1;
}

/*
 * Reading the debugfs file of an endpoint that waits in a barrier returns
 * at once ("waiting 1", with its group's fields) instead of waiting as
 * long as the job does.
 */
TEST_F(path, debugfs_does_not_wait_for_a_blocked_endpoint)
{
	int up[2], go[2], i, st = -1, port = rmawin_test_ports(2);
	pid_t pids[2], reader;
	char c;

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < 2; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(busy_rank(i, port, up[1], go[0]));
	}
	ASSERT_EQ(1, read(up[0], &c, 1));
	usleep(300000);		/* rank 1 is in the barrier, rank 0 not */
	reader = fork();
	if (reader == 0)
		_exit(read_ep_files(pids[1]));
	for (i = 0; i < 50 && waitpid(reader, &st, WNOHANG) == 0; i++)
		usleep(100000);
	EXPECT_LT(i, 50) TH_LOG("reading debugfs waited for the barrier");
	ASSERT_EQ(1, write(go[1], "g", 1));
	if (i == 50)
		ASSERT_EQ(reader, waitpid(reader, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("no endpoint of pid %d said waiting 1 with nranks 2", pids[1]);
	for (i = 0; i < 2; i++)
		rmawin_test_wait_rank(_metadata, pids[i], i);
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_HARNESS_MAIN
