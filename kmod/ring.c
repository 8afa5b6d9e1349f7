// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: the zero-syscall path.  A submission ring of operation
 * descriptors (the very struct RMAWIN_IOC_RMA takes) and a completion ring,
 * in memory the process maps, and a kernel thread per endpoint, the
 * poller, that consumes the submission ring while there is work and runs
 * each entry through the same code as the ioctl.
 *
 * Nothing userspace writes is trusted: the poller keeps its own copy of
 * the submission head, reads the tail once per pass and checks it is at
 * most a ring ahead, masks every index, and copies each descriptor out of
 * the shared page before looking at it.  Userspace can only make its own
 * operations fail.
 *
 * The poller runs in the owner's address space (kthread_use_mm) while it
 * is awake, so that origin buffers are read and results written exactly
 * as the ioctl does, but it never pins: see rmawin_ring_setup's comment in
 * the uapi header.  After idle_us with nothing to do it sets
 * RMAWIN_SQ_NEED_WAKEUP and sleeps; RMAWIN_IOC_RING_ENTER wakes it.  Both
 * sides order "publish my index, full barrier, read the other's" so that a
 * submission is never left in a sleeping ring.
 *
 * The poller only spins while it has its CPU to itself (KVM's halt polling
 * asks the same question, single_task_running()): a poller that shares
 * its CPU with the very process waiting on it only delays that process by
 * a time slice.  It sleeps instead, and the doorbell, RMAWIN_ENTER_SUBMIT,
 * runs the queued entries in the submitter's own system call; the poller is
 * woken again when it went to sleep idle, or when it last gave its CPU
 * away more than RMAWIN_RING_REPROBE_NS ago.
 */
#include <linux/kthread.h>
#include <linux/cgroup.h>
#include <linux/vmalloc.h>
#include <linux/sched/mm.h>
#include <linux/sched/stat.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "rmawin.h"

#define RMAWIN_RING_DEFAULT_SQ		256
#define RMAWIN_RING_MAX_SQ		4096
#define RMAWIN_RING_DEFAULT_IDLE_US	1000
#define RMAWIN_RING_MAX_IDLE_US		1000000
/* entries per pass under the endpoint's lock, so the owner's ioctls get in */
#define RMAWIN_RING_BATCH		32
/* a poller that gave its CPU away is tried again after this long */
#define RMAWIN_RING_REPROBE_NS		(2 * NSEC_PER_MSEC)

/* Each shared index on its own cache line; the descriptors start after. */
#define RMAWIN_RING_LINE		64
#define RMAWIN_RING_SQES_OFF		(8 * RMAWIN_RING_LINE)

/**
 * struct rmawin_ring - an endpoint's rings and poller
 * @ep: the endpoint; release stops the poller before it lets go of it
 * @mem: the shared pages (vmalloc_user), @len bytes
 * @len: bytes mapped
 * @sq_head: shared: consumed submissions
 * @sq_tail: shared, written by userspace: submissions written
 * @sq_flags: shared: RMAWIN_SQ_*
 * @cq_head: shared, written by userspace: completions read
 * @cq_tail: shared: completions written
 * @sqes: shared: the descriptor array
 * @cqes: shared: the completion array
 * @sq_entries: number of submission entries (a power of two)
 * @cq_entries: number of completion entries (a power of two)
 * @head: our own submission head (under the endpoint lock); the shared one
 *	is a copy
 * @ctail: our own completion tail (under the endpoint lock)
 * @flags: the poller's own copy of the flags
 * @idle_ns: spin this long with nothing to do before sleeping
 * @reprobe_ns: a doorbell that ran the entries itself wakes the sleeping
 *	poller only from this time on: 0 if it went to sleep idle, else
 *	RMAWIN_RING_REPROBE_NS after it gave its CPU to another task
 * @mm: the owner's address space (mmgrab'ed)
 * @poller: the thread, until rmawin_ring_stop() takes it
 * @wait: the sleeping poller waits here
 */
struct rmawin_ring {
	struct rmawin_ep *ep;
	void *mem;
	size_t len;
	u32 *sq_head;
	u32 *sq_tail;
	u32 *sq_flags;
	u32 *cq_head;
	u32 *cq_tail;
	struct rmawin_op_desc *sqes;
	struct rmawin_cqe *cqes;
	u32 sq_entries;
	u32 cq_entries;
	u32 head;
	u32 ctail;
	u32 flags;
	u64 idle_ns;
	u64 reprobe_ns;
	struct mm_struct *mm;
	struct task_struct *poller;
	wait_queue_head_t wait;
};

static void rmawin_ring_set_flags(struct rmawin_ring *ring, u32 set, u32 clear)
{
	WRITE_ONCE(ring->flags, (ring->flags | set) & ~clear);
	/* release: RMAWIN_SQ_DEAD follows the last completion it may have */
	smp_store_release(ring->sq_flags, ring->flags);
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

/* Work the poller can do now: submissions, and room for their completions. */
static bool rmawin_ring_has_work(struct rmawin_ring *ring)
{
	/* acquire: pairs with the submitter's store-release of its tail */
	return smp_load_acquire(ring->sq_tail) != READ_ONCE(ring->head) &&
	       rmawin_ring_cq_room(ring);
}

/*
 * One pass over the submission ring, by the poller or by a doorbell with
 * RMAWIN_ENTER_SUBMIT; the endpoint's lock makes them take turns.
 * Return: entries consumed.
 */
static int rmawin_ring_consume(struct rmawin_ring *ring)
{
	struct rmawin_ep *ep = ring->ep;
	struct rmawin_op_desc op;
	u32 tail, n = 0;
	int res;

	if (!rmawin_ring_has_work(ring))
		return 0;
	mutex_lock(&ep->lock);
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
		res = rmawin_op_run(ep, &op, true);
		WRITE_ONCE(ring->head, ring->head + 1);
		/* release: the slot was read before it is handed back */
		smp_store_release(ring->sq_head, ring->head);
		rmawin_ring_post(ring, op.user_data, res, 0);
		n++;
	}
	mutex_unlock(&ep->lock);
	return n;
}

/* Sleep until woken with work, or stopped. */
static void rmawin_ring_sleep(struct rmawin_ring *ring, bool mm_gone)
{
	DEFINE_WAIT(wait);

	prepare_to_wait(&ring->wait, &wait, TASK_INTERRUPTIBLE);
	rmawin_ring_set_flags(ring, RMAWIN_SQ_NEED_WAKEUP, 0);
	/* pairs with the submitter's barrier between its tail and its flag read */
	smp_mb();
	if (!kthread_should_stop() && (mm_gone || !rmawin_ring_has_work(ring)))
		schedule();
	finish_wait(&ring->wait, &wait);
	rmawin_ring_set_flags(ring, 0, RMAWIN_SQ_NEED_WAKEUP);
}

/* Enter the owner's address space; false if it is gone (the process exits). */
static bool rmawin_ring_use_mm(struct rmawin_ring *ring)
{
	if (!mmget_not_zero(ring->mm))
		return false;
	kthread_use_mm(ring->mm);
	return true;
}

static void rmawin_ring_unuse_mm(struct rmawin_ring *ring)
{
	kthread_unuse_mm(ring->mm);
	mmput(ring->mm);
}

static int rmawin_ring_poller(void *data)
{
	struct rmawin_ring *ring = data;
	u64 last = ktime_get_ns();
	bool in_mm = false, shared, idle;

	while (!kthread_should_stop()) {
		if (!in_mm)
			in_mm = rmawin_ring_use_mm(ring);
		if (in_mm && rmawin_ring_consume(ring)) {
			last = ktime_get_ns();
			cond_resched();
			continue;
		}
		/*
		 * Another task runnable here: one just woken (a kworker, a
		 * softirq thread) has need_resched() set and runs first at
		 * cond_resched(); one that has to wait for its turn is a
		 * competitor for the CPU, so give it up.  Polled with
		 * preemption on: a stale answer costs one more spin.
		 */
		shared = !single_task_running() && !need_resched();
		idle = ktime_get_ns() - last >= ring->idle_ns;
		if (in_mm && !idle && !shared) {
			cond_resched();
			cpu_relax();
			continue;
		}
		/* leave the address space, so the process can exit */
		if (in_mm)
			rmawin_ring_unuse_mm(ring);
		WRITE_ONCE(ring->reprobe_ns, in_mm && !idle ?
			   ktime_get_ns() + RMAWIN_RING_REPROBE_NS : 0);
		rmawin_ring_sleep(ring, !in_mm);
		in_mm = false;
		last = ktime_get_ns();
	}
	if (in_mm)
		rmawin_ring_unuse_mm(ring);
	return 0;
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
	ring->mem = vmalloc_user(ring->len);
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
	init_waitqueue_head(&ring->wait);
	s->mmap_offset = RMAWIN_RING_MMAP_OFFSET;
	s->mmap_len = ring->len;
	return ring;
}

static void rmawin_ring_free(struct rmawin_ring *ring)
{
	if (ring->mm)
		mmdrop(ring->mm);
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
	struct task_struct *task;
	struct rmawin_ring *ring;
	int ret;

	ret = rmawin_ring_args(s);
	if (ret)
		return ret;
	mutex_lock(&ep->lock);
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
	task = kthread_create(rmawin_ring_poller, ring, "rmawin_poll/%u", ep->id);
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		rmawin_ring_free(ring);
		goto out_unlock;
	}
	/*
	 * The poller works for this process: in its cgroups (CPU, memory),
	 * as vhost's workers are, so that nothing it does escapes them.
	 */
	ret = cgroup_attach_task_all(current, task);
	if (ret) {
		kthread_stop(task);
		rmawin_ring_free(ring);
		goto out_unlock;
	}
	get_task_struct(task);
	ring->poller = task;
	/* published whole: mmap and RING_ENTER read it without the lock */
	smp_store_release(&ep->ring, ring);
	wake_up_process(task);
	rmawin_ep_dbg(ep, "ring: %u entries, idle %u us\n", s->sq_entries, s->idle_us);
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
	while (done < ring->sq_entries && (n = rmawin_ring_consume(ring)) > 0)
		done += n;
	if (READ_ONCE(ring->flags) & RMAWIN_SQ_DEAD)
		return -ENODEV;
	/* acquire: pairs with the submitter's store-release of its tail */
	if (smp_load_acquire(ring->sq_tail) != READ_ONCE(ring->head) &&
	    !rmawin_ring_cq_room(ring))
		return -EBUSY;
	return 0;
}

/* After a doorbell did the work: wake the poller too, to poll again? */
static bool rmawin_ring_reprobe(struct rmawin_ring *ring)
{
	return ktime_get_ns() >= READ_ONCE(ring->reprobe_ns);
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
	if ((e->flags & RMAWIN_ENTER_WAKEUP) &&
	    (!(e->flags & RMAWIN_ENTER_SUBMIT) || rmawin_ring_reprobe(ring)))
		wake_up(&ring->wait);
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
		ret = remap_vmalloc_range(vma, ring->mem, 0);
	}
	return ret;
}

/**
 * rmawin_ring_stop() - stop the endpoint's poller, if it runs
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
	struct task_struct *task;

	if (!ring)
		return;
	task = xchg(&ring->poller, NULL);
	if (!task)
		return;
	kthread_stop(task);
	put_task_struct(task);
	/* under the lock: a doorbell's rmawin_ring_consume() checks it there */
	mutex_lock(&ep->lock);
	rmawin_ring_set_flags(ring, RMAWIN_SQ_DEAD, RMAWIN_SQ_NEED_WAKEUP);
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
