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
 *
 * This file is the program: its command line, the table of benchmarks and
 * what they all report through.  The benchmarks are in bench_p2p.c (point
 * to point: latency, bandwidth, message rate), bench_sync.c (synchronization)
 * and bench_reg.c (window creation and the repeated put: what registering
 * memory costs); their iteration plans are at the top of rmawin_bench.h.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmawin_bench.h"
#include "stats.h"

#define CSV_HEADER	"bench,impl,requested,path,ranks,size,unit,median,p10,p90,samples"

const char *const bench_names[B_NR] = {
	[B_PUT_LAT] = "put_lat", [B_GET_LAT] = "get_lat", [B_ACC_LAT] = "acc_lat",
	[B_FOP_LAT] = "fop_lat", [B_FOP_LAT_SAME_OP] = "fop_lat_same_op",
	[B_CAS_LAT_SAME_OP] = "cas_lat_same_op", [B_PUT_BW] = "put_bw", [B_GET_BW] = "get_bw",
	[B_PUT_RATE] = "put_rate", [B_PUT_RATE_BATCH] = "put_rate_batch", [B_SYNC] = "sync", [B_WIN_CREATE] = "win_create",
	[B_PUT_REPEAT] = "put_repeat",
};

static int myrank = -1;

void die(const char *what, int err)
{
	if (myrank >= 0)
		fprintf(stderr, "rmawin_bench: rank %d: %s: %s\n", myrank, what,
			rmawin_strerror(err));
	else
		fprintf(stderr, "rmawin_bench: %s: %s\n", what, rmawin_strerror(err));
	exit(1);
}

/* librmawin returns a negative errno: stop the whole job on the first one. */
void ok(int ret, const char *what)
{
	if (ret < 0)
		die(what, ret);
}

void *alloc_touched(size_t size)
{
	void *p = bench_alloc_touched(size);

	if (!p)
		die("posix_memalign", -ENOMEM);
	return p;
}

/* ------------------------------------------------------------------------
 * Samples and the CSV
 */

void sample(struct bench *b, double v)
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
void report(struct bench *b, const char *name, int ranks, size_t size, const char *unit)
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

void progress(struct bench *b, const char *name)
{
	if (b->rank == 0)
		fprintf(stderr, "rmawin_bench: %s (%s path, %d ranks)\n", name, b->path,
			b->nranks);
}

double mib_per_s(size_t bytes, double us)
{
	return bytes / us * 1e6 / MIB;
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

/*
 * The command line, into @b (sizes), @which, @outfile and @header: -1 to go
 * on, else main's exit status (0 after -h, 2 for a bad command line).
 */
static int parse_options(int argc, char **argv, struct bench *b, unsigned int *which,
			 const char **outfile, int *header)
{
	int opt;

	while ((opt = getopt(argc, argv, "b:s:S:m:R:o:Hh")) != -1) {
		switch (opt) {
		case 'b':
			if (parse_benches(optarg, which))
				return 2;
			break;
		case 's':
		case 'S':
		case 'm':
		case 'R':
			if (parse_size(optarg, opt == 's' ? &b->min_size : opt == 'S' ?
				       &b->max_size : opt == 'm' ? &b->win_max : &b->repeat_size)) {
				fprintf(stderr, "rmawin_bench: bad size '%s'\n", optarg);
				return 2;
			}
			break;
		case 'o':
			*outfile = optarg;
			break;
		case 'H':
			*header = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || b->min_size < 8 || b->max_size < b->min_size || b->repeat_size < 8) {
		usage(stderr);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct bench b = {
		.min_size = 8, .max_size = 4 * MIB, .win_max = WIN_MAX_SIZE,
		.repeat_size = REPEAT_SIZE, .out = stdout,
	};
	const char *outfile = NULL, *no_ring;
	unsigned int which = 0;
	int header = 0, ret;

	ret = parse_options(argc, argv, &b, &which, &outfile, &header);
	if (ret >= 0)
		return ret;

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
