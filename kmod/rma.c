// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: puts and gets, the entries of ops.c's table for RMAWIN_OP_PUT,
 * RMAWIN_OP_GET and RMAWIN_OP_PUT_NOTIFY.  A put is an RDMA WRITE and a get
 * an RDMA READ into the target's registered window.  Up to
 * RMAWIN_INLINE_MAX bytes of a put travel inline in the work request; up
 * to RMAWIN_BOUNCE_SIZE bytes go through one of the group's registered
 * kernel buffers (bounce.c: a copy is cheaper than pinning); larger
 * origins are pinned for the operation (or found in the registration
 * cache, rcache.c) and DMA-mapped page by page, pinning pipelined against
 * sending.  On this rank's own window an operation is a copy, at once.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/highmem.h>
#include <linux/uaccess.h>

#include "ops.h"

/* Up to this many bytes, rmawin_user_writable() probes with copies. */
#define RMAWIN_PROBE_MAX	64
/* rmawin_fault_in() faults this much in between its checks for a signal */
#define RMAWIN_FAULT_CHUNK	SZ_4M

/*
 * Fault a user range in, for writing if @write, a chunk at a time: a large
 * one (up to the machine's memory, rmawin_rma_check()) gives the CPU up
 * between chunks and ends at a fatal signal instead of running to its end.
 * Return: 0, -EFAULT, or -EINTR.
 */
static int rmawin_fault_in(void __user *p, u64 len, bool write)
{
	while (len) {
		size_t n = min_t(u64, len, RMAWIN_FAULT_CHUNK);

		if (write ? fault_in_safe_writeable(p, n) : fault_in_readable(p, n))
			return -EFAULT;
		p += n;
		len -= n;
		if (!len)
			break;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return 0;
}

/**
 * rmawin_user_writable() - is a user range mapped, and writable?
 * @p: the range's start
 * @len: its length
 *
 * A range an operation writes later (a get's buffer, a result buffer):
 * the caller's until the operation completes, as MPI has it.  A small
 * one is probed by writing back what it holds, which costs two copies;
 * faulting it in (fault_in_safe_writeable()) takes the mmap lock and walks
 * the page tables, which is most of an 8-byte operation's own cost under
 * emulation.
 *
 * Return: 0, -EFAULT, or -EINTR (a fatal signal, during a large one).
 */
int rmawin_user_writable(void __user *p, u64 len)
{
	u8 buf[RMAWIN_PROBE_MAX];

	if (len > sizeof(buf))
		return rmawin_fault_in(p, len, true);
	if (rmawin_copy_from_user(buf, p, len) || rmawin_copy_to_user(p, buf, len))
		return -EFAULT;
	return 0;
}

/*
 * Put and get: the whole origin is checked now, before anything of the
 * batch is issued (-EFAULT; -ENOMEM for more than could ever be pinned):
 * a small one is only touched by copies (late, for a get), a large one is
 * pinned piece by piece while earlier pieces are already sent.
 */
int rmawin_rma_check(const struct rmawin_op_desc *op)
{
	void __user *origin = u64_to_user_ptr(op->origin);

	if (!op->len)
		return 0;
	if (!access_ok(origin, op->len))
		return -EFAULT;
	/*
	 * More pages than the machine has can never be pinned (the origin
	 * of a whole window that a peer says has 2^40 bytes): refused before
	 * the range is faulted in page by page, which would take 2^28 faults
	 * and their page tables, and could not be interrupted.
	 */
	if (PFN_UP(op->len) > totalram_pages())
		return -ENOMEM;
	if (op->opcode == RMAWIN_OP_GET)
		return rmawin_user_writable(origin, op->len);
	return rmawin_fault_in(origin, op->len, false);
}

/*
 * A put or get on this rank's own window: a copy between the origin and
 * the window's pages, done at once.  Through the pages, not the window's
 * user address, so that allocated windows need no mapping.
 */
int rmawin_rma_local(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
		     const struct rmawin_target *t)
{
	u8 __user *origin = u64_to_user_ptr(op->origin);
	struct rmawin_win *win = t->win;
	u64 pos = t->off + offset_in_page(win->base), done, n;
	unsigned long left = 0;
	void *kaddr, *buf;

	/* through a buffer: a fault must not leave zeroes in the window */
	buf = kmalloc(PAGE_SIZE, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;
	for (done = 0; done < op->len && !left; done += n, pos += n) {
		n = min_t(u64, op->len - done, PAGE_SIZE - offset_in_page(pos));
		if (op->opcode != RMAWIN_OP_GET && copy_from_user(buf, origin + done, n))
			break;
		kaddr = kmap_local_page(win->pages[pos >> PAGE_SHIFT]);
		if (op->opcode != RMAWIN_OP_GET)
			memcpy(kaddr + offset_in_page(pos), buf, n);
		else
			memcpy(buf, kaddr + offset_in_page(pos), n);
		kunmap_local(kaddr);
		if (op->opcode == RMAWIN_OP_GET)
			left = copy_to_user(origin + done, buf, n);
	}
	kfree(buf);
	return done < op->len || left ? -EFAULT : 0;
}

/* A notified put on this rank's own window: the copy, then the queue. */
int rmawin_put_notify_local(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
			    const struct rmawin_target *t)
{
	return rmawin_rma_local(ep, op, t) ?: rmawin_notify_queue(ep, ep->group->rank, op);
}

/*
 * Local scatter list for bytes [pos, pos + *n) of the origin; shortens *n
 * to what max_sge entries cover.
 */
static u32 rmawin_req_sges(struct rmawin_req *req, u64 origin, u64 pos, u64 *n,
			   struct ib_sge *sge, u32 max_sge)
{
	struct rmawin_group *grp = req->win->ep->group;
	u32 lkey = req->win->ep->pd->local_dma_lkey, k;
	struct rmawin_rcache_ent *ent = req->rma.ent;
	u64 left = *n, o, chunk;

	if (req->rma.bounce >= 0) {
		sge[0].addr = grp->bounce_dma[req->rma.bounce] + pos;
		sge[0].length = *n;
		sge[0].lkey = lkey;
		return 1;
	}
	for (k = 0; k < max_sge && left; k++) {
		o = origin + pos + (*n - left);
		chunk = min_t(u64, left, PAGE_SIZE - offset_in_page(o));
		sge[k].addr = ent->dma[(o >> PAGE_SHIFT) - ent->start] + offset_in_page(o);
		sge[k].length = chunk;
		sge[k].lkey = lkey;
		left -= chunk;
	}
	*n -= left;
	return k;
}

/*
 * Remote region, address and room left in it for window offset @off,
 * which the caller checked is inside the window.  The descriptor's
 * regions cover the window exactly (rmawin_desc_start()), so one is
 * always found; the bound is checked all the same.
 */
int rmawin_remote_addr(const struct rmawin_remote *r, u64 off, u64 *addr, u32 *rkey,
		       u64 *room)
{
	/* most windows are one region: no division for them */
	u64 i = r->nmrs == 1 ? 0 : div64_u64(off + r->page_off, r->chunk);
	u64 start = i ? i * r->chunk - r->page_off : 0;
	u64 end = min(r->length, (i + 1) * r->chunk - r->page_off);

	if (i >= r->nmrs || off >= end)
		return -EIO;
	*addr = r->mrs[i].iova + (off - start);
	*rkey = r->mrs[i].rkey;
	*room = end - off;
	return 0;
}

bool rmawin_sq_room(struct rmawin_peer *peer)
{
	return atomic_read(&peer->sq_data) < peer->grp->sq_data_max ||
	       rmawin_peer_err(peer);
}

/**
 * rmawin_peer_err() - may operations still go to @peer?
 * @peer: a member
 *
 * After a wait for room on its queue pair: a dead device (whose removal
 * waits for the endpoint lock the waiter holds) or a failed peer ends the
 * wait as surely as room does.
 *
 * Return: 0; -ENODEV; the peer's error, or -ECONNRESET.
 */
int rmawin_peer_err(struct rmawin_peer *peer)
{
	if (READ_ONCE(peer->grp->ep->dev->dead))
		return -ENODEV;
	if (READ_ONCE(peer->state) != RMAWIN_PEER_CONNECTED)
		return peer->error ?: -ECONNRESET;
	return 0;
}

/*
 * Post one work request of @req once its peer's send queue has room; it
 * counts in the request and in the queue until its completion.  RDMA
 * writes from the poller overlap (rmawin_post_send()).
 */
static int rmawin_req_post_one(struct rmawin_req *req, const struct ib_send_wr *wr)
{
	struct rmawin_peer *peer = req->peer;
	int ret;

	if (rmawin_wait_event(req->win->ep, rmawin_sq_room(peer)))
		return -EINTR;
	ret = rmawin_peer_err(peer);
	if (ret)
		return ret;
	atomic_inc(&req->pending);
	atomic_inc(&peer->sq_data);
	ret = rmawin_post_send(peer->qp, wr, wr->opcode == IB_WR_RDMA_WRITE);
	if (ret) {
		atomic_dec(&peer->sq_data);
		atomic_dec(&req->pending);
	}
	return ret;
}

/*
 * A small put, its data inline in its work requests (usually one; one per
 * region it spans): copied from the user here, never bounced or pinned.
 */
static int rmawin_req_post_inline(struct rmawin_req *req, const struct rmawin_op_desc *op,
				  const struct rmawin_target *t)
{
	u8 data[RMAWIN_INLINE_MAX];
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	u64 pos, n, room;
	int ret;

	if (rmawin_copy_from_user(data, u64_to_user_ptr(op->origin), op->len))
		return -EFAULT;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;
	wr.wr.wr_cqe = &req->cqe;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	sge.lkey = 0;	/* inline: the device reads the kernel address itself */
	for (pos = 0; pos < op->len; pos += n) {
		ret = rmawin_remote_addr(t->remote, t->off + pos, &wr.remote_addr, &wr.rkey,
					 &room);
		if (ret)
			return ret;
		n = min(op->len - pos, room);
		sge.addr = (uintptr_t)(data + pos);
		sge.length = n;
		ret = rmawin_req_post_one(req, &wr.wr);
		if (ret)
			return ret;
	}
	return 0;
}

/* Post the work requests for bytes [@from, @to) of the operation. */
static int rmawin_req_post(struct rmawin_req *req, const struct rmawin_op_desc *op,
			   const struct rmawin_target *t, u64 from, u64 to)
{
	struct rmawin_peer *peer = req->peer;
	struct ib_sge sge[16];
	u32 max_sge = min_t(u32, ARRAY_SIZE(sge), op->opcode != RMAWIN_OP_GET ?
			    peer->qp->max_write_sge : peer->qp->max_read_sge);
	struct ib_rdma_wr wr = {};
	u64 pos, n, room;
	int ret;

	wr.wr.opcode = op->opcode != RMAWIN_OP_GET ? IB_WR_RDMA_WRITE : IB_WR_RDMA_READ;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.wr_cqe = &req->cqe;
	wr.wr.sg_list = sge;
	for (pos = from; pos < to; pos += n) {
		ret = rmawin_remote_addr(t->remote, t->off + pos, &wr.remote_addr, &wr.rkey,
					 &room);
		if (ret)
			return ret;
		n = min(to - pos, room);
		wr.wr.num_sge = rmawin_req_sges(req, op->origin, pos, &n, sge, max_sge);
		ret = rmawin_req_post_one(req, &wr.wr);
		if (ret)
			return ret;
	}
	return 0;
}

/* Bounce buffers are freed by reaping: wait until there is something to reap. */
static bool rmawin_bounce_progress(struct rmawin_ep *ep, struct rmawin_peer *peer)
{
	return atomic_read(&ep->reapable) || READ_ONCE(ep->group->bounce_busy) != ~0UL ||
	       (peer && READ_ONCE(peer->state) != RMAWIN_PEER_CONNECTED) ||
	       READ_ONCE(ep->dev->dead);
}

/**
 * rmawin_bounce_take() - a bounce buffer, reaping finished operations to free some
 * @ep: the endpoint, locked
 * @peer: the peer the buffer is for, or NULL for this rank
 *
 * Context: process context; sleeps until one is free.
 * Return: the slot; -EINTR, -ENODEV, or the peer's error if it failed.
 */
int rmawin_bounce_take(struct rmawin_ep *ep, struct rmawin_peer *peer)
{
	int slot;

	lockdep_assert_held(&ep->lock);
	while ((slot = rmawin_bounce_get(ep->group)) < 0) {
		if (rmawin_wait_event(ep, rmawin_bounce_progress(ep, peer)))
			return -EINTR;
		if (peer && READ_ONCE(peer->state) != RMAWIN_PEER_CONNECTED)
			return peer->error ?: -ECONNRESET;
		if (READ_ONCE(ep->dev->dead))
			return -ENODEV;
		rmawin_ep_reap(ep);
	}
	return slot;
}

/* Take a bounce buffer; a put's data goes into it. */
static int rmawin_req_bounce(struct rmawin_req *req, const struct rmawin_op_desc *op)
{
	struct rmawin_group *grp = req->win->ep->group;
	int slot = rmawin_bounce_take(req->win->ep, req->peer);

	if (slot < 0)
		return slot;
	req->rma.bounce = slot;
	if (op->opcode != RMAWIN_OP_GET) {
		if (copy_from_user(grp->bounce_mem[slot], u64_to_user_ptr(op->origin), op->len))
			return -EFAULT;
		ib_dma_sync_single_for_device(grp->ibdev, grp->bounce_dma[slot], op->len,
					      DMA_TO_DEVICE);
	}
	return 0;
}

/*
 * Put and get to a peer: a small origin goes through a bounce buffer, a
 * large one through the registration cache.  The poller never pins: a
 * large origin the cache does not have is its -EFAULT.
 */
int rmawin_rma_prep(struct rmawin_req *req, const struct rmawin_op_desc *op,
		    const struct rmawin_target *t)
{
	bool hit = false;

	if (op->opcode != RMAWIN_OP_GET && op->len <= req->peer->max_inline) {
		req->rma.inl = true;
		return 0;
	}
	if (op->len <= RMAWIN_BOUNCE_SIZE)
		return rmawin_req_bounce(req, op);
	req->rma.ent = rmawin_rcache_get(&req->win->ep->group->rcache, op->origin, op->len,
					 op->opcode == RMAWIN_OP_GET, t->ring, &hit);
	if (IS_ERR(req->rma.ent)) {
		int ret = PTR_ERR(req->rma.ent);

		req->rma.ent = NULL;
		return ret;
	}
	req->rma.pin = !hit;
	return 0;
}

/* Pages this many at a time, each piece sent while the next is pinned. */
#define RMAWIN_PIN_CHUNK	256

/*
 * Post a put or get.  A large origin the cache did not have is pinned a
 * piece at a time, each piece sent at once, so that pinning overlaps the
 * transfer.
 */
int rmawin_rma_issue(struct rmawin_req *req, const struct rmawin_op_desc *op,
		     const struct rmawin_target *t)
{
	struct rmawin_rcache_ent *e = req->rma.ent;
	u64 posted = 0, ready;
	unsigned long upto;
	int ret;

	if (req->rma.inl)
		return rmawin_req_post_inline(req, op, t);
	if (!req->rma.pin)
		return rmawin_req_post(req, op, t, 0, op->len);
	while (posted < op->len) {
		upto = min(e->npages, e->pinned + RMAWIN_PIN_CHUNK);
		ret = rmawin_rcache_pin(e, upto);
		if (ret)
			return ret;
		ready = min_t(u64, op->len, (u64)upto * PAGE_SIZE - offset_in_page(op->origin));
		ret = rmawin_req_post(req, op, t, posted, ready);
		if (ret)
			return ret;
		posted = ready;
	}
	return 0;
}

/* The data, then the notification on the same queue pair: RC keeps the order. */
int rmawin_put_notify_issue(struct rmawin_req *req, const struct rmawin_op_desc *op,
			    const struct rmawin_target *t)
{
	return rmawin_rma_issue(req, op, t) ?: rmawin_notify_send(req->peer, op);
}

/* A finished put or get: a bounced get's data to its origin, then let go. */
void rmawin_rma_release(struct rmawin_req *req, bool copy_out)
{
	struct rmawin_group *grp = req->win->ep->group;
	int slot = req->rma.bounce;

	if (slot < 0)
		goto out;
	if (copy_out && !req->status && req->opcode == RMAWIN_OP_GET) {
		ib_dma_sync_single_for_cpu(grp->ibdev, grp->bounce_dma[slot], req->len,
					   DMA_FROM_DEVICE);
		if (copy_to_user(req->uaddr, grp->bounce_mem[slot], req->len))
			req->status = -EFAULT;
	}
	rmawin_bounce_put(grp, slot);
	req->rma.bounce = -1;
out:
	if (req->rma.ent)
		rmawin_rcache_put(req->rma.ent, false);
	req->rma.ent = NULL;
}
