// SPDX-License-Identifier: MIT
/*
 * rmawin_bench's registration benchmarks, what registering memory costs:
 * window creation beside ibv_reg_mr, and a repeated large put with the
 * registration cache cold, warm, and not needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rmawin_bench.h"
#include "stats.h"

/* ------------------------------------------------------------------------
 * Window creation, against ibv_reg_mr (bench/reg_mr.c)
 */

/*
 * Rank 0 exposes @size bytes of touched memory (2 MiB-aligned); the others expose
 * nothing, so that one process pins and registers what reg_mr registers,
 * plus the collective exchange of the window's keys.
 */
void run_win_create(struct bench *b)
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
void run_put_repeat(struct bench *b)
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
