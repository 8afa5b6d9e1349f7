// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Lazy locks (rmawin_win_set_lazy_lock()): MPI lets a lock be taken as late
 * as its first use, and an epoch of one small operation need not take it
 * at all the usual way.  rmawin_lock() of one other rank, on a window in
 * no epoch, only notes the lock (the library's view of the epochs, epoch.c,
 * counts it held, so operations are checked as under it).  The epoch's
 * first operation, if small enough to travel whole in one message, is
 * checked and kept; rmawin_unlock() then sends it as a whole lock epoch
 * (RMAWIN_OP_F_EPOCH_*): the target's kernel locks, applies, unlocks and
 * answers, one round trip where lock, operation and unlock take two.
 *
 * rmawin_lock_all() (RMAWIN_FEAT_LAZY_LOCK_ALL) takes this rank's own lock
 * at once, a local step with no message: it guards the process's loads
 * and stores on its own window, which must wait for another rank's
 * exclusive epoch there.  The other ranks' locks are noted.  Operations on
 * the rank's own window go to the kernel as usual; the first small one to
 * another rank is kept, and rmawin_unlock_all() sends it as a shared
 * epoch of its own, then lets go of the rank's own lock.
 *
 * Anything else settles the noted lock first: a second operation, one to
 * another rank or one too large, a flush, any other synchronization of
 * the window, a batch, a notified put.  Settling takes the lock with
 * RMAWIN_IOC_LOCK (every other rank's, RMAWIN_LOCK_F_OTHERS, for a
 * lock_all) and issues the kept operation, and the call that needed it
 * goes on; the lock's error, if it fails, is that call's.  So is a target
 * that could not grant the lock at once (-EAGAIN from the kernel): the
 * unlock settles and then unlocks the usual way.
 *
 * A PSCW access epoch of one other rank (RMAWIN_FEAT_COMPLETE_OP) keeps
 * its first operation the same way, if it is a put or an accumulate small
 * enough: rmawin_complete() sends it in the COMPLETE message
 * (RMAWIN_OP_F_EPOCH_COMPLETE), one send for the two, and anything else
 * issues it first, as for a lock.  RMAWIN_NO_CARRY=1 turns this off.
 *
 * The state is the window's @late, under the endpoint's @lock, which no
 * system call is made under: a thread takes the noted lock out of the
 * window before it acts on it.
 */
#include <errno.h>
#include <string.h>

#include "rmawin_priv.h"

int rmawin_win_set_lazy_lock(struct rmawin_win *win, int on)
{
	int ret;

	if (!win || (on != 0 && on != 1))
		return -EINVAL;
	if (on && !win->ep->epoch_op)
		return -EOPNOTSUPP;
	/* a lock noted meanwhile is taken now: from here on they are eager */
	ret = on ? 0 : rmawin__lazy_settle(win);
	pthread_mutex_lock(&win->ep->lock);
	win->lazy = on;
	pthread_mutex_unlock(&win->ep->lock);
	return ret;
}

/* May @op travel with its lock and unlock in one message (the kernel's rules)? */
static int rmawin_lazy_fits(const struct rmawin_op_desc *op)
{
	if (!op->len || op->len > RMAWIN_EPOCH_OP_MAX)
		return 0;
	switch (op->opcode) {
	case RMAWIN_OP_PUT:
	case RMAWIN_OP_GET:
		return 1;
	case RMAWIN_OP_ACC:
	case RMAWIN_OP_GET_ACC:
	case RMAWIN_OP_FETCH_OP:
	case RMAWIN_OP_CAS:
		return 1;
	default:
		return 0;
	}
}

/* May @op wait for its PSCW epoch's COMPLETE (the kernel's rules)? */
static int rmawin_carry_fits(const struct rmawin_win *win, const struct rmawin_op_desc *op)
{
	if (!op->len || op->len > RMAWIN_EPOCH_OP_MAX)
		return 0;
	/* the target's CPU applies it: not where the device's atomics do */
	return op->opcode == RMAWIN_OP_PUT ||
	       (op->opcode == RMAWIN_OP_ACC && !rmawin__acc_on_device(win, op->datatype));
}

/*
 * Take @win's noted lock (@pscw 1: its started PSCW epoch; -1: either) out
 * of it, if there is one of that kind and @target (a rank,
 * RMAWIN_ALL_RANKS for a lock_all, ~0 for any) names it; 1 if taken.
 */
static int rmawin_lazy_take(struct rmawin_win *win, uint32_t target, int pscw,
			    struct rmawin__late *l)
{
	int match;

	pthread_mutex_lock(&win->ep->lock);
	*l = win->late;
	match = l->pending && (pscw < 0 || l->pscw == pscw) &&
		(target == ~0U || target == l->target);
	if (match) {
		win->late.pending = 0;
		win->late.nops = 0;
	}
	pthread_mutex_unlock(&win->ep->lock);
	return match;
}

/* Take the lock @l noted, the usual way, and issue what it kept. */
static int rmawin_lazy_acquire(struct rmawin_win *win, struct rmawin__late *l)
{
	/* a lock_all holds its own rank's already */
	uint32_t flags = l->target == RMAWIN_ALL_RANKS ? RMAWIN_LOCK_F_OTHERS : 0;
	int ret;

	/* a PSCW epoch is started: only the kept operation is left to issue */
	if (l->pscw)
		return l->nops ? rmawin__queue_one(win, &l->op) : 0;
	ret = rmawin__passive_ioctl(win, RMAWIN_IOC_LOCK, l->target, l->type, flags);
	if (ret) {
		/* the view counted the lock held: let the kernel judge now */
		rmawin__epoch_lock(win, l->target, ret);
		return ret;
	}
	return l->nops ? rmawin__queue_one(win, &l->op) : 0;
}

/**
 * rmawin__lazy_settle() - take @win's noted lock now, if it has one
 * @win: the window
 *
 * Return: 0, or the error of the lock or of the kept operation's issue.
 */
int rmawin__lazy_settle(struct rmawin_win *win)
{
	struct rmawin__late l;

	if (!__atomic_load_n(&win->late.pending, __ATOMIC_ACQUIRE))
		return 0;
	return rmawin_lazy_take(win, ~0U, -1, &l) ? rmawin_lazy_acquire(win, &l) : 0;
}

/**
 * rmawin__lazy_settle_all() - rmawin__lazy_settle() every window of @ep
 * @ep: the endpoint
 *
 * For calls that may issue on any window (a batch).
 * Return: 0 or the first error.
 */
int rmawin__lazy_settle_all(struct rmawin_ep *ep)
{
	struct rmawin_win *win;
	int ret = 0, r;

	for (;;) {
		pthread_mutex_lock(&ep->lock);
		for (win = ep->wins; win && !win->late.pending; win = win->next)
			;
		pthread_mutex_unlock(&ep->lock);
		if (!win)
			return ret;
		r = rmawin__lazy_settle(win);
		ret = ret ?: r;
	}
}

/* May a lock of @win be noted now?  Under the endpoint's lock. */
static int rmawin_lazy_idle(const struct rmawin_win *win)
{
	const struct rmawin__epoch *e = &win->epoch;

	return win->lazy && !win->late.pending && !e->unknown && !e->nheld && !e->started &&
	       !e->fence_open && win->ranks;
}

/**
 * rmawin__lazy_lock() - note a lock instead of taking it, if @win allows
 * @win: the window
 * @type: RMAWIN_LOCK_TYPE_*
 * @target: the rank (checked: below the group size)
 *
 * Return: 1 if noted; 0 if the lock is to be taken the usual way (any lock
 * noted before is taken first); -EBUSY if @target's is noted already; or
 * the error of taking a noted lock.
 */
int rmawin__lazy_lock(struct rmawin_win *win, uint32_t type, uint32_t target)
{
	int ret = 0;

	pthread_mutex_lock(&win->ep->lock);
	if (win->late.pending) {
		/* under a lock_all the kernel judges, once it holds them all */
		ret = !win->late.pscw && win->late.target == target ? -EBUSY : 0;
	} else if (rmawin_lazy_idle(win) && target < (uint32_t)win->ep->nranks &&
		   target != (uint32_t)win->ep->rank) {
		win->late.pending = 1;
		win->late.pscw = 0;
		win->late.target = target;
		win->late.type = type;
		win->late.nops = 0;
		rmawin__epoch_note_lock(win, target);
		ret = 1;
	}
	pthread_mutex_unlock(&win->ep->lock);
	return ret ?: rmawin__lazy_settle(win);
}

/**
 * rmawin__lazy_lock_all() - take only this rank's own lock, if @win allows
 * @win: the window
 *
 * Return: 1 if this rank's lock is taken and the others' noted; 0 if
 * lock_all is to go the usual way (any lock noted before is taken first);
 * or the error of the lock.
 */
int rmawin__lazy_lock_all(struct rmawin_win *win)
{
	struct rmawin_ep *ep = win->ep;
	int noted = 0, ret;

	pthread_mutex_lock(&ep->lock);
	if (ep->lazy_all && ep->nranks > 1 && rmawin_lazy_idle(win)) {
		win->late.pending = 1;
		win->late.pscw = 0;
		win->late.target = RMAWIN_ALL_RANKS;
		win->late.type = RMAWIN_LOCK_TYPE_SHARED;
		win->late.nops = 0;
		rmawin__epoch_note_lock(win, RMAWIN_ALL_RANKS);
		noted = 1;
	}
	pthread_mutex_unlock(&ep->lock);
	if (!noted)
		return rmawin__lazy_settle(win);
	ret = rmawin__passive_ioctl(win, RMAWIN_IOC_LOCK, (uint32_t)ep->rank,
				    RMAWIN_LOCK_TYPE_SHARED, 0);
	if (!ret)
		return 1;
	pthread_mutex_lock(&ep->lock);
	win->late.pending = 0;
	pthread_mutex_unlock(&ep->lock);
	rmawin__epoch_lock(win, RMAWIN_ALL_RANKS, ret);
	return ret;
}

/**
 * rmawin__lazy_op() - keep @op for the noted lock's epoch, if it can wait there
 * @win: the window
 * @op: a put, get or accumulate-family descriptor
 *
 * Return: 1 if kept (its argument errors checked); 0 if it is to be issued
 * the usual way (a noted lock taken first, unless it is an operation on
 * this rank's own window under a lock_all, which holds that lock); an
 * argument error of @op; the error of taking the noted lock.
 */
int rmawin__lazy_op(struct rmawin_win *win, const struct rmawin_op_desc *op)
{
	uint32_t self = (uint32_t)win->ep->rank;
	int ret, mine, all;

	if (!__atomic_load_n(&win->late.pending, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&win->ep->lock);
	all = win->late.target == RMAWIN_ALL_RANKS;
	if (!win->late.pending) {
		ret = 0;
	} else if (all && op->target == self) {
		pthread_mutex_unlock(&win->ep->lock);
		return 0;
	} else {
		ret = rmawin__op_check_locked(win, op);
		mine = all || op->target == win->late.target;
		if (!ret && mine && !win->late.nops &&
		    (win->late.pscw ? rmawin_carry_fits(win, op) : rmawin_lazy_fits(op))) {
			win->late.op = *op;
			win->late.nops = 1;
			ret = 1;
		} else if (ret > 0) {
			ret = 0;	/* the kernel judges it, under the lock */
		}
	}
	pthread_mutex_unlock(&win->ep->lock);
	return ret ?: rmawin__lazy_settle(win);
}

/* The kept operation with epoch flag @flags (RMAWIN_OP_F_EPOCH_*), after the ring's */
static int rmawin_lazy_issue(struct rmawin_win *win, const struct rmawin__late *l,
			     uint8_t flags)
{
	struct rmawin_op_desc op = l->op;
	struct rmawin_rma r;
	uint64_t ticket;
	int ret;

	op.flags = flags;
	rmawin__ring_drain(win->ep);
	memset(&r, 0, sizeof(r));
	r.ops_ptr = (uintptr_t)&op;
	r.nops = 1;
	r.op_size = sizeof(op);
	ticket = rmawin__issue_begin(win->ep);
	ret = rmawin__ioctl_struct(win->ep->fd, RMAWIN_IOC_RMA, &r);
	rmawin__issue_end(win->ep, ticket, NULL);
	return ret;
}

/* The kept operation as a whole lock epoch: 0, -EAGAIN, or its error. */
static int rmawin_lazy_epoch(struct rmawin_win *win, const struct rmawin__late *l)
{
	return rmawin_lazy_issue(win, l, l->type == RMAWIN_LOCK_TYPE_EXCLUSIVE ?
					 RMAWIN_OP_F_EPOCH_EXCLUSIVE : RMAWIN_OP_F_EPOCH_SHARED);
}

/**
 * rmawin__lazy_unlock() - end a noted lock's epoch
 * @win: the window
 * @target: the rank rmawin_unlock() names, RMAWIN_ALL_RANKS for
 *	rmawin_unlock_all()
 * @res: out, if 1 is returned: what the unlock returns
 *
 * Return: 1 if the epoch ended here; 0 if the unlock is to go the usual
 * way (no lock of @target noted, or it was taken just now).
 */
int rmawin__lazy_unlock(struct rmawin_win *win, uint32_t target, int *res)
{
	struct rmawin__late l;
	int ret = 0, uret = 0;

	if (!__atomic_load_n(&win->late.pending, __ATOMIC_ACQUIRE))
		return 0;
	if (!rmawin_lazy_take(win, target, 0, &l))
		return 0;
	if (l.nops)
		ret = rmawin_lazy_epoch(win, &l);
	if (ret == -EAGAIN) {
		/* the target's lock is not free now: queue for it */
		ret = rmawin_lazy_acquire(win, &l);
		if (!ret)
			return 0;
		*res = rmawin__win_result(win, ret);
		return 1;
	}
	/* a lock_all lets go of this rank's own lock, the one it took */
	if (l.target == RMAWIN_ALL_RANKS)
		uret = rmawin__passive_ioctl(win, RMAWIN_IOC_UNLOCK, (uint32_t)win->ep->rank, 0, 0);
	/* nothing else is held in the kernel, whatever the epoch's outcome */
	rmawin__epoch_unlock(win, target, uret);
	*res = rmawin__win_result(win, ret ?: uret);
	return 1;
}

/**
 * rmawin__carry_arm() - let a started PSCW access epoch keep its first operation
 * @win: the window, whose RMAWIN_IOC_START of @target alone succeeded
 * @target: the epoch's one target
 */
void rmawin__carry_arm(struct rmawin_win *win, uint32_t target)
{
	pthread_mutex_lock(&win->ep->lock);
	if (win->ep->carry && !win->late.pending && target != (uint32_t)win->ep->rank) {
		win->late.pending = 1;
		win->late.pscw = 1;
		win->late.target = target;
		win->late.nops = 0;
	}
	pthread_mutex_unlock(&win->ep->lock);
}

/**
 * rmawin__carry_complete() - end a PSCW access epoch with its kept operation
 * @win: the window
 * @res: out, if 1 is returned: the kernel's answer (RMAWIN_IOC_COMPLETE's)
 *
 * Return: 1 if the operation went in the COMPLETE, which ended the epoch;
 * 0 if the epoch is to end the usual way (nothing kept, or the kernel
 * would not carry it: it is then issued first, its errors reported there).
 */
int rmawin__carry_complete(struct rmawin_win *win, int *res)
{
	struct rmawin__late l;
	int ret;

	if (!__atomic_load_n(&win->late.pending, __ATOMIC_ACQUIRE))
		return 0;
	if (!rmawin_lazy_take(win, ~0U, 1, &l) || !l.nops)
		return 0;
	ret = rmawin_lazy_issue(win, &l, RMAWIN_OP_F_EPOCH_COMPLETE);
	/* refused before anything was sent: the epoch is still open */
	if (ret == -EOPNOTSUPP || ret == -EINVAL || ret == -EMSGSIZE || ret == -EFAULT) {
		ret = rmawin__queue_one(win, &l.op);
		if (ret)
			rmawin__win_error(win->ep, win->id, ret);
		return 0;
	}
	*res = ret;
	return 1;
}
