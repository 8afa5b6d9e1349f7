// SPDX-License-Identifier: GPL-2.0
/*
 * Every synchronization mode moves data that another rank then checks:
 * fence, post/start/complete/wait (and test), lock/unlock exclusive and
 * shared with flush, lock_all with flush_all, flush_local(_all) and sync;
 * and counters that every rank updates under locks at once end exact.
 * Each window holds one int per rank; slot [o] of rank t is written by
 * origin o, and the value says which mode, origin and target it came from.
 */
#include "mpitest.h"

#define VAL(mode, o, t) ((mode) * 10000 + (o) * 100 + (t))

static int *mem;
static MPI_Win win;

/* every slot of my window says @mode (read under a lock on myself) */
static void check_mine(int mode)
{
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
	for (int o = 0; o < mt_size; o++)
		CHECK(mem[o] == VAL(mode, o, mt_rank), "mode %d slot %d = %d", mode, o, mem[o]);
	MPI_OK(MPI_Win_unlock(mt_rank, win));
}

/* rank (t + 1) reads target t's window with a get and checks it */
static void check_remote(int mode)
{
	int t = (mt_rank + mt_size - 1) % mt_size, buf[64];

	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
	MPI_OK(MPI_Get(buf, mt_size, MPI_INT, t, 0, mt_size, MPI_INT, win));
	MPI_OK(MPI_Win_unlock(t, win));
	for (int o = 0; o < mt_size; o++)
		CHECK(buf[o] == VAL(mode, o, t), "mode %d: rank %d slot %d = %d", mode, t, o,
		      buf[o]);
}

static void fence(void)
{
	int v[64];

	MPI_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
	for (int t = 0; t < mt_size; t++) {
		v[t] = VAL(1, mt_rank, t);
		MPI_OK(MPI_Put(&v[t], 1, MPI_INT, t, mt_rank, 1, MPI_INT, win));
	}
	MPI_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	check_mine(1);
	MPI_Barrier(MPI_COMM_WORLD);
	check_remote(1);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* post/start on a ring: I expose to my left neighbour, access my right */
static void pscw(int mode, int use_test)
{
	int left = (mt_rank + mt_size - 1) % mt_size, right = (mt_rank + 1) % mt_size;
	MPI_Group world, gl, gr;
	int v[64], flag = 0;

	MPI_Comm_group(MPI_COMM_WORLD, &world);
	MPI_Group_incl(world, 1, &left, &gl);
	MPI_Group_incl(world, 1, &right, &gr);
	/* the rest of my window is set locally, for check_mine */
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, win));
	for (int o = 0; o < mt_size; o++)
		mem[o] = VAL(mode, o, mt_rank);
	mem[left] = -1;
	MPI_OK(MPI_Win_unlock(mt_rank, win));
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_OK(MPI_Win_post(gl, 0, win));
	MPI_OK(MPI_Win_start(gr, 0, win));
	v[0] = VAL(mode, mt_rank, right);
	MPI_OK(MPI_Put(v, 1, MPI_INT, right, mt_rank, 1, MPI_INT, win));
	MPI_OK(MPI_Win_complete(win));
	if (use_test) {
		while (!flag)
			MPI_OK(MPI_Win_test(win, &flag));
	} else {
		MPI_OK(MPI_Win_wait(win));
	}
	check_mine(mode);
	MPI_Barrier(MPI_COMM_WORLD);
	check_remote(mode);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Group_free(&gl);
	MPI_Group_free(&gr);
	MPI_Group_free(&world);
}

/* lock each target in turn (exclusive or shared + flush) and put */
static void lock_each(int mode, int type)
{
	int v, back;

	for (int t = 0; t < mt_size; t++) {
		v = VAL(mode, mt_rank, t);
		MPI_OK(MPI_Win_lock(type, t, 0, win));
		MPI_OK(MPI_Put(&v, 1, MPI_INT, t, mt_rank, 1, MPI_INT, win));
		if (type == MPI_LOCK_SHARED) {
			MPI_OK(MPI_Win_flush(t, win));
			MPI_OK(MPI_Get(&back, 1, MPI_INT, t, mt_rank, 1, MPI_INT, win));
			MPI_OK(MPI_Win_flush_local(t, win));
			CHECK(back == v, "flushed put read back %d, not %d", back, v);
		}
		MPI_OK(MPI_Win_unlock(t, win));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	check_mine(mode);
	check_remote(mode);
	MPI_Barrier(MPI_COMM_WORLD);
}

static void lock_all(int mode)
{
	int v[64], back[64];

	MPI_OK(MPI_Win_lock_all(0, win));
	for (int t = 0; t < mt_size; t++) {
		v[t] = VAL(mode, mt_rank, t);
		MPI_OK(MPI_Put(&v[t], 1, MPI_INT, t, mt_rank, 1, MPI_INT, win));
	}
	MPI_OK(MPI_Win_flush_local_all(win));
	MPI_OK(MPI_Win_flush_all(win));
	for (int t = 0; t < mt_size; t++)
		MPI_OK(MPI_Get(&back[t], 1, MPI_INT, t, mt_rank, 1, MPI_INT, win));
	MPI_OK(MPI_Win_flush_all(win));
	for (int t = 0; t < mt_size; t++)
		CHECK(back[t] == v[t], "lock_all: rank %d read back %d", t, back[t]);
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_Barrier(MPI_COMM_WORLD);
	/* MPI_Win_sync inside a lock_all epoch: the unified model's way */
	MPI_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
	MPI_OK(MPI_Win_sync(win));
	for (int o = 0; o < mt_size; o++)
		CHECK(mem[o] == VAL(mode, o, mt_rank), "lock_all: slot %d = %d", o, mem[o]);
	MPI_OK(MPI_Win_unlock_all(win));
	check_remote(mode);
	MPI_Barrier(MPI_COMM_WORLD);
}

#define ROUNDS 20

/*
 * Counters in every rank's window, updated by every rank at once: an
 * exclusive fetch_and_op (with lazy locks, one message per epoch), an
 * exclusive get, flush, put (two operations: the lock is taken the usual
 * way) and a shared fetch_and_op on this same_op window (the device's
 * atomics under a shared lock, or, as a one-message epoch, the target's
 * CPU under its lock taken exclusive for the moment).  Each ends at
 * ROUNDS * size: no update lost, none applied twice.
 */
static void lock_counters(void)
{
	long long *cnt, one = 1, old, v;
	MPI_Win cw;

	MPI_OK(MPI_Win_allocate(3 * sizeof(long long), sizeof(long long), MPI_INFO_NULL,
				MPI_COMM_WORLD, &cnt, &cw));
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, mt_rank, 0, cw));
	memset(cnt, 0, 3 * sizeof(long long));
	MPI_OK(MPI_Win_unlock(mt_rank, cw));
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < ROUNDS; i++) {
		for (int t = 0; t < mt_size; t++) {
			MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, cw));
			MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, t, 0, MPI_SUM, cw));
			MPI_OK(MPI_Win_unlock(t, cw));
			CHECK(old >= 0 && old < (long long)ROUNDS * mt_size,
			      "counter 0 of rank %d was %lld", t, old);
			MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, cw));
			MPI_OK(MPI_Get(&v, 1, MPI_LONG_LONG, t, 1, 1, MPI_LONG_LONG, cw));
			MPI_OK(MPI_Win_flush(t, cw));
			v++;
			MPI_OK(MPI_Put(&v, 1, MPI_LONG_LONG, t, 1, 1, MPI_LONG_LONG, cw));
			MPI_OK(MPI_Win_unlock(t, cw));
			MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, cw));
			MPI_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, t, 2, MPI_SUM, cw));
			MPI_OK(MPI_Win_unlock(t, cw));
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, cw));
	for (int k = 0; k < 3; k++)
		CHECK(cnt[k] == (long long)ROUNDS * mt_size, "counter %d: %lld, not %lld", k,
		      cnt[k], (long long)ROUNDS * mt_size);
	MPI_OK(MPI_Win_unlock(mt_rank, cw));
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_OK(MPI_Win_free(&cw));
}

int main(int argc, char **argv)
{
	mt_init(&argc, &argv);
	CHECK(mt_size <= 64, "at most 64 ranks");
	MPI_OK(MPI_Alloc_mem(64 * sizeof(int), MPI_INFO_NULL, &mem));
	memset(mem, 0, 64 * sizeof(int));
	MPI_OK(MPI_Win_create(mem, 64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
			      &win));
	mt_backend(win);
	fence();
	pscw(2, 0);
	pscw(3, 1);
	lock_each(4, MPI_LOCK_EXCLUSIVE);
	lock_each(5, MPI_LOCK_SHARED);
	lock_all(6);
	lock_counters();
	MPI_OK(MPI_Win_free(&win));
	CHECK(win == MPI_WIN_NULL, "MPI_Win_free leaves MPI_WIN_NULL");
	MPI_OK(MPI_Free_mem(mem));
	mt_done("sync_modes");
	return 0;
}
