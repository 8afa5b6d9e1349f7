// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Request-based operations (MPI_Rput, MPI_Rget, MPI_Raccumulate,
 * MPI_Rget_accumulate).  MPI only allows them in passive-target epochs and
 * lets their requests complete once the operation has completed at the
 * origin: the origin buffer of a put or accumulate may be reused, a get's
 * data has arrived.
 *
 * The operation is issued as its blocking-completion twin would be
 * (MPI_Put...), and the request is a generalized one (MPI_Grequest_start)
 * left pending.  A generalized request has no progress hook, so the calls
 * that wait for or test requests (MPI_Wait, MPI_Test, their -all, -any and
 * -some forms, MPI_Request_get_status, MPI_Request_free) are taken over:
 * for each pending request of ours among their arguments they complete the
 * operation with rmawin_flush_local() to its target, mark every pending
 * request to that target complete (MPI_Grequest_complete), and then hand
 * the call to the real MPI.  A synchronization call that completes the
 * operations itself (unlock, flush, flush_local and their _all forms, window
 * free) marks the window's requests complete too (rmpi_req_settle()), so
 * that a request waited for after its epoch ended never touches the
 * window again.  With no request of ours pending, the wait and test calls
 * go straight to the real MPI.
 *
 * Requests are kept in one list, under a lock of its own: one-sided calls
 * come from one thread at a time (Documentation/mpi.rst, Threads), but at
 * MPI_THREAD_MULTIPLE other threads may wait for their own requests
 * meanwhile, and so look through the list while it changes.
 */
#include <pthread.h>
#include <stdlib.h>

#include "rmawin_mpi.h"

/*
 * struct rmpi_req - one request-based operation
 * @req: the generalized request the program holds
 * @w: its window, while @pending
 * @target: its target rank
 * @code: MPI error class of its completion, for the query function
 * @pending: not marked complete yet (on rmpi_pending)
 * @next: the next pending request
 */
struct rmpi_req {
	MPI_Request req;
	struct rmpi_win *w;
	int target;
	int code;
	int pending;
	struct rmpi_req *next;
};

static struct rmpi_req *rmpi_pending;
static pthread_mutex_t rmpi_pending_lock = PTHREAD_MUTEX_INITIALIZER;

static int rmpi_greq_query(void *extra, MPI_Status *status)
{
	struct rmpi_req *r = extra;

	PMPI_Status_set_elements(status, MPI_BYTE, 0);
	PMPI_Status_set_cancelled(status, 0);
	status->MPI_SOURCE = MPI_UNDEFINED;
	status->MPI_TAG = MPI_UNDEFINED;
	return r->code;
}

static int rmpi_greq_free(void *extra)
{
	free(extra);
	return MPI_SUCCESS;
}

static int rmpi_greq_cancel(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;	/* an RMA operation cannot be cancelled */
}

/*
 * Mark @w's pending requests to @target (every target if negative)
 * complete with @code: their operations have completed at the origin.
 */
void rmpi_req_settle(struct rmpi_win *w, int target, int code)
{
	struct rmpi_req **p, *r, *done = NULL;

	pthread_mutex_lock(&rmpi_pending_lock);
	for (p = &rmpi_pending; (r = *p);) {
		if (r->w != w || (target >= 0 && r->target != target)) {
			p = &r->next;
			continue;
		}
		/* the head is read unlocked, for a quick "none of ours" */
		__atomic_store_n(p, r->next, __ATOMIC_RELAXED);
		r->next = done;
		done = r;
	}
	pthread_mutex_unlock(&rmpi_pending_lock);
	/* off the list, so no other thread sees them: complete them unlocked */
	while ((r = done)) {
		done = r->next;
		r->next = NULL;
		r->pending = 0;
		r->w = NULL;
		r->code = code;
		PMPI_Grequest_complete(r->req);
	}
}

static struct rmpi_req *rmpi_req_find(MPI_Request req)
{
	struct rmpi_req *r;

	if (req == MPI_REQUEST_NULL)
		return NULL;
	pthread_mutex_lock(&rmpi_pending_lock);
	for (r = rmpi_pending; r; r = r->next)
		if (r->req == req)
			break;
	pthread_mutex_unlock(&rmpi_pending_lock);
	return r;
}

/* Complete @r's operation (and every other one to its target); raises errors. */
static int rmpi_req_finish(struct rmpi_req *r)
{
	struct rmpi_win *w = r->w;
	int target = r->target, err, code;

	err = rmawin_flush_local(w->rw, target);
	code = rmpi_errclass(err);
	if (err)
		rmpi_debug("request to %d: %s", target, rmawin_strerror(err));
	rmpi_req_settle(w, target, code);
	return code == MPI_SUCCESS ? code : rmpi_win_raise(w->win, code);
}

/* Complete every pending request of ours among @reqs. */
static void rmpi_req_finish_all(int count, const MPI_Request reqs[])
{
	struct rmpi_req *r;
	int i;

	for (i = 0; __atomic_load_n(&rmpi_pending, __ATOMIC_RELAXED) && i < count; i++) {
		r = rmpi_req_find(reqs[i]);
		if (r)
			rmpi_req_finish(r);
	}
}

/* After the operation was issued (@code): a pending request for it in *@req. */
static int rmpi_request_start(MPI_Win win, int target, int code, MPI_Request *req)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	struct rmpi_req *r;

	if (code != MPI_SUCCESS)
		return code;	/* already raised */
	r = calloc(1, sizeof(*r));
	if (!r)
		return rmpi_win_raise(win, MPI_ERR_NO_MEM);
	code = PMPI_Grequest_start(rmpi_greq_query, rmpi_greq_free, rmpi_greq_cancel, r, req);
	if (code != MPI_SUCCESS) {
		free(r);
		return rmpi_win_raise(win, code);
	}
	r->req = *req;
	if (target == MPI_PROC_NULL)	/* nothing was issued */
		return rmpi_win_raise(win, PMPI_Grequest_complete(*req));
	r->w = w;
	r->target = target;
	r->pending = 1;
	pthread_mutex_lock(&rmpi_pending_lock);
	r->next = rmpi_pending;
	__atomic_store_n(&rmpi_pending, r, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&rmpi_pending_lock);
	return MPI_SUCCESS;
}

int MPI_Rput(const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
	     int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Rput(origin, ocount, otype, target, disp, tcount, ttype, win, req);
	return rmpi_request_start(win, target,
				  MPI_Put(origin, ocount, otype, target, disp, tcount, ttype, win),
				  req);
}

int MPI_Rget(void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
	     int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *req)
{
	if (!rmpi_win_lookup(win))
		return PMPI_Rget(origin, ocount, otype, target, disp, tcount, ttype, win, req);
	return rmpi_request_start(win, target,
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
	return rmpi_request_start(win, target,
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
	return rmpi_request_start(win, target,
				  MPI_Get_accumulate(origin, ocount, otype, result, rcount, rtype,
						     target, disp, tcount, ttype, op, win),
				  req);
}

/* The real MPI's completion calls, once ours among their requests are complete. */

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	rmpi_req_finish_all(1, req);
	return PMPI_Wait(req, status);
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	rmpi_req_finish_all(1, req);
	return PMPI_Test(req, flag, status);
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
	rmpi_req_finish_all(count, reqs);
	return PMPI_Waitall(count, reqs, statuses);
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	rmpi_req_finish_all(count, reqs);
	return PMPI_Testall(count, reqs, flag, statuses);
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
	rmpi_req_finish_all(count, reqs);
	return PMPI_Waitany(count, reqs, index, status);
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	rmpi_req_finish_all(count, reqs);
	return PMPI_Testany(count, reqs, index, flag, status);
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
		 MPI_Status statuses[])
{
	rmpi_req_finish_all(incount, reqs);
	return PMPI_Waitsome(incount, reqs, outcount, indices, statuses);
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
		 MPI_Status statuses[])
{
	rmpi_req_finish_all(incount, reqs);
	return PMPI_Testsome(incount, reqs, outcount, indices, statuses);
}

int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
	rmpi_req_finish_all(1, &req);
	return PMPI_Request_get_status(req, flag, status);
}

/* The operation must still complete before its buffer is reused: now. */
int MPI_Request_free(MPI_Request *req)
{
	rmpi_req_finish_all(1, req);
	return PMPI_Request_free(req);
}
