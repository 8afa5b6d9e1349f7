/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the rmawin selftests.  The tests run inside the test VM
 * (tools/vm), where /dev/rmawin exists and a soft-RoCE device is up; its
 * name comes from RMAWIN_VM_IBDEV.
 *
 * This header has the checks and /dev/rmawin's ioctls by hand; it includes
 * the rest, so that a test includes it alone: rmawin_test_ranks.h (ranks in
 * child processes, through the library) and rmawin_test_sys.h (the system
 * around the module: its debugfs files, loading it, devices, threads).
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
#include "rmawin_ports.h"
#include "rmawin_test_ranks.h"
#include "rmawin_test_sys.h"

/*
 * The harness gives a TEST() without a timeout of its own 30 s: too short
 * under make check-debug's kernel (KASAN, lockdep, kmemleak) in a TCG
 * guest, where fail_nth_every_call and rings_of_one_poller_closed_at_once
 * took longer.  (Read where TEST() is expanded, so redefining it here
 * serves every test below.)
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT	180

#define RMAWIN_DEV_PATH		"/dev/rmawin"

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

/* The running module's RMAWIN_FEAT_* bits, or 0 if it cannot be asked. */
static inline __u64 rmawin_test_features(void)
{
	struct rmawin_query q;
	int fd = open(RMAWIN_DEV_PATH, O_RDWR | O_CLOEXEC), ret;

	if (fd < 0)
		return 0;
	ret = rmawin_query_raw(fd, &q, NULL, 0);
	close(fd);
	return ret ? 0 : q.features;
}

/* A TEST that the library's rmawin_query() reports RMAWIN_FEAT_* @bit. */
#define RMAWIN_TEST_FEATURE(name, bit)						\
TEST(name)									\
{										\
	struct rmawin_info info;						\
	int n = rmawin_query(&info, NULL, 0);					\
										\
	ASSERT_LE(0, n) TH_LOG("rmawin_query: %s", rmawin_strerror(n));	\
	EXPECT_NE(0, info.features & (bit))					\
		TH_LOG("features %#llx: no " #bit,				\
		       (unsigned long long)info.features);			\
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

/* The window ioctls by hand, for tests of their argument checks: -1 and errno on failure. */
static inline int rmawin_rma_raw(int fd, const struct rmawin_op_desc *ops, __u32 nops)
{
	struct rmawin_rma r = {
		.size = sizeof(r), .ops_ptr = (uintptr_t)ops, .nops = nops,
		.op_size = sizeof(*ops),
	};

	return ioctl(fd, RMAWIN_IOC_RMA, &r);
}

static inline int rmawin_fence_raw(int fd, __u32 win, __u32 flags)
{
	struct rmawin_fence f = { .size = sizeof(f), .flags = flags, .win = win };

	return ioctl(fd, RMAWIN_IOC_FENCE, &f);
}

static inline int rmawin_create_raw(int fd, void *base, __u64 len, __u32 unit, __u32 *win)
{
	struct rmawin_win_create c = {
		.size = sizeof(c), .base = (uintptr_t)base, .length = len, .disp_unit = unit,
	};
	int ret = ioctl(fd, RMAWIN_IOC_WIN_CREATE, &c);

	if (!ret)
		*win = c.win;
	return ret;
}

static inline int rmawin_free_raw(int fd, __u32 win)
{
	struct rmawin_win_free f = { .size = sizeof(f), .win = win };

	return ioctl(fd, RMAWIN_IOC_WIN_FREE, &f);
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

/* Index of the first of @len bytes at @p that is not @v, or -1. */
static inline long rmawin_test_check_fill(const unsigned char *p, size_t len, unsigned char v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return i;
	return -1;
}

/* A put/get-shaped operation descriptor, every other field zero. */
static inline struct rmawin_op_desc rmawin_test_op(int opcode, __u32 win, int target,
						   const void *origin, size_t len, size_t disp)
{
	struct rmawin_op_desc d;

	memset(&d, 0, sizeof(d));
	d.opcode = opcode;
	d.target = target;
	d.win = win;
	d.origin = (uintptr_t)origin;
	d.len = len;
	d.target_disp = disp;
	return d;
}

#endif /* RMAWIN_SELFTEST_H */
