// SPDX-License-Identifier: GPL-2.0
/*
 * Request-based operations complete at MPI_Wait and MPI_Test and their
 * kin, as MPI defines: after the wait, a put's or accumulate's origin
 * buffer may be overwritten (the target still sees what was there at
 * issue), a get's data has arrived.  Each rank targets its right
 * neighbour; what lands is checked by the target after a flush and a
 * barrier.  Requests are completed through every wait and test call,
 * together with point-to-point requests of the real MPI, after the epoch
 * that carried them ended, and to MPI_PROC_NULL.
 */
#include "mpitest.h"

#define N 4096			/* ints: 16 KiB, past the ring's inline size */
#define NREQ 8

static MPI_Win win;
static int *mem;		/* N ints of the window, then NREQ ints */
static int right, left;

static void fill(int *buf, int n, int seed)
{
	int i;

	for (i = 0; i < n; i++)
		buf[i] = seed * 100003 + i;
}

static int check_fill(const int *buf, int n, int seed)
{
	int i;

	for (i = 0; i < n; i++)
		if (buf[i] != seed * 100003 + i)
			return i;
	return -1;
}

/* Rput, then MPI_Wait, then the buffer overwritten: the target got the old contents */
static void rput_wait(int *buf)
{
	MPI_Request r;
	int bad;

	memset(mem, 0, N * sizeof(int));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(0, win));
	fill(buf, N, mt_rank + 1);
	MPI_OK(MPI_Rput(buf, N, MPI_INT, right, 0, N, MPI_INT, win, &r));
	MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK(r == MPI_REQUEST_NULL, "MPI_Wait left the request");
	memset(buf, 0xa5, N * sizeof(int));
	MPI_OK(MPI_Win_flush(right, win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_sync(win));
	bad = check_fill(mem, N, left + 1);
	CHECK(bad < 0, "rput from %d: int %d is %d", left, bad, bad < 0 ? 0 : mem[bad]);
	MPI_OK(MPI_Win_unlock_all(win));
}

/* Rget completed by MPI_Test polled until it says so: the data is there */
static void rget_test(int *buf)
{
	MPI_Request r;
	int flag = 0, bad, polls = 0;

	fill(mem, N, mt_rank + 11);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
	memset(buf, 0, N * sizeof(int));
	MPI_OK(MPI_Rget(buf, N, MPI_INT, right, 0, N, MPI_INT, win, &r));
	while (!flag) {
		MPI_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
		CHECK(++polls < 1000000, "MPI_Test never completed the rget");
	}
	bad = check_fill(buf, N, right + 11);
	CHECK(bad < 0, "rget from %d: int %d is %d", right, bad, bad < 0 ? 0 : buf[bad]);
	MPI_OK(MPI_Win_unlock(right, win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/*
 * Raccumulate and Rget_accumulate from every rank to rank 0, NREQ requests
 * each, completed with MPI_Waitall beside a point-to-point exchange of the
 * real MPI's, and with MPI_Waitany; the origin values are clobbered right
 * after the wait.
 */
static void racc_waitall(void)
{
	int one[NREQ], old[NREQ], *ctr = mem + N, i, idx, sendv = mt_rank, recvv = -1;
	MPI_Request r[NREQ + 2];
	MPI_Status st[NREQ + 2];	/* MPICH's MPI_STATUSES_IGNORE upsets gcc 12 */

	memset(ctr, 0, NREQ * sizeof(int));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock_all(0, win));
	MPI_OK(MPI_Irecv(&recvv, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &r[0]));
	for (i = 0; i < NREQ; i++) {
		one[i] = i + 1;
		MPI_OK(MPI_Raccumulate(&one[i], 1, MPI_INT, 0, N * sizeof(int) + i * sizeof(int),
				       1, MPI_INT, MPI_SUM, win, &r[i + 1]));
	}
	MPI_OK(MPI_Isend(&sendv, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &r[NREQ + 1]));
	MPI_OK(MPI_Waitall(NREQ + 2, r, st));
	CHECK(recvv == left, "point-to-point beside the requests: got %d", recvv);
	for (i = 0; i < NREQ; i++)
		one[i] = -1000;
	MPI_OK(MPI_Win_flush(0, win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

	/* every rank adds 1 to ctr[0] and reads the previous value */
	for (i = 0; i < NREQ; i++) {
		one[i] = 1;
		old[i] = -1;
		MPI_OK(MPI_Rget_accumulate(&one[i], 1, MPI_INT, &old[i], 1, MPI_INT, 0,
					   N * sizeof(int), 1, MPI_INT, MPI_SUM, win, &r[i]));
	}
	for (i = 0; i < NREQ; i++) {
		MPI_OK(MPI_Waitany(NREQ, r, &idx, MPI_STATUS_IGNORE));
		CHECK(idx >= 0 && idx < NREQ && r[idx] == MPI_REQUEST_NULL, "waitany %d", idx);
		CHECK(old[idx] >= mt_size && old[idx] < mt_size + mt_size * NREQ,
		      "rget_accumulate %d fetched %d", idx, old[idx]);
	}
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	if (mt_rank == 0) {
		CHECK(ctr[0] == mt_size + mt_size * NREQ, "ctr[0] %d", ctr[0]);
		for (i = 1; i < NREQ; i++)
			CHECK(ctr[i] == mt_size * (i + 1), "ctr[%d] %d", i, ctr[i]);
	}
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/*
 * Requests whose epoch ended before the wait (unlock completes them), a
 * freed one, MPI_Request_get_status and MPI_Testall, and MPI_PROC_NULL.
 */
static void after_epoch(int *buf)
{
	MPI_Request r[3], rf;
	MPI_Status st[3];
	int flag = 0, v = mt_rank + 5, w2 = mt_rank + 6, w3 = mt_rank + 9, back = -1, bad;

	memset(mem, 0, N * sizeof(int));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
	MPI_OK(MPI_Rput(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win, &r[0]));
	MPI_OK(MPI_Rput(&w2, 1, MPI_INT, right, 4, 1, MPI_INT, win, &rf));
	MPI_OK(MPI_Request_free(&rf));
	CHECK(rf == MPI_REQUEST_NULL, "MPI_Request_free left the request");
	MPI_OK(MPI_Rput(&w3, 1, MPI_INT, right, 8, 1, MPI_INT, win, &r[1]));
	MPI_OK(MPI_Win_unlock(right, win));
	MPI_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
	MPI_OK(MPI_Request_get_status(r[1], &flag, MPI_STATUS_IGNORE));
	CHECK(flag, "a request whose epoch ended is not complete");
	MPI_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	CHECK(mem[0] == left + 5 && mem[1] == left + 6 && mem[2] == left + 9,
	      "after the epoch: %d %d %d", mem[0], mem[1], mem[2]);
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));	/* checked before the next puts */

	MPI_OK(MPI_Win_lock_all(0, win));
	fill(buf, N, mt_rank + 21);
	MPI_OK(MPI_Rput(buf, N, MPI_INT, right, 0, N, MPI_INT, win, &r[0]));
	MPI_OK(MPI_Rget(&back, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &r[1]));
	MPI_OK(MPI_Rput(&v, 1, MPI_INT, left, N * sizeof(int), 1, MPI_INT, win, &r[2]));
	flag = 0;
	while (!flag)
		MPI_OK(MPI_Testall(3, r, &flag, st));
	CHECK(back == -1, "rget from MPI_PROC_NULL wrote %d", back);
	memset(buf, 0, N * sizeof(int));
	MPI_OK(MPI_Win_unlock_all(win));
	MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
	bad = check_fill(mem, N, left + 21);
	CHECK(bad < 0, "testall rput from %d: int %d", left, bad);
	CHECK(mem[N] == right + 5, "testall rput from %d: %d", right, mem[N]);
}

int main(int argc, char **argv)
{
	static int buf[N];

	mt_init(&argc, &argv);
	right = (mt_rank + 1) % mt_size;
	left = (mt_rank + mt_size - 1) % mt_size;
	MPI_OK(MPI_Win_allocate((N + NREQ) * sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
				&win));
	mt_backend(win);
	rput_wait(buf);
	rget_test(buf);
	racc_waitall();
	after_epoch(buf);
	MPI_OK(MPI_Win_free(&win));
	mt_done("requests");
	return 0;
}
