// SPDX-License-Identifier: GPL-2.0
/*
 * librmawin against the real module: query, endpoint open/close through
 * the library, argument validation, and error strings.
 */
#include <sys/stat.h>
#include <rmawin.h>

#include "rmawin_test.h"

/*
 * The tests that open endpoints run on both of the library's paths
 * (path.ring.NAME and path.no_ring.NAME), the others once.
 */
RMAWIN_TEST_PATHS(path);

TEST(query_lists_device)
{
	struct rmawin_device devs[16];
	struct rmawin_info info;
	int n, i, found = 0;

	n = rmawin_query(&info, devs, 16);
	ASSERT_LE(1, n) TH_LOG("rmawin_query: %s", rmawin_strerror(n));
	EXPECT_EQ(RMAWIN_ABI_VERSION, info.abi_version);
	EXPECT_EQ(n, info.ndevs);
	EXPECT_TRUE(info.features & RMAWIN_FEAT_EP_BIND);
	for (i = 0; i < n && i < 16; i++)
		if (!strcmp(devs[i].name, rmawin_test_ibdev()))
			found++;
	EXPECT_EQ(1, found);
	/* counting only */
	EXPECT_EQ(n, rmawin_query(NULL, NULL, 0));
}

TEST(query_bad_args)
{
	struct rmawin_device dev;

	EXPECT_EQ(-EINVAL, rmawin_query(NULL, NULL, 1));
	EXPECT_EQ(-EINVAL, rmawin_query(NULL, &dev, -1));
}

TEST_F(path, ep_open_single_rank)
{
	struct rmawin_ep_attr attr = {
		.rank = 0, .nranks = 1, .ibdev = rmawin_test_ibdev(),
	};
	struct rmawin_ep *ep = NULL;
	int fd;

	ASSERT_EQ(0, rmawin_ep_open(&attr, &ep));
	ASSERT_NE(NULL, ep);
	EXPECT_EQ(0, rmawin_rank(ep));
	EXPECT_EQ(1, rmawin_nranks(ep));
	fd = rmawin_ep_fd(ep);
	EXPECT_LE(0, fd);
	EXPECT_EQ(1, rmawin_stat("endpoints"));
	EXPECT_EQ(1, rmawin_stat("pds"));
	EXPECT_EQ(0, rmawin_barrier(ep));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
	EXPECT_EQ(0, rmawin_stat("pds"));
}

TEST_F(path, ep_open_errors)
{
	char a0[96], a1[96];
	const char *addrs[] = { a0, a1 };
	struct rmawin_ep_attr attr = {
		.rank = 0, .nranks = 1, .ibdev = "rmawin_nodev",
	};
	struct rmawin_ep *ep = NULL;
	uint8_t key[64] = { 1, 2, 3 };
	int port = rmawin_test_ports(2);

	snprintf(a0, sizeof(a0), "%s:%d", rmawin_test_ip(), port);
	snprintf(a1, sizeof(a1), "%s:%d", rmawin_test_ip(), port + 1);
	EXPECT_EQ(-ENODEV, rmawin_ep_open(&attr, &ep));
	EXPECT_EQ(NULL, ep);
	attr.ibdev = rmawin_test_ibdev();
	EXPECT_EQ(-EINVAL, rmawin_ep_open(NULL, &ep));
	EXPECT_EQ(-EINVAL, rmawin_ep_open(&attr, NULL));
	attr.rank = 1;
	EXPECT_EQ(-EINVAL, rmawin_ep_open(&attr, &ep));
	attr.rank = -1;
	EXPECT_EQ(-EINVAL, rmawin_ep_open(&attr, &ep));
	attr.rank = 0;
	attr.nranks = 0;
	EXPECT_EQ(-EINVAL, rmawin_ep_open(&attr, &ep));
	attr.nranks = 1;
	attr.flags = 0x80000000u;
	EXPECT_EQ(-EINVAL, rmawin_ep_open(&attr, &ep));
	attr.flags = 0;
	/* a group with peers and no job key: refused, no insecure default */
	attr.nranks = 2;
	attr.addrs = addrs;
	attr.timeout_ms = 500;
	EXPECT_EQ(-ENOKEY, rmawin_ep_open(&attr, &ep));
	attr.job_key = key;
	attr.job_key_len = 15;
	EXPECT_EQ(-EINVAL, rmawin_ep_open(&attr, &ep));		/* too short */
	attr.job_key_len = 65;
	EXPECT_EQ(-EINVAL, rmawin_ep_open(&attr, &ep));		/* too long */
	attr.job_key_len = 0;
	EXPECT_EQ(-EINVAL, rmawin_ep_open(&attr, &ep));		/* a key of no length */
	attr.job_key = NULL;
	attr.job_key_len = 16;
	EXPECT_EQ(-EINVAL, rmawin_ep_open(&attr, &ep));		/* a length of no key */
	/* rank 0 of 2 alone: nobody ever connects */
	attr.job_key = key;
	attr.job_key_len = 16;
	EXPECT_EQ(-ETIMEDOUT, rmawin_ep_open(&attr, &ep));
	/* a singleton with neither device nor address has nothing to bind by */
	attr.nranks = 1;
	attr.addrs = NULL;
	attr.ibdev = NULL;
	unsetenv("RMAWIN_IBDEV");
	EXPECT_EQ(-EINVAL, rmawin_ep_open(&attr, &ep));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
	EXPECT_EQ(0, rmawin_stat("pds"));
	EXPECT_EQ(-EINVAL, rmawin_ep_close(NULL));
	EXPECT_EQ(-EINVAL, rmawin_rank(NULL));
}

TEST_F(path, ep_open_env)
{
	struct rmawin_ep *ep = NULL;
	char addr[96];

	snprintf(addr, sizeof(addr), "%s:%d", rmawin_test_ip(), rmawin_test_ports(1));
	ASSERT_EQ(0, setenv("RMAWIN_RANK", "0", 1));
	ASSERT_EQ(0, setenv("RMAWIN_NRANKS", "1", 1));
	ASSERT_EQ(0, setenv("RMAWIN_ADDRS", addr, 1));
	ASSERT_EQ(0, setenv("RMAWIN_IBDEV", rmawin_test_ibdev(), 1));
	ASSERT_EQ(0, rmawin_ep_open_env(&ep));
	EXPECT_EQ(0, rmawin_rank(ep));
	EXPECT_EQ(0, rmawin_ep_close(ep));

	ASSERT_EQ(0, setenv("RMAWIN_NRANKS", "1x", 1));
	EXPECT_EQ(-EINVAL, rmawin_ep_open_env(&ep));
	ASSERT_EQ(0, setenv("RMAWIN_NRANKS", "2", 1));
	EXPECT_EQ(-EINVAL, rmawin_ep_open_env(&ep));	/* one address for two ranks */
	EXPECT_EQ(0, rmawin_stat("endpoints"));
}

/* Write @text to a fresh file with @mode; its path in @path. */
static int key_file(char *path, const char *text, mode_t mode)
{
	int fd;

	strcpy(path, "/tmp/rmawin_key.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fchmod(fd, mode)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/*
 * The job key from RMAWIN_JOB_KEY (hex) or RMAWIN_JOB_KEY_FILE (a file
 * only its owner may read); two ranks with none are refused with -ENOKEY.
 */
TEST_F(path, ep_open_env_job_key)
{
	const char *hex32 = "00112233445566778899aabbccddeeff";
	char *saved = getenv("RMAWIN_JOB_KEY") ? strdup(getenv("RMAWIN_JOB_KEY")) : NULL;
	struct rmawin_ep *ep = NULL;
	int port = rmawin_test_ports(2);
	char path[64], addrs[160];

	snprintf(addrs, sizeof(addrs), "%s:%d", rmawin_test_ip(), port);
	ASSERT_EQ(0, setenv("RMAWIN_RANK", "0", 1));
	ASSERT_EQ(0, setenv("RMAWIN_NRANKS", "1", 1));
	ASSERT_EQ(0, setenv("RMAWIN_ADDRS", addrs, 1));
	ASSERT_EQ(0, setenv("RMAWIN_IBDEV", rmawin_test_ibdev(), 1));
	ASSERT_EQ(0, setenv("RMAWIN_JOB_KEY", hex32, 1));
	ASSERT_EQ(0, rmawin_ep_open_env(&ep));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	/* not hex, odd, too short, too long */
	ASSERT_EQ(0, setenv("RMAWIN_JOB_KEY", "00112233445566778899aabbccddeefg", 1));
	EXPECT_EQ(-EINVAL, rmawin_ep_open_env(&ep));
	ASSERT_EQ(0, setenv("RMAWIN_JOB_KEY", "00112233445566778899aabbccddeeff0", 1));
	EXPECT_EQ(-EINVAL, rmawin_ep_open_env(&ep));
	ASSERT_EQ(0, setenv("RMAWIN_JOB_KEY", "00112233445566778899aabbccddee", 1));
	EXPECT_EQ(-EINVAL, rmawin_ep_open_env(&ep));
	ASSERT_EQ(0, setenv("RMAWIN_JOB_KEY", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00", 1));
	EXPECT_EQ(-EINVAL, rmawin_ep_open_env(&ep));
	ASSERT_EQ(0, unsetenv("RMAWIN_JOB_KEY"));

	/* a key file: only if nobody else may read it */
	ASSERT_EQ(0, key_file(path, "00112233445566778899aabbccddeeff\n", 0644));
	ASSERT_EQ(0, setenv("RMAWIN_JOB_KEY_FILE", path, 1));
	EXPECT_EQ(-EACCES, rmawin_ep_open_env(&ep));
	ASSERT_EQ(0, chmod(path, 0600));
	ASSERT_EQ(0, rmawin_ep_open_env(&ep));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	unlink(path);
	ASSERT_EQ(0, key_file(path, "short\n", 0600));
	ASSERT_EQ(0, setenv("RMAWIN_JOB_KEY_FILE", path, 1));
	EXPECT_EQ(-EINVAL, rmawin_ep_open_env(&ep));
	unlink(path);
	ASSERT_EQ(0, setenv("RMAWIN_JOB_KEY_FILE", "/nonexistent/key", 1));
	EXPECT_EQ(-ENOENT, rmawin_ep_open_env(&ep));
	ASSERT_EQ(0, unsetenv("RMAWIN_JOB_KEY_FILE"));

	/* two ranks and no key at all */
	ASSERT_EQ(0, setenv("RMAWIN_NRANKS", "2", 1));
	snprintf(addrs, sizeof(addrs), "%s:%d,%s:%d", rmawin_test_ip(), port, rmawin_test_ip(),
		 port + 1);
	ASSERT_EQ(0, setenv("RMAWIN_ADDRS", addrs, 1));
	EXPECT_EQ(-ENOKEY, rmawin_ep_open_env(&ep));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
	if (saved) {
		setenv("RMAWIN_JOB_KEY", saved, 1);
		free(saved);
	}
}

/* The status tool shows a live endpoint with its window and pinned pages. */
TEST_F(path, status_tool_shows_endpoint)
{
	struct rmawin_ep_attr attr = { .rank = 0, .nranks = 1 };
	static char mem[3 * 4096] __attribute__((aligned(4096)));
	char addr[96], out[8192];
	const char *addrs[] = { addr };
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	size_t n;
	FILE *f;

	snprintf(addr, sizeof(addr), "%s:%d", rmawin_test_ip(), rmawin_test_ports(1));
	attr.addrs = addrs;
	ASSERT_EQ(0, rmawin_ep_open(&attr, &ep));
	ASSERT_EQ(0, rmawin_win_create(ep, mem, sizeof(mem), 1, 0, &win));
	f = popen("../../tools/rmawin status", "r");
	ASSERT_NE(NULL, f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	EXPECT_EQ(0, pclose(f));
	EXPECT_NE(NULL, strstr(out, "rxe0/1  ACTIVE")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "endpoint ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "  windows 1\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "  pinned_pages 3\n")) TH_LOG("%s", out);
	EXPECT_EQ(0, rmawin_win_free(win));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	EXPECT_EQ(0, rmawin_stat("pinned_pages"));
}

TEST(strerror_never_null)
{
	int e;

	for (e = -200; e <= 200; e++) {
		const char *s = rmawin_strerror(e);

		ASSERT_NE(NULL, s);
		ASSERT_NE(0, s[0]);
	}
	EXPECT_NE(NULL, strstr(rmawin_strerror(-ENODEV), "device"));
}

TEST_HARNESS_MAIN
