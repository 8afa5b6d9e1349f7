/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmawin: a group and its peers: the connections, their control-message
 * buffers, the registration cache, the inbox of large accumulates and the
 * device atomics' memory of each queue pair; the entry points of the files
 * that run them (group.c, conn.c, fail.c, auth.c, msg.c, recv.c, bulk.c,
 * bounce.c, rcache.c).  Included by rmawin.h.
 */
#ifndef RMAWIN_GROUP_H
#define RMAWIN_GROUP_H

#include "rmawin.h"
#include "scq.h"

struct rmawin_req;
struct crypto_shash;
struct net;

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
 *	receive work (recv.c)
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

static inline struct rmawin_ctrl_buf *rmawin_cqe_to_buf(struct ib_cqe *cqe)
{
	return container_of(cqe, struct rmawin_ctrl_buf, cqe);
}

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
 * @proven: under the group's lock: the initiator's proof of this attempt
 *	came in time (its timeout no longer ends the attempt)
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
 * @cut: the group's fail work has cut this failed member off (its own)
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
	bool proven;
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
	bool cut;
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
 *	nothing but spinlocks is handled there, the rest in @rx_work (recv.c)
 * @sq_data_max: data work requests one peer's queue pair may have in
 *	flight: RMAWIN_SQ_DATA, or fewer where the device's largest send
 *	completion queue cannot hold that many for every peer
 * @scq: the send completion queue of every queue pair (RDMA reads and
 *	writes, registrations, control message sends), polled by the system
 *	call that posted, right after its post, or else in softirq context
 *	(scq.c): its handlers never sleep, and a waiter is woken straight
 *	from the device's completion instead of after a kworker switch
 * @peers: one per rank; ours is unused
 * @lock: peer states, send-buffer bitmaps and @rx_queue; taken in CM and
 *	CQ context
 * @rx_queue: receive completions waiting for @rx_work, in arrival order
 * @rx_busy: @rx_work is handling one it took off @rx_queue: later ones
 *	wait behind it too
 * @fail_work: cuts failed members off and lets go of the window locks
 *	they held or waited for (fail.c); queued, unless @dying, when a
 *	member fails
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
 * @bounce_busy: bitmap of bounce buffers in use (atomic bit operations, bounce.c)
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
	struct rmawin_scq scq;
	u32 sq_data_max;
	struct rmawin_peer *peers;
	spinlock_t lock;		/* peer states, tx bitmaps, rx_queue */
	struct list_head rx_queue;
	bool rx_busy;
	struct work_struct fail_work;
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

/* group.c */
int rmawin_ioctl_group_join(struct rmawin_ep *ep, void *arg);
void rmawin_group_destroy(struct rmawin_group *grp);

/* conn.c */
void rmawin_peer_init(struct rmawin_peer *peer, struct rmawin_group *grp, u32 rank);
int rmawin_peer_connect(struct rmawin_peer *peer);
void rmawin_peer_destroy_conn(struct rmawin_peer *peer);
void rmawin_peer_retry(struct rmawin_peer *peer, bool auth_failed);
void rmawin_peer_auth_recv(struct rmawin_peer *peer, const struct rmawin_wire_auth *auth);
void rmawin_peer_welcome_recv(struct rmawin_peer *peer);
int rmawin_peer_grant_access(struct rmawin_peer *peer);
struct rdma_cm_id *rmawin_group_listen_id(struct rmawin_group *grp);
int rmawin_group_join_error(struct rmawin_group *grp);

/* fail.c */
void rmawin_peer_fail(struct rmawin_peer *peer, int err);
void rmawin_peer_lost(struct rmawin_peer *peer);
void rmawin_peer_left(struct rmawin_peer *peer);
void rmawin_peer_cut_off(struct rmawin_peer *peer, int err);
void rmawin_peer_protocol_error(struct rmawin_peer *peer);
void rmawin_group_fail_recheck(struct rmawin_group *grp);
void rmawin_group_fail_work(struct work_struct *work);

/* auth.c */
int rmawin_auth_init(struct rmawin_group *grp, const void __user *ukey, u32 len);
void rmawin_auth_free(struct rmawin_group *grp);
void rmawin_group_id(struct rmawin_group *grp);
void rmawin_auth_nonce(u8 *nonce);
int rmawin_auth_mac(struct rmawin_peer *peer, const char *label, u8 *mac);
bool rmawin_auth_check(struct rmawin_peer *peer, const char *label, const u8 *mac);

/* recv.c */
void rmawin_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void rmawin_rx_work(struct work_struct *work);
void rmawin_peer_leave(struct rmawin_peer *peer);
int rmawin_ctrl_post_recvs(struct rmawin_peer *peer);

/* msg.c */
int rmawin_ctrl_alloc(struct rmawin_peer *peer);
void rmawin_ctrl_free(struct rmawin_peer *peer);
int rmawin_msg_send(struct rmawin_peer *peer, u8 type, u32 arg,
		    const void *payload, u16 len);
int rmawin_msg_send_fenced(struct rmawin_peer *peer, u8 type, u32 arg,
			   const void *payload, u16 len, bool fence);
void rmawin_msg_probe(struct rmawin_peer *peer);
int rmawin_msg_send_async(struct rmawin_peer *peer, u8 type, u32 arg,
			  const void *payload, u16 len);
int rmawin_msg_send_first(struct rmawin_peer *peer, u8 type, const void *payload, u16 len);
void rmawin_req_finish(struct rmawin_req *req);

/**
 * rmawin_msg_signal() - rmawin_msg_send_fenced() of a message without payload
 * @peer: destination
 * @type: enum rmawin_msg_type
 * @arg: the header's type-specific argument
 * @fence: behind the reads and atomics posted before it
 *
 * Context and return: as rmawin_msg_send().
 */
static inline int rmawin_msg_signal(struct rmawin_peer *peer, u8 type, u32 arg, bool fence)
{
	return rmawin_msg_send_fenced(peer, type, arg, NULL, 0, fence);
}

/*
 * Control message handlers (recv.c's dispatch table): the header's type,
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

/* bulk.c */
int rmawin_inbox_setup(struct rmawin_group *grp);
void rmawin_inbox_free(struct rmawin_group *grp);
int rmawin_acc_bulk_recv(struct rmawin_peer *peer, u32 id, const void *p, u16 len);

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
					    bool write, bool lookup, bool *hit);
int rmawin_rcache_pin(struct rmawin_rcache_ent *e, unsigned long upto);
void rmawin_rcache_put(struct rmawin_rcache_ent *e, bool failed);

#endif /* RMAWIN_GROUP_H */
