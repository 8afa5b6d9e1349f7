// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: receiving control messages (sending them is msg.c's).
 *
 * Receive completions come in softirq context.  A message whose handler
 * needs nothing but spinlocks and atomics (the table's @softirq: the
 * accumulates and their replies, locks, grants, post/complete, barrier
 * rounds) is handled there at once, which spares a kworker's wake-up on
 * each hop of an accumulate or a lock; the rest go to the group's receive
 * work, in order.  Order is kept per group: once one message waits for
 * the work, every later one waits behind it, so messages are handled one
 * at a time, in the order they completed, as by a single worker.
 *
 * Nothing a peer sends is trusted: one table says, per type, how long its
 * payload may be; the header's type, version and length are checked
 * against it before a handler runs, and every handler checks its fields.
 * Before a peer has proven that it holds the job's key only its proof is
 * looked at; after, a message no honest peer sends fails the peer.
 */
#include <linux/delay.h>
#include <linux/sched/mm.h>

#include "rmawin.h"

/**
 * struct rmawin_msg_def - what the dispatch table knows of a message type
 * @recv: its handler, or NULL for AUTH and WELCOME (handled before membership)
 * @min_len: fewest payload bytes
 * @max_len: most payload bytes
 * @softirq: @recv takes only spinlocks (the _bh or _irq kind where process
 *	context takes them too), allocates nothing that sleeps and fails no
 *	peer itself: it may run in the receive completion's softirq context
 */
struct rmawin_msg_def {
	int (*recv)(struct rmawin_peer *peer, u32 arg, const void *p, u16 len);
	u16 min_len;
	u16 max_len;
	bool softirq;
};

#define RMAWIN_MSG_FIXED(fn, type) \
	{ .recv = (fn), .min_len = sizeof(type), .max_len = sizeof(type) }
#define RMAWIN_MSG_EMPTY(fn)	{ .recv = (fn) }
#define RMAWIN_MSG_FIXED_SOFTIRQ(fn, type) \
	{ .recv = (fn), .min_len = sizeof(type), .max_len = sizeof(type), .softirq = true }
#define RMAWIN_MSG_EMPTY_SOFTIRQ(fn)	{ .recv = (fn), .softirq = true }

static const struct rmawin_msg_def rmawin_msg_defs[RMAWIN_MSG_LAST] = {
	[RMAWIN_MSG_AUTH] = RMAWIN_MSG_FIXED(NULL, struct rmawin_wire_auth),
	[RMAWIN_MSG_BARRIER] = RMAWIN_MSG_EMPTY_SOFTIRQ(rmawin_barrier_recv),
	[RMAWIN_MSG_WIN_DESC] = {
		.recv = rmawin_win_desc_recv,
		.min_len = sizeof(struct rmawin_wire_desc),
		.max_len = sizeof(struct rmawin_wire_desc) +
			   RMAWIN_DESC_PER_MSG * sizeof(struct rmawin_wire_mr),
	},
	[RMAWIN_MSG_ACC] = {
		.recv = rmawin_acc_recv,
		.min_len = sizeof(struct rmawin_wire_acc),
		.max_len = sizeof(struct rmawin_wire_acc) + RMAWIN_ACC_FRAG,
		.softirq = true,
	},
	[RMAWIN_MSG_ACC_REPLY] = {
		.recv = rmawin_acc_reply_recv,
		.min_len = sizeof(struct rmawin_wire_acc_reply),
		.max_len = sizeof(struct rmawin_wire_acc_reply) + RMAWIN_ACC_FRAG,
		.softirq = true,
	},
	[RMAWIN_MSG_LOCK] = RMAWIN_MSG_FIXED_SOFTIRQ(rmawin_lock_recv, struct rmawin_wire_lock),
	[RMAWIN_MSG_LOCK_GRANT] = RMAWIN_MSG_EMPTY_SOFTIRQ(rmawin_lock_grant_recv),
	[RMAWIN_MSG_UNLOCK] = RMAWIN_MSG_FIXED_SOFTIRQ(rmawin_unlock_recv,
						       struct rmawin_wire_lock),
	[RMAWIN_MSG_POST] = RMAWIN_MSG_EMPTY_SOFTIRQ(rmawin_pscw_post_recv),
	[RMAWIN_MSG_COMPLETE] = {
		.recv = rmawin_pscw_complete_recv,
		.max_len = sizeof(struct rmawin_wire_acc) + RMAWIN_EPOCH_OP_MAX,
		.softirq = true,
	},
	[RMAWIN_MSG_NOTIFY] = RMAWIN_MSG_FIXED(rmawin_notify_recv, struct rmawin_wire_notify),
	[RMAWIN_MSG_WELCOME] = RMAWIN_MSG_EMPTY(NULL),
	[RMAWIN_MSG_ACC_QUIET] = {
		.recv = rmawin_acc_quiet_recv,
		.min_len = sizeof(struct rmawin_wire_acc),
		.max_len = sizeof(struct rmawin_wire_acc) + RMAWIN_ACC_FRAG,
		.softirq = true,
	},
	[RMAWIN_MSG_ACC_BULK] = RMAWIN_MSG_FIXED_SOFTIRQ(rmawin_acc_bulk_recv,
							 struct rmawin_wire_acc),
};

static void *rmawin_rx_addr(struct rmawin_peer *peer, u32 slot)
{
	return peer->rx_mem + slot * RMAWIN_CTRL_SIZE;
}

static int rmawin_post_recv(struct rmawin_peer *peer, u32 slot)
{
	struct ib_sge sge = {
		.addr = peer->rx_dma + slot * RMAWIN_CTRL_SIZE,
		.length = RMAWIN_CTRL_SIZE,
		.lkey = peer->grp->ep->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &peer->rx[slot].cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	ib_dma_sync_single_for_device(peer->grp->ibdev, sge.addr, sge.length,
				      DMA_FROM_DEVICE);
	return ib_post_recv(peer->qp, &wr, NULL);
}

/*
 * One received message of @len bytes.  A connection that sends anything
 * but its proof first is dropped (rmawin_peer_retry(), any context).
 * Return: -EPROTO if a proven member sent garbage: the caller fails it and
 * cuts it off, which takes process context; else 0.
 */
static int rmawin_dispatch(struct rmawin_peer *peer, const struct rmawin_wire_hdr *hdr,
			   u32 len)
{
	const struct rmawin_msg_def *def;
	struct mem_cgroup *old_memcg;
	u16 plen;
	int state, ret;

	state = READ_ONCE(peer->state);
	if (state != RMAWIN_PEER_CONNECTED && state != RMAWIN_PEER_CONNECTING)
		return 0;	/* a failed peer, or an attempt being torn down */
	plen = len >= sizeof(*hdr) ? le16_to_cpu(hdr->len) : 0;
	if (len < sizeof(*hdr) || hdr->version != RMAWIN_WIRE_VERSION ||
	    len != sizeof(*hdr) + plen || !hdr->type || hdr->type >= RMAWIN_MSG_LAST)
		goto bad;
	def = &rmawin_msg_defs[hdr->type];
	if (plen < def->min_len || plen > def->max_len)
		goto bad;
	/*
	 * Before membership a connection is heard for one message alone: the
	 * initiator's proof, or (to the initiator) the responder's welcome.
	 */
	if (state == RMAWIN_PEER_CONNECTING) {
		if (hdr->type == RMAWIN_MSG_AUTH)
			rmawin_peer_auth_recv(peer, (const void *)(hdr + 1));
		else if (hdr->type == RMAWIN_MSG_WELCOME)
			rmawin_peer_welcome_recv(peer);
		else
			rmawin_peer_retry(peer, true);
		return 0;
	}
	if (!def->recv)
		goto bad;	/* a second proof or welcome */
	/* what the message makes us allocate is the endpoint owner's to pay */
	old_memcg = set_active_memcg(peer->grp->ep->memcg);
	ret = def->recv(peer, le32_to_cpu(hdr->arg), hdr + 1, plen);
	set_active_memcg(old_memcg);
	if (ret == -ENOMEM)
		rmawin_peer_fail(peer, -ENOMEM);
	else if (ret && ret != -ESHUTDOWN)	/* a reply the teardown refused */
		goto bad;
	return 0;

bad:
	if (state != RMAWIN_PEER_CONNECTING)
		return -EPROTO;
	rmawin_peer_retry(peer, true);
	return 0;
}

/*
 * May the receive completion of @buf be handled in softirq context?  Only
 * a message of a proven member whose type says so (its header is checked
 * again in rmawin_dispatch()), not an accumulate that would need the FPU
 * while softirq context may not have it (rmawin_acc_softirq_ok()), and not
 * while the test hook delays receives.
 */
static bool rmawin_rx_softirq(struct rmawin_ctrl_buf *buf)
{
	struct rmawin_peer *peer = buf->peer;
	const struct rmawin_wire_hdr *hdr = rmawin_rx_addr(peer, buf->slot);
	const struct rmawin_wire_acc *acc = (const void *)(hdr + 1);
	u8 type;

	if (buf->slot == RMAWIN_RX_DRAIN || buf->status != IB_WC_SUCCESS ||
	    buf->len < sizeof(*hdr) || READ_ONCE(rmawin_recv_delay_ms) ||
	    READ_ONCE(peer->state) != RMAWIN_PEER_CONNECTED)
		return false;
	type = READ_ONCE(hdr->type);
	if (type >= RMAWIN_MSG_LAST || !rmawin_msg_defs[type].softirq)
		return false;
	if (type != RMAWIN_MSG_ACC && type != RMAWIN_MSG_ACC_QUIET && type != RMAWIN_MSG_ACC_BULK)
		return true;
	/* a short one fails its checks in the work */
	return buf->len >= sizeof(*hdr) + sizeof(*acc) &&
	       rmawin_acc_softirq_ok(READ_ONCE(acc->datatype));
}

/*
 * Handle the receive completion of @buf, in softirq context (@softirq) or
 * in the receive work.  Return: false if, in softirq context, the message
 * turned out invalid: the caller queues @buf, not reposted, for the work
 * to fail the peer.
 */
static bool rmawin_rx_handle(struct rmawin_ctrl_buf *buf, bool softirq)
{
	struct rmawin_peer *peer = buf->peer;
	u32 delay;
	int ret;

	if (buf->slot == RMAWIN_RX_DRAIN) {
		if (!READ_ONCE(peer->grp->dying))
			rmawin_peer_left(peer);
		return true;
	}
	if (buf->status != IB_WC_SUCCESS) {
		/* flushes come from tearing the QP down: not a failure */
		if (buf->status != IB_WC_WR_FLUSH_ERR)
			rmawin_peer_lost(peer);
		return true;
	}
	if (buf->bad) {
		buf->bad = false;
		rmawin_peer_protocol_error(peer);
	} else {
		delay = softirq ? 0 : READ_ONCE(rmawin_recv_delay_ms);
		if (unlikely(delay))
			msleep(min_t(u32, delay, RMAWIN_RECV_DELAY_MAX));
		if (rmawin_dispatch(peer, rmawin_rx_addr(peer, buf->slot), buf->len)) {
			if (softirq) {
				buf->bad = true;
				return false;
			}
			rmawin_peer_protocol_error(peer);
		} else if (softirq) {
			rmawin_count(peer->grp->ep, RMAWIN_CNT_CTRL_MSGS_SOFTIRQ, 1);
		}
	}
	/* a peer that is no member (any more) gets no buffer back */
	if (READ_ONCE(peer->state) != RMAWIN_PEER_CONNECTED &&
	    READ_ONCE(peer->state) != RMAWIN_PEER_CONNECTING)
		return true;
	if (!rmawin_post_enter(peer->grp))
		return true;
	ret = rmawin_post_recv(peer, buf->slot);
	rmawin_post_exit(peer->grp);
	if (ret)
		rmawin_peer_lost(peer);
	return true;
}

/* Queue @buf for the receive work, behind everything queued before it. */
static void rmawin_rx_defer(struct rmawin_ctrl_buf *buf)
{
	struct rmawin_group *grp = buf->peer->grp;
	unsigned long flags;

	spin_lock_irqsave(&grp->lock, flags);
	list_add_tail(&buf->node, &grp->rx_queue);
	spin_unlock_irqrestore(&grp->lock, flags);
	queue_work(system_highpri_wq, &grp->rx_work);
}

/*
 * A receive completion (or a marker's): handled here if nothing waits
 * for the work before it and it may be, else queued behind.  The CQ is
 * polled by one CPU at a time, so completions come here one by one.
 */
static void rmawin_rx_complete(struct rmawin_ctrl_buf *buf, struct ib_wc *wc)
{
	struct rmawin_group *grp = buf->peer->grp;
	unsigned long flags;
	bool now;

	buf->status = wc->status;
	buf->len = wc->byte_len;
	/*
	 * A message is a plain SEND.  A member's RDMA write with immediate
	 * takes a receive too, and leaves the buffer's old message to be
	 * handled again; a send with invalidate has just invalidated one of
	 * our memory regions.  Too short for a header, either fails the
	 * dispatch's checks: a member is cut off.
	 */
	if (wc->status == IB_WC_SUCCESS &&
	    (wc->opcode != IB_WC_RECV || (wc->wc_flags & (IB_WC_WITH_IMM | IB_WC_WITH_INVALIDATE))))
		buf->len = 0;
	if (buf->slot != RMAWIN_RX_DRAIN && wc->status == IB_WC_SUCCESS)
		ib_dma_sync_single_for_cpu(grp->ibdev,
					   buf->peer->rx_dma + buf->slot * RMAWIN_CTRL_SIZE,
					   RMAWIN_CTRL_SIZE, DMA_FROM_DEVICE);
	spin_lock_irqsave(&grp->lock, flags);
	now = list_empty(&grp->rx_queue) && !grp->rx_busy && rmawin_rx_softirq(buf);
	spin_unlock_irqrestore(&grp->lock, flags);
	if (!now || !rmawin_rx_handle(buf, true))
		rmawin_rx_defer(buf);
}

/* A receive completion, or the marker's of an orderly disconnect (@drain). */
void rmawin_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	rmawin_rx_complete(rmawin_cqe_to_buf(wc->wr_cqe), wc);
}

/**
 * rmawin_rx_work() - handle the queued receive completions, in order
 * @work: the group's @rx_work
 *
 * Each is taken off the queue before it is handled (its buffer may be
 * posted and complete again meanwhile); @rx_busy keeps later completions
 * waiting until it is done.
 */
void rmawin_rx_work(struct work_struct *work)
{
	struct rmawin_group *grp = container_of(work, struct rmawin_group, rx_work);
	struct rmawin_ctrl_buf *buf;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&grp->lock, flags);
		buf = list_first_entry_or_null(&grp->rx_queue, struct rmawin_ctrl_buf, node);
		if (buf)
			list_del(&buf->node);
		grp->rx_busy = !!buf;
		spin_unlock_irqrestore(&grp->lock, flags);
		if (!buf)
			return;
		rmawin_rx_handle(buf, false);
		cond_resched();
	}
}

/**
 * rmawin_peer_leave() - a member disconnected in order
 * @peer: the peer, CONNECTED
 *
 * Its last messages may have arrived (its kernel waits until they are
 * acknowledged before it disconnects) but not yet been dispatched: the
 * CM's event can overtake the receive completions' work.  So the queue
 * pair goes to the error state and a marker receive is posted behind
 * them; the peer fails at the marker's completion, which comes after
 * theirs.  If that cannot be arranged, it fails at once.
 *
 * Context: the CM handler.
 */
void rmawin_peer_leave(struct rmawin_peer *peer)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_recv_wr wr = { .wr_cqe = &peer->drain.cqe };
	struct rmawin_group *grp = peer->grp;
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&grp->lock, flags);
	first = peer->state == RMAWIN_PEER_CONNECTED && !peer->leaving;
	peer->leaving = true;
	spin_unlock_irqrestore(&grp->lock, flags);
	if (!first)
		return;
	peer->drain.cqe.done = rmawin_recv_done;
	peer->drain.peer = peer;
	peer->drain.slot = RMAWIN_RX_DRAIN;
	if (ib_modify_qp(peer->qp, &attr, IB_QP_STATE) || ib_post_recv(peer->qp, &wr, NULL))
		rmawin_peer_left(peer);
}

/**
 * rmawin_ctrl_post_recvs() - post every receive buffer on a new QP
 * @peer: the peer
 *
 * Return: 0 or the error of ib_post_recv().
 */
int rmawin_ctrl_post_recvs(struct rmawin_peer *peer)
{
	u32 i;
	int ret;

	for (i = 0; i < RMAWIN_CTRL_DEPTH; i++) {
		ret = rmawin_post_recv(peer, i);
		if (ret)
			return ret;
	}
	return 0;
}
