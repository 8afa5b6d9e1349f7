// SPDX-License-Identifier: GPL-2.0
/*
 * The rules of RMAWIN_IOC_RMA, FENCE and WIN_CREATE with their exact
 * errnos, including "a batch with one bad operation issues none": the
 * test process is rank 0 and makes each refused call by hand, rank 1
 * checks that nothing of them reached its window.  Then the window ioctls
 * before GROUP_JOIN, and a freed window's handle.  rma_test.c and
 * rma_shapes_test.c move the data.
 *
 * Every test that opens endpoints through the library runs on both of its
 * paths: variants ring and no_ring.
 */
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <rmawin.h>

#include "rmawin_test.h"

RMAWIN_TEST_PATHS(path);

/*
 * The fixture pair: the test process is rank 0 and checks errnos with the
 * harness's macros; rank 1 is a child that only takes part in the
 * collectives and reports whether anything reached its window.
 */
#define PEER_WIN	65536
#define PEER_FILL	0x11

struct peer_report {
	int port;		/* of rank 0; rank 1's is port + 1 */
	long changed;		/* first byte of rank 1's window that changed, or -1 */
	unsigned char got;
	int step;		/* rank 1's failing step, 0 */
};

/*
 * Rank 1: a window of PEER_WIN bytes of PEER_FILL, unit 1.  F1 opens the
 * epoch of refused operations, F2 closes it and rank 1 reports what
 * changed, F3 hands the report over, F4 closes the epoch of the last put.
 */
static int peer_rank(int rank, int n, void *arg)
{
	struct peer_report *rep = arg;
	unsigned char *buf = mmap(NULL, PEER_WIN, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	long bad;

	if (buf == MAP_FAILED)
		return 1;
	memset(buf, PEER_FILL, PEER_WIN);
	RMAWIN_TEST_TRY(2, rmawin_test_open(rank, n, rep->port, &ep));
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, buf, PEER_WIN, 1, 0, &win));
	RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));	/* F1: the epoch of refused operations */
	RMAWIN_TEST_TRY(5, rmawin_fence(win, 0));	/* F2: it is over */
	bad = rmawin_test_check_fill(buf, PEER_WIN, PEER_FILL);
	rep->changed = bad;
	rep->got = bad >= 0 ? buf[bad] : 0;
	RMAWIN_TEST_TRY(6, rmawin_fence(win, 0));	/* F3: rank 0 has the report */
	RMAWIN_TEST_TRY(6, rmawin_fence(win, 0));	/* F4: the last bytes are put */
	bad = rmawin_test_check_fill(buf, PEER_WIN - 16, PEER_FILL);
	if (bad >= 0 || buf[PEER_WIN - 1] != 0xee) {
		RMAWIN_TEST_MSG("the put into the last 16 bytes of the window did not land");
		return 7;
	}
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	RMAWIN_TEST_TRY(9, rmawin_ep_close(ep));
	return 0;
}

FIXTURE(pair) {
	struct rmawin_ep *ep;
	int fd;
	__u32 win;		/* rank 0's window: 8192 bytes, unit 4 */
	unsigned char *mem;
	struct peer_report *rep;
	pid_t child;
};
FIXTURE_VARIANT(pair) {
	int no_ring;
};
RMAWIN_TEST_PATH_VARIANT(pair, ring, 0);
RMAWIN_TEST_PATH_VARIANT(pair, no_ring, 1);

/* Rank 1 forked, rank 0's window created, F1: the epoch of the test's operations. */
FIXTURE_SETUP(pair)
{
	rmawin_test_path(variant->no_ring);
	self->rep = rmawin_test_shared(sizeof(*self->rep));
	ASSERT_NE(NULL, self->rep);
	self->rep->port = rmawin_test_ports(2);
	self->rep->changed = -2;
	self->child = rmawin_test_fork_rank(1, 2, peer_rank, self->rep);
	ASSERT_LT(0, self->child);
	rmawin_test_rank = 0;
	ASSERT_EQ(0, rmawin_test_open(0, 2, self->rep->port, &self->ep));
	self->fd = rmawin_ep_fd(self->ep);
	self->mem = malloc(8192);
	ASSERT_NE(NULL, self->mem);
	memset(self->mem, 0x22, 8192);
	ASSERT_EQ(0, rmawin_create_raw(self->fd, self->mem, 8192, 4, &self->win));
	ASSERT_EQ(0, rmawin_fence_raw(self->fd, self->win, 0));	/* F1 */
}

/* F2 to F4; nothing of the refused operations reached either window. */
FIXTURE_TEARDOWN(pair)
{
	unsigned char last[16];

	EXPECT_EQ(0, rmawin_fence_raw(self->fd, self->win, 0)) TH_LOG("fence F2: %s", strerror(errno));
	EXPECT_EQ(-1, rmawin_test_check_fill(self->mem, 8192, 0x22))
		TH_LOG("a refused operation changed rank 0's own window at byte %ld",
		       rmawin_test_check_fill(self->mem, 8192, 0x22));
	EXPECT_EQ(0, rmawin_fence_raw(self->fd, self->win, 0)) TH_LOG("fence F3: %s", strerror(errno));
	EXPECT_EQ(-1, self->rep->changed)
		TH_LOG("a refused operation reached rank 1's window: byte %ld is 0x%02x",
		       self->rep->changed, self->rep->got);
	/* an operation ending exactly at the end of the window is fine */
	memset(last, 0xee, sizeof(last));
	{
		struct rmawin_op_desc op = rmawin_test_op(RMAWIN_OP_PUT, self->win, 1, last, 16,
						   PEER_WIN - 16);

		EXPECT_EQ(0, rmawin_rma_raw(self->fd, &op, 1)) TH_LOG("put of the last 16 bytes: %s",
							       strerror(errno));
	}
	/* true local assertions: nothing stored into, nor put into, rank 0's window */
	EXPECT_EQ(0, rmawin_fence_raw(self->fd, self->win, RMAWIN_MODE_NOSTORE | RMAWIN_MODE_NOPUT))
		TH_LOG("fence F4 (NOSTORE | NOPUT): %s", strerror(errno));
	EXPECT_EQ(0, rmawin_free_raw(self->fd, self->win));
	EXPECT_EQ(0, rmawin_ep_close(self->ep));
	rmawin_test_wait_rank(_metadata, self->child, 1);
	free(self->mem);
	munmap(self->rep, sizeof(*self->rep));
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_F(pair, rma_bad_target_rank_einval)
{
	struct rmawin_op_desc op;
	unsigned char b[8] = { 0 };

	op = rmawin_test_op(RMAWIN_OP_PUT, self->win, 2, b, 1, 0);
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));
	op.target = 4096;
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));
	op.target = 0xffffffff;
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));
	op.opcode = RMAWIN_OP_GET;
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));
}

TEST_F(pair, rma_beyond_target_window_erange)
{
	unsigned char *b = calloc(1, PEER_WIN + 16);
	struct rmawin_op_desc op;
	int opc;

	ASSERT_NE(NULL, b);
	for (opc = RMAWIN_OP_PUT; opc <= RMAWIN_OP_GET; opc++) {
		/* rank 1: PEER_WIN bytes, unit 1 */
		op = rmawin_test_op(opc, self->win, 1, b, 1, PEER_WIN);
		EXPECT_ERRNO(ERANGE, rmawin_rma_raw(self->fd, &op, 1));
		op = rmawin_test_op(opc, self->win, 1, b, 2, PEER_WIN - 1);
		EXPECT_ERRNO(ERANGE, rmawin_rma_raw(self->fd, &op, 1));
		op = rmawin_test_op(opc, self->win, 1, b, PEER_WIN + 1, 0);
		EXPECT_ERRNO(ERANGE, rmawin_rma_raw(self->fd, &op, 1));
		op = rmawin_test_op(opc, self->win, 1, b, PEER_WIN - 8191, 8192);	/* pinned path */
		EXPECT_ERRNO(ERANGE, rmawin_rma_raw(self->fd, &op, 1));
		/* disp * unit and disp * unit + len overflowing 64 bits */
		op = rmawin_test_op(opc, self->win, 1, b, 1, UINT64_MAX);
		EXPECT_ERRNO(ERANGE, rmawin_rma_raw(self->fd, &op, 1));
		op = rmawin_test_op(opc, self->win, 1, b, UINT64_MAX, 1);
		EXPECT_ERRNO(ERANGE, rmawin_rma_raw(self->fd, &op, 1));
		/* itself: 8192 bytes in units of 4 */
		op = rmawin_test_op(opc, self->win, 0, b, 1, 2048);
		EXPECT_ERRNO(ERANGE, rmawin_rma_raw(self->fd, &op, 1));
		op = rmawin_test_op(opc, self->win, 0, b, 5, 2047);
		EXPECT_ERRNO(ERANGE, rmawin_rma_raw(self->fd, &op, 1));
		op = rmawin_test_op(opc, self->win, 0, b, 1, UINT64_MAX / 4 + 1);
		EXPECT_ERRNO(ERANGE, rmawin_rma_raw(self->fd, &op, 1));
	}
	free(b);
}

TEST_F(pair, rma_unknown_window_enoent)
{
	struct rmawin_op_desc op;
	unsigned char b[8] = { 0 };

	op = rmawin_test_op(RMAWIN_OP_PUT, self->win + 1, 1, b, 1, 0);
	EXPECT_ERRNO(ENOENT, rmawin_rma_raw(self->fd, &op, 1));
	op.win = 0xffffffff;
	EXPECT_ERRNO(ENOENT, rmawin_rma_raw(self->fd, &op, 1));
	op.opcode = RMAWIN_OP_GET;
	EXPECT_ERRNO(ENOENT, rmawin_rma_raw(self->fd, &op, 1));
	EXPECT_ERRNO(ENOENT, rmawin_fence_raw(self->fd, self->win + 1, 0));
}

TEST_F(pair, rma_descriptor_fields_einval)
{
	struct rmawin_op_desc op;
	unsigned char b[8] = { 0 };
	int i;

	op = rmawin_test_op(0, self->win, 1, b, 1, 0);
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));
	op.opcode = RMAWIN_OP_LAST;
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));
	op.opcode = 0xff;
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));

	op = rmawin_test_op(RMAWIN_OP_PUT, self->win, 1, b, 1, 0);
	/* the first bit no flag has; both lock modes of an epoch (epoch_test.c) */
	op.flags = 0x8;
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));
	/* an operation carried by COMPLETE, with no PSCW epoch (carry_test.c) */
	op.flags = RMAWIN_OP_F_EPOCH_COMPLETE;
	EXPECT_ERRNO(EPERM, rmawin_rma_raw(self->fd, &op, 1));
	op.flags = RMAWIN_OP_F_EPOCH_SHARED | RMAWIN_OP_F_EPOCH_EXCLUSIVE;
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));
	op.flags = 0x80;
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));
	op.flags = 0;
	/* a tag belongs to notified puts only */
	op.tag = 0x80000000;
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));
	op.tag = 0;
	op.reserved = 1ULL << 63;
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(self->fd, &op, 1));
	op.reserved = 0;
	/* the accumulate family's fields are zero for a put or a get */
	for (i = 0; i < 2; i++) {
		op.opcode = i ? RMAWIN_OP_GET : RMAWIN_OP_PUT;
		op.acc_op = 1;
		EXPECT_ERRNO_LOG(EINVAL, rmawin_rma_raw(self->fd, &op, 1), "acc_op, opcode %d", op.opcode);
		op.acc_op = 0;
		op.datatype = 1;
		EXPECT_ERRNO_LOG(EINVAL, rmawin_rma_raw(self->fd, &op, 1), "datatype, opcode %d",
				 op.opcode);
		op.datatype = 0;
		op.result = (uintptr_t)b;
		EXPECT_ERRNO_LOG(EINVAL, rmawin_rma_raw(self->fd, &op, 1), "result, opcode %d", op.opcode);
		op.result = 0;
		op.compare = (uintptr_t)b;
		EXPECT_ERRNO_LOG(EINVAL, rmawin_rma_raw(self->fd, &op, 1), "compare, opcode %d",
				 op.opcode);
		op.compare = 0;
	}
}

TEST_F(pair, rma_struct_fields)
{
	struct rmawin_op_desc ops[1025], op;
	struct {
		struct rmawin_op_desc d;
		__u64 tail;
	} big;
	struct rmawin_rma r;
	unsigned char b[8] = { 0 };
	unsigned char *page;
	int i;

	op = rmawin_test_op(RMAWIN_OP_PUT, self->win, 1, b, 1, 0);
	for (i = 0; i < 1025; i++)	/* empty: no effect */
		ops[i] = rmawin_test_op(RMAWIN_OP_PUT, self->win, 1, b, 0, 0);

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.ops_ptr = (uintptr_t)&op;
	r.nops = 1;
	r.op_size = sizeof(op);
	r.flags = 2;		/* the first that is not RMAWIN_RMA_QUIET */
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_RMA, &r));
	r.flags = 0x80000000;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_RMA, &r));
	r.flags = 0;
	r.nops = 0;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_RMA, &r));
	r.ops_ptr = (uintptr_t)ops;
	r.nops = 1025;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_RMA, &r));
	r.nops = 1024;
	EXPECT_EQ(0, ioctl(self->fd, RMAWIN_IOC_RMA, &r)) TH_LOG("1024 empty operations: %s",
								 strerror(errno));
	r.ops_ptr = (uintptr_t)&op;
	r.nops = 1;
	/*
	 * A binary built before user_data: its descriptors are 64 bytes (this
	 * one moves no data: the window must see only the put at the end)
	 */
	r.op_size = RMAWIN_OP_DESC_SIZE_VER0;
	r.ops_ptr = (uintptr_t)&ops[0];
	EXPECT_EQ(64, RMAWIN_OP_DESC_SIZE_VER0);
	EXPECT_EQ(0, ioctl(self->fd, RMAWIN_IOC_RMA, &r)) TH_LOG("a first-revision descriptor: %s",
								 strerror(errno));
	r.ops_ptr = (uintptr_t)&op;
	r.op_size = RMAWIN_OP_DESC_SIZE_VER0 - 8;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_RMA, &r));
	r.op_size = 0;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_RMA, &r));
	r.op_size = 1;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_RMA, &r));

	/* a descriptor from a later ABI: a zero tail is fine, anything else is not */
	memset(&big, 0, sizeof(big));
	big.d = rmawin_test_op(RMAWIN_OP_PUT, self->win, 1, b, 0, 0);
	r.ops_ptr = (uintptr_t)&big;
	r.op_size = sizeof(big);
	EXPECT_EQ(0, ioctl(self->fd, RMAWIN_IOC_RMA, &r)) TH_LOG("larger op_size, zero tail: %s",
								 strerror(errno));
	big.tail = 1;
	EXPECT_ERRNO(E2BIG, ioctl(self->fd, RMAWIN_IOC_RMA, &r));

	/* descriptors in memory that is not there */
	r.op_size = sizeof(op);
	r.ops_ptr = 0;
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, RMAWIN_IOC_RMA, &r));
	page = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	ASSERT_EQ(0, munmap(page + 4096, 4096));
	r.ops_ptr = (uintptr_t)(page + 4096);
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, RMAWIN_IOC_RMA, &r));
	/* the first descriptor readable (and valid), the second not: none is issued */
	memcpy(page + 4096 - sizeof(op), &op, sizeof(op));
	r.ops_ptr = (uintptr_t)(page + 4096 - sizeof(op));
	r.nops = 2;
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, RMAWIN_IOC_RMA, &r));
	munmap(page, 4096);
}

/*
 * Every operation of a batch is checked before any is issued: a bad one
 * at the end fails the batch, and none of the good ones before it (to
 * the peer, and to itself, which would be a copy done at once) lands.
 */
TEST_F(pair, rma_batch_with_one_bad_op_issues_none)
{
	unsigned char small[100], large[20000];
	struct rmawin_op_desc ops[5];
	unsigned char *hole;
	unsigned int i;
	struct {
		const char *what;
		int err;
	} bad[] = {
		{ "unknown opcode", EINVAL }, { "non-zero flags", EINVAL },
		{ "non-zero reserved", EINVAL }, { "target rank 2 of 2", EINVAL },
		{ "unknown window", ENOENT }, { "beyond the target window", ERANGE },
		{ "unmapped small origin", EFAULT },
	};

	memset(small, 0x33, sizeof(small));
	memset(large, 0x44, sizeof(large));
	hole = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, 4096));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ops[0] = rmawin_test_op(RMAWIN_OP_PUT, self->win, 1, small, sizeof(small), 0);
		/* to itself */
		ops[1] = rmawin_test_op(RMAWIN_OP_PUT, self->win, 0, small, sizeof(small), 0);
		ops[2] = rmawin_test_op(RMAWIN_OP_PUT, self->win, 1, large, sizeof(large), 1000);
		ops[3] = rmawin_test_op(RMAWIN_OP_GET, self->win, 1, small, sizeof(small), 200);
		ops[4] = rmawin_test_op(RMAWIN_OP_PUT, self->win, 1, small, 10, 300);
		switch (i) {
		case 0:
			ops[4].opcode = 0x7f;
			break;
		case 1:
			ops[4].flags = 2;
			break;
		case 2:
			ops[4].reserved = 1;
			break;
		case 3:
			ops[4].target = 2;
			break;
		case 4:
			ops[4].win = self->win + 7;
			break;
		case 5:
			ops[4].target_disp = PEER_WIN - 5;
			break;
		case 6:
			ops[4].origin = (uintptr_t)hole;
			break;
		}
		EXPECT_ERRNO_LOG(bad[i].err, rmawin_rma_raw(self->fd, ops, 5),
				 "batch whose last operation has %s", bad[i].what);
	}
	/* the gets, had they been issued, would have overwritten small */
	EXPECT_EQ(-1, rmawin_test_check_fill(small, sizeof(small), 0x33))
		TH_LOG("a get of a refused batch wrote to its origin buffer");
}

TEST_F(pair, fence_fields)
{
	struct rmawin_fence f;

	memset(&f, 0, sizeof(f));
	f.size = sizeof(f);
	f.win = self->win;
	f.flags = RMAWIN_MODE_ALL + 1;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_FENCE, &f));
	f.flags = 0x80000000;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_FENCE, &f));
	f.flags = 0;
	f.reserved = 1;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_FENCE, &f));
	f.reserved = 0;
	f.win = self->win + 1;
	EXPECT_ERRNO(ENOENT, ioctl(self->fd, RMAWIN_IOC_FENCE, &f));
	f.win = 0xffffffff;
	EXPECT_ERRNO(ENOENT, ioctl(self->fd, RMAWIN_IOC_FENCE, &f));
	/* (the valid fences of the teardown use flags 0 and NOSTORE | NOPUT) */
}

TEST_F(pair, win_create_fields_einval)
{
	struct rmawin_win_create c;
	unsigned char buf[4096] __attribute__((aligned(8)));

	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.base = (uintptr_t)buf;
	c.length = sizeof(buf);
	c.disp_unit = 1;
	c.flags = 0x4;		/* the first bit no flag has */
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_WIN_CREATE, &c));
	/* same_op needs an 8-byte aligned base: refused before anything is collective */
	c.flags = RMAWIN_WIN_SAME_OP;
	c.base = (uintptr_t)buf + 4;
	c.length = sizeof(buf) - 8;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_WIN_CREATE, &c));
	c.base = (uintptr_t)buf;
	c.length = sizeof(buf);
	c.flags = 0x80000000;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_WIN_CREATE, &c));
	c.flags = 0;
	c.mmap_offset = 1;	/* in: must be 0 */
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_WIN_CREATE, &c));
	c.mmap_offset = 0;
	c.disp_unit = 0;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_WIN_CREATE, &c));
	/* none of these was collective: the group goes on (the teardown) */
}

/* Window operations on a fresh endpoint, and on one that is bound but never joined. */
TEST(window_ioctls_before_join_enotconn)
{
	struct rmawin_win_create c = { .size = sizeof(c), .length = 4096, .disp_unit = 1 };
	struct rmawin_win_free f = { .size = sizeof(f) };
	unsigned char buf[4096];
	struct rmawin_op_desc op = rmawin_test_op(RMAWIN_OP_PUT, 0, 0, buf, 1, 0);
	int fd, pass;

	c.base = (uintptr_t)buf;
	for (pass = 0; pass < 2; pass++) {
		fd = open(RMAWIN_DEV_PATH, O_RDWR);
		ASSERT_LE(0, fd);
		if (pass)
			ASSERT_EQ(0, rmawin_bind_raw(fd, rmawin_test_ibdev(), 0));
		EXPECT_ERRNO_LOG(ENOTCONN, ioctl(fd, RMAWIN_IOC_WIN_CREATE, &c), "WIN_CREATE, %s",
				 pass ? "bound" : "unbound");
		EXPECT_ERRNO_LOG(ENOTCONN, rmawin_rma_raw(fd, &op, 1), "RMA, %s",
				 pass ? "bound" : "unbound");
		EXPECT_ERRNO_LOG(ENOTCONN, rmawin_fence_raw(fd, 0, 0), "FENCE, %s",
				 pass ? "bound" : "unbound");
		EXPECT_ERRNO_LOG(ENOTCONN, ioctl(fd, RMAWIN_IOC_WIN_FREE, &f), "WIN_FREE, %s",
				 pass ? "bound" : "unbound");
		EXPECT_EQ(0, rmawin_stat("windows"));
		EXPECT_EQ(0, close(fd));
	}
	rmawin_test_expect_no_leaks(_metadata);
}

/* A freed window is gone: its old handle is -ENOENT for RMA, FENCE and WIN_FREE. */
static int freed_rank(int rank, int n, void *arg)
{
	unsigned char buf[4096], b[8] = { 0 };
	struct rmawin_op_desc op;
	struct rmawin_ep *ep;
	__u32 win, win2;
	int fd;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	fd = rmawin_ep_fd(ep);
	if (rmawin_create_raw(fd, buf, sizeof(buf), 1, &win) ||
	    rmawin_create_raw(fd, buf, sizeof(buf), 1, &win2) || rmawin_fence_raw(fd, win, 0) ||
	    rmawin_fence_raw(fd, win2, 0)) {
		RMAWIN_TEST_MSG("WIN_CREATE/FENCE: %s", strerror(errno));
		return 2;
	}
	if (rmawin_free_raw(fd, win)) {
		RMAWIN_TEST_MSG("WIN_FREE: %s", strerror(errno));
		return 3;
	}
	op = rmawin_test_op(RMAWIN_OP_PUT, win, 1 - rank, b, 1, 0);
	if (rmawin_rma_raw(fd, &op, 1) != -1 || errno != ENOENT) {
		RMAWIN_TEST_MSG("put into a freed window: %s, want ENOENT", strerror(errno));
		return 4;
	}
	op.opcode = RMAWIN_OP_GET;
	op.target = rank;
	if (rmawin_rma_raw(fd, &op, 1) != -1 || errno != ENOENT) {
		RMAWIN_TEST_MSG("get from a freed window (own rank): %s, want ENOENT",
				strerror(errno));
		return 5;
	}
	if (rmawin_fence_raw(fd, win, 0) != -1 || errno != ENOENT) {
		RMAWIN_TEST_MSG("fence on a freed window: %s, want ENOENT", strerror(errno));
		return 6;
	}
	if (rmawin_free_raw(fd, win) != -1 || errno != ENOENT) {
		RMAWIN_TEST_MSG("second free of a window: %s, want ENOENT", strerror(errno));
		return 7;
	}
	/* the other window is still fine */
	op = rmawin_test_op(RMAWIN_OP_PUT, win2, 1 - rank, b, 1, 0);
	if (rmawin_rma_raw(fd, &op, 1) || rmawin_fence_raw(fd, win2, 0) || rmawin_free_raw(fd, win2)) {
		RMAWIN_TEST_MSG("the window still alive: %s", strerror(errno));
		return 8;
	}
	RMAWIN_TEST_TRY(9, rmawin_ep_close(ep));
	return 0;
}

TEST_F(path, freed_window_enoent)
{
	int port = rmawin_test_ports(2);

	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, freed_rank, &port, 25));
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_HARNESS_MAIN
