// SPDX-License-Identifier: GPL-2.0
/*
 * MPI_THREAD_MULTIPLE: rmawin-mpi takes one-sided calls from one thread at
 * a time, so under that level its windows (a created one, then an
 * allocated one) are the real MPI's (rmawin_mpi_win_backend() 0), unless
 * RMAWIN_MPI_THREAD_MULTIPLE=1 promises just that.  Either way two threads
 * of every rank put into the next rank's window between two fences, and
 * the data is checked there; under the promise the threads take turns (a
 * mutex), as the program then must.  Then one thread makes request-based
 * puts while another exchanges messages with both neighbours and waits
 * for them; and, on rmawin's windows, one frees the communicator of a
 * window while another puts into it.  MT_WANT_BACKEND (0 or 1) is the
 * backend the driver expects.
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
	ours = mt_win_backend(win);
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

#define ROUNDS	100

/* One-sided thread: ROUNDS request-based puts into the next rank, each waited for. */
static void *rputter(void *arg)
{
	static int v;
	int next = (mt_rank + 1) % mt_size, i;
	MPI_Request req;

	(void)arg;
	for (i = 1; i <= ROUNDS; i++) {
		v = mt_rank * 1000 + i;
		MPI_OK(MPI_Rput(&v, 1, MPI_INT, next, mt_rank, 1, MPI_INT, win, &req));
		MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	}
	return NULL;
}

/* Point-to-point thread: ROUNDS exchanges with both neighbours, checked. */
static void *exchanger(void *arg)
{
	int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size;
	int out, in[2], i;
	MPI_Request reqs[4];
	MPI_Status st[4];

	(void)arg;
	for (i = 1; i <= ROUNDS; i++) {
		out = mt_rank * 1000 + i;
		MPI_OK(MPI_Irecv(&in[0], 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &reqs[0]));
		MPI_OK(MPI_Irecv(&in[1], 1, MPI_INT, next, 7, MPI_COMM_WORLD, &reqs[1]));
		MPI_OK(MPI_Isend(&out, 1, MPI_INT, next, 7, MPI_COMM_WORLD, &reqs[2]));
		MPI_OK(MPI_Isend(&out, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &reqs[3]));
		MPI_OK(MPI_Waitall(4, reqs, st));
		CHECK(in[0] == prev * 1000 + i && in[1] == next * 1000 + i,
		      "exchange %d: got %d and %d", i, in[0], in[1]);
	}
	return NULL;
}

/*
 * Request-based puts in one thread while another waits for its own
 * point-to-point requests: the wait calls rmawin-mpi takes over look for
 * requests of theirs while the first thread's come and go.
 */
static void requests_beside_p2p(void)
{
	int prev = (mt_rank + mt_size - 1) % mt_size, *base;
	pthread_t a, b;

	MPI_OK(MPI_Win_allocate(sizeof(int) * mt_size, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
				&base, &win));
	memset(base, 0, sizeof(int) * mt_size);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(0, win));
	CHECK(!pthread_create(&a, NULL, rputter, NULL), "pthread_create");
	CHECK(!pthread_create(&b, NULL, exchanger, NULL), "pthread_create");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, mt_rank, 0, win));
	CHECK(base[prev] == prev * 1000 + ROUNDS, "last put of rank %d: %d", prev, base[prev]);
	MPI_OK(MPI_Win_unlock(mt_rank, win));
	MPI_OK(MPI_Win_free(&win));
}

static void *comm_freer(void *arg)
{
	MPI_OK(MPI_Comm_free(arg));
	return NULL;
}

/*
 * A window on a duplicate of MPI_COMM_WORLD, whose communicator another
 * thread frees while this one puts (the window keeps what it needs of it):
 * the put lands, and the window is freed after.  On rmawin's windows only,
 * where the group's references are rmawin-mpi's: MPICH 4.0's own window
 * lost the puts here (values of 0, or another rank's) in the one run tried.
 */
static void comm_freed_beside(void)
{
	int next = (mt_rank + 1) % mt_size, prev = (mt_rank + mt_size - 1) % mt_size, v, *base;
	MPI_Comm dup;
	pthread_t b;

	MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	MPI_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, dup, &base, &win));
	*base = 0;
	MPI_OK(MPI_Win_fence(0, win));
	CHECK(!pthread_create(&b, NULL, comm_freer, &dup), "pthread_create");
	v = mt_rank + 1;
	MPI_OK(MPI_Put(&v, 1, MPI_INT, next, 0, 1, MPI_INT, win));
	pthread_join(b, NULL);
	MPI_OK(MPI_Win_fence(0, win));
	CHECK(*base == prev + 1, "put from rank %d: %d", prev, *base);
	MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
	const char *want = getenv("MT_WANT_BACKEND"), *promise = getenv("RMAWIN_MPI_THREAD_MULTIPLE");
	int provided = mt_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE), ours;

	CHECK(provided == MPI_THREAD_MULTIPLE, "the MPI provides level %d only", provided);
	serialize = promise && !strcmp(promise, "1");

	one_window(1, want);
	ours = one_window(0, want);
	requests_beside_p2p();
	if (ours)
		comm_freed_beside();
	mt_done(ours ? "threads (one at a time, rmawin's windows)" :
		serialize ? "threads (one at a time, the real MPI's windows)" :
		"threads (the real MPI's windows)");
	return 0;
}
