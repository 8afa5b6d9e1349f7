/* SPDX-License-Identifier: MIT */
/*
 * What the benchmarks share: the clock, and the median and spread of a
 * set of samples, computed the same way for rmawin and its yardsticks.
 */
#ifndef RMAWIN_BENCH_STATS_H
#define RMAWIN_BENCH_STATS_H

#include <stddef.h>

/* CLOCK_MONOTONIC, in microseconds. */
double now_us(void);

/* The spread reported for every measurement. */
struct stats {
	double median;
	double p10;
	double p90;
};

/* Sorts @v (n > 0) and returns its median and its 10th and 90th percentiles. */
struct stats stats_of(double *v, size_t n);

#endif
