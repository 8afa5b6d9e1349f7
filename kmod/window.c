// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: windows.  A window is user memory, pinned or allocated
 * (winmem.c), registered with fast registration in regions of at most the
 * device's page-list length, and described to every member of the group
 * (desc.c): length, disp_unit, and per region the iova and rkey.  Only
 * members ever learn the keys.  This file registers windows and runs
 * their life: creation, lookup, free.
 *
 * Creation is collective and ordered, so a handle is a sequence number
 * that means the same window on every rank.  A rank whose creation fails
 * still sends a descriptor, marked failed, so nobody waits forever.
 */
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/uaccess.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/module.h>

#include "window.h"

static unsigned int max_windows = 1024;
module_param(max_windows, uint, 0644);
MODULE_PARM_DESC(max_windows, "Windows one endpoint may have at once");

/* Largest page size a window is registered with: a transparent huge page. */
#define RMAWIN_MAX_BLOCK_SHIFT	PMD_SHIFT

u32 rmawin_chunk_pages(struct rmawin_ep *ep)
{
	/* a device that reports 0 still maps one page per region */
	return clamp_t(u32, ep->dev->ibdev->attrs.max_fast_reg_page_list_len, 1, 512);
}

/*
 * Entries a region's MR is allocated with.  rxe in 6.1 keeps an MR's pages
 * in maps of 256 and, when a transfer ends on the last page of a full last
 * map, steps to the next map and reads its pointer, one past the array
 * (rxe_mr_copy(); gone with 6.4's xarray).  Our full regions are 512 pages,
 * two full maps: KASAN reports the read on every put or get that ends at a
 * region's end.  One spare entry gives rxe a third map, never used.  No
 * other device needs it, and a hardware device may refuse more entries
 * than its page-list length.
 */
u32 rmawin_mr_entries(struct rmawin_ep *ep)
{
	u32 n = rmawin_chunk_pages(ep);

	return ep->dev->ibdev->ops.driver_id == RDMA_DRIVER_RXE ? n + 1 : n;
}

/*
 * The largest block, up to RMAWIN_MAX_BLOCK_SHIFT, that the window's pages
 * fill whole: wherever the physical pages stop being contiguous, the user
 * address and the frame number are both block-aligned, and the first page
 * sits at the same place within a block in both.  Transparent huge pages
 * give 2 MiB; a region then registers 512 times as much memory (rxe's
 * max_fast_reg_page_list_len is 512 pages), and a 256 MiB window takes
 * one region instead of 128.
 */
static u32 rmawin_win_block_shift(struct rmawin_win *win)
{
	u64 cap = win->ep->dev->ibdev->attrs.page_size_cap;
	unsigned long vpn = win->base >> PAGE_SHIFT, k, pfn, prev = 0;
	unsigned long m = 1UL << (RMAWIN_MAX_BLOCK_SHIFT - PAGE_SHIFT);
	u32 shift;

	for (k = 0; k < win->npages; k++) {
		pfn = page_to_pfn(win->pages[k]);
		if (!k)
			m |= pfn - vpn;
		else if (pfn != prev + 1)
			m |= (vpn + k) | pfn;
		prev = pfn;
	}
	shift = PAGE_SHIFT + __ffs(m);
	while (shift > PAGE_SHIFT && !(cap & BIT_ULL(shift)))
		shift--;
	return shift;
}

/* Offset of the window's start within its first block. */
u64 rmawin_win_block_off(const struct rmawin_win *win)
{
	return win->base & (BIT_ULL(win->block_shift) - 1);
}

u64 rmawin_win_chunk_bytes(const struct rmawin_win *win)
{
	return (u64)rmawin_chunk_pages(win->ep) << win->block_shift;
}

static int rmawin_chunk_map(struct rmawin_win *win, struct rmawin_mr_chunk *c, u32 i)
{
	struct ib_device *ibdev = win->ep->dev->ibdev;
	u64 chunk = rmawin_win_chunk_bytes(win), boff = rmawin_win_block_off(win);
	u32 off = offset_in_page(win->base);
	/* bytes [start, end) of the window; pages counted from the first one */
	u64 start = i ? i * chunk - boff : 0;
	u64 end = min_t(u64, win->length, (i + 1) * chunk - boff);
	unsigned long first = (start + off) >> PAGE_SHIFT;
	unsigned long last = DIV_ROUND_UP(end + off, PAGE_SIZE);
	int ret, nents;

	ret = sg_alloc_table_from_pages(&c->sgt, win->pages + first, last - first,
					i ? 0 : off, end - start, GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret;
	ret = ib_dma_map_sgtable_attrs(ibdev, &c->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret)
		goto err_free_sgt;
	c->mr = ib_alloc_mr(win->ep->pd, IB_MR_TYPE_MEM_REG, rmawin_mr_entries(win->ep));
	if (IS_ERR(c->mr)) {
		ret = PTR_ERR(c->mr);
		c->mr = NULL;
		goto err_unmap;
	}
	atomic_inc(&rmawin_stats.mrs);
	/* the key byte of the rkey is ours to choose: make it unpredictable */
	ib_update_fast_reg_key(c->mr, get_random_u8());
	nents = ib_map_mr_sg(c->mr, c->sgt.sgl, c->sgt.nents, NULL,
			     BIT(win->block_shift));
	if (nents != c->sgt.nents) {
		ret = nents < 0 ? nents : -EINVAL;
		goto err_dereg;
	}
	return 0;

err_dereg:
	ib_dereg_mr(c->mr);
	c->mr = NULL;
	atomic_dec(&rmawin_stats.mrs);
err_unmap:
	ib_dma_unmap_sgtable_attrs(ibdev, &c->sgt, DMA_BIDIRECTIONAL, 0);
err_free_sgt:
	sg_free_table(&c->sgt);
	return ret;
}

static void rmawin_chunk_unmap(struct rmawin_win *win, struct rmawin_mr_chunk *c)
{
	if (!c->mr)
		return;
	ib_dereg_mr(c->mr);
	atomic_dec(&rmawin_stats.mrs);
	ib_dma_unmap_sgtable_attrs(win->ep->dev->ibdev, &c->sgt, DMA_BIDIRECTIONAL, 0);
	sg_free_table(&c->sgt);
	c->mr = NULL;
}

/*
 * A batch of registrations: the last work request is signaled, the others
 * complete only if they fail (and the ones after them are then flushed).
 * The queue pair completes in order, so the last one's completion comes
 * after every other: only it ends the wait.
 */
struct rmawin_reg_wait {
	struct ib_cqe cqe;
	struct ib_cqe last;
	struct completion done;
	struct rmawin_group *grp;
	u32 n;
	u32 early;
	int status;
};

static void rmawin_reg_status(struct rmawin_reg_wait *w, struct ib_wc *wc)
{
	/* a flush: the queue pair's peer failed meanwhile, which is no device error */
	if (wc->status != IB_WC_SUCCESS && !w->status)
		w->status = rmawin_wc_errno(wc->status);
}

static void rmawin_reg_early_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmawin_reg_wait *w = container_of(wc->wr_cqe, struct rmawin_reg_wait, cqe);

	w->early++;
	rmawin_reg_status(w, wc);
}

static void rmawin_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmawin_reg_wait *w = container_of(wc->wr_cqe, struct rmawin_reg_wait, last);

	rmawin_reg_status(w, wc);
	/* the unsignaled ones that succeeded will never complete */
	rmawin_scq_settle(&w->grp->scq, w->n - 1 - w->early);
	complete(&w->done);
}

/* Any connected peer's QP will do: registration is local to our device. */
static struct rmawin_peer *rmawin_reg_peer(struct rmawin_group *grp)
{
	u32 i;

	for (i = 0; i < grp->nranks; i++)
		if (i != grp->rank && READ_ONCE(grp->peers[i].state) == RMAWIN_PEER_CONNECTED)
			return &grp->peers[i];
	return NULL;
}

/* how long a killed registration waits for its queue pair before failing its peer */
#define RMAWIN_REG_GRACE	(2 * HZ)

/*
 * Wait for a batch posted on @peer's queue pair.  The work requests point
 * at the regions, the pages under them and @w: nothing may go before they
 * complete, so a fatal signal cannot simply leave.  They complete within
 * the device's time unless a send ahead of them on that queue pair is
 * retried for ever (rnr_retry 7) against a peer that stopped taking
 * messages.  So a killed caller waits a grace, then fails the peer and
 * puts its queue pair in the error state, which flushes them at once.
 * Context: endpoint lock held (the queue pair stays).
 * Return: 0, or -EINTR if a fatal signal came.
 */
static int rmawin_reg_wait(struct rmawin_peer *peer, struct rmawin_reg_wait *w)
{
	if (!wait_for_completion_killable(&w->done))
		return 0;
	if (!wait_for_completion_timeout(&w->done, RMAWIN_REG_GRACE)) {
		rmawin_ep_dbg(peer->grp->ep, "rank %u holds a registration: failed\n", peer->rank);
		rmawin_peer_cut_off(peer, -ETIMEDOUT);
		wait_for_completion(&w->done);
	}
	return -EINTR;
}

/**
 * rmawin_reg_mrs() - fast-register memory regions, and wait for it
 * @grp: the group, with a connected peer: its queue pair posts them
 * @mrs: the regions, mapped (ib_map_mr_sg())
 * @n: how many, at most RMAWIN_REG_BATCH
 * @access: IB_ACCESS_* they grant
 *
 * Context: process context; sleeps, killably (rmawin_reg_wait()).
 * Return: 0; -EINTR on a fatal signal; -ECONNRESET with no peer connected;
 * -ENOMEM; the post's error; the
 * peer's error (-EPROTO for one cut off, else -ECONNRESET) if it failed
 * while its queue pair held the registration, which then was flushed;
 * -EIO for a registration the device refused.
 */
int rmawin_reg_mrs(struct rmawin_group *grp, struct ib_mr **mrs, u32 n, int access)
{
	struct rmawin_peer *peer = rmawin_reg_peer(grp);
	struct rmawin_reg_wait w;
	struct ib_reg_wr *wrs;
	u32 i;
	int ret;

	if (!peer)
		return -ECONNRESET;
	if (!n || n > RMAWIN_REG_BATCH)
		return -EINVAL;
	/* not on the stack: a batch of work requests is over a kilobyte */
	wrs = kcalloc(n, sizeof(*wrs), GFP_KERNEL_ACCOUNT);
	if (!wrs)
		return -ENOMEM;
	w.cqe.done = rmawin_reg_early_done;
	w.last.done = rmawin_reg_done;
	init_completion(&w.done);
	w.grp = grp;
	w.n = n;
	w.early = 0;
	w.status = 0;
	for (i = 0; i < n; i++) {
		struct ib_reg_wr *wr = &wrs[i];

		wr->wr.opcode = IB_WR_REG_MR;
		wr->wr.wr_cqe = i + 1 < n ? &w.cqe : &w.last;
		wr->wr.next = i + 1 < n ? &wrs[i + 1].wr : NULL;
		wr->wr.send_flags = i + 1 < n ? 0 : IB_SEND_SIGNALED;
		wr->mr = mrs[i];
		wr->key = wr->mr->rkey;
		wr->access = access;
	}
	ret = rmawin_post_send(peer->qp, &wrs[0].wr, false);
	if (!ret)
		ret = rmawin_reg_wait(peer, &w);
	kfree(wrs);
	if (ret)
		return ret;
	if (w.status == -ECONNRESET)
		return READ_ONCE(peer->error) ?: -ECONNRESET;
	return w.status;
}

/* Register chunks [first, first + n) of the window. */
static int rmawin_reg_batch(struct rmawin_win *win, u32 first, u32 n)
{
	struct ib_mr *mrs[RMAWIN_REG_BATCH];
	u32 i;

	for (i = 0; i < n; i++)
		mrs[i] = win->chunks[first + i].mr;
	return rmawin_reg_mrs(win->ep->group, mrs, n,
			      IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			      IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC);
}

static void rmawin_win_unregister(struct rmawin_win *win)
{
	u32 i;

	for (i = 0; i < win->nchunks; i++)
		rmawin_chunk_unmap(win, &win->chunks[i]);
	kvfree(win->chunks);
	win->chunks = NULL;
	win->nchunks = 0;
}

static int rmawin_win_register_blocks(struct rmawin_win *win)
{
	u64 chunk = rmawin_win_chunk_bytes(win);
	u32 i, n;
	int ret;

	n = DIV64_U64_ROUND_UP(rmawin_win_block_off(win) + win->length, chunk);
	/* more regions than a peer accepts in a descriptor */
	if (n > RMAWIN_WIN_MAX_MRS)
		return -EFBIG;
	win->chunks = kvcalloc(n, sizeof(*win->chunks), GFP_KERNEL_ACCOUNT);
	if (!win->chunks)
		return -ENOMEM;
	/* only now: rmawin_win_unregister() walks them */
	win->nchunks = n;
	for (i = 0; i < win->nchunks; i++) {
		ret = rmawin_chunk_map(win, &win->chunks[i], i);
		if (ret)
			return ret;
	}
	for (i = 0; i < win->nchunks; i += n) {
		n = min_t(u32, RMAWIN_REG_BATCH, win->nchunks - i);
		ret = rmawin_reg_batch(win, i, n);
		if (ret)
			return ret;
	}
	return 0;
}

static int rmawin_win_register(struct rmawin_win *win)
{
	int ret;

	win->block_shift = rmawin_win_block_shift(win);
	ret = rmawin_win_register_blocks(win);
	/* a DMA mapping that does not keep the blocks (an IOMMU): pages, then */
	if (ret == -EINVAL && win->block_shift > PAGE_SHIFT) {
		rmawin_win_unregister(win);
		win->block_shift = PAGE_SHIFT;
		ret = rmawin_win_register_blocks(win);
	}
	rmawin_ep_dbg(win->ep, "window %u: %u regions of %u KiB pages\n", win->id,
		      win->nchunks, 1U << (win->block_shift - 10));
	return ret;
}

static void rmawin_win_destroy(struct rmawin_win *win)
{
	rmawin_win_reap(win, false);
	rmawin_atomic_win_free(win);
	rmawin_win_lock_free(win);
	rmawin_win_pscw_free(win);
	rmawin_win_unregister(win);
	rmawin_win_unpin(win);
	if (win->tbl)
		rmawin_table_free(win->ep->group, win->tbl);
	rmawin_count(win->ep, RMAWIN_CNT_WINDOWS, -1);
	kfree(win);
}

/* Pin and register locally; the error, if any, goes to the peers too. */
static int rmawin_win_setup(struct rmawin_win *win)
{
	int ret = 0;

	win->block_shift = PAGE_SHIFT;
	if (win->length && win->kmem_wanted)
		ret = rmawin_win_alloc_pages(win);
	else if (win->length)
		ret = rmawin_win_pin(win);
	if (!ret && win->length && win->ep->group->nranks > 1)
		ret = rmawin_win_register(win);
	if (!ret && win->same_op)
		ret = rmawin_atomic_win_setup(win);
	return ret;
}

/* The arguments alone, before anything is locked or allocated. */
static int rmawin_win_create_check(const struct rmawin_win_create *c)
{
	u64 end;

	if (c->flags & ~(RMAWIN_WIN_ALLOCATE | RMAWIN_WIN_SAME_OP | RMAWIN_WIN_NIC_SMALL_INTS) ||
	    c->mmap_offset || !c->disp_unit)
		return -EINVAL;
	if (c->flags & RMAWIN_WIN_NIC_SMALL_INTS && !(c->flags & RMAWIN_WIN_SAME_OP))
		return -EINVAL;
	/* the device's atomics work on aligned 8-byte words, all inside the window */
	if (c->flags & RMAWIN_WIN_SAME_OP &&
	    (c->base % sizeof(u64) || c->length % sizeof(u64)))
		return -EINVAL;
	if (c->flags & RMAWIN_WIN_ALLOCATE && c->base)
		return -EINVAL;
	if (c->length > RMAWIN_WIN_MAX || check_add_overflow(c->base, c->length, &end) ||
	    (c->length && !access_ok(u64_to_user_ptr(c->base), c->length)))
		return -EFAULT;
	return 0;
}

/*
 * A window of @ep as @c asks, counted, with its lock and PSCW state but
 * nothing pinned yet.  Return: the window or an ERR_PTR().
 */
static struct rmawin_win *rmawin_win_new(struct rmawin_ep *ep, const struct rmawin_win_create *c)
{
	struct rmawin_win *win;
	int ret;

	/* counted by the owner's calls, under the endpoint lock held here */
	if (rmawin_counter_read(ep->counters, RMAWIN_CNT_WINDOWS) >= READ_ONCE(max_windows))
		return ERR_PTR(-EMFILE);
	win = kzalloc(sizeof(*win), GFP_KERNEL_ACCOUNT);
	if (!win)
		return ERR_PTR(-ENOMEM);
	win->ep = ep;
	rmawin_count(ep, RMAWIN_CNT_WINDOWS, 1);
	win->id = ep->next_win;
	WRITE_ONCE(ep->next_win, win->id + 1);
	win->base = c->base;
	win->length = c->length;
	win->disp_unit = c->disp_unit;
	win->kmem_wanted = c->flags & RMAWIN_WIN_ALLOCATE;
	win->same_op = c->flags & RMAWIN_WIN_SAME_OP;
	win->nic_small = c->flags & RMAWIN_WIN_NIC_SMALL_INTS;
	spin_lock_init(&win->acc_lock);
	INIT_LIST_HEAD(&win->reqs);

	ret = rmawin_win_lock_init(win) ?: rmawin_win_pscw_init(win);
	if (ret) {
		rmawin_win_destroy(win);
		return ERR_PTR(ret);
	}
	return win;
}

/**
 * rmawin_ioctl_win_create() - RMAWIN_IOC_WIN_CREATE
 * @ep: the endpoint
 * @arg: struct rmawin_win_create, already copied in
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_win_create(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_win_create *c = arg;
	struct rmawin_win *win;
	int ret;

	ret = rmawin_win_create_check(c);
	if (ret)
		return ret;
	ret = rmawin_coll_lock(ep);
	if (ret)
		return ret;
	win = rmawin_win_new(ep, c);
	if (IS_ERR(win)) {
		ret = PTR_ERR(win);
		goto out_unlock;
	}
	ret = rmawin_win_setup(win);
	/*
	 * Findable before any peer learns of it: a peer that has our
	 * descriptor may lock or accumulate at once.  Our own other threads
	 * find it once it is @ready.
	 */
	if (!ret)
		ret = xa_err(xa_store_bh(&ep->wins, win->id, win, GFP_KERNEL_ACCOUNT));
	if (ep->group->nranks > 1)
		ret = rmawin_win_exchange_descs(win, ret);
	if (ret) {
		xa_erase_bh(&ep->wins, win->id);
		rmawin_win_destroy(win);
		goto out_unlock;
	}
	c->win = win->id;
	if (win->kmem)
		c->mmap_offset = ((u64)win->id + 1) << 32;
	win->ready = true;
out_unlock:
	rmawin_coll_unlock(ep);
	return ret;
}

/**
 * rmawin_win_lookup() - a window by handle, for the ioctls
 * @ep: the endpoint, locked
 * @id: the handle
 *
 * Return: the window, or NULL if there is none or it is still being
 * created or already being freed (by another thread).
 */
struct rmawin_win *rmawin_win_lookup(struct rmawin_ep *ep, u32 id)
{
	struct rmawin_win *win;

	lockdep_assert_held(&ep->lock);
	win = xa_load(&ep->wins, id);
	return win && win->ready ? win : NULL;
}

/**
 * rmawin_ioctl_win_free() - RMAWIN_IOC_WIN_FREE
 * @ep: the endpoint
 * @arg: struct rmawin_win_free, already copied in
 *
 * A window another thread waits on (a lock, a START, a WAIT) is refused
 * with -EBUSY.  Once its operations are complete, the ioctls no longer
 * find it: other threads' calls on it get -ENOENT during the barrier.
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_win_free(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_win_free *f = arg;
	struct rmawin_win *win;
	int ret, bret;

	if (f->flags || f->reserved)
		return -EINVAL;
	ret = rmawin_coll_lock(ep);
	if (ret)
		return ret;
	win = rmawin_win_lookup(ep, f->win);
	if (!win) {
		ret = -ENOENT;
		goto out_unlock;
	}
	if (win->waiters) {
		ret = -EBUSY;
		goto out_unlock;
	}
	ret = rmawin_win_complete(win);
	/* nothing new on it from here: other threads get -ENOENT */
	win->ready = false;
	/*
	 * A fatal signal or a dead device cut the wait short: its requests
	 * still point at it, and the others must not think it gone.  Not
	 * even the barrier's first message goes out.
	 */
	if (atomic_read(&win->inflight)) {
		rmawin_ep_group_drop(ep);
		goto out_unlock;
	}
	/* nobody may still be reaching into it when its pages go */
	bret = rmawin_group_barrier(ep->group);
	if (bret) {
		/*
		 * A peer may still hold our keys: only tearing the whole group
		 * down (which frees every window after its queue pairs are
		 * drained) makes the pages safe to release.
		 */
		rmawin_ep_group_drop(ep);
	} else {
		xa_erase_bh(&ep->wins, f->win);
		rmawin_win_destroy(win);
	}
	ret = ret ?: bret;
out_unlock:
	rmawin_coll_unlock(ep);
	return ret;
}

/**
 * rmawin_ioctl_win_info() - RMAWIN_IOC_WIN_INFO
 * @ep: the endpoint
 * @arg: struct rmawin_win_info, already copied in
 *
 * Gathered under the lock, written out after it: the array may be memory
 * whose fault needs this endpoint.
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_win_info(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_win_info *w = arg;
	struct rmawin_win_rank *r = NULL;
	struct rmawin_group *grp;
	struct rmawin_win *win;
	u32 i;
	int ret;

	if (w->flags)
		return -EINVAL;
	if (mutex_lock_killable(&ep->lock))
		return -EINTR;
	ret = rmawin_ep_check_group(ep);
	if (ret)
		goto out_unlock;
	grp = ep->group;
	win = rmawin_win_lookup(ep, w->win);
	ret = -ENOENT;
	if (!win)
		goto out_unlock;
	ret = -EINVAL;
	if (w->nranks != grp->nranks)
		goto out_unlock;
	ret = -ENOMEM;
	r = kvcalloc(grp->nranks, sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		goto out_unlock;
	for (i = 0; i < grp->nranks; i++) {
		r[i].length = i == grp->rank ? win->length : win->tbl->remote[i].length;
		r[i].disp_unit = i == grp->rank ? win->disp_unit :
						  win->tbl->remote[i].disp_unit;
	}
	ret = 0;
out_unlock:
	mutex_unlock(&ep->lock);
	if (!ret && copy_to_user(u64_to_user_ptr(w->ranks_ptr), r, w->nranks * sizeof(*r)))
		ret = -EFAULT;
	kvfree(r);
	return ret;
}

/**
 * rmawin_wins_destroy_all() - release every window of an endpoint
 * @ep: the endpoint, locked, whose queue pairs are already drained
 */
void rmawin_wins_destroy_all(struct rmawin_ep *ep)
{
	struct rmawin_win *win;
	unsigned long id;

	lockdep_assert_held(&ep->lock);
	xa_for_each(&ep->wins, id, win) {
		xa_erase_bh(&ep->wins, id);
		rmawin_win_destroy(win);
	}
}
