/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmawin: a window as the operations see it (its regions, every peer's
 * descriptor of it, its epochs) and one operation in flight; the entry
 * points of the accumulate family (acc.c, acc_apply.c, acc_float.c) and
 * of the device atomics (atomic.c).  Included by rmawin.h.
 */
#ifndef RMAWIN_REQ_H
#define RMAWIN_REQ_H

#include "rmawin.h"

struct rmawin_req;
struct rmawin_kmem;
struct rmawin_mr_chunk;
struct rmawin_lock_waiter;
struct rmawin_nic_guess;
struct rmawin_rcache_ent;

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
 * @acc_lock: serializes the accumulate family on this window's memory
 * @reqs: operations issued and not yet reaped: only the owner's calls,
 *	under the endpoint's lock, add and remove them (completions only mark
 *	them done)
 * @inflight: operations issued and not yet complete
 * @error: first error of an operation of the current epoch
 * @fence_open: a fence opened an access epoch (no NOSUCCEED)
 * @fence_ops: operations issued since the last fence
 * @unordered: since the window was last idle, an operation of the
 *	accumulate family was issued on it (rmawin_win_drain_start())
 * @reads: ... a get
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
	spinlock_t acc_lock;		/* accumulates applied to the window */
	struct list_head reqs;
	atomic_t inflight;
	int error;
	bool fence_open;
	u64 fence_ops;
	bool unordered;
	bool reads;
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

/* A request's own room for an operand, a compare value and a result (acc.c). */
#define RMAWIN_ACC_INLINE_WORDS	(3 * RMAWIN_ACC_INLINE / sizeof(u64))

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
			u64 inl[RMAWIN_ACC_INLINE_WORDS];
			struct rmawin_nic_guess *guess;
			u32 guess_n;
			bool serial;
		} acc;
	};
};

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
bool rmawin_acc_softirq_ok(u8 type);
void rmawin_acc_fail_peer(struct rmawin_peer *peer);
void rmawin_acc_fail_all(struct rmawin_group *grp);

/* atomic.c: what windows and groups make and free for the atomics path */
int rmawin_atomic_win_setup(struct rmawin_win *win);
void rmawin_atomic_win_free(struct rmawin_win *win);
void rmawin_self_qp_destroy(struct rmawin_group *grp);
void rmawin_atomic_guess_free(struct rmawin_group *grp);

#endif /* RMAWIN_REQ_H */
