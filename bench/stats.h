/* SPDX-License-Identifier: MIT */
/*
 * What the benchmarks share: the clock, and the median and spread of a
 * set of samples, computed the same way for rmawin and its yardsticks.
 */
#ifndef RMAWIN_BENCH_STATS_H
#define RMAWIN_BENCH_STATS_H

#include <stddef.h>

/*
 * Microseconds on a monotonic clock: on x86 the time stamp counter scaled
 * against CLOCK_MONOTONIC, as perftest times its samples, else
 * CLOCK_MONOTONIC itself.
 */
double now_us(void);

/* The spread reported for every measurement. */
struct stats {
	double median;
	double p10;
	double p90;
};

/* Sorts @v (n > 0) and returns its median and its 10th and 90th percentiles. */
struct stats stats_of(double *v, size_t n);

/*
 * @size bytes of zeroed, touched memory, aligned to 2 MiB from 2 MiB up
 * (where the kernel backs it with transparent huge pages, as it would an
 * HPC code's large arrays), to a page below; NULL if there is none.  The
 * window benchmarks and reg_mr use the same.
 */
void *bench_alloc_touched(size_t size);

#endif
