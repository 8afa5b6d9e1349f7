// SPDX-License-Identifier: GPL-2.0
/*
 * Put and get between the ranks of a group in one guest, checked byte for
 * byte: every rank to every rank (itself too), sizes on both sides of the
 * bounce limit (8192 bytes) up to 16 MiB, unaligned origins and targets,
 * displacement units 1, 4 and 8, window memory from malloc, mmap, the
 * stack and rmawin_win_allocate.  Every byte of a window outside the
 * ranges written must stay untouched, and the data carries a pattern of
 * (origin, target, size, offsets), so misplaced or stale bytes are caught.
 * Transfers across the boundary between a window's memory regions, and
 * origins inside an allocated window.  Lone puts, each flushed, take their
 * completions in their own system call.
 *
 * Epochs, windows and groups of unusual shape (many operations in one
 * epoch, 1024 in one ioctl, empty windows, several windows at once, a
 * group of one): rma_shapes_test.c.  The rules of RMAWIN_IOC_RMA, FENCE
 * and WIN_CREATE with their exact errnos are rma_errors_test.c's.
 *
 * Every test that opens endpoints through the library runs on both of its
 * paths: variants ring and no_ring (NAME_ring and NAME_no_ring where the
 * fixture has variants of its own).
 */
#include <arpa/inet.h>
#include <sys/wait.h>

#include "rma_test.h"

#define GUARD	64		/* bytes around every target range; a multiple of 8 */
#define MIB	(1024UL * 1024)

/* ---- the all-to-all engine ---------------------------------------------- */

static const char *const kind_names[] = {
	"malloc", "mmap", "mmap(MAP_SHARED)", "stack", "rmawin_win_allocate",
};

/* Offsets: of the origin data in its buffer, of the window in its memory, of the target. */
static const struct {
	size_t ooff;	/* origin (and get destination) buffer + ooff */
	size_t wshift;	/* window base = memory + wshift (not for allocated windows) */
	size_t tskew;	/* target range + tskew * disp_unit bytes */
} offsets[] = {
	{ 0, 0, 0 },	/* everything aligned */
	{ 1, 3, 1 },	/* odd origin, odd window base, odd target (unit 1) */
	{ 3, 1, 3 },
};

#define STACK_MAX_SIZE	8193
#define STACK_ARENA	(2 * (STACK_MAX_SIZE + 3 * GUARD + 64) + 64)

struct a2a {
	int port;		/* of rank 0; rank r's is port + r */
	enum mem_kind kind;
	const size_t *sizes;
	int nsizes;
	const unsigned int *units;
	int nunits;
	int noffsets;		/* the first this many of offsets[] */
};

/* Bytes of rank o's slot in a window: guard, skew, data, guard. */
static size_t slot_bytes(size_t size, unsigned int unit, size_t tskew)
{
	size_t b = GUARD + tskew * unit + size + GUARD;

	return (b + unit - 1) / unit * unit;
}

/* Window byte offset where origin @o's data lands (a multiple of @unit). */
static size_t region_of(int o, size_t slot, unsigned int unit, size_t tskew)
{
	return GUARD + (size_t)o * slot + GUARD + tskew * unit;
}

struct a2a_ctx {
	const struct a2a *c;
	int n;
	int me;			/* this rank */
	unsigned int unit;
	int oi;			/* index in offsets[] */
	unsigned char *win;	/* window base */
	size_t wlen;
	unsigned char **src;	/* per target: put origin buffers */
	unsigned char **dst;	/* per target: get destination buffers */
	int fails;
};

static void a2a_where(const struct a2a_ctx *x, size_t size, const char *what, int o,
		      int t, char *buf, size_t len)
{
	snprintf(buf, len, "%s of %zu bytes from rank %d to rank %d, %s memory, disp_unit %u, "
		 "origin +%zu, window base +%zu, target +%zu units", what, size, o, t,
		 kind_names[x->c->kind], x->unit, offsets[x->oi].ooff,
		 x->c->kind == MEM_ALLOCATE ? 0 : offsets[x->oi].wshift, offsets[x->oi].tskew);
}

/* Check this rank's window after the puts of @size: data where expected, WFILL elsewhere. */
static void a2a_check_window(struct a2a_ctx *x, size_t size, size_t slot)
{
	size_t tskew = offsets[x->oi].tskew, pos = 0, r;
	char where[256];
	long bad;
	int o;

	for (o = 0; o <= x->n; o++) {
		r = o < x->n ? region_of(o, slot, x->unit, tskew) : x->wlen;
		bad = rmawin_test_check_fill(x->win + pos, r - pos, WFILL);
		if (bad >= 0) {
			if (x->fails++ < 8) {
				a2a_where(x, size, "put", o < x->n ? o : x->n - 1, x->me, where,
					  sizeof(where));
				RMAWIN_TEST_MSG("window byte %zu (outside every target range, before "
						"rank %d's) is 0x%02x, want untouched 0x%02x; %s",
						pos + bad, o, x->win[pos + bad], WFILL, where);
			}
			return;
		}
		if (o == x->n)
			break;
		bad = check_pat(x->win + r, size, seed_of(PUT_DATA, o, x->me, size, r, x->unit));
		if (bad >= 0) {
			if (x->fails++ < 8) {
				a2a_where(x, size, "put", o, x->me, where, sizeof(where));
				RMAWIN_TEST_MSG("byte %ld of the target range (window byte %zu) is 0x%02x, "
						"want 0x%02x; %s", bad, r + bad, x->win[r + bad],
						pat_byte(seed_of(PUT_DATA, o, x->me, size, r, x->unit), bad),
						where);
			}
			return;
		}
		pos = r + size;
	}
}

static void a2a_check_gets(struct a2a_ctx *x, size_t size, size_t slot)
{
	size_t ooff = offsets[x->oi].ooff;
	size_t r = region_of(x->me, slot, x->unit, offsets[x->oi].tskew);
	char where[256];
	long bad;
	int t;

	for (t = 0; t < x->n; t++) {
		unsigned char *d = x->dst[t];

		a2a_where(x, size, "get", t, x->me, where, sizeof(where));
		bad = check_pat(d + GUARD + ooff, size,
				seed_of(GET_DATA, x->me, t, size, r, x->unit));
		if (bad >= 0) {
			if (x->fails++ < 8)
				RMAWIN_TEST_MSG("byte %ld got from rank %d is 0x%02x, want 0x%02x; %s",
						bad, t, d[GUARD + ooff + bad],
						pat_byte(seed_of(GET_DATA, x->me, t, size, r, x->unit), bad),
						where);
			continue;
		}
		bad = rmawin_test_check_fill(d, GUARD + ooff, GFILL);
		if (bad < 0) {
			bad = rmawin_test_check_fill(d + GUARD + ooff + size, GUARD, GFILL);
			if (bad >= 0)
				bad += GUARD + ooff + size;
		}
		if (bad >= 0 && x->fails++ < 8)
			RMAWIN_TEST_MSG("get buffer byte %ld (outside the %zu bytes got) is 0x%02x, want "
					"untouched 0x%02x; %s", bad, size, d[bad], GFILL, where);
	}
}

/* One size: all-to-all puts, check; then all-to-all gets, check. */
static int a2a_size(struct a2a_ctx *x, struct rmawin_win *win, size_t size)
{
	size_t ooff = offsets[x->oi].ooff, tskew = offsets[x->oi].tskew;
	size_t slot = slot_bytes(size, x->unit, tskew), r;
	int n = x->n, k, t, o;

	/* the last fence finished every access to the window: reset it */
	memset(x->win, WFILL, x->wlen);
	RMAWIN_TEST_TRY(20, rmawin_fence(win, 0));
	r = region_of(x->me, slot, x->unit, tskew);
	for (k = 0; k < n; k++) {
		t = (x->me + 1 + k) % n;	/* itself last */
		fill_pat(x->src[t] + ooff, size, seed_of(PUT_DATA, x->me, t, size, r, x->unit));
		RMAWIN_TEST_TRY(21, rmawin_put(win, x->src[t] + ooff, size, t, r / x->unit));
	}
	RMAWIN_TEST_TRY(22, rmawin_fence(win, 0));
	a2a_check_window(x, size, slot);

	/* the data each rank will get from this one, written locally */
	for (o = 0; o < n; o++) {
		r = region_of(o, slot, x->unit, tskew);
		fill_pat(x->win + r, size, seed_of(GET_DATA, o, x->me, size, r, x->unit));
	}
	RMAWIN_TEST_TRY(23, rmawin_fence(win, 0));
	r = region_of(x->me, slot, x->unit, tskew);
	for (k = 0; k < n; k++) {
		t = (x->me + k) % n;	/* itself first */
		memset(x->dst[t], GFILL, GUARD + ooff + size + GUARD);
		RMAWIN_TEST_TRY(24, rmawin_get(win, x->dst[t] + GUARD + ooff, size, t, r / x->unit));
	}
	RMAWIN_TEST_TRY(25, rmawin_fence(win, 0));
	a2a_check_gets(x, size, slot);
	return 0;
}

static int a2a_rank(int rank, int n, void *arg)
{
	const struct a2a *c = arg;
	unsigned char stack_win[STACK_ARENA + 8], stack_src[STACK_ARENA], stack_dst[STACK_ARENA];
	struct a2a_ctx x = { .c = c, .n = n, .me = rank };
	struct rmawin_ep *ep;
	size_t maxs = 0, maxslot;
	unsigned char *wmem = NULL;
	int ui, oi, i, t, ret;

	for (i = 0; i < c->nsizes; i++)
		maxs = c->sizes[i] > maxs ? c->sizes[i] : maxs;
	if (c->kind == MEM_STACK && (maxs > STACK_MAX_SIZE || n > 2)) {
		RMAWIN_TEST_MSG("stack windows are for small sizes on 2 ranks only");
		return 1;
	}
	x.src = calloc(n, sizeof(*x.src));
	x.dst = calloc(n, sizeof(*x.dst));
	if (!x.src || !x.dst)
		return 2;
	RMAWIN_TEST_TRY(3, rmawin_test_open(rank, n, c->port, &ep));

	for (ui = 0; ui < c->nunits; ui++) {
		for (oi = 0; oi < c->noffsets; oi++) {
			struct rmawin_win *win;
			size_t ooff = offsets[oi].ooff, wshift = offsets[oi].wshift;

			x.unit = c->units[ui];
			x.oi = oi;
			maxslot = slot_bytes(maxs, x.unit, offsets[oi].tskew);
			x.wlen = GUARD + n * maxslot + GUARD;
			/* buffers: origin and get destinations, one per target */
			for (t = 0; t < n; t++) {
				if (c->kind == MEM_STACK) {
					x.src[t] = stack_src + t * (STACK_ARENA / 2);
					x.dst[t] = stack_dst + t * (STACK_ARENA / 2);
				} else {
					x.src[t] = mem_get(c->kind, maxs + ooff);
					x.dst[t] = mem_get(c->kind, GUARD + ooff + maxs + GUARD);
					if (!x.src[t] || !x.dst[t])
						return 4;
				}
			}
			if (c->kind == MEM_ALLOCATE) {
				RMAWIN_TEST_TRY(5, rmawin_win_allocate(ep, x.wlen, x.unit, 0,
								(void **)&x.win, &win));
			} else {
				if (c->kind == MEM_STACK)
					wmem = stack_win;
				else
					wmem = mem_get(c->kind, x.wlen + wshift);
				if (!wmem)
					return 6;
				x.win = wmem + wshift;
				RMAWIN_TEST_TRY(7, rmawin_win_create(ep, x.win, x.wlen, x.unit, 0, &win));
			}
			for (i = 0; i < c->nsizes; i++) {
				ret = a2a_size(&x, win, c->sizes[i]);
				if (ret)
					return ret;
			}
			RMAWIN_TEST_TRY(8, rmawin_win_free(win));
			if (c->kind != MEM_STACK) {
				if (c->kind != MEM_ALLOCATE)
					mem_put(c->kind, wmem, x.wlen + wshift);
				for (t = 0; t < n; t++) {
					mem_put(c->kind, x.src[t], maxs + ooff);
					mem_put(c->kind, x.dst[t], GUARD + ooff + maxs + GUARD);
				}
			}
		}
	}
	RMAWIN_TEST_TRY(9, rmawin_ep_close(ep));
	if (x.fails)
		RMAWIN_TEST_MSG("%d mismatches in all (the first 8 shown)", x.fails);
	return x.fails ? 10 : 0;
}

static void a2a_run(struct __test_metadata *_metadata, int n, struct a2a *c)
{
	double t0 = rmawin_test_now();

	EXPECT_EQ(n, rmawin_test_run_ranks_for(_metadata, n, a2a_rank, c, 550));
	rmawin_test_expect_no_leaks(_metadata);
	TH_LOG("%d ranks, %s windows: %.1f s", n, kind_names[c->kind], rmawin_test_now() - t0);
}

/* Both sides of the bounce limit (8192), page sizes and crossings, odd sizes. */
static const size_t all_sizes[] = {
	1, 7, 8, 4095, 4096, 8191, 8192, 8193, 65537, MIB + 3,
};
static const size_t small_sizes[] = { 1, 7, 8, 4095, 4096, 8191, 8192, 8193 };
static const unsigned int all_units[] = { 1, 4, 8 };

/* Emulated soft-RoCE moves tens of MB/s: the matrix needs more than 30 s. */
FIXTURE(matrix) {};
FIXTURE_VARIANT(matrix) {
	int no_ring;
	enum mem_kind kind;
};
RMAWIN_TEST_VARIANT_ADD(matrix, malloc, .kind = MEM_MALLOC);
RMAWIN_TEST_VARIANT_ADD(matrix, mmap, .kind = MEM_MMAP);
RMAWIN_TEST_VARIANT_ADD(matrix, mmap_shared, .kind = MEM_MMAP_SHARED);
RMAWIN_TEST_VARIANT_ADD(matrix, stack, .kind = MEM_STACK);
RMAWIN_TEST_VARIANT_ADD(matrix, allocate, .kind = MEM_ALLOCATE);
FIXTURE_SETUP(matrix)
{
	rmawin_test_path(variant->no_ring);
}
FIXTURE_TEARDOWN(matrix) {}

/*
 * Two ranks, each puts to and gets from both (itself too): every size,
 * displacement unit and offset combination, window memory of one kind.
 */
TEST_F_TIMEOUT(matrix, two_ranks_sizes_units_offsets, 600)
{
	struct a2a c = {
		.port = rmawin_test_ports(2), .kind = variant->kind,
		.units = all_units, .nunits = 3, .noffsets = 3,
	};

	if (variant->kind == MEM_STACK) {
		c.sizes = small_sizes;
		c.nsizes = ARRAY_SIZE(small_sizes);
	} else {
		c.sizes = all_sizes;
		c.nsizes = ARRAY_SIZE(all_sizes);
	}
	a2a_run(_metadata, 2, &c);
}

/* A few sizes, all-to-all, on more ranks. */
static const size_t few_sizes[] = { 7, 8192, 8193, 65537 };
static const unsigned int few_units[] = { 1, 8 };

FIXTURE(ranks) {};
FIXTURE_VARIANT(ranks) {
	int no_ring;
	int n;
};
RMAWIN_TEST_VARIANT_ADD(ranks, two, .n = 2);
RMAWIN_TEST_VARIANT_ADD(ranks, four, .n = 4);
RMAWIN_TEST_VARIANT_ADD(ranks, eight, .n = 8);
FIXTURE_SETUP(ranks)
{
	rmawin_test_path(variant->no_ring);
}
FIXTURE_TEARDOWN(ranks) {}

TEST_F_TIMEOUT(ranks, all_to_all_put_get, 600)
{
	struct a2a c = {
		.port = rmawin_test_ports(variant->n), .kind = MEM_MALLOC,
		.sizes = few_sizes, .nsizes = 4, .units = few_units, .nunits = 2,
		.noffsets = 2,
	};

	a2a_run(_metadata, variant->n, &c);
}

/* ---- 16 MiB once per direction ------------------------------------------ */

#define HUGE_LEN	(16 * MIB)

/*
 * Rank 0 puts 16 MiB into rank 1's window and gets 16 MiB back from
 * another part of it; unaligned at both ends, across many of the
 * window's memory regions and many scatter/gather lists.
 */
static int huge_rank(int rank, int n, void *arg)
{
	size_t wlen = GUARD + 3 + HUGE_LEN + GUARD + HUGE_LEN + GUARD, toff = GUARD + 3;
	size_t goff = GUARD + 3 + HUGE_LEN + GUARD;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	unsigned char *w, *src = NULL, *dst = NULL;
	double t0;
	long bad;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	w = mem_get(MEM_MMAP, wlen + 1);
	if (!w)
		return 2;
	w += 1;		/* the window starts one byte into a page */
	memset(w, WFILL, wlen);
	if (rank == 0) {
		src = mem_get(MEM_MMAP, HUGE_LEN + 1);
		dst = mem_get(MEM_MMAP, HUGE_LEN + 2 + 2 * GUARD);
		if (!src || !dst)
			return 3;
		fill_pat(src + 1, HUGE_LEN, seed_of(PUT_DATA, 0, 1, HUGE_LEN, toff, 1));
		memset(dst, GFILL, HUGE_LEN + 2 + 2 * GUARD);
	} else {
		fill_pat(w + goff, HUGE_LEN, seed_of(GET_DATA, 0, 1, HUGE_LEN, goff, 1));
	}
	RMAWIN_TEST_TRY(4, rmawin_win_create(ep, w, wlen, 1, 0, &win));
	RMAWIN_TEST_TRY(5, rmawin_fence(win, 0));
	t0 = rmawin_test_now();
	if (rank == 0)
		RMAWIN_TEST_TRY(6, rmawin_put(win, src + 1, HUGE_LEN, 1, toff));
	RMAWIN_TEST_TRY(7, rmawin_fence(win, 0));
	if (rank == 0)
		RMAWIN_TEST_MSG("16 MiB put: %.1f s", rmawin_test_now() - t0);
	t0 = rmawin_test_now();
	if (rank == 0)
		RMAWIN_TEST_TRY(8, rmawin_get(win, dst + GUARD + 2, HUGE_LEN, 1, goff));
	RMAWIN_TEST_TRY(9, rmawin_fence(win, 0));
	if (rank == 0) {
		RMAWIN_TEST_MSG("16 MiB get: %.1f s", rmawin_test_now() - t0);
		bad = check_pat(dst + GUARD + 2, HUGE_LEN,
				seed_of(GET_DATA, 0, 1, HUGE_LEN, goff, 1));
		if (bad >= 0) {
			RMAWIN_TEST_MSG("byte %ld of the 16 MiB got is wrong", bad);
			return 10;
		}
		if (rmawin_test_check_fill(dst, GUARD + 2, GFILL) >= 0 ||
		    rmawin_test_check_fill(dst + GUARD + 2 + HUGE_LEN, GUARD, GFILL) >= 0) {
			RMAWIN_TEST_MSG("the 16 MiB get wrote outside its destination");
			return 11;
		}
		if (rmawin_test_check_fill(w, wlen, WFILL) >= 0) {
			RMAWIN_TEST_MSG("rank 0's own window changed");
			return 12;
		}
	} else {
		bad = check_pat(w + toff, HUGE_LEN, seed_of(PUT_DATA, 0, 1, HUGE_LEN, toff, 1));
		if (bad >= 0) {
			RMAWIN_TEST_MSG("byte %ld of the 16 MiB put is 0x%02x, want 0x%02x", bad,
					w[toff + bad],
					pat_byte(seed_of(PUT_DATA, 0, 1, HUGE_LEN, toff, 1), bad));
			return 13;
		}
		if (rmawin_test_check_fill(w, toff, WFILL) >= 0 ||
		    rmawin_test_check_fill(w + toff + HUGE_LEN, GUARD, WFILL) >= 0 ||
		    rmawin_test_check_fill(w + goff + HUGE_LEN, GUARD, WFILL) >= 0) {
			RMAWIN_TEST_MSG("the 16 MiB put wrote outside its target range");
			return 14;
		}
		bad = check_pat(w + goff, HUGE_LEN, seed_of(GET_DATA, 0, 1, HUGE_LEN, goff, 1));
		if (bad >= 0) {
			RMAWIN_TEST_MSG("the get changed the target window at byte %ld",
					goff + bad);
			return 15;
		}
	}
	RMAWIN_TEST_TRY(16, rmawin_win_free(win));
	RMAWIN_TEST_TRY(17, rmawin_ep_close(ep));
	return 0;
}

TEST_F_TIMEOUT(path, put_get_16mib, 300)
{
	int port = rmawin_test_ports(2);

	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, huge_rank, &port, 250));
	rmawin_test_expect_no_leaks(_metadata);
}

/* ---- transfers across the boundary between two memory regions -------- */

/*
 * Rank 1, after rank 0's put of @len bytes at offset @where of its window
 * @w (@wlen bytes, the region boundary at @b): the put landed whole, and
 * nothing outside it.  Return: 0, or the step of what is wrong.
 */
static int boundary_put_landed(const unsigned char *w, size_t wlen, size_t where, size_t len,
			       size_t b)
{
	long bad;

	bad = check_pat(w + where, len, seed_of(PUT_DATA, 0, 1, len, where, 1));
	if (bad >= 0) {
		RMAWIN_TEST_MSG("put of %zu bytes at window offset %zu (region boundary "
				"at %zu): byte %ld wrong", len, where, b, bad);
		return 7;
	}
	if (rmawin_test_check_fill(w, where, WFILL) >= 0 ||
	    rmawin_test_check_fill(w + where + len, wlen - where - len, WFILL) >= 0) {
		RMAWIN_TEST_MSG("put of %zu bytes at window offset %zu (region boundary "
				"at %zu) wrote outside its range", len, where, b);
		return 8;
	}
	return 0;
}

/*
 * Rank 0, after its get of @len bytes at offset @where into @dst: what rank
 * 1 laid out there arrived.  Return: 0, or the step if it did not.
 */
static int boundary_get_landed(const unsigned char *dst, size_t where, size_t len, size_t b)
{
	long bad = check_pat(dst, len, seed_of(GET_DATA, 0, 1, len, where, 1));

	if (bad >= 0) {
		RMAWIN_TEST_MSG("get of %zu bytes at window offset %zu (region boundary "
				"at %zu): byte %ld wrong", len, where, b, bad);
		return 12;
	}
	return 0;
}

/*
 * A window is registered in regions of at most 512 pages (2 MiB); its
 * first region starts where the window does, at an offset into a page.
 * Transfers that start before and end after the first boundary, of each
 * kind (bounced and pinned), must land exactly.
 */
static int chunk_rank(int rank, int n, void *arg)
{
	static const struct { long from; size_t len; } cases[] = {
		{ -1, 2 },		/* the last byte of one region, the first of the next */
		{ -100, 8192 },		/* bounced */
		{ -30001, 65537 },	/* pinned */
		{ 0, 1 },
		{ -1, 1 },
	};
	size_t wlen = 4 * MIB + 4096, pageoff = 5, b = 2 * MIB - pageoff, where;
	unsigned char *mem, *w, *src, *dst;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	unsigned int i;
	int ret;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	mem = mem_get(MEM_MMAP, wlen + pageoff);
	src = mem_get(MEM_MMAP, 65537 + 7);
	dst = mem_get(MEM_MMAP, 65537 + 7);
	if (!mem || !src || !dst)
		return 2;
	w = mem + pageoff;
	memset(w, WFILL, wlen);
	RMAWIN_TEST_TRY(3, rmawin_win_create(ep, w, wlen, 1, 0, &win));
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		where = b + cases[i].from;
		memset(w, WFILL, wlen);
		RMAWIN_TEST_TRY(4, rmawin_fence(win, 0));
		if (rank == 0) {
			fill_pat(src + 7, cases[i].len, seed_of(PUT_DATA, 0, 1, cases[i].len, where, 1));
			RMAWIN_TEST_TRY(5, rmawin_put(win, src + 7, cases[i].len, 1, where));
		}
		RMAWIN_TEST_TRY(6, rmawin_fence(win, 0));
		if (rank == 1) {
			ret = boundary_put_landed(w, wlen, where, cases[i].len, b);
			if (ret)
				return ret;
			fill_pat(w + where, cases[i].len,
				 seed_of(GET_DATA, 0, 1, cases[i].len, where, 1));
		}
		RMAWIN_TEST_TRY(9, rmawin_fence(win, 0));
		if (rank == 0)
			RMAWIN_TEST_TRY(10, rmawin_get(win, dst + 3, cases[i].len, 1, where));
		RMAWIN_TEST_TRY(11, rmawin_fence(win, 0));
		if (rank == 0) {
			ret = boundary_get_landed(dst + 3, where, cases[i].len, b);
			if (ret)
				return ret;
		}
	}
	/* and the very last byte of the window */
	RMAWIN_TEST_TRY(13, rmawin_fence(win, 0));
	if (rank == 0) {
		src[0] = 0x77;
		RMAWIN_TEST_TRY(14, rmawin_put(win, src, 1, 1, wlen - 1));
	}
	RMAWIN_TEST_TRY(15, rmawin_fence(win, 0));
	if (rank == 1 && w[wlen - 1] != 0x77) {
		RMAWIN_TEST_MSG("put into the last byte of the window did not land");
		return 16;
	}
	RMAWIN_TEST_TRY(17, rmawin_win_free(win));
	RMAWIN_TEST_TRY(18, rmawin_ep_close(ep));
	return 0;
}

TEST_F(path, across_memory_region_boundary)
{
	int port = rmawin_test_ports(2);

	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, chunk_rank, &port, 25));
	rmawin_test_expect_no_leaks(_metadata);
}

/* ---- origin buffers inside an allocated window --------------------------- */

/*
 * MPI programs put from and get into their own window memory (the halo
 * exchange does).  With rmawin_win_allocate that memory is the module's
 * pages mapped into the process: small and large origins there work too.
 */
static int origin_in_win_rank(int rank, int n, void *arg)
{
	static const size_t sizes[] = { 100, 8192, 8193, 200000 };
	size_t half = 512 * 1024, wlen = 2 * half, s;
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	unsigned char *w;
	unsigned int i;
	int peer = 1 - rank;
	long bad;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, *(int *)arg, &ep));
	RMAWIN_TEST_TRY(2, rmawin_win_allocate(ep, wlen, 1, 0, (void **)&w, &win));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		s = sizes[i];
		/* the first half is the origin of puts, the second receives them */
		memset(w + half, WFILL, half);
		fill_pat(w + 11, s, seed_of(PUT_DATA, rank, peer, s, 11, 1));
		RMAWIN_TEST_TRY(3, rmawin_fence(win, 0));
		RMAWIN_TEST_TRY(4, rmawin_put(win, w + 11, s, peer, half + 5));
		RMAWIN_TEST_TRY(5, rmawin_fence(win, 0));
		bad = check_pat(w + half + 5, s, seed_of(PUT_DATA, peer, rank, s, 11, 1));
		if (bad >= 0) {
			RMAWIN_TEST_MSG("put of %zu bytes from window memory: byte %ld wrong", s,
					bad);
			return 6;
		}
		if (rmawin_test_check_fill(w + half, 5, WFILL) >= 0 ||
		    rmawin_test_check_fill(w + half + 5 + s, half - 5 - s, WFILL) >= 0) {
			RMAWIN_TEST_MSG("put of %zu bytes from window memory wrote outside its range",
					s);
			return 7;
		}
		/* get the peer's first half into our second half */
		memset(w + half, GFILL, half);
		RMAWIN_TEST_TRY(8, rmawin_fence(win, 0));
		RMAWIN_TEST_TRY(9, rmawin_get(win, w + half + 3, s, peer, 11));
		RMAWIN_TEST_TRY(10, rmawin_fence(win, 0));
		bad = check_pat(w + half + 3, s, seed_of(PUT_DATA, peer, rank, s, 11, 1));
		if (bad >= 0) {
			RMAWIN_TEST_MSG("get of %zu bytes into window memory: byte %ld wrong", s,
					bad);
			return 11;
		}
		RMAWIN_TEST_TRY(12, rmawin_fence(win, 0));
	}
	RMAWIN_TEST_TRY(13, rmawin_win_free(win));
	RMAWIN_TEST_TRY(14, rmawin_ep_close(ep));
	return 0;
}

TEST_F(path, origin_inside_allocated_window)
{
	int port = rmawin_test_ports(2);

	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, origin_in_win_rank, &port, 25));
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * Lone puts, each flushed at once, as a latency loop makes them: in one
 * guest soft-RoCE runs a put's whole round trip when its system call
 * re-enables bottom halves, and the call then takes the completion off the
 * send CQ itself (kmod/scq.c) rather than leaving it to rxe's tasklet and
 * a softirq poller.  Every word put is read back on the target; on the
 * ioctl path at least half of the puts' completions must have been taken
 * so (the module's send_cqes_direct counter).  The ring's poller leaves
 * its writes to ksoftirqd, so there only the data is checked.
 */
#define LONE_PUTS	200

/*
 * Rank 0 puts @nputs words, word i holding @tag and i, into rank 1's
 * window, flushing after each or once after all; rank 1 reads them back.
 */
struct puts_plan {
	int port;
	int nputs;
	uint64_t tag;
	int flush_each;
};

#define PUTS_MAX	4096

static int puts_rank(int rank, int n, void *arg)
{
	static uint64_t mem[PUTS_MAX], src[PUTS_MAX];
	const struct puts_plan *p = arg;
	size_t size = p->nputs * sizeof(mem[0]);
	struct rmawin_win *win;
	struct rmawin_ep *ep;
	int i;

	RMAWIN_TEST_TRY(1, rmawin_test_open(rank, n, p->port, &ep));
	memset(mem, 0, size);
	RMAWIN_TEST_TRY(2, rmawin_win_create(ep, mem, size, 8, 0, &win));
	RMAWIN_TEST_TRY(3, rmawin_fence(win, 0));
	if (rank == 0) {
		RMAWIN_TEST_TRY(4, rmawin_lock(win, RMAWIN_LOCK_SHARED, 1));
		for (i = 0; i < p->nputs; i++) {
			src[i] = p->tag << 32 | i;
			RMAWIN_TEST_TRY(5, rmawin_put(win, &src[i], sizeof(src[i]), 1, i));
			if (p->flush_each || i == p->nputs - 1)
				RMAWIN_TEST_TRY(6, rmawin_flush(win, 1));
		}
		RMAWIN_TEST_TRY(7, rmawin_unlock(win, 1));
	}
	RMAWIN_TEST_TRY(8, rmawin_fence(win, 0));
	for (i = 0; rank == 1 && i < p->nputs; i++)
		if (mem[i] != (p->tag << 32 | i)) {
			RMAWIN_TEST_MSG("word %d is %#llx", i, (unsigned long long)mem[i]);
			return 9;
		}
	RMAWIN_TEST_TRY(10, rmawin_win_free(win));
	RMAWIN_TEST_TRY(11, rmawin_ep_close(ep));
	return 0;
}

TEST_F(path, lone_puts_completed_by_their_call)
{
	long direct = rmawin_stat("send_cqes_direct");
	long softirq = rmawin_stat("send_cqes_softirq");
	struct puts_plan plan = { rmawin_test_ports(2), LONE_PUTS, 0x10AD, 1 };

	ASSERT_LE(0, direct) TH_LOG("no counter send_cqes_direct");
	ASSERT_LE(0, softirq) TH_LOG("no counter send_cqes_softirq");
	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, puts_rank, &plan, 25));
	direct = rmawin_stat("send_cqes_direct") - direct;
	softirq = rmawin_stat("send_cqes_softirq") - softirq;
	TH_LOG("send completions: %ld by their call, %ld in softirq", direct, softirq);
	if (variant->no_ring)
		EXPECT_LE(LONE_PUTS / 2, direct);
	rmawin_test_expect_no_leaks(_metadata);
}

/*
 * A message rate's pattern: many puts, one flush.  The finished puts'
 * requests are reaped for the next ones once the endpoint's cache of them
 * runs dry, so a burst allocates only what is in flight at once (at most a
 * send queue's worth, 224 on rxe, and one), never one request per put.
 * Through the ring, whose puts are still in flight when the poller moves
 * on, it allocated 4096 before.
 */
#define BURST_PUTS	PUTS_MAX
#define REQ_CACHE	256	/* kmod/rmawin.h: RMAWIN_REQ_CACHE */

TEST_F(path, burst_of_puts_reuses_requests)
{
	long allocs = rmawin_stat("req_allocs");
	struct puts_plan plan = { rmawin_test_ports(2), BURST_PUTS, 0xB0B5, 0 };

	ASSERT_LE(0, allocs) TH_LOG("no counter req_allocs");
	EXPECT_EQ(2, rmawin_test_run_ranks_for(_metadata, 2, puts_rank, &plan, 60));
	allocs = rmawin_stat("req_allocs") - allocs;
	TH_LOG("%d puts and a flush allocated %ld requests", BURST_PUTS, allocs);
	EXPECT_LT(0, allocs);
	EXPECT_GE(REQ_CACHE, allocs);
	rmawin_test_expect_no_leaks(_metadata);
}

TEST_HARNESS_MAIN
