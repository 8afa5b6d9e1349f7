// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: passive target synchronization (lock, unlock, flush).
 *
 * Each window has a lock manager in its owner's kernel.  An origin asks
 * with a LOCK message, the target's kernel answers with LOCK_GRANT when
 * the lock is free for it, and an UNLOCK message (sent once every
 * operation of the epoch is complete) releases it.  The target process
 * takes no part.  Requests are granted strictly in arrival order: a
 * shared request behind a waiting exclusive one waits too, so a stream of
 * overlapping readers cannot starve a writer.
 *
 * A rank locking its own window goes through the same manager, without
 * messages.
 *
 * Every rank has one waiter in each window's manager, allocated with the
 * window: a rank holds or waits for at most one lock on a window, so a
 * LOCK from a rank that already has one, an UNLOCK of a lock it does not
 * hold and a grant we did not ask for are protocol errors, and no message
 * makes the manager allocate.  Grants are marked in @to_grant under the
 * manager's lock and sent after it (and the window table's) are dropped,
 * looking the window up again each time: a window freed meanwhile takes
 * its grants with it.
 */
#include <linux/slab.h>
#include <linux/bitmap.h>

#include "rmawin.h"

enum rmawin_waiter_state {
	RMAWIN_WAITER_NONE,
	RMAWIN_WAITER_WAITING,
	RMAWIN_WAITER_HELD,
};

/**
 * struct rmawin_lock_waiter - one rank's place at a window's lock
 * @node: in the manager's waiters while RMAWIN_WAITER_WAITING
 * @type: the lock type asked for or held
 * @state: enum rmawin_waiter_state
 */
struct rmawin_lock_waiter {
	struct list_head node;
	u32 type;
	u32 state;
};

/* Grants sent per pass, each pass looking the window up anew. */
#define RMAWIN_GRANT_BATCH	16

/**
 * rmawin_win_lock_init() - the window's lock state, for @win->ep's group
 * @win: a new window
 *
 * Return: 0 or -ENOMEM.
 */
int rmawin_win_lock_init(struct rmawin_win *win)
{
	u32 n = win->ep->group->nranks, i;

	spin_lock_init(&win->lk.lock);
	INIT_LIST_HEAD(&win->lk.waiters);
	win->held = kcalloc(n, sizeof(*win->held), GFP_KERNEL_ACCOUNT);
	win->granted = bitmap_zalloc(n, GFP_KERNEL_ACCOUNT);
	win->lk.to_grant = bitmap_zalloc(n, GFP_KERNEL_ACCOUNT);
	win->asking = bitmap_zalloc(n, GFP_KERNEL_ACCOUNT);
	win->lk.w = kvcalloc(n, sizeof(*win->lk.w), GFP_KERNEL_ACCOUNT);
	if (!win->held || !win->granted || !win->lk.to_grant || !win->asking || !win->lk.w) {
		rmawin_win_lock_free(win);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		INIT_LIST_HEAD(&win->lk.w[i].node);
	return 0;
}

/**
 * rmawin_win_lock_free() - free the lock state of a window being destroyed
 * @win: the window; nobody reaches it any more
 */
void rmawin_win_lock_free(struct rmawin_win *win)
{
	INIT_LIST_HEAD(&win->lk.waiters);
	kfree(win->held);
	bitmap_free(win->granted);
	bitmap_free(win->lk.to_grant);
	bitmap_free(win->asking);
	win->asking = NULL;
	kvfree(win->lk.w);
	win->held = NULL;
	win->granted = NULL;
	win->lk.to_grant = NULL;
	win->lk.w = NULL;
}

static bool rmawin_lk_fits(struct rmawin_lock_mgr *lk, u32 type)
{
	return type == RMAWIN_LOCK_TYPE_EXCLUSIVE ? !lk->shared && !lk->exclusive :
						    !lk->exclusive;
}

/* @w holds the lock of its type now. */
static void rmawin_lk_hold(struct rmawin_lock_mgr *lk, struct rmawin_lock_waiter *w)
{
	lockdep_assert_held(&lk->lock);
	if (w->type == RMAWIN_LOCK_TYPE_EXCLUSIVE)
		lk->exclusive = true;
	else
		lk->shared++;
	w->state = RMAWIN_WAITER_HELD;
}

/* @rank holds the lock now: take it, and mark that it must be told. */
static void rmawin_lk_take(struct rmawin_win *win, u32 rank)
{
	struct rmawin_lock_mgr *lk = &win->lk;

	rmawin_lk_hold(lk, &lk->w[rank]);
	if (rank == win->ep->group->rank) {
		/* our own request: its caller holds the endpoint, window and all */
		set_bit(rank, win->granted);
		wake_up_all(&win->ep->wq);
	} else {
		__set_bit(rank, lk->to_grant);
	}
}

/*
 * @rank asks for the lock: it holds it now if it fits and nobody waits;
 * else it queues (@queue) or is refused.  A grant made while queueing is
 * marked to be told; one made without is the caller's to use at once.
 * Return: 0 (held or queued), -EAGAIN (refused), or -EPROTO if @rank holds
 * or waits for the lock already.
 */
static int rmawin_lock_get(struct rmawin_win *win, u32 rank, u32 type, bool queue)
{
	struct rmawin_lock_mgr *lk = &win->lk;
	struct rmawin_lock_waiter *w = &lk->w[rank];
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&lk->lock, flags);
	if (w->state != RMAWIN_WAITER_NONE) {
		ret = -EPROTO;
	} else if (list_empty(&lk->waiters) && rmawin_lk_fits(lk, type)) {
		w->type = type;
		if (queue)
			rmawin_lk_take(win, rank);
		else
			rmawin_lk_hold(lk, w);
	} else if (queue) {
		w->type = type;
		w->state = RMAWIN_WAITER_WAITING;
		list_add_tail(&w->node, &lk->waiters);
	} else {
		ret = -EAGAIN;
	}
	spin_unlock_irqrestore(&lk->lock, flags);
	return ret;
}

/* @rank asks for the lock.  Return: 0, or -EPROTO if it has one already. */
static int rmawin_lock_request(struct rmawin_win *win, u32 rank, u32 type)
{
	return rmawin_lock_get(win, rank, type, true);
}

/**
 * rmawin_lock_try() - take the lock for @rank now, or not at all
 * @win: the window; the caller holds the window table's lock
 * @rank: who asks
 * @type: RMAWIN_LOCK_TYPE_SHARED or RMAWIN_LOCK_TYPE_EXCLUSIVE
 *
 * For a lock epoch that comes whole in one message (RMAWIN_WIRE_EPOCH_*):
 * nobody is told of the grant, the caller releases the lock with
 * rmawin_lock_release() once the epoch's operation is applied.  Nobody
 * waiting is overtaken.
 *
 * Context: any.
 * Return: 0 if @rank holds it now; -EAGAIN if it cannot have it at once
 * (a holder in a conflicting mode, or others waiting); -EPROTO if @rank
 * holds or waits for this window's lock already.
 */
int rmawin_lock_try(struct rmawin_win *win, u32 rank, u32 type)
{
	return rmawin_lock_get(win, rank, type, false);
}

/* Whoever is next in line, in order, gets the lock while it fits. */
static void rmawin_lk_grant_next(struct rmawin_win *win)
{
	struct rmawin_lock_mgr *lk = &win->lk;
	struct rmawin_lock_waiter *next, *tmp;

	lockdep_assert_held(&lk->lock);
	list_for_each_entry_safe(next, tmp, &lk->waiters, node) {
		if (!rmawin_lk_fits(lk, next->type))
			break;
		list_del_init(&next->node);
		rmawin_lk_take(win, next - lk->w);
	}
}

/* @w lets go of the lock it holds. */
static void rmawin_lk_unhold(struct rmawin_lock_mgr *lk, struct rmawin_lock_waiter *w)
{
	lockdep_assert_held(&lk->lock);
	w->state = RMAWIN_WAITER_NONE;
	if (w->type == RMAWIN_LOCK_TYPE_EXCLUSIVE)
		lk->exclusive = false;
	else
		lk->shared--;
}

/**
 * rmawin_lock_release() - @rank lets go of its lock of @type
 * @win: the window; the caller holds the window table's lock, or is its owner
 * @rank: the holder
 * @type: the type it holds
 *
 * Whoever is next in line, in order, gets the lock; rmawin_lock_send_grants()
 * tells them, once the caller has dropped the window table's lock.
 *
 * Context: any.
 * Return: 0, or -EPROTO if @rank holds no such lock.
 */
int rmawin_lock_release(struct rmawin_win *win, u32 rank, u32 type)
{
	struct rmawin_lock_mgr *lk = &win->lk;
	struct rmawin_lock_waiter *w = &lk->w[rank];
	unsigned long flags;

	spin_lock_irqsave(&lk->lock, flags);
	if (w->state != RMAWIN_WAITER_HELD || w->type != type) {
		spin_unlock_irqrestore(&lk->lock, flags);
		return -EPROTO;
	}
	rmawin_lk_unhold(lk, w);
	rmawin_lk_grant_next(win);
	spin_unlock_irqrestore(&lk->lock, flags);
	return 0;
}

/*
 * Take the failed members of @grp out of @win's lock: first out of the
 * line (so that nobody grants to one of them), then off the lock.
 */
static void rmawin_lock_drop_failed(struct rmawin_group *grp, struct rmawin_win *win)
{
	struct rmawin_lock_mgr *lk = &win->lk;
	struct rmawin_lock_waiter *w;
	unsigned long flags;
	bool changed = false;
	u32 r;

	spin_lock_irqsave(&lk->lock, flags);
	for (r = 0; r < grp->nranks; r++) {
		w = &lk->w[r];
		if (READ_ONCE(grp->peers[r].state) != RMAWIN_PEER_FAILED ||
		    w->state != RMAWIN_WAITER_WAITING)
			continue;
		list_del_init(&w->node);
		w->state = RMAWIN_WAITER_NONE;
		changed = true;
	}
	for (r = 0; r < grp->nranks; r++) {
		w = &lk->w[r];
		if (READ_ONCE(grp->peers[r].state) != RMAWIN_PEER_FAILED ||
		    w->state != RMAWIN_WAITER_HELD)
			continue;
		/* a grant it was never told of goes with it */
		__clear_bit(r, lk->to_grant);
		rmawin_lk_unhold(lk, w);
		changed = true;
	}
	if (changed)
		rmawin_lk_grant_next(win);
	spin_unlock_irqrestore(&lk->lock, flags);
}

/**
 * rmawin_lock_drop_failed_all() - let go of the locks of members that failed
 * @grp: the group
 *
 * A member that failed (its process died, its link went, or we cut it
 * off) will never send the UNLOCK of a lock it holds on one of our
 * windows, nor use one it waits for: each goes to the next in line, as
 * if it had unlocked, so that nobody else (this rank included) waits for
 * it for ever.  Its own epochs are over: whatever it did under the lock
 * has landed or never will (its queue pair is in the error state).
 *
 * Context: the group's fail work (fail.c).
 */
void rmawin_lock_drop_failed_all(struct rmawin_group *grp)
{
	struct rmawin_ep *ep = grp->ep;
	struct rmawin_win *win;
	unsigned long id;

	xa_lock_bh(&ep->wins);
	xa_for_each(&ep->wins, id, win)
		rmawin_lock_drop_failed(grp, win);
	xa_unlock_bh(&ep->wins);
	/* looked up anew: a window freed meanwhile takes its grants with it */
	xa_for_each(&ep->wins, id, win)
		rmawin_lock_send_grants(ep, id);
}

/* Take up to RMAWIN_GRANT_BATCH ranks to tell from window @win_id; 0 if none. */
static u32 rmawin_grants_take(struct rmawin_ep *ep, u32 win_id, u32 *ranks)
{
	u32 n = 0, r, nranks = ep->group->nranks;
	struct rmawin_win *win;

	xa_lock_bh(&ep->wins);
	win = xa_load(&ep->wins, win_id);
	if (win) {
		spin_lock(&win->lk.lock);
		for_each_set_bit(r, win->lk.to_grant, nranks) {
			__clear_bit(r, win->lk.to_grant);
			ranks[n++] = r;
			if (n == RMAWIN_GRANT_BATCH)
				break;
		}
		spin_unlock(&win->lk.lock);
	}
	xa_unlock_bh(&ep->wins);
	return n;
}

/**
 * rmawin_lock_send_grants() - send the grants marked for window @win_id
 * @ep: the endpoint
 * @win_id: the window, looked up anew for each batch of grants
 *
 * Context: any; the caller holds neither the window table's lock nor the
 * window's lock manager's.
 */
void rmawin_lock_send_grants(struct rmawin_ep *ep, u32 win_id)
{
	struct rmawin_group *grp = ep->group;
	u32 ranks[RMAWIN_GRANT_BATCH], n, i;

	int ret;

	while ((n = rmawin_grants_take(ep, win_id, ranks))) {
		for (i = 0; i < n; i++) {
			ret = rmawin_msg_send_async(&grp->peers[ranks[i]], RMAWIN_MSG_LOCK_GRANT,
						    win_id, NULL, 0);
			/* -ESHUTDOWN: the group is being torn down, nobody waits */
			if (ret && ret != -ESHUTDOWN)
				rmawin_peer_fail(&grp->peers[ranks[i]], -ENOMEM);
		}
	}
}

/* LOCK or UNLOCK from @peer: the window and what the message asks. */
static int rmawin_lock_msg(struct rmawin_peer *peer, u32 win_id, const void *p, bool lock)
{
	const struct rmawin_wire_lock *m = p;
	struct rmawin_ep *ep = peer->grp->ep;
	u32 type = le32_to_cpu(m->type);
	struct rmawin_win *win;
	int ret;

	if (m->pad || type > RMAWIN_LOCK_TYPE_EXCLUSIVE)
		return -EPROTO;
	xa_lock_bh(&ep->wins);
	win = xa_load(&ep->wins, win_id);
	if (!win)
		ret = -EPROTO;
	else if (lock)
		ret = rmawin_lock_request(win, peer->rank, type);
	else
		ret = rmawin_lock_release(win, peer->rank, type);
	xa_unlock_bh(&ep->wins);
	/* it failed meanwhile: the fail work may have been before us */
	if (!ret && lock && READ_ONCE(peer->state) == RMAWIN_PEER_FAILED)
		rmawin_group_fail_recheck(peer->grp);
	if (!ret)
		rmawin_lock_send_grants(ep, win_id);
	return ret;
}

/**
 * rmawin_lock_recv() - RMAWIN_MSG_LOCK: a peer asks for our window's lock
 * @peer: the sender
 * @win_id: the window
 * @p: struct rmawin_wire_lock
 * @len: its size
 *
 * Context: the receive completion's softirq, or the receive work (recv.c).
 * Return: 0, or -EPROTO for a window that does not exist, a bad type, or
 * a rank that holds or waits for the lock already.
 */
int rmawin_lock_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len)
{
	return rmawin_lock_msg(peer, win_id, p, true);
}

/**
 * rmawin_unlock_recv() - RMAWIN_MSG_UNLOCK: a peer lets go of our window's lock
 * @peer: the sender
 * @win_id: the window
 * @p: struct rmawin_wire_lock
 * @len: its size
 *
 * Context: the receive completion's softirq, or the receive work (recv.c).
 * Return: 0, or -EPROTO for a lock the peer does not hold.
 */
int rmawin_unlock_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len)
{
	return rmawin_lock_msg(peer, win_id, p, false);
}

/**
 * rmawin_lock_grant_recv() - RMAWIN_MSG_LOCK_GRANT: a target granted our request
 * @peer: the target
 * @win_id: the window
 * @p: no payload
 * @len: 0
 *
 * Context: the receive completion's softirq, or the receive work (recv.c).
 * Return: 0, or -EPROTO for a grant we did not ask for.
 */
int rmawin_lock_grant_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len)
{
	struct rmawin_ep *ep = peer->grp->ep;
	struct rmawin_win *win;
	int ret = -EPROTO;

	xa_lock_bh(&ep->wins);
	win = xa_load(&ep->wins, win_id);
	/* held[] is set before the request goes out, granted[] cleared */
	if (win && READ_ONCE(win->held[peer->rank]) &&
	    !test_and_set_bit(peer->rank, win->granted))
		ret = 0;
	xa_unlock_bh(&ep->wins);
	wake_up_all(&ep->wq);
	return ret;
}

/* Ask @target's manager for the lock. */
static int rmawin_lock_ask(struct rmawin_win *win, u32 target, u32 type)
{
	struct rmawin_group *grp = win->ep->group;
	struct rmawin_wire_lock m = { .type = cpu_to_le32(type) };
	int ret;

	clear_bit(target, win->granted);
	/* before the request: the grant may come back before we return */
	WRITE_ONCE(win->held[target], type + 1);
	if (target != grp->rank) {
		ret = rmawin_msg_send(&grp->peers[target], RMAWIN_MSG_LOCK, win->id, &m,
				      sizeof(m));
	} else {
		ret = rmawin_lock_request(win, target, type);
		rmawin_lock_send_grants(win->ep, win->id);
	}
	if (ret)
		WRITE_ONCE(win->held[target], 0);
	return ret;
}

static int rmawin_lock_give_back(struct rmawin_win *win, u32 target, u32 type)
{
	struct rmawin_group *grp = win->ep->group;
	struct rmawin_wire_lock m = { .type = cpu_to_le32(type) };
	int ret;

	clear_bit(target, win->granted);
	if (target != grp->rank)
		return rmawin_msg_send(&grp->peers[target], RMAWIN_MSG_UNLOCK, win->id,
				       &m, sizeof(m));
	ret = rmawin_lock_release(win, target, type);
	rmawin_lock_send_grants(win->ep, win->id);
	return ret;
}

static bool rmawin_granted_or_failed(struct rmawin_win *win, u32 first, u32 last, u32 skip)
{
	struct rmawin_group *grp = win->ep->group;
	u32 t;

	if (READ_ONCE(win->ep->dev->dead))
		return true;
	for (t = first; t <= last; t++)
		if (t != skip && !test_bit(t, win->granted) &&
		    READ_ONCE(grp->peers[t].state) != RMAWIN_PEER_FAILED)
			return false;
	return true;
}

/* Mark ranks [@first, @last] but @skip as waited for by a LOCK call, or no longer. */
static void rmawin_lock_asking(struct rmawin_win *win, u32 first, u32 last, u32 skip, bool on)
{
	u32 t;

	for (t = first; t <= last; t++)
		if (t != skip)
			__assign_bit(t, win->asking, on);
}

/* Does another thread's LOCK still wait for a grant from ranks [@first, @last]? */
static bool rmawin_lock_asked(const struct rmawin_win *win, u32 first, u32 last)
{
	return find_next_bit(win->asking, last + 1, first) <= last;
}

/*
 * May ranks [@first, @last] of @win be flushed: -ENOLCK outside an epoch
 * with them, -EBUSY while another thread's LOCK still waits for their
 * grant (the epoch is not open yet), else 0.
 */
static int rmawin_flushable(const struct rmawin_win *win, u32 target, u32 first, u32 last)
{
	if (target == RMAWIN_ALL_RANKS ? !win->nheld : !win->held[first])
		return -ENOLCK;
	return rmawin_lock_asked(win, first, last) ? -EBUSY : 0;
}

/* The window and the rank range [*first, *last] a passive call names. */
static int rmawin_passive_args(struct rmawin_ep *ep, const struct rmawin_passive *p,
			       struct rmawin_win **win, u32 *first, u32 *last)
{
	int ret;

	lockdep_assert_held(&ep->lock);
	ret = rmawin_ep_check_group(ep);
	if (ret)
		return ret;
	*win = rmawin_win_lookup(ep, p->win);
	if (!*win)
		return -ENOENT;
	if (p->target == RMAWIN_ALL_RANKS) {
		*first = 0;
		*last = ep->group->nranks - 1;
	} else if (p->target < ep->group->nranks) {
		*first = p->target;
		*last = p->target;
	} else {
		return -EINVAL;
	}
	return 0;
}

static int rmawin_do_lock(struct rmawin_ep *ep, const struct rmawin_passive *p)
{
	struct rmawin_group *grp;
	struct rmawin_win *win;
	u32 first, last, t, skip;
	int ret;

	ret = rmawin_passive_args(ep, p, &win, &first, &last);
	if (ret)
		return ret;
	if (p->target == RMAWIN_ALL_RANKS && p->type != RMAWIN_LOCK_TYPE_SHARED)
		return -EINVAL;
	grp = ep->group;
	/* RMAWIN_LOCK_F_OTHERS leaves the caller's own lock as it is */
	skip = p->flags & RMAWIN_LOCK_F_OTHERS ? grp->rank : U32_MAX;
	for (t = first; t <= last; t++)
		if (t != skip && win->held[t])
			return -EBUSY;
	/* a fence epoch with operations in it, or a started one, is still open */
	if ((win->fence_open && win->fence_ops) || win->pscw.started || win->pscw.waiting)
		return -EBUSY;
	win->fence_open = false;
	for (t = first; t <= last; t++) {
		if (t == skip)
			continue;
		ret = rmawin_lock_ask(win, t, p->type);
		if (ret && first == last)
			return ret;
		/*
		 * Of several, a rank that cannot be asked (it failed) counts as
		 * asked: it ends the wait below as a grant would, the call fails
		 * with its error, and UNLOCK gives back what the others granted
		 * (before, the ranks asked already kept our locks, and UNLOCK of
		 * all was -ENOLCK).
		 */
		if (ret)
			WRITE_ONCE(win->held[t], p->type + 1);
		win->nheld++;
	}
	/* other threads go on meanwhile; they may not give these back yet */
	rmawin_lock_asking(win, first, last, skip, true);
	ret = rmawin_wait_unlocked(ep, win, rmawin_granted_or_failed(win, first, last, skip));
	rmawin_lock_asking(win, first, last, skip, false);
	if (ret)
		return -EINTR;
	if (READ_ONCE(ep->dev->dead))
		return -ENODEV;
	for (t = first; t <= last; t++)
		if (t != skip && !test_bit(t, win->granted))
			return grp->peers[t].error ?: -ECONNRESET;
	return 0;
}

static int rmawin_do_unlock(struct rmawin_ep *ep, const struct rmawin_passive *p)
{
	struct rmawin_win *win;
	u32 first, last, t;
	int ret, sret;
	bool give;

	ret = rmawin_passive_args(ep, p, &win, &first, &last);
	if (ret)
		return ret;
	for (t = first; t <= last; t++)
		if (!win->held[t])
			return -ENOLCK;
	if (rmawin_lock_asked(win, first, last))
		return -EBUSY;
	/* everything of the epoch is complete at the target before it lets go */
	ret = rmawin_win_complete(win);
	/*
	 * Cut short (a fatal signal, a dead device) with operations still in
	 * flight: an UNLOCK would let the next holder in before they land.
	 * The targets keep the lock until this rank's teardown fails it
	 * there, and their fail work lets go of it.
	 */
	give = !atomic_read(&win->inflight);
	for (t = first; t <= last; t++) {
		sret = give ? rmawin_lock_give_back(win, t, win->held[t] - 1) : 0;
		ret = ret ?: sret;
		WRITE_ONCE(win->held[t], 0);
		win->nheld--;
	}
	return ret;
}

/**
 * rmawin_flush_check() - check an RMAWIN_OP_FLUSH descriptor
 * @ep: the endpoint, locked, in a group
 * @op: the descriptor
 * @win: out: its window
 *
 * Return: 0; -EINVAL for a field that must be zero or a bad rank; -ENOENT
 * for the window; -ENOLCK if no lock covers @op->target; -EBUSY while
 * another thread's LOCK waits for a grant @op->target names.
 */
int rmawin_flush_check(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
		       struct rmawin_win **win)
{
	struct rmawin_passive p = { .win = op->win, .target = op->target };
	u32 first, last;
	int ret;

	lockdep_assert_held(&ep->lock);
	if (op->flags || op->acc_op || op->datatype || op->tag || op->origin || op->len ||
	    op->target_disp || op->result || op->compare || op->reserved)
		return -EINVAL;
	ret = rmawin_passive_args(ep, &p, win, &first, &last);
	return ret ?: rmawin_flushable(*win, p.target, first, last);
}

static int rmawin_do_flush(struct rmawin_ep *ep, const struct rmawin_passive *p)
{
	struct rmawin_win *win;
	u32 first, last;
	int ret;

	ret = rmawin_passive_args(ep, p, &win, &first, &last);
	if (ret)
		return ret;
	ret = rmawin_flushable(win, p->target, first, last);
	if (ret)
		return ret;
	/* one completion for the whole window: flushing more than asked is allowed */
	return rmawin_win_complete(win);
}

static int rmawin_passive_ioctl(struct rmawin_ep *ep, void *arg,
				int (*fn)(struct rmawin_ep *ep, const struct rmawin_passive *p),
				bool takes_type)
{
	struct rmawin_passive *p = arg;
	int ret;

	if (p->reserved || (takes_type ? p->type > RMAWIN_LOCK_TYPE_EXCLUSIVE : p->type))
		return -EINVAL;
	/* RMAWIN_LOCK_F_OTHERS: LOCK of every rank only */
	if (p->flags && (!takes_type || p->flags != RMAWIN_LOCK_F_OTHERS ||
			 p->target != RMAWIN_ALL_RANKS))
		return -EINVAL;
	if (mutex_lock_killable(&ep->lock))
		return -EINTR;
	ret = fn(ep, p);
	mutex_unlock(&ep->lock);
	return ret;
}

/**
 * rmawin_ioctl_lock() - RMAWIN_IOC_LOCK
 * @ep: the endpoint
 * @arg: struct rmawin_passive, already copied in
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_lock(struct rmawin_ep *ep, void *arg)
{
	return rmawin_passive_ioctl(ep, arg, rmawin_do_lock, true);
}

/**
 * rmawin_ioctl_unlock() - RMAWIN_IOC_UNLOCK
 * @ep: the endpoint
 * @arg: struct rmawin_passive, already copied in
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_unlock(struct rmawin_ep *ep, void *arg)
{
	return rmawin_passive_ioctl(ep, arg, rmawin_do_unlock, false);
}

/**
 * rmawin_ioctl_flush() - RMAWIN_IOC_FLUSH
 * @ep: the endpoint
 * @arg: struct rmawin_passive, already copied in
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_flush(struct rmawin_ep *ep, void *arg)
{
	return rmawin_passive_ioctl(ep, arg, rmawin_do_flush, false);
}

/**
 * rmawin_epoch_check() - may an operation reach @target now?
 * @win: the window
 * @target: the target rank
 *
 * Return: 0 inside an access epoch (started, locked or fenced) that
 * includes @target; -EPERM otherwise.
 */
int rmawin_epoch_check(struct rmawin_win *win, u32 target)
{
	if (win->pscw.started)
		return test_bit(target, win->pscw.access) ? 0 : -EPERM;
	if (win->nheld)
		return win->held[target] ? 0 : -EPERM;
	return win->fence_open ? 0 : -EPERM;
}
