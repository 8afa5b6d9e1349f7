// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: large accumulates through the target's inbox.
 *
 * The target's kernel applies an accumulate wherever the elements are in
 * its memory, and a control message holds only RMAWIN_ACC_FRAG bytes of
 * them (acc.c).  An accumulate or get_accumulate of at least acc_bulk_min
 * bytes travels instead in chunks of rmawin_bulk_chunk() bytes (64 KiB in
 * groups of up to 8 ranks, less in larger ones): each an RDMA WRITE from
 * the target's chunk of this origin's *outbox* into this origin's chunk of
 * the target's *inbox* (none for NO_OP), then an ACC_BULK message on the
 * same queue pair, which the target therefore handles after the data is
 * there, and answers as it answers a fragment.  A get_accumulate's target
 * leaves the previous values in the same chunk, and the origin reads them
 * back into its outbox with an RDMA READ once answered.  A 64 KiB
 * accumulate is one write and one message each way instead of 147
 * fragments.
 *
 * One chunk per origin and target is in flight at a time: the inbox chunk
 * and the outbox chunk are that pair's alone, and the origin writes there
 * again only once the target answered (it is done with its inbox chunk),
 * its own write or read completed (the device is done with the outbox
 * chunk) and it copied the previous values out.
 *
 * Inbox and outbox: one chunk per rank each, kernel pages charged to the
 * process, made with the group's first window; the inbox registered for
 * remote reads and writes and told of in every window descriptor
 * (desc.c), the outbox for the device's local writes only.  A group of
 * more than RMAWIN_BULK_MAX_RANKS ranks, or one the device cannot map in
 * one region, has neither: its accumulates take the fragments.  A member
 * can write and read any chunk of an inbox (one key covers it): it can
 * change what another member's accumulate adds to our window while it is
 * in flight, and see elements on their way to or from our windows, no
 * more than it could do to the windows themselves (security.rst).  What
 * the target reads from the inbox are elements, never lengths or offsets.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/random.h>

#include "ops.h"

static unsigned int acc_bulk_min = RMAWIN_BULK_MIN;
module_param(acc_bulk_min, uint, 0644);
MODULE_PARM_DESC(acc_bulk_min,
		 "Plain accumulates of this many bytes or more go through the target's inbox (0: none)");

/*
 * Make @buf: @npages zeroed kernel pages charged to the process, mapped
 * for the kernel and the device, in one region registered for @access.
 */
static int rmawin_kbuf_setup(struct rmawin_group *grp, struct rmawin_inbox *buf, u32 npages,
			     int access)
{
	struct rmawin_ep *ep = grp->ep;
	struct ib_mr *mr;
	int ret, nents;
	u32 i;

	buf->pages = kvcalloc(npages, sizeof(*buf->pages), GFP_KERNEL_ACCOUNT);
	if (!buf->pages)
		return -ENOMEM;
	for (i = 0; i < npages; i++) {
		buf->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!buf->pages[i])
			return -ENOMEM;
		buf->npages = i + 1;
	}
	buf->va = vmap(buf->pages, npages, VM_MAP, PAGE_KERNEL);
	if (!buf->va)
		return -ENOMEM;
	ret = sg_alloc_table_from_pages(&buf->sgt, buf->pages, npages, 0,
					(unsigned long)npages << PAGE_SHIFT, GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret;
	ret = ib_dma_map_sgtable_attrs(grp->ibdev, &buf->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		goto err_sgt;
	mr = ib_alloc_mr(ep->pd, IB_MR_TYPE_MEM_REG, rmawin_mr_entries(ep));
	if (IS_ERR(mr)) {
		ret = PTR_ERR(mr);
		goto err_unmap;
	}
	atomic_inc(&rmawin_stats.mrs);
	/* the key byte of the rkey is ours to choose: make it unpredictable */
	ib_update_fast_reg_key(mr, get_random_u8());
	nents = ib_map_mr_sg(mr, buf->sgt.sgl, buf->sgt.nents, NULL, PAGE_SIZE);
	ret = nents == buf->sgt.nents ? 0 : nents < 0 ? nents : -EINVAL;
	if (!ret)
		ret = rmawin_reg_mrs(grp, &mr, 1, access);
	if (ret) {
		ib_dereg_mr(mr);
		atomic_dec(&rmawin_stats.mrs);
		goto err_unmap;
	}
	/* the pages before the region: a message finds them once it finds it */
	smp_store_release(&buf->mr, mr);
	return 0;

err_unmap:
	ib_dma_unmap_sgtable_attrs(grp->ibdev, &buf->sgt, DMA_BIDIRECTIONAL, 0);
err_sgt:
	sg_free_table(&buf->sgt);
	memset(&buf->sgt, 0, sizeof(buf->sgt));
	return ret;
}

/* Let go of @buf, whatever rmawin_kbuf_setup() made of it. */
static void rmawin_kbuf_free(struct rmawin_group *grp, struct rmawin_inbox *buf)
{
	u32 i;

	if (buf->mr) {
		ib_dereg_mr(buf->mr);
		atomic_dec(&rmawin_stats.mrs);
		ib_dma_unmap_sgtable_attrs(grp->ibdev, &buf->sgt, DMA_BIDIRECTIONAL, 0);
		buf->mr = NULL;
	}
	sg_free_table(&buf->sgt);
	memset(&buf->sgt, 0, sizeof(buf->sgt));
	if (buf->va)
		vunmap(buf->va);
	buf->va = NULL;
	for (i = 0; i < buf->npages; i++)
		__free_page(buf->pages[i]);
	kvfree(buf->pages);
	buf->pages = NULL;
	buf->npages = 0;
}

/**
 * rmawin_inbox_setup() - make the group's inbox and outbox, if it has none
 * @grp: the group, every peer connected
 *
 * Context: process context, in a collective call; sleeps.
 * Return: 0 (also for a group that has no inbox), or -ENOMEM, or the
 * registration's error.
 */
int rmawin_inbox_setup(struct rmawin_group *grp)
{
	u32 npages = grp->nranks * (rmawin_bulk_chunk(grp->nranks) >> PAGE_SHIFT);
	int ret;

	BUILD_BUG_ON(RMAWIN_BULK_CHUNK_MIN % PAGE_SIZE);
	if (grp->inbox.mr || grp->nranks < 2 || grp->nranks > RMAWIN_BULK_MAX_RANKS ||
	    npages > rmawin_chunk_pages(grp->ep))
		return 0;
	/* the outbox first: an inbox (what the descriptors tell of) means both */
	ret = rmawin_kbuf_setup(grp, &grp->outbox, npages, IB_ACCESS_LOCAL_WRITE);
	if (!ret)
		ret = rmawin_kbuf_setup(grp, &grp->inbox, npages, IB_ACCESS_LOCAL_WRITE |
					IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ);
	if (ret)
		rmawin_inbox_free(grp);
	return ret;
}

/**
 * rmawin_inbox_free() - let go of the group's inbox and outbox
 * @grp: the group, whose queue pairs are gone (nothing writes them any
 *	more) or whose inbox was never registered
 */
void rmawin_inbox_free(struct rmawin_group *grp)
{
	rmawin_kbuf_free(grp, &grp->inbox);
	rmawin_kbuf_free(grp, &grp->outbox);
}

/**
 * rmawin_bulk_wanted() - does an accumulate go through the target's inbox?
 * @op: the descriptor, checked
 * @t: its target
 *
 * Return: true for an accumulate or get_accumulate of at least
 * acc_bulk_min bytes (the module parameter, RMAWIN_BULK_MIN unless set; 0:
 * never) to a peer whose descriptor of the window tells of an inbox, when
 * we have an outbox (a peer's device may map more pages than ours).
 */
bool rmawin_bulk_wanted(const struct rmawin_op_desc *op, const struct rmawin_target *t)
{
	u32 min = READ_ONCE(acc_bulk_min);

	return (op->opcode == RMAWIN_OP_ACC || op->opcode == RMAWIN_OP_GET_ACC) && min &&
	       op->len >= min && !t->epoch && t->remote && t->remote->has_inbox &&
	       t->win->ep->group->outbox.mr;
}

/* Where @peer's chunk starts, in our inbox (its chunks to us) or our outbox (ours to it). */
static u64 rmawin_chunk_at(const struct rmawin_peer *peer)
{
	return (u64)peer->rank * rmawin_bulk_chunk(peer->grp->nranks);
}

/* Our write to or read from a peer's inbox completed. */
static void rmawin_bulk_rdma_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmawin_peer *peer = container_of(wc->wr_cqe, struct rmawin_peer, bulk.cqe);

	atomic_dec(&peer->sq_data);
	/* the QP is in error now: the request fails with the peer */
	if (wc->status != IB_WC_SUCCESS)
		rmawin_peer_lost(peer);
	WRITE_ONCE(peer->bulk.busy, false);
	wake_up_all(&peer->grp->ep->wq);
}

static bool rmawin_peer_gone(struct rmawin_peer *peer)
{
	return rmawin_peer_err(peer);
}

/* May we post to our chunk of the peer's inbox again? */
static bool rmawin_bulk_idle(struct rmawin_peer *peer)
{
	return (!READ_ONCE(peer->bulk.busy) && !READ_ONCE(peer->bulk.answering) &&
		rmawin_sq_room(peer)) || rmawin_peer_gone(peer);
}

/*
 * Hand bytes [@start, @start + @len) of @buf to the CPU (@cpu) or back to
 * the device, for a device whose DMA is not coherent (a software device's
 * is no DMA).
 */
static void rmawin_kbuf_sync(struct rmawin_group *grp, struct rmawin_inbox *buf, u64 start,
			     u32 len, bool cpu)
{
	u64 end = start + len, pos = 0, from, to;
	struct scatterlist *sg;
	dma_addr_t addr;
	unsigned int i;

	/* no walk of the list on every chunk for syncs that do nothing */
	if (ib_uses_virt_dma(grp->ibdev))
		return;
	for_each_sgtable_dma_sg(&buf->sgt, sg, i) {
		from = max(start, pos);
		to = min(end, pos + sg_dma_len(sg));
		addr = sg_dma_address(sg) + (from - pos);
		pos += sg_dma_len(sg);
		if (from >= to)
			continue;
		if (cpu)
			ib_dma_sync_single_for_cpu(grp->ibdev, addr, to - from, DMA_BIDIRECTIONAL);
		else
			ib_dma_sync_single_for_device(grp->ibdev, addr, to - from,
						      DMA_BIDIRECTIONAL);
		if (pos >= end)
			break;
	}
}

/*
 * Write (@read false) or read bytes [0, @n) of our chunk of the peer's
 * inbox from or into the peer's chunk of our outbox.  A write's bytes are
 * @req's at @done; a read's are the caller's to copy out once complete.
 */
static int rmawin_bulk_rdma(struct rmawin_req *req, const struct rmawin_target *t,
			    u64 done, u32 n, bool read)
{
	struct rmawin_ep *ep = req->win->ep;
	struct rmawin_group *grp = ep->group;
	struct rmawin_peer *peer = req->peer;
	u64 at = rmawin_chunk_at(peer);
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	int ret;

	if (rmawin_wait_event(ep, rmawin_bulk_idle(peer)))
		return -EINTR;
	ret = rmawin_peer_err(peer);
	if (ret)
		return ret;
	if (!read) {
		memcpy(grp->outbox.va + at, req->acc.data + done, n);
		rmawin_kbuf_sync(grp, &grp->outbox, at, n, false);
	}
	sge.addr = grp->outbox.mr->iova + at;
	sge.length = n;
	sge.lkey = grp->outbox.mr->lkey;
	wr.wr.opcode = read ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.wr_cqe = &peer->bulk.cqe;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.remote_addr = t->remote->inbox + (u64)grp->rank * rmawin_bulk_chunk(grp->nranks);
	wr.rkey = t->remote->inbox_rkey;
	peer->bulk.cqe.done = rmawin_bulk_rdma_done;
	WRITE_ONCE(peer->bulk.busy, true);
	atomic_inc(&peer->sq_data);
	ret = rmawin_post_send(peer->qp, &wr.wr, false);
	if (ret) {
		atomic_dec(&peer->sq_data);
		WRITE_ONCE(peer->bulk.busy, false);
	}
	return ret;
}

/*
 * A get_accumulate's chunk at @done was answered: read the previous values
 * the target left in our chunk of its inbox.
 */
static int rmawin_bulk_fetch(struct rmawin_req *req, const struct rmawin_target *t,
			     u64 done, u32 n)
{
	struct rmawin_ep *ep = req->win->ep;
	struct rmawin_group *grp = ep->group;
	struct rmawin_peer *peer = req->peer;
	u64 at = rmawin_chunk_at(peer);
	int ret;

	ret = rmawin_bulk_rdma(req, t, done, n, true);
	if (ret)
		return ret;
	/*
	 * The outbox chunk is ours again once the read completed: the device
	 * completes it, or the peer's failure flushes it within the
	 * transport's retry time.  A fatal signal stops waiting for the
	 * network, not for that.
	 */
	if (rmawin_wait_event(ep, !READ_ONCE(peer->bulk.busy))) {
		wait_event(ep->wq, !READ_ONCE(peer->bulk.busy));
		return -EINTR;
	}
	ret = rmawin_peer_err(peer);
	if (ret)
		return ret;
	rmawin_kbuf_sync(grp, &grp->outbox, at, n, true);
	memcpy(req->acc.result + done, grp->outbox.va + at, n);
	return 0;
}

/**
 * rmawin_bulk_issue() - send an accumulate through the target's inbox
 * @req: the request, with its id, its data copied in
 * @t: its target, rmawin_bulk_wanted()
 * @m: a message buffer, its window, op and type filled in
 *
 * Context: process context, endpoint lock held; sleeps for the chunk ahead
 * of each one and for room in the send queue; a
 * get_accumulate's for each chunk's answer and previous values.
 * Return: 0 or a negative errno; the request then completes with it.
 */
int rmawin_bulk_issue(struct rmawin_req *req, const struct rmawin_target *t,
		      struct rmawin_wire_acc *m)
{
	struct rmawin_peer *peer = req->peer;
	struct rmawin_ep *ep = req->win->ep;
	u32 chunk = rmawin_bulk_chunk(ep->group->nranks), n;
	u64 done;
	int ret = 0;

	req->acc.bulk = true;
	for (done = 0; done < req->len && !ret; done += n) {
		n = min_t(u64, req->len - done, chunk);
		/* NO_OP: nothing to write, the target only reads the window */
		ret = m->acc_op == RMAWIN_ACC_NO_OP ? 0 : rmawin_bulk_rdma(req, t, done, n, false);
		if (ret)
			break;
		m->offset = cpu_to_le64(t->off + done);
		m->len = cpu_to_le32(n);
		m->res_off = cpu_to_le32(done);
		/* before the message: its reply may beat our return */
		WRITE_ONCE(peer->bulk.answering, true);
		ret = rmawin_acc_send_part(req, RMAWIN_MSG_ACC_BULK, m, sizeof(*m), done, n);
		if (ret) {
			WRITE_ONCE(peer->bulk.answering, false);
			break;
		}
		if (!req->acc.result)
			continue;
		if (rmawin_wait_peers(ep, !READ_ONCE(peer->bulk.answering) ||
				      rmawin_peer_gone(peer)))
			return -EINTR;
		/* a failed chunk (the request has its status) leaves nothing to read */
		ret = READ_ONCE(req->status) ? 0 : rmawin_bulk_fetch(req, t, done, n);
	}
	return ret < 0 ? ret : 0;
}

/**
 * rmawin_bulk_answered() - the target answered our chunk in flight to it
 * @peer: the target
 *
 * Context: the reply's handler, under the group's acc_reqs lock.
 */
void rmawin_bulk_answered(struct rmawin_peer *peer)
{
	WRITE_ONCE(peer->bulk.answering, false);
}

/* Is @m a chunk an honest origin could send us?  The window is @win. */
static bool rmawin_bulk_msg_ok(const struct rmawin_wire_acc *m, const struct rmawin_win *win,
			       u32 chunk)
{
	u32 n = le32_to_cpu(m->len), size = rmawin_acc_size(m->datatype);
	u64 off = le64_to_cpu(m->offset), end;

	if ((m->opcode != RMAWIN_OP_ACC && m->opcode != RMAWIN_OP_GET_ACC) || m->epoch ||
	    !rmawin_acc_valid(m->acc_op, m->datatype))
		return false;
	if (!n || n > chunk || n % size || le32_to_cpu(m->res_off) % chunk)
		return false;
	return !check_add_overflow(off, (u64)n, &end) && end <= win->length;
}

/**
 * rmawin_acc_bulk_recv() - apply a peer's chunk from our inbox to our window
 * @peer: the origin
 * @id: its request id, echoed in the reply
 * @p: struct rmawin_wire_acc, no data
 * @len: payload bytes
 *
 * Applied RMAWIN_ACC_FRAG bytes at a time, each under the window's
 * accumulate lock, as a fragment is: MPI's atomicity is per element.  A
 * get_accumulate's previous values take the place of its elements in the
 * inbox, where the origin reads them once answered.
 *
 * Context: the receive completion's softirq, or the receive work (recv.c).
 * Return: 0, or -EPROTO for a chunk no honest origin sends (and for any
 * chunk when we have no inbox).
 */
int rmawin_acc_bulk_recv(struct rmawin_peer *peer, u32 id, const void *p, u16 len)
{
	const struct rmawin_wire_acc *m = p;
	struct rmawin_group *grp = peer->grp;
	struct rmawin_ep *ep = grp->ep;
	struct rmawin_wire_acc_reply r = {};
	u64 old[RMAWIN_ACC_FRAG / sizeof(u64)];
	u8 *data;
	struct rmawin_win *win;
	u32 n = le32_to_cpu(m->len), chunk = rmawin_bulk_chunk(grp->nranks), k, done;
	u64 at = rmawin_chunk_at(peer);
	bool ok;

	/* a chunk before our descriptor told of the inbox: nobody honest sends it */
	if (!smp_load_acquire(&grp->inbox.mr))
		return -EPROTO;
	data = grp->inbox.va + at;
	xa_lock_bh(&ep->wins);
	win = xa_load(&ep->wins, le32_to_cpu(m->win));
	ok = win && rmawin_bulk_msg_ok(m, win, chunk);
	if (ok)
		rmawin_kbuf_sync(grp, &grp->inbox, at, n, true);
	for (done = 0; ok && done < n; done += k) {
		k = min_t(u32, n - done, RMAWIN_ACC_FRAG);
		rmawin_acc_apply_win(win, m->opcode, m->acc_op, m->datatype,
				     le64_to_cpu(m->offset) + done, k, data + done,
				     m->opcode == RMAWIN_OP_GET_ACC ? old : NULL);
		if (m->opcode == RMAWIN_OP_GET_ACC)
			memcpy(data + done, old, k);
	}
	if (ok)
		rmawin_kbuf_sync(grp, &grp->inbox, at, n, false);
	xa_unlock_bh(&ep->wins);
	if (!ok)
		return -EPROTO;
	r.res_off = m->res_off;
	return rmawin_msg_send_async(peer, RMAWIN_MSG_ACC_REPLY, id, &r, sizeof(r));
}
