// SPDX-License-Identifier: MIT
/*
 * halo: the mesh (halo, ghost-cell) exchange of the MPI RMA literature,
 * written with librmawin.
 *
 * A 2-D Jacobi relaxation of Laplace's equation on an NY x NX interior grid
 * with fixed boundary values.  The interior rows are split into contiguous
 * blocks, one per rank.  Every iteration each rank puts its first owned row
 * into the ghost row below the upper neighbour's block and its last owned row
 * into the ghost row above the lower neighbour's block, between two fences,
 * then updates its block.  At the end rank 0 gets every block (one-sided
 * gets between fences), runs the same Jacobi serially on the full grid and
 * compares: the arithmetic is the same, so the two must agree exactly.
 *
 *   rmarun -n 4 -- examples/halo [-n NX] [-m NY] [-i ITERS] [-o PREFIX]
 *   examples/halo --serial [-n NX] [-m NY] [-i ITERS] [-o PREFIX]
 *
 * See Documentation/examples.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rmawin.h>

/*
 * Small enough for emulated soft-RoCE in the test VM (2000 fences), enough
 * iterations for the heat to spread visibly into the grid: Jacobi moves it
 * about sqrt(ITERS) cells.
 */
#define DEFAULT_NX	128
#define DEFAULT_NY	128
#define DEFAULT_ITERS	1000
#define MAX_DIM		65536
#define MAX_ITERS	100000000

/* Largest acceptable |parallel - serial| at any grid point. */
#define TOLERANCE	1e-12

static const double pi = 3.14159265358979323846;

static int myrank = -1;		/* for messages: -1 until known, and in serial mode */

/* "halo: rank 3: " once the rank is known, else "halo: " */
static const char *who(void)
{
	static char buf[32];

	if (myrank < 0)
		return "halo: ";
	snprintf(buf, sizeof(buf), "halo: rank %d: ", myrank);
	return buf;
}

struct params {
	int nx, ny;		/* interior size: columns, rows */
	int iters;
	const char *prefix;	/* -o: write PREFIX.dat and PREFIX.txt, or NULL */
	int serial;		/* --serial: no rmawin at all */
	int no_assert;		/* -A: fences without RMAWIN_MODE_* assertions */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: halo [-n NX] [-m NY] [-i ITERS] [-o PREFIX] [-s] [-A]\n"
		"\n"
		"2-D Jacobi relaxation with a one-sided halo exchange over librmawin;\n"
		"run it under a launcher: rmarun -n 4 -- examples/halo\n"
		"\n"
		"  -n NX         interior columns (default %d)\n"
		"  -m NY         interior rows, split across the ranks (default %d)\n"
		"  -i ITERS      Jacobi iterations (default %d)\n"
		"  -o PREFIX     rank 0 writes PREFIX.dat (gnuplot matrix) and PREFIX.txt\n"
		"  -s, --serial  only the serial solver: no rmawin calls, no launcher\n"
		"  -A            fences without RMAWIN_MODE_* assertions\n"
		"  -h, --help    this text\n",
		DEFAULT_NX, DEFAULT_NY, DEFAULT_ITERS);
}

/* Report a failed librmawin call and end the process: the launcher ends the others. */
static void rma_fail(const char *call, int err)
{
	const char *name = strstr(call, "rmawin_");	/* "ret = rmawin_rank(ep)" */

	name = name ? name : call;
	fprintf(stderr, "%s%.*s() failed: %s (%d)\n", who(), (int)strcspn(name, "("), name,
		rmawin_strerror(err), err);
	/* tools/vm sets RMAWIN_VM: outside it, point to it. */
	if (err == -ENOENT && !getenv("RMAWIN_VM"))
		fprintf(stderr, "%srun it in the test VM: tools/vm -- tools/rmarun -n 4 -- "
			"examples/halo, or without rmawin: examples/halo --serial\n", who());
	exit(1);
}

/* Every librmawin call goes through this: negative is an error. */
#define RMA(call)						\
	do {							\
		int rma_ret_ = (call);				\
		if (rma_ret_ < 0)				\
			rma_fail(#call, rma_ret_);		\
	} while (0)

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fprintf(stderr, "%sout of memory (%zu x %zu bytes)\n", who(), n, size);
		exit(1);
	}
	return p;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int parse_int(const char *s, int min, int max, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "halo: %s must be an integer in %d..%d, not \"%s\"\n",
			what, min, max, s);
		exit(2);
	}
	return (int)v;
}

static void parse_args(int argc, char **argv, struct params *p)
{
	static const struct option longopts[] = {
		{ "serial", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	p->nx = DEFAULT_NX;
	p->ny = DEFAULT_NY;
	p->iters = DEFAULT_ITERS;
	p->prefix = NULL;
	p->serial = 0;
	p->no_assert = 0;

	while ((c = getopt_long(argc, argv, "n:m:i:o:sAh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			p->nx = parse_int(optarg, 1, MAX_DIM, "NX (-n)");
			break;
		case 'm':
			p->ny = parse_int(optarg, 1, MAX_DIM, "NY (-m)");
			break;
		case 'i':
			p->iters = parse_int(optarg, 1, MAX_ITERS, "ITERS (-i)");
			break;
		case 'o':
			if (!*optarg) {
				fprintf(stderr, "halo: -o needs a non-empty PREFIX\n");
				exit(2);
			}
			p->prefix = optarg;
			break;
		case 's':
			p->serial = 1;
			break;
		case 'A':
			p->no_assert = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "halo: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		exit(2);
	}
}

/*
 * The grid, boundary included, is (NY + 2) x (NX + 2); row 0 is the top edge,
 * row NY + 1 the bottom edge, columns 0 and NX + 1 the left and right edges.
 * Fixed boundary values: the top edge is hot in the middle (a half sine from
 * 0 to 1 to 0), the left edge warm in the middle (half as high), the right and
 * bottom edges cold (0).  The interior starts at 0.
 */
static double initial_value(int row, int col, int nx, int ny)
{
	if (row == 0)
		return sin(pi * col / (nx + 1));
	if (col == 0)
		return 0.5 * sin(pi * row / (ny + 1));
	return 0.0;
}

/* Rows [grow0, grow0 + nrows) of the full grid into @u, rows nx + 2 wide. */
static void init_rows(double *u, int grow0, int nrows, int nx, int ny)
{
	size_t w = (size_t)nx + 2;
	int i, j;

	for (i = 0; i < nrows; i++)
		for (j = 0; j < nx + 2; j++)
			u[i * w + j] = initial_value(grow0 + i, j, nx, ny);
}

/*
 * Block decomposition of interior rows 1..NY: rank r owns rows
 * [*first, *first + *count); the first NY % nranks ranks get one more row.
 * Every rank computes every rank's block from (NY, nranks), so rank 0 knows
 * where to get from and each rank where its neighbours' ghost rows are.
 */
static void block(int ny, int nranks, int rank, int *first, int *count)
{
	int base = ny / nranks, extra = ny % nranks;

	*count = base + (rank < extra);
	*first = 1 + rank * base + (rank < extra ? rank : extra);
}

/*
 * One Jacobi sweep over @nrows rows.  @u points at the row above the first
 * one (a ghost row, or the top edge), rows are nx + 2 wide with the left and
 * right edges in them.  The new interior values go to @scratch (nrows x nx),
 * the sum of squared changes of each row to @rowres.  Serial and parallel
 * both use this one function, so they do the same floating-point operations
 * in the same order.
 */
static void sweep(const double *u, double *scratch, double *rowres, int nrows, int nx)
{
	size_t w = (size_t)nx + 2;
	int i, j;

	for (i = 1; i <= nrows; i++) {
		const double *up = u + (i - 1) * w, *me = u + i * w, *down = u + (i + 1) * w;
		double *out = scratch + (size_t)(i - 1) * nx;
		double sum = 0.0;

		for (j = 1; j <= nx; j++) {
			double v = 0.25 * ((up[j] + down[j]) + (me[j - 1] + me[j + 1]));
			double d = v - me[j];

			out[j - 1] = v;
			sum += d * d;
		}
		rowres[i - 1] = sum;
	}
}

/* The new values back into the interior of rows 1..nrows of @u. */
static void copy_back(double *u, const double *scratch, int nrows, int nx)
{
	size_t w = (size_t)nx + 2;
	int i;

	for (i = 1; i <= nrows; i++)
		memcpy(u + i * w + 1, scratch + (size_t)(i - 1) * nx, nx * sizeof(double));
}

/* L2 norm of the last update, from the per-row sums, always in row order. */
static double residual(const double *rowres, int ny)
{
	double sum = 0.0;
	int i;

	for (i = 0; i < ny; i++)
		sum += rowres[i];
	return sqrt(sum);
}

/* The reference: the same relaxation on the full grid in one process. */
static double *serial_solve(const struct params *p, double *res, double *secs)
{
	size_t w = (size_t)p->nx + 2;
	double *grid = xcalloc((p->ny + 2) * w, sizeof(double));
	double *scratch = xcalloc((size_t)p->ny * p->nx, sizeof(double));
	double *rowres = xcalloc(p->ny, sizeof(double));
	double t0 = now();
	int it;

	init_rows(grid, 0, p->ny + 2, p->nx, p->ny);
	for (it = 0; it < p->iters; it++) {
		sweep(grid, scratch, rowres, p->ny, p->nx);
		copy_back(grid, scratch, p->ny, p->nx);
	}
	*secs = now() - t0;
	*res = residual(rowres, p->ny);
	free(scratch);
	free(rowres);
	return grid;
}

/* What rank 0 knows at the end. */
struct result {
	int nranks;
	int min_rows, max_rows;	/* rows per rank */
	double res_par, res_ser;
	double maxdiff;
	double t_par, t_ser;	/* seconds: slowest rank's loop, serial solver */
	int ok;
};

static void print_summary(FILE *f, const struct params *p, const struct result *r)
{
	fprintf(f, "halo: grid NX x NY = %d x %d interior (%d x %d with the fixed boundary), %d iterations\n",
		p->nx, p->ny, p->nx + 2, p->ny + 2, p->iters);
	if (p->serial) {
		fprintf(f, "halo: serial only (--serial): no rmawin calls, nothing to compare\n");
		fprintf(f, "halo: residual (L2 norm of the last update): serial %.15e\n",
			r->res_ser);
		fprintf(f, "halo: time: serial %.3f s\n", r->t_ser);
		return;
	}
	fprintf(f, "halo: %d rank%s, %d..%d rows each, fences %s assertions\n", r->nranks,
		r->nranks == 1 ? "" : "s", r->min_rows, r->max_rows,
		p->no_assert ? "without" : "with");
	fprintf(f, "halo: residual (L2 norm of the last update): parallel %.15e, serial %.15e\n",
		r->res_par, r->res_ser);
	fprintf(f, "halo: max |parallel - serial| = %.3g (tolerance %.0e)\n", r->maxdiff,
		TOLERANCE);
	fprintf(f, "halo: time: parallel loop %.3f s (slowest rank), serial %.3f s\n",
		r->t_par, r->t_ser);
	fprintf(f, "halo: %s\n", r->ok ? "OK" : "MISMATCH");
}

static FILE *open_out(const char *prefix, const char *ext, char **name)
{
	size_t len = strlen(prefix) + strlen(ext) + 1;
	FILE *f;

	*name = xcalloc(len, 1);
	snprintf(*name, len, "%s%s", prefix, ext);
	f = fopen(*name, "w");
	if (!f) {
		fprintf(stderr, "halo: cannot create %s: %s\n", *name, strerror(errno));
		exit(1);
	}
	return f;
}

static void close_out(FILE *f, const char *name)
{
	if (ferror(f) | fclose(f)) {
		fprintf(stderr, "halo: error writing %s\n", name);
		exit(1);
	}
}

/* PREFIX.dat: the full grid, one row per line, top edge first (gnuplot "matrix"). */
static void write_outputs(const struct params *p, const struct result *r, const double *grid)
{
	size_t w = (size_t)p->nx + 2;
	char *dat_name, *txt_name;
	FILE *f;
	int i, j;

	f = open_out(p->prefix, ".dat", &dat_name);
	for (i = 0; i < p->ny + 2; i++)
		for (j = 0; j < p->nx + 2; j++)
			fprintf(f, "%.8g%c", grid[i * w + j], j == p->nx + 1 ? '\n' : ' ');
	close_out(f, dat_name);

	f = open_out(p->prefix, ".txt", &txt_name);
	print_summary(f, p, r);
	close_out(f, txt_name);

	printf("halo: wrote %s and %s\n", dat_name, txt_name);
	free(dat_name);
	free(txt_name);
}

/*
 * The parallel part (run_parallel() and the two below).
 *
 * Local memory of a rank that owns @nloc rows, in doubles, rows w = NX + 2 wide:
 *
 *   row 0                upper ghost row (rank 0: the fixed top edge)
 *   rows 1 .. nloc       owned rows
 *   row nloc + 1         lower ghost row (last rank: the fixed bottom edge)
 *   then nloc doubles    per-row residuals of the last sweep, and
 *   then 1 double        this rank's loop time: both read by rank 0 at the end
 *
 * All of it is one window with disp_unit sizeof(double), so a displacement is
 * an index into this array.  The window must stay on the same memory for its
 * whole life (the kernel pinned and registered it, the peers hold its keys),
 * so the usual pointer swap of Jacobi is out.  The sweep writes into a
 * private scratch array and the owned rows are copied back: one memcpy of
 * the block per iteration, cheap next to the stencil, and only one window
 * and one pair of fences per iteration.  (Two windows swapped every
 * iteration would save the copy but double the registrations, and each
 * iteration's fences would have to alternate between them.)
 */
/* One rank's part of the parallel run. */
struct rank_state {
	int nranks;
	int first, nloc;	/* first owned row (1-based in the full grid), how many */
	size_t w, row_bytes;	/* a row: NX + 2 doubles */
	double *u;		/* the window's memory, laid out as above */
	double *rowres;		/* its per-row residuals */
	double *looptime;	/* its loop time */
	struct rmawin_win *win;
	unsigned int open_assert, close_assert;
};

/* The iterations: each one a halo exchange between two fences, then a sweep. */
static void iterate(const struct params *p, struct rank_state *s)
{
	size_t w = s->w;
	double *u = s->u, *scratch, t0;
	int up_first, up_nloc, it;

	scratch = xcalloc((size_t)s->nloc * p->nx, sizeof(double));
	if (myrank > 0)
		block(p->ny, s->nranks, myrank - 1, &up_first, &up_nloc);
	else
		up_nloc = 0;

	t0 = now();
	for (it = 0; it < p->iters; it++) {
		/*
		 * Opens the epoch; also keeps the neighbours' puts out of my ghost
		 * rows until I have finished reading them in the previous sweep.
		 */
		RMA(rmawin_fence(s->win, s->open_assert));
		/* My first owned row -> the upper neighbour's lower ghost row. */
		if (myrank > 0)
			RMA(rmawin_put(s->win, u + w, s->row_bytes, myrank - 1,
				       (size_t)(up_nloc + 1) * w));
		/* My last owned row -> the lower neighbour's upper ghost row. */
		if (myrank < s->nranks - 1)
			RMA(rmawin_put(s->win, u + s->nloc * w, s->row_bytes, myrank + 1, 0));
		/* Completes the puts, here and at the targets: the ghost rows are in. */
		RMA(rmawin_fence(s->win, s->close_assert));

		sweep(u, scratch, s->rowres, s->nloc, p->nx);
		copy_back(u, scratch, s->nloc, p->nx);
	}
	*s->looptime = now() - t0;
	free(scratch);
}

/*
 * Gather onto rank 0 with gets in one more fence epoch: the opening fence
 * also makes every rank's last copy-back (a local store) visible to the
 * gets.  Rank 0 takes its own block by memcpy.  Returns the full grid on
 * rank 0 (and fills @r), NULL elsewhere.
 */
static double *gather(const struct params *p, const struct rank_state *s, struct result *r)
{
	size_t w = s->w;
	double *grid = NULL, *all_rowres = NULL, *times = NULL;
	int rk;

	if (myrank == 0) {
		grid = xcalloc((p->ny + 2) * w, sizeof(double));
		init_rows(grid, 0, p->ny + 2, p->nx, p->ny);
		all_rowres = xcalloc(p->ny, sizeof(double));
		times = xcalloc(s->nranks, sizeof(double));
		r->nranks = s->nranks;
		r->min_rows = r->max_rows = s->nloc;
	}

	RMA(rmawin_fence(s->win, s->open_assert));
	if (myrank == 0) {
		memcpy(grid + s->first * w, s->u + w, s->nloc * s->row_bytes);
		memcpy(all_rowres + s->first - 1, s->rowres, s->nloc * sizeof(double));
		times[0] = *s->looptime;
		for (rk = 1; rk < s->nranks; rk++) {
			int rfirst, rnloc;

			block(p->ny, s->nranks, rk, &rfirst, &rnloc);
			if (rnloc < r->min_rows)
				r->min_rows = rnloc;
			if (rnloc > r->max_rows)
				r->max_rows = rnloc;
			/* Owned rows, then the residuals and the time behind the ghost row. */
			RMA(rmawin_get(s->win, grid + rfirst * w, rnloc * s->row_bytes, rk, w));
			RMA(rmawin_get(s->win, all_rowres + rfirst - 1, rnloc * sizeof(double), rk,
				       (rnloc + 2) * w));
			RMA(rmawin_get(s->win, times + rk, sizeof(double), rk,
				       (rnloc + 2) * w + rnloc));
		}
	}
	RMA(rmawin_fence(s->win, s->close_assert));

	if (myrank == 0) {
		r->res_par = residual(all_rowres, p->ny);
		r->t_par = 0.0;
		for (rk = 0; rk < s->nranks; rk++)
			if (times[rk] > r->t_par)
				r->t_par = times[rk];
	}
	free(all_rowres);
	free(times);
	return grid;
}

/*
 * Returns, on rank 0 only, the gathered full grid (and fills @r); NULL on
 * the other ranks.
 */
static double *run_parallel(const struct params *p, struct result *r)
{
	struct rank_state s = { 0 };
	struct rmawin_ep *ep;
	double *grid;
	size_t nwin;
	int ret;

	RMA(rmawin_ep_open_env(&ep));
	RMA(ret = rmawin_rank(ep));
	myrank = ret;
	RMA(ret = rmawin_nranks(ep));
	s.nranks = ret;

	/* Every rank sees the same sizes, so every rank stops here, rank 0 says why. */
	if (p->ny < s.nranks) {
		if (myrank == 0)
			fprintf(stderr, "halo: %d rows cannot be split over %d ranks: use -m %d or more\n",
				p->ny, s.nranks, s.nranks);
		exit(2);
	}

	block(p->ny, s.nranks, myrank, &s.first, &s.nloc);
	s.w = (size_t)p->nx + 2;
	s.row_bytes = s.w * sizeof(double);
	nwin = (s.nloc + 2) * s.w + s.nloc + 1;
	s.u = xcalloc(nwin, sizeof(double));
	s.rowres = s.u + (s.nloc + 2) * s.w;
	s.looptime = s.rowres + s.nloc;
	/* Rows first-1 .. first+nloc of the full grid: ghosts start as 0 (or the edge). */
	init_rows(s.u, s.first - 1, s.nloc + 2, p->nx, p->ny);

	RMA(rmawin_win_create(ep, s.u, nwin * sizeof(double), sizeof(double), 0, &s.win));

	/*
	 * The assertions of the classic fence-based halo exchange (Using MPI-2 and
	 * Using Advanced MPI): the opening fence completes no RMA of ours (there is
	 * none between the closing fence and the next opening one), and between
	 * the two fences nobody stores locally into its window (the sweep writes
	 * scratch, the copy-back comes after the closing fence), and no RMA follows
	 * the closing fence before the next opening one.  Every rank passes the
	 * same assertions, as NOPRECEDE and NOSUCCEED require.
	 */
	if (!p->no_assert) {
		s.open_assert = RMAWIN_MODE_NOPRECEDE;
		s.close_assert = RMAWIN_MODE_NOSTORE | RMAWIN_MODE_NOPUT | RMAWIN_MODE_NOSUCCEED;
	}

	iterate(p, &s);
	grid = gather(p, &s, r);

	RMA(rmawin_win_free(s.win));
	RMA(rmawin_ep_close(ep));
	free(s.u);
	return grid;
}

int main(int argc, char **argv)
{
	struct params p;
	struct result r;
	double *grid = NULL, *ref;
	size_t i, n;

	parse_args(argc, argv, &p);
	memset(&r, 0, sizeof(r));

	if (!p.serial) {
		grid = run_parallel(&p, &r);
		if (myrank != 0)
			return 0;
	}

	/* Rank 0 (or --serial): the reference computation, on the full grid. */
	ref = serial_solve(&p, &r.res_ser, &r.t_ser);
	if (p.serial) {
		r.ok = 1;
	} else {
		n = (size_t)(p.ny + 2) * (p.nx + 2);
		r.maxdiff = 0.0;
		for (i = 0; i < n; i++) {
			double d = fabs(grid[i] - ref[i]);

			if (isnan(d)) {		/* a NaN anywhere is a mismatch */
				r.maxdiff = d;
				break;
			}
			if (d > r.maxdiff)
				r.maxdiff = d;
		}
		r.ok = r.maxdiff <= TOLERANCE &&
		       fabs(r.res_par - r.res_ser) <= TOLERANCE * fmax(1.0, r.res_ser);
	}

	print_summary(stdout, &p, &r);
	if (p.prefix)
		write_outputs(&p, &r, p.serial ? ref : grid);
	fflush(stdout);
	free(grid);
	free(ref);
	return r.ok ? 0 : 1;
}
