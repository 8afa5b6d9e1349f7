// SPDX-License-Identifier: MIT
/*
 * rmawin_bench's sync benchmark: the cost of synchronization, every rank at
 * once (run on 2, 4 and 8 ranks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rmawin_bench.h"
#include "stats.h"

enum sync_kind { S_FENCE, S_LOCK, S_LOCK_ALL, S_FLUSH, S_FLUSH_ALL };

static void sync_call(struct bench *b, struct rmawin_win *win, enum sync_kind kind,
		      const uint64_t *val)
{
	int next = (b->rank + 1) % b->nranks, r;

	switch (kind) {
	case S_FENCE:
		ok(rmawin_fence(win, 0), "fence");
		break;
	case S_LOCK:
		ok(rmawin_lock(win, RMAWIN_LOCK_EXCLUSIVE, next), "lock");
		ok(rmawin_unlock(win, next), "unlock");
		break;
	case S_LOCK_ALL:
		ok(rmawin_lock_all(win), "lock_all");
		ok(rmawin_unlock_all(win), "unlock_all");
		break;
	case S_FLUSH:
		ok(rmawin_flush(win, next), "flush");
		break;
	case S_FLUSH_ALL:
		for (r = 0; r < b->nranks; r++)
			if (r != b->rank)
				ok(rmawin_put(win, val, 8, r, 8 * b->rank), "put");
		ok(rmawin_flush_all(win), "flush_all");
		break;
	}
}

/*
 * Control messages this process's endpoint has sent: its debugfs file is
 * the one that names our pid.  -1 without debugfs (not root, say).
 */
static long my_ctrl_msgs(void)
{
	char path[64], line[128];
	long val, pid, msgs;
	unsigned int id;
	FILE *f;

	for (id = 0; id < 4096; id++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/rmawin/ep%u", id);
		f = fopen(path, "r");
		if (!f)
			continue;
		pid = msgs = -1;
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "pid %ld", &val) == 1)
				pid = val;
			else if (sscanf(line, "ctrl_msgs %ld", &val) == 1)
				msgs = val;
		}
		fclose(f);
		if (pid == getpid())
			return msgs;
	}
	return -1;
}

/*
 * fence: an empty fence; lock_unlock: lock (exclusive) and unlock of the
 * next rank; lock_all: lock_all and unlock_all; flush: an empty flush of
 * the next rank; flush_all: an 8-byte put to every other rank, then
 * flush_all.  Every rank runs the same loop; rank 0's times are reported.
 */
void run_sync(struct bench *b)
{
	static const struct {
		const char *name;
		enum sync_kind kind;
		int in_lock_all;
	} kinds[] = {
		{ "fence", S_FENCE, 0 },
		{ "lock_unlock", S_LOCK, 0 },
		{ "lock_all", S_LOCK_ALL, 0 },
		{ "flush", S_FLUSH, 1 },
		{ "flush_all", S_FLUSH_ALL, 1 },
	};
	struct rmawin_win *win;
	uint64_t val = b->rank;
	unsigned char *mem;
	unsigned int k, i;
	long msgs = -1;
	double t;

	progress(b, "sync");
	mem = alloc_touched(SYNC_WIN_SIZE);
	ok(rmawin_win_create(b->ep, mem, SYNC_WIN_SIZE, 1, 0, &win), "win_create");
	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		ok(rmawin_barrier(b->ep), "barrier");
		if (kinds[k].in_lock_all)
			ok(rmawin_lock_all(win), "lock_all");
		if (kinds[k].kind == S_FENCE && b->rank == 0)
			msgs = my_ctrl_msgs();
		for (i = 0; i < SYNC_WARMUP + SYNC_ITERS; i++) {
			t = now_us();
			sync_call(b, win, kinds[k].kind, &val);
			if (i >= SYNC_WARMUP)
				sample(b, now_us() - t);
		}
		if (kinds[k].in_lock_all)
			ok(rmawin_unlock_all(win), "unlock_all");
		report(b, kinds[k].name, b->nranks, 0, "us");
		if (kinds[k].kind == S_FENCE && msgs >= 0 && my_ctrl_msgs() >= msgs) {
			/* the algorithm's growth, which sharing two CPUs cannot blur */
			sample(b, (double)(my_ctrl_msgs() - msgs) / (SYNC_WARMUP + SYNC_ITERS));
			report(b, "fence_msgs", b->nranks, 0, "msgs");
		}
		if (kinds[k].kind == S_FENCE)
			ok(rmawin_fence(win, RMAWIN_MODE_NOSUCCEED), "fence");
	}
	ok(rmawin_barrier(b->ep), "barrier");
	ok(rmawin_win_free(win), "win_free");
	free(mem);
}
