// SPDX-License-Identifier: MIT
/*
 * reg_mr: the yardstick of window creation.  Times ibv_reg_mr() and
 * ibv_dereg_mr() of touched memory (2 MiB-aligned) on one RDMA device, for the
 * sizes rmawin_bench's win_create uses, and writes the same CSV.
 *
 *   bench/reg_mr [-d DEVICE] [-m MAX] [-r REPS] [-H]
 *
 * See Documentation/bench.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "stats.h"

#define MIB		((size_t)1 << 20)
#define MIN_SIZE	(1 * MIB)
#define MAX_SIZE	(256 * MIB)
#define DEFAULT_REPS	5
#define MAX_REPS	1000

/* The access rights rmawin gives a window: everything RMA needs. */
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static void report(const char *name, size_t size, double *v, int n)
{
	struct stats st = stats_of(v, n);

	printf("%s,verbs,-,verbs,1,%zu,us,%.6g,%.6g,%.6g,%d\n", name, size,
	       st.median, st.p10, st.p90, n);
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		perror("reg_mr: ibv_get_device_list");
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (name && strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			perror("reg_mr: ibv_open_device");
		break;
	}
	if (i == n)
		fprintf(stderr, "reg_mr: no RDMA device%s%s\n", name ? " " : "", name ? name : "");
	ibv_free_device_list(list);
	return ctx;
}

static int time_size(struct ibv_pd *pd, size_t size, int reps)
{
	double reg[MAX_REPS], dereg[MAX_REPS], both[MAX_REPS], t0, t1;
	struct ibv_mr *mr;
	void *buf;
	int i, ret;

	buf = bench_alloc_touched(size);
	if (!buf) {
		fprintf(stderr, "reg_mr: cannot allocate %zu bytes\n", size);
		return -1;
	}
	for (i = 0; i < reps; i++) {
		t0 = now_us();
		mr = ibv_reg_mr(pd, buf, size, ACCESS);
		t1 = now_us();
		if (!mr) {
			perror("reg_mr: ibv_reg_mr");
			free(buf);
			return -1;
		}
		ret = ibv_dereg_mr(mr);
		if (ret) {
			errno = ret;
			perror("reg_mr: ibv_dereg_mr");
			free(buf);
			return -1;
		}
		reg[i] = t1 - t0;
		dereg[i] = now_us() - t1;
		both[i] = reg[i] + dereg[i];
	}
	free(buf);
	report("reg_mr", size, reg, reps);
	report("dereg_mr", size, dereg, reps);
	report("reg_dereg_mr", size, both, reps);
	fflush(stdout);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: reg_mr [-d DEVICE] [-m MAX_MIB] [-r REPS] [-H]\n"
		"\n"
		"Times ibv_reg_mr and ibv_dereg_mr of touched memory (2 MiB-aligned) from 1 MiB\n"
		"to MAX_MIB MiB (default 256) by powers of 4, REPS times each (default %d),\n"
		"and writes CSV lines as rmawin_bench does; -H writes the header first.\n",
		DEFAULT_REPS);
}

int main(int argc, char **argv)
{
	size_t size, max = MAX_SIZE;
	const char *dev = NULL;
	struct ibv_context *ctx;
	int reps = DEFAULT_REPS, header = 0, opt, ret = 0;
	struct ibv_pd *pd;

	while ((opt = getopt(argc, argv, "d:m:r:Hh")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'm':
			max = strtoul(optarg, NULL, 10) * MIB;
			break;
		case 'r':
			reps = atoi(optarg);
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
	if (optind != argc || reps < 1 || reps > MAX_REPS || max < MIN_SIZE) {
		usage(stderr);
		return 2;
	}

	ctx = open_device(dev);
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		perror("reg_mr: ibv_alloc_pd");
		ibv_close_device(ctx);
		return 1;
	}
	if (header)
		printf("bench,impl,requested,path,ranks,size,unit,median,p10,p90,samples\n");
	for (size = MIN_SIZE; size <= max && !ret; size *= 4)
		ret = time_size(pd, size, reps);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ret ? 1 : 0;
}
