/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the rmawin-mpi test programs: plain MPI programs, which the
 * driver (../mpi_test.sh) runs under mpirun with LD_PRELOAD set to
 * librmawin-mpi.  A failed check prints where and aborts the job, so that
 * no rank is left waiting for the failed one.  Unless MT_REAL_MPI=1 (for
 * running them on the real MPI alone), every window must be rmawin's.
 */
#ifndef MPITEST_H
#define MPITEST_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

static int mt_rank, mt_size;

#define CHECK(cond, ...)							\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "rank %d: %s:%d: %s: ", mt_rank,	\
				__FILE__, __LINE__, #cond);			\
			fprintf(stderr, __VA_ARGS__);				\
			fputc('\n', stderr);					\
			MPI_Abort(MPI_COMM_WORLD, 1);				\
		}								\
	} while (0)

/* an MPI call that must succeed */
#define MPI_OK(call)								\
	do {									\
		int mt_rc_ = (call);						\
		CHECK(mt_rc_ == MPI_SUCCESS, "%s returned %d", #call, mt_rc_); \
	} while (0)

/* the error class of a call's return code */
static inline int mt_class(int rc)
{
	int cls;

	MPI_Error_class(rc, &cls);
	return cls;
}

static inline void mt_init(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
}

/* MPI_Init_thread at @required: returns the level provided. */
static inline int mt_init_thread(int *argc, char ***argv, int required)
{
	int provided;

	MPI_Init_thread(argc, argv, required, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &mt_size);
	return provided;
}

/* rmawin_mpi_win_backend(): 1 if rmawin carries @win, 0 if the real MPI does. */
static inline int mt_win_backend(MPI_Win win)
{
	int (*fn)(MPI_Win);

	*(void **)&fn = dlsym(RTLD_DEFAULT, "rmawin_mpi_win_backend");
	CHECK(fn, "librmawin-mpi is not loaded (LD_PRELOAD)");
	return fn(win);
}

/* The window must be carried by rmawin, not by the real MPI. */
static inline void mt_backend(MPI_Win win)
{
	const char *real = getenv("MT_REAL_MPI");

	if (real && !strcmp(real, "1"))
		return;
	CHECK(mt_win_backend(win) == 1, "window not backed by rmawin");
}

static inline void mt_done(const char *name)
{
	MPI_Barrier(MPI_COMM_WORLD);
	if (mt_rank == 0)
		printf("# %s: all checks passed on %d ranks\n", name, mt_size);
	MPI_Finalize();
}

#endif /* MPITEST_H */
