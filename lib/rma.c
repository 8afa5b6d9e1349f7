// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Communication: put, get and the accumulate family.  Nonblocking; each
 * completes at the next synchronization.  Each call is one descriptor,
 * through the mmap'd ring when the endpoint has one and the operation
 * needs no pinning, else a one-operation batch of RMAWIN_IOC_RMA.  What the
 * library can check itself (epoch.c) is only queued; the rest waits until
 * the kernel has taken it.
 */
#include <errno.h>
#include <string.h>

#include "rmawin_priv.h"

static int rmawin_ring_takes(const struct rmawin_op_desc *op)
{
	switch (op->opcode) {
	case RMAWIN_OP_PUT:
	case RMAWIN_OP_GET:
	case RMAWIN_OP_PUT_NOTIFY:
		/* larger ones may need pinning, which is the ioctl's job */
		return op->len <= RMAWIN_RING_COPY_MAX;
	case RMAWIN_OP_ACC:
	case RMAWIN_OP_GET_ACC:
		/*
		 * One that does not fit one control message waits for its
		 * target's answers while it is issued (fragments, inbox
		 * chunks): not in the poller, which the rings of other
		 * processes share, but in this thread's system call.
		 */
		return op->len <= RMAWIN_EPOCH_OP_MAX;
	default:
		return 1;
	}
}

/* An accumulate that the ring does not take only because of its length */
static int rmawin_long_acc(const struct rmawin_op_desc *op)
{
	return (op->opcode == RMAWIN_OP_ACC || op->opcode == RMAWIN_OP_GET_ACC) &&
	       !rmawin_ring_takes(op);
}

/*
 * Flushes with nothing to wait for.  A call that hands operations to the
 * kernel takes a ticket (@ep->issue), and when RMAWIN_IOC_RMA says that
 * the window it used is quiet (nothing in flight, results delivered, no
 * error waiting), the window keeps the ticket, provided no other call took
 * one or was under way meanwhile.  A flush of the window while its ticket
 * is still the newest and no call is under way has nothing to do, and
 * makes no system call.  Any operation on any window of the endpoint ends
 * that: what the other threads issue is never missed, at the cost of a
 * system call now and then that was not needed.
 */
#define RMAWIN_ISSUE_BUSY	((1ULL << RMAWIN_ISSUE_SHIFT) - 1)

/*
 * A call that began while another was under way gets a shared ticket
 * (RMAWIN_TICKET_SHARED), which never makes a window quiet: the other one
 * may hand the kernel its operations after the kernel answered ours, and
 * end before us, so that at our end nothing shows that it was there.
 */
uint64_t rmawin__issue_begin(struct rmawin_ep *ep)
{
	uint64_t v = __atomic_add_fetch(&ep->issue, (1ULL << RMAWIN_ISSUE_SHIFT) + 1,
					__ATOMIC_ACQ_REL);
	uint64_t ticket = v >> RMAWIN_ISSUE_SHIFT;

	return (v & RMAWIN_ISSUE_BUSY) == 1 ? ticket : ticket | RMAWIN_TICKET_SHARED;
}

/* @quiet: the window the kernel said is quiet after the call, or NULL */
void rmawin__issue_end(struct rmawin_ep *ep, uint64_t ticket, struct rmawin_win *quiet)
{
	uint64_t v = __atomic_sub_fetch(&ep->issue, 1, __ATOMIC_ACQ_REL);

	if (quiet && !(ticket & RMAWIN_TICKET_SHARED) && v == ticket << RMAWIN_ISSUE_SHIFT)
		__atomic_store_n(&quiet->quiet, ticket, __ATOMIC_RELEASE);
}

/* What a queued ring entry carries of its call's ticket: a shared one's never matches. */
uint64_t rmawin__ticket_lo(uint64_t ticket)
{
	return ticket & RMAWIN_TICKET_SHARED ? RMAWIN_UD_TICKET_MASK + 1 :
					       ticket & RMAWIN_UD_TICKET_MASK;
}

/**
 * rmawin__issue_quiet() - a queued ring entry left its window quiet
 * @ep: the endpoint
 * @win_id: the entry's window
 * @ticket_lo: the low bits (RMAWIN_UD_TICKET_MASK) of the ticket of the
 *	call that queued it
 *
 * Its completion had RMAWIN_CQE_F_QUIET.  If that call is still the
 * newest and no call is under way, the window keeps the ticket, as
 * rmawin__issue_end() does for an ioctl the kernel said left it quiet.
 * Every call that takes a ticket reaps the whole ring before it issues
 * anything (it reaps before it queues; before an ioctl it drains the
 * ring, or its bypass found it reaped), so between an entry's ticket and
 * its reaping only the calls under way, or past that reaping, take
 * tickets: never enough to come round to the same low bits.  Storing a
 * ticket that a racing call has just made old is harmless: the window is
 * quiet only while its ticket is the newest.
 */
void rmawin__issue_quiet(struct rmawin_ep *ep, uint32_t win_id, uint64_t ticket_lo)
{
	uint64_t v = __atomic_load_n(&ep->issue, __ATOMIC_ACQUIRE);
	struct rmawin_win *win;

	if ((v & RMAWIN_ISSUE_BUSY) || ((v >> RMAWIN_ISSUE_SHIFT) & RMAWIN_UD_TICKET_MASK) != ticket_lo)
		return;
	pthread_mutex_lock(&ep->lock);
	win = rmawin__win_by_id(ep, win_id);
	if (win)
		__atomic_store_n(&win->quiet, v >> RMAWIN_ISSUE_SHIFT, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ep->lock);
}

/* Would a flush of @win find nothing to wait for? */
int rmawin__win_quiet(const struct rmawin_win *win)
{
	uint64_t v = __atomic_load_n(&win->ep->issue, __ATOMIC_ACQUIRE);

	return !(v & RMAWIN_ISSUE_BUSY) &&
	       __atomic_load_n(&win->quiet, __ATOMIC_ACQUIRE) == v >> RMAWIN_ISSUE_SHIFT;
}

/*
 * Batches of up to RMAWIN_RMA_MAX_OPS; 1 if the last left @win quiet.
 * @ticket: the call's (rmawin__issue_begin()): the kernel is asked whether
 * @win is quiet only where its answer can be kept, for a call alone with
 * every ring entry queued before it taken.
 */
static int rmawin_submit_ioctl(struct rmawin_ep *ep, struct rmawin_op_desc *ops,
			       unsigned int n, struct rmawin_win *win, uint64_t ticket)
{
	int quiet = win && ep->rma_quiet && !(ticket & RMAWIN_TICKET_SHARED) &&
		    rmawin__ring_taken(ep);
	unsigned int done = 0, chunk;
	struct rmawin_rma r;
	int ret = 0;

	while (done < n && !ret) {
		chunk = n - done < RMAWIN_RMA_MAX_OPS ? n - done : RMAWIN_RMA_MAX_OPS;
		memset(&r, 0, sizeof(r));
		if (quiet)
			r.flags = RMAWIN_RMA_QUIET;
		r.ops_ptr = (uintptr_t)&ops[done];
		r.nops = chunk;
		r.op_size = sizeof(*ops);
		ret = rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_RMA, &r);
		done += chunk;
		if (ret > 0 && done < n)
			ret = 0;
	}
	return ret;
}

/* rmawin__submit(), @bypass already asked for a lone operation */
static int rmawin_submit_as(struct rmawin_ep *ep, struct rmawin_op_desc *ops, unsigned int n,
			    struct rmawin_win *win, int bypass)
{
	uint64_t ticket = rmawin__issue_begin(ep);
	unsigned int done = 0, i;
	int res = 0;

	if (ep->ring && !bypass) {
		for (i = 0; i < n && rmawin_ring_takes(&ops[i]); i++)
			;
		if (i == n)
			done = rmawin__ring_run(ep, ops, n, &res);
		/* the kernel sees what was queued before these */
		if (done < n)
			rmawin__ring_drain(ep);
	}
	if (done < n && !res)
		res = rmawin_submit_ioctl(ep, ops + done, n - done, win, ticket);
	rmawin__issue_end(ep, ticket, res > 0 ? win : NULL);
	return res > 0 ? 0 : res;
}

/**
 * rmawin__submit() - issue operations, in order
 * @ep: the endpoint
 * @ops: the descriptors
 * @n: how many, at least 1
 * @win: the window of every one of them, or NULL if they are not all on one
 *
 * Through the ring if it can take every one of them, else (and for what a
 * ring that died left) as RMAWIN_IOC_RMA batches of up to
 * RMAWIN_RMA_MAX_OPS, each checked whole before any of it is issued.  A
 * single operation goes by ioctl while the poller yields its CPU
 * (rmawin__ring_bypass()); several stay on the ring even then, so that a
 * batch's errors do not depend on the poller's mood: one doorbell runs
 * them all.
 *
 * Return: 0, or the first error; after an ioctl batch that failed, the
 * rest are not issued.
 */
int rmawin__submit(struct rmawin_ep *ep, struct rmawin_op_desc *ops, unsigned int n,
		   struct rmawin_win *win)
{
	return rmawin_submit_as(ep, ops, n, win, ep->ring && n == 1 && rmawin__ring_bypass(ep));
}

/* The descriptor of a put or get; -EINVAL for arguments no rank could take. */
int rmawin__rma_desc(struct rmawin_win *win, uint8_t opcode, const void *origin, size_t len,
		     int target, size_t target_disp, struct rmawin_op_desc *op)
{
	if (!win || target < 0 || (!origin && len))
		return -EINVAL;
	memset(op, 0, sizeof(*op));
	op->opcode = opcode;
	op->target = target;
	op->win = win->id;
	op->origin = (uintptr_t)origin;
	op->len = len;
	op->target_disp = target_disp;
	return 0;
}

/*
 * A put, a get or one of the accumulate family: queued in the ring without
 * waiting when the library can check it itself (its errors then come at
 * once, and a transfer's error at the window's next synchronization), else
 * issued and waited for.
 */
int rmawin__queue_one(struct rmawin_win *win, struct rmawin_op_desc *op)
{
	uint64_t ticket;
	int ret, long_acc;

	/* kept for a lock that is only noted (lazy.c), or that lock taken first */
	ret = rmawin__lazy_op(win, op);
	if (ret)
		return ret < 0 ? ret : 0;

	long_acc = rmawin_long_acc(op);
	if (win->ep->ring && (long_acc || rmawin_ring_takes(op))) {
		ret = rmawin__op_check(win, op);
		if (ret < 0)
			return ret;
		if (!ret && (long_acc || rmawin__ring_bypass(win->ep))) {
			/*
			 * By ioctl, as if queued: the kernel's verdict waits for
			 * the window's next synchronization, as the ring's would.
			 * A long accumulate waits for its target's answers in
			 * this thread, not in the shared poller, after what is
			 * queued.  A bypass found this thread's entries all run
			 * and reaped: other threads' have no order with ours.
			 */
			if (long_acc)
				rmawin__ring_drain(win->ep);
			ret = rmawin_submit_as(win->ep, op, 1, win, 1);
			if (ret)
				rmawin__win_error(win->ep, win->id, ret);
			return 0;
		}
		if (!ret) {
			ticket = rmawin__issue_begin(win->ep);
			ret = rmawin__ring_queue(win->ep, op, ticket);
			rmawin__issue_end(win->ep, ticket, NULL);
			if (ret)
				return 0;
		}
	}
	/* after what is queued, so that the kernel sees them in order */
	rmawin__ring_drain(win->ep);
	return rmawin__submit(win->ep, op, 1, win);
}

static int rmawin_rma_one(struct rmawin_win *win, uint8_t opcode, const void *origin,
			  size_t len, int target, size_t target_disp)
{
	struct rmawin_op_desc op;
	int ret = rmawin__rma_desc(win, opcode, origin, len, target, target_disp, &op);

	return ret ?: rmawin__queue_one(win, &op);
}

int rmawin_put(struct rmawin_win *win, const void *origin, size_t len, int target,
	       size_t target_disp)
{
	return rmawin_rma_one(win, RMAWIN_OP_PUT, origin, len, target, target_disp);
}

int rmawin_get(struct rmawin_win *win, void *origin, size_t len, int target,
	       size_t target_disp)
{
	return rmawin_rma_one(win, RMAWIN_OP_GET, origin, len, target, target_disp);
}

/* The library's enums are the ABI's values. */
_Static_assert((int)RMAWIN_SUM == (int)RMAWIN_ACC_SUM &&
	       (int)RMAWIN_LXOR == (int)RMAWIN_ACC_LXOR &&
	       (int)RMAWIN_NO_OP == (int)RMAWIN_ACC_NO_OP, "enum rmawin_op != enum rmawin_acc_op");
_Static_assert((int)RMAWIN_INT8 == (int)RMAWIN_TYPE_INT8 &&
	       (int)RMAWIN_UINT32 == (int)RMAWIN_TYPE_UINT32 &&
	       (int)RMAWIN_DOUBLE == (int)RMAWIN_TYPE_DOUBLE, "enum rmawin_type != enum rmawin_datatype");

static size_t rmawin_type_size(enum rmawin_type type)
{
	static const unsigned char sizes[] = { 1, 1, 2, 2, 4, 4, 8, 8, 4, 8 };

	return (unsigned int)type < sizeof(sizes) ? sizes[type] : 0;
}

/**
 * rmawin__acc_desc() - the descriptor of an accumulate-family operation
 * @win: the window
 * @opcode: RMAWIN_OP_ACC, _GET_ACC, _FETCH_OP or _CAS
 * @origin: the origin elements (NULL for RMAWIN_NO_OP)
 * @compare: CAS: the element to compare with; else NULL
 * @result: GET_ACC, FETCH_OP, CAS: where the previous values go; else NULL
 * @count: elements
 * @type: their type
 * @target: rank of the target
 * @target_disp: where in its window, in its disp_units
 * @op: the operation (CAS: 0)
 * @d: out: the descriptor
 *
 * Return: 0; -EINVAL for arguments no rank could take.
 */
int rmawin__acc_desc(struct rmawin_win *win, uint8_t opcode, const void *origin,
		     const void *compare, void *result, size_t count, enum rmawin_type type,
		     int target, size_t target_disp, enum rmawin_op op, struct rmawin_op_desc *d)
{
	if (!win || target < 0 || !rmawin_type_size(type) || (unsigned int)op > 255)
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	d->opcode = opcode;
	d->acc_op = op;
	d->datatype = type;
	d->target = target;
	d->win = win->id;
	d->origin = (uintptr_t)origin;
	d->len = count * rmawin_type_size(type);
	d->target_disp = target_disp;
	d->result = (uintptr_t)result;
	d->compare = (uintptr_t)compare;
	return 0;
}

static int rmawin_acc_one(struct rmawin_win *win, uint8_t opcode, const void *origin,
			  const void *compare, void *result, size_t count, enum rmawin_type type,
			  int target, size_t target_disp, enum rmawin_op op)
{
	struct rmawin_op_desc d;
	int ret = rmawin__acc_desc(win, opcode, origin, compare, result, count, type, target,
				   target_disp, op, &d);

	return ret ?: rmawin__queue_one(win, &d);
}

int rmawin_accumulate(struct rmawin_win *win, const void *origin, size_t count,
		      enum rmawin_type type, int target, size_t target_disp, enum rmawin_op op)
{
	return rmawin_acc_one(win, RMAWIN_OP_ACC, origin, NULL, NULL, count, type, target,
			      target_disp, op);
}

int rmawin_get_accumulate(struct rmawin_win *win, const void *origin, void *result,
			  size_t count, enum rmawin_type type, int target, size_t target_disp,
			  enum rmawin_op op)
{
	return rmawin_acc_one(win, RMAWIN_OP_GET_ACC, origin, NULL, result, count, type,
			      target, target_disp, op);
}

int rmawin_fetch_and_op(struct rmawin_win *win, const void *origin, void *result,
			enum rmawin_type type, int target, size_t target_disp, enum rmawin_op op)
{
	return rmawin_acc_one(win, RMAWIN_OP_FETCH_OP, origin, NULL, result, 1, type, target,
			      target_disp, op);
}

int rmawin_compare_and_swap(struct rmawin_win *win, const void *origin, const void *compare,
			    void *result, enum rmawin_type type, int target, size_t target_disp)
{
	return rmawin_acc_one(win, RMAWIN_OP_CAS, origin, compare, result, 1, type, target,
			      target_disp, 0);
}
