// SPDX-License-Identifier: GPL-2.0
/*
 * The registration cache for large origin buffers: a repeated put from the
 * same buffer hits, a buffer unmapped and mapped again at the same address
 * is pinned anew (the target sees the new contents, never stale pages),
 * and everything cached is released with the endpoint.
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <rmawin.h>

#include "rmawin_test.h"

/* Every test on both of the library's paths: path.ring.NAME and path.no_ring.NAME */
RMAWIN_TEST_PATHS(path);

#define LEN	(256 * 1024 + 123)

/* Rank @rank of 2, on ports @port and @port + 1. */
static int open_pair(int rank, int port, struct rmawin_ep **ep)
{
	return rmawin_test_open_on(rmawin_test_ip(), NULL, rank, 2, port, 0, ep);
}

static void fill(unsigned char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 13 + seed);
}

static int check(const unsigned char *p, size_t len, int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (unsigned char)(i * 13 + seed))
			return -1;
	return 0;
}

/*
 * Rank 1 puts LEN bytes into rank 0's window @rounds times; rank 0 checks
 * each round.  With @remap, rank 1 unmaps its buffer after every round and
 * maps a new one (MAP_FIXED at the same address) with other contents.
 */
static int put_rounds(int rank, int port, int rounds, int remap, long *hits)
{
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	unsigned char *buf = NULL, *winmem;
	long h0 = rmawin_stat("rcache_hits");
	int i, ret;

	if (open_pair(rank, port, &ep))
		return 1;
	if (rmawin_win_allocate(ep, rank ? 0 : LEN, 1, 0, (void **)&winmem, &win))
		return 2;
	if (rmawin_fence(win, RMAWIN_MODE_NOPRECEDE))
		return 10;
	if (rank == 1) {
		buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			return 3;
	}
	for (i = 0; i < rounds; i++) {
		if (rank == 1) {
			if (remap && i) {
				if (munmap(buf, LEN) ||
				    mmap(buf, LEN, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != buf)
					return 4;
			}
			fill(buf, LEN, i);
			ret = rmawin_put(win, buf, LEN, 0, 0);
			if (ret)
				return 5;
		}
		if (rmawin_fence(win, 0))
			return 6;
		if (rank == 0 && check(winmem, LEN, i))
			return 7;	/* stale or misplaced data */
		if (rmawin_fence(win, 0))
			return 8;
	}
	*hits = rmawin_stat("rcache_hits") - h0;
	if (rmawin_win_free(win) || rmawin_ep_close(ep))
		return 9;
	return 0;
}

static void run_pair(struct __test_metadata *_metadata, int rounds, int remap, long *hits)
{
	long *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			    -1, 0);
	int i, st, port = rmawin_test_ports(2);
	pid_t pid[2];

	ASSERT_NE(MAP_FAILED, shared);
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (!pid[i])
			_exit(put_rounds(i, port, rounds, remap, &shared[i]));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &st, 0));
		ASSERT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("rank %d failed at step %d", i,
						     WEXITSTATUS(st));
	}
	*hits = shared[1];
	munmap(shared, 4096);
	EXPECT_EQ(0, rmawin_stat("pinned_pages"));
	EXPECT_EQ(0, rmawin_stat("windows"));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
}

TEST_F(path, repeated_put_hits_cache)
{
	long hits = 0;

	run_pair(_metadata, 5, 0, &hits);
	/* the first put pins, the other four reuse */
	EXPECT_EQ(4, hits);
}

TEST_F(path, munmap_between_puts_sends_new_data)
{
	long hits = -1;

	run_pair(_metadata, 5, 1, &hits);
	/* every round's buffer is new memory: nothing may be reused */
	EXPECT_EQ(0, hits);
}

/*
 * A put whose pinning fails part way leaves its cache entry half pinned.
 * The origin buffer here is 300 anonymous pages followed by 8 pages of
 * /dev/mem's BIOS area (0xf0000): mapped, readable, but VM_PFNMAP, which
 * cannot be pinned.  The put over all 308 pages fails with -EFAULT after
 * its first 256 pages went out; a put of the first 280 pages right after
 * it (before anything reaps the first) must pin its own pages, never build
 * its scatter list from the half-pinned entry (whose later DMA addresses
 * were never set: a NULL dereference in rxe, DMA to bus address 0 on
 * hardware).
 */
#define HALF_ANON	300
#define HALF_PFNMAP	8
#define HALF_PUT	280

static int half_pinned_rank(int rank, int port)
{
	size_t anon = HALF_ANON * 4096UL, all = (HALF_ANON + HALF_PFNMAP) * 4096UL;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	unsigned char *buf, *winmem, *io;
	int mem, ret;

	if (open_pair(rank, port, &ep))
		return 1;
	if (rmawin_win_allocate(ep, rank ? 0 : all, 1, 0, (void **)&winmem, &win))
		return 2;
	if (rmawin_fence(win, RMAWIN_MODE_NOPRECEDE))
		return 3;
	if (rank == 1) {
		/* anonymous pages, the last of them replaced by /dev/mem's */
		mem = open("/dev/mem", O_RDONLY);
		if (mem < 0)
			return 4;
		buf = mmap(NULL, all, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			return 5;
		io = mmap(buf + anon, HALF_PFNMAP * 4096, PROT_READ, MAP_SHARED | MAP_FIXED, mem,
			  0xf0000);
		if (io != buf + anon)
			return 5;
		fill(buf, anon, 7);
		ret = rmawin_put(win, buf, all, 0, 0);
		if (ret != -EFAULT) {
			fprintf(stderr, "put over the VM_PFNMAP pages: %s\n", rmawin_strerror(ret));
			return 6;
		}
		if (rmawin_put(win, buf, HALF_PUT * 4096, 0, 0))
			return 7;
	}
	if (rmawin_fence(win, 0))
		return 8;
	if (rank == 0 && check(winmem, HALF_PUT * 4096, 7))
		return 9;
	if (rmawin_win_free(win) || rmawin_ep_close(ep))
		return 10;
	return 0;
}

TEST_F(path, half_pinned_entry_is_never_reused)
{
	int i, st, port = rmawin_test_ports(2);
	pid_t pid[2];

	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (!pid[i])
			_exit(half_pinned_rank(i, port));
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &st, 0));
		ASSERT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st)) TH_LOG("rank %d failed at step %d", i,
						     WEXITSTATUS(st));
	}
	EXPECT_EQ(0, rmawin_stat("pinned_pages"));
	EXPECT_EQ(0, rmawin_stat("endpoints"));
}

TEST_HARNESS_MAIN
