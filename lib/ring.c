// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The zero-syscall path: operations go into the endpoint's mmap'd
 * submission ring, the kernel's poller runs them, and their results come
 * back in the completion ring.  A call (or a batch, a ring's worth at a
 * time) waits for its own completions by spinning on the completion tail,
 * so every function keeps the ioctl path's meaning exactly (errors
 * included); the only system call is the
 * doorbell for a poller that sleeps, after its idle time or because its
 * CPU had other work, and that doorbell runs the entry itself.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rmawin_priv.h"

struct rmawin__ring {
	void *map;
	size_t map_len;
	uint32_t *sq_head;
	uint32_t *sq_tail;
	uint32_t *sq_flags;
	uint32_t *cq_head;
	uint32_t *cq_tail;
	struct rmawin_op_desc *sqes;
	struct rmawin_cqe *cqes;
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint32_t tail;		/* our copy of the submission tail */
	uint32_t chead;		/* our copy of the completion head */
	int busy;		/* one submitter at a time */
	int dead;		/* the poller is gone: everything by ioctl */
	int done;		/* and what was left has been run: never read again */
	unsigned long forks;	/* rmawin_forks when it was set up */
	unsigned long wakeups;	/* doorbells rung */
};

/*
 * The poller works in the address space of the process that set the ring
 * up: a forked child must not hand it addresses of its own, so a ring is
 * only used by the process (generation of forks) that made it.  Counted in
 * an atfork handler rather than compared with getpid(), which is a system
 * call.
 */
static unsigned long rmawin_forks;
static pthread_once_t rmawin_atfork_once = PTHREAD_ONCE_INIT;

static void rmawin_count_fork(void)
{
	rmawin_forks++;
}

static void rmawin_atfork_init(void)
{
	pthread_atfork(NULL, NULL, rmawin_count_fork);
}

/*
 * Spins of a wait between two looks at the poller's flag.  The kernel
 * clears RMAWIN_SQ_NEED_WAKEUP when a doorbell wakes the poller, so a
 * flag still set after a doorbell means the doorbell ran the entries
 * itself (a poller without a CPU of its own is left asleep for a while)
 * or the poller went back to sleep: ring again.
 */
#define RMAWIN_RING_REWAKE_SPINS	(1UL << 10)

static int rmawin_no_ring_env(void)
{
	const char *v = getenv("RMAWIN_NO_RING");

	return v && *v && strcmp(v, "0");
}

/**
 * rmawin__ring_setup() - set up the endpoint's rings, if it may have them
 * @ep: an endpoint in its group
 *
 * Not having a ring is not an error: RMAWIN_EP_NO_RING, RMAWIN_NO_RING=1
 * or a kernel without it leave @ep->ring NULL and every call an ioctl.
 *
 * Return: 0, or a negative errno for a failure that is not "no ring".
 */
int rmawin__ring_setup(struct rmawin_ep *ep)
{
	struct rmawin_ring_setup s;
	struct rmawin__ring *r;
	char *m;
	int ret;

	if ((ep->flags & RMAWIN_EP_NO_RING) || rmawin_no_ring_env())
		return 0;
	pthread_once(&rmawin_atfork_once, rmawin_atfork_init);
	memset(&s, 0, sizeof(s));
	ret = rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_RING_SETUP, &s);
	if (ret == -ENOTTY || ret == -ENOTCONN)
		return 0;	/* an older kernel; a group of one without join */
	if (ret)
		return ret;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	m = mmap(NULL, s.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, ep->fd,
		 (off_t)s.mmap_offset);
	if (m == MAP_FAILED) {
		free(r);
		return -errno;
	}
	r->map = m;
	r->map_len = s.mmap_len;
	r->sq_head = (uint32_t *)(m + s.off.sq_head);
	r->sq_tail = (uint32_t *)(m + s.off.sq_tail);
	r->sq_flags = (uint32_t *)(m + s.off.sq_flags);
	r->cq_head = (uint32_t *)(m + s.off.cq_head);
	r->cq_tail = (uint32_t *)(m + s.off.cq_tail);
	r->sqes = (struct rmawin_op_desc *)(m + s.off.sqes);
	r->cqes = (struct rmawin_cqe *)(m + s.off.cqes);
	r->sq_entries = s.sq_entries;
	r->cq_entries = s.cq_entries;
	r->tail = *r->sq_tail;
	r->chead = *r->cq_head;
	r->forks = rmawin_forks;
	ep->ring = r;
	return 0;
}

void rmawin__ring_free(struct rmawin_ep *ep)
{
	if (!ep->ring)
		return;
	munmap(ep->ring->map, ep->ring->map_len);
	free(ep->ring);
	ep->ring = NULL;
}

static inline void rmawin_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/*
 * The doorbell, for a poller that sleeps.  Queued operations only wake it
 * (@flags RMAWIN_ENTER_WAKEUP): the poller runs them, and the caller goes
 * on.  A caller about to wait for everything (a flush, a synchronization)
 * also has the entries run in its own system call (RMAWIN_ENTER_SUBMIT),
 * which is quicker than a sleeping poller's wake-up.
 */
static void rmawin_ring_wake(struct rmawin_ep *ep, uint32_t flags)
{
	struct rmawin_ring_enter e = { .flags = flags };

	ep->ring->wakeups++;
	if (rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_RING_ENTER, &e) == -ENODEV)
		ep->ring->dead = 1;
}

/* One submitter at a time: the submission tail and the completion head are ours. */
static void rmawin_ring_lock(struct rmawin__ring *r)
{
	while (__atomic_exchange_n(&r->busy, 1, __ATOMIC_ACQUIRE))
		rmawin_cpu_relax();
}

static void rmawin_ring_unlock(struct rmawin__ring *r)
{
	__atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
}

/*
 * user_data of an operation whose caller waits for it: RMAWIN_UD_WAIT and
 * its index.  A queued one's: its window's id, and above it the low bits of
 * the ticket (rma.c) of the call that queued it.
 */
#define RMAWIN_UD_WAIT		(1ULL << 63)
#define RMAWIN_UD_TICKET_SHIFT	32

static uint64_t rmawin_ud_queued(const struct rmawin_op_desc *op, uint64_t ticket)
{
	return op->win | rmawin__ticket_lo(ticket) << RMAWIN_UD_TICKET_SHIFT;
}

/*
 * The result of one operation: a waited one's error goes to *@res (the
 * first), a queued one's to its window, for its next synchronization.  A
 * queued one that left its window quiet (RMAWIN_CQE_F_QUIET) may spare
 * the window's next flush (rmawin__issue_quiet()).
 */
static void rmawin_ring_result(struct rmawin_ep *ep, const struct rmawin_cqe *cqe, int *wres)
{
	uint64_t ud = cqe->user_data;

	if (ud & RMAWIN_UD_WAIT) {
		if (cqe->res && wres && !*wres)
			*wres = cqe->res;
		return;
	}
	if (cqe->res)
		rmawin__win_error(ep, (uint32_t)ud, cqe->res);
	else if (cqe->flags & RMAWIN_CQE_F_QUIET)
		rmawin__issue_quiet(ep, (uint32_t)ud, ud >> RMAWIN_UD_TICKET_SHIFT);
}

/*
 * Take every completion there is.  Return: false if there is nothing more
 * to take, ever: the kernel dropped the ring, or its poller died and what
 * it left was run by ioctl.
 */
static int rmawin_ring_reap(struct rmawin_ep *ep, int *wres)
{
	struct rmawin__ring *r = ep->ring;
	struct rmawin_cqe *cqe;

	if (r->done)
		return 0;
	/* pairs with the kernel's store-release of the tail */
	while (__atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) != r->chead) {
		cqe = &r->cqes[r->chead & (r->cq_entries - 1)];
		r->chead++;
		if (cqe->flags & RMAWIN_CQE_F_RING) {
			/* the kernel dropped the ring: we never write one like that */
			r->dead = 1;
			r->done = 1;
			r->chead = r->tail;
			if (wres && !*wres)
				*wres = -EIO;
			rmawin__wins_error(ep, -EIO);
			return 0;
		}
		rmawin_ring_result(ep, cqe, wres);
		/* after reading the entry: it may be written again once we move */
		__atomic_store_n(r->cq_head, r->chead, __ATOMIC_RELEASE);
	}
	return 1;
}

/*
 * The poller is gone: run by ioctl what it never took, in order, and
 * count it done.  Consumed submissions always got their completion first.
 */
static void rmawin_ring_orphans(struct rmawin_ep *ep, int *wres)
{
	struct rmawin__ring *r = ep->ring;
	struct rmawin_cqe cqe = { 0 };
	struct rmawin_op_desc op;
	struct rmawin_rma rma;

	r->dead = 1;
	while (r->chead != r->tail) {
		op = r->sqes[r->chead & (r->sq_entries - 1)];
		memset(&rma, 0, sizeof(rma));
		rma.ops_ptr = (uintptr_t)&op;
		rma.nops = 1;
		rma.op_size = sizeof(op);
		cqe.user_data = op.user_data;
		cqe.res = rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_RMA, &rma);
		rmawin_ring_result(ep, &cqe, wres);
		r->chead++;
	}
	r->done = 1;
}

/*
 * Wait until every submission has its completion, taking them as they
 * come.  Ring lock held.
 */
static void rmawin_ring_settle(struct rmawin_ep *ep, int *wres)
{
	struct rmawin__ring *r = ep->ring;
	unsigned long spins = RMAWIN_RING_REWAKE_SPINS;
	uint32_t flags;

	for (;;) {
		if (!rmawin_ring_reap(ep, wres) || r->chead == r->tail)
			return;
		flags = __atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE);
		if (flags & RMAWIN_SQ_DEAD) {
			if (__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) == r->chead &&
			    __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) == r->chead) {
				rmawin_ring_orphans(ep, wres);
				return;
			}
			continue;
		}
		/*
		 * A sleeping poller with our entries unconsumed: run them in
		 * this system call, now and, should the flag stay set (the
		 * completion ring was full), again after a while.
		 */
		if (++spins >= RMAWIN_RING_REWAKE_SPINS) {
			spins = 0;
			if ((flags & RMAWIN_SQ_NEED_WAKEUP) &&
			    __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) != r->tail)
				rmawin_ring_wake(ep, RMAWIN_ENTER_WAKEUP | RMAWIN_ENTER_SUBMIT);
		}
		rmawin_cpu_relax();
	}
}

/* Can this process use the ring at all? */
static int rmawin_ring_usable(const struct rmawin__ring *r)
{
	return r && !r->dead && r->forks == rmawin_forks;
}

/* Write one entry and publish it; the caller made sure there is room. */
static void rmawin_ring_push(struct rmawin__ring *r, const struct rmawin_op_desc *op,
			     uint64_t user_data)
{
	struct rmawin_op_desc *slot = &r->sqes[r->tail & (r->sq_entries - 1)];

	*slot = *op;
	slot->user_data = user_data;
	r->tail++;
	/* the entry before the tail that publishes it */
	__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_RELEASE);
}

/* Tail, full barrier, flag: pairs with the poller's flag, barrier, tail. */
static int rmawin_ring_sleeping(const struct rmawin__ring *r)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(r->sq_flags, __ATOMIC_RELAXED) & RMAWIN_SQ_NEED_WAKEUP;
}

/**
 * rmawin__ring_queue() - queue one operation without waiting for it
 * @ep: the endpoint
 * @op: the descriptor; its checks that the library can make were made
 * @ticket: the ticket of the call (rmawin__issue_begin())
 *
 * Its result comes back later, at the next reaping: an error is kept for
 * its window's next synchronization.  Waits only for room, taking
 * completions meanwhile.  A sleeping poller is woken (NEED_WAKEUP), never
 * made to run the entry in this thread's system call.
 *
 * Return: 1 if queued; 0 if the ring cannot take it (none, dead, another
 * process's): the caller drains and uses the ioctl.
 */
int rmawin__ring_queue(struct rmawin_ep *ep, const struct rmawin_op_desc *op, uint64_t ticket)
{
	struct rmawin__ring *r = ep->ring;
	unsigned long spins = 0;
	uint32_t flags;

	if (!rmawin_ring_usable(r))
		return 0;
	rmawin_ring_lock(r);
	for (;;) {
		if (!rmawin_ring_reap(ep, NULL) || r->dead)
			goto out_unusable;
		/* a poller that is gone takes nothing more: the caller goes to the kernel */
		flags = __atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE);
		if (flags & RMAWIN_SQ_DEAD)
			goto out_unusable;
		if (r->tail - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) < r->sq_entries)
			break;
		/* full: the poller must take some; wake it if it sleeps */
		if ((flags & RMAWIN_SQ_NEED_WAKEUP) && !(spins++ % RMAWIN_RING_REWAKE_SPINS))
			rmawin_ring_wake(ep, RMAWIN_ENTER_WAKEUP);
		rmawin_cpu_relax();
	}
	rmawin_ring_push(r, op, rmawin_ud_queued(op, ticket));
	/*
	 * A sleeping poller is woken at once: the caller may wait for the
	 * operation's effect without calling the library again (a peer's
	 * reply to it, say), so it must not sit in the ring until the ring
	 * fills or a synchronization comes.  A lone operation is run in this
	 * system call as well: a poller that sleeps because its CPU is taken
	 * would make a ping-pong wait for a time slice.
	 */
	if (rmawin_ring_sleeping(r))
		rmawin_ring_wake(ep, r->tail - 1 == __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) ?
				 RMAWIN_ENTER_WAKEUP | RMAWIN_ENTER_SUBMIT : RMAWIN_ENTER_WAKEUP);
	rmawin_ring_unlock(r);
	return 1;

out_unusable:
	rmawin_ring_unlock(r);
	return 0;
}

/**
 * rmawin__ring_bypass() - should the next operation go by ioctl instead?
 * @ep: the endpoint
 *
 * Yes while the poller sleeps because another task wanted its CPU
 * (RMAWIN_SQ_YIELDED) and every submission of ours has run and been
 * reaped: the doorbell would run the entry in this thread's system call
 * anyway, and RMAWIN_IOC_RMA does that with a copy less and can say
 * whether the window is quiet.  Nothing queued is overtaken.
 *
 * Return: 1 to use the ioctl, 0 to use the ring.
 */
int rmawin__ring_bypass(struct rmawin_ep *ep)
{
	struct rmawin__ring *r = ep->ring;
	int ret;

	if (!rmawin_ring_usable(r) ||
	    !(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) & RMAWIN_SQ_YIELDED))
		return 0;
	rmawin_ring_lock(r);
	ret = rmawin_ring_reap(ep, NULL) && r->chead == r->tail;
	rmawin_ring_unlock(r);
	return ret;
}

/**
 * rmawin__ring_taken() - has the kernel taken every entry queued so far?
 * @ep: the endpoint
 *
 * Asked after rmawin__issue_begin() and before an ioctl whose answer
 * says whether a window is quiet: the entries queued by calls that ended
 * before ours began are in the tail we read, and the poller runs an entry
 * before it moves the head past it, under the endpoint's kernel lock that
 * the ioctl takes too.  An entry that is queued but not taken would be
 * missed by that answer.
 *
 * Return: 1 if there is nothing the kernel has not taken (or no ring); 0
 * if there may be, or if the ring is another process's.
 */
int rmawin__ring_taken(const struct rmawin_ep *ep)
{
	const struct rmawin__ring *r = ep->ring;
	uint32_t tail;

	if (!r)
		return 1;
	if (r->forks != rmawin_forks)
		return 0;
	tail = __atomic_load_n(r->sq_tail, __ATOMIC_ACQUIRE);
	return __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) == tail;
}

/**
 * rmawin__ring_drain() - wait until every queued operation has run
 * @ep: the endpoint
 *
 * Before any system call that synchronizes, so that the kernel has seen
 * everything queued before it.  Errors go to the operations' windows.
 */
void rmawin__ring_drain(struct rmawin_ep *ep)
{
	struct rmawin__ring *r = ep->ring;

	if (!r || r->forks != rmawin_forks)
		return;
	rmawin_ring_lock(r);
	rmawin_ring_settle(ep, NULL);
	rmawin_ring_unlock(r);
}

/**
 * rmawin__ring_catch_up() - take the completions of what is queued, if the
 *	poller is awake to give them
 * @ep: the endpoint
 *
 * Before a flush looks whether its window is quiet (RMAWIN_CQE_F_QUIET):
 * it spins while the poller runs the entries, which costs no system call.
 * It stops at once when the poller sleeps: the flush's own path then
 * rings one doorbell that runs the entries and the flush together.
 */
void rmawin__ring_catch_up(struct rmawin_ep *ep)
{
	struct rmawin__ring *r = ep->ring;

	if (!rmawin_ring_usable(r))
		return;
	rmawin_ring_lock(r);
	while (rmawin_ring_reap(ep, NULL) && r->chead != r->tail &&
	       !(__atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE) &
		 (RMAWIN_SQ_NEED_WAKEUP | RMAWIN_SQ_DEAD)))
		rmawin_cpu_relax();
	rmawin_ring_unlock(r);
}

/**
 * rmawin__ring_run() - run operations through the ring and wait for them
 * @ep: the endpoint, with a ring
 * @ops: the descriptors
 * @n: how many
 * @res: out: the first error among them, as RMAWIN_IOC_RMA would return
 *	it for each alone; 0 if none failed
 *
 * A ring's worth at a time, after what was queued before them, with a
 * doorbell that runs them in this system call if the poller sleeps.
 *
 * The caller has decided that the ring should take them: a single
 * operation goes by ioctl instead while the poller yields
 * (rmawin__ring_bypass()), which the caller asks once; several are run
 * here even then.
 *
 * Return: how many of @ops (from the first) were run, by the poller or,
 * if it died meanwhile, by ioctl; the caller runs the rest by ioctl.  0
 * if the ring cannot take them.
 */
unsigned int rmawin__ring_run(struct rmawin_ep *ep, struct rmawin_op_desc *ops, unsigned int n,
			      int *res)
{
	struct rmawin__ring *r = ep->ring;
	unsigned int done = 0, k, chunk;

	*res = 0;
	if (!rmawin_ring_usable(r))
		return 0;
	rmawin_ring_lock(r);
	while (done < n) {
		/* everything before settled: the whole ring is free */
		rmawin_ring_settle(ep, res);
		if (r->dead)
			break;
		chunk = n - done < r->sq_entries ? n - done : r->sq_entries;
		for (k = 0; k < chunk; k++)
			rmawin_ring_push(r, &ops[done + k], RMAWIN_UD_WAIT | (done + k));
		done += chunk;
		if (!r->dead && rmawin_ring_sleeping(r))
			rmawin_ring_wake(ep, RMAWIN_ENTER_WAKEUP | RMAWIN_ENTER_SUBMIT);
	}
	rmawin_ring_settle(ep, res);
	rmawin_ring_unlock(r);
	return done;
}

/* Doorbells rung so far: the NEED_WAKEUP protocol's only system calls. */
unsigned long rmawin_ep_ring_wakeups(const struct rmawin_ep *ep)
{
	return ep && ep->ring ? ep->ring->wakeups : 0;
}

int rmawin_ep_ring_active(const struct rmawin_ep *ep)
{
	if (!ep)
		return -EINVAL;
	return ep->ring && !ep->ring->dead && ep->ring->forks == rmawin_forks;
}
