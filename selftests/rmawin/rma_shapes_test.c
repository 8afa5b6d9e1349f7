// SPDX-License-Identifier: GPL-2.0
/*
 * Put and get in epochs, windows and groups of unusual shape, checked byte
 * for byte: 500 puts and 500 gets per rank in one epoch (far more than the
 * module's bounce buffers), 1024 operations in one RMAWIN_IOC_RMA, windows
 * of size 0 on some ranks and on every rank, four windows of different
 * memory, sizes and units alive and fenced at once, window handles that
 * agree across ranks, and a group of one.  The put/get matrix (every size,
 * unit, offset and kind of window memory, 2 to 8 ranks, 16 MiB):
 * rma_test.c.
 *
 * Every test that opens endpoints through the library runs on both of its
 * paths: variants ring and no_ring.
 */
#include "rma_test.h"

/* ---- many operations in one epoch --------------------------------------- */

#ifndef MANY
#define MANY		500	/* operations of each kind per rank */
#endif

/* Length of operation k: mostly small, now and then the whole bounce buffer. */
static size_t many_len(int k)
{
	if (k % 50 == 7)
		return 8192;
	return 1 + (k * 37) % 300;
}

/*
 * In one epoch every rank issues 500 puts and 500 gets, interleaved, to
 * targets in turn (itself included): far more than the module's bounce
 * buffers, so they are reused while the epoch is open.  Puts go to one
 * area of each window, gets read another.
 */
static int many_rank(int rank, int n, void *arg)
{
	size_t area, put_area = 0, get_area, wlen, off, len;
	unsigned char *w, *src, *dst;
	size_t *offs;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int k, t, o, fails = 0;
	long bad;

	/* slot k of origin o: at a running offset, so each has its own range */
	offs = calloc(MANY, sizeof(*offs));
	if (!offs)
		return 1;
	for (k = 0, off = 0; k < MANY; k++) {
		offs[k] = off;
		off += many_len(k) + 3;
	}
	area = off;
	get_area = (size_t)n * area;
	wlen = 2 * (size_t)n * area;
	w = mem_get(MEM_MMAP, wlen);
	src = mem_get(MEM_MALLOC, area);
	dst = mem_get(MEM_MALLOC, area);
	if (!w || !src || !dst)
		return 2;
	RMAWIN_TEST_TRY(3, rmawin_test_open(rank, n, *(int *)arg, &ep));
	memset(w, WFILL, wlen);
	/* what the others will get from us: rank o's k-th get reads slot (o, k) */
	for (o = 0; o < n; o++)
		for (k = 0; k < MANY; k++)
			if ((o + k) % n == rank)
				fill_pat(w + get_area + o * area + offs[k], many_len(k),
					 seed_of(GET_DATA, o, rank, many_len(k), k, 1));
	memset(dst, GFILL, area);
	RMAWIN_TEST_TRY(4, rmawin_win_create(ep, w, wlen, 1, 0, &win));
	RMAWIN_TEST_TRY(5, rmawin_fence(win, 0));
	for (k = 0; k < MANY; k++) {
		t = (rank + k) % n;
		len = many_len(k);
		fill_pat(src + offs[k], len, seed_of(PUT_DATA, rank, t, len, k, 1));
		RMAWIN_TEST_TRY(6, rmawin_put(win, src + offs[k], len, t,
				       put_area + rank * area + offs[k]));
		RMAWIN_TEST_TRY(7, rmawin_get(win, dst + offs[k], len, t,
				       get_area + rank * area + offs[k]));
	}
	RMAWIN_TEST_TRY(8, rmawin_fence(win, 0));
	for (o = 0; o < n; o++) {
		for (k = 0; k < MANY; k++) {
			if ((o + k) % n != rank)
				continue;
			len = many_len(k);
			bad = check_pat(w + o * area + offs[k], len,
					seed_of(PUT_DATA, o, rank, len, k, 1));
			if (bad >= 0 && fails++ < 8)
				RMAWIN_TEST_MSG("put %d of rank %d (%zu bytes): byte %ld wrong", k,
						o, len, bad);
			if (w[o * area + offs[k] + len] != WFILL && fails++ < 8)
				RMAWIN_TEST_MSG("put %d of rank %d (%zu bytes) wrote past its end",
						k, o, len);
		}
	}
	for (k = 0; k < MANY; k++) {
		t = (rank + k) % n;
		len = many_len(k);
		bad = check_pat(dst + offs[k], len, seed_of(GET_DATA, rank, t, len, k, 1));
		if (bad >= 0 && fails++ < 8)
			RMAWIN_TEST_MSG("get %d from rank %d (%zu bytes): byte %ld is 0x%02x", k, t,
					len, bad, dst[offs[k] + bad]);
		if (dst[offs[k] + len] != GFILL && fails++ < 8)
			RMAWIN_TEST_MSG("get %d from rank %d (%zu bytes) wrote past its end", k, t,
					len);
	}
	RMAWIN_TEST_TRY(9, rmawin_win_free(win));
	RMAWIN_TEST_TRY(10, rmawin_ep_close(ep));
	if (fails)
		RMAWIN_TEST_MSG("%d wrong operations", fails);
	return fails ? 11 : 0;
}

TEST_F_TIMEOUT(path, many_ops_one_epoch, 60)
{
	int port = rmawin_test_ports(3);

	EXPECT_EQ(3, rmawin_test_run_ranks_for(_metadata, 3, many_rank, &port, 45));
	rmawin_test_expect_no_leaks(_metadata);
}

/* ---- a batch of 1024 operations in one ioctl ----------------------------- */

#define BATCH	1024	/* the most one RMAWIN_IOC_RMA takes */

/* Each rank sends BATCH puts (half to itself) in one RMAWIN_IOC_RMA, then BATCH gets. */
static int batch_rank(int rank, int n, void *arg)
{
	size_t slot = 40, wlen = (size_t)n * BATCH * slot;
	struct rmawin_op_desc *ops;
	unsigned char *w, *src, *dst;
	struct rmawin_ep *ep;
	int k, t, fd, o;
	__u32 win;
	long bad;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	fd = rmawin_ep_fd(ep);
	w = mem_get(MEM_MALLOC, wlen);
	src = mem_get(MEM_MALLOC, BATCH * slot);
	dst = mem_get(MEM_MALLOC, BATCH * slot);
	ops = calloc(BATCH, sizeof(*ops));
	if (!w || !src || !dst || !ops)
		return 2;
	memset(w, WFILL, wlen);
	memset(dst, GFILL, BATCH * slot);
	if (rmawin_create_raw(fd, w, wlen, 1, &win)) {
		RMAWIN_TEST_MSG("WIN_CREATE: %s", strerror(errno));
		return 3;
	}
	for (k = 0; k < BATCH; k++) {
		t = (rank + k) % n;
		fill_pat(src + k * slot, k % slot + 1, seed_of(PUT_DATA, rank, t, k % slot + 1, k, 1));
		ops[k] = rmawin_test_op(RMAWIN_OP_PUT, win, t, src + k * slot, k % slot + 1,
				 (rank * BATCH + k) * slot);
	}
	if (rmawin_fence_raw(fd, win, 0) || rmawin_rma_raw(fd, ops, BATCH) || rmawin_fence_raw(fd, win, 0)) {
		RMAWIN_TEST_MSG("BATCH puts in one batch: %s", strerror(errno));
		return 4;
	}
	for (o = 0; o < n; o++)
		for (k = 0; k < BATCH; k++) {
			if ((o + k) % n != rank)
				continue;
			bad = check_pat(w + (o * BATCH + k) * slot, k % slot + 1,
					seed_of(PUT_DATA, o, rank, k % slot + 1, k, 1));
			if (bad >= 0) {
				RMAWIN_TEST_MSG("put %d of rank %d's batch: byte %ld wrong", k, o,
						bad);
				return 5;
			}
		}
	/* and get it all back */
	for (k = 0; k < BATCH; k++)
		ops[k] = rmawin_test_op(RMAWIN_OP_GET, win, (rank + k) % n, dst + k * slot,
				 k % slot + 1, (rank * BATCH + k) * slot);
	if (rmawin_fence_raw(fd, win, 0) || rmawin_rma_raw(fd, ops, BATCH) || rmawin_fence_raw(fd, win, 0)) {
		RMAWIN_TEST_MSG("BATCH gets in one batch: %s", strerror(errno));
		return 6;
	}
	for (k = 0; k < BATCH; k++) {
		t = (rank + k) % n;
		bad = check_pat(dst + k * slot, k % slot + 1,
				seed_of(PUT_DATA, rank, t, k % slot + 1, k, 1));
		if (bad >= 0) {
			RMAWIN_TEST_MSG("get %d of the batch (from rank %d): byte %ld wrong", k, t,
					bad);
			return 7;
		}
	}
	if (rmawin_free_raw(fd, win)) {
		RMAWIN_TEST_MSG("WIN_FREE: %s", strerror(errno));
		return 8;
	}
	RMAWIN_TEST_TRY(9, rmawin_ep_close(ep));
	return 0;
}

TEST_F_TIMEOUT(path, batch_of_1024_ops, 60)
{
	int port = rmawin_test_ports(2);

	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, batch_rank, &port, 45));
	rmawin_test_expect_no_leaks(_metadata);
}

/* ---- windows of size 0 -------------------------------------------------- */

/*
 * Ranks 0 and 2 expose nothing (rank 0 with a NULL base), rank 1 exposes
 * 4 KiB.  Everybody can reach rank 1; any non-empty access to rank 0 or 2,
 * from anywhere, is -ERANGE; an empty one is a no-op.
 */
static int zero_rank(int rank, int n, void *arg)
{
	unsigned char buf[4096], src[64], got[64];
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int t, ret;
	long bad;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	memset(buf, WFILL, sizeof(buf));
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, rank == 0 ? NULL : buf, rank == 1 ? sizeof(buf) : 0,
				      1, 0, &win));
	RMAWIN_TEST_TRY(3, rmawin_fence(win, 0));
	for (t = 0; t < n; t += 2) {
		ret = rmawin_put(win, src, 1, t, 0);
		if (ret != -ERANGE) {
			RMAWIN_TEST_MSG("1-byte put into rank %d's empty window: %d (%s), want -ERANGE",
					t, ret, rmawin_strerror(ret));
			return 4;
		}
		ret = rmawin_get(win, got, 64, t, 0);
		if (ret != -ERANGE) {
			RMAWIN_TEST_MSG("64-byte get from rank %d's empty window: %d (%s), want -ERANGE",
					t, ret, rmawin_strerror(ret));
			return 5;
		}
		ret = rmawin_put(win, src, 0, t, 0);
		if (ret) {
			RMAWIN_TEST_MSG("empty put into rank %d's empty window: %s, want success",
					t, rmawin_strerror(ret));
			return 6;
		}
	}
	fill_pat(src, sizeof(src), seed_of(PUT_DATA, rank, 1, sizeof(src), 0, 1));
	RMAWIN_TEST_TRY(7, rmawin_put(win, src, sizeof(src), 1, 100 + rank * 100));
	RMAWIN_TEST_TRY(8, rmawin_fence(win, 0));
	if (rank == 1) {
		for (t = 0; t < n; t++) {
			bad = check_pat(buf + 100 + t * 100, sizeof(src),
					seed_of(PUT_DATA, t, 1, sizeof(src), 0, 1));
			if (bad >= 0) {
				RMAWIN_TEST_MSG("put from rank %d: byte %ld wrong", t, bad);
				return 9;
			}
		}
	} else if (rmawin_test_check_fill(buf, sizeof(buf), WFILL) >= 0) {
		RMAWIN_TEST_MSG("memory behind an empty window changed");
		return 10;
	}
	RMAWIN_TEST_TRY(11, rmawin_get(win, got, sizeof(got), 1, 100 + rank * 100));
	RMAWIN_TEST_TRY(12, rmawin_fence(win, 0));
	if (memcmp(got, src, sizeof(got))) {
		RMAWIN_TEST_MSG("get back from rank 1 differs from what was put");
		return 13;
	}
	RMAWIN_TEST_TRY(14, rmawin_win_free(win));
	RMAWIN_TEST_TRY(15, rmawin_ep_close(ep));
	return 0;
}

TEST_F(path, empty_window_on_some_ranks)
{
	int port = rmawin_test_ports(3);

	EXPECT_EQ(3, rmawin_test_run_ranks_for(_metadata, 3, zero_rank, &port, 25));
	rmawin_test_expect_no_leaks(_metadata);
}

/* Every rank exposes nothing: create, fence, free all work. */
static int all_zero_rank(int rank, int n, void *arg)
{
	struct rmawin_win *win, *win2;
	struct rmawin_ep *ep;
	void *base;
	int ret;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, NULL, 0, 1, 0, &win));
	RMAWIN_TEST_TRY(3, rmawin_win_allocate(ep, 0, 8, 0, &base, &win2));
	RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));
	RMAWIN_TEST_TRY(4, rmawin_fence(win2, 0));
	ret = rmawin_put(win2, &ret, 1, (rank + 1) % n, 0);
	if (ret != -ERANGE) {
		RMAWIN_TEST_MSG("put into an empty allocated window: %d, want -ERANGE", ret);
		return 5;
	}
	RMAWIN_TEST_TRY(6, rmawin_fence(win2, 0));
	RMAWIN_TEST_TRY(7, rmawin_fence(win, 0));
	RMAWIN_TEST_TRY(8, rmawin_win_free(win));
	RMAWIN_TEST_TRY(9, rmawin_win_free(win2));
	RMAWIN_TEST_TRY(10, rmawin_ep_close(ep));
	return 0;
}

TEST_F(path, empty_window_on_every_rank)
{
	int port = rmawin_test_ports(2);

	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, all_zero_rank, &port, 25));
	rmawin_test_expect_no_leaks(_metadata);
}

/* ---- several windows at once --------------------------------------------- */

#define NWIN	4
#define MW_LEN	500	/* bytes per operation */
#define MW_GET	2000	/* window offset of the area gets read: a multiple of every unit */

/*
 * Four windows alive at once, of different memory, sizes and units,
 * created and freed in the same order everywhere; operations on all of
 * them interleaved in one epoch, fenced window by window (in an order
 * other than creation's), each checked.
 */
static int multi_rank(int rank, int n, void *arg)
{
	static const size_t lens[NWIN] = { 65536, 131072, 12288, 3000 };
	static const unsigned int units[NWIN] = { 1, 8, 4, 2 };
	static const int fence_order[NWIN] = { 2, 0, 3, 1 };
	struct rmawin_win *win[NWIN];
	unsigned char *mem[NWIN], *src[NWIN], *dst[NWIN];
	int i, t, o, round, prev = (rank + n - 1) % n, next = (rank + 1) % n;
	struct rmawin_ep *ep;
	size_t r;
	long bad;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	for (i = 0; i < NWIN; i++) {
		src[i] = malloc(MW_LEN);
		dst[i] = malloc(MW_LEN);
		if (!src[i] || !dst[i])
			return 2;
		if (i == 1) {
			RMAWIN_TEST_TRY(3, rmawin_win_allocate(ep, lens[i], units[i], 0,
							(void **)&mem[i], &win[i]));
		} else {
			mem[i] = i == 2 ? mem_get(MEM_MMAP, lens[i]) : malloc(lens[i]);
			if (!mem[i])
				return 4;
			RMAWIN_TEST_TRY(5, rmawin_win_create(ep, mem[i], lens[i], units[i], 0, &win[i]));
		}
		memset(mem[i], WFILL, lens[i]);
		/* what the next rank gets from this one */
		fill_pat(mem[i] + MW_GET, MW_LEN, seed_of(GET_DATA, next, rank, MW_LEN, i, 1));
	}
	for (round = 0; round < 3; round++) {
		for (i = 0; i < NWIN; i++)
			RMAWIN_TEST_TRY(6, rmawin_fence(win[i], 0));
		/* put to the next rank, get from the previous one, window after window */
		for (i = 0; i < NWIN; i++) {
			t = (i + round) % NWIN;
			r = (size_t)(rank * MW_LEN + 8 * round) / units[t];
			fill_pat(src[t], MW_LEN, seed_of(PUT_DATA, rank, next, MW_LEN, t * 10 + round, 1));
			RMAWIN_TEST_TRY(7, rmawin_put(win[t], src[t], MW_LEN, next, r));
			/* the get's own buffer, before the get: after it, it is the get's until the fence */
			memset(dst[NWIN - 1 - t], GFILL, MW_LEN);
			RMAWIN_TEST_TRY(8, rmawin_get(win[NWIN - 1 - t], dst[NWIN - 1 - t], MW_LEN, prev,
					       MW_GET / units[NWIN - 1 - t]));
		}
		for (i = 0; i < NWIN; i++)
			RMAWIN_TEST_TRY(9, rmawin_fence(win[fence_order[i]], 0));
		for (i = 0; i < NWIN; i++) {
			o = prev;
			r = (size_t)(o * MW_LEN + 8 * round) / units[i] * units[i];
			bad = check_pat(mem[i] + r, MW_LEN, seed_of(PUT_DATA, o, rank, MW_LEN,
								  i * 10 + round, 1));
			if (bad >= 0) {
				RMAWIN_TEST_MSG("round %d, window %d: put from rank %d: byte %ld wrong",
						round, i, o, bad);
				return 10;
			}
			bad = check_pat(dst[i], MW_LEN, seed_of(GET_DATA, rank, prev, MW_LEN, i, 1));
			if (bad >= 0) {
				RMAWIN_TEST_MSG("round %d, window %d: get from rank %d: byte %ld wrong",
						round, i, prev, bad);
				return 11;
			}
		}
	}
	for (i = 0; i < NWIN; i++)
		RMAWIN_TEST_TRY(12, rmawin_win_free(win[i]));
	RMAWIN_TEST_TRY(13, rmawin_ep_close(ep));
	return 0;
}

TEST_F(path, several_windows_interleaved)
{
	int port = rmawin_test_ports(3);

	EXPECT_EQ(3, rmawin_test_run_ranks_for(_metadata, 3, multi_rank, &port, 25));
	rmawin_test_expect_no_leaks(_metadata);
}

/* A window's handle is the same on every rank, and a new window gets a new one. */
struct handles {
	int port;
	__u32 h[4][3];
	int err[4];
};

static int handle_rank(int rank, int n, void *arg)
{
	struct handles *hs = arg;
	unsigned char mem[3][4096];
	struct rmawin_ep *ep;
	int fd, i;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, hs->port, &ep));
	fd = rmawin_ep_fd(ep);
	for (i = 0; i < 3; i++)
		if (rmawin_create_raw(fd, mem[i], 4096 - i * 100, 1 + i, &hs->h[rank][i]))
			hs->err[rank] = errno;
	/* free the first, make another: handles are never reused while alive */
	if (rmawin_free_raw(fd, hs->h[rank][0]) || rmawin_create_raw(fd, mem[0], 4096, 1, &hs->h[rank][0]))
		hs->err[rank] = errno;
	for (i = 0; i < 3; i++)
		if (rmawin_free_raw(fd, hs->h[rank][i]))
			hs->err[rank] = errno;
	RMAWIN_TEST_TRY(2, rmawin_ep_close(ep));
	return 0;
}

TEST_F(path, window_handles_agree)
{
	struct handles *hs = rmawin_test_shared(sizeof(*hs));
	int r, i;

	ASSERT_NE(NULL, hs);
	hs->port = rmawin_test_ports(4);
	EXPECT_EQ(4, rmawin_test_run_ranks_for(_metadata, 4, handle_rank, hs, 25));
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(0, hs->err[r]) {
			TH_LOG("rank %d: a raw WIN_CREATE/FREE failed: %s", r,
			       strerror(hs->err[r]));
		}
		for (i = 0; i < 3; i++) {
			EXPECT_EQ(hs->h[0][i], hs->h[r][i]) {
				TH_LOG("window %d: handle %u on rank 0, %u on rank %d", i,
				       hs->h[0][i], hs->h[r][i], r);
			}
		}
	}
	EXPECT_NE(hs->h[0][1], hs->h[0][2]);
	EXPECT_NE(hs->h[0][0], hs->h[0][1]);
	EXPECT_NE(hs->h[0][0], hs->h[0][2]);
	rmawin_test_expect_no_leaks(_metadata);
	munmap(hs, sizeof(*hs));
}

/* In a group of one, target 1 is no rank; target 0 is a local copy. */
TEST_F(path, singleton_rank_checks)
{
	unsigned char w[4096], src[300];
	struct rmawin_op_desc op;
	struct rmawin_ep *ep;
	int fd;
	__u32 win;

	ASSERT_EQ(0, rmawin_test_open(0, 1, rmawin_test_ports(1), &ep));
	fd = rmawin_ep_fd(ep);
	memset(w, WFILL, sizeof(w));
	ASSERT_EQ(0, rmawin_create_raw(fd, w, sizeof(w), 1, &win));
	ASSERT_EQ(0, rmawin_fence_raw(fd, win, 0));
	op = rmawin_test_op(RMAWIN_OP_PUT, win, 1, src, 1, 0);
	EXPECT_ERRNO(EINVAL, rmawin_rma_raw(fd, &op, 1));
	fill_pat(src, sizeof(src), 42);
	op = rmawin_test_op(RMAWIN_OP_PUT, win, 0, src, sizeof(src), 3);
	EXPECT_EQ(0, rmawin_rma_raw(fd, &op, 1));
	EXPECT_EQ(0, rmawin_fence_raw(fd, win, 0));
	EXPECT_EQ(-1, check_pat(w + 3, sizeof(src), 42));
	EXPECT_EQ(-1, rmawin_test_check_fill(w, 3, WFILL));
	EXPECT_EQ(-1, rmawin_test_check_fill(w + 3 + sizeof(src), sizeof(w) - 3 - sizeof(src), WFILL));
	EXPECT_EQ(0, rmawin_free_raw(fd, win));
	EXPECT_EQ(0, rmawin_ep_close(ep));
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_HARNESS_MAIN
