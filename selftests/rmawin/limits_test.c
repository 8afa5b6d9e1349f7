// SPDX-License-Identifier: GPL-2.0
/*
 * What one local process may make the module hold: everything is charged
 * before it is allocated (RLIMIT_MEMLOCK for pinned pages, the memory
 * cgroup for kernel memory), the module's caps hold (ranks per group,
 * windows per endpoint, endpoints per process), and an endpoint is its
 * opener's alone: a process that got the file another way (fork,
 * SCM_RIGHTS) can only query the module through it.
 */
#include <dirent.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <linux/rmawin.h>
#include <rmawin.h>

#include "rmawin_test.h"

/*
 * The tests that open endpoints through the library run on both of its
 * paths (path.ring.NAME and path.no_ring.NAME); those of raw ioctls once,
 * and the ring's poller's on the ring.
 */
RMAWIN_TEST_PATHS(path);

#define KIB	1024UL
#define MIB	(1024 * KIB)
#define PARAM	"/sys/module/rmawin/parameters/"

/* Drop to nobody with RLIMIT_MEMLOCK at @limit: no CAP_IPC_LOCK any more. */
static int become_nobody(unsigned long limit)
{
	struct rlimit rl = { .rlim_cur = limit, .rlim_max = limit };

	return setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) || setgid(65534) ||
	       setuid(65534);
}

/*
 * A window of 1 TiB over a 64 KiB limit is -ENOMEM at once: the charge
 * comes before the array of 2^28 page pointers it would need (which used
 * to be allocated first, with a WARN above INT_MAX bytes).
 */
static int huge_window_rank(int rank, int n, void *arg)
{
	/* low enough that 1 TiB after it is still user address space */
	unsigned char *mem = mmap((void *)0x10000000UL, 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int ret;

	if (mem == MAP_FAILED || become_nobody(64 * KIB))
		return 1;
	if (rmawin_test_open(0, 1, *(int *)arg, &ep))
		return 2;
	/* the range need not be mapped: it is charged before it is looked at */
	ret = rmawin_win_create(ep, mem, 1ULL << 40, 1, 0, &win);
	if (ret != -ENOMEM) {
		fprintf(stderr, "1 TiB window over a 64 KiB limit: %s\n", rmawin_strerror(ret));
		return 3;
	}
	return rmawin_ep_close(ep) ? 4 : 0;
}

/*
 * An allocated window's pages live as long as a mapping of them, and so
 * does their RLIMIT_MEMLOCK charge: a forked child keeps the mapping of a
 * window its parent freed, and until the child unmaps it the parent cannot
 * allocate the same again under a limit that holds one.  Without that,
 * create, map and free in a loop would lock memory past any limit.
 */
#define AW_LEN		(768 * KIB)
#define AW_LIMIT	(1024 * KIB)

static int kept_mapping_rank(int rank, int n, void *arg)
{
	int go[2], st, ret;
	struct rmawin_win *win, *again;
	struct rmawin_ep *ep;
	unsigned char *base;
	void *base2;
	pid_t child;
	char c;

	if (pipe(go) || become_nobody(AW_LIMIT))
		return 1;
	RMAWIN_TEST_TRY(2, rmawin_test_open(0, 1, *(int *)arg, &ep));
	RMAWIN_TEST_TRY(3, rmawin_win_allocate(ep, AW_LEN, 1, 0, (void **)&base, &win));
	memset(base, 0x5a, AW_LEN);
	child = fork();
	if (child < 0)
		return 4;
	if (!child) {
		/* the parent's window is freed while we still map it */
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(base[0] == 0x5a && base[AW_LEN - 1] == 0x5a ? 0 : 2);
	}
	close(go[0]);
	ret = rmawin_win_free(win) ? 5 : 0;
	if (!ret) {
		ret = rmawin_win_allocate(ep, AW_LEN, 1, 0, &base2, &again);
		if (ret != -ENOMEM)
			RMAWIN_TEST_MSG("a second window while the child maps the first: %d (%s), "
					"want -ENOMEM", ret, rmawin_strerror(ret));
		ret = ret == -ENOMEM ? 0 : 6;
	}
	/* the child goes whatever happened: a failed read ends it */
	if (ret || write(go[1], "g", 1) != 1)
		close(go[1]);
	if (waitpid(child, &st, 0) != child || ret)
		return ret ?: 7;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		RMAWIN_TEST_MSG("the child's mapping of the freed window: status 0x%x", st);
		return 8;
	}
	/* the last mapping went with the child, and the charge with it */
	RMAWIN_TEST_TRY(9, rmawin_win_allocate(ep, AW_LEN, 1, 0, &base2, &again));
	RMAWIN_TEST_TRY(10, rmawin_win_free(again));
	return rmawin_ep_close(ep) ? 11 : 0;
}

TEST_F(path, allocated_window_charge_lasts_as_long_as_a_mapping)
{
	int port = rmawin_test_ports(1);

	if (geteuid())
		SKIP(return, "dropping privileges needs root");
	EXPECT_EQ(1, rmawin_test_run_ranks_for(_metadata, 1, kept_mapping_rank, &port, 60));
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * The same as root, whom CAP_IPC_LOCK exempts from RLIMIT_MEMLOCK: more
 * pages than the machine has cannot be pinned either, and the module says
 * so before it sizes anything by them (the fuzzer found the WARN of a
 * kvmalloc above INT_MAX bytes that came first).
 */
static int huge_window_root_rank(int rank, int n, void *arg)
{
	unsigned char *mem = mmap((void *)0x10000000UL, 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	void *base;
	int ret;

	if (mem == MAP_FAILED)
		return 1;
	if (rmawin_test_open(0, 1, *(int *)arg, &ep))
		return 2;
	ret = rmawin_win_create(ep, mem, 1ULL << 40, 1, 0, &win);
	if (ret != -ENOMEM) {
		fprintf(stderr, "1 TiB window as root: %s\n", rmawin_strerror(ret));
		return 3;
	}
	ret = rmawin_win_allocate(ep, 1ULL << 40, 1, 0, &base, &win);
	if (ret != -ENOMEM) {
		fprintf(stderr, "1 TiB allocated window as root: %s\n", rmawin_strerror(ret));
		return 4;
	}
	return rmawin_ep_close(ep) ? 5 : 0;
}

TEST_F(path, huge_window_as_root_enomem_before_allocating)
{
	int port = rmawin_test_ports(1);

	if (geteuid())
		SKIP(return, "CAP_IPC_LOCK needs root");
	EXPECT_EQ(1, rmawin_test_run_ranks_for(_metadata, 1, huge_window_root_rank, &port, 60));
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_F(path, huge_window_over_memlock_enomem_before_allocating)
{
	int port = rmawin_test_ports(1);

	if (geteuid())
		SKIP(return, "dropping privileges needs root");
	EXPECT_EQ(1, rmawin_test_run_ranks_for(_metadata, 1, huge_window_rank, &port, 60));
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * The pages of an origin buffer pinned for one put (not cached) count
 * against RLIMIT_MEMLOCK as a window's do: 1 MiB over a 64 KiB limit is
 * -ENOMEM, 32 KiB fits.  (Uncached entries used to pin uncharged.)
 */
static int private_pin_rank(int rank, int n, void *arg)
{
	unsigned char *buf = mmap(NULL, MIB, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	void *base;
	int bad = 0;

	if (buf == MAP_FAILED)
		return 1;
	memset(buf, 7, MIB);
	if (rank == 0 && become_nobody(64 * KIB))
		return 2;
	if (rmawin_test_open(rank, 2, *(int *)arg, &ep))
		return 3;
	if (rmawin_win_allocate(ep, rank ? MIB : 0, 1, 0, &base, &win) ||
	    rmawin_fence(win, 0))
		return 4;
	if (rank == 0) {
		RMAWIN_TEST_WANT(-ENOMEM, rmawin_put(win, buf, MIB, 1, 0));
		RMAWIN_TEST_WANT(0, rmawin_put(win, buf, 32 * KIB, 1, 0));
	}
	if (rmawin_fence(win, 0))
		return 5;
	if (rank == 1 && (((unsigned char *)base)[32 * KIB - 1] != 7 ||
			  ((unsigned char *)base)[32 * KIB] != 0))
		bad = 1;
	if (rmawin_win_free(win) || rmawin_ep_close(ep))
		return 6;
	return bad ? 7 : 0;
}

TEST_F(path, uncached_pins_charged_to_memlock)
{
	int port = rmawin_test_ports(2);

	if (geteuid())
		SKIP(return, "dropping privileges needs root");
	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, private_pin_rank, &port, 120));
	rmawin_test_expect_no_leaks(_metadata);
}

/* An endpoint is its opener's: a forked child may QUERY through it, no more. */
TEST_F(path, shared_fd_other_process_eperm)
{
	struct rmawin_barrier b = { .size = sizeof(b) };
	struct rmawin_query q = { .size = sizeof(q) };
	struct rmawin_ep *ep;
	pid_t pid;
	int fd, st;

	ASSERT_EQ(0, rmawin_test_open(0, 1, rmawin_test_ports(1), &ep));
	fd = rmawin_ep_fd(ep);
	pid = fork();
	if (!pid) {
		int bad = 0;

		if (ioctl(fd, RMAWIN_IOC_QUERY, &q))
			bad |= 1;
		if (ioctl(fd, RMAWIN_IOC_BARRIER, &b) != -1 || errno != EPERM)
			bad |= 2;
		if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) != MAP_FAILED ||
		    errno != EPERM)
			bad |= 4;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("child: 1 QUERY failed, 2 BARRIER not EPERM, "
					     "4 mmap not EPERM: %d", WEXITSTATUS(st));
	/* the owner goes on */
	EXPECT_EQ(0, ioctl(fd, RMAWIN_IOC_BARRIER, &b));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	rmawin_test_expect_no_leaks(_metadata);
}

TEST(max_endpoints_per_process_emfile)
{
	long saved = rmawin_test_read_long(PARAM "max_endpoints");
	int fd[3], i;

	ASSERT_LT(0, saved);
	ASSERT_EQ(0, rmawin_test_write_long(PARAM "max_endpoints", 2));
	for (i = 0; i < 2; i++) {
		fd[i] = open(RMAWIN_DEV_PATH, O_RDWR);
		EXPECT_LE(0, fd[i]);
	}
	EXPECT_ERRNO(EMFILE, open(RMAWIN_DEV_PATH, O_RDWR));
	close(fd[0]);
	fd[2] = open(RMAWIN_DEV_PATH, O_RDWR);
	EXPECT_LE(0, fd[2]);
	close(fd[1]);
	close(fd[2]);
	ASSERT_EQ(0, rmawin_test_write_long(PARAM "max_endpoints", saved));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
}

TEST_F(path, max_windows_per_endpoint_emfile)
{
	long saved = rmawin_test_read_long(PARAM "max_windows");
	static char mem[3][4096];
	struct rmawin_win *win[3];
	struct rmawin_ep *ep;

	ASSERT_LT(0, saved);
	ASSERT_EQ(0, rmawin_test_write_long(PARAM "max_windows", 2));
	ASSERT_EQ(0, rmawin_test_open(0, 1, rmawin_test_ports(1), &ep));
	EXPECT_EQ(0, rmawin_win_create(ep, mem[0], 4096, 1, 0, &win[0]));
	EXPECT_EQ(0, rmawin_win_create(ep, mem[1], 4096, 1, 0, &win[1]));
	EXPECT_EQ(-EMFILE, rmawin_win_create(ep, mem[2], 4096, 1, 0, &win[2]));
	EXPECT_EQ(0, rmawin_win_free(win[0]));
	EXPECT_EQ(0, rmawin_win_create(ep, mem[2], 4096, 1, 0, &win[2]));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	ASSERT_EQ(0, rmawin_test_write_long(PARAM "max_windows", saved));
	rmawin_test_expect_no_leaks(_metadata);
}

TEST(max_ranks_per_group_einval)
{
	long saved = rmawin_test_read_long(PARAM "max_ranks");
	struct rmawin_addr addrs[5];
	struct rmawin_group_join j = { .size = sizeof(j) };
	__u8 key[16] = { 1 };
	int fd, i, port = rmawin_test_ports(5);

	ASSERT_LT(0, saved);
	ASSERT_EQ(0, rmawin_test_write_long(PARAM "max_ranks", 4));
	memset(addrs, 0, sizeof(addrs));
	for (i = 0; i < 5; i++) {
		addrs[i].family = AF_INET;
		addrs[i].port = port + i;
		inet_pton(AF_INET, rmawin_test_ip(), addrs[i].addr);
	}
	j.nranks = 5;
	j.addrs_ptr = (uintptr_t)addrs;
	j.key_ptr = (uintptr_t)key;
	j.key_len = sizeof(key);
	fd = open(RMAWIN_DEV_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_ERRNO(EINVAL, ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j));
	close(fd);
	ASSERT_EQ(0, rmawin_test_write_long(PARAM "max_ranks", saved));
	EXPECT_EQ(0, rmawin_stat("groups"));
}

/*
 * The pages of an allocated window are the process's memory: its memory
 * cgroup pays for them (memory.current grows by the window's size).
 */
#define CG	"/sys/fs/cgroup/rmawin_test"

/* cgroup v2 mounted, with its memory controller on for CG?  1 if so. */
static int memcg_ready(void)
{
	FILE *f;
	int ok;

	if (access("/sys/fs/cgroup/cgroup.controllers", R_OK))
		mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	f = fopen("/sys/fs/cgroup/cgroup.subtree_control", "w");
	if (!f)
		return 0;
	ok = fputs("+memory\n", f) >= 0;
	return !fclose(f) && ok;
}

/* Move this process into CG.  Return: 0 or -1. */
static int memcg_join(void)
{
	char pid[24];
	FILE *f;
	int ok;

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	f = fopen(CG "/cgroup.procs", "w");
	if (!f)
		return -1;
	ok = fputs(pid, f) >= 0;
	return !fclose(f) && ok ? 0 : -1;
}

struct memcg {
	int port;
	long delta;		/* how much memory.current grew */
};

static int memcg_rank(int rank, int n, void *arg)
{
	struct memcg *m = arg;
	long before, after;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	void *base;

	if (memcg_join())
		return 1;
	if (rmawin_test_open(0, 1, m->port, &ep))
		return 2;
	before = rmawin_test_read_long(CG "/memory.current");
	if (rmawin_win_allocate(ep, 16 * MIB, 1, 0, &base, &win))
		return 3;
	after = rmawin_test_read_long(CG "/memory.current");
	m->delta = after - before;
	return rmawin_win_free(win) || rmawin_ep_close(ep) ? 4 : 0;
}

TEST_F(path, allocated_window_charged_to_memcg)
{
	struct memcg *m = rmawin_test_shared(sizeof(*m));

	ASSERT_NE(NULL, m);
	m->port = rmawin_test_ports(1);
	if (!memcg_ready())
		SKIP(return, "no cgroup v2 memory controller in this kernel");
	ASSERT_EQ(0, mkdir(CG, 0755) && errno != EEXIST);
	EXPECT_EQ(1, rmawin_test_run_ranks_for(_metadata, 1, memcg_rank, m, 60));
	EXPECT_LE(16 * (long)MIB, m->delta) TH_LOG("memory.current grew by %ld bytes", m->delta);
	rmdir(CG);
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * A ring's memory is the process's too: eight endpoints' rings of 4096
 * entries (about 420 KiB each) grow memory.current by about their size
 * (the memory cgroup charges in batches of 64 pages per CPU: less than
 * the slack allowed).
 */
#define RING_EPS	8

struct memcg_ring {
	int port;
	long delta;		/* how much memory.current grew */
	long len;		/* the rings' bytes */
};

static int memcg_ring_rank(int rank, int n, void *arg)
{
	struct memcg_ring *m = arg;
	struct rmawin_ep *ep[RING_EPS];
	struct rmawin_ring_setup rs;
	long before, after;
	int i;

	if (memcg_join())
		return 1;
	for (i = 0; i < RING_EPS; i++)
		RMAWIN_TEST_TRY(2, rmawin_test_open(0, 1, m->port + i, &ep[i]));
	before = rmawin_test_read_long(CG "/memory.current");
	for (i = 0; i < RING_EPS; i++) {
		memset(&rs, 0, sizeof(rs));
		rs.size = sizeof(rs);
		rs.sq_entries = 4096;
		if (ioctl(rmawin_ep_fd(ep[i]), RMAWIN_IOC_RING_SETUP, &rs))
			return 3;
		m->len += rs.mmap_len;
	}
	after = rmawin_test_read_long(CG "/memory.current");
	m->delta = after - before;
	for (i = 0; i < RING_EPS; i++)
		RMAWIN_TEST_TRY(4, rmawin_ep_close(ep[i]));
	return 0;
}

TEST(ring_memory_charged_to_memcg)
{
	struct memcg_ring *m = rmawin_test_shared(sizeof(*m));

	ASSERT_NE(NULL, m);
	/* the library's own ring stays off: each endpoint gets ours */
	rmawin_test_path(1);
	m->port = rmawin_test_ports(RING_EPS);
	if (!memcg_ready())
		SKIP(return, "no cgroup v2 memory controller in this kernel");
	ASSERT_EQ(0, mkdir(CG, 0755) && errno != EEXIST);
	EXPECT_EQ(1, rmawin_test_run_ranks_for(_metadata, 1, memcg_ring_rank, m, 60));
	EXPECT_LE(m->len - (long)MIB, m->delta) {
		TH_LOG("memory.current grew by %ld bytes for %ld bytes of rings", m->delta,
		       m->len);
	}
	rmdir(CG);
	rmawin_test_expect_no_leaks(_metadata);
}

/* The ring's poller works for its owner: it runs in the owner's cgroup. */
struct poller {
	int port;
	char where[64];		/* the cgroup of the last poller seen */
};

static int poller_rank(int rank, int n, void *arg)
{
	struct poller *pl = arg;
	char path[300], comm[32], want[64];
	struct rmawin_ep *ep;
	FILE *f;
	DIR *d;
	struct dirent *de;
	int found = 0;

	f = fopen(CG "/cgroup.procs", "w");
	snprintf(path, sizeof(path), "%d\n", getpid());
	if (!f || fputs(path, f) < 0 || fclose(f))
		return 1;
	if (rmawin_test_open(0, 1, pl->port, &ep) || !rmawin_ep_ring_active(ep))
		return 2;
	/* the poller of the newest endpoint is the highest numbered rmawin_poll */
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "rmawin_poll/", 12)) {
			snprintf(path, sizeof(path), "/proc/%s/cgroup", de->d_name);
			fclose(f);
			f = fopen(path, "r");
			if (f && fgets(want, sizeof(want), f) && strstr(want, "rmawin_test"))
				found++;
			snprintf(pl->where, sizeof(pl->where), "%s", want);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	rmawin_ep_close(ep);
	return found ? 0 : 3;
}

TEST(poller_in_its_owners_cgroup)
{
	struct poller *pl = rmawin_test_shared(sizeof(*pl));
	FILE *f;

	ASSERT_NE(NULL, pl);
	pl->port = rmawin_test_ports(1);
	if (getenv("RMAWIN_NO_RING"))
		SKIP(return, "no ring in this run (RMAWIN_NO_RING)");
	if (access("/sys/fs/cgroup/cgroup.controllers", R_OK))
		mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	f = fopen("/sys/fs/cgroup/cgroup.subtree_control", "w");
	if (!f || fputs("+memory\n", f) < 0 || fclose(f))
		SKIP(return, "no cgroup v2 in this kernel");
	ASSERT_EQ(0, mkdir(CG, 0755) && errno != EEXIST);
	EXPECT_EQ(1, rmawin_test_run_ranks_for(_metadata, 1, poller_rank, pl, 60))
		TH_LOG("the poller's cgroup: %s", pl->where);
	rmdir(CG);
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_HARNESS_MAIN
