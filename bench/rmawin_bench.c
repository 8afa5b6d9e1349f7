// SPDX-License-Identifier: MIT
/*
 * rmawin_bench: librmawin measured with the patterns of perftest, so that
 * each figure has a yardstick measured the same way on the same device.
 *
 *   rmarun -n 2 -- bench/rmawin_bench [-b LIST] [-s MIN] [-S MAX] [-o FILE] [-H]
 *   rmarun -n 8 -- bench/rmawin_bench -b sync
 *   RMAWIN_NO_RING=1 rmarun -n 2 -- bench/rmawin_bench ...     (the ioctl path)
 *
 * Rank 0 writes one CSV line per measurement (see CSV_HEADER): the median
 * and the 10th and 90th percentiles of the samples.  Rank 0 is the origin
 * of every point-to-point benchmark and rank 1 its target; the other ranks
 * only take part in the collective calls and in the sync benchmarks, where
 * every rank works.  bench/run.sh runs it beside perftest; the pairing of
 * each benchmark with its yardstick is in Documentation/bench.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rmawin.h>

#include "stats.h"

#define CSV_HEADER	"bench,impl,requested,path,ranks,size,unit,median,p10,p90,samples"

#define KIB		((size_t)1 << 10)
#define MIB		((size_t)1 << 20)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Message sizes of the point-to-point benchmarks: 8 B, then every power of 4
 * from 16 B to 4 MiB.  bench/run.sh gives perftest the same list.
 */
static const size_t msg_sizes[] = {
	8, 16, 64, 256, 1 * KIB, 4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, 1 * MIB, 4 * MIB,
};

/*
 * The emulated device moves tens of MB/s, so the iteration counts bound the
 * traffic per size rather than the time.  bench/run.sh computes perftest's
 * counts with the same formulas: keep the two in step.
 *
 * Latency: LAT_BYTES / size iterations, within [LAT_MIN_ITERS, LAT_MAX_ITERS],
 * after LAT_WARMUP(iters) untimed ones.
 */
#define LAT_BYTES	(16 * MIB)
#define LAT_MIN_ITERS	10
#define LAT_MAX_ITERS	5000
#define LAT_WARMUP(n)	(2 + (n) / 10)
/* ... and stop after LAT_MAX_US of timed iterations if the plan takes longer. */
#define LAT_MAX_US	5e6

/*
 * Accumulate is applied by the target's kernel, at a few MB/s under emulation:
 * acc_lat stops at this size (-S still lowers it).
 */
#define ACC_MAX_SIZE	(256 * KIB)

/* Bandwidth: BW_REPS repetitions of BW_BYTES / size operations, bounded. */
#define BW_BYTES	(16 * MIB)
#define BW_MIN_OPS	5
#define BW_MAX_OPS	4096
#define BW_REPS		5
/* Operations in flight: issued back to back, then one flush, like ib_write_bw's TX queue. */
#define BW_WINDOW	64

/* Message rate: RATE_OPS 8-byte puts, then a flush; RATE_REPS times. */
#define RATE_OPS	8192
#define RATE_REPS	5
#define RATE_CHECK	256	/* puts between looks at the clock */

/* A bandwidth or rate repetition ends early once it has taken this long. */
#define REP_MAX_US	1e6

/* The window of fop_lat_same_op and cas_lat_same_op (8-byte aligned, as the flag needs). */
#define SAME_OP_WIN_SIZE	(4 * KIB)

/* Ping-pong: flush once in so many iterations, so that the origin's resources are reaped. */
#define PINGPONG_FLUSH	64

/* Fence, lock/unlock and flush: so many calls, after SYNC_WARMUP untimed ones. */
#define SYNC_ITERS	200
#define SYNC_WARMUP	10
#define SYNC_WIN_SIZE	(4 * KIB)

/* Window creation: 1 MiB to -m MAX (default 256 MiB) by powers of 4, WIN_REPS each. */
#define WIN_MIN_SIZE	(1 * MIB)
#define WIN_MAX_SIZE	(256 * MIB)
#define WIN_REPS	9

/* Repeated large put: -R SIZE bytes (default 64 MiB), REPEAT_REPS fresh buffers. */
#define REPEAT_SIZE	(64 * MIB)
#define REPEAT_REPS	3
#define REPEAT_WARM	2	/* puts from each buffer after its first (cold) one */

enum bench_id {
	B_PUT_LAT, B_GET_LAT, B_ACC_LAT, B_FOP_LAT, B_FOP_LAT_SAME_OP, B_CAS_LAT_SAME_OP,
	B_PUT_BW, B_GET_BW, B_PUT_RATE, B_PUT_RATE_BATCH, B_SYNC, B_WIN_CREATE, B_PUT_REPEAT,
	B_NR
};

static const char *const bench_names[B_NR] = {
	[B_PUT_LAT] = "put_lat", [B_GET_LAT] = "get_lat", [B_ACC_LAT] = "acc_lat",
	[B_FOP_LAT] = "fop_lat", [B_FOP_LAT_SAME_OP] = "fop_lat_same_op",
	[B_CAS_LAT_SAME_OP] = "cas_lat_same_op", [B_PUT_BW] = "put_bw", [B_GET_BW] = "get_bw",
	[B_PUT_RATE] = "put_rate", [B_PUT_RATE_BATCH] = "put_rate_batch", [B_SYNC] = "sync", [B_WIN_CREATE] = "win_create",
	[B_PUT_REPEAT] = "put_repeat",
};

/* the benchmarks on a window created with RMAWIN_WIN_SAME_OP: the device's atomics */
#define SAME_OP_BENCHES	((1u << B_FOP_LAT_SAME_OP) | (1u << B_CAS_LAT_SAME_OP))
#define P2P_BENCHES	((1u << B_PUT_LAT) | (1u << B_GET_LAT) | (1u << B_ACC_LAT) | \
			 (1u << B_FOP_LAT) | SAME_OP_BENCHES | (1u << B_PUT_BW) | \
			 (1u << B_GET_BW) | (1u << B_PUT_RATE) | (1u << B_PUT_RATE_BATCH))
#define ALL_BENCHES	((1u << B_NR) - 1)

struct bench {
	struct rmawin_ep *ep;
	int rank;
	int nranks;
	const char *requested;	/* "default", or "no_ring" under RMAWIN_NO_RING=1 */
	const char *path;	/* what the library actually uses: "ring" or "ioctl" */
	FILE *out;		/* rank 0's CSV */
	size_t min_size, max_size;
	size_t win_max;
	size_t repeat_size;
	uint64_t seq;		/* ping-pong sequence, in step on ranks 0 and 1 */

	/* the point-to-point benchmarks' window and origin buffer, max_size bytes each */
	struct rmawin_win *win;
	unsigned char *wbuf;
	unsigned char *obuf;
	/* a small window created with RMAWIN_WIN_SAME_OP, when a benchmark needs it */
	struct rmawin_win *win_same_op;
	unsigned char *sbuf;

	double *samples;
	size_t nsamples, cap;
};

static int myrank = -1;

static void die(const char *what, int err)
{
	if (myrank >= 0)
		fprintf(stderr, "rmawin_bench: rank %d: %s: %s\n", myrank, what,
			rmawin_strerror(err));
	else
		fprintf(stderr, "rmawin_bench: %s: %s\n", what, rmawin_strerror(err));
	exit(1);
}

/* librmawin returns a negative errno: stop the whole job on the first one. */
static void ok(int ret, const char *what)
{
	if (ret < 0)
		die(what, ret);
}

static void *alloc_touched(size_t size)
{
	void *p = bench_alloc_touched(size);

	if (!p)
		die("posix_memalign", -ENOMEM);
	return p;
}

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

/* ------------------------------------------------------------------------
 * Samples and the CSV
 */

static void sample(struct bench *b, double v)
{
	if (b->nsamples == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		double *s = realloc(b->samples, cap * sizeof(*s));

		if (!s)
			die("realloc", -ENOMEM);
		b->samples = s;
		b->cap = cap;
	}
	b->samples[b->nsamples++] = v;
}

/* Rank 0 writes the collected samples as one CSV line, and forgets them. */
static void report(struct bench *b, const char *name, int ranks, size_t size, const char *unit)
{
	double *v = b->samples;
	size_t n = b->nsamples;
	struct stats st;

	b->nsamples = 0;
	if (b->rank != 0 || !n)
		return;
	st = stats_of(v, n);
	fprintf(b->out, "%s,rmawin,%s,%s,%d,%zu,%s,%.6g,%.6g,%.6g,%zu\n", name, b->requested,
		b->path, ranks, size, unit, st.median, st.p10, st.p90, n);
	fflush(b->out);
}

static void progress(struct bench *b, const char *name)
{
	if (b->rank == 0)
		fprintf(stderr, "rmawin_bench: %s (%s path, %d ranks)\n", name, b->path,
			b->nranks);
}

static double mib_per_s(size_t bytes, double us)
{
	return bytes / us * 1e6 / MIB;
}

/* ------------------------------------------------------------------------
 * Point-to-point: rank 0 is the origin, rank 1 the target
 */

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

static void run_p2p(struct bench *b, unsigned int which)
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

/* ------------------------------------------------------------------------
 * Synchronization cost, every rank at once (run on 2, 4 and 8 ranks)
 */

enum sync_kind { S_FENCE, S_LOCK, S_LOCK_ALL, S_FLUSH, S_FLUSH_ALL };

static void sync_call(struct bench *b, struct rmawin_win *win, enum sync_kind kind,
		      const uint64_t *val)
{
	int next = (b->rank + 1) % b->nranks, r;

	switch (kind) {
	case S_FENCE:
		ok(rmawin_fence(win, 0), "fence");
		break;
	case S_LOCK:
		ok(rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, next), "lock");
		ok(rmawin_unlock(win, next), "unlock");
		break;
	case S_LOCK_ALL:
		ok(rmawin_lock_all(win), "lock_all");
		ok(rmawin_unlock_all(win), "unlock_all");
		break;
	case S_FLUSH:
		ok(rmawin_flush(win, next), "flush");
		break;
	case S_FLUSH_ALL:
		for (r = 0; r < b->nranks; r++)
			if (r != b->rank)
				ok(rmawin_put(win, val, 8, r, 8 * b->rank), "put");
		ok(rmawin_flush_all(win), "flush_all");
		break;
	}
}

/*
 * Control messages this process's endpoint has sent: its debugfs file is
 * the one that names our pid.  -1 without debugfs (not root, say).
 */
static long my_ctrl_msgs(void)
{
	char path[64], line[128];
	long val, pid, msgs;
	unsigned int id;
	FILE *f;

	for (id = 0; id < 4096; id++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/rmawin/ep%u", id);
		f = fopen(path, "r");
		if (!f)
			continue;
		pid = msgs = -1;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "pid %ld", &val) == 1)
				pid = val;
			else if (sscanf(line, "ctrl_msgs %ld", &val) == 1)
				msgs = val;
		}
		fclose(f);
		if (pid == getpid())
			return msgs;
	}
	return -1;
}

/*
 * fence: an empty fence; lock_unlock: lock (exclusive) and unlock of the
 * next rank; lock_all: lock_all and unlock_all; flush: an empty flush of
 * the next rank; flush_all: an 8-byte put to every other rank, then
 * flush_all.  Every rank runs the same loop; rank 0's times are reported.
 */
static void run_sync(struct bench *b)
{
	static const struct {
		const char *name;
		enum sync_kind kind;
		int in_lock_all;
	} kinds[] = {
		{ "fence", S_FENCE, 0 },
		{ "lock_unlock", S_LOCK, 0 },
		{ "lock_all", S_LOCK_ALL, 0 },
		{ "flush", S_FLUSH, 1 },
		{ "flush_all", S_FLUSH_ALL, 1 },
	};
	struct rmawin_win *win;
	uint64_t val = b->rank;
	unsigned char *mem;
	unsigned int k, i;
	long msgs = -1;
	double t;

	progress(b, "sync");
	mem = alloc_touched(SYNC_WIN_SIZE);
	ok(rmawin_win_create(b->ep, mem, SYNC_WIN_SIZE, 1, 0, &win), "win_create");
	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		ok(rmawin_barrier(b->ep), "barrier");
		if (kinds[k].in_lock_all)
			ok(rmawin_lock_all(win), "lock_all");
		if (kinds[k].kind == S_FENCE && b->rank == 0)
			msgs = my_ctrl_msgs();
		for (i = 0; i < SYNC_WARMUP + SYNC_ITERS; i++) {
			t = now_us();
			sync_call(b, win, kinds[k].kind, &val);
			if (i >= SYNC_WARMUP)
				sample(b, now_us() - t);
		}
		if (kinds[k].in_lock_all)
			ok(rmawin_unlock_all(win), "unlock_all");
		report(b, kinds[k].name, b->nranks, 0, "us");
		if (kinds[k].kind == S_FENCE && msgs >= 0 && my_ctrl_msgs() >= msgs) {
			/* the algorithm's growth, which sharing two CPUs cannot blur */
			sample(b, (double)(my_ctrl_msgs() - msgs) / (SYNC_WARMUP + SYNC_ITERS));
			report(b, "fence_msgs", b->nranks, 0, "msgs");
		}
		if (kinds[k].kind == S_FENCE)
			ok(rmawin_fence(win, RMAWIN_MODE_NOSUCCEED), "fence");
	}
	ok(rmawin_barrier(b->ep), "barrier");
	ok(rmawin_win_free(win), "win_free");
	free(mem);
}

/* ------------------------------------------------------------------------
 * Window creation, against ibv_reg_mr (bench/reg_mr.c)
 */

/*
 * Rank 0 exposes @size bytes of touched memory (2 MiB-aligned); the others expose
 * nothing, so that one process pins and registers what reg_mr registers,
 * plus the collective exchange of the window's keys.
 */
static void run_win_create(struct bench *b)
{
	double create[WIN_REPS], release[WIN_REPS], t0, t1;
	struct rmawin_win *win;
	unsigned char *mem;
	unsigned int rep;
	size_t size, len;

	progress(b, "win_create");
	for (size = WIN_MIN_SIZE; size <= b->win_max; size *= 4) {
		len = b->rank == 0 ? size : 0;
		mem = len ? alloc_touched(len) : NULL;
		for (rep = 0; rep < WIN_REPS; rep++) {
			ok(rmawin_barrier(b->ep), "barrier");
			t0 = now_us();
			ok(rmawin_win_create(b->ep, mem, len, 1, 0, &win), "win_create");
			t1 = now_us();
			ok(rmawin_win_free(win), "win_free");
			create[rep] = t1 - t0;
			release[rep] = now_us() - t1;
		}
		for (rep = 0; rep < WIN_REPS; rep++)
			sample(b, create[rep]);
		report(b, "win_create", b->nranks, size, "us");
		for (rep = 0; rep < WIN_REPS; rep++)
			sample(b, release[rep]);
		report(b, "win_free", b->nranks, size, "us");
		for (rep = 0; rep < WIN_REPS; rep++)
			sample(b, create[rep] + release[rep]);
		report(b, "win_create_free", b->nranks, size, "us");
		free(mem);
	}
}

/* ------------------------------------------------------------------------
 * Repeated large put: the registration cache cold, warm, and not needed
 */

static double put_flush_us(struct rmawin_win *win, const void *origin, size_t len)
{
	double t = now_us();

	ok(rmawin_put(win, origin, len, 1, 0), "put");
	ok(rmawin_flush(win, 1), "flush");
	return now_us() - t;
}

/*
 * Each of REPEAT_REPS fresh anonymous buffers (unmapped afterwards, which
 * invalidates its cache entry) is put once cold, then REPEAT_WARM times
 * warm; between buffers, one put from rank 0's own window memory.
 */
static void run_put_repeat(struct bench *b)
{
	double cold[REPEAT_REPS], warm[REPEAT_REPS * REPEAT_WARM], win_mem[REPEAT_REPS];
	size_t len = b->repeat_size;
	struct rmawin_win *win;
	unsigned int rep, i;
	void *base, *buf;

	progress(b, "put_repeat");
	ok(rmawin_win_allocate(b->ep, len, 1, 0, &base, &win), "win_allocate");
	ok(rmawin_barrier(b->ep), "barrier");
	if (b->rank == 0) {
		memset(base, 0x5a, len);
		ok(rmawin_lock_all(win), "lock_all");
		put_flush_us(win, base, len);
		for (rep = 0; rep < REPEAT_REPS; rep++) {
			buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				   -1, 0);
			if (buf == MAP_FAILED)
				die("mmap", -errno);
			memset(buf, rep + 1, len);
			cold[rep] = put_flush_us(win, buf, len);
			for (i = 0; i < REPEAT_WARM; i++)
				warm[rep * REPEAT_WARM + i] = put_flush_us(win, buf, len);
			munmap(buf, len);
			win_mem[rep] = put_flush_us(win, base, len);
		}
		ok(rmawin_unlock_all(win), "unlock_all");
		for (rep = 0; rep < REPEAT_REPS; rep++)
			sample(b, mib_per_s(len, cold[rep]));
		report(b, "put_repeat_cold", 2, len, "MiB/s");
		for (i = 0; i < REPEAT_REPS * REPEAT_WARM; i++)
			sample(b, mib_per_s(len, warm[i]));
		report(b, "put_repeat_warm", 2, len, "MiB/s");
		for (rep = 0; rep < REPEAT_REPS; rep++)
			sample(b, mib_per_s(len, win_mem[rep]));
		report(b, "put_from_win", 2, len, "MiB/s");
	}
	ok(rmawin_barrier(b->ep), "barrier");
	ok(rmawin_win_free(win), "win_free");
}

/* ------------------------------------------------------------------------
 * Command line
 */

static void usage(FILE *f)
{
	unsigned int i;

	fprintf(f,
		"usage: rmarun -n N -- rmawin_bench [-b LIST] [-s MIN] [-S MAX] [-m WINMAX]\n"
		"                                   [-R SIZE] [-o FILE] [-H]\n"
		"\n"
		"librmawin measured like perftest; rank 0 writes CSV (" CSV_HEADER ").\n"
		"RMAWIN_NO_RING=1 in the environment measures the ioctl path.\n"
		"\n"
		"  -b LIST    comma-separated benchmarks, or p2p (the first ten) or all;\n"
		"             default: all on 2 ranks, sync on more\n"
		"  -s MIN     smallest message size of the point-to-point benchmarks (8)\n"
		"  -S MAX     largest message size (4M)\n"
		"  -m WINMAX  largest window of win_create (256M)\n"
		"  -R SIZE    size of the repeated put (64M)\n"
		"  -o FILE    write the CSV to FILE instead of standard output\n"
		"  -H         write the CSV header line first\n"
		"\n"
		"Sizes take a K, M or G suffix.  Benchmarks:");
	for (i = 0; i < B_NR; i++)
		fprintf(f, " %s", bench_names[i]);
	fprintf(f, "\nSee Documentation/bench.rst.\n");
}

static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'G':
		v <<= 10;
		/* fall through */
	case 'M':
		v <<= 10;
		/* fall through */
	case 'K':
		v <<= 10;
		end++;
		break;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_benches(const char *list, unsigned int *which)
{
	char *copy = strdup(list), *tok, *save = NULL;
	unsigned int i;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	*which = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			*which |= ALL_BENCHES;
			continue;
		}
		if (!strcmp(tok, "p2p")) {
			*which |= P2P_BENCHES;
			continue;
		}
		for (i = 0; i < B_NR; i++)
			if (!strcmp(tok, bench_names[i]))
				break;
		if (i == B_NR) {
			fprintf(stderr, "rmawin_bench: unknown benchmark '%s'\n", tok);
			ret = -EINVAL;
			break;
		}
		*which |= 1u << i;
	}
	free(copy);
	return ret;
}

int main(int argc, char **argv)
{
	struct bench b = {
		.min_size = 8, .max_size = 4 * MIB, .win_max = WIN_MAX_SIZE,
		.repeat_size = REPEAT_SIZE, .out = stdout,
	};
	const char *outfile = NULL, *no_ring;
	unsigned int which = 0;
	int header = 0, opt, ret;

	while ((opt = getopt(argc, argv, "b:s:S:m:R:o:Hh")) != -1) {
		switch (opt) {
		case 'b':
			if (parse_benches(optarg, &which))
				return 2;
			break;
		case 's':
		case 'S':
		case 'm':
		case 'R':
			if (parse_size(optarg, opt == 's' ? &b.min_size : opt == 'S' ?
				       &b.max_size : opt == 'm' ? &b.win_max : &b.repeat_size)) {
				fprintf(stderr, "rmawin_bench: bad size '%s'\n", optarg);
				return 2;
			}
			break;
		case 'o':
			outfile = optarg;
			break;
		case 'H':
			header = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || b.min_size < 8 || b.max_size < b.min_size || b.repeat_size < 8) {
		usage(stderr);
		return 2;
	}

	ret = rmawin_ep_open_env(&b.ep);
	if (ret)
		die("rmawin_ep_open_env", ret);
	b.rank = rmawin_rank(b.ep);
	myrank = b.rank;
	b.nranks = rmawin_nranks(b.ep);
	ret = rmawin_ep_ring_active(b.ep);
	ok(ret, "rmawin_ep_ring_active");
	b.path = ret ? "ring" : "ioctl";
	no_ring = getenv("RMAWIN_NO_RING");
	b.requested = no_ring && atoi(no_ring) ? "no_ring" : "default";
	if (!which)
		which = b.nranks == 2 ? ALL_BENCHES : 1u << B_SYNC;
	if (b.nranks < 2) {
		fprintf(stderr, "rmawin_bench: needs at least 2 ranks (rmarun -n 2)\n");
		return 2;
	}

	if (b.rank == 0) {
		if (outfile) {
			b.out = fopen(outfile, "a");
			if (!b.out)
				die(outfile, -errno);
		}
		if (header)
			fprintf(b.out, "%s\n", CSV_HEADER);
	}

	if (which & P2P_BENCHES)
		run_p2p(&b, which);
	if (which & (1u << B_SYNC))
		run_sync(&b);
	if (which & (1u << B_WIN_CREATE))
		run_win_create(&b);
	if (which & (1u << B_PUT_REPEAT))
		run_put_repeat(&b);

	ok(rmawin_barrier(b.ep), "barrier");
	if (b.rank == 0 && b.out != stdout && fclose(b.out))
		die("fclose", -errno);
	free(b.samples);
	ok(rmawin_ep_close(b.ep), "ep_close");
	return 0;
}
