// SPDX-License-Identifier: GPL-2.0
/*
 * Module lifetime: rmmod is refused while /dev/rmawin is open, and the
 * module unloads and reloads cleanly many times, leaving no reference on
 * ib_core behind.  Needs root and the module's path in RMAWIN_KO (the test
 * VM provides both).  Leaves the module loaded, as it found it.
 */
#include "rmawin_test.h"

static long module_refcnt(const char *mod)
{
	char path[128];
	long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", mod);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

FIXTURE(module) {
	const char *ko;
};

FIXTURE_SETUP(module)
{
	self->ko = getenv("RMAWIN_KO");
	if (geteuid())
		SKIP(return, "loading modules needs root");
	if (!self->ko || access(self->ko, R_OK))
		SKIP(return, "RMAWIN_KO does not name the built module");
	ASSERT_EQ(0, access(RMAWIN_DEV_PATH, F_OK)) TH_LOG("rmawin is not loaded");
}

FIXTURE_TEARDOWN(module)
{
	if (geteuid() || !self->ko)
		return;
	/* whatever happened, leave the module loaded for the next test */
	if (access(RMAWIN_DEV_PATH, F_OK))
		rmawin_test_load_module(self->ko, "");
}

TEST_F(module, rmmod_refused_while_open)
{
	int fd = open(RMAWIN_DEV_PATH, O_RDWR);

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(EWOULDBLOCK, rmawin_test_unload_module("rmawin"));
	EXPECT_EQ(0, access(RMAWIN_DEV_PATH, F_OK));
	/* and still works afterwards */
	EXPECT_EQ(0, rmawin_bind_raw(fd, rmawin_test_ibdev(), 0));
	EXPECT_ERRNO(EWOULDBLOCK, rmawin_test_unload_module("rmawin"));
	ASSERT_EQ(0, close(fd));
}

TEST_F_TIMEOUT(module, load_unload_20_times, 300)
{
	long ib_core0 = module_refcnt("ib_core");
	/* built in (the debug kernel), ib_core has no reference count to leak */
	bool ib_core_builtin = ib_core0 < 0 && !access("/sys/module/ib_core", F_OK);
	struct rmawin_query q;
	int i, fd;

	if (ib_core_builtin)
		TH_LOG("ib_core is built in: no reference count to compare at the end");
	else
		ASSERT_LE(0, ib_core0);
	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, rmawin_test_unload_module("rmawin"))
			TH_LOG("unload %d: %s", i, strerror(errno));
		ASSERT_NE(0, access(RMAWIN_DEV_PATH, F_OK));
		ASSERT_EQ(-1, module_refcnt("rmawin"));
		ASSERT_EQ(0, rmawin_test_load_module(self->ko, ""))
			TH_LOG("load %d: %s", i, strerror(errno));
		fd = open(RMAWIN_DEV_PATH, O_RDWR);
		ASSERT_LE(0, fd) TH_LOG("open after load %d: %s", i, strerror(errno));
		ASSERT_EQ(0, rmawin_query_raw(fd, &q, NULL, 0));
		ASSERT_LE(1, q.ndevs);
		ASSERT_EQ(0, rmawin_bind_raw(fd, rmawin_test_ibdev(), 0));
		ASSERT_EQ(1, rmawin_stat("pds"));
		ASSERT_EQ(1, module_refcnt("rmawin"));
		ASSERT_EQ(0, close(fd));
		ASSERT_EQ(0, module_refcnt("rmawin"));
		ASSERT_EQ(0, rmawin_stat("endpoints"));
		ASSERT_EQ(0, rmawin_stat("pds"));
	}
	/* nothing of ours holds ib_core beyond the one dependency */
	if (!ib_core_builtin)
		EXPECT_EQ(ib_core0, module_refcnt("ib_core"));
}

TEST_HARNESS_MAIN
