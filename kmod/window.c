// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: windows.  A window is user memory pinned for as long as it
 * exists (FOLL_LONGTERM, charged to RLIMIT_MEMLOCK), registered with fast
 * registration in regions of at most the device's page-list length, and
 * described to every member of the group: (length, disp_unit, and per
 * region the iova and rkey).  Only members ever learn the keys.
 *
 * Creation is collective and ordered, so a handle is a sequence number
 * that means the same window on every rank.  A rank whose creation fails
 * still sends a descriptor, marked failed, so nobody waits forever.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/module.h>

#include "rmawin.h"

static unsigned int max_windows = 1024;
module_param(max_windows, uint, 0644);
MODULE_PARM_DESC(max_windows, "Windows one endpoint may have at once");

/* Windows larger than this are refused outright. */
#define RMAWIN_WIN_MAX		BIT_ULL(40)
/* Registrations posted before waiting for them. */
#define RMAWIN_REG_BATCH	16
/* Largest page size a window is registered with: a transparent huge page. */
#define RMAWIN_MAX_BLOCK_SHIFT	PMD_SHIFT

static struct rmawin_win_table *rmawin_table_get(struct rmawin_group *grp, u32 id)
{
	struct rmawin_win_table *tbl, *old;

	tbl = xa_load(&grp->tables, id);
	if (tbl)
		return tbl;
	tbl = kzalloc(sizeof(*tbl), GFP_KERNEL_ACCOUNT);
	if (!tbl)
		return NULL;
	tbl->remote = kvcalloc(grp->nranks, sizeof(*tbl->remote), GFP_KERNEL_ACCOUNT);
	if (!tbl->remote) {
		kfree(tbl);
		return NULL;
	}
	old = xa_cmpxchg(&grp->tables, id, NULL, tbl, GFP_KERNEL_ACCOUNT);
	if (old) {
		kvfree(tbl->remote);
		kfree(tbl);
		return xa_is_err(old) ? NULL : old;
	}
	return tbl;
}

static void rmawin_table_free(struct rmawin_group *grp, struct rmawin_win_table *tbl)
{
	u32 i;

	if (!tbl)
		return;
	for (i = 0; i < grp->nranks; i++)
		kvfree(tbl->remote[i].mrs);
	kvfree(tbl->remote);
	kfree(tbl);
}

/**
 * rmawin_tables_free() - free descriptor tables no window took
 * @grp: the group, being destroyed
 */
void rmawin_tables_free(struct rmawin_group *grp)
{
	struct rmawin_win_table *tbl;
	unsigned long id;

	xa_for_each(&grp->tables, id, tbl)
		rmawin_table_free(grp, tbl);
	xa_destroy(&grp->tables);
}

/* The first fragment of a descriptor: the window's shape. */
static int rmawin_desc_start(struct rmawin_remote *r, const struct rmawin_wire_desc *d)
{
	u64 length = le64_to_cpu(d->length), chunk = le64_to_cpu(d->chunk);
	u32 page_off = le32_to_cpu(d->page_off), nmrs = le32_to_cpu(d->nmrs);
	s32 status = le32_to_cpu(d->status);

	if (status) {
		/* the owner's creation failed: a negative errno and nothing else */
		if (status > 0 || status < -MAX_ERRNO || nmrs || d->count || d->first ||
		    d->length || d->chunk || d->disp_unit || d->page_off)
			return -EPROTO;
		r->disp_unit = 0;	/* marks the peer's failure */
		r->done = true;
		return 0;
	}
	if (!d->disp_unit || length > RMAWIN_WIN_MAX || chunk < PAGE_SIZE ||
	    chunk > RMAWIN_WIN_MAX || page_off >= chunk || d->first)
		return -EPROTO;
	/* exactly the regions that cover the window: every offset finds one */
	if (nmrs > RMAWIN_WIN_MAX_MRS ||
	    nmrs != (length ? DIV_ROUND_UP_ULL(page_off + length, chunk) : 0))
		return -EPROTO;
	r->length = length;
	r->chunk = chunk;
	r->disp_unit = le32_to_cpu(d->disp_unit);
	r->page_off = page_off;
	r->nmrs = nmrs;
	if (nmrs) {
		r->mrs = kvcalloc(nmrs, sizeof(*r->mrs), GFP_KERNEL_ACCOUNT);
		if (!r->mrs)
			return -ENOMEM;
	}
	return 0;
}

/* Check one fragment against what earlier ones said; fill it in. */
static int rmawin_desc_apply(struct rmawin_remote *r, const struct rmawin_wire_desc *d,
			     u16 len)
{
	u32 first = le32_to_cpu(d->first), count = le32_to_cpu(d->count), i;
	int ret;

	if (r->done || count > RMAWIN_DESC_PER_MSG ||
	    len != sizeof(*d) + count * sizeof(d->mr[0]))
		return -EPROTO;
	if (!r->got && !r->nmrs) {
		ret = rmawin_desc_start(r, d);
		if (ret || r->done)
			return ret;
	} else if (le32_to_cpu(d->nmrs) != r->nmrs || le64_to_cpu(d->length) != r->length ||
		   le64_to_cpu(d->chunk) != r->chunk || le32_to_cpu(d->page_off) != r->page_off ||
		   le32_to_cpu(d->disp_unit) != r->disp_unit || d->status) {
		return -EPROTO;
	}
	/* fragments come in order, each region once */
	if (first != r->got || count > r->nmrs - r->got || (!count && r->nmrs))
		return -EPROTO;
	for (i = 0; i < count; i++) {
		if (d->mr[i].pad)
			return -EPROTO;
		r->mrs[first + i].iova = le64_to_cpu(d->mr[i].iova);
		r->mrs[first + i].rkey = le32_to_cpu(d->mr[i].rkey);
	}
	r->got += count;
	r->done = r->got == r->nmrs;
	return 0;
}

/*
 * Descriptors a peer may send us now: creation is collective and ordered,
 * and a peer finishes creating window w only with our descriptor of w, so
 * it can be at most one window ahead of the one we create, and never
 * sends a window's descriptor again.
 */
static bool rmawin_desc_id_ok(struct rmawin_group *grp, u32 id)
{
	u32 next = READ_ONCE(grp->ep->next_win);

	/* and none for a window whose descriptors are all in already */
	return id >= READ_ONCE(grp->desc_floor) && id + 2 >= next && id <= next + 1;
}

/**
 * rmawin_win_desc_recv() - a fragment of a peer's window descriptor
 * @peer: the sender
 * @win_id: the window handle
 * @p: struct rmawin_wire_desc
 * @len: payload bytes
 *
 * Context: completion (workqueue) context; may sleep.
 * Return: 0, -EPROTO, -ENOMEM.
 */
int rmawin_win_desc_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len)
{
	struct rmawin_group *grp = peer->grp;
	struct rmawin_win_table *tbl;
	struct rmawin_remote *r;
	int ret;

	if (!rmawin_desc_id_ok(grp, win_id))
		return -EPROTO;
	tbl = rmawin_table_get(grp, win_id);
	if (!tbl)
		return -ENOMEM;
	r = &tbl->remote[peer->rank];
	/* a peer sends one descriptor per window, in order: fragments never race */
	ret = rmawin_desc_apply(r, p, len);
	if (ret)
		return ret;
	if (r->done) {
		spin_lock_irq(&grp->lock);
		tbl->complete++;
		spin_unlock_irq(&grp->lock);
		wake_up_all(&grp->ep->wq);
	}
	return 0;
}

/* Charge @npages to the caller's RLIMIT_MEMLOCK, as every pinning driver does. */
static int rmawin_win_charge(struct rmawin_win *win)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	win->mm = current->mm;
	mmgrab(win->mm);
	if (atomic64_add_return(win->npages, &win->mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(win->npages, &win->mm->pinned_vm);
		mmdrop(win->mm);
		win->mm = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void rmawin_win_uncharge(struct rmawin_win *win)
{
	atomic64_sub(win->npages, &win->mm->pinned_vm);
	mmdrop(win->mm);
	win->mm = NULL;
}

static int rmawin_win_pin(struct rmawin_win *win)
{
	unsigned long first = win->base >> PAGE_SHIFT;
	unsigned long done = 0;
	int ret;

	win->npages = ((win->base + win->length - 1) >> PAGE_SHIFT) - first + 1;
	/* charged before anything is allocated for it */
	ret = rmawin_win_charge(win);
	if (ret) {
		win->npages = 0;
		return ret;
	}
	win->pages = kvcalloc(win->npages, sizeof(*win->pages), GFP_KERNEL_ACCOUNT);
	if (!win->pages) {
		ret = -ENOMEM;
		goto err_uncharge;
	}

	while (done < win->npages) {
		ret = pin_user_pages_fast((first + done) << PAGE_SHIFT,
					  win->npages - done,
					  FOLL_WRITE | FOLL_LONGTERM,
					  win->pages + done);
		if (ret <= 0) {
			ret = ret ?: -EFAULT;
			goto err_unpin;
		}
		done += ret;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
	}
	rmawin_count(win->ep, RMAWIN_CNT_PINNED_PAGES, win->npages);
	return 0;

err_unpin:
	unpin_user_pages(win->pages, done);
	kvfree(win->pages);
	win->pages = NULL;
err_uncharge:
	rmawin_win_uncharge(win);
	win->npages = 0;
	return ret;
}

static void rmawin_kmem_free(struct kref *ref)
{
	struct rmawin_kmem *kmem = container_of(ref, struct rmawin_kmem, ref);
	unsigned long i;

	/* pages still mapped somewhere live on with the mapping's reference */
	for (i = 0; kmem->pages && i < kmem->npages; i++)
		if (kmem->pages[i])
			put_page(kmem->pages[i]);
	kvfree(kmem->pages);
	kfree(kmem);
}

/* RMAWIN_WIN_ALLOCATE: zeroed pages of ours, mapped by the process later. */
static int rmawin_win_alloc_pages(struct rmawin_win *win)
{
	struct rmawin_kmem *kmem;
	unsigned long i;
	int ret;

	win->npages = DIV_ROUND_UP(win->length, PAGE_SIZE);
	ret = rmawin_win_charge(win);
	if (ret)
		goto err_zero;
	kmem = kzalloc(sizeof(*kmem), GFP_KERNEL_ACCOUNT);
	if (!kmem)
		goto err_uncharge;
	kref_init(&kmem->ref);
	kmem->npages = win->npages;
	kmem->pages = kvcalloc(kmem->npages, sizeof(*kmem->pages), GFP_KERNEL_ACCOUNT);
	if (!kmem->pages)
		goto err_put;
	for (i = 0; i < kmem->npages; i++) {
		/* the process's memory cgroup pays for its window */
		kmem->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!kmem->pages[i])
			goto err_put;
	}
	ret = xa_insert(&win->ep->kmems, win->id, kmem, GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_put_ret;
	win->kmem = kmem;
	win->pages = kmem->pages;
	rmawin_count(win->ep, RMAWIN_CNT_PINNED_PAGES, win->npages);
	return 0;

err_put:
	ret = -ENOMEM;
err_put_ret:
	kref_put(&kmem->ref, rmawin_kmem_free);
	rmawin_win_uncharge(win);
	goto err_zero;
err_uncharge:
	rmawin_win_uncharge(win);
	ret = -ENOMEM;
err_zero:
	win->npages = 0;
	return ret;
}

static void rmawin_win_unpin(struct rmawin_win *win)
{
	if (!win->pages)
		return;
	if (win->kmem) {
		xa_erase(&win->ep->kmems, win->id);
		kref_put(&win->kmem->ref, rmawin_kmem_free);
		win->kmem = NULL;
	} else {
		/* the peers may have written anywhere in it */
		unpin_user_pages_dirty_lock(win->pages, win->npages, true);
		kvfree(win->pages);
	}
	rmawin_count(win->ep, RMAWIN_CNT_PINNED_PAGES, -(long)win->npages);
	rmawin_win_uncharge(win);
	win->pages = NULL;
}

/**
 * rmawin_win_mmap() - map an allocated window's pages
 * @ep: the endpoint
 * @vma: a shared mapping at the window's mmap_offset, at most its size
 *
 * Context: mmap_lock held; does not take the endpoint's lock, which is
 * held while faulting user memory in.
 * Return: 0, -EINVAL for a private mapping, an unknown offset or a size
 * beyond the window, or the error of vm_insert_page().
 */
int rmawin_win_mmap(struct rmawin_ep *ep, struct vm_area_struct *vma)
{
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	struct rmawin_kmem *kmem;
	unsigned long i;
	int ret = 0;

	if (!(vma->vm_flags & VM_SHARED) || !(off >> 32) || (u32)off)
		return -EINVAL;
	xa_lock(&ep->kmems);
	kmem = xa_load(&ep->kmems, (off >> 32) - 1);
	if (kmem)
		kref_get(&kmem->ref);
	xa_unlock(&ep->kmems);
	if (!kmem)
		return -EINVAL;
	if (vma_pages(vma) > kmem->npages) {
		ret = -EINVAL;
		goto out_put;
	}
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	for (i = 0; i < vma_pages(vma) && !ret; i++)
		ret = vm_insert_page(vma, vma->vm_start + i * PAGE_SIZE, kmem->pages[i]);
out_put:
	kref_put(&kmem->ref, rmawin_kmem_free);
	return ret;
}

static u32 rmawin_chunk_pages(struct rmawin_ep *ep)
{
	/* a device that reports 0 still maps one page per region */
	return clamp_t(u32, ep->dev->ibdev->attrs.max_fast_reg_page_list_len, 1, 512);
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
static u64 rmawin_win_block_off(const struct rmawin_win *win)
{
	return win->base & (BIT_ULL(win->block_shift) - 1);
}

static u64 rmawin_win_chunk_bytes(const struct rmawin_win *win)
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
	c->mr = ib_alloc_mr(win->ep->pd, IB_MR_TYPE_MEM_REG, rmawin_chunk_pages(win->ep));
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

struct rmawin_reg_wait {
	struct ib_cqe cqe;
	struct completion done;
	int status;
};

static void rmawin_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmawin_reg_wait *w = container_of(wc->wr_cqe, struct rmawin_reg_wait, cqe);

	w->status = wc->status == IB_WC_SUCCESS ? 0 : -EIO;
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

/* Post IB_WR_REG_MR for chunks [first, first + n), the last signaled. */
static int rmawin_reg_batch(struct rmawin_win *win, u32 first, u32 n)
{
	struct rmawin_peer *peer = rmawin_reg_peer(win->ep->group);
	struct ib_reg_wr wrs[RMAWIN_REG_BATCH];
	struct rmawin_reg_wait w;
	u32 i;
	int ret;

	if (!peer)
		return -ECONNRESET;
	memset(wrs, 0, sizeof(wrs));
	w.cqe.done = rmawin_reg_done;
	init_completion(&w.done);
	for (i = 0; i < n; i++) {
		struct ib_reg_wr *wr = &wrs[i];

		wr->wr.opcode = IB_WR_REG_MR;
		wr->wr.wr_cqe = &w.cqe;
		wr->wr.next = i + 1 < n ? &wrs[i + 1].wr : NULL;
		wr->wr.send_flags = i + 1 < n ? 0 : IB_SEND_SIGNALED;
		wr->mr = win->chunks[first + i].mr;
		wr->key = wr->mr->rkey;
		wr->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			     IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC;
	}
	ret = rmawin_post_send(peer->qp, &wrs[0].wr, false);
	if (ret)
		return ret;
	/* the device completes it or the QP's teardown flushes it: no timeout */
	wait_for_completion(&w.done);
	return w.status;
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

	n = DIV_ROUND_UP_ULL(rmawin_win_block_off(win) + win->length, chunk);
	/* more regions than a peer accepts in a descriptor */
	if (n > RMAWIN_WIN_MAX_MRS)
		return -EFBIG;
	win->nchunks = n;
	win->chunks = kvcalloc(win->nchunks, sizeof(*win->chunks), GFP_KERNEL_ACCOUNT);
	if (!win->chunks)
		return -ENOMEM;
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

/* Fill @d with the window's shape, or only @status if its creation failed. */
static u32 rmawin_desc_fill(struct rmawin_win *win, struct rmawin_wire_desc *d, int status)
{
	memset(d, 0, sizeof(*d));
	if (status) {
		d->status = cpu_to_le32(status);
		return 0;
	}
	d->length = cpu_to_le64(win->length);
	d->chunk = cpu_to_le64(rmawin_win_chunk_bytes(win));
	d->disp_unit = cpu_to_le32(win->disp_unit);
	d->page_off = cpu_to_le32(rmawin_win_block_off(win));
	d->nmrs = cpu_to_le32(win->nchunks);
	return win->nchunks;
}

static int rmawin_win_send_desc(struct rmawin_win *win, int status)
{
	struct rmawin_group *grp = win->ep->group;
	struct rmawin_wire_desc *d;
	u32 i, first = 0, k, nmrs, count;
	int ret = 0;

	d = kzalloc(RMAWIN_MSG_MAX_PAYLOAD, GFP_KERNEL_ACCOUNT);
	if (!d)
		return -ENOMEM;
	nmrs = rmawin_desc_fill(win, d, status);
	do {
		count = min_t(u32, nmrs - first, RMAWIN_DESC_PER_MSG);
		d->first = cpu_to_le32(first);
		d->count = cpu_to_le32(count);
		for (k = 0; k < count; k++) {
			struct ib_mr *mr = win->chunks[first + k].mr;

			d->mr[k].iova = cpu_to_le64(mr->iova);
			d->mr[k].rkey = cpu_to_le32(mr->rkey);
			d->mr[k].pad = 0;
		}
		for (i = 0; i < grp->nranks && !ret; i++)
			if (i != grp->rank)
				ret = rmawin_msg_send(&grp->peers[i], RMAWIN_MSG_WIN_DESC,
						      win->id, d, sizeof(*d) +
						      count * sizeof(d->mr[0]));
		first += count;
	} while (!ret && first < nmrs);
	kfree(d);
	return ret;
}

static bool rmawin_descs_done(struct rmawin_group *grp, struct rmawin_win_table *tbl)
{
	return READ_ONCE(tbl->complete) == grp->nranks - 1 || READ_ONCE(grp->error) ||
	       READ_ONCE(grp->ep->dev->dead);
}

/* Wait for every peer's descriptor; a peer that failed fails us too. */
static int rmawin_win_wait_descs(struct rmawin_win *win)
{
	struct rmawin_group *grp = win->ep->group;
	u32 i;

	if (rmawin_wait_event(grp->ep, rmawin_descs_done(grp, win->tbl)))
		return -EINTR;
	if (READ_ONCE(grp->ep->dev->dead))
		return -ENODEV;
	if (win->tbl->complete != grp->nranks - 1)
		return grp->error;
	for (i = 0; i < grp->nranks; i++)
		if (i != grp->rank && !win->tbl->remote[i].disp_unit)
			return -EREMOTEIO;
	return 0;
}

static void rmawin_win_destroy(struct rmawin_win *win)
{
	rmawin_win_reap(win, false);
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
	return ret;
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
	struct rmawin_group *grp;
	struct rmawin_win *win;
	u64 end;
	int ret, send_ret;

	if (c->flags & ~RMAWIN_WIN_ALLOCATE || c->mmap_offset || !c->disp_unit)
		return -EINVAL;
	if (c->flags & RMAWIN_WIN_ALLOCATE && c->base)
		return -EINVAL;
	if (c->length > RMAWIN_WIN_MAX || check_add_overflow(c->base, c->length, &end) ||
	    (c->length && !access_ok(u64_to_user_ptr(c->base), c->length)))
		return -EFAULT;

	mutex_lock(&ep->lock);
	ret = rmawin_ep_check_group(ep);
	if (ret)
		goto out_unlock;
	grp = ep->group;
	if (atomic_long_read(&ep->counters[RMAWIN_CNT_WINDOWS]) >= READ_ONCE(max_windows)) {
		ret = -EMFILE;
		goto out_unlock;
	}
	win = kzalloc(sizeof(*win), GFP_KERNEL_ACCOUNT);
	if (!win) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	win->ep = ep;
	rmawin_count(ep, RMAWIN_CNT_WINDOWS, 1);
	win->id = ep->next_win;
	WRITE_ONCE(ep->next_win, win->id + 1);
	win->base = c->base;
	win->length = c->length;
	win->disp_unit = c->disp_unit;
	win->kmem_wanted = c->flags & RMAWIN_WIN_ALLOCATE;
	spin_lock_init(&win->lock);
	spin_lock_init(&win->acc_lock);
	INIT_LIST_HEAD(&win->reqs);

	ret = rmawin_win_lock_init(win) ?: rmawin_win_pscw_init(win);
	if (ret) {
		rmawin_win_destroy(win);
		goto out_unlock;
	}
	ret = rmawin_win_setup(win);
	/*
	 * Findable before any peer learns of it: a peer that has our
	 * descriptor may lock or accumulate at once.
	 */
	if (!ret)
		ret = xa_err(xa_store(&ep->wins, win->id, win, GFP_KERNEL_ACCOUNT));
	if (grp->nranks > 1) {
		win->tbl = rmawin_table_get(grp, win->id);
		send_ret = win->tbl ? rmawin_win_send_desc(win, ret) : -ENOMEM;
		ret = ret ?: send_ret;
		if (!ret)
			ret = rmawin_win_wait_descs(win);
		/*
		 * A complete table gets no more messages: the window takes it.
		 * Otherwise a late descriptor may still come: the group keeps
		 * the table and frees it with itself.
		 */
		if (!ret) {
			xa_erase(&grp->tables, win->id);
			WRITE_ONCE(grp->desc_floor, win->id + 1);
		} else {
			win->tbl = NULL;
		}
	}
	if (ret) {
		xa_erase(&ep->wins, win->id);
		rmawin_win_destroy(win);
		goto out_unlock;
	}
	c->win = win->id;
	if (win->kmem)
		c->mmap_offset = ((u64)win->id + 1) << 32;
out_unlock:
	mutex_unlock(&ep->lock);
	return ret;
}

/**
 * rmawin_win_lookup() - a window by handle
 * @ep: the endpoint, locked
 * @id: the handle
 *
 * Return: the window or NULL.
 */
struct rmawin_win *rmawin_win_lookup(struct rmawin_ep *ep, u32 id)
{
	lockdep_assert_held(&ep->lock);
	return xa_load(&ep->wins, id);
}

/**
 * rmawin_ioctl_win_free() - RMAWIN_IOC_WIN_FREE
 * @ep: the endpoint
 * @arg: struct rmawin_win_free, already copied in
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
	mutex_lock(&ep->lock);
	ret = rmawin_ep_check_group(ep);
	if (ret)
		goto out_unlock;
	win = xa_load(&ep->wins, f->win);
	if (!win) {
		ret = -ENOENT;
		goto out_unlock;
	}
	ret = rmawin_win_complete(win);
	/* nobody may still be reaching into it when its pages go */
	bret = rmawin_group_barrier(ep->group);
	if (bret) {
		/*
		 * A peer may still hold our keys: only tearing the whole group
		 * down (which frees every window after its queue pairs are
		 * drained) makes the pages safe to release.
		 */
		rmawin_group_destroy(ep->group);
		ep->group = NULL;
	} else {
		xa_erase(&ep->wins, f->win);
		rmawin_win_destroy(win);
	}
	ret = ret ?: bret;
out_unlock:
	mutex_unlock(&ep->lock);
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
		xa_erase(&ep->wins, id);
		rmawin_win_destroy(win);
	}
}
