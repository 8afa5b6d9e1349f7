/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmawin: private declarations shared by the module's files.
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
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/atomic.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/socket.h>
#include <linux/xarray.h>
#include <linux/scatterlist.h>
#include <linux/mmu_notifier.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <linux/rmawin.h>

#include "wire.h"

struct rmawin_group;
struct rmawin_kmem;
struct rmawin_mr_chunk;
struct rmawin_lock_waiter;
struct crypto_shash;
struct mem_cgroup;
struct net;

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
	RMAWIN_NR_COUNTERS,
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
 * @counters: this endpoint's share of the counters in struct rmawin_stats
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
 *	RMAWIN_REQ_CACHE), under @lock: an operation allocates nothing
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
	atomic_long_t counters[RMAWIN_NR_COUNTERS];
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

/* how long a wait on peers polls before it sleeps (rmawin_wait_unlocked()) */
#define RMAWIN_WAIT_SPIN_NS	(50 * NSEC_PER_USEC)

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
 * It polls @cond for up to RMAWIN_WAIT_SPIN_NS before it sleeps, giving
 * the CPU up at once if anything else wants it: a peer's answer often
 * comes within a round trip, and a sleeper costs a wake-up across CPUs
 * (msg.c handles the answer in softirq context, where a waker of its own
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
	__wret = rmawin_wait_event(__we, rmawin_wait_polled(__we, cond, &__wpolled));	\
	rmawin_ep_wake(__we, __ww);					\
	__wret;								\
})

/*
 * The condition of rmawin_wait_unlocked()'s wait: @cond, or the group's
 * teardown.  Until *@polled, it polls them up to RMAWIN_WAIT_SPIN_NS,
 * stopping early when the scheduler wants the CPU or on a fatal signal,
 * then sets *@polled.  wait_event() evaluates its condition once before
 * it prepares to sleep, in TASK_RUNNING: that evaluation polls, the ones
 * after a wake-up (the task already set to sleep) do not.
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
			__pend = local_clock() + RMAWIN_WAIT_SPIN_NS;	\
		else if (need_resched() || fatal_signal_pending(current) ||	\
			 local_clock() >= __pend)			\
			*__pp = true;					\
		cpu_relax();						\
	}								\
	__pr;								\
})

/* Control messages: small SEND/RECV messages between the kernels of a group. */
#define RMAWIN_CTRL_DEPTH	32	/* receive (and send) buffers per peer */
#define RMAWIN_SQ_DEPTH		256	/* send work requests per queue pair */
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
 * struct rmawin_inbox - a group's inbox, where the peers' large accumulates
 *	land, or its outbox, whence ours go to theirs (bulk.c)
 * @pages: the pages, a chunk (rmawin_bulk_chunk() bytes) per rank, charged
 *	to the process
 * @npages: how many
 * @va: them, mapped contiguously for the kernel
 * @sgt: them, DMA-mapped
 * @mr: their region, registered (for remote writes and reads: the inbox;
 *	for the device's local writes: the outbox); NULL: none
 */
struct rmawin_inbox {
	struct page **pages;
	u32 npages;
	void *va;
	struct sg_table sgt;
	struct ib_mr *mr;
};

/**
 * struct rmawin_bulk - our chunk in flight to one peer's inbox (bulk.c)
 * @cqe: the completion of its RDMA WRITE, or of the RDMA READ of the
 *	previous values (from and into the peer's chunk of our outbox)
 * @busy: the work request is not complete yet
 * @answering: its ACC_BULK message is not answered yet
 */
struct rmawin_bulk {
	struct ib_cqe cqe;
	bool busy;
	bool answering;
};

/**
 * struct rmawin_nic_last - the word a queue pair's last device atomic
 *	left, for the first guess of the next compare-and-swap loop on it
 *	(atomic.c); written in completion context, read anywhere: a stale
 *	value only costs a retry
 * @addr: the word's remote address
 * @rkey: its region's key
 * @val: the value the atomic left there
 */
struct rmawin_nic_last {
	u64 addr;
	u32 rkey;
	u64 val;
};

/* Words whose values a queue pair remembers for its next loop (atomic.c). */
#define RMAWIN_ATOMIC_GUESS_WORDS	8192

/**
 * struct rmawin_nic_guess - the words the last compare-and-swap loop of
 *	several words on a queue pair left, for the first guesses of the next
 *	one on the same words (atomic.c)
 * @remote: the target window's regions of that loop (compared, never
 *	followed: a stale match only costs retries)
 * @off: the window offset of its first word
 * @n: words in @vals, at most RMAWIN_ATOMIC_GUESS_WORDS
 * @vals: the value each word was left with, allocated (and charged) at
 *	the first such loop, freed with the group
 *
 * Only the issue of such a loop, and its completions, touch it; on one
 * queue pair they never overlap (a serial atomic runs alone there).
 */
struct rmawin_nic_guess {
	const void *remote;
	u64 off;
	u32 n;
	u64 *vals;
};

/**
 * struct rmawin_remote_mr - one memory region of a peer's window
 * @iova: the address the region starts at, as the peer's device knows it
 * @rkey: its remote key
 */
struct rmawin_remote_mr {
	u64 iova;
	u32 rkey;
};

/**
 * struct rmawin_remote - what a rank knows of one peer's window
 * @length: window bytes
 * @disp_unit: the peer's displacement unit
 * @page_off: offset of the window's start in its first page
 * @chunk: bytes of pages each region covers (the first covers less by
 *	@page_off, the last what is left)
 * @nmrs: number of regions
 * @got: regions received so far (fragments come in order)
 * @done: the whole descriptor arrived (or the peer's creation failed:
 *	then @disp_unit is 0); nothing more is accepted for it
 * @mrs: @nmrs regions
 * @inbox: where the owner's inbox starts, as its device knows it, if
 *	@inbox_rkey is valid (@has_inbox)
 * @inbox_rkey: its remote key
 * @has_inbox: the owner has an inbox: large accumulates may use it
 */
struct rmawin_remote {
	u64 length;
	u32 disp_unit;
	u32 page_off;
	u64 chunk;
	u32 nmrs;
	u32 got;
	bool done;
	struct rmawin_remote_mr *mrs;
	u64 inbox;
	u32 inbox_rkey;
	bool has_inbox;
};

/**
 * struct rmawin_win_table - descriptors of one window from every peer
 * @remote: one per rank
 * @complete: peers whose descriptor has fully arrived
 *
 * Peers may send theirs before this rank creates the window, so tables
 * live in the group, keyed by window handle, until the window takes them.
 */
struct rmawin_win_table {
	struct rmawin_remote *remote;
	u32 complete;
};

/**
 * struct rmawin_win - a window
 * @ep: owner
 * @id: handle
 * @base: user address of the window
 * @length: bytes
 * @disp_unit: displacement unit of this rank's window
 * @pages: its pages (pinned user pages, or @kmem's), @npages of them
 * @npages: number of pages
 * @kmem: the module's pages of an allocated window, or NULL
 * @kmem_wanted: RMAWIN_WIN_ALLOCATE: the module allocates the pages
 * @mm: the mm the pages are charged to
 * @chunks: registered regions, @nchunks of them
 * @nchunks: number of regions
 * @block_shift: log2 of the page size the regions are registered with:
 *	PAGE_SHIFT, or more where the pages are physically contiguous
 * @tbl: every peer's descriptor
 * @lock: @reqs
 * @acc_lock: serializes the accumulate family on this window's memory
 * @reqs: operations issued and not yet reaped
 * @inflight: operations issued and not yet complete
 * @error: first error of an operation of the current epoch
 * @fence_open: a fence opened an access epoch (no NOSUCCEED)
 * @fence_ops: operations issued since the last fence
 * @held: origin side: lock type + 1 held (or asked for) on each rank, 0
 *	for none
 * @nheld: ranks locked
 * @granted: origin side: bitmap of ranks whose kernel granted our request
 * @lk: target side: the lock every rank's requests queue on; each rank
 *	has one waiter, so a rank asks again only after it let go
 * @pscw: post/start/complete/wait state
 * @same_op: RMAWIN_WIN_SAME_OP: 8-byte integer accumulates go through the
 *	device's atomics (atomic.c)
 * @nic_small: RMAWIN_WIN_NIC_SMALL_INTS: with @same_op, integers of 1, 2
 *	and 4 bytes too
 * @self: with @same_op in a group of more than one rank: this rank's own
 *	regions, as a peer's descriptor gives them, for its own atomics
 * @ready: created on every rank, and not being freed: the ioctls find it
 *	(rmawin_win_lookup()); peers' messages find it from its creation on
 * @waiters: threads waiting on it without the endpoint's lock
 * @asking: origin side: ranks whose grant a LOCK call is waiting for; their
 *	UNLOCK and FLUSH are refused meanwhile
 */
struct rmawin_win {
	struct rmawin_ep *ep;
	u32 id;
	u64 base;
	u64 length;
	u32 disp_unit;
	struct page **pages;
	unsigned long npages;
	struct rmawin_kmem *kmem;
	bool kmem_wanted;
	struct mm_struct *mm;
	struct rmawin_mr_chunk *chunks;
	u32 nchunks;
	u32 block_shift;
	struct rmawin_win_table *tbl;
	spinlock_t lock;		/* reqs */
	spinlock_t acc_lock;		/* accumulates applied to the window */
	struct list_head reqs;
	atomic_t inflight;
	int error;
	bool fence_open;
	u64 fence_ops;
	u8 *held;
	u32 nheld;
	unsigned long *granted;
	struct rmawin_lock_mgr {
		spinlock_t lock;	/* all of it */
		u32 shared;
		bool exclusive;
		struct list_head waiters;
		struct rmawin_lock_waiter *w;	/* one per rank */
		unsigned long *to_grant;	/* ranks granted, not yet told */
	} lk;
	struct rmawin_pscw_state {
		atomic_t *posts_rcvd;	/* POSTs received from each rank, ever */
		atomic_t *completes_rcvd; /* COMPLETEs received from each rank, ever */
		u32 *posts_used;	/* POSTs each START consumed, per target */
		u32 *completes_due;	/* COMPLETEs each WAIT expects, per origin */
		unsigned long *access;	/* targets of the open access epoch */
		unsigned long *exposure; /* origins of the open exposure epoch */
		bool started;
		bool posted;
		bool waiting;	/* a START or WAIT waits: other PSCW calls are refused */
	} pscw;
	bool same_op;
	bool nic_small;
	struct rmawin_remote *self;
	bool ready;
	u32 waiters;
	unsigned long *asking;
};

/**
 * struct rmawin_req - one operation in flight
 * @node: in the window's @reqs
 * @win: the window
 * @peer: the target
 * @cqe: completion entry shared by the operation's work requests
 * @opcode: enum rmawin_opcode
 * @pending: work requests not yet complete
 * @done: every work request completed
 * @status: first error of its work requests
 * @uaddr: origin buffer (where a bounced get copies to)
 * @len: bytes
 * @refused: its issuing call failed and said so: report nothing at reap
 * @finished: set once by whoever finishes the request
 * @rma: put and get
 * @rma.bounce: bounce slot, or -1 if the origin pages are pinned instead
 * @rma.ent: the origin's pinned pages, if not bounced
 * @rma.pin: @rma.ent was not in the cache: its pages are pinned as it goes
 * @rma.inl: a small put whose data goes inline in its work request: no
 *	bounce buffer, no pinning
 * @acc: the accumulate family
 * @acc.id: the id the target's replies carry
 * @acc.data: the origin (and compare) elements
 * @acc.result: fetching accumulates: the previous values, @len bytes
 * @acc.result_uaddr: where @acc.result goes at reap
 * @acc.sent: bytes of fragments posted so far
 * @acc.next: offset of the first fragment not answered yet (the target
 *	answers in order), under the group's acc_reqs lock
 * @acc.nic: through the device's atomics (atomic.c), not the target's CPU
 * @acc.bulk: through the target's inbox (bulk.c): its fragments are
 *	chunks of rmawin_bulk_chunk() bytes, each answered
 * @acc.slot: atomics: the bounce buffer the previous values land in (each
 *	lane's 8 bytes at its index), or -1
 * @acc.one: atomics: the lane of an operation on one word, and of one whose
 *	lanes could not be allocated
 * @acc.lanes: atomics: the lanes, @acc.one or allocated (up to
 *	RMAWIN_ATOMIC_LANES)
 * @acc.next_word: atomics: the next word no lane has taken yet
 * @acc.active: atomics: lanes with a work request in flight (or about to
 *	be posted); the last to finish ends the request's atomics
 * @acc.acc_op: atomics: the op
 * @acc.datatype: atomics: the element type
 * @acc.qp: atomics: the queue pair (the peer's, or the group's to itself)
 * @acc.remote: atomics: the target window's regions
 * @acc.off: atomics: the byte offset of the first element there
 * @acc.inl: @acc.data and @acc.result of an operation of at most
 *	RMAWIN_ACC_INLINE bytes: no allocation for it
 * @acc.guess: atomics: its queue pair's remembered words, if it records
 *	there (a compare-and-swap loop of several words), else NULL
 * @acc.guess_n: words of @acc.guess that hold this request's first
 *	guesses (those of a loop on the same words before), 0 if none
 * @acc.serial: atomics: takes more than one work request (a
 *	compare-and-swap loop, or several elements), the later ones posted
 *	from its completion handler: while it is in flight no other atomic
 *	starts on its queue pair (rmawin_peer.nic_serial,
 *	rmawin_group.self_serial)
 */
struct rmawin_req;

/* Words of one atomic request in flight at once, at most (atomic.c). */
#define RMAWIN_ATOMIC_LANES	32

/**
 * struct rmawin_atomic_lane - one work request of an atomic request
 * @cqe: its completion entry
 * @req: the request
 * @word: the word it works on, by its index among the request's
 * @idx: its index among the request's lanes: where in the request's
 *	bounce buffer the device writes the word's previous value
 * @guess: a compare-and-swap loop's guess of the word's current value
 */
struct rmawin_atomic_lane {
	struct ib_cqe cqe;
	struct rmawin_req *req;
	u32 word;
	u32 idx;
	u64 guess;
};

struct rmawin_req {
	struct list_head node;
	struct rmawin_win *win;
	struct rmawin_peer *peer;
	struct ib_cqe cqe;
	u8 opcode;
	atomic_t pending;
	bool done;
	int status;
	void __user *uaddr;
	u64 len;
	bool refused;
	unsigned long finished;
	union {
		struct {
			int bounce;
			struct rmawin_rcache_ent *ent;
			bool pin;
			bool inl;
		} rma;
		struct {
			u32 id;
			void *data;
			void *result;
			void __user *result_uaddr;
			u64 sent;
			u64 next;
			bool nic;
			bool bulk;
			int slot;
			struct rmawin_atomic_lane one;
			struct rmawin_atomic_lane *lanes;
			atomic_t next_word;
			atomic_t active;
			u8 acc_op;
			u8 datatype;
			struct ib_qp *qp;
			const struct rmawin_remote *remote;
			u64 off;
			u64 inl[3 * RMAWIN_ACC_INLINE / sizeof(u64)];
			struct rmawin_nic_guess *guess;
			u32 guess_n;
			bool serial;
		} acc;
	};
};

enum rmawin_peer_state {
	RMAWIN_PEER_IDLE,	/* not connected, nothing allocated */
	RMAWIN_PEER_CONNECTING,	/* cm_id (and maybe qp) exist, not yet proven */
	RMAWIN_PEER_CLEANUP,	/* a failed attempt is being torn down */
	RMAWIN_PEER_CONNECTED,	/* proven a member: messages flow */
	RMAWIN_PEER_FAILED,	/* gone for good: @error says why */
};

/* The slot of a peer's marker receive (struct rmawin_peer @drain). */
#define RMAWIN_RX_DRAIN		U32_MAX

/**
 * struct rmawin_ctrl_buf - one control-message buffer and its completion
 * @cqe: completion entry of the work request that uses the buffer
 * @peer: owner
 * @slot: index in the peer's ring, or RMAWIN_RX_DRAIN
 * @node: in the group's @rx_queue while its completion waits for the
 *	receive work (msg.c)
 * @status: the receive completion's status
 * @len: the bytes it received
 * @bad: handled in softirq context and found invalid: the receive work
 *	fails the peer, which softirq context cannot
 */
struct rmawin_ctrl_buf {
	struct ib_cqe cqe;
	struct rmawin_peer *peer;
	u32 slot;
	struct list_head node;
	enum ib_wc_status status;
	u32 len;
	bool bad;
};

/**
 * struct rmawin_peer - this endpoint's view of one other rank
 * @grp: the group
 * @rank: the peer's rank
 * @state: enum rmawin_peer_state, under @grp->lock
 * @error: why the peer failed (negative errno)
 * @cm_id: the connection's rdma_cm id (ours for lower ranks, the accepted
 *	one for higher ranks)
 * @qp: the RC queue pair to the peer; ours, not rdma_cm's, so that it
 *	grants remote access only once the peer has proven itself
 * @work: retries a failed connection attempt (active side), cleans it
 *	up, or drops one that did not prove itself in time (passive side)
 * @nonce: our nonce of the current handshake
 * @remote_nonce: the peer's
 * @remote_qpn: the peer's queue pair number in the current handshake
 * @auth_failed: a connection attempt with this rank failed its proof
 * @refused: the other end refused our request (another group's shape)
 * @rx: receive buffers, posted on @qp while it exists
 * @tx: send buffers; @tx_busy marks those in flight
 * @tx_busy: bitmap of @tx under @grp->lock
 * @rx_mem: RMAWIN_CTRL_DEPTH receive buffers, DMA-mapped at @rx_dma
 * @tx_mem: RMAWIN_CTRL_DEPTH send buffers, DMA-mapped at @tx_dma
 * @rx_dma: DMA address of @rx_mem
 * @tx_dma: DMA address of @tx_mem
 * @sq_data: data work requests posted and not yet complete
 * @acc_out: our accumulate fragments to the peer not yet answered
 * @deferred: messages to send once a send buffer is free (replies, which
 *	completion context cannot wait for), under @grp->lock
 * @ndeferred: entries of @deferred, at most RMAWIN_DEFERRED_MAX
 * @nnotify: the peer's notifications in our queue
 * @drain: the marker receive of an orderly disconnect: its flush
 *	completion, after every message that arrived before, fails the peer
 * @leaving: the peer disconnected; its last messages are being dispatched
 * @max_inline: bytes a work request on @qp carries inline (0: none)
 * @nic_serial: one of our device atomics that takes several work
 *	requests is in flight on @qp (atomic.c): no other may start before
 *	it is over, or it would overtake the rest of it
 * @nic_last: the word our last device atomic on @qp left (atomic.c)
 * @nic_guess: the words our last compare-and-swap loop of several words
 *	on @qp left (atomic.c)
 * @bulk: our chunk in flight to the peer's inbox (bulk.c)
 */
struct rmawin_peer {
	struct rmawin_group *grp;
	u32 rank;
	int state;
	int error;
	struct rdma_cm_id *cm_id;
	struct ib_qp *qp;
	struct delayed_work work;
	u8 nonce[RMAWIN_NONCE_LEN];
	u8 remote_nonce[RMAWIN_NONCE_LEN];
	u32 remote_qpn;
	bool auth_failed;
	bool refused;
	struct rmawin_ctrl_buf rx[RMAWIN_CTRL_DEPTH];
	struct rmawin_ctrl_buf tx[RMAWIN_CTRL_DEPTH];
	unsigned long tx_busy;
	void *rx_mem;
	void *tx_mem;
	u64 rx_dma;
	u64 tx_dma;
	atomic_t sq_data;
	atomic_t acc_out;
	struct list_head deferred;
	u32 ndeferred;
	atomic_t nnotify;
	struct rmawin_ctrl_buf drain;
	bool leaving;
	u32 max_inline;
	bool nic_serial;
	struct rmawin_nic_last nic_last;
	struct rmawin_nic_guess nic_guess;
	struct rmawin_bulk bulk;
};

/**
 * struct rmawin_rcache_ent - pinned, DMA-mapped pages of an origin buffer
 * @node: in the cache's LRU list, most recent first (cached entries only)
 * @rc: the cache
 * @mni: watches the range for changes (cached entries only)
 * @seq: notifier sequence when the pages were pinned
 * @start: first page's user page number
 * @npages: pages in the range
 * @pages: the pinned pages; the first @pinned are
 * @dma: their DMA addresses; the first @mapped are
 * @pinned: pages pinned so far
 * @mapped: pages DMA-mapped so far
 * @users: operations using it (under the endpoint's lock)
 * @writable: pinned for the device to write (gets)
 * @cached: in the cache, charged to RLIMIT_MEMLOCK; else private to one
 *	operation, and charged to @charged's
 * @charged: the mm a private entry's pages are charged to
 * @stale: the range changed: never use again (under the cache's lock)
 */
struct rmawin_rcache_ent {
	struct list_head node;
	struct rmawin_rcache *rc;
	struct mmu_interval_notifier mni;
	unsigned long seq;
	unsigned long start;
	unsigned long npages;
	struct page **pages;
	u64 *dma;
	unsigned long pinned;
	unsigned long mapped;
	unsigned int users;
	bool writable;
	bool cached;
	bool stale;
	struct mm_struct *charged;
};

/**
 * struct rmawin_rcache - the registration cache of a group
 * @lock: the entries' @stale flags, set by the MMU notifier
 * @lru: cached entries
 * @pages: pages in cached entries
 * @mm: the process the cache serves (the one that joined)
 * @ep: the endpoint, for counters
 * @ibdev: the device the pages are mapped for
 */
struct rmawin_rcache {
	spinlock_t lock;		/* entries' stale flags */
	struct list_head lru;
	unsigned long pages;
	struct mm_struct *mm;
	struct rmawin_ep *ep;
	struct ib_device *ibdev;
};

/**
 * struct rmawin_group - the group an endpoint joined
 * @ep: the endpoint
 * @ibdev: the endpoint's device
 * @rank: our rank
 * @nranks: group size
 * @mac_tfm: HMAC-SHA256 keyed with the job's secret
 * @group_id: SHA-256 of the group's shape (struct rmawin_wire_group_addr)
 * @net: the network namespace the group was joined in
 * @addrs: every rank's listen address
 * @listen_id: accepts connections from higher ranks
 * @cq: the receive completion queue of every queue pair of the group
 *	(control messages), polled in softirq context: a message that needs
 *	nothing but spinlocks is handled there, the rest in @rx_work (msg.c)
 * @sq_data_max: data work requests one peer's queue pair may have in
 *	flight: RMAWIN_SQ_DATA, or fewer where the device's largest send
 *	completion queue cannot hold that many for every peer
 * @scq: the send completion queue of every queue pair (RDMA reads and
 *	writes, registrations, control message sends), polled in softirq
 *	context: its handlers never sleep, and a waiter is woken straight
 *	from the device's completion instead of after a kworker switch
 * @peers: one per rank; ours is unused
 * @lock: peer states, send-buffer bitmaps and @rx_queue; taken in CM and
 *	CQ context
 * @rx_queue: receive completions waiting for @rx_work, in arrival order
 * @rx_busy: @rx_work is handling one it took off @rx_queue: later ones
 *	wait behind it too
 * @rx_work: handles the receive completions of @rx_queue in process
 *	context, in order
 * @nconnected: peers connected
 * @error: first fatal error of the group (a peer left, the device went)
 * @deadline: jiffies by which the join must be complete
 * @dying: the group is being torn down: refuse and ignore everything;
 *	set under @lock, and no work is queued once it is
 * @tx_wanted: under @lock: someone waits for a send buffer to come free
 *	(a sender, or the teardown for the last to complete); a send
 *	completion wakes the endpoint's sleepers only then
 * @posters: completion, CM and work contexts posting to a queue pair now
 *	(rmawin_post_enter()): the teardown waits for them before it touches
 *	a queue pair, and none starts once @dying is set
 * @barrier_seq: barriers this rank entered
 * @barrier_rcvd: barrier messages received per round, ever (each round
 *	has exactly one sender)
 * @tables: window descriptor tables by handle, until their window exists
 * @desc_floor: handles below this have every descriptor in: a peer sends
 *	none for them any more
 * @bounce_mem: RMAWIN_BOUNCE_SLOTS buffers of RMAWIN_BOUNCE_SIZE bytes
 * @bounce_dma: DMA address of each bounce buffer
 * @bounce_busy: bitmap of bounce buffers in use, under @lock
 * @rcache: pinned origin buffers kept for reuse
 * @acc_reqs: accumulate-family requests waiting for replies, by id
 * @self_qp: a queue pair connected to itself, for atomics on this rank's
 *	own same_op windows; made with the first of them
 * @self_out: work requests in flight on @self_qp, at most RMAWIN_SELF_DEPTH
 * @self_serial: rmawin_peer.nic_serial for @self_qp
 * @self_last: rmawin_peer.nic_last for @self_qp
 * @self_guess: rmawin_peer.nic_guess for @self_qp
 * @inbox: where the peers' large accumulates land, made with the first
 *	window
 * @outbox: whence ours go to the peers' inboxes, made with @inbox
 */
struct rmawin_group {
	struct rmawin_ep *ep;
	struct ib_device *ibdev;
	u32 rank;
	u32 nranks;
	struct crypto_shash *mac_tfm;
	u8 group_id[RMAWIN_GROUP_ID_LEN];
	struct net *net;
	struct sockaddr_storage *addrs;
	struct rdma_cm_id *listen_id;
	struct ib_cq *cq;
	struct ib_cq *scq;
	u32 sq_data_max;
	struct rmawin_peer *peers;
	spinlock_t lock;		/* peer states, tx bitmaps, rx_queue */
	struct list_head rx_queue;
	bool rx_busy;
	struct work_struct rx_work;
	atomic_t nconnected;
	int error;
	unsigned long deadline;
	bool dying;
	bool tx_wanted;
	atomic_t posters;
	u32 barrier_seq;
	atomic_t barrier_rcvd[RMAWIN_BARRIER_ROUNDS];
	struct xarray tables;
	u32 desc_floor;
	void *bounce_mem[RMAWIN_BOUNCE_SLOTS];
	u64 bounce_dma[RMAWIN_BOUNCE_SLOTS];
	unsigned long bounce_busy;
	struct rmawin_rcache rcache;
	struct xarray acc_reqs;
	struct ib_qp *self_qp;
	atomic_t self_out;
	bool self_serial;
	struct rmawin_nic_last self_last;
	struct rmawin_nic_guess self_guess;
	struct rmawin_inbox inbox;
	struct rmawin_inbox outbox;
};

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
 * @counters: one per enum rmawin_counter, each the sum over all endpoints
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
	atomic_long_t counters[RMAWIN_NR_COUNTERS];
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
	atomic_long_add(n, &ep->counters[c]);
	atomic_long_add(n, &rmawin_stats.counters[c]);
}

/*
 * Post send work requests.  A software device (rxe, siw) hands a kernel
 * QP's requests to a tasklet; raised from process context with bottom
 * halves on, that wakes ksoftirqd, a thread that must then win a CPU from
 * whatever runs there.  We post with bottom halves off, so that the
 * tasklet runs in local_bh_enable(), here, as a user QP's requests do in
 * its own system call.  Except for @overlap requests (RDMA writes, which
 * nobody waits for at once) posted by the ring's poller, a kernel thread:
 * those it leaves to ksoftirqd and goes on with its next entry meanwhile.
 * Hardware devices only pay the two counter updates.
 *
 * Context: process or softirq context, interrupts enabled.
 */
static inline int rmawin_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
				   bool overlap)
{
	int ret;

	if (overlap && (current->flags & PF_KTHREAD))
		return ib_post_send(qp, wr, NULL);
	local_bh_disable();
	ret = ib_post_send(qp, wr, NULL);
	local_bh_enable();
	return ret;
}

/**
 * rmawin_post_exit() - a post that rmawin_post_enter() allowed is done
 * @grp: the group
 */
static inline void rmawin_post_exit(struct rmawin_group *grp)
{
	if (atomic_dec_and_test(&grp->posters) && READ_ONCE(grp->dying))
		wake_up_all(&grp->ep->wq);
}

/**
 * rmawin_post_enter() - may a context the group's teardown does not hold
 *	off post to one of its queue pairs?
 * @grp: the group
 *
 * A completion handler, the receive CQ's work or a CM handler that posts
 * (a message, a receive buffer, the next step of a device atomic) does so
 * between this and rmawin_post_exit(): the teardown sets @grp->dying, then
 * waits for every such post, and only then drains and destroys the queue
 * pairs.  No post can then meet a queue pair being destroyed (a lock grant
 * for one peer is sent while another's message is handled) or come after
 * its drain.  Posts made with the endpoint's lock held need none of this:
 * the teardown holds it.
 *
 * Context: any; does not sleep.
 * Return: true if the caller may post (and must call rmawin_post_exit()),
 * false once the teardown has begun.
 */
static inline bool rmawin_post_enter(struct rmawin_group *grp)
{
	atomic_inc(&grp->posters);
	/* pairs with the barrier after @dying is set in the teardown */
	smp_mb__after_atomic();
	if (!READ_ONCE(grp->dying))
		return true;
	rmawin_post_exit(grp);
	return false;
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

/* group.c */
int rmawin_ioctl_group_join(struct rmawin_ep *ep, void *arg);
void rmawin_group_destroy(struct rmawin_group *grp);

/* conn.c */
void rmawin_peer_init(struct rmawin_peer *peer, struct rmawin_group *grp, u32 rank);
int rmawin_peer_connect(struct rmawin_peer *peer);
void rmawin_peer_destroy_conn(struct rmawin_peer *peer);
void rmawin_peer_fail(struct rmawin_peer *peer, int err);
void rmawin_peer_lost(struct rmawin_peer *peer);
void rmawin_peer_retry(struct rmawin_peer *peer, bool auth_failed);
void rmawin_peer_protocol_error(struct rmawin_peer *peer);
void rmawin_peer_leave(struct rmawin_peer *peer);
void rmawin_peer_left(struct rmawin_peer *peer);
void rmawin_peer_auth_recv(struct rmawin_peer *peer, const struct rmawin_wire_auth *auth);
void rmawin_peer_welcome_recv(struct rmawin_peer *peer);
int rmawin_peer_grant_access(struct rmawin_peer *peer);
struct rdma_cm_id *rmawin_group_listen_id(struct rmawin_group *grp);
int rmawin_group_join_error(struct rmawin_group *grp);

/* auth.c */
int rmawin_auth_init(struct rmawin_group *grp, const void __user *ukey, u32 len);
void rmawin_auth_free(struct rmawin_group *grp);
void rmawin_group_id(struct rmawin_group *grp);
void rmawin_auth_nonce(u8 *nonce);
int rmawin_auth_mac(struct rmawin_peer *peer, const char *label, u8 *mac);
bool rmawin_auth_check(struct rmawin_peer *peer, const char *label, const u8 *mac);

/* msg.c */
int rmawin_ctrl_alloc(struct rmawin_peer *peer);
void rmawin_ctrl_free(struct rmawin_peer *peer);
void rmawin_rx_work(struct work_struct *work);
int rmawin_ctrl_post_recvs(struct rmawin_peer *peer);
int rmawin_msg_send(struct rmawin_peer *peer, u8 type, u32 arg,
		    const void *payload, u16 len);
int rmawin_msg_send_async(struct rmawin_peer *peer, u8 type, u32 arg,
			  const void *payload, u16 len);
int rmawin_msg_send_first(struct rmawin_peer *peer, u8 type, const void *payload, u16 len);
void rmawin_req_finish(struct rmawin_req *req);

/*
 * Control message handlers (msg.c's dispatch table): the header's type,
 * version and length are checked already.  Each checks every field before
 * it acts and returns 0, or -EPROTO for a message no honest peer sends
 * (the peer is then failed and cut off), or -ENOMEM.
 */
int rmawin_barrier_recv(struct rmawin_peer *peer, u32 round, const void *p, u16 len);
int rmawin_win_desc_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len);
int rmawin_acc_recv(struct rmawin_peer *peer, u32 id, const void *p, u16 len);
int rmawin_acc_quiet_recv(struct rmawin_peer *peer, u32 id, const void *p, u16 len);
int rmawin_acc_reply_recv(struct rmawin_peer *peer, u32 id, const void *p, u16 len);
int rmawin_lock_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len);
int rmawin_lock_grant_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len);
int rmawin_unlock_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len);
int rmawin_pscw_post_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len);
int rmawin_pscw_complete_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len);
int rmawin_notify_recv(struct rmawin_peer *peer, u32 arg, const void *p, u16 len);

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

/* bulk.c */
int rmawin_inbox_setup(struct rmawin_group *grp);
void rmawin_inbox_free(struct rmawin_group *grp);
int rmawin_acc_bulk_recv(struct rmawin_peer *peer, u32 id, const void *p, u16 len);

/* ops.c */
int rmawin_ioctl_rma(struct rmawin_ep *ep, void *arg);
int rmawin_op_run(struct rmawin_ep *ep, const struct rmawin_op_desc *op, bool ring,
		  bool *quiet);
bool rmawin_op_would_wait(struct rmawin_ep *ep, const struct rmawin_op_desc *op);
int rmawin_win_complete(struct rmawin_win *win);
void rmawin_win_reap(struct rmawin_win *win, bool copy_out);
void rmawin_reqs_free_cache(struct rmawin_ep *ep);

/* bounce.c */
int rmawin_bounce_alloc(struct rmawin_group *grp);
void rmawin_bounce_free(struct rmawin_group *grp);
int rmawin_bounce_get(struct rmawin_group *grp);
void rmawin_bounce_put(struct rmawin_group *grp, int slot);

/* rcache.c */
void rmawin_rcache_init(struct rmawin_rcache *rc, struct rmawin_ep *ep,
			struct ib_device *ibdev);
void rmawin_rcache_destroy(struct rmawin_rcache *rc);
struct rmawin_rcache_ent *rmawin_rcache_get(struct rmawin_rcache *rc, u64 addr, u64 len,
					    bool write, bool *hit);
int rmawin_rcache_pin(struct rmawin_rcache_ent *e, unsigned long upto);
void rmawin_rcache_put(struct rmawin_rcache_ent *e, bool failed);

/* acc.c, acc_apply.c, acc_float.c */
u32 rmawin_acc_size(u8 type);
bool rmawin_acc_valid(u8 op, u8 type);
void rmawin_acc_apply(u8 op, u8 type, void *t, const void *o, u32 n);
/*
 * For the apply functions: @stmt on every element t[i], o[i], i < n (the
 * caller's), in a loop of its own for each operation, chosen once: the
 * kernel is built without jump tables (retpolines), so a switch inside the
 * loop would cost a chain of compares per element.
 */
#define RMAWIN_EACH(stmt)						\
	do {								\
		for (i = 0; i < n; i++)					\
			stmt;						\
	} while (0)
/*
 * The operations of every type, integer and floating point: true if @op
 * was one of them (op, t, o, n and i are the caller's).
 */
#define RMAWIN_ARITH_LOOP						\
({									\
	bool __done = true;						\
									\
	switch (op) {							\
	case RMAWIN_ACC_SUM:						\
		RMAWIN_EACH(t[i] += o[i]);				\
		break;							\
	case RMAWIN_ACC_PROD:						\
		RMAWIN_EACH(t[i] *= o[i]);				\
		break;							\
	case RMAWIN_ACC_MIN:						\
		RMAWIN_EACH(t[i] = o[i] < t[i] ? o[i] : t[i]);		\
		break;							\
	case RMAWIN_ACC_MAX:						\
		RMAWIN_EACH(t[i] = o[i] > t[i] ? o[i] : t[i]);		\
		break;							\
	case RMAWIN_ACC_REPLACE:					\
		RMAWIN_EACH(t[i] = o[i]);				\
		break;							\
	default:							\
		__done = false;						\
		break;							\
	}								\
	__done;								\
})
void rmawin_acc_apply_float(u8 op, u8 type, void *t, const void *o, u32 n);
void rmawin_acc_fail_peer(struct rmawin_peer *peer);
void rmawin_acc_fail_all(struct rmawin_group *grp);

/* atomic.c: what windows and groups make and free for the atomics path */
int rmawin_atomic_win_setup(struct rmawin_win *win);
void rmawin_atomic_win_free(struct rmawin_win *win);
void rmawin_self_qp_destroy(struct rmawin_group *grp);
void rmawin_atomic_guess_free(struct rmawin_group *grp);

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

#endif /* RMAWIN_PRIV_H */
