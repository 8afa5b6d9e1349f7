// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: control messages.  Small SEND/RECV messages between the kernels
 * of a group carry what one-sided operations cannot: the handshake's last
 * proof, barrier and fence rounds, window descriptors, accumulates, locks,
 * post/start/complete/wait and notifications (formats in wire.h).
 *
 * Each peer has RMAWIN_CTRL_DEPTH receive buffers, reposted as soon as a
 * message is handled, and as many send buffers, each busy from post to
 * completion.  A receiver short of buffers makes the sender's HCA retry
 * (rnr_retry_count 7 = forever), so nothing is ever dropped.
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
#include <linux/slab.h>
#include <linux/bitops.h>
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

/* A message waiting for a send buffer. */
struct rmawin_deferred {
	struct list_head node;
	u8 type;
	u16 len;
	u32 arg;
	u8 payload[];
};

static int rmawin_msg_post(struct rmawin_peer *peer, int slot, u8 type, u32 arg,
			   const void *payload, u16 len, int send_flags);

static struct rmawin_ctrl_buf *rmawin_cqe_to_buf(struct ib_cqe *cqe)
{
	return container_of(cqe, struct rmawin_ctrl_buf, cqe);
}

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
static void rmawin_recv_done(struct ib_cq *cq, struct ib_wc *wc)
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

/*
 * A send buffer came free: must the endpoint's sleepers hear of it?  Only
 * if one of them waits for it (@tx_wanted): a wake-up of every sleeper on
 * each send completion woke, say, a target process waiting in a barrier
 * for every reply its kernel sent for it.
 */
static bool rmawin_tx_freed_locked(struct rmawin_group *grp)
{
	bool wanted = grp->tx_wanted;

	lockdep_assert_held(&grp->lock);
	grp->tx_wanted = false;
	return wanted;
}

static void rmawin_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmawin_ctrl_buf *buf = rmawin_cqe_to_buf(wc->wr_cqe);
	struct rmawin_peer *peer = buf->peer;
	struct rmawin_group *grp = peer->grp;
	unsigned long flags;

	struct rmawin_deferred *d = NULL;
	bool wake = false;

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		rmawin_peer_lost(peer);
	spin_lock_irqsave(&grp->lock, flags);
	/* a deferred message takes the buffer over at once, in order */
	if (wc->status == IB_WC_SUCCESS && !list_empty(&peer->deferred)) {
		d = list_first_entry(&peer->deferred, struct rmawin_deferred, node);
		list_del(&d->node);
		peer->ndeferred--;
	} else {
		__clear_bit(buf->slot, &peer->tx_busy);
		wake = rmawin_tx_freed_locked(grp);
	}
	spin_unlock_irqrestore(&grp->lock, flags);
	if (d) {
		rmawin_msg_post(peer, buf->slot, d->type, d->arg, d->payload, d->len, 0);
		kfree(d);
	}
	if (wake)
		wake_up_all(&grp->ep->wq);
}

/**
 * rmawin_ctrl_alloc() - allocate and map a peer's control buffers
 * @peer: the peer
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int rmawin_ctrl_alloc(struct rmawin_peer *peer)
{
	struct ib_device *ibdev = peer->grp->ibdev;
	size_t bytes = RMAWIN_CTRL_DEPTH * RMAWIN_CTRL_SIZE;
	u32 i;

	BUILD_BUG_ON(RMAWIN_CTRL_DEPTH > BITS_PER_LONG);
	peer->rx_mem = kzalloc(bytes, GFP_KERNEL_ACCOUNT);
	peer->tx_mem = kzalloc(bytes, GFP_KERNEL_ACCOUNT);
	if (!peer->rx_mem || !peer->tx_mem)
		goto err_free;
	peer->rx_dma = ib_dma_map_single(ibdev, peer->rx_mem, bytes, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ibdev, peer->rx_dma))
		goto err_free;
	peer->tx_dma = ib_dma_map_single(ibdev, peer->tx_mem, bytes, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, peer->tx_dma))
		goto err_unmap_rx;
	for (i = 0; i < RMAWIN_CTRL_DEPTH; i++) {
		peer->rx[i].cqe.done = rmawin_recv_done;
		peer->rx[i].peer = peer;
		peer->rx[i].slot = i;
		peer->tx[i].cqe.done = rmawin_send_done;
		peer->tx[i].peer = peer;
		peer->tx[i].slot = i;
	}
	return 0;

err_unmap_rx:
	ib_dma_unmap_single(ibdev, peer->rx_dma, bytes, DMA_FROM_DEVICE);
err_free:
	kfree(peer->tx_mem);
	kfree(peer->rx_mem);
	peer->tx_mem = NULL;
	peer->rx_mem = NULL;
	return -ENOMEM;
}

/**
 * rmawin_ctrl_free() - unmap and free a peer's control buffers
 * @peer: the peer, whose QP is already destroyed
 */
void rmawin_ctrl_free(struct rmawin_peer *peer)
{
	struct ib_device *ibdev = peer->grp->ibdev;
	size_t bytes = RMAWIN_CTRL_DEPTH * RMAWIN_CTRL_SIZE;

	struct rmawin_deferred *d, *tmp;

	list_for_each_entry_safe(d, tmp, &peer->deferred, node)
		kfree(d);
	INIT_LIST_HEAD(&peer->deferred);
	peer->ndeferred = 0;
	if (!peer->rx_mem)
		return;
	ib_dma_unmap_single(ibdev, peer->tx_dma, bytes, DMA_TO_DEVICE);
	ib_dma_unmap_single(ibdev, peer->rx_dma, bytes, DMA_FROM_DEVICE);
	kfree(peer->tx_mem);
	kfree(peer->rx_mem);
	peer->tx_mem = NULL;
	peer->rx_mem = NULL;
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

/*
 * Take a free send buffer (true, @slot set) or learn that the peer failed
 * (true, @err set); false means wait for a send completion.
 */
static bool rmawin_tx_try_locked(struct rmawin_peer *peer, int *slot, int *err)
{
	lockdep_assert_held(&peer->grp->lock);
	if (peer->state != RMAWIN_PEER_CONNECTED) {
		*err = peer->state == RMAWIN_PEER_FAILED ? peer->error : -ENOTCONN;
		return true;
	}
	/* a removed device completes nothing: never wait for a buffer */
	if (READ_ONCE(peer->grp->ep->dev->dead)) {
		*err = -ENODEV;
		return true;
	}
	if (peer->tx_busy == ~0UL >> (BITS_PER_LONG - RMAWIN_CTRL_DEPTH)) {
		peer->grp->tx_wanted = true;	/* wake us as one comes free */
		return false;
	}
	*slot = ffz(peer->tx_busy);
	__set_bit(*slot, &peer->tx_busy);
	return true;
}

static bool rmawin_tx_try(struct rmawin_peer *peer, int *slot, int *err)
{
	unsigned long flags;
	bool done;

	spin_lock_irqsave(&peer->grp->lock, flags);
	done = rmawin_tx_try_locked(peer, slot, err);
	spin_unlock_irqrestore(&peer->grp->lock, flags);
	return done;
}

static int rmawin_msg_send_flags(struct rmawin_peer *peer, u8 type, u32 arg,
				 const void *payload, u16 len, int send_flags)
{
	struct rmawin_group *grp = peer->grp;
	int slot = -1, err = 0;

	if (WARN_ON_ONCE(len > RMAWIN_MSG_MAX_PAYLOAD))
		return -EINVAL;
	/* not rmawin_wait_event(): the condition takes a buffer, once */
	if (wait_event_killable(grp->ep->wq, rmawin_tx_try(peer, &slot, &err) ||
				READ_ONCE(grp->ep->closing)))
		return -EINTR;
	if (err)
		return err;
	if (slot < 0)
		return -EINTR;		/* the endpoint is closing */

	return rmawin_msg_post(peer, slot, type, arg, payload, len, send_flags);
}

/**
 * rmawin_msg_send() - send one control message to a peer
 * @peer: destination
 * @type: enum rmawin_msg_type
 * @arg: the header's type-specific argument
 * @payload: bytes after the header, or NULL
 * @len: bytes at @payload, at most RMAWIN_CTRL_SIZE minus the header
 *
 * Context: process context; may sleep until a send buffer is free.
 * Return: 0, the peer's error if it failed, -EINTR on a fatal signal, or
 * -ESHUTDOWN while the group is torn down.
 */
int rmawin_msg_send(struct rmawin_peer *peer, u8 type, u32 arg,
		    const void *payload, u16 len)
{
	return rmawin_msg_send_flags(peer, type, arg, payload, len, 0);
}

/**
 * rmawin_msg_send_fenced() - rmawin_msg_send(), fenced or not
 * @peer: destination
 * @type: enum rmawin_msg_type
 * @arg: the header's type-specific argument
 * @payload: bytes after the header, or NULL
 * @len: bytes at @payload
 * @fence: behind the reads and atomics posted before it
 *
 * With @fence the device sends it only once the RDMA reads and atomics
 * posted before it on the queue pair have completed (IB_SEND_FENCE).
 * Writes need no fence: the peer handles the message after their data is
 * placed.
 *
 * Context and return: as rmawin_msg_send().
 */
int rmawin_msg_send_fenced(struct rmawin_peer *peer, u8 type, u32 arg,
			   const void *payload, u16 len, bool fence)
{
	return rmawin_msg_send_flags(peer, type, arg, payload, len, fence ? IB_SEND_FENCE : 0);
}

/* Give send buffer @slot back: what it was taken for is not sent. */
static void rmawin_tx_put(struct rmawin_peer *peer, int slot)
{
	unsigned long flags;
	bool wake;

	spin_lock_irqsave(&peer->grp->lock, flags);
	__clear_bit(slot, &peer->tx_busy);
	wake = rmawin_tx_freed_locked(peer->grp);
	spin_unlock_irqrestore(&peer->grp->lock, flags);
	if (wake)
		wake_up_all(&peer->grp->ep->wq);
}

/**
 * rmawin_msg_probe() - find out whether a quiet peer is still there
 * @peer: the peer
 *
 * A zero-length RDMA write: it needs no key and takes no receive buffer
 * (IBTA C9-88), so the peer's kernel never sees it, only its device, which
 * acknowledges it.  If the peer's node or link is gone the device's
 * retries run out and the completion fails the peer (rmawin_send_done()).
 * It takes a send buffer, and only when none is busy: a message in flight
 * finds the same out, and a probe that is not answered yet is not sent
 * again.
 *
 * Context: process context; the group kept (rmawin_keepalive()).
 */
void rmawin_msg_probe(struct rmawin_peer *peer)
{
	struct rmawin_group *grp = peer->grp;
	struct ib_rdma_wr wr = {};
	unsigned long flags;
	int slot = -1;

	spin_lock_irqsave(&grp->lock, flags);
	if (peer->state == RMAWIN_PEER_CONNECTED && !peer->tx_busy &&
	    !READ_ONCE(grp->ep->dev->dead)) {
		slot = 0;
		__set_bit(slot, &peer->tx_busy);
	}
	spin_unlock_irqrestore(&grp->lock, flags);
	if (slot < 0)
		return;
	if (!rmawin_post_enter(grp)) {
		rmawin_tx_put(peer, slot);
		return;
	}
	wr.wr.wr_cqe = &peer->tx[slot].cqe;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	if (rmawin_post_send(peer->qp, &wr.wr, false)) {
		rmawin_tx_put(peer, slot);
		rmawin_peer_lost(peer);
	} else {
		rmawin_count(grp->ep, RMAWIN_CNT_KEEPALIVES, 1);
	}
	rmawin_post_exit(grp);
}

/*
 * Fill send buffer @slot and post it; on failure the slot is freed.
 * -ESHUTDOWN: the group is being torn down, nothing was posted.
 */
static int rmawin_msg_post(struct rmawin_peer *peer, int slot, u8 type, u32 arg,
			   const void *payload, u16 len, int send_flags)
{
	struct rmawin_group *grp = peer->grp;
	struct rmawin_wire_hdr *hdr;
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	int ret;

	if (!rmawin_post_enter(grp)) {
		rmawin_tx_put(peer, slot);
		return -ESHUTDOWN;
	}
	hdr = peer->tx_mem + slot * RMAWIN_CTRL_SIZE;
	hdr->type = type;
	hdr->version = RMAWIN_WIRE_VERSION;
	hdr->len = cpu_to_le16(len);
	hdr->arg = cpu_to_le32(arg);
	if (len)
		memcpy(hdr + 1, payload, len);

	sge.addr = peer->tx_dma + slot * RMAWIN_CTRL_SIZE;
	sge.length = sizeof(*hdr) + len;
	sge.lkey = grp->ep->pd->local_dma_lkey;
	ib_dma_sync_single_for_device(grp->ibdev, sge.addr, sge.length,
				      DMA_TO_DEVICE);
	wr.wr_cqe = &peer->tx[slot].cqe;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_SIGNALED | send_flags;
	ret = rmawin_post_send(peer->qp, &wr, false);
	rmawin_post_exit(grp);
	if (!ret) {
		rmawin_count(grp->ep, RMAWIN_CNT_CTRL_MSGS, 1);
	} else {
		rmawin_tx_put(peer, slot);
		rmawin_peer_lost(peer);
	}
	return ret;
}

/**
 * rmawin_msg_send_async() - send a control message without waiting
 * @peer: destination
 * @type: enum rmawin_msg_type
 * @arg: the header's type-specific argument
 * @payload: bytes after the header, or NULL
 * @len: bytes at @payload
 *
 * For completion context, which must not wait for a send completion (it
 * would wait for itself): with no free send buffer the message is queued
 * and sent, in order, as buffers free up.  At most RMAWIN_DEFERRED_MAX
 * wait: a peer that leaves that many of our replies unreceived is not
 * following the protocol (it asks faster than it takes the answers).
 *
 * Context: any but hard interrupt; does not sleep.  The entry of a queued
 * message is charged to the endpoint's owner (the caller set its memory
 * cgroup active), and allocated without sleeping in softirq context.
 * Return: 0, -ENOMEM, -EPROTO past the cap, the peer's error, or
 * -ESHUTDOWN while the group is torn down.
 */
int rmawin_msg_send_async(struct rmawin_peer *peer, u8 type, u32 arg,
			  const void *payload, u16 len)
{
	struct rmawin_group *grp = peer->grp;
	struct rmawin_deferred *d = NULL;
	unsigned long flags;
	int slot = -1, err = 0;

	if (WARN_ON_ONCE(len > RMAWIN_MSG_MAX_PAYLOAD))
		return -EINVAL;
	for (;;) {
		spin_lock_irqsave(&grp->lock, flags);
		if (list_empty(&peer->deferred) && rmawin_tx_try_locked(peer, &slot, &err)) {
			spin_unlock_irqrestore(&grp->lock, flags);
			kfree(d);
			return err ?: rmawin_msg_post(peer, slot, type, arg, payload, len, 0);
		}
		if (d)
			break;
		spin_unlock_irqrestore(&grp->lock, flags);
		/* no buffer now: an entry to queue it, then look again */
		d = kmalloc(struct_size(d, payload, len),
			    in_task() ? GFP_KERNEL_ACCOUNT : GFP_ATOMIC | __GFP_ACCOUNT);
		if (!d)
			return -ENOMEM;
		d->type = type;
		d->arg = arg;
		d->len = len;
		if (len)
			memcpy(d->payload, payload, len);
	}
	if (peer->ndeferred >= RMAWIN_DEFERRED_MAX) {
		spin_unlock_irqrestore(&grp->lock, flags);
		kfree(d);
		return -EPROTO;
	}
	list_add_tail(&d->node, &peer->deferred);
	peer->ndeferred++;
	spin_unlock_irqrestore(&grp->lock, flags);
	return 0;
}

/**
 * rmawin_msg_send_first() - the first message of a connection, before membership
 * @peer: the peer, not yet CONNECTED
 * @type: RMAWIN_MSG_AUTH (the initiator's proof) or RMAWIN_MSG_WELCOME
 *	(the responder took it)
 * @payload: its payload
 * @len: its length
 *
 * Context: the CM handler or the receive CQ's work, the queue pair fresh and
 * the peer not CONNECTED: nothing else sends on it, every send buffer is free.
 * Return: 0 or the error of ib_post_send().
 */
int rmawin_msg_send_first(struct rmawin_peer *peer, u8 type, const void *payload, u16 len)
{
	unsigned long flags;

	spin_lock_irqsave(&peer->grp->lock, flags);
	__set_bit(0, &peer->tx_busy);
	spin_unlock_irqrestore(&peer->grp->lock, flags);
	return rmawin_msg_post(peer, 0, type, 0, payload, len, 0);
}
