// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: notified put.  The data goes as an RDMA WRITE, then a NOTIFY
 * control message on the same RC queue pair: RC delivers in order, so the
 * target's kernel queues the notification only after the data is in the
 * window.  One queue per endpoint, whatever the number of peers; the
 * endpoint's file is readable while it is not empty.  (A WRITE WITH
 * IMMEDIATE would carry 32 bits; the message carries the tag, displacement
 * and length for the same one receive.)
 *
 * The queue holds at most RMAWIN_NOTIFY_PER_PEER notifications from each rank.
 * A sender faster than its reader gets its notifications beyond that
 * dropped (the data is in the window all the same), and the reader is
 * told: the next NOTIFY_WAIT returns -EOVERFLOW with the number lost.
 * The queue belongs to the group: it is emptied when the group goes.
 */
#include <linux/slab.h>
#include <linux/jiffies.h>
#include <linux/overflow.h>

#include "rmawin.h"

/**
 * struct rmawin_notification_ent - one queued notification
 * @node: in the endpoint's queue
 * @count: the sending rank's count of queued notifications
 * @win: the window
 * @source: the rank that put
 * @tag: its tag
 * @target_disp: where, in the window's disp_units
 * @len: bytes
 */
struct rmawin_notification_ent {
	struct list_head node;
	atomic_t *count;
	u32 win;
	u32 source;
	u32 tag;
	u64 target_disp;
	u64 len;
};

/**
 * rmawin_notify_queue() - queue a notification for this endpoint
 * @ep: the target endpoint, in a group
 * @source: the rank that put
 * @op: the notified put: its window, tag, target_disp and len
 *
 * Context: process or completion context.
 * Return: 0 (also when the notification had to be dropped, which the
 * reader learns) or -ENOMEM.
 */
int rmawin_notify_queue(struct rmawin_ep *ep, u32 source, const struct rmawin_op_desc *op)
{
	atomic_t *count = &ep->group->peers[source].nnotify;
	struct rmawin_notification_ent *e;
	unsigned long flags;

	if (atomic_inc_return(count) > RMAWIN_NOTIFY_PER_PEER) {
		atomic_dec(count);
		atomic_inc(&ep->notify_lost);
		rmawin_count(ep, RMAWIN_CNT_NOTIFY_LOST, 1);
		wake_up_all(&ep->wq);
		return 0;
	}
	e = kmalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e) {
		atomic_dec(count);
		return -ENOMEM;
	}
	e->count = count;
	e->win = op->win;
	e->source = source;
	e->tag = op->tag;
	e->target_disp = op->target_disp;
	e->len = op->len;
	spin_lock_irqsave(&ep->notify_lock, flags);
	list_add_tail(&e->node, &ep->notify_q);
	spin_unlock_irqrestore(&ep->notify_lock, flags);
	wake_up_all(&ep->wq);
	return 0;
}

/**
 * rmawin_notify_send() - tell the target of a notified put
 * @peer: the target, whose queue pair carried the data
 * @op: the notified put
 *
 * Return: 0 or the error of rmawin_msg_send().
 */
int rmawin_notify_send(struct rmawin_peer *peer, const struct rmawin_op_desc *op)
{
	struct rmawin_wire_notify m = {
		.win = cpu_to_le32(op->win),
		.tag = cpu_to_le32(op->tag),
		.target_disp = cpu_to_le64(op->target_disp),
		.len = cpu_to_le64(op->len),
	};

	return rmawin_msg_send(peer, RMAWIN_MSG_NOTIFY, 0, &m, sizeof(m));
}

/* Does [target_disp, + len) fit window @id of @ep, as an honest put's must? */
static bool rmawin_notify_in_window(struct rmawin_ep *ep, u32 id, u64 target_disp, u64 len)
{
	struct rmawin_win *win;
	u64 off, end;
	bool ok;

	xa_lock_bh(&ep->wins);
	win = xa_load(&ep->wins, id);
	ok = win && !check_mul_overflow(target_disp, (u64)win->disp_unit, &off) &&
	     !check_add_overflow(off, len, &end) && end <= win->length;
	xa_unlock_bh(&ep->wins);
	return ok;
}

/**
 * rmawin_notify_recv() - a peer's notification arrived
 * @peer: the sender
 * @arg: zero
 * @p: struct rmawin_wire_notify
 * @len: its size
 *
 * Context: the receive work (recv.c): process context.
 * Return: 0, -ENOMEM, or -EPROTO for a window that does not exist or a
 * range outside it: no honest put lands there.
 */
int rmawin_notify_recv(struct rmawin_peer *peer, u32 arg, const void *p, u16 len)
{
	const struct rmawin_wire_notify *m = p;
	struct rmawin_ep *ep = peer->grp->ep;
	struct rmawin_op_desc op = {
		.win = le32_to_cpu(m->win),
		.tag = le32_to_cpu(m->tag),
		.target_disp = le64_to_cpu(m->target_disp),
		.len = le64_to_cpu(m->len),
	};

	if (arg || !rmawin_notify_in_window(ep, op.win, op.target_disp, op.len))
		return -EPROTO;
	return rmawin_notify_queue(ep, peer->rank, &op);
}

/**
 * rmawin_notify_pending() - is there a notification (or a loss) to take?
 * @ep: the endpoint
 */
bool rmawin_notify_pending(struct rmawin_ep *ep)
{
	return !list_empty_careful(&ep->notify_q) || atomic_read(&ep->notify_lost);
}

/**
 * rmawin_notify_free() - drop every queued notification
 * @ep: the endpoint, whose group is going away (or has)
 */
void rmawin_notify_free(struct rmawin_ep *ep)
{
	struct rmawin_notification_ent *e, *tmp;
	unsigned long flags;
	LIST_HEAD(q);

	spin_lock_irqsave(&ep->notify_lock, flags);
	list_splice_init(&ep->notify_q, &q);
	atomic_set(&ep->notify_lost, 0);
	spin_unlock_irqrestore(&ep->notify_lock, flags);
	list_for_each_entry_safe(e, tmp, &q, node)
		kfree(e);
}

/*
 * The oldest notification of window @win, taken off the queue, or NULL.
 * Its sender's count drops under the lock, while the group is sure to be
 * there (rmawin_notify_free() empties the queue before it goes).
 */
static struct rmawin_notification_ent *rmawin_notify_take(struct rmawin_ep *ep, u32 win)
{
	struct rmawin_notification_ent *e, *found = NULL;
	unsigned long flags;

	spin_lock_irqsave(&ep->notify_lock, flags);
	list_for_each_entry(e, &ep->notify_q, node) {
		if (e->win == win) {
			list_del(&e->node);
			atomic_dec(e->count);
			found = e;
			break;
		}
	}
	spin_unlock_irqrestore(&ep->notify_lock, flags);
	return found;
}

static bool rmawin_notify_ready(struct rmawin_ep *ep, u32 win,
				struct rmawin_notification_ent **e, u32 *lost)
{
	*lost = atomic_xchg(&ep->notify_lost, 0);
	if (*lost)
		return true;
	*e = rmawin_notify_take(ep, win);
	/* the group's teardown (its device's removal too) ends the wait */
	return *e || READ_ONCE(ep->unwait) || READ_ONCE(ep->closing);
}

/*
 * Why a wait that took nothing ended, endpoint locked: its group is being
 * torn down (it goes once we leave), or went before we looked.
 */
static int rmawin_notify_gone(struct rmawin_ep *ep)
{
	if (!ep->unwait)
		return rmawin_ep_check_group(ep);
	return ep->dev && READ_ONCE(ep->dev->dead) ? -ENODEV : -ENOTCONN;
}

/**
 * rmawin_ioctl_notify_wait() - RMAWIN_IOC_NOTIFY_WAIT
 * @ep: the endpoint
 * @arg: struct rmawin_notify_wait, already copied in
 *
 * Waits without the endpoint's lock, as one of its sleepers
 * (rmawin_ep_sleep()): other calls on the endpoint go on, and the group
 * stays until the wait is over; tearing it down ends the wait.
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_notify_wait(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_notify_wait *w = arg;
	struct rmawin_notification_ent *e = NULL;
	u32 lost = 0;
	long left;
	int ret;

	if (w->flags || w->reserved || w->lost || w->timeout_ms < -1)
		return -EINVAL;
	if (mutex_lock_killable(&ep->lock))
		return -EINTR;
	ret = rmawin_ep_check_group(ep);
	if (!ret && !rmawin_win_lookup(ep, w->win))
		ret = -ENOENT;
	if (ret)
		goto out_unlock;

	rmawin_ep_sleep(ep, NULL);
	if (w->timeout_ms < 0)
		left = wait_event_interruptible(ep->wq, rmawin_notify_ready(ep, w->win, &e, &lost));
	else
		left = wait_event_interruptible_timeout(ep->wq,
							rmawin_notify_ready(ep, w->win, &e,
									    &lost),
							msecs_to_jiffies(w->timeout_ms));
	rmawin_ep_wake(ep, NULL);
	if (left < 0) {
		ret = -EINTR;
	} else if (lost) {
		/* the caller learns of the loss in the struct: copied back */
		w->lost = lost;
		ret = -EOVERFLOW;
	} else if (!e) {
		ret = rmawin_notify_gone(ep) ?: w->timeout_ms ? -ETIMEDOUT : -EAGAIN;
	} else {
		w->source = e->source;
		w->tag = e->tag;
		w->target_disp = e->target_disp;
		w->len = e->len;
		kfree(e);
	}
out_unlock:
	mutex_unlock(&ep->lock);
	return ret;
}
