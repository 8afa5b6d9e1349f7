// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: notified put.  The data goes as an RDMA WRITE, then a NOTIFY
 * control message on the same RC queue pair: RC delivers in order, so the
 * target's kernel queues the notification only after the data is in the
 * window.  One queue per endpoint, whatever the number of peers; the
 * endpoint's file is readable while it is not empty.  (A WRITE WITH
 * IMMEDIATE would carry 32 bits; the message carries the tag, displacement
 * and length for the same one receive.)
 */
#include <linux/slab.h>
#include <linux/jiffies.h>

#include "rmawin.h"

struct rmawin_notify_msg {
	u32 win;
	u32 tag;
	u64 target_disp;
	u64 len;
};

struct rmawin_notification_ent {
	struct list_head node;
	u32 win;
	u32 source;
	u32 tag;
	u64 target_disp;
	u64 len;
};

/**
 * rmawin_notify_queue() - queue a notification for this endpoint
 * @ep: the target endpoint
 * @source: the rank that put
 * @op: the notified put
 *
 * Context: process or completion context.
 * Return: 0 or -ENOMEM.
 */
int rmawin_notify_queue(struct rmawin_ep *ep, u32 source, const struct rmawin_op_desc *op)
{
	struct rmawin_notification_ent *e;
	unsigned long flags;

	e = kmalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
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
	struct rmawin_notify_msg m = {
		.win = op->win, .tag = op->tag, .target_disp = op->target_disp, .len = op->len,
	};

	return rmawin_msg_send(peer, RMAWIN_MSG_NOTIFY, 0, &m, sizeof(m));
}

/**
 * rmawin_notify_recv() - a peer's notification arrived
 * @peer: the sender
 * @arg: unused
 * @payload: struct rmawin_notify_msg
 * @len: payload bytes
 *
 * Context: completion (workqueue) context.
 */
void rmawin_notify_recv(struct rmawin_peer *peer, u32 arg, const void *payload, u16 len)
{
	const struct rmawin_notify_msg *m = payload;
	struct rmawin_op_desc op = {};

	if (len < sizeof(*m)) {
		rmawin_peer_fail(peer, -EPROTO);
		return;
	}
	op.win = m->win;
	op.tag = m->tag;
	op.target_disp = m->target_disp;
	op.len = m->len;
	if (rmawin_notify_queue(peer->grp->ep, peer->rank, &op))
		rmawin_peer_fail(peer, -ENOMEM);
}

/**
 * rmawin_notify_pending() - is there a notification to take?
 * @ep: the endpoint
 */
bool rmawin_notify_pending(struct rmawin_ep *ep)
{
	return !list_empty_careful(&ep->notify_q);
}

/**
 * rmawin_notify_free() - drop every notification of a closing endpoint
 * @ep: the endpoint
 */
void rmawin_notify_free(struct rmawin_ep *ep)
{
	struct rmawin_notification_ent *e, *tmp;

	list_for_each_entry_safe(e, tmp, &ep->notify_q, node)
		kfree(e);
	INIT_LIST_HEAD(&ep->notify_q);
}

/* The oldest notification of window @win, taken off the queue, or NULL. */
static struct rmawin_notification_ent *rmawin_notify_take(struct rmawin_ep *ep, u32 win)
{
	struct rmawin_notification_ent *e, *found = NULL;
	unsigned long flags;

	spin_lock_irqsave(&ep->notify_lock, flags);
	list_for_each_entry(e, &ep->notify_q, node) {
		if (e->win == win) {
			list_del(&e->node);
			found = e;
			break;
		}
	}
	spin_unlock_irqrestore(&ep->notify_lock, flags);
	return found;
}

static bool rmawin_notify_ready(struct rmawin_ep *ep, u32 win,
				struct rmawin_notification_ent **e)
{
	*e = rmawin_notify_take(ep, win);
	return *e || READ_ONCE(ep->detached);
}

/**
 * rmawin_ioctl_notify_wait() - RMAWIN_IOC_NOTIFY_WAIT
 * @ep: the endpoint
 * @arg: struct rmawin_notify_wait, already copied in
 *
 * Waits without the endpoint's lock: other calls on the endpoint go on.
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_notify_wait(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_notify_wait *w = arg;
	struct rmawin_notification_ent *e = NULL;
	long left;
	int ret;

	if (w->flags || w->timeout_ms < -1)
		return -EINVAL;
	mutex_lock(&ep->lock);
	ret = rmawin_ep_check_group(ep);
	if (!ret && !rmawin_win_lookup(ep, w->win))
		ret = -ENOENT;
	mutex_unlock(&ep->lock);
	if (ret)
		return ret;

	if (w->timeout_ms < 0) {
		if (wait_event_interruptible(ep->wq, rmawin_notify_ready(ep, w->win, &e)))
			return -EINTR;
	} else {
		left = wait_event_interruptible_timeout(ep->wq,
							rmawin_notify_ready(ep, w->win, &e),
							msecs_to_jiffies(w->timeout_ms));
		if (left < 0)
			return -EINTR;
	}
	if (!e)
		return READ_ONCE(ep->detached) ? -ENODEV :
		       w->timeout_ms ? -ETIMEDOUT : -EAGAIN;
	w->source = e->source;
	w->tag = e->tag;
	w->target_disp = e->target_disp;
	w->len = e->len;
	kfree(e);
	return 0;
}
