/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmawin: what an endpoint's rings (ring.c) and the poller threads that
 * consume them (poller.c) share, and nobody else needs.
 */
#ifndef RMAWIN_RING_H
#define RMAWIN_RING_H

#include <linux/rcupdate.h>
#include <linux/spinlock.h>

#include "rmawin.h"

struct rmawin_poller;

/**
 * struct rmawin_ring - an endpoint's rings
 * @ep: the endpoint; release detaches the ring from its poller before it
 *	lets go of it
 * @mem: the shared pages (vmalloc'ed, charged to the memory cgroup), @len
 *	bytes
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
 * @waiting: the poller left the entry at @head at the head of the ring,
 *	as one that would wait, since @waiting_since (jiffies); under the
 *	endpoint lock
 * @waiting_since: see @waiting
 * @flags_lock: serializes writers of @flags (the poller, the doorbell, stop)
 * @flags: our own copy of the flags
 * @idle_ns: the poller spins this long with nothing to do before it sleeps
 * @mm: the owner's address space (mmgrab'ed)
 * @cred: the owner's credentials when it set the ring up: the poller runs
 *	its entries with them, as io_uring's SQPOLL thread does
 * @mm_gone: the owner's address space is exiting: the poller skips the
 *	ring until its file is released (poller-private)
 * @pl: the poller consuming the ring, until rmawin_ring_stop(); RCU, so
 *	that a doorbell can wake it without a lock
 * @pl_node: in the poller's list, under its lock
 * @pl_leaving: being detached, under the poller's lock: the poller skips
 *	it, so that its detach, waiting for the consume under way to end,
 *	is not outrun by the next one
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
	bool waiting;
	unsigned long waiting_since;
	spinlock_t flags_lock;		/* writers of flags */
	u32 flags;
	u64 idle_ns;
	struct mm_struct *mm;
	const struct cred *cred;
	bool mm_gone;
	struct rmawin_poller __rcu *pl;
	struct list_head pl_node;
	bool pl_leaving;
};

/* ring.c, for the poller */
bool rmawin_ring_has_work(struct rmawin_ring *ring);
int rmawin_ring_consume(struct rmawin_ring *ring, bool poller);
void rmawin_ring_set_flags(struct rmawin_ring *ring, u32 set, u32 clear);

/* poller.c, for the rings */
int rmawin_poller_attach(struct rmawin_ring *ring);
void rmawin_poller_detach(struct rmawin_ring *ring);
bool rmawin_poller_wake(struct rmawin_ring *ring, bool submitted);
int rmawin_poller_id(struct rmawin_ring *ring);

#endif /* RMAWIN_RING_H */
