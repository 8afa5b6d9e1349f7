// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA devices coming and going under rmawin: a soft-RoCE device created
 * for the test shows up in QUERY, an endpoint binds to it, and `rdma link
 * del` makes it disappear and releases everything the endpoint held.
 * Needs root and the iproute2 tools (ip, rdma), as the test VM has.
 */
#include <sys/wait.h>

#include "rmawin_test.h"

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

TEST_HARNESS_MAIN
