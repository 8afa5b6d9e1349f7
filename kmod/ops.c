// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: one-sided operations: RMAWIN_IOC_RMA and the ring's entries, the
 * table of opcodes that dispatches them (puts and gets in rma.c, the
 * accumulate family in acc.c and atomic.c), and the requests they live in.
 *
 * Each operation is a request with a count of work requests in flight,
 * biased by one while it is being posted.  Completions only count down;
 * what needs the process's context (copying a bounced get to the user,
 * unpinning) happens when the window is reaped: at synchronization, or
 * when the issuing ioctl runs short of bounce buffers.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/highmem.h>
#include <linux/uaccess.h>
#include <linux/overflow.h>

#include "ops.h"

/**
 * rmawin_req_finish() - a request is complete (once, whoever calls first)
 * @req: the request
 *
 * Context: any.
 */
void rmawin_req_finish(struct rmawin_req *req)
{
	struct rmawin_win *win = req->win;
	struct rmawin_ep *ep = win->ep;

	/* a reply and a peer's failure may race to finish an accumulate */
	if (test_and_set_bit(0, &req->finished))
		return;
	/*
	 * status before done: the reaper reads them in the other order.  Once
	 * done, the owner may reap the request, and once the window has
	 * nothing in flight, free it: only the endpoint may be touched after.
	 */
	smp_store_release(&req->done, true);
	atomic_inc(&ep->reapable);
	atomic_dec(&win->inflight);
	rmawin_ep_wake_all(ep);
}

static void rmawin_req_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmawin_req *req = container_of(wc->wr_cqe, struct rmawin_req, cqe);
	/* the request may be finished and reaped once our count is off it */
	struct rmawin_ep *ep = req->win->ep;

	atomic_dec(&req->peer->sq_data);
	if (wc->status != IB_WC_SUCCESS) {
		if (!req->status)
			req->status = rmawin_wc_errno(wc->status);
		/* the QP is in error now: nothing more gets through it */
		rmawin_peer_lost(req->peer);
	}
	if (atomic_dec_and_test(&req->pending))
		rmawin_req_finish(req);
	else
		rmawin_ep_wake_all(ep);
}

static const struct rmawin_op_def *rmawin_op_def(u8 opcode);

/**
 * rmawin_ep_reap() - reap every window of an endpoint
 * @ep: the endpoint, locked
 *
 * Finished requests give back what they hold (bounce buffers, pins) and
 * go to the endpoint's cache of requests.
 */
void rmawin_ep_reap(struct rmawin_ep *ep)
{
	struct rmawin_win *win;
	unsigned long id;

	lockdep_assert_held(&ep->lock);
	xa_for_each(&ep->wins, id, win)
		rmawin_win_reap(win, true);
}

/*
 * A request: a reaped one if the endpoint kept one, else a new one.  A
 * burst of operations that nothing reaps (ring entries: many puts, then
 * one flush) leaves the finished ones on their windows; they are reaped
 * here once the cache runs dry, so that only as many requests are ever
 * allocated as are in flight at once.
 */
static struct rmawin_req *rmawin_req_alloc(struct rmawin_ep *ep)
{
	struct rmawin_req *req;

	lockdep_assert_held(&ep->lock);
	if (list_empty(&ep->req_free) && atomic_read(&ep->reapable))
		rmawin_ep_reap(ep);
	req = list_first_entry_or_null(&ep->req_free, struct rmawin_req, node);
	if (req) {
		list_del(&req->node);
		ep->nreq_free--;
		memset(req, 0, sizeof(*req));
	} else {
		req = kzalloc(sizeof(*req), GFP_KERNEL_ACCOUNT);
		if (!req)
			return NULL;
		rmawin_count(ep, RMAWIN_CNT_REQ_ALLOCS, 1);
	}
	atomic_inc(&rmawin_stats.reqs);
	return req;
}

static void rmawin_req_free(struct rmawin_ep *ep, struct rmawin_req *req)
{
	lockdep_assert_held(&ep->lock);
	atomic_dec(&rmawin_stats.reqs);
	if (ep->nreq_free < RMAWIN_REQ_CACHE) {
		list_add(&req->node, &ep->req_free);
		ep->nreq_free++;
		return;
	}
	kfree(req);
}

/**
 * rmawin_reqs_free_cache() - free the requests an endpoint kept
 * @ep: the endpoint, no longer used by anyone
 */
void rmawin_reqs_free_cache(struct rmawin_ep *ep)
{
	struct rmawin_req *req, *tmp;

	list_for_each_entry_safe(req, tmp, &ep->req_free, node)
		kfree(req);
	INIT_LIST_HEAD(&ep->req_free);
	ep->nreq_free = 0;
}

/*
 * Let a request go: what its opcode took (copying results out first if
 * @copy_out), then the request.  Its error, if any, is the window's next
 * synchronization's.
 */
static void rmawin_req_release(struct rmawin_req *req, bool copy_out)
{
	struct rmawin_win *win = req->win;

	rmawin_op_def(req->opcode)->release(req, copy_out);
	if (req->status) {
		/* a whole lock epoch refused at once is the target's answer */
		if (req->status != -EAGAIN)
			rmawin_count(win->ep, RMAWIN_CNT_ERRORS, 1);
		if (!win->error)
			win->error = req->status;
	}
	rmawin_req_free(win->ep, req);
}

/**
 * rmawin_win_reap() - finish the window's completed operations
 * @win: the window
 * @copy_out: copy bounced gets to their origin buffers (false on teardown)
 *
 * Context: process context of the window's owner.  The first error of an
 * operation is kept in @win->error for the next synchronization.
 */
void rmawin_win_reap(struct rmawin_win *win, bool copy_out)
{
	struct rmawin_req *req, *tmp;
	LIST_HEAD(done);

	if (list_empty(&win->reqs))
		return;
	/* the list is the owner's: only its calls, under this lock, touch it */
	lockdep_assert_held(&win->ep->lock);
	list_for_each_entry_safe(req, tmp, &win->reqs, node)
		/* pairs with the release in rmawin_req_finish(): status is set */
		if (smp_load_acquire(&req->done))
			list_move_tail(&req->node, &done);

	list_for_each_entry_safe(req, tmp, &done, node) {
		/* a refused request's caller already heard: nothing to deliver */
		bool out = copy_out && !req->refused;

		atomic_dec(&win->ep->reapable);
		if (req->refused)
			req->status = 0;
		rmawin_req_release(req, out);
	}
}

static bool rmawin_win_idle(struct rmawin_win *win)
{
	return !atomic_read(&win->inflight) || READ_ONCE(win->ep->dev->dead);
}

/**
 * rmawin_win_complete() - wait for every operation issued on a window
 * @win: the window
 *
 * Context: process context, endpoint lock held; sleeps.
 * Return: 0, or the first error of an operation since the last call
 * (which it clears), -ENODEV, -EINTR on a fatal signal.
 */
int rmawin_win_complete(struct rmawin_win *win)
{
	int ret;

	lockdep_assert_held(&win->ep->lock);
	if (rmawin_wait_peers(win->ep, rmawin_win_idle(win)))
		return -EINTR;
	if (READ_ONCE(win->ep->dev->dead))
		return -ENODEV;
	/* nothing in flight: rmawin_win_drain_start() starts afresh */
	win->unordered = false;
	win->reads = false;
	rmawin_win_reap(win, true);
	ret = win->error;
	win->error = 0;
	return ret;
}

/**
 * rmawin_win_drain_start() - begin to end an epoch on a window
 * @win: the window, its endpoint locked
 * @may_overtake: may the epoch's closing messages go out before its
 *	operations complete here, if they allow it?
 * @d: filled in for rmawin_win_drain_end()
 *
 * The targets must not hear that an epoch ended before its operations are
 * done there.  An RC queue pair delivers in order: a target handles a
 * message posted after an RDMA write only once the write's data is placed,
 * and after an RDMA read once it was answered if the message is fenced
 * (rmawin_msg_signal()).  A put or a get has posted every work request it
 * has by the time its call returns.  The accumulate family does not
 * qualify: its fragments and atomic steps may be posted later, from
 * completions, and a target may apply an accumulate out of line.  The
 * window notes what was issued on it since it was last idle
 * (rmawin_win_note()), so which way an epoch goes does not depend on what
 * has completed yet.
 *
 * So if @may_overtake and every operation in flight is a put or a get,
 * the caller sends its messages at once (fenced if @d->fence) and
 * completes afterwards; otherwise this completes first.
 *
 * Context: as rmawin_win_complete().
 * Return: 0 if the messages go first, else rmawin_win_complete()'s.
 */
int rmawin_win_drain_start(struct rmawin_win *win, bool may_overtake, struct rmawin_drain *d)
{
	lockdep_assert_held(&win->ep->lock);
	d->early = may_overtake && !win->unordered;
	d->fence = d->early && win->reads;
	return d->early ? 0 : rmawin_win_complete(win);
}

/**
 * rmawin_win_drain_end() - finish ending an epoch on a window
 * @win: the window, its endpoint locked
 * @d: as rmawin_win_drain_start() filled it in
 * @ret: the caller's result so far
 *
 * Context: as rmawin_win_complete().
 * Return: @ret, or the error of an operation that completed here after
 * the messages went out, which comes first.
 */
int rmawin_win_drain_end(struct rmawin_win *win, const struct rmawin_drain *d, int ret)
{
	if (!d->early)
		return ret;
	rmawin_count(win->ep, RMAWIN_CNT_EARLY_COMPLETES, 1);
	return rmawin_win_complete(win) ?: ret;
}

/* Note an operation's kind for rmawin_win_drain_start() as it is issued. */
static void rmawin_win_note(struct rmawin_win *win, const struct rmawin_op_desc *op)
{
	if (op->opcode != RMAWIN_OP_PUT && op->opcode != RMAWIN_OP_PUT_NOTIFY &&
	    op->opcode != RMAWIN_OP_GET)
		win->unordered = true;
	win->reads |= op->opcode == RMAWIN_OP_GET;
}

#define RMAWIN_OP_F_EPOCH	(RMAWIN_OP_F_EPOCH_SHARED | RMAWIN_OP_F_EPOCH_EXCLUSIVE)
#define RMAWIN_OP_F_KNOWN	(RMAWIN_OP_F_EPOCH | RMAWIN_OP_F_EPOCH_COMPLETE)

/*
 * RMAWIN_OP_F_EPOCH_SHARED or _EXCLUSIVE: may @op be a whole lock epoch of
 * its own (_COMPLETE: pscw.c judges)?  In place
 * of the access epoch check: the window must hold no lock of the target
 * nor wait for one (the target takes an epoch from a rank that does for a
 * rogue's), and be in no PSCW or non-empty fence epoch, as for
 * RMAWIN_IOC_LOCK; locks of other ranks (a lazy lock_all's own) may be
 * held.  Return: 0 (@t->epoch set) or the uAPI's errno.
 */
static int rmawin_epoch_op_check(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
				 struct rmawin_target *t)
{
	struct rmawin_win *win = t->win;

	if (op->flags == RMAWIN_OP_F_EPOCH_COMPLETE)
		return rmawin_pscw_op_check(ep, op, t);
	if (op->flags != RMAWIN_OP_F_EPOCH_SHARED && op->flags != RMAWIN_OP_F_EPOCH_EXCLUSIVE)
		return -EINVAL;
	if (t->ring || op->target == ep->group->rank || !op->len ||
	    op->opcode == RMAWIN_OP_PUT_NOTIFY)
		return -EINVAL;
	if (op->len > RMAWIN_EPOCH_OP_MAX)
		return -EMSGSIZE;
	if (win->held[op->target] || test_bit(op->target, win->asking) || win->pscw.started ||
	    win->pscw.waiting || (win->fence_open && win->fence_ops))
		return -EBUSY;
	t->epoch = op->flags == RMAWIN_OP_F_EPOCH_SHARED ? RMAWIN_WIRE_EPOCH_SHARED :
							   RMAWIN_WIRE_EPOCH_EXCLUSIVE;
	return 0;
}

/*
 * The target's CPU applies an epoch operation.  On a window whose
 * accumulates take the device's atomics, another holder of a shared lock
 * could have one of those under way at the same element, which the CPU's
 * update would not be atomic against: an accumulate there takes the lock
 * exclusive at the target, for the moment it is applied (granted only
 * while nobody else holds it, so no device atomic is under way).
 */
static void rmawin_epoch_op_path(const struct rmawin_op_def *def, struct rmawin_target *t)
{
	if (def->acc && t->atomic)
		t->epoch = RMAWIN_WIRE_EPOCH_EXCLUSIVE;
	t->atomic = false;
}

static int rmawin_op_check(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
			   struct rmawin_target *t)
{
	struct rmawin_group *grp = ep->group;
	const struct rmawin_op_def *def;
	u64 length, end;
	u32 unit;
	int ret;

	if (!op->opcode || op->opcode >= RMAWIN_OP_LAST)
		return -EINVAL;
	/* the one operation without a target: a synchronization */
	if (op->opcode == RMAWIN_OP_FLUSH)
		return rmawin_flush_check(ep, op, &t->win);
	def = rmawin_op_def(op->opcode);
	if ((op->flags & ~RMAWIN_OP_F_KNOWN) || op->reserved || (op->tag && !def->tag))
		return -EINVAL;
	if (!def->acc && (op->acc_op || op->datatype || op->result || op->compare))
		return -EINVAL;
	t->win = rmawin_win_lookup(ep, op->win);
	if (!t->win)
		return -ENOENT;
	if (op->target >= grp->nranks)
		return -EINVAL;
	if (op->target == grp->rank) {
		t->remote = NULL;
		length = t->win->length;
		unit = t->win->disp_unit;
	} else {
		t->remote = &t->win->tbl->remote[op->target];
		length = t->remote->length;
		unit = t->remote->disp_unit;
	}
	ret = op->flags ? rmawin_epoch_op_check(ep, op, t) : rmawin_epoch_check(t->win, op->target);
	if (ret)
		return ret;
	if (check_mul_overflow(op->target_disp, (u64)unit, &t->off) ||
	    check_add_overflow(t->off, op->len, &end) || end > length)
		return -ERANGE;
	ret = def->check(op);
	if (!ret && def->acc)
		ret = rmawin_atomic_check(t, op);
	if (!ret && t->epoch)
		rmawin_epoch_op_path(def, t);
	/* the target's CPU applies it: not against the device's atomics */
	if (!ret && t->carried && t->atomic)
		ret = -EOPNOTSUPP;
	return ret;
}

#define RMAWIN_OP_RMA(_local, _issue, _tag)					\
	{ .tag = _tag, .check = rmawin_rma_check, .local = _local,		\
	  .prep = rmawin_rma_prep, .issue = _issue, .release = rmawin_rma_release }
#define RMAWIN_OP_ACC_DEF							\
	{ .acc = true, .check = rmawin_acc_check, .local = rmawin_acc_local,	\
	  .issue = rmawin_acc_issue, .release = rmawin_acc_release }

static const struct rmawin_op_def rmawin_op_defs[RMAWIN_OP_LAST] = {
	[RMAWIN_OP_PUT] = RMAWIN_OP_RMA(rmawin_rma_local, rmawin_rma_issue, false),
	[RMAWIN_OP_GET] = RMAWIN_OP_RMA(rmawin_rma_local, rmawin_rma_issue, false),
	[RMAWIN_OP_PUT_NOTIFY] = RMAWIN_OP_RMA(rmawin_put_notify_local,
					       rmawin_put_notify_issue, true),
	[RMAWIN_OP_ACC] = RMAWIN_OP_ACC_DEF,
	[RMAWIN_OP_GET_ACC] = RMAWIN_OP_ACC_DEF,
	[RMAWIN_OP_FETCH_OP] = RMAWIN_OP_ACC_DEF,
	[RMAWIN_OP_CAS] = RMAWIN_OP_ACC_DEF,
	/* RMAWIN_OP_FLUSH has no entry: rmawin_op_check() hands it to lock.c */
};

/* Context: @opcode is one of the table's. */
static const struct rmawin_op_def *rmawin_op_def(u8 opcode)
{
	return &rmawin_op_defs[opcode];
}

static int rmawin_op_remote(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
			    const struct rmawin_target *t)
{
	const struct rmawin_op_def *def = rmawin_op_def(op->opcode);
	struct rmawin_peer *peer = &ep->group->peers[op->target];
	struct rmawin_win *win = t->win;
	struct rmawin_req *req;
	int ret;

	/* only the atomics reach this rank's own window this way */
	if (op->target == ep->group->rank)
		peer = NULL;
	else if (READ_ONCE(peer->state) != RMAWIN_PEER_CONNECTED)
		return peer->error ?: -ECONNRESET;
	req = rmawin_req_alloc(ep);
	if (!req)
		return -ENOMEM;
	req->win = win;
	req->peer = peer;
	req->cqe.done = rmawin_req_done;
	req->opcode = op->opcode;
	req->uaddr = u64_to_user_ptr(op->origin);
	req->len = op->len;
	if (!def->acc)
		req->rma.bounce = -1;
	/* the posting bias: no completion finishes it before we are done */
	atomic_set(&req->pending, 1);

	ret = def->prep ? def->prep(req, op, t) : 0;
	if (ret) {
		rmawin_req_release(req, false);
		return ret;
	}
	atomic_inc(&win->inflight);
	list_add_tail(&req->node, &win->reqs);
	rmawin_win_note(win, op);

	ret = t->atomic ? rmawin_atomic_issue(req, op, t) : def->issue(req, op, t);
	/* the caller hears of this failure now, not again at the fence */
	if (ret)
		req->refused = true;
	if (atomic_dec_and_test(&req->pending))
		rmawin_req_finish(req);
	return ret;
}

/*
 * A whole lock epoch: the operation goes as the accumulate the target's
 * kernel applies under its lock (a put as byte REPLACE, a get as byte
 * NO_OP fetching into the get's buffer) in one fragment, and the call
 * returns when it is answered, as an unlock would.
 */
static int rmawin_epoch_op_issue(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
				 const struct rmawin_target *t)
{
	struct rmawin_op_desc acc = *op;
	int ret;

	BUILD_BUG_ON(RMAWIN_EPOCH_OP_MAX > RMAWIN_ACC_FRAG);
	if (op->opcode == RMAWIN_OP_PUT || op->opcode == RMAWIN_OP_GET) {
		acc.acc_op = RMAWIN_ACC_REPLACE;
		acc.datatype = RMAWIN_TYPE_UINT8;
		acc.opcode = RMAWIN_OP_ACC;
	}
	if (op->opcode == RMAWIN_OP_GET) {
		acc.acc_op = RMAWIN_ACC_NO_OP;
		acc.opcode = RMAWIN_OP_GET_ACC;
		acc.result = op->origin;
		acc.origin = 0;
	}
	/* as RMAWIN_IOC_LOCK: an empty fence epoch ends here */
	t->win->fence_open = false;
	ret = rmawin_op_remote(ep, &acc, t);
	return ret ?: rmawin_win_complete(t->win);
}

static int rmawin_op_issue(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
			   const struct rmawin_target *t)
{
	BUILD_BUG_ON(RMAWIN_RING_COPY_MAX > RMAWIN_BOUNCE_SIZE);
	if (op->opcode == RMAWIN_OP_FLUSH)
		return rmawin_win_complete(t->win);
	rmawin_count(ep, RMAWIN_CNT_OPS, 1);
	if (t->carried)
		return rmawin_pscw_op_issue(ep, op, t);
	if (t->epoch)
		return rmawin_epoch_op_issue(ep, op, t);
	t->win->fence_ops++;
	if (!op->len)
		return 0;
	if (op->target == ep->group->rank && !t->atomic)
		return rmawin_op_def(op->opcode)->local(ep, op, t);
	return rmawin_op_remote(ep, op, t);
}

static int rmawin_rma_copy_ops(const struct rmawin_rma *r, struct rmawin_op_desc *ops)
{
	const u8 __user *uops = u64_to_user_ptr(r->ops_ptr);
	u32 i;
	int ret;

	/* the library's own size: a copy whose size the compiler knows */
	if (r->op_size == sizeof(*ops) && r->nops == 1)
		return copy_from_user(ops, uops, sizeof(*ops)) ? -EFAULT : 0;
	if (r->op_size == sizeof(*ops))
		return copy_from_user(ops, uops, (size_t)r->nops * sizeof(*ops)) ? -EFAULT : 0;
	for (i = 0; i < r->nops; i++) {
		ret = copy_struct_from_user(&ops[i], sizeof(ops[i]),
					    uops + (size_t)i * r->op_size, r->op_size);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * RMAWIN_RMA_QUIET: has every window of the issued batch nothing in flight
 * and no error waiting?  Its finished operations are reaped first, which
 * puts their results in the caller's buffers.
 */
static bool rmawin_rma_quiet(struct rmawin_target *targets, u32 nops)
{
	struct rmawin_win *win, *prev = NULL;
	u32 i;

	for (i = 0; i < nops; i++) {
		win = targets[i].win;
		if (win == prev)
			continue;
		if (atomic_read(&win->inflight))
			return false;
		rmawin_win_reap(win, true);
		if (win->error)
			return false;
		prev = win;
	}
	return true;
}

/**
 * rmawin_op_run() - check and issue one operation
 * @ep: the endpoint, locked
 * @op: the descriptor, in kernel memory
 * @ring: from the submission ring: the origin must need no pinning
 * @quiet: out: true if it was issued and its window is quiet after it, as
 *	RMAWIN_RMA_QUIET has it (RMAWIN_CQE_F_QUIET)
 *
 * What the poller runs for every ring entry; RMAWIN_IOC_RMA does the same
 * in two passes, so that a batch is all or nothing.
 *
 * Return: what RMAWIN_IOC_RMA returns for a batch of @op alone.
 */
int rmawin_op_run(struct rmawin_ep *ep, const struct rmawin_op_desc *op, bool ring,
		  bool *quiet)
{
	struct rmawin_target t = { .ring = ring };
	int ret;

	lockdep_assert_held(&ep->lock);
	*quiet = false;
	ret = rmawin_ep_check_group(ep);
	if (!ret)
		ret = rmawin_op_check(ep, op, &t);
	if (!ret)
		ret = rmawin_op_issue(ep, op, &t);
	if (!ret)
		*quiet = rmawin_rma_quiet(&t, 1);
	return ret;
}

/**
 * rmawin_op_would_wait() - would running a ring entry now wait for the network?
 * @ep: the endpoint, locked
 * @op: the descriptor, in kernel memory
 *
 * A flush of a window with operations in flight would, and so would an
 * operation on the device's atomics while a serial one is in flight to
 * its target (atomic.c): the shared poller leaves it at the head of its
 * ring until they complete, rather than wait there for one process's round
 * trips.  A flush that fails its checks would not: running it reports the
 * error at once.
 *
 * Return: true if rmawin_op_run() would wait for completions.
 */
bool rmawin_op_would_wait(struct rmawin_ep *ep, const struct rmawin_op_desc *op)
{
	struct rmawin_win *win;

	lockdep_assert_held(&ep->lock);
	if (!op->opcode || op->opcode >= RMAWIN_OP_LAST || rmawin_ep_check_group(ep))
		return false;
	if (op->opcode != RMAWIN_OP_FLUSH)
		return rmawin_op_def(op->opcode)->acc && rmawin_atomic_would_wait(ep, op);
	if (rmawin_flush_check(ep, op, &win))
		return false;
	return !rmawin_win_idle(win);
}

/**
 * rmawin_ioctl_rma() - RMAWIN_IOC_RMA
 * @ep: the endpoint
 * @arg: struct rmawin_rma, already copied in
 *
 * Return: 0 (1: quiet) or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_rma(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_rma *r = arg;
	struct rmawin_target *targets, one_target;
	struct rmawin_op_desc *ops, one_op;
	u32 i;
	int ret;

	BUILD_BUG_ON(offsetof(struct rmawin_op_desc, user_data) != RMAWIN_OP_DESC_SIZE_VER0);
	if ((r->flags & ~RMAWIN_RMA_QUIET) || !r->nops || r->nops > RMAWIN_RMA_MAX_OPS ||
	    r->op_size < RMAWIN_OP_DESC_SIZE_VER0 || r->op_size > PAGE_SIZE)
		return -EINVAL;
	if (r->nops == 1) {
		/* what every library call sends: no allocation for it */
		ops = &one_op;
		targets = &one_target;
		memset(targets, 0, sizeof(*targets));
	} else {
		ops = kvcalloc(r->nops, sizeof(*ops), GFP_KERNEL_ACCOUNT);
		targets = kvcalloc(r->nops, sizeof(*targets), GFP_KERNEL_ACCOUNT);
	}
	if (!ops || !targets) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = rmawin_rma_copy_ops(r, ops);
	if (ret)
		goto out_free;

	if (mutex_lock_killable(&ep->lock)) {
		ret = -EINTR;
		goto out_free;
	}
	ret = rmawin_ep_check_group(ep);
	/* all or nothing: every operation is checked before one is issued */
	for (i = 0; !ret && i < r->nops; i++)
		/* a whole lock epoch comes alone */
		ret = r->nops > 1 && ops[i].flags ? -EINVAL :
		      rmawin_op_check(ep, &ops[i], &targets[i]);
	for (i = 0; !ret && i < r->nops; i++)
		ret = rmawin_op_issue(ep, &ops[i], &targets[i]);
	if (!ret && (r->flags & RMAWIN_RMA_QUIET))
		ret = rmawin_rma_quiet(targets, r->nops);
	mutex_unlock(&ep->lock);
out_free:
	if (r->nops > 1) {
		kvfree(targets);
		kvfree(ops);
	}
	return ret;
}
