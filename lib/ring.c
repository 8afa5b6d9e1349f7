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

/* Spins of a completion wait before the doorbell is rung again, just in case */
#define RMAWIN_RING_REWAKE_SPINS	(1UL << 20)

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
 * The doorbell, for a poller that sleeps: it runs the queued entries in
 * this system call (a sleeping poller would take a wake-up and a context
 * switch longer) and lets the kernel decide whether to wake the poller.
 */
static void rmawin_ring_wake(struct rmawin_ep *ep)
{
	struct rmawin_ring_enter e = {
		.flags = RMAWIN_ENTER_WAKEUP | RMAWIN_ENTER_SUBMIT,
	};

	ep->ring->wakeups++;
	if (rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_RING_ENTER, &e) == -ENODEV)
		ep->ring->dead = 1;
}

/*
 * Reap the completions of every submission up to our tail.  Return: the
 * number of submissions since @first that were run (all of them, unless
 * the poller died first: the rest are the caller's to run by ioctl), with
 * *res the first error among them.
 */
static uint32_t rmawin_ring_wait(struct rmawin_ep *ep, uint32_t first, int *res)
{
	struct rmawin__ring *r = ep->ring;
	unsigned long spins = 0;
	struct rmawin_cqe *cqe;
	uint32_t flags;

	*res = 0;
	for (;;) {
		/* pairs with the kernel's store-release of the tail */
		while (__atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) != r->chead) {
			cqe = &r->cqes[r->chead & (r->cq_entries - 1)];
			r->chead++;
			__atomic_store_n(r->cq_head, r->chead, __ATOMIC_RELEASE);
			if (cqe->flags & RMAWIN_CQE_F_RING) {
				/* the kernel dropped the ring: we never write one like that */
				*res = -EIO;
				r->dead = 1;
				return r->tail - first;
			}
			if (cqe->res && !*res)
				*res = cqe->res;
		}
		/* one completion per submission, in order */
		if (r->chead == r->tail)
			return r->tail - first;
		flags = __atomic_load_n(r->sq_flags, __ATOMIC_ACQUIRE);
		if (flags & RMAWIN_SQ_DEAD) {
			r->dead = 1;
			/* consumed submissions always get their completion first */
			if (__atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) == r->chead) {
				r->tail = r->chead;
				return r->chead - first;
			}
			continue;
		}
		/*
		 * The doorbell at submission suffices: the poller never sleeps
		 * with work queued.  Ring again only after a long wait with our
		 * entries still unconsumed, as a safety net.
		 */
		if (++spins >= RMAWIN_RING_REWAKE_SPINS) {
			spins = 0;
			if ((flags & RMAWIN_SQ_NEED_WAKEUP) &&
			    __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE) != r->tail)
				rmawin_ring_wake(ep);
		}
		rmawin_cpu_relax();
	}
}

/**
 * rmawin__ring_run() - run operations through the ring
 * @ep: the endpoint, with a ring
 * @ops: the descriptors (their user_data is overwritten)
 * @n: how many
 * @res: out: the first error of those the ring ran, as RMAWIN_IOC_RMA would
 *	return it for each alone; 0 if none failed
 *
 * At most a ring's worth is queued at a time, with one doorbell if the
 * poller sleeps, and waited for.
 *
 * Return: how many of @ops (from the first) the ring ran; the caller runs
 * the rest by ioctl.  0 if the ring cannot (busy in another thread, or its
 * poller gone).
 */
unsigned int rmawin__ring_run(struct rmawin_ep *ep, struct rmawin_op_desc *ops, unsigned int n,
			      int *res)
{
	struct rmawin__ring *r = ep->ring;
	uint32_t first, k, chunk, ran;
	unsigned int done = 0;
	int err;

	*res = 0;
	if (r->dead || r->forks != rmawin_forks ||
	    __atomic_exchange_n(&r->busy, 1, __ATOMIC_ACQUIRE))
		return 0;
	while (done < n && !r->dead) {
		chunk = n - done < r->sq_entries ? n - done : r->sq_entries;
		first = r->tail;
		for (k = 0; k < chunk; k++) {
			ops[done + k].user_data = first + k;
			r->sqes[(first + k) & (r->sq_entries - 1)] = ops[done + k];
		}
		r->tail = first + chunk;
		/* the entries before the tail that publishes them */
		__atomic_store_n(r->sq_tail, r->tail, __ATOMIC_RELEASE);
		/* tail, full barrier, flag: pairs with the poller's flag, barrier, tail */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(r->sq_flags, __ATOMIC_RELAXED) & RMAWIN_SQ_NEED_WAKEUP)
			rmawin_ring_wake(ep);
		ran = rmawin_ring_wait(ep, first, &err);
		if (err && !*res)
			*res = err;
		done += ran;
		if (ran < chunk)
			break;
	}
	__atomic_store_n(&r->busy, 0, __ATOMIC_RELEASE);
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
