/* SPDX-License-Identifier: MIT */
/*
 * What rmawin_bench's files share: the iteration plans (bench/run.sh gives
 * perftest the same), the benchmarks' names, the state every benchmark runs
 * on, and what rmawin_bench.c provides them all: errors, memory, samples
 * and the CSV.
 */
#ifndef RMAWIN_BENCH_H
#define RMAWIN_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rmawin.h>

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

/* The table of benchmarks, indexed by enum bench_id (rmawin_bench.c). */
extern const char *const bench_names[B_NR];

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

/* rmawin_bench.c: errors, memory, samples and the CSV */
void die(const char *what, int err);
void ok(int ret, const char *what);
void *alloc_touched(size_t size);
void sample(struct bench *b, double v);
void report(struct bench *b, const char *name, int ranks, size_t size, const char *unit);
void progress(struct bench *b, const char *name);
double mib_per_s(size_t bytes, double us);

/* The benchmarks; every rank calls each that runs, in the same order. */
void run_p2p(struct bench *b, unsigned int which);	/* bench_p2p.c */
void run_sync(struct bench *b);				/* bench_sync.c */
void run_win_create(struct bench *b);			/* bench_reg.c */
void run_put_repeat(struct bench *b);			/* bench_reg.c */

#endif
