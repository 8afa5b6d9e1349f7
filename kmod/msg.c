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
 * Sending is here: a send buffer per message, taken from the peer's free
 * ones or, when all are busy and the caller cannot wait, a deferred copy
 * that the next send completion posts, in order.  Receiving, the dispatch
 * table and its checks are in recv.c.
 */
#include <linux/slab.h>
#include <linux/bitops.h>

#include "rmawin.h"

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
