// SPDX-License-Identifier: GPL-2.0
/*
 * MPI_THREAD_MULTIPLE: rmawin-mpi keeps no locks, so under that level its
 * windows (a created one, then an allocated one) are the real MPI's (rmawin_mpi_win_backend() 0), unless
 * RMAWIN_MPI_THREAD_MULTIPLE=1 promises one-sided calls from one thread at
 * a time.  Either way two threads of every rank
 * put into the next rank's window between two fences, and the data is
 * checked there; under the promise the threads take turns (a mutex), as
 * the program then must.
 * MT_WANT_BACKEND (0 or 1) is the backend the driver expects.
 */
#include <pthread.h>

#include "mpitest.h"

#define NTHREADS	2

static MPI_Win win;
static int serialize;
/* the origin buffers: a put's must stay until the fence completes it */
static int vals[NTHREADS];
static pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER;

static int value(int rank, int t)
{
	return rank * 10 + t + 1;
}

static void *putter(void *arg)
{
	int t = (int)(long)arg, next = (mt_rank + 1) % mt_size;

	vals[t] = value(mt_rank, t);
	if (serialize)
		pthread_mutex_lock(&turn);
	MPI_OK(MPI_Put(&vals[t], 1, MPI_INT, next, mt_rank * NTHREADS + t, 1, MPI_INT, win));
	if (serialize)
		pthread_mutex_unlock(&turn);
	return NULL;
}

/* One window, created over MPI_Alloc_mem's memory or allocated: puts from the threads. */
static int one_window(int created, const char *want)
{
	size_t len = sizeof(int) * NTHREADS * mt_size;
	int (*backend)(MPI_Win);
	pthread_t th[NTHREADS];
	int prev, t, ours, *base;

	if (created) {
		MPI_OK(MPI_Alloc_mem(len, MPI_INFO_NULL, &base));
		memset(base, 0, len);
		MPI_OK(MPI_Win_create(base, len, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	} else {
		MPI_OK(MPI_Win_allocate(len, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
					&win));
		memset(base, 0, len);
	}
	*(void **)&backend = dlsym(RTLD_DEFAULT, "rmawin_mpi_win_backend");
	CHECK(backend, "librmawin-mpi is not loaded (LD_PRELOAD)");
	ours = backend(win);
	CHECK(want && ours == atoi(want), "%s window: backend %d, want %s",
	      created ? "created" : "allocated", ours, want ? want : "(MT_WANT_BACKEND unset)");

	MPI_OK(MPI_Win_fence(0, win));
	for (t = 0; t < NTHREADS; t++)
		CHECK(!pthread_create(&th[t], NULL, putter, (void *)(long)t), "pthread_create");
	for (t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	MPI_OK(MPI_Win_fence(0, win));

	prev = (mt_rank + mt_size - 1) % mt_size;
	for (t = 0; t < NTHREADS; t++)
		CHECK(base[prev * NTHREADS + t] == value(prev, t),
		      "%s window: slot of rank %d thread %d: %d", created ? "created" : "allocated",
		      prev, t, base[prev * NTHREADS + t]);
	MPI_OK(MPI_Win_free(&win));
	if (created)
		MPI_OK(MPI_Free_mem(base));
	return ours;
}

int main(int argc, char **argv)
{
	const char *want = getenv("MT_WANT_BACKEND"), *promise = getenv("RMAWIN_MPI_THREAD_MULTIPLE");
	int provided, ours;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
	CHECK(provided == MPI_THREAD_MULTIPLE, "the MPI provides level %d only", provided);
	serialize = promise && !strcmp(promise, "1");

	one_window(1, want);
	ours = one_window(0, want);
	mt_done(ours ? "threads (one at a time, rmawin's windows)" :
		serialize ? "threads (one at a time, the real MPI's windows)" :
		"threads (the real MPI's windows)");
	return 0;
}
