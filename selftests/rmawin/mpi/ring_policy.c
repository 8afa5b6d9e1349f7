// SPDX-License-Identifier: GPL-2.0
/*
 * Which of librmawin's paths rmawin-mpi picks (RMAWIN_MPI_RING, mpi.rst):
 * the driver says in MT_WANT_RING what this run must get, 1 for the ring
 * and 0 for the ioctls, and each rank puts into its right neighbour's
 * window by that path; the data is compared after a fence.
 */
#include "mpitest.h"

#define WORDS 64

int main(int argc, char **argv)
{
	const char *want = getenv("MT_WANT_RING");
	int (*ring)(MPI_Win);
	long *mem, src[WORDS];
	MPI_Win win;
	int i, got, right, left;

	mt_init(&argc, &argv);
	CHECK(want && (!strcmp(want, "0") || !strcmp(want, "1")), "MT_WANT_RING=%s",
	      want ? want : "(unset)");
	MPI_OK(MPI_Win_allocate(WORDS * sizeof(long), sizeof(long), MPI_INFO_NULL,
				MPI_COMM_WORLD, &mem, &win));
	mt_backend(win);
	*(void **)&ring = dlsym(RTLD_DEFAULT, "rmawin_mpi_win_ring");
	CHECK(ring, "rmawin_mpi_win_ring not exported");
	got = ring(win);
	CHECK(got == atoi(want), "path %d, want %s (1: ring, 0: ioctl)", got, want);
	right = (mt_rank + 1) % mt_size;
	left = (mt_rank + mt_size - 1) % mt_size;
	for (i = 0; i < WORDS; i++) {
		mem[i] = -1;
		src[i] = (long)mt_rank * 1000 + i;
	}
	MPI_OK(MPI_Win_fence(0, win));
	MPI_OK(MPI_Put(src, WORDS, MPI_LONG, right, 0, WORDS, MPI_LONG, win));
	MPI_OK(MPI_Win_fence(0, win));
	for (i = 0; i < WORDS; i++)
		CHECK(mem[i] == (long)left * 1000 + i, "word %d: %ld from rank %d", i, mem[i], left);
	MPI_OK(MPI_Win_free(&win));
	mt_done("ring_policy");
	return 0;
}
