// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats.h"

double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Linear interpolation between the closest ranks of sorted samples. */
static double percentile(const double *v, size_t n, double q)
{
	double pos = q * (n - 1);
	size_t i = (size_t)pos;

	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

struct stats stats_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return (struct stats){
		.median = percentile(v, n, 0.5),
		.p10 = percentile(v, n, 0.1),
		.p90 = percentile(v, n, 0.9),
	};
}

#define HUGE_ALIGN	((size_t)2 << 20)

void *bench_alloc_touched(size_t size)
{
	void *p;

	if (posix_memalign(&p, size >= HUGE_ALIGN ? HUGE_ALIGN : 4096, size ? size : 1))
		return NULL;
	memset(p, 0, size);
	return p;
}
