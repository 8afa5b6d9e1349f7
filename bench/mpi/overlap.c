// SPDX-License-Identifier: GPL-2.0
/*
 * overlap - passive-target progress: how long an origin's
 * lock/accumulate/unlock takes while the target computes without calling MPI.
 *
 *   overlap [-w create|allocate] [-o acc|fop] [-t T1,T2,...] [-i ITERS]
 *
 * Two ranks. For each compute time T (microseconds), ITERS times: both ranks
 * meet in a barrier; rank 1 (the target) spins for T us reading the clock
 * and nothing else; rank 0 (the origin) times MPI_Win_lock(EXCLUSIVE, 1),
 * one MPI_Accumulate SUM (-o acc) or MPI_Fetch_and_op SUM (-o fop) of one
 * int64 and MPI_Win_unlock; then both meet in a barrier. An MPI whose target
 * must enter the library to apply the operation (or to grant the lock) makes
 * the origin wait for the end of the compute phase, so its time grows with
 * T; one whose target side progresses by itself (the device, a progress
 * thread, rmawin's kernel) does not. After the last iteration the target
 * checks that every operation landed exactly once.
 *
 * Prints one line per T on rank 0:
 *   overlap <op> <win> T_us <T> median_us <m> p10_us <a> p90_us <b> n <n>
 * Plain MPI-3: built with each MPI's own mpicc, run with or without rmawin-mpi.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_T 32

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* the target's compute phase: the clock and nothing else, no MPI call */
static void compute(double us)
{
	double end = now_us() + us;

	while (now_us() < end)
		;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double pct(const double *v, int n, double p)
{
	double r = p * (n - 1);
	int lo = (int)r;

	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (r - lo) * (v[lo + 1] - v[lo]);
}

static void usage(void)
{
	fprintf(stderr, "usage: overlap [-w create|allocate] [-o acc|fop]"
		" [-t T1,T2,...] [-i ITERS]\n");
}

struct opts {
	const char *win_kind, *op;
	char tlist[256];	/* -t, the compute times as given */
	int iters;
};

/* Parse the command line into @o.  Return: 1 if an option is unknown, else 0. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c, bad = 0;

	while ((c = getopt(argc, argv, "w:o:t:i:")) != -1) {
		switch (c) {
		case 'w':
			o->win_kind = optarg;
			break;
		case 'o':
			o->op = optarg;
			break;
		case 't':
			snprintf(o->tlist, sizeof(o->tlist), "%s", optarg);
			break;
		case 'i':
			o->iters = atoi(optarg);
			break;
		default:
			bad = 1;
		}
	}
	return bad;
}

/* -t's list in @tlist (which it changes) as times in @ts.  Return: how many. */
static int parse_times(char *tlist, double *ts)
{
	char *tok, *save;
	int nt = 0;

	for (tok = strtok_r(tlist, ",", &save); tok && nt < MAX_T;
	     tok = strtok_r(NULL, ",", &save))
		ts[nt++] = atof(tok);
	return nt;
}

/* The window of one int64 at *@base, made as -w says, zeroed. */
static void make_win(const char *win_kind, int64_t **base, MPI_Win *win)
{
	if (!strcmp(win_kind, "create")) {
		MPI_Alloc_mem(sizeof(**base), MPI_INFO_NULL, base);
		**base = 0;
		MPI_Win_create(*base, sizeof(**base), sizeof(**base), MPI_INFO_NULL,
			       MPI_COMM_WORLD, win);
	} else {
		MPI_Win_allocate(sizeof(**base), sizeof(**base), MPI_INFO_NULL,
				 MPI_COMM_WORLD, base, win);
		**base = 0;
	}
}

/* The origin's epoch: lock rank 1 exclusive, one -o operation, unlock.  Return: its time in us. */
static double origin_epoch_us(const char *op, MPI_Win win)
{
	int64_t one = 1, old;
	double t0, t1;

	t0 = now_us();
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
	if (!strcmp(op, "acc"))
		MPI_Accumulate(&one, 1, MPI_INT64_T, 1, 0, 1,
			       MPI_INT64_T, MPI_SUM, win);
	else
		MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 0,
				 MPI_SUM, win);
	MPI_Win_unlock(1, win);
	t1 = now_us();
	return t1 - t0;
}

/*
 * One compute time @t_us: an untimed round, then -i timed ones, each
 * between two barriers, the origin's times in @samples.  Return: how many
 * operations the origin sent.
 */
static int run_t(const struct opts *o, int rank, double t_us, MPI_Win win, double *samples)
{
	int sent = 0;

	/* one untimed round first: connections, caches */
	for (int i = -1; i < o->iters; i++) {
		double us;

		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 1) {
			compute(t_us);
		} else {
			us = origin_epoch_us(o->op, win);
			if (i >= 0)
				samples[i] = us;
		}
		sent++;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	return sent;
}

/*
 * Both ranks pass an epoch on rank 1's window, then rank 1 reads it: does
 * it hold @expect?  Return: 1 if it does not, else 0.
 */
static int check_landed(int rank, MPI_Win win, const int64_t *base, int64_t expect)
{
	int bad = 0;

	MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
	MPI_Win_unlock(1, win);
	if (rank == 1) {
		int64_t got;

		MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
		got = *(volatile const int64_t *)base;
		MPI_Win_unlock(1, win);
		if (got != expect) {
			fprintf(stderr, "overlap: target holds %lld, expected %lld\n",
				(long long)got, (long long)expect);
			bad = 1;
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.win_kind = "allocate", .op = "acc", .tlist = "0,100,1000,10000,100000",
		.iters = 10,
	};
	double ts[MAX_T], *samples;
	int nt, rank, size, bad;
	int64_t *base, expect = 0;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	bad = parse_opts(argc, argv, &o);
	if (bad || size != 2 || o.iters < 1 ||
	    (strcmp(o.win_kind, "create") && strcmp(o.win_kind, "allocate")) ||
	    (strcmp(o.op, "acc") && strcmp(o.op, "fop"))) {
		if (rank == 0)
			usage();
		MPI_Finalize();
		return 2;
	}
	nt = parse_times(o.tlist, ts);

	make_win(o.win_kind, &base, &win);
	samples = calloc(o.iters, sizeof(*samples));
	if (!samples)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Barrier(MPI_COMM_WORLD);

	for (int t = 0; t < nt; t++) {
		expect += run_t(&o, rank, ts[t], win, samples);
		if (rank == 0) {
			qsort(samples, o.iters, sizeof(*samples), cmp_double);
			printf("overlap %s %s T_us %.0f median_us %.2f p10_us %.2f"
			       " p90_us %.2f n %d\n",
			       o.op, o.win_kind, ts[t], pct(samples, o.iters, 0.5),
			       pct(samples, o.iters, 0.1), pct(samples, o.iters, 0.9), o.iters);
			fflush(stdout);
		}
	}

	/* every operation landed exactly once */
	bad = check_landed(rank, win, base, expect);
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Win_free(&win);
	if (!strcmp(o.win_kind, "create"))
		MPI_Free_mem(base);
	free(samples);
	MPI_Finalize();
	return bad;
}
