// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: the zero-syscall path.  A submission ring of operation
 * descriptors (the very struct RMAWIN_IOC_RMA takes) and a completion ring,
 * in memory the process maps, consumed by a poller thread (poller.c) that
 * runs each entry through the same code as the ioctl.
 *
 * Nothing userspace writes is trusted: the consumer keeps its own copy of
 * the submission head, reads the tail once per pass and checks it is at
 * most a ring ahead, masks every index, and copies each descriptor out of
 * the shared page before looking at it.  Userspace can only make its own
 * operations fail.
 *
 * The poller runs in the owner's address space (kthread_use_mm) while it
 * consumes the ring, so that origin buffers are read and results written
 * exactly as the ioctl does, but it never pins: see rmawin_ring_setup's
 * comment in the uapi header.  When it sleeps it sets
 * RMAWIN_SQ_NEED_WAKEUP; RMAWIN_IOC_RING_ENTER wakes it, or runs the
 * entries in the caller's own system call (RMAWIN_ENTER_SUBMIT).  Both
 * sides order "publish my index, full barrier, read the other's" so that
 * a submission is never left in a sleeping ring.
 */
#include <linux/vmalloc.h>
#include <linux/sched/mm.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/cred.h>

#include "ring.h"

#define RMAWIN_RING_DEFAULT_SQ		256
#define RMAWIN_RING_MAX_SQ		4096
#define RMAWIN_RING_DEFAULT_IDLE_US	10000
#define RMAWIN_RING_MAX_IDLE_US		1000000
/* entries per pass under the endpoint's lock, so the owner's ioctls get in */
#define RMAWIN_RING_BATCH		32

/* Each shared index on its own cache line; the descriptors start after. */
#define RMAWIN_RING_LINE		64
#define RMAWIN_RING_SQES_OFF		(8 * RMAWIN_RING_LINE)

/**
 * rmawin_ring_set_flags() - change the flags userspace reads
 * @ring: the ring
 * @set: RMAWIN_SQ_* to set
 * @clear: RMAWIN_SQ_* to clear
 *
 * Context: process context; takes @ring->flags_lock.
 */
void rmawin_ring_set_flags(struct rmawin_ring *ring, u32 set, u32 clear)
{
	spin_lock(&ring->flags_lock);
	WRITE_ONCE(ring->flags, (ring->flags | set) & ~clear);
	/* release: RMAWIN_SQ_DEAD follows the last completion it may have */
	smp_store_release(ring->sq_flags, ring->flags);
	spin_unlock(&ring->flags_lock);
}

/* Room for one more completion?  A cq_head that lies counts as no room. */
static bool rmawin_ring_cq_room(struct rmawin_ring *ring)
{
	/* acquire: userspace has read the entries before it moved its head */
	return READ_ONCE(ring->ctail) - smp_load_acquire(ring->cq_head) < ring->cq_entries;
}

static void rmawin_ring_post(struct rmawin_ring *ring, u64 user_data, int res, u32 flags)
{
	struct rmawin_cqe *cqe = &ring->cqes[ring->ctail & (ring->cq_entries - 1)];

	WRITE_ONCE(cqe->user_data, user_data);
	WRITE_ONCE(cqe->res, res);
	WRITE_ONCE(cqe->flags, flags);
	WRITE_ONCE(ring->ctail, ring->ctail + 1);
	/* release: the entry before the tail that publishes it */
	smp_store_release(ring->cq_tail, ring->ctail);
}

/**
 * rmawin_ring_has_work() - work a consumer can do now
 * @ring: the ring
 *
 * Return: true if there are submissions, and room for their completions.
 */
bool rmawin_ring_has_work(struct rmawin_ring *ring)
{
	/* acquire: pairs with the submitter's store-release of its tail */
	return smp_load_acquire(ring->sq_tail) != READ_ONCE(ring->head) &&
	       rmawin_ring_cq_room(ring);
}

/*
 * The poller leaves an entry that would wait (a flush whose window has
 * operations in flight) at the head of its ring, pass after pass.  A call
 * that waits itself probes the peers as it goes (rmawin_wait_peers()); so
 * does the poller for an entry that stays there rmawin_keepalive_jiffies():
 * a peer whose node went away with a reply owed is found, and the flush
 * fails, instead of staying there for ever.  Endpoint lock held.
 */
static void rmawin_ring_keepalive(struct rmawin_ring *ring)
{
	long every = rmawin_keepalive_jiffies();

	if (!ring->waiting) {
		ring->waiting = true;
		ring->waiting_since = jiffies;
		return;
	}
	if (every == MAX_SCHEDULE_TIMEOUT || time_before(jiffies, ring->waiting_since + every))
		return;
	rmawin_keepalive(ring->ep);
	ring->waiting_since = jiffies;
}

/**
 * rmawin_ring_consume() - one pass over the submission ring
 * @ring: the ring
 * @poller: the shared poller is the consumer, not the owner's doorbell
 *	(RMAWIN_ENTER_SUBMIT): it must not wait for what one process does,
 *	so it skips a ring whose endpoint lock is held, and leaves a flush
 *	whose window still has operations in flight, or an atomic that would
 *	wait for a serial one (atomic.c), at the head of the ring for its
 *	next pass
 *
 * The endpoint's lock makes the poller and a doorbell take turns.
 *
 * Context: process context; the caller is in the owner's address space.
 * Return: entries consumed.
 */
int rmawin_ring_consume(struct rmawin_ring *ring, bool poller)
{
	struct rmawin_ep *ep = ring->ep;
	struct rmawin_op_desc op;
	u32 tail, n = 0;
	bool quiet;
	int res;

	if (!rmawin_ring_has_work(ring))
		return 0;
	/* a doorbell: a fatal signal leaves the rest queued */
	if (!poller ? mutex_lock_killable(&ep->lock) : !mutex_trylock(&ep->lock))
		return 0;
	/* stopped (set under this lock): what is left is the library's to run by ioctl */
	if (READ_ONCE(ring->flags) & RMAWIN_SQ_DEAD) {
		mutex_unlock(&ep->lock);
		return 0;
	}
	/* acquire: the entries are written before the tail that publishes them */
	tail = smp_load_acquire(ring->sq_tail);
	if (tail - ring->head > ring->sq_entries) {
		/* not a ring any more: drop it all and say so once */
		WRITE_ONCE(ring->head, tail);
		/* release: we are done reading the slots we hand back */
		smp_store_release(ring->sq_head, ring->head);
		if (rmawin_ring_cq_room(ring))
			rmawin_ring_post(ring, 0, -EINVAL, RMAWIN_CQE_F_RING);
		n = 1;
	}
	while (ring->head != tail && n < RMAWIN_RING_BATCH && rmawin_ring_cq_room(ring)) {
		/* one copy; userspace may scribble on the slot meanwhile */
		memcpy(&op, &ring->sqes[ring->head & (ring->sq_entries - 1)], sizeof(op));
		if (poller && rmawin_op_would_wait(ep, &op)) {
			rmawin_ring_keepalive(ring);
			break;
		}
		ring->waiting = false;
		res = rmawin_op_run(ep, &op, true, &quiet);
		WRITE_ONCE(ring->head, ring->head + 1);
		/* release: the slot was read before it is handed back */
		smp_store_release(ring->sq_head, ring->head);
		/* counted before its completion says it ran */
		rmawin_count(ep, RMAWIN_CNT_RING_ENTRIES, 1);
		rmawin_ring_post(ring, op.user_data, res, quiet ? RMAWIN_CQE_F_QUIET : 0);
		n++;
	}
	mutex_unlock(&ep->lock);
	return n;
}

static int rmawin_ring_args(struct rmawin_ring_setup *s)
{
	if (s->flags || s->reserved || s->cq_entries || s->mmap_offset || s->mmap_len ||
	    memchr_inv(&s->off, 0, sizeof(s->off)))
		return -EINVAL;
	if (!s->sq_entries)
		s->sq_entries = RMAWIN_RING_DEFAULT_SQ;
	if (s->sq_entries > RMAWIN_RING_MAX_SQ || !is_power_of_2(s->sq_entries))
		return -EINVAL;
	if (!s->idle_us)
		s->idle_us = RMAWIN_RING_DEFAULT_IDLE_US;
	if (s->idle_us > RMAWIN_RING_MAX_IDLE_US)
		return -EINVAL;
	s->cq_entries = 2 * s->sq_entries;
	return 0;
}

static struct rmawin_ring *rmawin_ring_alloc(struct rmawin_ring_setup *s)
{
	struct rmawin_ring *ring;
	u32 cqes_off;

	ring = kzalloc(sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return NULL;
	cqes_off = ALIGN(RMAWIN_RING_SQES_OFF + s->sq_entries * sizeof(struct rmawin_op_desc),
			 RMAWIN_RING_LINE);
	ring->len = PAGE_ALIGN(cqes_off + s->cq_entries * sizeof(struct rmawin_cqe));
	/* the process's memory cgroup pays for it (vmalloc_user() would not) */
	ring->mem = __vmalloc(ring->len, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!ring->mem) {
		kfree(ring);
		return NULL;
	}
	s->off = (struct rmawin_ring_offsets) {
		.sq_head = 0 * RMAWIN_RING_LINE,
		.sq_tail = 1 * RMAWIN_RING_LINE,
		.sq_flags = 2 * RMAWIN_RING_LINE,
		.cq_head = 3 * RMAWIN_RING_LINE,
		.cq_tail = 4 * RMAWIN_RING_LINE,
		.sqes = RMAWIN_RING_SQES_OFF,
		.cqes = cqes_off,
	};
	ring->sq_head = ring->mem + s->off.sq_head;
	ring->sq_tail = ring->mem + s->off.sq_tail;
	ring->sq_flags = ring->mem + s->off.sq_flags;
	ring->cq_head = ring->mem + s->off.cq_head;
	ring->cq_tail = ring->mem + s->off.cq_tail;
	ring->sqes = ring->mem + s->off.sqes;
	ring->cqes = ring->mem + s->off.cqes;
	ring->sq_entries = s->sq_entries;
	ring->cq_entries = s->cq_entries;
	ring->idle_ns = (u64)s->idle_us * NSEC_PER_USEC;
	spin_lock_init(&ring->flags_lock);
	INIT_LIST_HEAD(&ring->pl_node);
	s->mmap_offset = RMAWIN_RING_MMAP_OFFSET;
	s->mmap_len = ring->len;
	return ring;
}

static void rmawin_ring_free(struct rmawin_ring *ring)
{
	if (ring->mm)
		mmdrop(ring->mm);
	if (ring->cred)
		put_cred(ring->cred);
	vfree(ring->mem);
	kfree(ring);
}

/**
 * rmawin_ioctl_ring_setup() - RMAWIN_IOC_RING_SETUP
 * @ep: the endpoint
 * @arg: struct rmawin_ring_setup, already copied in
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_ring_setup(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_ring_setup *s = arg;
	struct rmawin_ring *ring;
	int ret;

	ret = rmawin_ring_args(s);
	if (ret)
		return ret;
	if (mutex_lock_killable(&ep->lock))
		return -EINTR;
	ret = rmawin_ep_check_group(ep);
	if (!ret && ep->ring)
		ret = -EBUSY;
	if (ret)
		goto out_unlock;
	ring = rmawin_ring_alloc(s);
	if (!ring) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	ring->ep = ep;
	mmgrab(current->mm);
	ring->mm = current->mm;
	ring->cred = get_current_cred();
	ret = rmawin_poller_attach(ring);
	if (ret) {
		rmawin_ring_free(ring);
		goto out_unlock;
	}
	/* published whole: mmap and RING_ENTER read it without the lock */
	smp_store_release(&ep->ring, ring);
	rmawin_ep_dbg(ep, "ring: %u entries, idle %u us, poller %d\n", s->sq_entries,
		      s->idle_us, rmawin_poller_id(ring));
out_unlock:
	mutex_unlock(&ep->lock);
	return ret;
}

/*
 * RMAWIN_ENTER_SUBMIT: run what is queued in the caller's system call.  At
 * most one ring's worth, so that a thread that keeps submitting cannot
 * hold the caller here.  Return: 0; -EPERM from a process other than the
 * ring's owner; -EBUSY if entries remain because the completion ring is
 * full; -ENODEV if the ring died meanwhile.
 */
static int rmawin_ring_submit(struct rmawin_ring *ring)
{
	u32 done = 0;
	int n;

	if (current->mm != ring->mm)
		return -EPERM;
	while (done < ring->sq_entries && (n = rmawin_ring_consume(ring, false)) > 0)
		done += n;
	if (READ_ONCE(ring->flags) & RMAWIN_SQ_DEAD)
		return -ENODEV;
	/* acquire: pairs with the submitter's store-release of its tail */
	if (smp_load_acquire(ring->sq_tail) != READ_ONCE(ring->head) &&
	    !rmawin_ring_cq_room(ring))
		return -EBUSY;
	return 0;
}

/**
 * rmawin_ioctl_ring_enter() - RMAWIN_IOC_RING_ENTER
 * @ep: the endpoint
 * @arg: struct rmawin_ring_enter, already copied in
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_ring_enter(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_ring_enter *e = arg;
	/* acquire: pairs with the store-release that published the ring */
	struct rmawin_ring *ring = smp_load_acquire(&ep->ring);
	int ret;

	if (e->flags & ~(RMAWIN_ENTER_WAKEUP | RMAWIN_ENTER_SUBMIT))
		return -EINVAL;
	if (!ring)
		return -ENXIO;
	if (READ_ONCE(ring->flags) & RMAWIN_SQ_DEAD)
		return -ENODEV;
	if (e->flags & RMAWIN_ENTER_SUBMIT) {
		ret = rmawin_ring_submit(ring);
		if (ret)
			return ret;
	}
	if (e->flags & RMAWIN_ENTER_WAKEUP)
		rmawin_poller_wake(ring, e->flags & RMAWIN_ENTER_SUBMIT);
	return 0;
}

/**
 * rmawin_ring_mmap() - map the rings
 * @ep: the endpoint
 * @vma: a shared mapping at RMAWIN_RING_MMAP_OFFSET, of the ring's size
 *
 * Return: 0; -EINVAL for a private mapping, a wrong size or no ring.
 */
int rmawin_ring_mmap(struct rmawin_ep *ep, struct vm_area_struct *vma)
{
	struct rmawin_ring *ring;
	int ret = -EINVAL;
	size_t off;

	/* set once, freed with the endpoint: no lock (mmap_lock is held) */
	ring = smp_load_acquire(&ep->ring);
	if (ring && (vma->vm_flags & VM_SHARED) &&
	    vma->vm_end - vma->vm_start == ring->len) {
		/*
		 * Not inherited by fork(): the poller works in the address
		 * space of the process that set the ring up, and must never
		 * be handed addresses of another.
		 */
		vma->vm_flags |= VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP;
		/* and madvise(MADV_DOFORK) may not undo it */
		vma->vm_flags |= VM_IO;
		/* page by page, as remap_vmalloc_range() does for vmalloc_user() memory */
		for (off = 0, ret = 0; off < ring->len && !ret; off += PAGE_SIZE)
			ret = vm_insert_page(vma, vma->vm_start + off,
					     vmalloc_to_page(ring->mem + off));
	}
	return ret;
}

/**
 * rmawin_ring_stop() - take the endpoint's ring from its poller, for good
 * @ep: the endpoint
 *
 * The rings stay mapped and say RMAWIN_SQ_DEAD; the memory goes with the
 * endpoint.  Context: process context, endpoint lock not held (the poller
 * takes it).
 */
void rmawin_ring_stop(struct rmawin_ep *ep)
{
	/* acquire: pairs with the store-release that published the ring */
	struct rmawin_ring *ring = smp_load_acquire(&ep->ring);

	if (!ring)
		return;
	rmawin_poller_detach(ring);
	/* under the lock: a doorbell's rmawin_ring_consume() checks it there */
	mutex_lock(&ep->lock);
	rmawin_ring_set_flags(ring, RMAWIN_SQ_DEAD, RMAWIN_SQ_NEED_WAKEUP | RMAWIN_SQ_YIELDED);
	mutex_unlock(&ep->lock);
}

/**
 * rmawin_ring_destroy() - free the rings of an endpoint being freed
 * @ep: the endpoint: its file is gone (so is every mapping of it) and
 *	nobody else holds it
 */
void rmawin_ring_destroy(struct rmawin_ep *ep)
{
	if (!ep->ring)
		return;
	rmawin_ring_stop(ep);
	rmawin_ring_free(ep->ring);
	ep->ring = NULL;
}

/**
 * rmawin_ring_poller_of() - the id of the poller consuming an endpoint's ring
 * @ep: the endpoint
 *
 * Return: the id (the number in the thread's name), or -1 for none.
 */
int rmawin_ring_poller_of(struct rmawin_ep *ep)
{
	/* acquire: pairs with the store-release that published the ring */
	struct rmawin_ring *ring = smp_load_acquire(&ep->ring);

	return ring ? rmawin_poller_id(ring) : -1;
}
