// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctl ABI of /dev/rmawin: QUERY, EP_BIND, and the validation every
 * ioctl does (size, flags, reserved fields, user pointers, unknown commands).
 */
#include <stddef.h>
#include <sys/mman.h>

#include "rmawin_test.h"

#ifndef offsetofend
#define offsetofend(T, m)	(offsetof(T, m) + sizeof(((T *)0)->m))
#endif

FIXTURE(rmawin) {
	int fd;
};

FIXTURE_SETUP(rmawin)
{
	self->fd = open(RMAWIN_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", RMAWIN_DEV_PATH, strerror(errno));
}

/* Closing the endpoint frees it and everything it allocated. */
FIXTURE_TEARDOWN(rmawin)
{
	ASSERT_EQ(0, close(self->fd));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
	EXPECT_EQ(0, rmawin_stat("pds"));
}

TEST(open_close_counts_endpoints)
{
	int a, b;

	ASSERT_EQ(0, rmawin_stat("endpoints"));
	a = open(RMAWIN_DEV_PATH, O_RDWR);
	ASSERT_LE(0, a);
	b = open(RMAWIN_DEV_PATH, O_RDWR);
	ASSERT_LE(0, b);
	EXPECT_EQ(2, rmawin_stat("endpoints"));
	ASSERT_EQ(0, close(a));
	EXPECT_EQ(1, rmawin_stat("endpoints"));
	ASSERT_EQ(0, close(b));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
}

TEST_F(rmawin, query_reports_abi_and_device)
{
	struct rmawin_dev_info devs[16];
	struct rmawin_query q;
	const char *want = rmawin_test_ibdev();
	unsigned int i, found = 0;

	memset(devs, 0xa5, sizeof(devs));
	ASSERT_EQ(0, rmawin_query_raw(self->fd, &q, devs, 16));
	EXPECT_EQ(RMAWIN_ABI_VERSION, q.abi_version);
	EXPECT_EQ(sizeof(q), q.size);
	EXPECT_TRUE(q.features & RMAWIN_FEAT_EP_BIND);
	ASSERT_LE(1, q.ndevs);
	ASSERT_GE(16, q.ndevs);
	for (i = 0; i < q.ndevs; i++) {
		if (strcmp(devs[i].name, want))
			continue;
		found++;
		EXPECT_EQ(1, devs[i].port);
		EXPECT_EQ(RMAWIN_PORT_ACTIVE, devs[i].state);
		EXPECT_EQ(2, devs[i].link_layer);	/* RoCE: Ethernet */
		EXPECT_NE(0, devs[i].netdev[0]);
		EXPECT_LE(256, devs[i].active_mtu);
		EXPECT_GE(4096, devs[i].active_mtu);
		EXPECT_LT(0, devs[i].max_qp_wr);
		EXPECT_LT(0, devs[i].max_fast_reg_page_list_len);
		EXPECT_EQ(0, devs[i].reserved[0]);
		EXPECT_EQ(0, devs[i].reserved[3]);
	}
	EXPECT_EQ(1, found) TH_LOG("device %s not reported once", want);
	/* entries beyond ndevs are untouched */
	EXPECT_EQ(0xa5a5a5a5u, *(unsigned int *)devs[q.ndevs].name);
}

TEST_F(rmawin, query_without_array_counts_devices)
{
	struct rmawin_query q;

	ASSERT_EQ(0, rmawin_query_raw(self->fd, &q, NULL, 0));
	EXPECT_LE(1, q.ndevs);
}

TEST_F(rmawin, query_short_array_fills_only_its_length)
{
	struct rmawin_dev_info devs[2];
	struct rmawin_query q;

	memset(devs, 0x5a, sizeof(devs));
	ASSERT_EQ(0, rmawin_query_raw(self->fd, &q, devs, 1));
	EXPECT_LE(1, q.ndevs);
	EXPECT_NE(0x5a, devs[0].name[0]);
	EXPECT_EQ(0x5a, devs[1].name[0]);
}

/* A caller built against a newer, larger entry gets its tail zeroed. */
TEST_F(rmawin, query_larger_entry_tail_zeroed)
{
	struct big_entry {
		struct rmawin_dev_info info;
		unsigned char future[40];
	} devs[2];
	struct rmawin_query q = { .size = sizeof(q) };
	unsigned int i;

	memset(devs, 0xff, sizeof(devs));
	q.devs_ptr = (uintptr_t)devs;
	q.devs_len = 1;
	q.dev_entry_size = sizeof(devs[0]);
	ASSERT_EQ(0, ioctl(self->fd, RMAWIN_IOC_QUERY, &q));
	EXPECT_NE(0, devs[0].info.name[0]);
	for (i = 0; i < sizeof(devs[0].future); i++)
		ASSERT_EQ(0, devs[0].future[i]);
	EXPECT_EQ(0xff, (unsigned char)devs[1].info.name[0]);
}

/* An older caller's smaller entry (without the reserved tail) works too. */
TEST_F(rmawin, query_smaller_entry)
{
	size_t small = offsetof(struct rmawin_dev_info, reserved);
	unsigned char buf[2 * sizeof(struct rmawin_dev_info)];
	struct rmawin_query q = { .size = sizeof(q) };

	memset(buf, 0xee, sizeof(buf));
	q.devs_ptr = (uintptr_t)buf;
	q.devs_len = 1;
	q.dev_entry_size = small;
	ASSERT_EQ(0, ioctl(self->fd, RMAWIN_IOC_QUERY, &q));
	EXPECT_NE(0xee, buf[0]);
	EXPECT_EQ(0xee, buf[small]);
}

TEST_F(rmawin, query_entry_size_out_of_range)
{
	struct rmawin_dev_info devs[1];
	struct rmawin_query q = { .size = sizeof(q) };

	q.devs_ptr = (uintptr_t)devs;
	q.devs_len = 1;
	q.dev_entry_size = 8;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_QUERY, &q));
	q.dev_entry_size = 0;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_QUERY, &q));
	q.dev_entry_size = 1 << 20;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_QUERY, &q));
}

/* devs_len * dev_entry_size wrapping around must not slip past the checks. */
TEST_F(rmawin, query_array_overflow)
{
	struct rmawin_dev_info devs[1];
	struct rmawin_query q = { .size = sizeof(q) };

	q.devs_ptr = (uintptr_t)devs;
	q.devs_len = 0xffffffffu;
	q.dev_entry_size = 4096;
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, RMAWIN_IOC_QUERY, &q));
	q.devs_ptr = ~0ull - 64;
	q.devs_len = 1;
	q.dev_entry_size = sizeof(devs[0]);
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, RMAWIN_IOC_QUERY, &q));
}

TEST_F(rmawin, struct_growth_zero_tail_accepted)
{
	struct {
		struct rmawin_query q;
		__u64 future[3];
	} big;

	memset(&big, 0, sizeof(big));
	big.q.size = sizeof(big);
	ASSERT_EQ(0, ioctl(self->fd, RMAWIN_IOC_QUERY, &big));
	EXPECT_EQ(RMAWIN_ABI_VERSION, big.q.abi_version);
	EXPECT_EQ(sizeof(big), big.q.size);
	/* the kernel writes back only the struct it knows */
	EXPECT_EQ(0, big.future[0]);
}

TEST_F(rmawin, struct_growth_nonzero_tail_refused)
{
	struct {
		struct rmawin_query q;
		__u64 future[3];
	} big;

	memset(&big, 0, sizeof(big));
	big.q.size = sizeof(big);
	big.future[2] = 1;
	EXPECT_ERRNO(E2BIG, ioctl(self->fd, RMAWIN_IOC_QUERY, &big));
}

TEST_F(rmawin, struct_too_small_refused)
{
	struct rmawin_query q;

	memset(&q, 0, sizeof(q));
	q.size = offsetof(struct rmawin_query, dev_entry_size);
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_QUERY, &q));
	q.size = 0;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_QUERY, &q));
}

/*
 * A larger size means "a newer struct": its tail is checked for zeros up
 * to the first fault (EFAULT) or non-zero byte (E2BIG); a struct of more
 * than a page is E2BIG without a look.
 */
TEST_F(rmawin, struct_larger_size_tail_checked)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct rmawin_query *q;
	char *map;

	map = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, munmap(map + pg, pg));
	q = (struct rmawin_query *)(map + pg - 2 * sizeof(*q));
	q->size = 4 * sizeof(*q);		/* the tail runs off the mapping */
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, RMAWIN_IOC_QUERY, q));
	map[pg - 1] = 1;
	EXPECT_ERRNO(E2BIG, ioctl(self->fd, RMAWIN_IOC_QUERY, q));
	q->size = pg + 1;
	map[pg - 1] = 0;
	EXPECT_ERRNO(E2BIG, ioctl(self->fd, RMAWIN_IOC_QUERY, q));
	q->size = 0xffffffffu;
	EXPECT_ERRNO(E2BIG, ioctl(self->fd, RMAWIN_IOC_QUERY, q));
	ASSERT_EQ(0, munmap(map, pg));
}

/*
 * Size negotiation, command by command, on a fresh endpoint: what the
 * command answers a zeroed struct of its own size, it answers the same
 * with a zero tail after it; a non-zero tail is E2BIG, a size below its
 * first revision EINVAL, more than a page E2BIG.
 */
static const struct {
	unsigned long cmd;
	const char *name;
	__u32 size;		/* sizeof() the struct */
	__u32 min_size;		/* its first revision */
	int err;		/* what a zeroed struct gets on a fresh endpoint */
} sizes[] = {
	{ RMAWIN_IOC_QUERY, "QUERY", sizeof(struct rmawin_query),
	  offsetofend(struct rmawin_query, dev_entry_size), 0 },
	{ RMAWIN_IOC_EP_BIND, "EP_BIND", sizeof(struct rmawin_ep_bind),
	  offsetofend(struct rmawin_ep_bind, reserved), ENODEV },
	{ RMAWIN_IOC_GROUP_JOIN, "GROUP_JOIN", sizeof(struct rmawin_group_join),
	  offsetofend(struct rmawin_group_join, key_len), EINVAL },
	{ RMAWIN_IOC_BARRIER, "BARRIER", sizeof(struct rmawin_barrier),
	  offsetofend(struct rmawin_barrier, flags), ENOTCONN },
	{ RMAWIN_IOC_WIN_CREATE, "WIN_CREATE", sizeof(struct rmawin_win_create),
	  offsetofend(struct rmawin_win_create, mmap_offset), EINVAL },
	{ RMAWIN_IOC_WIN_FREE, "WIN_FREE", sizeof(struct rmawin_win_free),
	  offsetofend(struct rmawin_win_free, reserved), ENOTCONN },
	{ RMAWIN_IOC_RMA, "RMA", sizeof(struct rmawin_rma),
	  offsetofend(struct rmawin_rma, op_size), EINVAL },
	{ RMAWIN_IOC_FENCE, "FENCE", sizeof(struct rmawin_fence),
	  offsetofend(struct rmawin_fence, reserved), ENOTCONN },
	{ RMAWIN_IOC_LOCK, "LOCK", sizeof(struct rmawin_passive),
	  offsetofend(struct rmawin_passive, reserved), ENOTCONN },
	{ RMAWIN_IOC_UNLOCK, "UNLOCK", sizeof(struct rmawin_passive),
	  offsetofend(struct rmawin_passive, reserved), ENOTCONN },
	{ RMAWIN_IOC_FLUSH, "FLUSH", sizeof(struct rmawin_passive),
	  offsetofend(struct rmawin_passive, reserved), ENOTCONN },
	{ RMAWIN_IOC_POST, "POST", sizeof(struct rmawin_pscw),
	  offsetofend(struct rmawin_pscw, reserved), ENOTCONN },
	{ RMAWIN_IOC_START, "START", sizeof(struct rmawin_pscw),
	  offsetofend(struct rmawin_pscw, reserved), ENOTCONN },
	{ RMAWIN_IOC_COMPLETE, "COMPLETE", sizeof(struct rmawin_pscw),
	  offsetofend(struct rmawin_pscw, reserved), ENOTCONN },
	{ RMAWIN_IOC_WAIT, "WAIT", sizeof(struct rmawin_pscw),
	  offsetofend(struct rmawin_pscw, reserved), ENOTCONN },
	{ RMAWIN_IOC_NOTIFY_WAIT, "NOTIFY_WAIT", sizeof(struct rmawin_notify_wait),
	  offsetofend(struct rmawin_notify_wait, len), ENOTCONN },
	{ RMAWIN_IOC_RING_SETUP, "RING_SETUP", sizeof(struct rmawin_ring_setup),
	  offsetofend(struct rmawin_ring_setup, off), ENOTCONN },
	{ RMAWIN_IOC_RING_ENTER, "RING_ENTER", sizeof(struct rmawin_ring_enter),
	  offsetofend(struct rmawin_ring_enter, flags), ENXIO },
	{ RMAWIN_IOC_WIN_INFO, "WIN_INFO", sizeof(struct rmawin_win_info),
	  offsetofend(struct rmawin_win_info, ranks_ptr), ENOTCONN },
};

/* The command on a zeroed struct of @size bytes, the last 8 set to @tail. */
static int sized_ioctl(int fd, unsigned long cmd, __u32 size, __u32 real, __u8 tail)
{
	static __u64 buf[1024];

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &size, sizeof(size));
	if (size > real)
		memset((char *)buf + size - 8, tail, 8);
	return ioctl(fd, cmd, buf) ? errno : 0;
}

TEST(size_negotiation_every_command)
{
	unsigned int i;

	ASSERT_EQ(RMAWIN_CMD_LAST - RMAWIN_CMD_QUERY, ARRAY_SIZE(sizes));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		int fd = open(RMAWIN_DEV_PATH, O_RDWR);

		ASSERT_LE(0, fd);
		EXPECT_EQ(sizes[i].err, sized_ioctl(fd, sizes[i].cmd, sizes[i].size,
						    sizes[i].size, 0))
			TH_LOG("%s: own size", sizes[i].name);
		EXPECT_EQ(sizes[i].err, sized_ioctl(fd, sizes[i].cmd, sizes[i].size + 16,
						    sizes[i].size, 0))
			TH_LOG("%s: a zero tail", sizes[i].name);
		EXPECT_EQ(E2BIG, sized_ioctl(fd, sizes[i].cmd, sizes[i].size + 16,
					     sizes[i].size, 1))
			TH_LOG("%s: a non-zero tail", sizes[i].name);
		EXPECT_EQ(EINVAL, sized_ioctl(fd, sizes[i].cmd, sizes[i].min_size - 4,
					      sizes[i].size, 0))
			TH_LOG("%s: below its first revision", sizes[i].name);
		EXPECT_EQ(E2BIG, sized_ioctl(fd, sizes[i].cmd, 4097, sizes[i].size, 0))
			TH_LOG("%s: more than a page", sizes[i].name);
		close(fd);
	}
}

/*
 * An input-only ioctl never writes its struct back: one in read-only
 * memory works (it used to act, then fail with EFAULT on the copy back).
 * One with results still needs writable memory.
 */
TEST_F(rmawin, input_only_struct_may_be_read_only)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct rmawin_ep_bind *b;
	struct rmawin_query *q;

	b = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, b);
	b->size = sizeof(*b);
	strcpy(b->ibdev, rmawin_test_ibdev());
	q = (struct rmawin_query *)((char *)b + 512);
	q->size = sizeof(*q);
	ASSERT_EQ(0, mprotect(b, pg, PROT_READ));
	EXPECT_EQ(0, ioctl(self->fd, RMAWIN_IOC_EP_BIND, b)) TH_LOG("%s", strerror(errno));
	EXPECT_ERRNO(EBUSY, ioctl(self->fd, RMAWIN_IOC_EP_BIND, b));	/* it did bind */
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, RMAWIN_IOC_QUERY, q));
	ASSERT_EQ(0, munmap(b, pg));
}

TEST_F(rmawin, unknown_ioctl_enotty)
{
	struct rmawin_query q = { .size = sizeof(q) };

	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(RMAWIN_IOC_TYPE, 0), &q));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_QUERY - 1), &q));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(RMAWIN_IOC_TYPE, RMAWIN_CMD_LAST), &q));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IO(0x1b, RMAWIN_CMD_QUERY), &q));
	/* the right number with direction/size bits is a different command */
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, _IOWR(RMAWIN_IOC_TYPE, RMAWIN_CMD_QUERY,
						   struct rmawin_query), &q));
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, FIONREAD, &q));
}

TEST_F(rmawin, query_flags_einval)
{
	struct rmawin_query q = { .size = sizeof(q), .flags = 1 };

	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_QUERY, &q));
	q.flags = 0x80000000u;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_QUERY, &q));
}

TEST_F(rmawin, bad_user_pointer_efault)
{
	struct rmawin_dev_info *ro, *gone;
	struct rmawin_query q;
	long pg = sysconf(_SC_PAGESIZE);

	EXPECT_ERRNO(EFAULT, ioctl(self->fd, RMAWIN_IOC_QUERY, NULL));
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, RMAWIN_IOC_QUERY, (void *)8));
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, RMAWIN_IOC_EP_BIND, (void *)-4096L));

	/* devs array in read-only memory */
	ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_ERRNO(EFAULT, rmawin_query_raw(self->fd, &q, ro, 1));
	/* devs array unmapped */
	gone = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_EQ(0, munmap(gone, pg));
	EXPECT_ERRNO(EFAULT, rmawin_query_raw(self->fd, &q, gone, 1));
	/* the struct itself in read-only memory: read works, write-back fails */
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	ASSERT_EQ(0, munmap(ro, pg));
	ro = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memcpy(ro, &q, sizeof(q));
	ASSERT_EQ(0, mprotect(ro, pg, PROT_READ));
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, RMAWIN_IOC_QUERY, ro));
	ASSERT_EQ(0, munmap(ro, pg));
}

TEST_F(rmawin, bind_and_rebind)
{
	ASSERT_EQ(0, rmawin_bind_raw(self->fd, rmawin_test_ibdev(), 0));
	EXPECT_EQ(1, rmawin_stat("pds"));
	EXPECT_ERRNO(EBUSY, rmawin_bind_raw(self->fd, rmawin_test_ibdev(), 0));
	EXPECT_EQ(1, rmawin_stat("pds"));
}

TEST_F(rmawin, bind_explicit_port)
{
	EXPECT_ERRNO(EINVAL, rmawin_bind_raw(self->fd, rmawin_test_ibdev(), 2));
	EXPECT_ERRNO(EINVAL, rmawin_bind_raw(self->fd, rmawin_test_ibdev(), 0xffffffffu));
	ASSERT_EQ(0, rmawin_bind_raw(self->fd, rmawin_test_ibdev(), 1));
}

TEST_F(rmawin, bind_no_such_device_enodev)
{
	EXPECT_ERRNO(ENODEV, rmawin_bind_raw(self->fd, "rmawin_nodev", 0));
	EXPECT_ERRNO(ENODEV, rmawin_bind_raw(self->fd, "", 0));
	EXPECT_EQ(0, rmawin_stat("pds"));
	/* a failed bind leaves the endpoint usable */
	ASSERT_EQ(0, rmawin_bind_raw(self->fd, rmawin_test_ibdev(), 0));
}

TEST_F(rmawin, bind_validation_einval)
{
	struct rmawin_ep_bind b;

	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	strcpy(b.ibdev, rmawin_test_ibdev());
	b.flags = 1;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_EP_BIND, &b));
	b.flags = 0;
	b.reserved = 1;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_EP_BIND, &b));
	b.reserved = 0;
	memset(b.ibdev, 'x', sizeof(b.ibdev));	/* not NUL-terminated */
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_EP_BIND, &b));
	b.size = offsetof(struct rmawin_ep_bind, reserved);
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, RMAWIN_IOC_EP_BIND, &b));
	EXPECT_EQ(0, rmawin_stat("pds"));
}

TEST_HARNESS_MAIN
