// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Request-based operations (MPI_Rput, MPI_Rget, MPI_Raccumulate,
 * MPI_Rget_accumulate).  MPI only allows them in passive-target epochs and
 * lets their requests complete whenever the operation has completed at the
 * origin.  This first version completes that before returning: the
 * operation, then rmawin_flush_local() to its target, then a generalized
 * request that is already complete.  MPI_Wait and MPI_Test on it are the
 * real MPI's and return at once.  It gives up overlap, never correctness.
 */
#include "rmawin_mpi.h"

static int rmpi_greq_query(void *extra, MPI_Status *status)
{
	(void)extra;
	PMPI_Status_set_elements(status, MPI_BYTE, 0);
	PMPI_Status_set_cancelled(status, 0);
	status->MPI_SOURCE = MPI_UNDEFINED;
	status->MPI_TAG = MPI_UNDEFINED;
	return MPI_SUCCESS;
}

static int rmpi_greq_free(void *extra)
{
	(void)extra;
	return MPI_SUCCESS;
}

static int rmpi_greq_cancel(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;
}

/* After the operation was issued (@code): complete it locally, make *@req. */
static int rmpi_request_done(MPI_Win win, int target, int code, MPI_Request *req)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	int err;

	if (code != MPI_SUCCESS)
		return code;	/* already raised */
	if (target != MPI_PROC_NULL) {
		err = rmawin_flush_local(w->rw, target);
		if (err)
			return rmpi_win_raise(win, rmpi_errclass(err));
	}
	code = PMPI_Grequest_start(rmpi_greq_query, rmpi_greq_free, rmpi_greq_cancel, NULL, req);
	if (code == MPI_SUCCESS)
		code = PMPI_Grequest_complete(*req);
	return rmpi_win_raise(win, code);
}

int MPI_Rput(const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
	     int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Rput(origin, ocount, otype, target, disp, tcount, ttype, win, req);
	return rmpi_request_done(win, target,
				 MPI_Put(origin, ocount, otype, target, disp, tcount, ttype, win),
				 req);
}

int MPI_Rget(void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
	     int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Rget(origin, ocount, otype, target, disp, tcount, ttype, win, req);
	return rmpi_request_done(win, target,
				 MPI_Get(origin, ocount, otype, target, disp, tcount, ttype, win),
				 req);
}

int MPI_Raccumulate(const void *origin, int ocount, MPI_Datatype otype, int target,
		    MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win,
		    MPI_Request *req)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Raccumulate(origin, ocount, otype, target, disp, tcount, ttype, op,
					win, req);
	return rmpi_request_done(win, target,
				 MPI_Accumulate(origin, ocount, otype, target, disp, tcount,
						ttype, op, win),
				 req);
}

int MPI_Rget_accumulate(const void *origin, int ocount, MPI_Datatype otype, void *result,
			int rcount, MPI_Datatype rtype, int target, MPI_Aint disp, int tcount,
			MPI_Datatype ttype, MPI_Op op, MPI_Win win, MPI_Request *req)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Rget_accumulate(origin, ocount, otype, result, rcount, rtype, target,
					    disp, tcount, ttype, op, win, req);
	return rmpi_request_done(win, target,
				 MPI_Get_accumulate(origin, ocount, otype, result, rcount, rtype,
						    target, disp, tcount, ttype, op, win),
				 req);
}
