// SPDX-License-Identifier: GPL-2.0
/*
 * Faults in the memory of put and get: origin and window memory that is
 * unmapped, read-only or over RLIMIT_MEMLOCK (refused at the call, nothing
 * sent); origin buffers unmapped, remapped, discarded or forked between
 * transfers (the target must see the new contents, never stale pages).
 * Whatever happens, the others fail cleanly, never hang, and every page,
 * MR and queue pair is released.  Ranks and devices lost in the middle of
 * an epoch: rma_loss_test.c.
 *
 * Every test runs on both of the library's paths: variants ring and
 * no_ring of its fixture.
 */
#include <grp.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "rma_fault_test.h"

/* An address range with nothing mapped: mapped, then unmapped. */
static void *map_hole(size_t len)
{
	void *p = map_rw(len);

	if (p)
		munmap(p, len);
	return p;
}

static int rma_raw(int fd, const struct rmawin_op_desc *ops, __u32 nops)
{
	struct rmawin_rma r = {
		.size = sizeof(r), .ops_ptr = (uintptr_t)ops, .nops = nops,
		.op_size = sizeof(*ops),
	};

	return ioctl(fd, RMAWIN_IOC_RMA, &r) ? -errno : 0;
}

static int put_raw(int fd, __u32 win, int target, const void *origin, size_t len, size_t disp)
{
	struct rmawin_op_desc d = rmawin_test_op(RMAWIN_OP_PUT, win, target, origin, len, disp);

	return rma_raw(fd, &d, 1);
}

static int get_raw(int fd, __u32 win, int target, void *origin, size_t len, size_t disp)
{
	struct rmawin_op_desc d = rmawin_test_op(RMAWIN_OP_GET, win, target, origin, len, disp);

	return rma_raw(fd, &d, 1);
}

static int fence_raw(int fd, __u32 win)
{
	struct rmawin_fence f = { .size = sizeof(f), .win = win };

	return ioctl(fd, RMAWIN_IOC_FENCE, &f) ? -errno : 0;
}

/* ---- a pair: the test is rank 0, a child rank 1 --------------------------- */

/*
 * The fixture pair: the test process is rank 0 and issues the faulty
 * operations itself; rank 1 only exposes a window (PEER_LEN bytes of
 * PEER_FILL, unit 1), takes part in the fences, and hands a snapshot of its
 * window after the epoch to rank 0.  The setup opens the epoch (fence F1);
 * the test closes it with pair_end_epoch() (F2, F3); the teardown frees
 * the window, closes the endpoint, waits for rank 1 and checks that
 * nothing leaked.
 */
#define PEER_LEN	(2 * MIB)
#define PEER_FILL	0x11
#define OWN_LEN		(64 * KIB)
#define OWN_FILL	0x22

struct peer_shared {
	int port;
	long changed;			/* first byte of the window not PEER_FILL, or -1 */
	unsigned char snap[PEER_LEN];	/* rank 1's window after the epoch */
};

static int peer_rank(int rank, int n, void *arg)
{
	struct peer_shared *sh = arg;
	unsigned char *buf = map_rw(PEER_LEN);
	struct rmawin_win *win;
	struct rmawin_ep *ep;

	if (!buf)
		return 1;
	memset(buf, PEER_FILL, PEER_LEN);
	RMAWIN_TEST_TRY(2, rmawin_test_open(rank, n, sh->port, &ep));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, buf, PEER_LEN, 1, 0, &win));
	RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));	/* F1: the epoch opens */
	RMAWIN_TEST_TRY(5, rmawin_fence(win, 0));	/* F2: it is over */
	memcpy(sh->snap, buf, PEER_LEN);
	sh->changed = rmawin_test_check_fill(buf, PEER_LEN, PEER_FILL);
	RMAWIN_TEST_TRY(6, rmawin_fence(win, 0));	/* F3: rank 0 has the snapshot */
	RMAWIN_TEST_TRY(7, rmawin_win_free(win));
	RMAWIN_TEST_TRY(8, rmawin_ep_close(ep));
	return 0;
}

FIXTURE(pair) {
	struct rmawin_ep *ep;
	int fd;
	__u32 win;		/* rank 0's window: OWN_LEN bytes of OWN_FILL, unit 1 */
	unsigned char *own;
	struct peer_shared *sh;
	pid_t child;
	int f2;			/* what rank 0's fence F2 returned */
	unsigned char *buf;	/* the test's buffer (pair_buf()), or NULL */
	size_t buf_len;		/* how much of it the teardown unmaps */
};
FIXTURE_VARIANT(pair) {
	int no_ring;
};
RMAWIN_TEST_PATH_VARIANT(pair, ring, 0);
RMAWIN_TEST_PATH_VARIANT(pair, no_ring, 1);

FIXTURE_SETUP(pair)
{
	struct rmawin_win_create c = { .size = sizeof(c), .length = OWN_LEN, .disp_unit = 1 };

	rmawin_test_path(variant->no_ring);
	self->sh = rmawin_test_shared(sizeof(*self->sh));
	ASSERT_NE(NULL, self->sh);
	self->sh->port = rmawin_test_ports(2);
	self->sh->changed = -2;
	self->child = rmawin_test_fork_rank(1, 2, peer_rank, self->sh);
	ASSERT_LT(0, self->child);
	rmawin_test_rank = 0;
	ASSERT_EQ(0, rmawin_test_open(0, 2, self->sh->port, &self->ep));
	self->fd = rmawin_ep_fd(self->ep);
	self->own = map_rw(OWN_LEN);
	ASSERT_NE(NULL, self->own);
	memset(self->own, OWN_FILL, OWN_LEN);
	c.base = (uintptr_t)self->own;
	ASSERT_EQ(0, ioctl(self->fd, RMAWIN_IOC_WIN_CREATE, &c));
	self->win = c.win;
	ASSERT_EQ(0, fence_raw(self->fd, self->win));	/* F1 */
}

FIXTURE_TEARDOWN(pair)
{
	struct rmawin_win_free f = { .size = sizeof(f), .win = self->win };

	if (_metadata->aborted)	/* in the epoch: rank 1 goes when this process does */
		return;
	EXPECT_EQ(0, ioctl(self->fd, RMAWIN_IOC_WIN_FREE, &f)) TH_LOG("WIN_FREE: %s",
								     strerror(errno));
	EXPECT_EQ(0, rmawin_ep_close(self->ep));
	rmawin_test_wait_rank(_metadata, self->child, 1);
	munmap(self->own, OWN_LEN);
	munmap(self->sh, sizeof(*self->sh));
	rmawin_test_expect_no_leaks(_metadata);
	if (self->buf)
		munmap(self->buf, self->buf_len);
}

/*
 * A buffer of @len bytes for the test's operations, left mapped until the
 * teardown has closed the endpoint and checked that nothing leaked.
 */
static unsigned char *pair_buf(FIXTURE_DATA(pair) *p, size_t len)
{
	p->buf = map_rw(len);
	p->buf_len = len;
	return p->buf;
}

/* Close the epoch (F2, whose result is kept) and fetch rank 1's snapshot (F3). */
static void pair_end_epoch(struct __test_metadata *_metadata, FIXTURE_DATA(pair) *p)
{
	p->f2 = fence_raw(p->fd, p->win);
	EXPECT_EQ(0, fence_raw(p->fd, p->win)) TH_LOG("fence F3 failed");
}

/* Nothing reached rank 1's window, nor rank 0's own. */
static void expect_untouched(struct __test_metadata *_metadata, FIXTURE_DATA(pair) *p,
			     const char *what)
{
	long own = rmawin_test_check_fill(p->own, OWN_LEN, OWN_FILL);

	EXPECT_EQ(-1, p->sh->changed) {
		TH_LOG("%s: data reached rank 1's window anyway (byte %ld is 0x%02x, was 0x%02x)",
		       what, p->sh->changed,
		       p->sh->changed >= 0 ? p->sh->snap[p->sh->changed] : 0, PEER_FILL);
	}
	EXPECT_EQ(-1, own) {
		TH_LOG("%s: rank 0's own window changed anyway (byte %ld is 0x%02x, was 0x%02x)",
		       what, own, own >= 0 ? p->own[own] : 0, OWN_FILL);
	}
}

#define EXPECT_RET(want, call, fmt, ...) do {					\
		int __r = (call);						\
		EXPECT_EQ((want), __r) {					\
			TH_LOG(fmt ": %d (%s), want %d (%s)", ##__VA_ARGS__,	\
			       __r, strerror(-__r), (want), strerror(-(want)));	\
		}								\
	} while (0)

/*
 * Holes are made right before use: a range unmapped earlier is where the
 * next mmap() likely lands.
 */

/* A put from memory that is not mapped fails at the call, and sends nothing. */
TEST_F(pair, put_from_unmapped_origin_efault)
{
	unsigned char *hole;

	hole = map_hole(4 * MIB);
	ASSERT_NE(NULL, hole);
	EXPECT_RET(-EFAULT, put_raw(self->fd, self->win, 1, hole, 100, 0),
		   "100-byte put (bounced)");
	EXPECT_RET(-EFAULT, put_raw(self->fd, self->win, 1, hole + 8192, 65536, 4096),
		   "64 KiB put (pinned)");
	EXPECT_RET(-EFAULT, put_raw(self->fd, self->win, 0, hole, 100, 0),
		   "100-byte put to itself");
	pair_end_epoch(_metadata, self);
	TH_LOG("(the fence after the refused puts returned %d)", self->f2);
	expect_untouched(_metadata, self, "refused puts");
}

/*
 * A large put from unmapped memory into its own window (a local copy):
 * refused, and the window keeps what it had.
 */
TEST_F(pair, put_to_self_from_unmapped_large_origin_efault)
{
	unsigned char *hole;
	long bad;

	hole = map_hole(4 * MIB);
	ASSERT_NE(NULL, hole);
	EXPECT_RET(-EFAULT, put_raw(self->fd, self->win, 0, hole, 20000, 100),
		   "20000-byte put to itself");
	bad = rmawin_test_check_fill(self->own, OWN_LEN, OWN_FILL);
	EXPECT_EQ(-1, bad) {
		TH_LOG("the refused put changed its own window: byte %ld is 0x%02x, was 0x%02x "
		       "(bytes 100..%d are the target range)", bad, self->own[bad], OWN_FILL,
		       100 + 20000);
	}
	pair_end_epoch(_metadata, self);
}

/* A get into memory that is not mapped fails at the call. */
TEST_F(pair, get_into_unmapped_origin_efault)
{
	unsigned char *hole;

	hole = map_hole(4 * MIB);
	ASSERT_NE(NULL, hole);
	EXPECT_RET(-EFAULT, get_raw(self->fd, self->win, 1, hole, 100, 0),
		   "100-byte get (bounced)");
	EXPECT_RET(-EFAULT, get_raw(self->fd, self->win, 1, hole + 8192, 65536, 4096),
		   "64 KiB get (pinned)");
	EXPECT_RET(-EFAULT, get_raw(self->fd, self->win, 0, hole, 100, 0),
		   "100-byte get from itself");
	EXPECT_RET(-EFAULT, get_raw(self->fd, self->win, 0, hole, 20000, 0),
		   "20000-byte get from itself");
	pair_end_epoch(_metadata, self);
	TH_LOG("(the fence after the refused gets returned %d)", self->f2);
	expect_untouched(_metadata, self, "refused gets");
}

/* A get into read-only memory fails at the call; the memory stays as it was. */
TEST_F(pair, get_into_readonly_origin_efault)
{
	unsigned char *ro = pair_buf(self, MIB);

	ASSERT_NE(NULL, ro);
	memset(ro, 0x5c, MIB);
	ASSERT_EQ(0, mprotect(ro, MIB, PROT_READ));
	EXPECT_RET(-EFAULT, get_raw(self->fd, self->win, 1, ro, 100, 0), "100-byte get (bounced)");
	EXPECT_RET(-EFAULT, get_raw(self->fd, self->win, 1, ro + 8192, 65536, 4096),
		   "64 KiB get (pinned)");
	EXPECT_RET(-EFAULT, get_raw(self->fd, self->win, 0, ro, 100, 0),
		   "100-byte get from itself");
	EXPECT_RET(-EFAULT, get_raw(self->fd, self->win, 0, ro, 20000, 0),
		   "20000-byte get from itself");
	pair_end_epoch(_metadata, self);
	TH_LOG("(the fence after the refused gets returned %d)", self->f2);
	EXPECT_EQ(-1, rmawin_test_check_fill(ro, MIB, 0x5c)) TH_LOG("read-only memory was written");
}

/* A put only reads its origin: read-only memory is fine, small or large. */
TEST_F(pair, put_from_readonly_origin_works)
{
	unsigned char *ro = pair_buf(self, MIB);

	ASSERT_NE(NULL, ro);
	fill(ro, MIB, 7);
	ASSERT_EQ(0, mprotect(ro, MIB, PROT_READ));
	EXPECT_RET(0, put_raw(self->fd, self->win, 1, ro, 100, 0), "100-byte put (bounced)");
	EXPECT_RET(0, put_raw(self->fd, self->win, 1, ro, 300 * KIB, 4096), "300 KiB put (pinned)");
	EXPECT_RET(0, put_raw(self->fd, self->win, 0, ro, 20000, 0), "20000-byte put to itself");
	pair_end_epoch(_metadata, self);
	EXPECT_EQ(0, self->f2);
	EXPECT_EQ(-1, check(self->sh->snap, 100, 7)) TH_LOG("the 100-byte put did not land");
	EXPECT_EQ(-1, check(self->sh->snap + 4096, 300 * KIB, 7))
		TH_LOG("the 300 KiB put did not land");
	EXPECT_EQ(-1, check(self->own, 20000, 7)) TH_LOG("the put to itself did not land");
}

/*
 * A large origin whose first MiB is mapped and whose rest is not: the put
 * fails, and, as every refused operation, sends nothing.
 */
TEST_F(pair, put_partially_unmapped_large_origin_sends_nothing)
{
	unsigned char *buf = pair_buf(self, 2 * MIB);

	ASSERT_NE(NULL, buf);
	fill(buf, MIB, 9);
	ASSERT_EQ(0, munmap(buf + MIB, MIB));
	self->buf_len = MIB;
	EXPECT_RET(-EFAULT, put_raw(self->fd, self->win, 1, buf, MIB + MIB / 2, 0),
		   "1.5 MiB put, the last 0.5 MiB unmapped");
	pair_end_epoch(_metadata, self);
	TH_LOG("(the fence after the refused put returned %d)", self->f2);
	expect_untouched(_metadata, self, "1.5 MiB put whose last 0.5 MiB is unmapped");
}

/* The same into its own window: a local copy that fails half way must not be half done. */
TEST_F(pair, put_to_self_partially_unmapped_origin_copies_nothing)
{
	unsigned char *buf = pair_buf(self, 3 * 4096);

	ASSERT_NE(NULL, buf);
	fill(buf, 2 * 4096, 9);
	ASSERT_EQ(0, munmap(buf + 2 * 4096, 4096));
	self->buf_len = 2 * 4096;
	EXPECT_RET(-EFAULT, put_raw(self->fd, self->win, 0, buf, 3 * 4096, 0),
		   "12 KiB put to itself, the last page unmapped");
	pair_end_epoch(_metadata, self);
	TH_LOG("(the fence after the refused put returned %d)", self->f2);
	expect_untouched(_metadata, self, "12 KiB put to itself whose last page is unmapped");
}

/*
 * A batch whose last operation is a large put from unmapped memory: every
 * operation is checked before any is issued, so the good ones before it
 * (to the peer and to itself) must not land either.
 */
TEST_F(pair, batch_with_unmapped_large_origin_issues_none)
{
	unsigned char *hole, good[100];
	struct rmawin_op_desc ops[3];

	memset(good, 0x77, sizeof(good));
	hole = map_hole(MIB);
	ASSERT_NE(NULL, hole);
	ops[0] = rmawin_test_op(RMAWIN_OP_PUT, self->win, 1, good, sizeof(good), 0);
	ops[1] = rmawin_test_op(RMAWIN_OP_PUT, self->win, 0, good, sizeof(good), 0);
	ops[2] = rmawin_test_op(RMAWIN_OP_PUT, self->win, 1, hole, 65536, 8192);
	EXPECT_RET(-EFAULT, rma_raw(self->fd, ops, 3), "batch ending with a 64 KiB unmapped put");
	pair_end_epoch(_metadata, self);
	expect_untouched(_metadata, self, "batch ending with a 64 KiB put from unmapped memory");
}

/*
 * An operation refused at the call was never issued: the error is the
 * call's, and the fence that closes the epoch has nothing to report.
 */
TEST_F(pair, refused_large_put_does_not_fail_the_fence)
{
	unsigned char *hole;

	hole = map_hole(MIB);
	ASSERT_NE(NULL, hole);
	EXPECT_RET(-EFAULT, put_raw(self->fd, self->win, 1, hole, 65536, 0), "64 KiB unmapped put");
	pair_end_epoch(_metadata, self);
	EXPECT_EQ(0, self->f2) {
		TH_LOG("the fence reported the refused put's error again: %d (%s)", self->f2,
		       strerror(-self->f2));
	}
}

/*
 * Origin buffers unmapped while their operations are in flight (which MPI
 * forbids): a large put's pinned pages, a small get's bounce copy.  The
 * fence may report -EFAULT, but nothing may crash, hang or leak.
 */
TEST_F(pair, origin_unmapped_before_fence_no_leak)
{
	unsigned char *a = map_rw(MIB), *b = map_rw(4096), *c = map_rw(MIB);

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, c);
	fill(a, MIB, 3);
	EXPECT_RET(0, put_raw(self->fd, self->win, 1, a, MIB, 0), "1 MiB put");
	EXPECT_RET(0, get_raw(self->fd, self->win, 1, b, 100, 0), "100-byte get");
	EXPECT_RET(0, get_raw(self->fd, self->win, 1, c, MIB, MIB), "1 MiB get");
	ASSERT_EQ(0, munmap(a, MIB));
	ASSERT_EQ(0, munmap(b, 4096));
	ASSERT_EQ(0, munmap(c, MIB));
	pair_end_epoch(_metadata, self);
	EXPECT_TRUE(self->f2 == 0 || self->f2 == -EFAULT) TH_LOG("fence: %d (%s)", self->f2,
								  strerror(-self->f2));
	TH_LOG("(the fence after unmapping the origins returned %d)", self->f2);
}

/* ---- window memory ------------------------------------------------------- */

static int win_create_raw(int fd, void *base, size_t len)
{
	struct rmawin_win_create c = {
		.size = sizeof(c), .base = (uintptr_t)base, .length = len, .disp_unit = 1,
	};

	return ioctl(fd, RMAWIN_IOC_WIN_CREATE, &c) ? -errno : 0;
}

/* Windows over memory that is not mapped writable: -EFAULT, nothing left pinned. */
TEST_F(path, win_create_bad_memory_efault)
{
	unsigned char *hole, *ro = map_rw(MIB), *none = map_rw(MIB);
	unsigned char *half = map_rw(2 * MIB);
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int fd;

	ASSERT_NE(NULL, ro);
	ASSERT_NE(NULL, none);
	ASSERT_NE(NULL, half);
	memset(ro, 1, MIB);
	ASSERT_EQ(0, mprotect(ro, MIB, PROT_READ));
	ASSERT_EQ(0, mprotect(none, MIB, PROT_NONE));
	memset(half, 1, MIB);
	ASSERT_EQ(0, munmap(half + MIB, MIB));
	ASSERT_EQ(0, rmawin_test_open(0, 1, rmawin_test_ports(1), &ep));
	fd = rmawin_ep_fd(ep);
	hole = map_hole(MIB);
	ASSERT_NE(NULL, hole);
	EXPECT_RET(-EFAULT, rmawin_win_create(ep, hole, MIB, 1, 0, &win), "unmapped");
	EXPECT_RET(-EFAULT, rmawin_win_create(ep, ro, MIB, 1, 0, &win), "read-only");
	EXPECT_RET(-EFAULT, rmawin_win_create(ep, none, MIB, 1, 0, &win), "PROT_NONE");
	EXPECT_RET(-EFAULT, rmawin_win_create(ep, half, 2 * MIB, 1, 0, &win),
		   "first MiB mapped, second not");
	EXPECT_RET(-EFAULT, win_create_raw(fd, (void *)0xffff888000000000UL, 4096),
		   "kernel address");
	EXPECT_RET(-EFAULT, win_create_raw(fd, (void *)(uintptr_t)-4096, 8192),
		   "range wrapping around");
	EXPECT_EQ(0, rmawin_stat("windows"));
	EXPECT_EQ(0, rmawin_stat("pinned_pages"));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * One rank's window creation fails (its memory is not mapped): it gets
 * -EFAULT, the others an error too, and nobody hangs; then the group is
 * still good for the next window.
 */
struct one_fails {
	int port;
	int ret[2];
};

static int one_fails_rank(int rank, int n, void *arg)
{
	struct one_fails *of = arg;
	unsigned char *mem = map_rw(MIB), *src = map_rw(65536);
	struct rmawin_win *win;
	struct rmawin_ep *ep;

	if (!mem || !src)
		return 1;
	memset(mem, 0, MIB);
	RMAWIN_TEST_TRY(2, rmawin_test_open(rank, n, of->port, &ep));
	if (rank == 0)
		of->ret[rank] = rmawin_win_create(ep, map_hole(MIB), MIB, 1, 0, &win);
	else
		of->ret[rank] = rmawin_win_create(ep, mem, MIB, 1, 0, &win);
	if (!of->ret[rank])
		RMAWIN_TEST_TRY(3, rmawin_win_free(win));
	/* the next window works everywhere */
	RMAWIN_TEST_TRY(4, rmawin_win_create(ep, mem, MIB, 1, 0, &win));
	fill(src, 65536, rank + 20);
	RMAWIN_TEST_TRY(5, rmawin_fence(win, 0));
	RMAWIN_TEST_TRY(6, rmawin_put(win, src, 65536, 1 - rank, 1000));
	RMAWIN_TEST_TRY(7, rmawin_fence(win, 0));
	if (check(mem + 1000, 65536, 1 - rank + 20) >= 0) {
		RMAWIN_TEST_MSG("the window after the failed one does not work");
		return 8;
	}
	RMAWIN_TEST_TRY(9, rmawin_win_free(win));
	RMAWIN_TEST_TRY(10, rmawin_ep_close(ep));
	return 0;
}

TEST_F(path, win_create_fails_on_one_rank)
{
	struct one_fails *of = rmawin_test_shared(sizeof(*of));

	ASSERT_NE(NULL, of);
	of->port = rmawin_test_ports(2);
	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, one_fails_rank, of, 25));
	EXPECT_EQ(-EFAULT, of->ret[0]) TH_LOG("rank 0 (unmapped memory): %d", of->ret[0]);
	EXPECT_NE(0, of->ret[1]) TH_LOG("rank 1 created a window rank 0 could not");
	TH_LOG("(rank 1, whose memory was fine, got %d: %s)", of->ret[1],
	       rmawin_strerror(of->ret[1]));
	rmawin_test_expect_no_leaks(_metadata);
	munmap(of, sizeof(*of));
}

/*
 * An unprivileged process (no CAP_IPC_LOCK) with RLIMIT_MEMLOCK at 64 KiB:
 * a 1 MiB window, created or allocated, is -ENOMEM and pins nothing; a
 * 16 KiB one fits.
 */
struct memlock {
	int port;
	int stage, go;
	int create_ret, alloc_ret, small_ret, uid;
};

static int memlock_child(struct memlock *m)
{
	struct rlimit rl = { .rlim_cur = 64 * KIB, .rlim_max = 64 * KIB };
	unsigned char *mem = map_rw(MIB);
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	void *base;
	int ret;

	rmawin_test_rank = 0;
	if (!mem || setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) || setgid(65534) ||
	    setuid(65534))
		return 1;
	m->uid = geteuid();
	memset(mem, 1, MIB);
	RMAWIN_TEST_TRY(2, rmawin_test_open(0, 1, m->port, &ep));
	m->create_ret = rmawin_win_create(ep, mem, MIB, 1, 0, &win);
	m->alloc_ret = rmawin_win_allocate(ep, MIB, 1, 0, &base, &win);
	__atomic_store_n(&m->stage, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&m->go, __ATOMIC_SEQ_CST))
		usleep(10000);
	ret = m->small_ret = rmawin_win_create(ep, mem, 16 * KIB, 1, 0, &win);
	if (!ret)
		RMAWIN_TEST_TRY(3, rmawin_win_free(win));
	RMAWIN_TEST_TRY(4, rmawin_ep_close(ep));
	return 0;
}

TEST_F(path, win_over_memlock_limit_enomem)
{
	struct memlock *m = rmawin_test_shared(sizeof(*m));
	double end = rmawin_test_now() + 20;
	pid_t pid;
	int st;

	ASSERT_NE(NULL, m);
	m->port = rmawin_test_ports(1);
	if (geteuid())
		SKIP(return, "dropping privileges needs root");
	fflush(stderr);
	pid = fork();
	if (!pid)
		_exit(memlock_child(m));
	while (!__atomic_load_n(&m->stage, __ATOMIC_SEQ_CST) && rmawin_test_now() < end &&
	       waitpid(pid, &st, WNOHANG) == 0)
		usleep(10000);
	ASSERT_EQ(1, m->stage) TH_LOG("the unprivileged child did not get to create windows");
	EXPECT_EQ(65534, m->uid);
	EXPECT_EQ(-ENOMEM, m->create_ret) TH_LOG("1 MiB window over a 64 KiB limit: %d (%s)",
						 m->create_ret, strerror(-m->create_ret));
	EXPECT_EQ(-ENOMEM, m->alloc_ret) TH_LOG("1 MiB allocated window over a 64 KiB limit: "
						"%d (%s)", m->alloc_ret, strerror(-m->alloc_ret));
	/* the refused windows left nothing behind, while the process lives on */
	EXPECT_EQ(0, rmawin_stat("pinned_pages"));
	EXPECT_EQ(0, rmawin_stat("windows"));
	__atomic_store_n(&m->go, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st)) TH_LOG("child status 0x%x", st);
	EXPECT_EQ(0, m->small_ret) TH_LOG("16 KiB window under the limit: %d (%s)",
					  m->small_ret, strerror(-m->small_ret));
	rmawin_test_expect_no_leaks(_metadata);
	munmap(m, sizeof(*m));
}

/* ---- origin buffers changing between transfers ------------------------- */

enum remap_mode {
	REMAP_FIXED,		/* munmap, mmap MAP_FIXED at the same address */
	REMAP_ANYWHERE,		/* munmap, mmap wherever the kernel likes */
	REMAP_DONTNEED,		/* madvise(MADV_DONTNEED): fresh zero pages */
	REMAP_FORK,		/* fork (the child exits at once), then write in place */
	REMAP_GET_FIXED,	/* like FIXED, for the destination of a get */
};

struct remap {
	int port;
	enum remap_mode mode;
	size_t len;
	int rounds;
	int same_addr;		/* rounds where the new buffer had the old address */
};

/*
 * Rank 1's buffer for the next round in *@bufp: a new mapping the first
 * round, afterwards the last one changed as @rm->mode says.  Return: 0, or
 * the step that failed.
 */
static int remap_buf(struct remap *rm, unsigned char **bufp)
{
	unsigned char *buf = *bufp, *nbuf;
	pid_t pid;

	if (!buf) {
		buf = map_rw(rm->len);
		if (!buf)
			return 5;
		*bufp = buf;
		return 0;
	}
	switch (rm->mode) {
	case REMAP_FIXED:
	case REMAP_GET_FIXED:
		if (munmap(buf, rm->len) ||
		    mmap(buf, rm->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != buf)
			return 6;
		rm->same_addr++;
		break;
	case REMAP_ANYWHERE:
		if (munmap(buf, rm->len))
			return 7;
		nbuf = map_rw(rm->len);
		if (!nbuf)
			return 8;
		rm->same_addr += nbuf == buf;
		*bufp = nbuf;
		break;
	case REMAP_DONTNEED:
		if (madvise(buf, rm->len, MADV_DONTNEED))
			return 9;
		rm->same_addr++;
		break;
	case REMAP_FORK:
		fflush(stderr);
		pid = fork();
		if (!pid)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 10;
		rm->same_addr++;
		break;
	}
	return 0;
}

/*
 * After round @i: rank 0's window holds what rank 1 put, or rank 1's
 * buffer what it got.  Return: 0, or the step of what is wrong.
 */
static int remap_round_landed(const struct remap *rm, int rank, int get, int i,
			      const unsigned char *win_mem, const unsigned char *buf)
{
	long bad;

	bad = rank == 0 && !get ? check(win_mem, rm->len, i) : -1;
	if (bad >= 0) {
		RMAWIN_TEST_MSG("round %d: byte %ld of the target is 0x%02x, want 0x%02x%s",
				i, bad, win_mem[bad], pat(i, bad),
				i && check(win_mem, rm->len, i - 1) < 0 ?
				": the whole target holds the previous round's (stale) buffer" :
				"");
		return 14;
	}
	bad = rank == 1 && get ? check(buf, rm->len, 100 + i) : -1;
	if (bad >= 0) {
		RMAWIN_TEST_MSG("round %d: byte %ld got is 0x%02x, want 0x%02x%s", i, bad,
				buf[bad], pat(100 + i, bad),
				rmawin_test_check_fill(buf, rm->len, 0) < 0 ?
				": nothing arrived in the new buffer (written to the old pages?)" :
				"");
		return 15;
	}
	return 0;
}

/*
 * Rank 1 transfers @len bytes (pinned, cached path) between its buffer
 * and rank 0's window each round, changing the buffer between rounds as
 * @mode says; every round must move the buffer's current contents.
 */
static int remap_rank(int rank, int n, void *arg)
{
	struct remap *rm = arg;
	int get = rm->mode == REMAP_GET_FIXED, i, ret;
	unsigned char *win_mem = NULL, *buf = NULL;
	struct rmawin_win *win;
	struct rmawin_ep *ep;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, rm->port, &ep));
	if (rank == 0) {
		win_mem = map_rw(rm->len);
		if (!win_mem)
			return 2;
		memset(win_mem, 0, rm->len);
	}
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, win_mem, rank ? 0 : rm->len, 1, 0, &win));
	for (i = 0; i < rm->rounds; i++) {
		if (rank == 0 && get)
			fill(win_mem, rm->len, 100 + i);
		RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));
		if (rank == 1) {
			ret = remap_buf(rm, &buf);
			if (ret)
				return ret;
			if (get) {
				memset(buf, 0, rm->len);
				RMAWIN_TEST_TRY(11, rmawin_get(win, buf, rm->len, 0, 0));
			} else {
				fill(buf, rm->len, i);
				RMAWIN_TEST_TRY(12, rmawin_put(win, buf, rm->len, 0, 0));
			}
		}
		RMAWIN_TEST_TRY(13, rmawin_fence(win, 0));
		ret = remap_round_landed(rm, rank, get, i, win_mem, buf);
		if (ret)
			return ret;
	}
	RMAWIN_TEST_TRY(16, rmawin_win_free(win));
	RMAWIN_TEST_TRY(17, rmawin_ep_close(ep));
	return 0;
}

static void remap_case(struct __test_metadata *_metadata, enum remap_mode mode, size_t len)
{
	struct remap *rm = rmawin_test_shared(sizeof(*rm));

	ASSERT_NE(NULL, rm);
	rm->port = rmawin_test_ports(2);
	rm->mode = mode;
	rm->len = len;
	rm->rounds = 6;
	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, remap_rank, rm, 50));
	if (mode == REMAP_ANYWHERE)
		TH_LOG("(the new buffer had the old one's address in %d of %d rounds)",
		       rm->same_addr, rm->rounds - 1);
	rmawin_test_expect_no_leaks(_metadata);
	munmap(rm, sizeof(*rm));
}

TEST_F_TIMEOUT(path, munmap_mmap_fixed_between_puts, 60)
{
	remap_case(_metadata, REMAP_FIXED, MIB + MIB / 2 + 123);
}

TEST_F_TIMEOUT(path, munmap_mmap_anywhere_between_puts, 60)
{
	remap_case(_metadata, REMAP_ANYWHERE, 256 * KIB + 123);
}

TEST_F_TIMEOUT(path, madv_dontneed_between_puts, 60)
{
	remap_case(_metadata, REMAP_DONTNEED, 256 * KIB + 123);
}

TEST_F_TIMEOUT(path, fork_between_puts, 60)
{
	remap_case(_metadata, REMAP_FORK, 256 * KIB + 123);
}

TEST_F_TIMEOUT(path, munmap_mmap_fixed_between_gets, 60)
{
	remap_case(_metadata, REMAP_GET_FIXED, 256 * KIB + 123);
}

TEST_HARNESS_MAIN
