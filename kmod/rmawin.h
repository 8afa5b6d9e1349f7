/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmawin: private declarations shared by the module's files: the device,
 * the endpoint and what every layer uses (counters, waits, limits), and the
 * entry points of each file.  The layouts of a group and its peers
 * (group.h) and of a window and its operations in flight (req.h) follow
 * at the end, so that a file includes this header and nothing else.
 *
 * Lock order (outer to inner):
 *   rmawin_ep.lock -> rmawin_dev.ep_lock
 *   rmawin_devices_lock -> (nothing of ours)
 * The device-removal path never holds rmawin_dev.ep_lock while it takes an
 * endpoint's lock.
 */
#ifndef RMAWIN_PRIV_H
#define RMAWIN_PRIV_H

#include <linux/bottom_half.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/atomic.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/socket.h>
#include <linux/xarray.h>
#include <linux/uaccess.h>
#include <linux/scatterlist.h>
#include <linux/mmu_notifier.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <linux/rmawin.h>

#include "wire.h"

struct rmawin_group;
struct rmawin_peer;
struct mem_cgroup;

/**
 * enum rmawin_counter - what an endpoint counts (debugfs: rmawin/stats)
 * @RMAWIN_CNT_WINDOWS: windows alive
 * @RMAWIN_CNT_PINNED_PAGES: user pages pinned, by windows and by operations
 *	in flight
 * @RMAWIN_CNT_OPS: operations issued
 * @RMAWIN_CNT_ERRORS: operations failed
 * @RMAWIN_CNT_RCACHE_HITS: registration-cache lookups that found an entry
 * @RMAWIN_CNT_RCACHE_MISSES: lookups that pinned and registered anew
 * @RMAWIN_CNT_CTRL_MSGS: control messages sent
 * @RMAWIN_CNT_CTRL_MSGS_SOFTIRQ: control messages received and handled in
 *	the receive completion's softirq context, without the receive work
 * @RMAWIN_CNT_AUTH_FAILURES: connections refused by the handshake
 * @RMAWIN_CNT_PROTO_ERRORS: peers cut off for an invalid message
 * @RMAWIN_CNT_NOTIFY_LOST: notifications a full queue could not hold
 * @RMAWIN_CNT_NIC_ATOMICS: atomic work requests posted (atomic.c)
 * @RMAWIN_CNT_POLL_NS: time a poller spent on the endpoint's ring (ns)
 * @RMAWIN_CNT_RING_ENTRIES: submission ring entries run (by the poller or
 *	a doorbell)
 * @RMAWIN_CNT_SEND_CQES_DIRECT: send completions handled by the system call
 *	that posted, right after its post (scq.c)
 * @RMAWIN_CNT_SEND_CQES_SOFTIRQ: send completions handled in softirq
 *	context, after the device signalled them
 * @RMAWIN_CNT_REQ_ALLOCS: operation requests allocated (none finished was
 *	left to reuse)
 * @RMAWIN_CNT_EARLY_COMPLETES: access epochs (PSCW's, fences') whose
 *	COMPLETE or barrier messages went behind their puts and gets on the
 *	same queue pairs, before these completed (pscw.c, sync.c)
 * @RMAWIN_CNT_CARRIED_OPS: operations sent in their epoch's COMPLETE
 *	message (RMAWIN_OP_F_EPOCH_COMPLETE, pscw.c)
 * @RMAWIN_CNT_KEEPALIVES: probes sent to quiet peers during long waits
 *	for them (rmawin_keepalive())
 * @RMAWIN_NR_COUNTERS: the number of counters
 */
enum rmawin_counter {
	RMAWIN_CNT_WINDOWS,
	RMAWIN_CNT_PINNED_PAGES,
	RMAWIN_CNT_OPS,
	RMAWIN_CNT_ERRORS,
	RMAWIN_CNT_RCACHE_HITS,
	RMAWIN_CNT_RCACHE_MISSES,
	RMAWIN_CNT_CTRL_MSGS,
	RMAWIN_CNT_CTRL_MSGS_SOFTIRQ,
	RMAWIN_CNT_AUTH_FAILURES,
	RMAWIN_CNT_PROTO_ERRORS,
	RMAWIN_CNT_NOTIFY_LOST,
	RMAWIN_CNT_NIC_ATOMICS,
	RMAWIN_CNT_POLL_NS,
	RMAWIN_CNT_RING_ENTRIES,
	RMAWIN_CNT_SEND_CQES_DIRECT,
	RMAWIN_CNT_SEND_CQES_SOFTIRQ,
	RMAWIN_CNT_REQ_ALLOCS,
	RMAWIN_CNT_EARLY_COMPLETES,
	RMAWIN_CNT_CARRIED_OPS,
	RMAWIN_CNT_KEEPALIVES,
	RMAWIN_NR_COUNTERS,
};

/**
 * struct rmawin_counters - one CPU's share of a set of counters
 * @c: one per enum rmawin_counter
 *
 * Counted per CPU (this_cpu_add(), no atomic instruction, safe in every
 * context) and summed when read (rmawin_counter_read()): operations
 * count several things each, on every path.
 */
struct rmawin_counters {
	long c[RMAWIN_NR_COUNTERS];
};

/**
 * struct rmawin_dev - an RDMA device rmawin's ib_client was given
 * @ibdev: the device; valid until our remove() callback returns
 * @node: entry in rmawin_devices, under rmawin_devices_lock
 * @ref: the device's lifetime; endpoints bound to it hold a reference
 * @ep_lock: protects @eps and @dead
 * @eps: endpoints bound to this device, via rmawin_ep.dev_node
 * @dead: set by remove(); no endpoint may bind any more
 */
struct rmawin_dev {
	struct ib_device *ibdev;
	struct list_head node;
	struct kref ref;
	struct mutex ep_lock;		/* protects eps and dead */
	struct list_head eps;
	bool dead;
};

/**
 * struct rmawin_ep - an endpoint: the state behind one open /dev/rmawin
 * @ref: the endpoint's lifetime (the file, and device removal in flight)
 * @lock: serializes ioctls against each other and against device removal
 * @id: unique id, for debug output
 * @dev: bound device, or NULL before EP_BIND and after the device left
 * @dev_node: entry in @dev's endpoint list
 * @pd: protection domain on @dev
 * @port: port of @dev the endpoint uses
 * @detached: the bound device was removed; calls needing it get -ENODEV
 * @group: the group joined, or NULL
 * @wq: woken on every event a blocked ioctl may wait for (connections,
 *	messages, completions, failures, device removal)
 * @wins: windows by handle
 * @next_win: handle of the next window created (the same on every rank,
 *	since creation is collective and ordered)
 * @kmems: pages of allocated windows, by handle, for mmap()
 * @counters: this endpoint's share of the counters in struct rmawin_stats,
 *	per CPU
 * @debugfs: its file under /sys/kernel/debug/rmawin/
 * @pid: the process that opened it
 * @owner: its mm (grabbed): the only one whose calls the endpoint takes
 * @memcg: its memory cgroup, charged for what peers make us allocate
 * @reapable: operations complete and not yet reaped, on any window
 * @notify_lock: protects @notify_q
 * @notify_q: notifications of notified puts, oldest first
 * @notify_lost: notifications dropped since a NOTIFY_WAIT last said so
 * @ring: the zero-syscall rings, or NULL; set once under @lock, freed
 *	with the endpoint
 * @closing: the file is being released: every wait on @wq ends (the
 *	ring's poller, a kthread, gets no fatal signal to end them)
 * @req_free: requests reaped and kept for the next operations (at most
 *	RMAWIN_REQ_CACHE), under @lock; reaped into when it runs dry, so
 *	that operations allocate only as many as are in flight at once
 * @nreq_free: entries of @req_free
 * @coll: one collective call (barrier, fence, window creation and free) at
 *	a time, so that every rank runs them in one order; taken before @lock
 * @sleepers: threads inside a call that wait for peers without @lock
 *	(rmawin_wait_unlocked()), under @lock: the group stays while any does
 * @unwait: the group is being torn down under sleepers: their waits end
 */
struct rmawin_ep {
	struct kref ref;
	struct mutex lock;		/* ioctls vs each other and device removal */
	u32 id;
	struct rmawin_dev *dev;
	struct list_head dev_node;
	struct ib_pd *pd;
	u32 port;
	bool detached;
	struct rmawin_group *group;
	wait_queue_head_t wq;
	struct xarray wins;
	u32 next_win;
	struct xarray kmems;
	struct rmawin_counters __percpu *counters;
	struct dentry *debugfs;
	struct pid *pid;
	struct mm_struct *owner;
	struct mem_cgroup *memcg;
	atomic_t reapable;
	spinlock_t notify_lock;		/* notify_q */
	struct list_head notify_q;
	atomic_t notify_lost;
	struct rmawin_ring *ring;
	bool closing;
	struct list_head req_free;
	u32 nreq_free;
	struct mutex coll;		/* collectives, one at a time */
	u32 sleepers;
	bool unwait;
};

/*
 * Wait on the endpoint's queue until @cond, a fatal signal, or the
 * endpoint's release: 0 for @cond, -EINTR for the other two.  Every
 * unbounded wait of the module goes through it, so that neither a caller
 * nor the ring's poller can outlive a close().
 */
#define rmawin_wait_event(ep, cond)						\
({									\
	struct rmawin_ep *__ep = (ep);					\
									\
	wait_event_killable(__ep->wq, (cond) || READ_ONCE(__ep->closing)) ?:	\
	(READ_ONCE(__ep->closing) ? -EINTR : 0);			\
})

/*
 * rmawin_wait_event() for at most @timeout jiffies (MAX_SCHEDULE_TIMEOUT:
 * no limit): 0 for @cond, -EINTR as there, 1 if the time ran out first.
 */
#define rmawin_wait_event_timeout(ep, cond, timeout)				\
({									\
	struct rmawin_ep *__tep = (ep);					\
	long __tleft;							\
									\
	__tleft = wait_event_killable_timeout(__tep->wq,		\
			(cond) || READ_ONCE(__tep->closing), (timeout));	\
	__tleft < 0 || READ_ONCE(__tep->closing) ? -EINTR : __tleft ? 0 : 1;	\
})

/*
 * How long a wait on peers polls before it sleeps (rmawin_wait_unlocked()):
 * the module parameter wait_spin_us, at most RMAWIN_WAIT_SPIN_MAX_US.
 */
#define RMAWIN_WAIT_SPIN_US		1000
#define RMAWIN_WAIT_SPIN_MAX_US		100000
u64 rmawin_wait_spin_ns(void);

/*
 * How long a wait on peers goes without a word from them before it probes
 * them (rmawin_keepalive()): the module parameter keepalive_ms, 0 for
 * never, at most RMAWIN_KEEPALIVE_MAX_MS.
 */
#define RMAWIN_KEEPALIVE_MS		2000
#define RMAWIN_KEEPALIVE_MAX_MS		600000
long rmawin_keepalive_jiffies(void);
void rmawin_keepalive(struct rmawin_ep *ep);

/*
 * rmawin_wait_event() for something only peers can bring (a message, a
 * reply).  Every rmawin_keepalive_jiffies() of the wait it probes the
 * group's quiet peers (rmawin_keepalive()): a peer whose node or link went
 * away sends nothing, not even a disconnect, and only a message of ours
 * finds that out (the device's retries run out), failing the wait's peer
 * with -ECONNRESET instead of leaving the wait to last for ever.  The
 * group must stay meanwhile: the caller holds the endpoint's lock, or
 * sleeps in rmawin_wait_unlocked().
 */
#define rmawin_wait_peers(ep, cond)						\
({									\
	struct rmawin_ep *__kep = (ep);					\
	int __kret;							\
									\
	while ((__kret = rmawin_wait_event_timeout(__kep, cond,		\
					rmawin_keepalive_jiffies())) > 0)	\
		rmawin_keepalive(__kep);				\
	__kret;								\
})

struct rmawin_win;
void rmawin_ep_sleep(struct rmawin_ep *ep, struct rmawin_win *win);
void rmawin_ep_wake(struct rmawin_ep *ep, struct rmawin_win *win);

/*
 * rmawin_wait_event() for a wait on peers (a barrier, a lock grant, a
 * POST or COMPLETE, window descriptors), with the endpoint's lock dropped
 * so that the process's other threads go on meanwhile.  The caller holds
 * the lock and gets it back.  Its group stays: tearing it down waits for
 * every sleeper, after ending their waits (@ep->unwait).  @win, if not
 * NULL, stays too: WIN_FREE refuses a window a thread waits on.  Anything
 * else read before the wait must be read again after it.
 *
 * It probes quiet peers as rmawin_wait_peers() does.
 *
 * It polls @cond for up to rmawin_wait_spin_ns() before it sleeps, giving
 * the CPU up at once if anything else wants it: a peer's answer often
 * comes within a round trip, and a sleeper costs a wake-up across CPUs
 * (recv.c handles the answer in softirq context, where a waker of its own
 * would have been a kworker the sender waited for).
 */
#define rmawin_wait_unlocked(ep, win, cond)					\
({									\
	struct rmawin_ep *__we = (ep);					\
	struct rmawin_win *__ww = (win);				\
	bool __wpolled = false;						\
	int __wret;							\
									\
	rmawin_ep_sleep(__we, __ww);					\
	__wret = rmawin_wait_peers(__we, rmawin_wait_polled(__we, cond, &__wpolled));	\
	rmawin_ep_wake(__we, __ww);					\
	__wret;								\
})

/*
 * The condition of rmawin_wait_unlocked()'s wait: @cond, or the group's
 * teardown.  Until *@polled, it polls them up to rmawin_wait_spin_ns(),
 * stopping early when another task waits for the CPU
 * (single_task_running(), as KVM's halt polling and the ring's poller ask:
 * need_resched() comes only at the scheduler's tick for a task that ran
 * before) or on a fatal signal, then sets *@polled.  wait_event()
 * evaluates its condition once before it prepares to sleep, in
 * TASK_RUNNING: that evaluation polls, the ones after a wake-up (the task
 * already set to sleep) do not.
 */
#define rmawin_wait_polled(ep, cond, polled)				\
({									\
	struct rmawin_ep *__pe = (ep);					\
	bool *__pp = (polled);						\
	u64 __pend = 0;							\
	bool __pr;							\
									\
	for (;;) {							\
		__pr = (cond) || READ_ONCE(__pe->unwait);		\
		if (__pr || *__pp)					\
			break;						\
		if (!__pend)						\
			__pend = local_clock() + rmawin_wait_spin_ns();	\
		else if (need_resched() || !single_task_running() ||	\
			 fatal_signal_pending(current) ||		\
			 local_clock() >= __pend)			\
			*__pp = true;					\
		cpu_relax();						\
	}								\
	__pr;								\
})

/* Control messages: small SEND/RECV messages between the kernels of a group. */
#define RMAWIN_CTRL_DEPTH	32	/* receive (and send) buffers per peer */
#define RMAWIN_SQ_DEPTH		256	/* send work requests per queue pair */
/* Registrations posted before waiting for them: room of their own in the SQ */
#define RMAWIN_REG_BATCH	16
/* Send queue slots data may use: the rest are for control messages. */
#define RMAWIN_SQ_DATA		(RMAWIN_SQ_DEPTH - RMAWIN_CTRL_DEPTH)
/* ceil(log2(RMAWIN_MAX_RANKS)): rounds of the dissemination barrier */
#define RMAWIN_BARRIER_ROUNDS	12
/*
 * Caps on what a peer can make us hold.  An honest peer stays far below
 * each: it has at most RMAWIN_ACC_WINDOW accumulate fragments unanswered
 * at a time, and every other reply answers a request it may have only one
 * of per window.
 */
#define RMAWIN_ACC_WINDOW	64	/* unanswered accumulate fragments per peer */
/* an accumulate's fragments answered together (RMAWIN_MSG_ACC_QUIET), at most */
#define RMAWIN_ACC_ANSWER_EVERY	16
#define RMAWIN_DEFERRED_MAX	256	/* replies waiting for a send buffer, per peer */
/* Regions of one window: a peer's descriptor may name no more */
#define RMAWIN_WIN_MAX_MRS	65536
/* A connection that has not proven itself by then is dropped. */
#define RMAWIN_AUTH_TIMEOUT_MS	3000

/* Small transfers go through registered kernel buffers of this size. */
#define RMAWIN_BOUNCE_SIZE	8192
#define RMAWIN_BOUNCE_SLOTS	BITS_PER_LONG
/* requests an endpoint keeps for reuse */
#define RMAWIN_REQ_CACHE	256
/* puts up to this many bytes go inline in the work request, where the device can */
#define RMAWIN_INLINE_MAX	256
/* atomics in flight on the group's queue pair to itself */
#define RMAWIN_SELF_DEPTH	16
/* accumulate-family operations up to this many bytes keep their data in the request */
#define RMAWIN_ACC_INLINE	16
/*
 * Plain accumulates of at least RMAWIN_BULK_MIN bytes go through the
 * target's inbox (bulk.c), rmawin_bulk_chunk() bytes at a time, in groups
 * of at most RMAWIN_BULK_MAX_RANKS ranks (the inbox has a chunk per rank).
 */
#define RMAWIN_BULK_MIN		2048
#define RMAWIN_BULK_MAX_RANKS	128

/**
 * struct rmawin_stats - module-wide object counters, for leak checks
 * @endpoints: endpoints alive
 * @devices: RDMA devices known
 * @pds: protection domains allocated
 * @groups: groups joined
 * @qps: queue pairs
 * @mrs: memory regions
 * @reqs: operations in flight
 * @pollers: poller threads (poller.c)
 * @poll_sleeps_idle: times a poller slept for want of work
 * @poll_sleeps_shared: times a poller slept because its CPU was wanted
 * @counters: one per enum rmawin_counter, each the sum over all endpoints,
 *	per CPU (allocated at module load)
 */
struct rmawin_stats {
	atomic_t endpoints;
	atomic_t devices;
	atomic_t pds;
	atomic_t groups;
	atomic_t qps;
	atomic_t mrs;
	atomic_t reqs;
	atomic_t pollers;
	atomic_long_t poll_sleeps_idle;
	atomic_long_t poll_sleeps_shared;
	struct rmawin_counters __percpu *counters;
};

extern struct rmawin_stats rmawin_stats;

/*
 * The errno of a failed work completion: a flush means the queue pair went
 * to error (its peer failed or left), anything else is the device's error.
 */
static inline int rmawin_wc_errno(enum ib_wc_status status)
{
	return status == IB_WC_WR_FLUSH_ERR ? -ECONNRESET : -EIO;
}

/* Count in the endpoint's counters and in the module's. */
static inline void rmawin_count(struct rmawin_ep *ep, enum rmawin_counter c, long n)
{
	this_cpu_add(ep->counters->c[c], n);
	this_cpu_add(rmawin_stats.counters->c[c], n);
}

long rmawin_counter_read(struct rmawin_counters __percpu *counters, enum rmawin_counter c);

/*
 * Wake the endpoint's sleepers, if it has any.  A completion that finishes
 * an operation usually finds nobody asleep (the caller polls, or reaps
 * later): the full barrier and a look at the queue cost less than taking
 * its lock.  Waiters join the queue before they test their condition
 * (wait_event), and the barrier orders the waker's update before its look.
 */
static inline void rmawin_ep_wake_all(struct rmawin_ep *ep)
{
	if (wq_has_sleeper(&ep->wq))
		wake_up_all(&ep->wq);
}

/*
 * copy_from_user() and copy_to_user() of an operation's few bytes: an
 * element, a compare value, a small put's data.  Each usual size is a
 * compile-time constant here, so that the hardened usercopy check of the
 * kernel buffer is made when the module is built, not at every call.
 */
static __always_inline unsigned long rmawin_copy_from_user(void *to, const void __user *from,
							   unsigned long n)
{
	switch (n) {
	case 1:
		return copy_from_user(to, from, 1);
	case 2:
		return copy_from_user(to, from, 2);
	case 4:
		return copy_from_user(to, from, 4);
	case 8:
		return copy_from_user(to, from, 8);
	case 16:
		return copy_from_user(to, from, 16);
	default:
		return copy_from_user(to, from, n);
	}
}

static __always_inline unsigned long rmawin_copy_to_user(void __user *to, const void *from,
							 unsigned long n)
{
	switch (n) {
	case 1:
		return copy_to_user(to, from, 1);
	case 2:
		return copy_to_user(to, from, 2);
	case 4:
		return copy_to_user(to, from, 4);
	case 8:
		return copy_to_user(to, from, 8);
	case 16:
		return copy_to_user(to, from, 16);
	default:
		return copy_to_user(to, from, n);
	}
}

#define rmawin_ep_dbg(ep, fmt, ...) \
	pr_debug("ep%u: " fmt, (ep)->id, ##__VA_ARGS__)

/* device.c */
int rmawin_devices_init(void);
void rmawin_devices_exit(void);
struct rmawin_dev *rmawin_dev_get_by_name(const char *name);
struct rmawin_dev *rmawin_dev_get_by_ibdev(struct ib_device *ibdev);
void rmawin_dev_put(struct rmawin_dev *rdev);
int rmawin_ioctl_query(struct rmawin_ep *ep, void *arg);

/* ep.c */
struct rmawin_ep *rmawin_ep_alloc(void);
void rmawin_ep_release(struct rmawin_ep *ep);
void rmawin_ep_put(struct rmawin_ep *ep);
void rmawin_ep_detach(struct rmawin_ep *ep, struct rmawin_dev *rdev);
int rmawin_ioctl_ep_bind(struct rmawin_ep *ep, void *arg);
int rmawin_ep_bind_locked(struct rmawin_ep *ep, struct rmawin_dev *rdev,
			  u32 want_port);
int rmawin_ep_check_group(struct rmawin_ep *ep);
void rmawin_ep_unbind_locked(struct rmawin_ep *ep);
void rmawin_ep_group_drop(struct rmawin_ep *ep);
int rmawin_coll_lock(struct rmawin_ep *ep);
void rmawin_coll_unlock(struct rmawin_ep *ep);

/* window.c, winmem.c, desc.c */
int rmawin_ioctl_win_create(struct rmawin_ep *ep, void *arg);
int rmawin_ioctl_win_free(struct rmawin_ep *ep, void *arg);
int rmawin_ioctl_win_info(struct rmawin_ep *ep, void *arg);
struct rmawin_win *rmawin_win_lookup(struct rmawin_ep *ep, u32 id);
int rmawin_win_mmap(struct rmawin_ep *ep, struct vm_area_struct *vma);
void rmawin_wins_destroy_all(struct rmawin_ep *ep);
void rmawin_tables_free(struct rmawin_group *grp);
u32 rmawin_chunk_pages(struct rmawin_ep *ep);
u32 rmawin_mr_entries(struct rmawin_ep *ep);
int rmawin_reg_mrs(struct rmawin_group *grp, struct ib_mr **mrs, u32 n, int access);

/* ops.c */
int rmawin_ioctl_rma(struct rmawin_ep *ep, void *arg);
int rmawin_op_run(struct rmawin_ep *ep, const struct rmawin_op_desc *op, bool ring,
		  bool *quiet);
bool rmawin_op_would_wait(struct rmawin_ep *ep, const struct rmawin_op_desc *op);
int rmawin_win_complete(struct rmawin_win *win);
/* how an epoch's end goes (rmawin_win_drain_start()) */
struct rmawin_drain {
	bool early;
	bool fence;
};

int rmawin_win_drain_start(struct rmawin_win *win, bool may_overtake, struct rmawin_drain *d);
int rmawin_win_drain_end(struct rmawin_win *win, const struct rmawin_drain *d, int ret);
void rmawin_win_reap(struct rmawin_win *win, bool copy_out);
void rmawin_ep_reap(struct rmawin_ep *ep);
void rmawin_reqs_free_cache(struct rmawin_ep *ep);

/* lock.c */
int rmawin_win_lock_init(struct rmawin_win *win);
void rmawin_win_lock_free(struct rmawin_win *win);
int rmawin_ioctl_lock(struct rmawin_ep *ep, void *arg);
int rmawin_ioctl_unlock(struct rmawin_ep *ep, void *arg);
int rmawin_ioctl_flush(struct rmawin_ep *ep, void *arg);
int rmawin_epoch_check(struct rmawin_win *win, u32 target);
int rmawin_lock_try(struct rmawin_win *win, u32 rank, u32 type);
int rmawin_lock_release(struct rmawin_win *win, u32 rank, u32 type);
void rmawin_lock_send_grants(struct rmawin_ep *ep, u32 win_id);
void rmawin_lock_drop_failed_all(struct rmawin_group *grp);
int rmawin_flush_check(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
		       struct rmawin_win **win);

/* pscw.c */
int rmawin_win_pscw_init(struct rmawin_win *win);
void rmawin_win_pscw_free(struct rmawin_win *win);
int rmawin_ioctl_post(struct rmawin_ep *ep, void *arg);
int rmawin_ioctl_start(struct rmawin_ep *ep, void *arg);
int rmawin_ioctl_complete(struct rmawin_ep *ep, void *arg);
int rmawin_ioctl_wait(struct rmawin_ep *ep, void *arg);

/* notify.c */
int rmawin_notify_send(struct rmawin_peer *peer, const struct rmawin_op_desc *op);
int rmawin_notify_queue(struct rmawin_ep *ep, u32 source, const struct rmawin_op_desc *op);
void rmawin_notify_free(struct rmawin_ep *ep);
bool rmawin_notify_pending(struct rmawin_ep *ep);
int rmawin_ioctl_notify_wait(struct rmawin_ep *ep, void *arg);

/* ring.c: the mmap offset of the rings (windows' start at 1 << 32) */
#define RMAWIN_RING_MMAP_OFFSET	0
int rmawin_ioctl_ring_setup(struct rmawin_ep *ep, void *arg);
int rmawin_ioctl_ring_enter(struct rmawin_ep *ep, void *arg);
int rmawin_ring_mmap(struct rmawin_ep *ep, struct vm_area_struct *vma);
void rmawin_ring_stop(struct rmawin_ep *ep);
void rmawin_ring_destroy(struct rmawin_ep *ep);
int rmawin_ring_poller_of(struct rmawin_ep *ep);

/* sync.c */
int rmawin_ioctl_fence(struct rmawin_ep *ep, void *arg);
int rmawin_ioctl_barrier(struct rmawin_ep *ep, void *arg);
int rmawin_group_barrier(struct rmawin_group *grp);

/* chardev.c */
int rmawin_chardev_init(void);
void rmawin_chardev_exit(void);

/* debugfs.c */
#define RMAWIN_RECV_DELAY_MAX	2000
extern u32 rmawin_recv_delay_ms;
extern u32 rmawin_teardown_delay_ms;
extern u32 rmawin_poll_force_yield;
void rmawin_debugfs_init(void);
void rmawin_debugfs_exit(void);
void rmawin_debugfs_ep_add(struct rmawin_ep *ep);
void rmawin_debugfs_ep_remove(struct rmawin_ep *ep);

#include "group.h"
#include "req.h"

#endif /* RMAWIN_PRIV_H */
