// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: the accumulate family through the device's atomics.
 *
 * On a window created with RMAWIN_WIN_SAME_OP the application promised
 * MPI's accumulate_ops=same_op_no_op: concurrent accumulate-family
 * operations on one location all use one op, or NO_OP.  There every
 * operation on 8-byte integers, whatever its op, goes through the
 * device's atomics, never through the target's CPU (acc.c), because the
 * two are not atomic against each other: a device's fetch-and-add and a
 * CPU's read-modify-write under a spinlock may interleave.  Integers of
 * 1, 2 and 4 bytes take the device too only with RMAWIN_WIN_NIC_SMALL_INTS;
 * else the target's CPU applies them, as it does floats and doubles, whose
 * ops the device cannot compute.  The path is a function of the window and
 * the type alone, so every operation on one location of one type takes
 * the same one; a CPU update of small elements in a word that a device
 * atomic updates as one 8-byte element overlaps that element with a
 * different type, which MPI leaves undefined (MPI-3.1 11.7.1).
 *
 * The device works on aligned 8-byte words; an operation takes the words
 * its elements lie in, each word atomic as a whole (so each element in
 * it, as MPI asks):
 *
 *  - 8-byte SUM, and NO_OP of any size, are a fetch-and-add (of 0 for
 *    NO_OP, which reads the word): one round trip;
 *  - compare_and_swap of an 8-byte element is the device's
 *    compare-and-swap: one round trip;
 *  - everything else (other ops, elements of 1, 2 or 4 bytes) is a
 *    compare-and-swap loop: the origin guesses the word's value, swaps in
 *    the guess with the operation applied to its elements if the guess
 *    was right, and otherwise guesses what the device returned.  The
 *    first guess is the value the queue pair last left in that word, if
 *    it was the last word it worked on (an origin repeating an operation
 *    on one location takes one round trip), else 0.  A loop of several
 *    words records what it left in each of its first
 *    RMAWIN_ATOMIC_GUESS_WORDS words, and the next loop on the queue pair
 *    that starts at the same word of the same window guesses those: an
 *    origin repeating an accumulate of bytes on one array takes one round
 *    trip per word, not two.
 *
 * An operation of several words keeps up to RMAWIN_ATOMIC_LANES of them
 * in flight at once, one per lane (a work request with its completion
 * entry and its own 8 bytes of the request's bounce buffer); a lane that
 * is done with its word takes the next word no lane has taken.  A 64 KiB
 * accumulate of bytes is 8192 words: one after the other they cost 8192
 * round trips, and more for each loop that guessed wrong.
 *
 * A same_op window's base and length are multiples of 8 (window.c), so
 * the words of its elements are inside it and inside one region.  The
 * device writes the previous values into one of the group's bounce
 * buffers, which the request holds until it is reaped.  Operations on
 * this rank's own window take the same path through a queue pair
 * connected to itself (created with the first such window of a group of
 * more than one rank; alone, a rank's own accumulates are the only ones,
 * and the CPU path is atomic enough).
 *
 * Order (MPI's default accumulate_ordering): the operations of one origin
 * on one location take effect in the order they were issued.  Atomic work
 * requests on one RC queue pair execute in the order they were posted, so
 * operations of one work request each (SUM, NO_OP and compare_and_swap on
 * one element) keep it by themselves.  A serial one, which takes more than
 * one (a compare-and-swap loop, several words), posts its later work
 * requests from its completion handler, after anything posted meanwhile:
 * so no atomic starts on a queue pair while a serial one is in flight
 * there.  A serial one itself need not wait for what is in flight before
 * it: its first work requests, and so every later one, come after those.
 * Its lanes work on different words, different locations, so they need
 * no order among themselves.
 */
#include <linux/slab.h>
#include <linux/etherdevice.h>
#include <rdma/ib_cache.h>

#include "ops.h"
#include "window.h"

/*
 * Does an operation on @datatype on @win take the device's atomics?  On a
 * same_op window 8-byte integers do; integers of 1, 2 and 4 bytes only
 * with RMAWIN_WIN_NIC_SMALL_INTS; floats never (the device cannot compute
 * them).  A function of the window and the type alone, never of the op or
 * the length: every operation on one location of one type must take the
 * same path, or the two would not be atomic against each other.
 */
static bool rmawin_atomic_on(const struct rmawin_win *win, u8 datatype)
{
	u32 size;

	if (!win->same_op || datatype > RMAWIN_TYPE_UINT64)
		return false;
	size = rmawin_acc_size(datatype);
	return size == sizeof(u64) || (size && win->nic_small);
}

/**
 * rmawin_atomic_check() - does a checked operation take the device's atomics?
 * @t: its target; @t->atomic is set if it does
 * @op: the descriptor, valid as an accumulate-family operation
 *
 * Return: 0; -EINVAL for an integer operation on a same_op window whose
 * elements would straddle two of the device's words: at an offset that is
 * not a multiple of the element size, unless the whole operation lies in
 * one word (an int16 at byte 1 is bytes 1-2 of word 0).
 */
int rmawin_atomic_check(struct rmawin_target *t, const struct rmawin_op_desc *op)
{
	struct rmawin_win *win = t->win;
	struct rmawin_group *grp = win->ep->group;

	t->atomic = false;
	if (!rmawin_atomic_on(win, op->datatype))
		return 0;
	if (t->off % rmawin_acc_size(op->datatype) && t->off % sizeof(u64) + op->len > sizeof(u64))
		return -EINVAL;
	if (!t->remote) {
		/* alone in its group, a rank's own CPU path is atomic enough */
		if (grp->nranks == 1)
			return 0;
		t->remote = win->self;
	}
	t->atomic = true;
	return 0;
}

/* Word @w of the request: its offset in the target window. */
static u64 rmawin_atomic_word(const struct rmawin_req *req, u32 w)
{
	return round_down(req->acc.off, sizeof(u64)) + (u64)w * sizeof(u64);
}

/* The words the request's elements lie in. */
static u32 rmawin_atomic_words(const struct rmawin_req *req)
{
	return (round_up(req->acc.off + req->len, sizeof(u64)) -
		round_down(req->acc.off, sizeof(u64))) / sizeof(u64);
}

/* Bytes [*lo, *hi) of word @w that the request's elements cover. */
static void rmawin_atomic_bytes(const struct rmawin_req *req, u32 w, u32 *lo, u32 *hi)
{
	u64 at = rmawin_atomic_word(req, w);

	*lo = max(req->acc.off, at) - at;
	*hi = min(req->acc.off + req->len, at + sizeof(u64)) - at;
}

/* A fetch-and-add serves an 8-byte SUM, and NO_OP of any size (adding 0). */
static bool rmawin_atomic_fadd(const struct rmawin_req *req)
{
	if (req->opcode == RMAWIN_OP_CAS)
		return false;
	return req->acc.acc_op == RMAWIN_ACC_NO_OP ||
	       (req->acc.acc_op == RMAWIN_ACC_SUM &&
		rmawin_acc_size(req->acc.datatype) == sizeof(u64));
}

/* compare_and_swap of an 8-byte element is the device's own. */
static bool rmawin_atomic_cas1(const struct rmawin_req *req)
{
	return req->opcode == RMAWIN_OP_CAS &&
	       rmawin_acc_size(req->acc.datatype) == sizeof(u64);
}

/* Everything else loops on compare-and-swap. */
static bool rmawin_atomic_loops(const struct rmawin_req *req)
{
	return !rmawin_atomic_fadd(req) && !rmawin_atomic_cas1(req);
}

/*
 * What a loop's compare-and-swap swaps in for @guess of word @w: the word
 * with the operation applied to the request's elements in it.  The word
 * is the device's 8 bytes in the host's order, the same on both ends.
 */
static u64 rmawin_atomic_apply(const struct rmawin_req *req, u32 w, u64 guess)
{
	u32 size = rmawin_acc_size(req->acc.datatype), lo, hi;
	u8 *b = (u8 *)&guess;
	const u8 *o;

	rmawin_atomic_bytes(req, w, &lo, &hi);
	o = (const u8 *)req->acc.data + (rmawin_atomic_word(req, w) + lo - req->acc.off);
	if (req->opcode == RMAWIN_OP_CAS) {
		/* one element; the value to compare with follows the origin */
		if (!memcmp(b + lo, o + req->len, size))
			memcpy(b + lo, o, size);
	} else {
		rmawin_acc_apply(req->acc.acc_op, req->acc.datatype, b + lo, o, (hi - lo) / size);
	}
	return guess;
}

/* The queue pair's last word and the value it left there: a loop's first guess. */
static struct rmawin_nic_last *rmawin_atomic_last(struct rmawin_req *req)
{
	return req->peer ? &req->peer->nic_last : &req->win->ep->group->self_last;
}

/* The queue pair's remembered words. */
static struct rmawin_nic_guess *rmawin_atomic_cache(struct rmawin_req *req)
{
	return req->peer ? &req->peer->nic_guess : &req->win->ep->group->self_guess;
}

/* The first guess for word @w. */
static u64 rmawin_atomic_guess(struct rmawin_req *req, u32 w)
{
	struct rmawin_nic_last *last = rmawin_atomic_last(req);
	u64 addr, room;
	u32 rkey;

	if (w < req->acc.guess_n)
		return req->acc.guess->vals[w];
	if (rmawin_remote_addr(req->acc.remote, rmawin_atomic_word(req, w), &addr, &rkey, &room))
		return 0;
	return READ_ONCE(last->addr) == addr && READ_ONCE(last->rkey) == rkey ?
	       READ_ONCE(last->val) : 0;
}

/*
 * Does the request take more than one work request?  Its later ones are
 * posted from its completion handler, while no other atomic starts on
 * its queue pair.
 */
static bool rmawin_atomic_serial(const struct rmawin_req *req)
{
	return rmawin_atomic_words(req) > 1 || rmawin_atomic_loops(req);
}

/* Is a serial atomic in flight on the request's queue pair? */
static bool *rmawin_atomic_busy(struct rmawin_req *req)
{
	return req->peer ? &req->peer->nic_serial : &req->win->ep->group->self_serial;
}

/*
 * The request posts nothing more: the next atomic may start on its queue
 * pair (the caller wakes the endpoint's waiters).
 */
static void rmawin_atomic_over(struct rmawin_req *req)
{
	if (req->acc.serial)
		WRITE_ONCE(*rmawin_atomic_busy(req), false);
}

/* The first error of the request's work requests stays (lanes may race). */
static void rmawin_atomic_fail(struct rmawin_req *req, int err)
{
	cmpxchg(&req->status, 0, err);
}

/* Post the work request of lane @l, for its word. */
static int rmawin_atomic_post(struct rmawin_atomic_lane *l)
{
	struct rmawin_req *req = l->req;
	struct rmawin_group *grp = req->win->ep->group;
	const u64 *data = req->acc.data;
	struct ib_atomic_wr wr = {};
	struct ib_sge sge;
	u64 room;
	int ret;

	ret = rmawin_remote_addr(req->acc.remote, rmawin_atomic_word(req, l->word),
				 &wr.remote_addr, &wr.rkey, &room);
	if (ret)
		return ret;
	sge.addr = grp->bounce_dma[req->acc.slot] + l->idx * sizeof(u64);
	sge.length = sizeof(u64);
	sge.lkey = req->win->ep->pd->local_dma_lkey;
	wr.wr.wr_cqe = &l->cqe;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	if (rmawin_atomic_fadd(req)) {
		/* 8-byte SUM: the words are the elements */
		wr.wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
		wr.compare_add = req->acc.acc_op == RMAWIN_ACC_NO_OP ? 0 : data[l->word];
	} else if (rmawin_atomic_cas1(req)) {
		wr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
		wr.compare_add = data[1];	/* the compare element follows */
		wr.swap = data[0];
	} else {
		wr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
		wr.compare_add = l->guess;
		wr.swap = rmawin_atomic_apply(req, l->word, l->guess);
	}
	/* the send queue's room, given back at the completion */
	atomic_inc(req->peer ? &req->peer->sq_data : &grp->self_out);
	rmawin_count(req->win->ep, RMAWIN_CNT_NIC_ATOMICS, 1);
	ret = rmawin_post_send(req->acc.qp, &wr.wr, false);
	if (ret)
		atomic_dec(req->peer ? &req->peer->sq_data : &grp->self_out);
	return ret;
}

/*
 * Word @w is done with the previous value @old: its elements' previous
 * values to the result, and what the word holds now to the queue pair's
 * last word.
 */
static void rmawin_atomic_word_done(struct rmawin_req *req, u32 w, u64 old)
{
	struct rmawin_nic_last *last = rmawin_atomic_last(req);
	const u64 *data = req->acc.data;
	u64 now, addr, room;
	u32 lo, hi, rkey;

	rmawin_atomic_bytes(req, w, &lo, &hi);
	if (req->acc.result)
		memcpy(req->acc.result + (rmawin_atomic_word(req, w) + lo - req->acc.off),
		       (u8 *)&old + lo, hi - lo);
	if (rmawin_atomic_fadd(req))
		now = req->acc.acc_op == RMAWIN_ACC_NO_OP ? old : old + data[w];
	else if (rmawin_atomic_cas1(req))
		now = old == data[1] ? data[0] : old;
	else
		now = rmawin_atomic_apply(req, w, old);
	if (req->acc.guess && w < req->acc.guess->n)
		req->acc.guess->vals[w] = now;
	if (rmawin_remote_addr(req->acc.remote, rmawin_atomic_word(req, w), &addr, &rkey, &room))
		return;
	WRITE_ONCE(last->addr, addr);
	WRITE_ONCE(last->rkey, rkey);
	WRITE_ONCE(last->val, now);
}

/*
 * Lane @l's next step after a completion with the previous value @old:
 * another try of a compare-and-swap loop, the next word no lane has
 * taken, or the end.
 * Return: true if a work request was posted.
 */
static bool rmawin_atomic_step(struct rmawin_atomic_lane *l, u64 old)
{
	struct rmawin_req *req = l->req;
	struct rmawin_group *grp = req->win->ep->group;
	u32 w;
	int ret;

	if (rmawin_atomic_loops(req) && old != l->guess) {
		l->guess = old;	/* someone else's value: try again with it */
	} else {
		rmawin_atomic_word_done(req, l->word, old);
		if (READ_ONCE(req->status))
			return false;	/* another lane failed: start nothing more */
		w = atomic_fetch_inc(&req->acc.next_word);
		if (w >= rmawin_atomic_words(req))
			return false;
		l->word = w;
		l->guess = rmawin_atomic_guess(req, w);
	}
	if (req->peer && READ_ONCE(req->peer->state) != RMAWIN_PEER_CONNECTED) {
		ret = req->peer->error ?: -ECONNRESET;
	} else if (READ_ONCE(req->win->ep->dev->dead)) {
		ret = -ENODEV;
	} else if (!rmawin_post_enter(grp)) {
		ret = -ECONNRESET;	/* its queue pair is being drained: post nothing more */
	} else {
		ret = rmawin_atomic_post(l);
		rmawin_post_exit(grp);
	}
	if (ret)
		rmawin_atomic_fail(req, ret);
	return !ret;
}

/*
 * @n of the request's lanes are done: the last one done ends its atomics
 * and lets the next atomic start on its queue pair.
 */
static void rmawin_atomic_retire(struct rmawin_req *req, u32 n)
{
	if (!atomic_sub_and_test(n, &req->acc.active))
		return;
	rmawin_atomic_over(req);
	rmawin_ep_wake_all(req->win->ep);
	if (atomic_dec_and_test(&req->pending))
		rmawin_req_finish(req);
}

static void rmawin_atomic_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmawin_atomic_lane *l = container_of(wc->wr_cqe, struct rmawin_atomic_lane, cqe);
	struct rmawin_req *req = l->req;
	struct rmawin_group *grp = req->win->ep->group;
	u64 dma = grp->bounce_dma[req->acc.slot] + l->idx * sizeof(u64);
	u64 old;

	atomic_dec(req->peer ? &req->peer->sq_data : &grp->self_out);
	if (wc->status != IB_WC_SUCCESS) {
		rmawin_atomic_fail(req, rmawin_wc_errno(wc->status));
		if (req->peer)
			rmawin_peer_lost(req->peer);
		rmawin_atomic_retire(req, 1);
		return;
	}
	ib_dma_sync_single_for_cpu(grp->ibdev, dma, sizeof(u64), DMA_FROM_DEVICE);
	old = *(u64 *)((u8 *)grp->bounce_mem[req->acc.slot] + l->idx * sizeof(u64));
	if (!rmawin_atomic_step(l, old))
		rmawin_atomic_retire(req, 1);
}

/*
 * May the request start: room in its send queue, and no serial atomic in
 * flight on its queue pair?  Also true once it cannot start at all.
 */
static bool rmawin_atomic_room(struct rmawin_req *req)
{
	struct rmawin_group *grp = req->win->ep->group;
	struct rmawin_peer *peer = req->peer;

	if (READ_ONCE(grp->ep->dev->dead))
		return true;
	if (peer)
		return READ_ONCE(peer->state) != RMAWIN_PEER_CONNECTED ||
		       (rmawin_sq_room(peer) && !READ_ONCE(peer->nic_serial));
	return atomic_read(&grp->self_out) < RMAWIN_SELF_DEPTH && !READ_ONCE(grp->self_serial);
}

/*
 * A compare-and-swap loop of several words records what it leaves in its
 * queue pair's remembered words, and takes its first guesses from them if
 * the loop before started at the same word of the same window.  The array
 * grows (only here, while no serial atomic is in flight on the queue pair,
 * so no completion uses it) to the request's words, up to
 * RMAWIN_ATOMIC_GUESS_WORDS; without memory the request records nothing.
 */
static void rmawin_atomic_guess_get(struct rmawin_req *req)
{
	struct rmawin_nic_guess *g = rmawin_atomic_cache(req);
	u32 n = min_t(u32, rmawin_atomic_words(req), RMAWIN_ATOMIC_GUESS_WORDS);
	u64 off = rmawin_atomic_word(req, 0);
	bool same = g->vals && g->remote == req->acc.remote && g->off == off;

	req->acc.guess = NULL;
	req->acc.guess_n = 0;
	if (n < 2 || !rmawin_atomic_loops(req))
		return;
	if (same)
		req->acc.guess_n = min(n, g->n);
	if (g->n < n) {
		kvfree(g->vals);
		g->vals = kvmalloc_array(n, sizeof(u64), GFP_KERNEL_ACCOUNT);
		g->n = g->vals ? n : 0;
		req->acc.guess_n = 0;
		if (!g->vals)
			return;
	}
	g->remote = req->acc.remote;
	g->off = off;
	req->acc.guess = g;
}

/**
 * rmawin_atomic_guess_free() - free the queue pairs' remembered words
 * @grp: the group, being torn down: no atomic is in flight
 */
void rmawin_atomic_guess_free(struct rmawin_group *grp)
{
	u32 i;

	for (i = 0; i < grp->nranks; i++) {
		kvfree(grp->peers[i].nic_guess.vals);
		grp->peers[i].nic_guess.vals = NULL;
		grp->peers[i].nic_guess.n = 0;
	}
	kvfree(grp->self_guess.vals);
	grp->self_guess.vals = NULL;
	grp->self_guess.n = 0;
}

/*
 * How many lanes the request gets: one per word, up to RMAWIN_ATOMIC_LANES
 * and the room in its send queue (at least one: rmawin_atomic_room() said
 * so, and only the endpoint's own calls, under its lock, post data there).
 * Each lane after the first is allocated, and charged; without memory the
 * request makes do with one.
 */
static void rmawin_atomic_lanes_get(struct rmawin_req *req)
{
	struct rmawin_group *grp = req->win->ep->group;
	int used = req->peer ? atomic_read(&req->peer->sq_data) : atomic_read(&grp->self_out);
	int max = req->peer ? grp->sq_data_max : RMAWIN_SELF_DEPTH;
	u32 n = min_t(u32, rmawin_atomic_words(req), RMAWIN_ATOMIC_LANES), i;

	BUILD_BUG_ON(RMAWIN_ATOMIC_LANES * sizeof(u64) > RMAWIN_BOUNCE_SIZE);
	n = min_t(u32, n, used < max ? max - used : 1);
	req->acc.lanes = &req->acc.one;
	if (n > 1) {
		req->acc.lanes = kcalloc(n, sizeof(*req->acc.lanes), GFP_KERNEL_ACCOUNT);
		if (!req->acc.lanes) {
			req->acc.lanes = &req->acc.one;
			n = 1;
		}
	}
	for (i = 0; i < n; i++) {
		req->acc.lanes[i].cqe.done = rmawin_atomic_done;
		req->acc.lanes[i].req = req;
		req->acc.lanes[i].word = i;
		req->acc.lanes[i].idx = i;
		req->acc.lanes[i].guess = rmawin_atomic_guess(req, i);
	}
	atomic_set(&req->acc.next_word, n);
	atomic_set(&req->acc.active, n);
}

/**
 * rmawin_atomic_issue() - start an operation on the device's atomics
 * @req: the request, with its window, on the window's list; its peer, or
 *	NULL for this rank's own window
 * @op: the descriptor, checked
 * @t: its target, rmawin_atomic_check() said so
 *
 * Context: process context, endpoint lock held; sleeps for a bounce
 * buffer, for room in the send queue, and until a serial atomic in flight
 * on the queue pair is over (a few round trips).
 * Return: 0 or a negative errno; the request then completes with it.
 */
int rmawin_atomic_issue(struct rmawin_req *req, const struct rmawin_op_desc *op,
			const struct rmawin_target *t)
{
	struct rmawin_group *grp = req->win->ep->group;
	u32 n, i;
	int ret;

	lockdep_assert_held(&req->win->ep->lock);
	req->acc.nic = true;
	req->acc.slot = -1;
	req->acc.lanes = NULL;
	req->acc.guess = NULL;
	req->acc.guess_n = 0;
	if (rmawin_acc_bufs(req, op))
		return -ENOMEM;
	req->acc.result_uaddr = u64_to_user_ptr(op->result);
	ret = rmawin_acc_copy_in(op, req->acc.data);
	if (ret)
		return ret;
	ret = rmawin_bounce_take(req->win->ep, req->peer);
	if (ret < 0)
		return ret;
	req->acc.slot = ret;
	req->acc.qp = req->peer ? req->peer->qp : grp->self_qp;
	req->acc.remote = t->remote;
	req->acc.off = t->off;
	req->acc.acc_op = op->acc_op;
	req->acc.datatype = op->datatype;
	if (rmawin_wait_event(req->win->ep, rmawin_atomic_room(req)))
		return -EINTR;
	if (req->peer && READ_ONCE(req->peer->state) != RMAWIN_PEER_CONNECTED)
		return req->peer->error ?: -ECONNRESET;
	if (READ_ONCE(grp->ep->dev->dead))
		return -ENODEV;
	rmawin_atomic_guess_get(req);
	rmawin_atomic_lanes_get(req);
	n = atomic_read(&req->acc.active);
	/* before the post: its completion may run before the post returns */
	req->acc.serial = rmawin_atomic_serial(req);
	if (req->acc.serial)
		WRITE_ONCE(*rmawin_atomic_busy(req), true);
	atomic_inc(&req->pending);
	for (i = 0; i < n; i++) {
		ret = rmawin_atomic_post(&req->acc.lanes[i]);
		if (ret)
			break;
	}
	if (!i) {
		atomic_dec(&req->pending);
		rmawin_atomic_over(req);
		return ret;
	}
	if (i < n) {
		/* the lanes in flight finish the request, with the error */
		rmawin_atomic_fail(req, ret);
		rmawin_atomic_retire(req, n - i);
	}
	return 0;
}

/**
 * rmawin_atomic_would_wait() - would an operation wait for a serial atomic?
 * @ep: the endpoint, locked, in a group
 * @op: the descriptor, unchecked
 *
 * An integer accumulate-family operation on a same_op window, to a target
 * whose queue pair has a serial atomic in flight, would wait in
 * rmawin_atomic_issue() until that is over.  A descriptor that would fail
 * its checks may be said to wait too: it is only run later.
 *
 * Return: true if it would wait.
 */
bool rmawin_atomic_would_wait(struct rmawin_ep *ep, const struct rmawin_op_desc *op)
{
	struct rmawin_group *grp = ep->group;
	struct rmawin_win *win;
	bool serial;

	lockdep_assert_held(&ep->lock);
	if (op->target >= grp->nranks)
		return false;
	/* the flag first: the window's lookup only when a serial atomic is in flight */
	if (op->target == grp->rank)
		serial = READ_ONCE(grp->self_serial);
	else
		serial = READ_ONCE(grp->peers[op->target].nic_serial);
	if (!serial)
		return false;
	win = rmawin_win_lookup(ep, op->win);
	return win && rmawin_atomic_on(win, op->datatype);
}

/**
 * rmawin_atomic_release() - let go of what an atomic request took
 * @req: a finished request that went through rmawin_atomic_issue()
 *
 * Context: process context of the window's owner.
 */
void rmawin_atomic_release(struct rmawin_req *req)
{
	if (req->acc.lanes != &req->acc.one)
		kfree(req->acc.lanes);
	req->acc.lanes = NULL;
	if (req->acc.slot >= 0)
		rmawin_bounce_put(req->win->ep->group, req->acc.slot);
	req->acc.slot = -1;
}

/*
 * Our queue pair's address with ourselves as the destination: the path of
 * a connected peer's queue pair on the same port, its destination GID and
 * MAC replaced by ours (rxe and hardware then loop it back).
 */
static int rmawin_self_av(struct rmawin_group *grp, struct ib_qp_attr *attr)
{
	struct ib_qp_init_attr init;
	const struct ib_gid_attr *sgid;
	struct rmawin_peer *peer = NULL;
	u8 mac[ETH_ALEN];
	u32 i;
	int ret;

	for (i = 0; i < grp->nranks && !peer; i++)
		if (i != grp->rank && READ_ONCE(grp->peers[i].state) == RMAWIN_PEER_CONNECTED)
			peer = &grp->peers[i];
	if (!peer)
		return -ECONNRESET;
	ret = ib_query_qp(peer->qp, attr, IB_QP_AV | IB_QP_PATH_MTU | IB_QP_PKEY_INDEX |
			  IB_QP_PORT, &init);
	if (ret)
		return ret;
	if (!(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
		return -EOPNOTSUPP;
	sgid = rdma_get_gid_attr(grp->ibdev, rdma_ah_get_port_num(&attr->ah_attr),
				 rdma_ah_read_grh(&attr->ah_attr)->sgid_index);
	if (IS_ERR(sgid))
		return PTR_ERR(sgid);
	ret = rdma_read_gid_l2_fields(sgid, NULL, mac);
	if (!ret) {
		rdma_ah_retrieve_grh(&attr->ah_attr)->dgid = sgid->gid;
		if (attr->ah_attr.type == RDMA_AH_ATTR_TYPE_ROCE)
			ether_addr_copy(attr->ah_attr.roce.dmac, mac);
	}
	rdma_put_gid_attr(sgid);
	attr->port_num = rdma_ah_get_port_num(&attr->ah_attr);
	return ret;
}

/* INIT, RTR with itself as the destination, RTS. */
static int rmawin_self_connect(struct rmawin_group *grp, struct ib_qp *qp,
			       struct ib_qp_attr *attr)
{
	u8 rd_atom = min_t(u32, grp->ibdev->attrs.max_qp_rd_atom, 16);
	struct ib_qp_attr a = {};
	int ret;

	a.qp_state = IB_QPS_INIT;
	a.pkey_index = attr->pkey_index;
	a.port_num = attr->port_num;
	a.qp_access_flags = IB_ACCESS_REMOTE_ATOMIC;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.ah_attr = attr->ah_attr;
	a.path_mtu = attr->path_mtu;
	a.dest_qp_num = qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = rd_atom;
	a.min_rnr_timer = 12;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
			   IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = rd_atom;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

/* The group's queue pair to itself, for atomics on this rank's windows. */
static int rmawin_self_qp_create(struct rmawin_group *grp)
{
	struct ib_qp_init_attr init = {
		.send_cq = grp->scq.cq,
		.recv_cq = grp->cq,
		.cap = {
			/* one more of each for ib_drain_qp() */
			.max_send_wr = RMAWIN_SELF_DEPTH + 1,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp_attr attr = {};
	struct ib_qp *qp;
	int ret;

	ret = rmawin_self_av(grp, &attr);
	if (ret)
		return ret;
	init.port_num = attr.port_num;
	qp = ib_create_qp(grp->ep->pd, &init);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	atomic_inc(&rmawin_stats.qps);
	ret = rmawin_self_connect(grp, qp, &attr);
	if (ret) {
		ib_destroy_qp(qp);
		atomic_dec(&rmawin_stats.qps);
		return ret;
	}
	grp->self_qp = qp;
	return 0;
}

/**
 * rmawin_self_qp_destroy() - flush and destroy the group's queue pair to itself
 * @grp: the group
 *
 * Context: process context; the group is being torn down.
 */
void rmawin_self_qp_destroy(struct rmawin_group *grp)
{
	if (!grp->self_qp)
		return;
	rmawin_scq_drain_qp(grp->self_qp);
	ib_destroy_qp(grp->self_qp);
	grp->self_qp = NULL;
	atomic_dec(&rmawin_stats.qps);
}

/**
 * rmawin_atomic_win_setup() - a same_op window's own side of the atomics path
 * @win: the window, registered
 *
 * Its regions as a peer's descriptor would give them, for the operations
 * this rank issues to it, and the group's queue pair to itself.
 *
 * Context: process context, endpoint lock held.
 * Return: 0, -ENOMEM, or why the queue pair could not be made.
 */
int rmawin_atomic_win_setup(struct rmawin_win *win)
{
	struct rmawin_group *grp = win->ep->group;
	struct rmawin_remote *r;
	int ret;

	lockdep_assert_held(&win->ep->lock);
	if (grp->nranks == 1)
		return 0;
	if (!grp->self_qp) {
		ret = rmawin_self_qp_create(grp);
		if (ret)
			return ret;
	}
	r = rmawin_desc_self(win);
	if (!r)
		return -ENOMEM;
	win->self = r;
	return 0;
}

/**
 * rmawin_atomic_win_free() - free what rmawin_atomic_win_setup() made
 * @win: the window
 */
void rmawin_atomic_win_free(struct rmawin_win *win)
{
	rmawin_desc_self_free(win->self);
	win->self = NULL;
}
