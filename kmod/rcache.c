// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: the registration cache for large origin buffers.
 *
 * Pinning and DMA-mapping a large buffer costs more than sending it over a
 * fast link, and programs put from the same buffers again and again.  So
 * the pages of an origin buffer stay pinned and mapped after the operation
 * (an entry), and the next operation on the same range reuses them.
 *
 * An entry watches its range with an MMU interval notifier: munmap,
 * mprotect, a copy-on-write or a migration of any page in it marks the
 * entry stale, and a stale entry is never used again; it is released once
 * no operation uses it.  So freeing and reallocating a buffer between two
 * puts sends the new contents, never the old pages.
 *
 * Entries are charged to RLIMIT_MEMLOCK like windows, the cache holds at
 * most rcache_max_pages pages per group (least recently used entries are
 * evicted), and an operation that cannot be cached, or whose process is
 * not the one that joined the group, gets a private entry that is
 * released with it.
 *
 * Lookups, insertions and releases run under the endpoint's lock; the
 * notifier runs in whatever task changes the mapping and takes only the
 * cache's spinlock.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/module.h>

#include "rmawin.h"

static unsigned long rcache_max_pages = 65536;
module_param(rcache_max_pages, ulong, 0644);
MODULE_PARM_DESC(rcache_max_pages,
		 "Pages of origin buffers kept pinned per group for reuse (0 disables the cache)");

/* Buffers below this are bounced, not pinned; the cache starts here. */
#define RMAWIN_RCACHE_MIN	(RMAWIN_BOUNCE_SIZE + 1)

static bool rmawin_rcache_invalidate(struct mmu_interval_notifier *mni,
				     const struct mmu_notifier_range *range,
				     unsigned long cur_seq)
{
	struct rmawin_rcache_ent *e = container_of(mni, struct rmawin_rcache_ent, mni);
	unsigned long flags;

	spin_lock_irqsave(&e->rc->lock, flags);
	mmu_interval_set_seq(mni, cur_seq);
	e->stale = true;
	spin_unlock_irqrestore(&e->rc->lock, flags);
	return true;
}

static const struct mmu_interval_notifier_ops rmawin_rcache_mni_ops = {
	.invalidate = rmawin_rcache_invalidate,
};

static bool rmawin_ent_stale(struct rmawin_rcache_ent *e)
{
	unsigned long flags;
	bool stale;

	spin_lock_irqsave(&e->rc->lock, flags);
	stale = e->stale;
	spin_unlock_irqrestore(&e->rc->lock, flags);
	return stale;
}

static void rmawin_ent_set_stale(struct rmawin_rcache_ent *e)
{
	unsigned long flags;

	spin_lock_irqsave(&e->rc->lock, flags);
	e->stale = true;
	spin_unlock_irqrestore(&e->rc->lock, flags);
}

static void rmawin_ent_unmap(struct rmawin_rcache_ent *e)
{
	unsigned long i;

	for (i = 0; i < e->mapped; i++)
		ib_dma_unmap_page(e->rc->ibdev, e->dma[i], PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (e->pinned)
		unpin_user_pages_dirty_lock(e->pages, e->pinned, e->writable);
	rmawin_count(e->rc->ep, RMAWIN_CNT_PINNED_PAGES, -(long)e->pinned);
	e->mapped = 0;
	e->pinned = 0;
}

static void rmawin_ent_free(struct rmawin_rcache_ent *e)
{
	struct rmawin_rcache *rc = e->rc;

	if (e->cached) {
		mmu_interval_notifier_remove(&e->mni);
		list_del(&e->node);
		rc->pages -= e->npages;
		atomic64_sub(e->npages, &rc->mm->pinned_vm);
	} else if (e->charged) {
		atomic64_sub(e->npages, &e->charged->pinned_vm);
		mmdrop(e->charged);
	}
	rmawin_ent_unmap(e);
	kvfree(e->pages);
	kvfree(e->dma);
	kfree(e);
}

/* Release stale entries nobody uses, and evict until @want pages fit. */
static void rmawin_rcache_trim(struct rmawin_rcache *rc, unsigned long want)
{
	struct rmawin_rcache_ent *e, *tmp;

	list_for_each_entry_safe_reverse(e, tmp, &rc->lru, node) {
		if (e->users)
			continue;
		if (rmawin_ent_stale(e) || rc->pages + want > rcache_max_pages)
			rmawin_ent_free(e);
	}
}

static struct rmawin_rcache_ent *
rmawin_rcache_find(struct rmawin_rcache *rc, unsigned long start, unsigned long npages,
		   bool write)
{
	struct rmawin_rcache_ent *e;

	list_for_each_entry(e, &rc->lru, node) {
		/*
		 * An entry is findable from its miss on, so that the notifier
		 * watches it while it is pinned; it is usable only once every
		 * page is pinned and mapped.  One whose pinning failed part
		 * way is stale already, but its operation may not be reaped.
		 */
		if (e->mapped < e->npages)
			continue;
		if (e->start > start || e->start + e->npages < start + npages ||
		    (write && !e->writable) || rmawin_ent_stale(e))
			continue;
		list_move(&e->node, &rc->lru);
		return e;
	}
	return NULL;
}

/* Charge a private entry's pages to the caller's RLIMIT_MEMLOCK, as a window's. */
static bool rmawin_ent_charge_private(struct rmawin_rcache_ent *e)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;

	if (atomic64_add_return(e->npages, &mm->pinned_vm) > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(e->npages, &mm->pinned_vm);
		return false;
	}
	mmgrab(mm);
	e->charged = mm;
	return true;
}

/* Room for @npages more cached pages under RLIMIT_MEMLOCK? Charges them. */
static bool rmawin_rcache_charge(struct rmawin_rcache *rc, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (npages > rcache_max_pages)
		return false;
	rmawin_rcache_trim(rc, npages);
	if (rc->pages + npages > rcache_max_pages)
		return false;
	if (atomic64_add_return(npages, &rc->mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &rc->mm->pinned_vm);
		return false;
	}
	return true;
}

static struct rmawin_rcache_ent *
rmawin_ent_alloc(struct rmawin_rcache *rc, unsigned long start, unsigned long npages,
		 bool write)
{
	struct rmawin_rcache_ent *e;

	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return NULL;
	e->pages = kvcalloc(npages, sizeof(*e->pages), GFP_KERNEL_ACCOUNT);
	e->dma = kvcalloc(npages, sizeof(*e->dma), GFP_KERNEL_ACCOUNT);
	if (!e->pages || !e->dma) {
		kvfree(e->pages);
		kvfree(e->dma);
		kfree(e);
		return NULL;
	}
	e->rc = rc;
	e->start = start;
	e->npages = npages;
	e->writable = write;
	INIT_LIST_HEAD(&e->node);
	return e;
}

/* Make it a cache entry, watched from before its pages are pinned. */
static void rmawin_ent_cache(struct rmawin_rcache *rc, struct rmawin_rcache_ent *e)
{
	if (current->mm != rc->mm || !rmawin_rcache_charge(rc, e->npages))
		return;
	if (mmu_interval_notifier_insert(&e->mni, rc->mm, e->start << PAGE_SHIFT,
					 e->npages << PAGE_SHIFT, &rmawin_rcache_mni_ops)) {
		atomic64_sub(e->npages, &rc->mm->pinned_vm);
		return;
	}
	e->seq = mmu_interval_read_begin(&e->mni);
	e->cached = true;
	rc->pages += e->npages;
	list_add(&e->node, &rc->lru);
}

/**
 * rmawin_rcache_get() - pinned, DMA-mapped pages for an origin buffer
 * @rc: the group's cache
 * @addr: user address of the buffer
 * @len: its length
 * @write: the device will write the pages (a get)
 * @lookup: the cache's entries only (the ring's poller, which never pins)
 * @hit: set if the pages came from the cache
 *
 * On a miss the entry is returned with no page pinned yet: the caller
 * pins with rmawin_rcache_pin() piece by piece, so that transfers can
 * start before the whole buffer is pinned.  More pages than the machine
 * has can never be pinned: refused before anything is sized by them.
 *
 * Context: process context, endpoint lock held.
 * Return: the entry, in use until rmawin_rcache_put(); or an ERR_PTR:
 * -EFAULT for a miss with @lookup, -ENOMEM.
 */
struct rmawin_rcache_ent *rmawin_rcache_get(struct rmawin_rcache *rc, u64 addr, u64 len,
					    bool write, bool lookup, bool *hit)
{
	unsigned long start = addr >> PAGE_SHIFT;
	unsigned long npages = ((addr + len - 1) >> PAGE_SHIFT) - start + 1;
	struct rmawin_rcache_ent *e;

	lockdep_assert_held(&rc->ep->lock);
	*hit = false;
	if (rcache_max_pages && current->mm == rc->mm) {
		rmawin_rcache_trim(rc, 0);
		e = rmawin_rcache_find(rc, start, npages, write);
		if (e) {
			e->users++;
			*hit = true;
			rmawin_count(rc->ep, RMAWIN_CNT_RCACHE_HITS, 1);
			return e;
		}
		rmawin_count(rc->ep, RMAWIN_CNT_RCACHE_MISSES, 1);
	}
	if (lookup)
		return ERR_PTR(-EFAULT);
	if (npages > totalram_pages())
		return ERR_PTR(-ENOMEM);
	e = rmawin_ent_alloc(rc, start, npages, write);
	if (!e)
		return ERR_PTR(-ENOMEM);
	if (rcache_max_pages && len >= RMAWIN_RCACHE_MIN)
		rmawin_ent_cache(rc, e);
	/* a private entry's pages are pinned as long as its operation: charged too */
	if (!e->cached && !rmawin_ent_charge_private(e)) {
		rmawin_ent_free(e);
		return ERR_PTR(-ENOMEM);
	}
	e->users = 1;
	return e;
}

/**
 * rmawin_rcache_pin() - pin and map the entry's pages up to @upto
 * @e: an entry from a miss of rmawin_rcache_get()
 * @upto: pages from the start of the entry that must be ready
 *
 * Context: process context, endpoint lock held.
 * Return: 0, -EFAULT for memory that is not mapped (writable, if the
 * device writes), -ENOMEM.
 */
int rmawin_rcache_pin(struct rmawin_rcache_ent *e, unsigned long upto)
{
	unsigned int gup = (e->writable ? FOLL_WRITE : 0) | (e->cached ? FOLL_LONGTERM : 0);
	struct ib_device *ibdev = e->rc->ibdev;
	long ret;

	lockdep_assert_held(&e->rc->ep->lock);
	while (e->pinned < upto) {
		ret = pin_user_pages_fast((e->start + e->pinned) << PAGE_SHIFT,
					  upto - e->pinned, gup, e->pages + e->pinned);
		if (ret <= 0) {
			rmawin_ent_set_stale(e);
			return ret ?: -EFAULT;
		}
		e->pinned += ret;
		rmawin_count(e->rc->ep, RMAWIN_CNT_PINNED_PAGES, ret);
	}
	for (; e->mapped < upto; e->mapped++) {
		e->dma[e->mapped] = ib_dma_map_page(ibdev, e->pages[e->mapped], 0, PAGE_SIZE,
						    DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(ibdev, e->dma[e->mapped])) {
			rmawin_ent_set_stale(e);
			return -ENOMEM;
		}
	}
	/* the range changed while we pinned: use the pages once, then drop them */
	if (e->cached && e->pinned == e->npages &&
	    mmu_interval_read_retry(&e->mni, e->seq))
		rmawin_ent_set_stale(e);
	return 0;
}

/**
 * rmawin_rcache_put() - an operation is done with an entry
 * @e: the entry
 * @failed: the entry's pages were not all pinned: never reuse it
 *
 * Context: process context, endpoint lock held.
 */
void rmawin_rcache_put(struct rmawin_rcache_ent *e, bool failed)
{
	lockdep_assert_held(&e->rc->ep->lock);
	if (failed || e->pinned < e->npages)
		rmawin_ent_set_stale(e);
	if (--e->users)
		return;
	if (!e->cached || e->stale)
		rmawin_ent_free(e);
}

/**
 * rmawin_rcache_init() - an empty cache for the calling process
 * @rc: the cache, in its group
 * @ep: the endpoint, for counters
 * @ibdev: the device pages are mapped for
 */
void rmawin_rcache_init(struct rmawin_rcache *rc, struct rmawin_ep *ep,
			struct ib_device *ibdev)
{
	spin_lock_init(&rc->lock);
	INIT_LIST_HEAD(&rc->lru);
	rc->ep = ep;
	rc->ibdev = ibdev;
	rc->mm = current->mm;
	mmgrab(rc->mm);
}

/**
 * rmawin_rcache_destroy() - release every entry
 * @rc: the cache; no operation may be using an entry
 */
void rmawin_rcache_destroy(struct rmawin_rcache *rc)
{
	struct rmawin_rcache_ent *e, *tmp;

	if (!rc->mm)
		return;
	list_for_each_entry_safe(e, tmp, &rc->lru, node) {
		WARN_ON_ONCE(e->users);
		rmawin_ent_free(e);
	}
	mmdrop(rc->mm);
	rc->mm = NULL;
}
