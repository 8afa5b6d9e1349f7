// SPDX-License-Identifier: MIT
/*
 * rmawin_bench's point-to-point benchmarks, each with its perftest
 * yardstick's pattern: latency (put, get, accumulate, fetch_and_op,
 * compare_and_swap), bandwidth (put, get) and message rate (put, batched
 * put).  Rank 0 is the origin, rank 1 the target.
 */
#include <stdlib.h>
#include <string.h>

#include "rmawin_bench.h"
#include "stats.h"

/* The plans' iteration counts (rmawin_bench.h); bench/run.sh computes perftest's alike. */
static size_t clamp_size(size_t v, size_t lo, size_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static unsigned int lat_iters(size_t size)
{
	return clamp_size(LAT_BYTES / size, LAT_MIN_ITERS, LAT_MAX_ITERS);
}

static unsigned int bw_ops(size_t size)
{
	return clamp_size(BW_BYTES / size, BW_MIN_OPS, BW_MAX_OPS);
}

/* Collective: every rank runs the same list, so every rank creates the same windows. */
static void p2p_setup(struct bench *b, unsigned int which)
{
	b->wbuf = alloc_touched(b->max_size);
	b->obuf = alloc_touched(b->max_size);
	ok(rmawin_win_create(b->ep, b->wbuf, b->max_size, 1, 0, &b->win), "win_create");
	if (!(which & SAME_OP_BENCHES))
		return;
	b->sbuf = alloc_touched(SAME_OP_WIN_SIZE);
	ok(rmawin_win_create(b->ep, b->sbuf, SAME_OP_WIN_SIZE, 8, RMAWIN_WIN_SAME_OP,
			     &b->win_same_op), "win_create (RMAWIN_WIN_SAME_OP)");
}

static void p2p_teardown(struct bench *b)
{
	if (b->win_same_op)
		ok(rmawin_win_free(b->win_same_op), "win_free");
	ok(rmawin_win_free(b->win), "win_free");
	free(b->sbuf);
	free(b->wbuf);
	free(b->obuf);
}

/* Marks the ping-pong's last ping, which rank 1 answers before it stops. */
#define LAST_PING	(1ull << 63)

/* Polls the window's memory until the sequence number @seq arrives; returns what came. */
static uint64_t wait_seq(const unsigned char *p, uint64_t seq)
{
	uint64_t v;

	do
		v = __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
	while ((v & ~LAST_PING) != seq);
	return v;
}

/* Whether a latency loop stops now: its plan is done, or its time is up. */
static int lat_done(unsigned int i, unsigned int warm, unsigned int iters, double start)
{
	if (i < warm + LAT_MIN_ITERS)
		return 0;
	return i >= warm + iters || now_us() - start > LAT_MAX_US;
}

/*
 * ib_write_lat's pattern: rank 0 puts @size bytes whose last 8 hold a fresh
 * sequence number into rank 1's window; rank 1 polls its own memory until
 * the number appears and puts the same back; the sample is half the round
 * trip, taken between successive iteration starts as perftest does.  Rank 0
 * alone decides when to stop, and tells rank 1 in the last ping.
 */
static void put_lat(struct bench *b, size_t size)
{
	unsigned int iters = lat_iters(size), warm = LAT_WARMUP(iters), i;
	int peer = 1 - b->rank;
	size_t off = size - 8;
	double t, prev = 0, start = 0;
	uint64_t v;

	for (i = 0; ; i++) {
		v = ++b->seq;
		if (b->rank == 0) {
			t = now_us();
			if (i > warm)
				sample(b, (t - prev) / 2);
			else if (i == warm)
				start = t;
			prev = t;
			if (i > warm && lat_done(i, warm, iters, start))
				v |= LAST_PING;
		} else {
			v = wait_seq(b->wbuf + off, v);
		}
		memcpy(b->obuf + off, &v, 8);
		ok(rmawin_put(b->win, b->obuf, size, peer, 0), "put");
		if (b->rank == 0)
			wait_seq(b->wbuf + off, v & ~LAST_PING);
		if ((i + 1) % PINGPONG_FLUSH == 0)
			ok(rmawin_flush(b->win, peer), "flush");
		if (v & LAST_PING)
			break;
	}
	ok(rmawin_flush(b->win, peer), "flush");
	report(b, "put_lat", 2, size, "us");
}

/* Rank 0 alone: one operation of @bench and its flush per sample, the whole time. */
static void op_lat(struct bench *b, enum bench_id bench, size_t size)
{
	unsigned int iters = lat_iters(size), warm = LAT_WARMUP(iters), i;
	struct rmawin_win *win = b->win;
	int64_t one = 1, old = 0, cmp = 0, swap;
	double t, start = 0;

	if (bench == B_FOP_LAT_SAME_OP || bench == B_CAS_LAT_SAME_OP)
		win = b->win_same_op;
	for (i = 0; !lat_done(i, warm, iters, start); i++) {
		t = now_us();
		if (i == warm)
			start = t;
		switch (bench) {
		case B_CAS_LAT_SAME_OP:
			/* a counter: each swap expects what the one before left, and succeeds */
			swap = cmp + 1;
			ok(rmawin_compare_and_swap(win, &swap, &cmp, &old, RMAWIN_INT64, 1, 0),
			   "compare_and_swap");
			break;
		case B_GET_LAT:
			ok(rmawin_get(b->win, b->obuf, size, 1, 0), "get");
			break;
		case B_ACC_LAT:
			ok(rmawin_accumulate(b->win, b->obuf, size / 8, RMAWIN_INT64, 1, 0,
					     RMAWIN_SUM), "accumulate");
			break;
		default:
			ok(rmawin_fetch_and_op(win, &one, &old, RMAWIN_INT64, 1, 0, RMAWIN_SUM),
			   "fetch_and_op");
			break;
		}
		ok(rmawin_flush(win, 1), "flush");
		if (i >= warm)
			sample(b, now_us() - t);
		if (bench == B_CAS_LAT_SAME_OP)
			cmp = old == cmp ? cmp + 1 : old;
	}
	report(b, bench_names[bench], 2, size, "us");
}

/* ib_read_lat's pattern: a get and its flush, the whole time per operation. */
static void get_lat(struct bench *b, size_t size)
{
	op_lat(b, B_GET_LAT, size);
}

/* Like ib_atomic_lat, for the accumulate family: accumulate SUM of int64s and its flush. */
static void acc_lat(struct bench *b, size_t size)
{
	op_lat(b, B_ACC_LAT, size);
}

/* ib_atomic_lat (FETCH_AND_ADD) itself: a fetch_and_op SUM of one int64 and its flush. */
static void fop_lat(struct bench *b, size_t size)
{
	op_lat(b, B_FOP_LAT, size);
}

/* fop_lat on a window that promises same_op: the device's fetch-and-add. */
static void fop_lat_same_op(struct bench *b, size_t size)
{
	op_lat(b, B_FOP_LAT_SAME_OP, size);
}

/* A compare_and_swap of one int64 (always succeeding) and its flush, on the same window. */
static void cas_lat_same_op(struct bench *b, size_t size)
{
	op_lat(b, B_CAS_LAT_SAME_OP, size);
}

typedef int (*rma_fn)(struct rmawin_win *win, void *origin, size_t len, int target,
		      size_t target_disp);

static int put_fn(struct rmawin_win *win, void *origin, size_t len, int target, size_t disp)
{
	return rmawin_put(win, origin, len, target, disp);
}

/*
 * ib_write_bw's pattern: operations issued back to back with up to
 * BW_WINDOW in flight, the window drained by a flush; bytes over time.
 * One operation first, so that a large origin buffer is registered already.
 */
static void rma_bw(struct bench *b, const char *name, rma_fn fn, size_t size)
{
	unsigned int ops = bw_ops(size), rep, done;
	double t;

	ok(fn(b->win, b->obuf, size, 1, 0), name);
	ok(rmawin_flush(b->win, 1), "flush");
	for (rep = 0; rep < BW_REPS; rep++) {
		t = now_us();
		for (done = 0; done < ops;) {
			ok(fn(b->win, b->obuf, size, 1, 0), name);
			if (++done % BW_WINDOW && done < ops)
				continue;
			ok(rmawin_flush(b->win, 1), "flush");
			if (now_us() - t > REP_MAX_US)
				break;
		}
		sample(b, mib_per_s((size_t)done * size, now_us() - t));
	}
	report(b, name, 2, size, "MiB/s");
}

/* ib_write_bw -s 8's message rate: many 8-byte puts, then one flush. */
static void put_rate(struct bench *b, size_t size)
{
	unsigned int rep, done;
	double t;

	for (rep = 0; rep < RATE_REPS; rep++) {
		t = now_us();
		for (done = 0; done < RATE_OPS; done++) {
			ok(rmawin_put(b->win, b->obuf, size, 1, 0), "put");
			if (done % RATE_CHECK == RATE_CHECK - 1 && now_us() - t > REP_MAX_US) {
				done++;
				break;
			}
		}
		ok(rmawin_flush(b->win, 1), "flush");
		sample(b, done / (now_us() - t) * 1e6);
	}
	report(b, "put_rate", 2, size, "ops/s");
}

/* put_rate with the puts prepared in batches of RATE_CHECK, one call per batch. */
static void put_rate_batch(struct bench *b, size_t size)
{
	struct rmawin_batch *batch;
	unsigned int rep, done, k;
	double t;

	ok(rmawin_batch_create(b->ep, RATE_CHECK, &batch), "batch_create");
	for (rep = 0; rep < RATE_REPS; rep++) {
		t = now_us();
		for (done = 0; done < RATE_OPS; done += RATE_CHECK) {
			for (k = 0; k < RATE_CHECK; k++)
				ok(rmawin_batch_put(batch, b->win, b->obuf, size, 1, 0), "batch_put");
			ok(rmawin_batch_submit(batch), "batch_submit");
			if (now_us() - t > REP_MAX_US) {
				done += RATE_CHECK;
				break;
			}
		}
		ok(rmawin_flush(b->win, 1), "flush");
		sample(b, done / (now_us() - t) * 1e6);
	}
	rmawin_batch_free(batch);
	report(b, "put_rate_batch", 2, size, "ops/s");
}

static void put_bw(struct bench *b, size_t size)
{
	rma_bw(b, "put_bw", put_fn, size);
}

static void get_bw(struct bench *b, size_t size)
{
	rma_bw(b, "get_bw", rmawin_get, size);
}

/*
 * In the order they run.  @max_size: the largest message size it runs at
 * (8: only 8 B); @pingpong: rank 1 takes part, else it waits in the final
 * barrier.
 */
static const struct {
	enum bench_id id;
	void (*run)(struct bench *b, size_t size);
	size_t max_size;
	int pingpong;
} p2p_benches[] = {
	{ B_PUT_LAT, put_lat, SIZE_MAX, 1 },
	{ B_GET_LAT, get_lat, SIZE_MAX, 0 },
	{ B_ACC_LAT, acc_lat, ACC_MAX_SIZE, 0 },
	{ B_FOP_LAT, fop_lat, 8, 0 },
	{ B_FOP_LAT_SAME_OP, fop_lat_same_op, 8, 0 },
	{ B_CAS_LAT_SAME_OP, cas_lat_same_op, 8, 0 },
	{ B_PUT_BW, put_bw, SIZE_MAX, 0 },
	{ B_GET_BW, get_bw, SIZE_MAX, 0 },
	{ B_PUT_RATE, put_rate, 8, 0 },
	{ B_PUT_RATE_BATCH, put_rate_batch, 8, 0 },
};

void run_p2p(struct bench *b, unsigned int which)
{
	unsigned int i, k;
	size_t size;

	p2p_setup(b, which);
	ok(rmawin_barrier(b->ep), "barrier");
	/* the origin's passive-target epoch; rank 1 needs one to put the pongs back */
	if (b->rank <= 1)
		ok(rmawin_lock_all(b->win), "lock_all");
	if (b->rank == 0 && b->win_same_op)
		ok(rmawin_lock_all(b->win_same_op), "lock_all");

	for (i = 0; i < ARRAY_SIZE(p2p_benches); i++) {
		if (!(which & (1u << p2p_benches[i].id)))
			continue;
		if (b->rank > 1 || (b->rank == 1 && !p2p_benches[i].pingpong))
			continue;
		progress(b, bench_names[p2p_benches[i].id]);
		for (k = 0; k < ARRAY_SIZE(msg_sizes); k++) {
			size = msg_sizes[k];
			if (size >= b->min_size && size <= b->max_size &&
			    size <= p2p_benches[i].max_size)
				p2p_benches[i].run(b, size);
		}
	}

	if (b->rank == 0 && b->win_same_op)
		ok(rmawin_unlock_all(b->win_same_op), "unlock_all");
	if (b->rank <= 1)
		ok(rmawin_unlock_all(b->win), "unlock_all");
	ok(rmawin_barrier(b->ep), "barrier");
	p2p_teardown(b);
}
