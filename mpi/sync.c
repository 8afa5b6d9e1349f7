// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Synchronization: every MPI-3 call maps to the rmawin call of the same
 * meaning.  Assertions are translated bit by bit (their values differ
 * between MPIs); groups of post/start are translated to ranks of the
 * window's communicator.
 */
#include <errno.h>
#include <stdlib.h>

#include "rmawin_mpi.h"

static unsigned int rmpi_assert(int mpi_assert)
{
	static const struct { int mpi; unsigned int rw; } map[] = {
		{ MPI_MODE_NOCHECK, RMAWIN_MODE_NOCHECK },
		{ MPI_MODE_NOSTORE, RMAWIN_MODE_NOSTORE },
		{ MPI_MODE_NOPUT, RMAWIN_MODE_NOPUT },
		{ MPI_MODE_NOPRECEDE, RMAWIN_MODE_NOPRECEDE },
		{ MPI_MODE_NOSUCCEED, RMAWIN_MODE_NOSUCCEED },
	};
	unsigned int rw = 0;

	for (size_t i = 0; i < ARRAY_SIZE(map); i++)
		if (mpi_assert & map[i].mpi)
			rw |= map[i].rw;
	return rw;
}

/* Raise the class of a librmawin result on @w's window. */
static int rmpi_sync_result(struct rmpi_win *w, const char *what, int err)
{
	if (err < 0)
		rmpi_debug("%s: %s", what, rmawin_strerror(err));
	return rmpi_win_raise(w->win, rmpi_errclass(err < 0 ? err : 0));
}

int MPI_Win_fence(int assert, MPI_Win win)
{
	struct rmpi_win *w = rmpi_win_lookup(win);

	if (!w)
		return PMPI_Win_fence(assert, win);
	return rmpi_sync_result(w, "fence", rmawin_fence(w->rw, rmpi_assert(assert)));
}

/* The ranks in the window's communicator of the members of @group. */
static int rmpi_group_ranks(struct rmpi_win *w, MPI_Group group, int **ranks, int *n)
{
	MPI_Group wgroup;
	int *in, code, i;

	code = PMPI_Group_size(group, n);
	if (code != MPI_SUCCESS)
		return MPI_ERR_GROUP;
	in = malloc(sizeof(int) * (size_t)(*n + 1) * 2);
	if (!in)
		return MPI_ERR_NO_MEM;
	*ranks = in + *n + 1;
	for (i = 0; i < *n; i++)
		in[i] = i;
	code = PMPI_Win_get_group(w->win, &wgroup);
	if (code == MPI_SUCCESS) {
		code = PMPI_Group_translate_ranks(group, *n, in, wgroup, *ranks);
		PMPI_Group_free(&wgroup);
	}
	for (i = 0; code == MPI_SUCCESS && i < *n; i++)
		if ((*ranks)[i] == MPI_UNDEFINED)
			code = MPI_ERR_GROUP;	/* not in the window's group */
	if (code != MPI_SUCCESS) {
		free(in);
		return code;
	}
	/* keep one allocation: move the result to its start */
	for (i = 0; i < *n; i++)
		in[i] = (*ranks)[i];
	*ranks = in;
	return MPI_SUCCESS;
}

static int rmpi_pscw_open(MPI_Group group, MPI_Win win, int post)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	int *ranks, n, code, err;

	code = rmpi_group_ranks(w, group, &ranks, &n);
	if (code != MPI_SUCCESS)
		return rmpi_win_raise(win, code);
	err = post ? rmawin_post(w->rw, ranks, n) : rmawin_start(w->rw, ranks, n);
	free(ranks);
	return rmpi_sync_result(w, post ? "post" : "start", err);
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Win_post(group, assert, win);
	return rmpi_pscw_open(group, win, 1);
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Win_start(group, assert, win);
	return rmpi_pscw_open(group, win, 0);
}

int MPI_Win_complete(MPI_Win win)
{
	struct rmpi_win *w = rmpi_win_lookup(win);

	if (!w)
		return PMPI_Win_complete(win);
	return rmpi_sync_result(w, "complete", rmawin_complete(w->rw));
}

int MPI_Win_wait(MPI_Win win)
{
	struct rmpi_win *w = rmpi_win_lookup(win);

	if (!w)
		return PMPI_Win_wait(win);
	return rmpi_sync_result(w, "wait", rmawin_wait(w->rw));
}

int MPI_Win_test(MPI_Win win, int *flag)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	int ret;

	if (!w)
		return PMPI_Win_test(win, flag);
	ret = rmawin_test(w->rw);
	*flag = ret > 0;
	return rmpi_sync_result(w, "test", ret);
}

/* a target that needs no call: MPI_PROC_NULL; one out of range: an error */
static int rmpi_target_check(struct rmpi_win *w, int rank)
{
	if (rank == MPI_PROC_NULL)
		return 1;
	if (rank < 0 || rank >= w->nranks)
		return rmpi_win_raise(w->win, MPI_ERR_RANK);
	return 0;
}

int MPI_Win_lock(int type, int rank, int assert, MPI_Win win)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	enum rmawin_lock_type lt;
	int code;

	if (!w)
		return PMPI_Win_lock(type, rank, assert, win);
	if (type == MPI_LOCK_SHARED)
		lt = RMAWIN_LOCK_SHARED;
	else if (type == MPI_LOCK_EXCLUSIVE)
		lt = RMAWIN_LOCK_EXCLUSIVE;
	else
		return rmpi_win_raise(win, MPI_ERR_LOCKTYPE);
	code = rmpi_target_check(w, rank);
	if (code)
		return code == 1 ? MPI_SUCCESS : code;
	return rmpi_sync_result(w, "lock", rmawin_lock(w->rw, lt, rank));
}

/* unlock, flush, flush_local: one target */
static int rmpi_sync_target(MPI_Win win, int rank, int (*fn)(struct rmawin_win *, int),
			    const char *what)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	int code = rmpi_target_check(w, rank);
	int err;

	if (code)
		return code == 1 ? MPI_SUCCESS : code;
	err = fn(w->rw, rank);
	if (!err)	/* each of them completes the operations to @rank locally */
		rmpi_req_settle(w, rank, MPI_SUCCESS);
	return rmpi_sync_result(w, what, err);
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Win_unlock(rank, win);
	return rmpi_sync_target(win, rank, rmawin_unlock, "unlock");
}

int MPI_Win_flush(int rank, MPI_Win win)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Win_flush(rank, win);
	return rmpi_sync_target(win, rank, rmawin_flush, "flush");
}

int MPI_Win_flush_local(int rank, MPI_Win win)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Win_flush_local(rank, win);
	return rmpi_sync_target(win, rank, rmawin_flush_local, "flush_local");
}

/*
 * lock_all, unlock_all, flush_all, flush_local_all, sync: the whole window;
 * @completes: @fn completes every operation locally
 */
static int rmpi_sync_all(MPI_Win win, int (*fn)(struct rmawin_win *), const char *what,
			 int completes)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	int err = fn(w->rw);

	if (!err && completes)
		rmpi_req_settle(w, -1, MPI_SUCCESS);
	return rmpi_sync_result(w, what, err);
}

int MPI_Win_lock_all(int assert, MPI_Win win)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Win_lock_all(assert, win);
	return rmpi_sync_all(win, rmawin_lock_all, "lock_all", 0);
}

int MPI_Win_unlock_all(MPI_Win win)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Win_unlock_all(win);
	return rmpi_sync_all(win, rmawin_unlock_all, "unlock_all", 1);
}

int MPI_Win_flush_all(MPI_Win win)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Win_flush_all(win);
	return rmpi_sync_all(win, rmawin_flush_all, "flush_all", 1);
}

int MPI_Win_flush_local_all(MPI_Win win)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Win_flush_local_all(win);
	return rmpi_sync_all(win, rmawin_flush_local_all, "flush_local_all", 1);
}

int MPI_Win_sync(MPI_Win win)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Win_sync(win);
	return rmpi_sync_all(win, rmawin_sync, "sync", 0);
}
