// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats.h"

static double mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>

/*
 * The time stamp counter, as perftest's get_cycles(): the test VM's guest
 * kernel runs on the HPET clocksource, which the vDSO cannot read, so
 * clock_gettime() is a system call and an emulated device read, a few
 * microseconds inside every latency sample that the yardstick does not
 * pay.  The counter's rate is measured once against CLOCK_MONOTONIC, over
 * CALIBRATE_US.
 */
#define CALIBRATE_US	50000.0

static double us_per_tick, us_base;
static unsigned long long tick_base;

static void calibrate(void)
{
	double t0 = mono_us(), t1;
	unsigned long long c0 = __rdtsc(), c1;

	do
		t1 = mono_us();
	while (t1 - t0 < CALIBRATE_US);
	c1 = __rdtsc();
	if (c1 <= c0) {
		us_per_tick = -1;	/* no usable counter: the clock it is */
		return;
	}
	us_per_tick = (t1 - t0) / (double)(c1 - c0);
	us_base = t1;
	tick_base = c1;
}

double now_us(void)
{
	if (!us_per_tick)
		calibrate();
	if (us_per_tick < 0)
		return mono_us();
	return us_base + (double)(__rdtsc() - tick_base) * us_per_tick;
}
#else
double now_us(void)
{
	return mono_us();
}
#endif

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
