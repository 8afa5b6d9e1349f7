// SPDX-License-Identifier: GPL-2.0
/*
 * Windows whose memory the module allocates (RMAWIN_WIN_ALLOCATE): the
 * mapping, its validation, data put by a peer seen through it, and pages
 * that outlive a freed window while still mapped.  A window on
 * transparent huge pages, which the module registers with 2 MiB pages.
 * And RMAWIN_IOC_WIN_INFO, every rank's window as each rank sees it.
 */
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <rmawin.h>

#include "rmawin_test.h"

/*
 * The tests between ranks, which go through the library, run on both of
 * its paths (path.ring.NAME and path.no_ring.NAME); those of the raw
 * ioctls on a singleton once.
 */
RMAWIN_TEST_PATHS(path);

static int join_singleton(int fd, int port)
{
	struct rmawin_addr a = { .family = AF_INET, .port = port };
	struct rmawin_group_join j = { .size = sizeof(j), .nranks = 1 };

	inet_pton(AF_INET, rmawin_test_ip(), a.addr);
	j.addrs_ptr = (uintptr_t)&a;
	return ioctl(fd, RMAWIN_IOC_GROUP_JOIN, &j);
}

static int win_alloc_raw(int fd, __u64 len, struct rmawin_win_create *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->flags = RMAWIN_WIN_ALLOCATE;
	c->length = len;
	c->disp_unit = 1;
	return ioctl(fd, RMAWIN_IOC_WIN_CREATE, c);
}

FIXTURE(single) {
	int fd;
};

FIXTURE_SETUP(single)
{
	self->fd = open(RMAWIN_DEV_PATH, O_RDWR);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, join_singleton(self->fd, rmawin_test_ports(1)));
}

FIXTURE_TEARDOWN(single)
{
	EXPECT_EQ(0, close(self->fd));
	EXPECT_EQ(0, rmawin_stat("windows"));
	EXPECT_EQ(0, rmawin_stat("pinned_pages"));
}

TEST_F(single, allocate_maps_zeroed_pages)
{
	struct rmawin_win_create c;
	unsigned char *p;
	size_t i, len = 3 * 4096 + 100;

	ASSERT_EQ(0, win_alloc_raw(self->fd, len, &c));
	ASSERT_NE(0, c.mmap_offset);
	EXPECT_EQ(4, rmawin_stat("pinned_pages"));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, c.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < len; i++)
		ASSERT_EQ(0, p[i]);
	memset(p, 0x5a, len);
	ASSERT_EQ(0, munmap(p, len));
	/* a second mapping sees what the first wrote: the same pages */
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, self->fd, c.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0x5a, p[len - 1]);
	ASSERT_EQ(0, munmap(p, len));
}

TEST_F(single, mmap_validation)
{
	struct rmawin_win_create c;
	void *p;

	ASSERT_EQ(0, win_alloc_raw(self->fd, 8192, &c));
	/* private mappings would copy on write: refused */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, self->fd, c.mmap_offset));
	EXPECT_EQ(EINVAL, errno);
	/* larger than the window */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, self->fd,
				   c.mmap_offset));
	EXPECT_EQ(EINVAL, errno);
	/* offsets that name no window */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
				   c.mmap_offset + 4096));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd,
				   c.mmap_offset + (1ULL << 32)));
	EXPECT_EQ(EINVAL, errno);
	/* a smaller mapping is fine */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, c.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, munmap(p, 4096));
}

TEST_F(single, create_validation)
{
	struct rmawin_win_create c;
	char buf[64];

	ASSERT_EQ(0, win_alloc_raw(self->fd, 100, &c) ? errno : 0);
	c.size = sizeof(c);
	c.flags = RMAWIN_WIN_ALLOCATE;
	c.base = (uintptr_t)buf;	/* no base with ALLOCATE */
	c.mmap_offset = 0;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_WIN_CREATE, &c));
	c.base = 0;
	c.flags = 0x80;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_WIN_CREATE, &c));
	c.flags = RMAWIN_WIN_ALLOCATE;
	c.mmap_offset = 1;	/* in: must be 0 */
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_WIN_CREATE, &c));
	c.mmap_offset = 0;
	c.disp_unit = 0;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_WIN_CREATE, &c));
	/* a zero-length allocated window has nothing to map */
	ASSERT_EQ(0, win_alloc_raw(self->fd, 0, &c));
	EXPECT_EQ(0, c.mmap_offset);
}

/* Freeing the window while it is mapped leaves the mapping valid. */
TEST_F(single, mapping_outlives_window)
{
	struct rmawin_win_free f = { .size = sizeof(f) };
	struct rmawin_win_create c;
	unsigned char *p;

	ASSERT_EQ(0, win_alloc_raw(self->fd, 4096, &c));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, c.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	p[10] = 42;
	f.win = c.win;
	ASSERT_EQ(0, ioctl(self->fd, RMAWIN_IOC_WIN_FREE, &f));
	EXPECT_EQ(0, rmawin_stat("windows"));
	EXPECT_EQ(0, rmawin_stat("pinned_pages"));
	EXPECT_EQ(42, p[10]);
	p[11] = 1;
	/* and the offset is gone */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, c.mmap_offset));
	EXPECT_EQ(0, munmap(p, 4096));
}

/* Two ranks put into each other's allocated windows through the library. */
static int alloc_rank(int rank, int port)
{
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	unsigned char src[20000], *base;
	size_t i, len = sizeof(src);
	int ret;

	if (rmawin_test_open_on(rmawin_test_ip(), NULL, rank, 2, port, 0, &ep))
		return 1;
	if (rmawin_win_allocate(ep, len + 64, 1, 0, (void **)&base, &win))
		return 2;
	for (i = 0; i < len; i++)
		src[i] = (unsigned char)(i * 7 + rank + 1);
	ret = rmawin_fence(win, 0);
	ret = ret ?: rmawin_put(win, src, len, 1 - rank, 32);
	ret = ret ?: rmawin_fence(win, 0);
	if (ret)
		return 3;
	for (i = 0; i < len; i++)
		if (base[32 + i] != (unsigned char)(i * 7 + (1 - rank) + 1))
			return 4;
	for (i = 0; i < 32; i++)
		if (base[i] || base[32 + len + i])
			return 5;
	if (rmawin_win_free(win) || rmawin_ep_close(ep))
		return 6;
	return 0;
}

TEST_F(path, allocate_put_between_ranks)
{
	int i, port = rmawin_test_ports(2);
	pid_t pid[2];

	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (!pid[i])
			_exit(alloc_rank(i, port));
	}
	for (i = 0; i < 2; i++)
		rmawin_test_wait_rank(_metadata, pid[i], i);
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * RMAWIN_IOC_WIN_INFO on three ranks whose windows differ in length and
 * unit (rank 1's is empty): each sees every rank's; then every field's
 * errno.
 */
static int info_rank(int rank, int n, void *arg)
{
	struct rmawin_win_create c = { .size = sizeof(c) };
	struct rmawin_win_rank r[4], *ro;
	struct rmawin_win_info w = { .size = sizeof(w), .nranks = n,
				     .ranks_ptr = (uintptr_t)r };
	static unsigned char mem[8192];
	struct rmawin_ep *ep;
	int fd, i, bad = 0;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	fd = rmawin_ep_fd(ep);
	c.base = (uintptr_t)mem;
	c.length = rank == 1 ? 0 : 1000 * (rank + 1) + rank;
	c.disp_unit = rank + 1;
	if (ioctl(fd, RMAWIN_IOC_WIN_CREATE, &c)) {
		RMAWIN_TEST_MSG("WIN_CREATE: %s", strerror(errno));
		return 2;
	}
	w.win = c.win;
	memset(r, 0xff, sizeof(r));
	if (ioctl(fd, RMAWIN_IOC_WIN_INFO, &w)) {
		RMAWIN_TEST_MSG("WIN_INFO: %s", strerror(errno));
		return 3;
	}
	for (i = 0; i < n; i++) {
		if (r[i].length != (i == 1 ? 0 : 1000U * (i + 1) + i) ||
		    r[i].disp_unit != (unsigned int)i + 1 || r[i].reserved) {
			RMAWIN_TEST_MSG("rank %d's window: length %llu unit %u reserved %u", i,
					(unsigned long long)r[i].length, r[i].disp_unit,
					r[i].reserved);
			bad = 1;
		}
	}
	if (r[n].length != ~0ULL) {
		RMAWIN_TEST_MSG("WIN_INFO wrote past the group's %d entries", n);
		bad = 1;
	}
#define INFO_ERR(err, field, value)						\
	do {									\
		struct rmawin_win_info x = w;					\
		x.field = (value);						\
		if (!ioctl(fd, RMAWIN_IOC_WIN_INFO, &x) || errno != (err)) {	\
			RMAWIN_TEST_MSG("WIN_INFO with " #field " = %llu: %s, want %s", \
					(unsigned long long)(value), strerror(errno), \
					strerror(err));				\
			bad = 1;						\
		}								\
	} while (0)
	INFO_ERR(EINVAL, flags, 1);
	INFO_ERR(EINVAL, flags, 0x80000000U);
	INFO_ERR(EINVAL, nranks, 0);
	INFO_ERR(EINVAL, nranks, n - 1);
	INFO_ERR(EINVAL, nranks, n + 1);
	INFO_ERR(ENOENT, win, c.win + 1000);
	INFO_ERR(EFAULT, ranks_ptr, 0);
	INFO_ERR(EFAULT, ranks_ptr, ~0ULL - 8);
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		return 4;
	INFO_ERR(EFAULT, ranks_ptr, (uintptr_t)ro);
	munmap(ro, 4096);
	RMAWIN_TEST_TRY(5, rmawin_ep_close(ep));
	return bad ? 6 : 0;
}

TEST(win_info_every_rank_and_field)
{
	int port = rmawin_test_ports(3);

	EXPECT_EQ(3, rmawin_test_run_ranks_for(_metadata, 3, info_rank, &port, 60));
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * Ranks that close their endpoints as soon as their window exists, without
 * a barrier, while a busy child takes a CPU: a rank that sent its
 * descriptor and left must not fail the creation of the others, which may
 * still wait for a third rank's descriptor.  (Any peer's departure failed
 * every creation still waiting, with ECONNRESET, until the wait looked at
 * the peers whose descriptors were missing only.)
 */
#define LEAVE_RANKS	4
#define LEAVE_ROUNDS	8

static int leave_rank(int rank, int n, void *arg)
{
	static uint64_t mem[64];
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int r, ret;

	for (r = 0; r < LEAVE_ROUNDS; r++) {
		RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg + r * n, &ep));
		ret = rmawin_win_create(ep, mem, sizeof(mem), 8, 0, &win);
		if (ret) {
			RMAWIN_TEST_MSG("round %d: rmawin_win_create: %s", r, strerror(-ret));
			return 2;
		}
		RMAWIN_TEST_TRY(3, rmawin_ep_close(ep));
	}
	return 0;
}

/* once: window creation is the same on both paths */
FIXTURE(leave) {};
FIXTURE_SETUP(leave) {}
FIXTURE_TEARDOWN(leave) {}

TEST_F_TIMEOUT(leave, a_rank_that_leaves_after_creating_fails_nobody, 120)
{
	int port = rmawin_test_ports(LEAVE_RANKS * LEAVE_ROUNDS);
	pid_t hog = fork();

	ASSERT_LE(0, hog);
	if (!hog)
		for (;;)
			;
	EXPECT_EQ(LEAVE_RANKS, rmawin_test_run_ranks_for(_metadata, LEAVE_RANKS, leave_rank,
							 &port, 100));
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
	rmawin_test_expect_no_leaks(_metadata);
}

#define HUGE	(2UL << 20)
#define HUGE_LEN	(6UL << 20)
/* Where the huge-page window starts in its first 2 MiB page: not aligned. */
#define HUGE_SKEW	(4096 + 3)

/* Kilobytes of this process's memory in transparent huge pages. */
static long anon_huge_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static unsigned char huge_byte(size_t i, int rank)
{
	return (unsigned char)(i * 13 + (i >> 12) + rank + 1);
}

/*
 * One rank: a 6 MiB window 4 KiB + 3 bytes into 2 MiB-aligned memory that
 * asked for huge pages; each rank puts 6 MiB - 2 KiB, crossing every
 * 2 MiB boundary, into the other's window and gets 64 KiB across the
 * first boundary back.  Tells the parent through @fd whether its window
 * was on huge pages, then waits for its word to free.
 */
static int huge_rank(int rank, int port, int fd, int go)
{
	size_t i, len = HUGE_LEN - 2048, back = 64 * 1024, gdisp = HUGE - HUGE_SKEW - 1000;
	unsigned char *raw, *mem, *base, *src, *dst;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int ret;
	char c;

	raw = mmap(NULL, HUGE_LEN + 2 * HUGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = malloc(len);
	dst = malloc(back);
	if (raw == MAP_FAILED || !src || !dst)
		return 1;
	mem = (unsigned char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	madvise(mem, HUGE_LEN + HUGE, MADV_HUGEPAGE);
	memset(mem, 0, HUGE_LEN + HUGE);
	base = mem + HUGE_SKEW;
	for (i = 0; i < len; i++)
		src[i] = huge_byte(i, rank);
	if (rmawin_test_open_on(rmawin_test_ip(), NULL, rank, 2, port, 0, &ep))
		return 2;
	if (rmawin_win_create(ep, base, HUGE_LEN, 1, 0, &win))
		return 3;
	ret = rmawin_fence(win, 0);
	ret = ret ?: rmawin_put(win, src, len, 1 - rank, 1024);
	ret = ret ?: rmawin_fence(win, 0);
	if (ret)
		return 4;
	for (i = 0; i < len; i++)
		if (base[1024 + i] != huge_byte(i, 1 - rank))
			return 5;
	if (base[0] || base[1023] || base[1024 + len])
		return 6;
	/* what the peer put into its own window crossed its first boundary here */
	ret = rmawin_get(win, dst, back, 1 - rank, gdisp);
	ret = ret ?: rmawin_fence(win, 0);
	if (ret)
		return 7;
	for (i = 0; i < back; i++)
		if (dst[i] != huge_byte(gdisp - 1024 + i, rank))
			return 8;
	c = anon_huge_kb() >= (long)(HUGE_LEN >> 10) ? 'h' : 'p';
	if (write(fd, &c, 1) != 1 || read(go, &c, 1) != 1)
		return 9;
	if (rmawin_win_free(win) || rmawin_ep_close(ep))
		return 10;
	return 0;
}

TEST_F(path, huge_page_window_between_ranks)
{
	int up[2], go[2], i, port = rmawin_test_ports(2);
	long mrs;
	char c[2];
	pid_t pid[2];

	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (!pid[i])
			_exit(huge_rank(i, port, up[1], go[0]));
	}
	/* both windows exist and their data checked out: count the regions */
	if (read(up[0], &c[0], 1) == 1 && read(up[0], &c[1], 1) == 1) {
		mrs = rmawin_stat("mrs");
		if (c[0] == 'h' && c[1] == 'h') {
			/*
			 * one region each, not four of 512 small pages; and
			 * each rank's inbox and outbox
			 */
			EXPECT_EQ(2 + 2 * 2, mrs);
		} else {
			TH_LOG("no transparent huge pages here: %ld regions of small pages", mrs);
		}
	}
	ASSERT_EQ(2, write(go[1], "gg", 2));
	for (i = 0; i < 2; i++)
		rmawin_test_wait_rank(_metadata, pid[i], i);
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_HARNESS_MAIN
