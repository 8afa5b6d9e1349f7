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
 * messages.  Grants for a waiting rank are sent after the manager's lock
 * is dropped; the waiter structures carry them.
 */
#include <linux/slab.h>
#include <linux/bitmap.h>

#include "rmawin.h"

struct rmawin_lock_waiter {
	struct list_head node;
	u32 rank;
	u32 type;
};

struct rmawin_lock_msg {
	u32 type;
	u32 pad;
};

/**
 * rmawin_win_lock_init() - the window's lock state, for @win->ep's group
 * @win: a new window
 *
 * Return: 0 or -ENOMEM.
 */
int rmawin_win_lock_init(struct rmawin_win *win)
{
	u32 n = win->ep->group->nranks;

	spin_lock_init(&win->lk.lock);
	INIT_LIST_HEAD(&win->lk.waiters);
	win->held = kcalloc(n, sizeof(*win->held), GFP_KERNEL);
	win->granted = bitmap_zalloc(n, GFP_KERNEL);
	if (!win->held || !win->granted) {
		rmawin_win_lock_free(win);
		return -ENOMEM;
	}
	return 0;
}

/**
 * rmawin_win_lock_free() - free the lock state of a window being destroyed
 * @win: the window; nobody reaches it any more
 */
void rmawin_win_lock_free(struct rmawin_win *win)
{
	struct rmawin_lock_waiter *w, *tmp;

	list_for_each_entry_safe(w, tmp, &win->lk.waiters, node)
		kfree(w);
	INIT_LIST_HEAD(&win->lk.waiters);
	kfree(win->held);
	bitmap_free(win->granted);
	win->held = NULL;
	win->granted = NULL;
}

static bool rmawin_lk_fits(struct rmawin_lock_mgr *lk, u32 type)
{
	return type == RMAWIN_LOCK_TYPE_EXCLUSIVE ? !lk->shared && !lk->exclusive :
						    !lk->exclusive;
}

static void rmawin_lk_take(struct rmawin_lock_mgr *lk, u32 type)
{
	if (type == RMAWIN_LOCK_TYPE_EXCLUSIVE)
		lk->exclusive = true;
	else
		lk->shared++;
}

/* Tell @w->rank it holds the lock; frees @w. */
static void rmawin_lock_grant(struct rmawin_win *win, struct rmawin_lock_waiter *w)
{
	struct rmawin_group *grp = win->ep->group;

	if (w->rank == grp->rank) {
		set_bit(w->rank, win->granted);
		wake_up_all(&win->ep->wq);
	} else if (rmawin_msg_send_async(&grp->peers[w->rank], RMAWIN_MSG_LOCK_GRANT,
					 win->id, NULL, 0)) {
		rmawin_peer_fail(&grp->peers[w->rank], -ENOMEM);
	}
	kfree(w);
}

/* A request arrives at the target's manager; @w is consumed. */
static void rmawin_lock_request(struct rmawin_win *win, struct rmawin_lock_waiter *w,
				struct list_head *grants)
{
	struct rmawin_lock_mgr *lk = &win->lk;
	unsigned long flags;

	spin_lock_irqsave(&lk->lock, flags);
	if (list_empty(&lk->waiters) && rmawin_lk_fits(lk, w->type)) {
		rmawin_lk_take(lk, w->type);
		list_add_tail(&w->node, grants);
	} else {
		list_add_tail(&w->node, &lk->waiters);
	}
	spin_unlock_irqrestore(&lk->lock, flags);
}

/* A holder lets go; whoever is next in line, in order, gets it. */
static void rmawin_lock_release(struct rmawin_win *win, u32 type, struct list_head *grants)
{
	struct rmawin_lock_mgr *lk = &win->lk;
	struct rmawin_lock_waiter *w, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&lk->lock, flags);
	if (type == RMAWIN_LOCK_TYPE_EXCLUSIVE)
		lk->exclusive = false;
	else if (lk->shared)
		lk->shared--;
	list_for_each_entry_safe(w, tmp, &lk->waiters, node) {
		if (!rmawin_lk_fits(lk, w->type))
			break;
		rmawin_lk_take(lk, w->type);
		list_move_tail(&w->node, grants);
	}
	spin_unlock_irqrestore(&lk->lock, flags);
}

static void rmawin_lock_send_grants(struct rmawin_win *win, struct list_head *grants)
{
	struct rmawin_lock_waiter *w, *tmp;

	list_for_each_entry_safe(w, tmp, grants, node) {
		list_del(&w->node);
		rmawin_lock_grant(win, w);
	}
}

/**
 * rmawin_lock_recv() - LOCK, LOCK_GRANT or UNLOCK from a peer
 * @peer: the sender
 * @type: the message type
 * @win_id: the window
 * @payload: struct rmawin_lock_msg for LOCK and UNLOCK
 * @len: payload bytes
 *
 * Context: completion (workqueue) context.
 */
void rmawin_lock_recv(struct rmawin_peer *peer, u8 type, u32 win_id,
		      const void *payload, u16 len)
{
	const struct rmawin_lock_msg *m = payload;
	struct rmawin_ep *ep = peer->grp->ep;
	struct rmawin_lock_waiter *w = NULL;
	struct rmawin_win *win;
	LIST_HEAD(grants);

	if (type != RMAWIN_MSG_LOCK_GRANT &&
	    (len < sizeof(*m) || m->type > RMAWIN_LOCK_TYPE_EXCLUSIVE)) {
		rmawin_peer_fail(peer, -EPROTO);
		return;
	}
	if (type == RMAWIN_MSG_LOCK) {
		w = kmalloc(sizeof(*w), GFP_KERNEL);
		if (!w) {
			rmawin_peer_fail(peer, -ENOMEM);
			return;
		}
		w->rank = peer->rank;
		w->type = m->type;
	}
	xa_lock(&ep->wins);
	win = xa_load(&ep->wins, win_id);
	if (win && type == RMAWIN_MSG_LOCK_GRANT) {
		set_bit(peer->rank, win->granted);
	} else if (win && type == RMAWIN_MSG_LOCK) {
		rmawin_lock_request(win, w, &grants);
		w = NULL;
	} else if (win) {
		rmawin_lock_release(win, m->type, &grants);
	}
	xa_unlock(&ep->wins);
	kfree(w);
	/*
	 * The window stays: it is freed only after a barrier in which this
	 * peer (done with its epoch) took part, and grants for this rank
	 * itself go to a caller that holds the endpoint, window and all.
	 */
	if (win)
		rmawin_lock_send_grants(win, &grants);
	wake_up_all(&ep->wq);
}

/* Ask @target's manager for the lock. */
static int rmawin_lock_ask(struct rmawin_win *win, u32 target, u32 type)
{
	struct rmawin_group *grp = win->ep->group;
	struct rmawin_lock_msg m = { .type = type };
	struct rmawin_lock_waiter *w;
	LIST_HEAD(grants);

	clear_bit(target, win->granted);
	if (target != grp->rank)
		return rmawin_msg_send(&grp->peers[target], RMAWIN_MSG_LOCK, win->id,
				       &m, sizeof(m));
	w = kmalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	w->rank = target;
	w->type = type;
	rmawin_lock_request(win, w, &grants);
	rmawin_lock_send_grants(win, &grants);
	return 0;
}

static int rmawin_lock_give_back(struct rmawin_win *win, u32 target, u32 type)
{
	struct rmawin_group *grp = win->ep->group;
	struct rmawin_lock_msg m = { .type = type };
	LIST_HEAD(grants);

	clear_bit(target, win->granted);
	if (target != grp->rank)
		return rmawin_msg_send(&grp->peers[target], RMAWIN_MSG_UNLOCK, win->id,
				       &m, sizeof(m));
	rmawin_lock_release(win, type, &grants);
	rmawin_lock_send_grants(win, &grants);
	return 0;
}

static bool rmawin_granted_or_failed(struct rmawin_win *win, u32 first, u32 last)
{
	struct rmawin_group *grp = win->ep->group;
	u32 t;

	if (READ_ONCE(win->ep->dev->dead))
		return true;
	for (t = first; t <= last; t++)
		if (!test_bit(t, win->granted) &&
		    READ_ONCE(grp->peers[t].state) != RMAWIN_PEER_FAILED)
			return false;
	return true;
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
	u32 first, last, t;
	int ret;

	ret = rmawin_passive_args(ep, p, &win, &first, &last);
	if (ret)
		return ret;
	if (p->target == RMAWIN_ALL_RANKS && p->type != RMAWIN_LOCK_TYPE_SHARED)
		return -EINVAL;
	for (t = first; t <= last; t++)
		if (win->held[t])
			return -EBUSY;
	/* a fence epoch with operations in it, or a started one, is still open */
	if ((win->fence_open && win->fence_ops) || win->pscw.started)
		return -EBUSY;
	win->fence_open = false;
	grp = ep->group;
	for (t = first; t <= last; t++) {
		ret = rmawin_lock_ask(win, t, p->type);
		if (ret)
			return ret;
		win->held[t] = p->type + 1;
		win->nheld++;
	}
	if (wait_event_killable(ep->wq, rmawin_granted_or_failed(win, first, last)))
		return -EINTR;
	if (READ_ONCE(ep->dev->dead))
		return -ENODEV;
	for (t = first; t <= last; t++)
		if (!test_bit(t, win->granted))
			return grp->peers[t].error ?: -ECONNRESET;
	return 0;
}

static int rmawin_do_unlock(struct rmawin_ep *ep, const struct rmawin_passive *p)
{
	struct rmawin_win *win;
	u32 first, last, t;
	int ret, sret;

	ret = rmawin_passive_args(ep, p, &win, &first, &last);
	if (ret)
		return ret;
	for (t = first; t <= last; t++)
		if (!win->held[t])
			return -ENOLCK;
	/* everything of the epoch is complete at the target before it lets go */
	ret = rmawin_win_complete(win);
	for (t = first; t <= last; t++) {
		sret = rmawin_lock_give_back(win, t, win->held[t] - 1);
		ret = ret ?: sret;
		win->held[t] = 0;
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
 * for the window; -ENOLCK if no lock covers @op->target.
 */
int rmawin_flush_check(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
		       struct rmawin_win **win)
{
	struct rmawin_passive p = { .win = op->win, .target = op->target };
	u32 first, last;
	int ret;

	if (op->flags || op->acc_op || op->datatype || op->tag || op->origin || op->len ||
	    op->target_disp || op->result || op->compare || op->reserved)
		return -EINVAL;
	ret = rmawin_passive_args(ep, &p, win, &first, &last);
	if (ret)
		return ret;
	if (p.target == RMAWIN_ALL_RANKS ? !(*win)->nheld : !(*win)->held[first])
		return -ENOLCK;
	return 0;
}

static int rmawin_do_flush(struct rmawin_ep *ep, const struct rmawin_passive *p)
{
	struct rmawin_win *win;
	u32 first, last;
	int ret;

	ret = rmawin_passive_args(ep, p, &win, &first, &last);
	if (ret)
		return ret;
	if (p->target == RMAWIN_ALL_RANKS ? !win->nheld : !win->held[first])
		return -ENOLCK;
	/* one completion for the whole window: flushing more than asked is allowed */
	return rmawin_win_complete(win);
}

static int rmawin_passive_ioctl(struct rmawin_ep *ep, void *arg,
				int (*fn)(struct rmawin_ep *ep, const struct rmawin_passive *p),
				bool takes_type)
{
	struct rmawin_passive *p = arg;
	int ret;

	if (p->flags || p->reserved || (takes_type ? p->type > RMAWIN_LOCK_TYPE_EXCLUSIVE :
					  p->type))
		return -EINVAL;
	mutex_lock(&ep->lock);
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
