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

#endif /* RMAWIN_SELFTEST_H */
