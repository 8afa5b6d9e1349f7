// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: generalized active target synchronization (post, start,
 * complete, wait, test), with MPI's matching rules.
 *
 * POST sends a POST message to each origin of the exposure epoch; START
 * waits until each of its targets has posted to it; COMPLETE completes the
 * access epoch's operations, then sends COMPLETE to each target; WAIT
 * waits for a COMPLETE from each origin.  Messages are counted per rank,
 * ever: the k-th START on a target matches its k-th POST to us, and the
 * k-th WAIT the k-th COMPLETE of each origin, however early they arrive.
 *
 * An access epoch of one target and one small put or accumulate may send
 * that operation in its COMPLETE (RMAWIN_OP_F_EPOCH_COMPLETE): the target
 * applies it as the message arrives, before it counts the COMPLETE, so one
 * send does the work of the operation's and COMPLETE's.
 */
#include <linux/slab.h>
#include <linux/bitmap.h>
#include <linux/uaccess.h>

#include "rmawin.h"
#include "ops.h"

/**
 * rmawin_win_pscw_init() - the window's post/start/complete/wait state
 * @win: a new window, with its endpoint's group
 *
 * Return: 0 or -ENOMEM.
 */
int rmawin_win_pscw_init(struct rmawin_win *win)
{
	struct rmawin_pscw_state *s = &win->pscw;
	u32 n = win->ep->group->nranks;

	s->posts_rcvd = kcalloc(n, sizeof(*s->posts_rcvd), GFP_KERNEL_ACCOUNT);
	s->completes_rcvd = kcalloc(n, sizeof(*s->completes_rcvd), GFP_KERNEL_ACCOUNT);
	s->posts_used = kcalloc(n, sizeof(*s->posts_used), GFP_KERNEL_ACCOUNT);
	s->completes_due = kcalloc(n, sizeof(*s->completes_due), GFP_KERNEL_ACCOUNT);
	s->access = bitmap_zalloc(n, GFP_KERNEL_ACCOUNT);
	s->exposure = bitmap_zalloc(n, GFP_KERNEL_ACCOUNT);
	if (!s->posts_rcvd || !s->completes_rcvd || !s->posts_used || !s->completes_due ||
	    !s->access || !s->exposure) {
		rmawin_win_pscw_free(win);
		return -ENOMEM;
	}
	return 0;
}

/**
 * rmawin_win_pscw_free() - free it
 * @win: the window
 */
void rmawin_win_pscw_free(struct rmawin_win *win)
{
	struct rmawin_pscw_state *s = &win->pscw;

	kfree(s->posts_rcvd);
	kfree(s->completes_rcvd);
	kfree(s->posts_used);
	kfree(s->completes_due);
	bitmap_free(s->access);
	bitmap_free(s->exposure);
	memset(s, 0, sizeof(*s));
}

/*
 * POST or COMPLETE from @peer.  An honest peer is at most one POST ahead
 * of the STARTs that use them (it posts again only after we completed the
 * last epoch, which needed a START), and sends a COMPLETE only for an
 * epoch we posted to it; anything beyond is a protocol error, so that the
 * counts stay meaningful and bounded.
 */
static int rmawin_pscw_count(struct rmawin_peer *peer, u32 win_id, bool post,
			     const struct rmawin_wire_acc *carried, u16 len)
{
	struct rmawin_ep *ep = peer->grp->ep;
	u32 r = peer->rank;
	struct rmawin_win *win;
	atomic_t *cnt;
	int ret = 0;
	u32 limit;

	xa_lock_bh(&ep->wins);
	win = xa_load(&ep->wins, win_id);
	if (!win) {
		ret = -EPROTO;
		goto out_unlock;
	}
	cnt = post ? &win->pscw.posts_rcvd[r] : &win->pscw.completes_rcvd[r];
	limit = post ? READ_ONCE(win->pscw.posts_used[r]) + 2 :
		       READ_ONCE(win->pscw.completes_due[r]);
	if ((s32)(atomic_read(cnt) + 1 - limit) > 0 ||
	    (len && !rmawin_acc_carried_ok(carried, len, win))) {
		ret = -EPROTO;
		goto out_unlock;
	}
	/* the epoch's operation lands before WAIT can see its COMPLETE */
	if (len)
		rmawin_acc_apply_win(win, RMAWIN_OP_ACC, carried->acc_op, carried->datatype,
				     le64_to_cpu(carried->offset), le32_to_cpu(carried->len),
				     carried->data, NULL);
	atomic_inc(cnt);
out_unlock:
	xa_unlock_bh(&ep->wins);
	wake_up_all(&ep->wq);
	return ret;
}

/**
 * rmawin_pscw_post_recv() - RMAWIN_MSG_POST from a peer
 * @peer: the sender
 * @win_id: the window
 * @p: no payload
 * @len: 0
 *
 * Context: the receive completion's softirq, or the receive work (recv.c).
 * Return: 0 or -EPROTO.
 */
int rmawin_pscw_post_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len)
{
	return rmawin_pscw_count(peer, win_id, true, NULL, 0);
}

/**
 * rmawin_pscw_complete_recv() - RMAWIN_MSG_COMPLETE from a peer
 * @peer: the sender
 * @win_id: the window
 * @p: nothing, or the epoch's operation it carries (struct rmawin_wire_acc
 *	and data, rmawin_acc_carried_ok())
 * @len: 0, or the payload's bytes
 *
 * Context: the receive completion's softirq, or the receive work (recv.c).
 * Return: 0 or -EPROTO.
 */
int rmawin_pscw_complete_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len)
{
	if (len && len < sizeof(struct rmawin_wire_acc))
		return -EPROTO;
	return rmawin_pscw_count(peer, win_id, false, p, len);
}

/*
 * Send POST or COMPLETE to @rank, or count it here if @rank is us; @fence:
 * behind the reads posted before it (rmawin_msg_signal()).  @carried
 * (@len bytes, to another rank only): the epoch's operation, in the COMPLETE.
 */
static int rmawin_pscw_tell(struct rmawin_win *win, u32 rank, u8 type, bool fence,
			    const struct rmawin_wire_acc *carried, u16 len)
{
	struct rmawin_group *grp = win->ep->group;

	if (rank != grp->rank)
		return rmawin_msg_send_fenced(&grp->peers[rank], type, win->id, carried, len,
					      fence);
	atomic_inc(type == RMAWIN_MSG_POST ? &win->pscw.posts_rcvd[rank] :
					     &win->pscw.completes_rcvd[rank]);
	return 0;
}

/* The rank list of POST or START into @mask: distinct, in range. */
static int rmawin_pscw_ranks(struct rmawin_win *win, const struct rmawin_pscw *p,
			     unsigned long *mask)
{
	u32 __user *uranks = u64_to_user_ptr(p->ranks_ptr);
	u32 n = win->ep->group->nranks, i, r;

	if (!p->n || p->n > n)
		return -EINVAL;
	bitmap_zero(mask, n);
	for (i = 0; i < p->n; i++) {
		if (get_user(r, &uranks[i]))
			return -EFAULT;
		if (r >= n || test_bit(r, mask))
			return -EINVAL;
		__set_bit(r, mask);
	}
	return 0;
}

/* The window a PSCW call names; -EBUSY while another thread's START or WAIT waits on it. */
static int rmawin_pscw_win(struct rmawin_ep *ep, const struct rmawin_pscw *p,
			   struct rmawin_win **win)
{
	int ret = rmawin_ep_check_group(ep);

	if (ret)
		return ret;
	*win = rmawin_win_lookup(ep, p->win);
	if (!*win)
		return -ENOENT;
	return (*win)->pscw.waiting ? -EBUSY : 0;
}

static bool rmawin_pscw_dead(struct rmawin_win *win, u32 rank)
{
	return READ_ONCE(win->ep->group->peers[rank].state) == RMAWIN_PEER_FAILED ||
	       READ_ONCE(win->ep->dev->dead);
}

/* Have all ranks of @mask sent their @want-th message in @counts? */
static bool rmawin_pscw_arrived(struct rmawin_win *win, unsigned long *mask,
				atomic_t *counts, u32 *want)
{
	u32 r;

	for_each_set_bit(r, mask, win->ep->group->nranks)
		if ((s32)(atomic_read(&counts[r]) - want[r]) < 0 && !rmawin_pscw_dead(win, r))
			return false;
	return true;
}

/* After a wait: the first rank of @mask that failed instead, as an errno. */
static int rmawin_pscw_failed(struct rmawin_win *win, unsigned long *mask,
			      atomic_t *counts, u32 *want)
{
	u32 r;

	if (READ_ONCE(win->ep->dev->dead))
		return -ENODEV;
	for_each_set_bit(r, mask, win->ep->group->nranks)
		if ((s32)(atomic_read(&counts[r]) - want[r]) < 0)
			return win->ep->group->peers[r].error ?: -ECONNRESET;
	return 0;
}

/* Wait for @counts to reach @want on every rank of @mask, without the endpoint's lock. */
static int rmawin_pscw_wait(struct rmawin_win *win, unsigned long *mask, atomic_t *counts,
			    u32 *want)
{
	int ret;

	win->pscw.waiting = true;
	ret = rmawin_wait_unlocked(win->ep, win, rmawin_pscw_arrived(win, mask, counts, want));
	win->pscw.waiting = false;
	return ret;
}

static int rmawin_do_post(struct rmawin_ep *ep, struct rmawin_pscw *p)
{
	struct rmawin_pscw_state *s;
	struct rmawin_win *win;
	int ret, tret;
	u32 r;

	ret = rmawin_pscw_win(ep, p, &win);
	if (ret)
		return ret;
	s = &win->pscw;
	if (s->posted)
		return -EBUSY;
	ret = rmawin_pscw_ranks(win, p, s->exposure);
	if (ret)
		return ret;
	/*
	 * Every rank is told, even after one could not be: the others' START
	 * would otherwise take a POST that no WAIT closes.  The epoch is
	 * posted; WAIT reports the rank that failed.
	 */
	for_each_set_bit(r, s->exposure, ep->group->nranks) {
		WRITE_ONCE(s->completes_due[r], s->completes_due[r] + 1);
		tret = rmawin_pscw_tell(win, r, RMAWIN_MSG_POST, false, NULL, 0);
		ret = ret ?: tret;
	}
	s->posted = true;
	return ret;
}

static int rmawin_do_start(struct rmawin_ep *ep, struct rmawin_pscw *p)
{
	struct rmawin_pscw_state *s;
	struct rmawin_win *win;
	u32 r;
	int ret;

	ret = rmawin_pscw_win(ep, p, &win);
	if (ret)
		return ret;
	s = &win->pscw;
	if (s->started || win->nheld || (win->fence_open && win->fence_ops))
		return -EBUSY;
	ret = rmawin_pscw_ranks(win, p, s->access);
	if (ret)
		return ret;
	for_each_set_bit(r, s->access, ep->group->nranks)
		WRITE_ONCE(s->posts_used[r], s->posts_used[r] + 1);
	if (rmawin_pscw_wait(win, s->access, s->posts_rcvd, s->posts_used))
		ret = -EINTR;
	else
		ret = rmawin_pscw_failed(win, s->access, s->posts_rcvd, s->posts_used);
	if (ret) {
		/* no epoch started: the POSTs it was to use are for the next START */
		for_each_set_bit(r, s->access, ep->group->nranks)
			WRITE_ONCE(s->posts_used[r], s->posts_used[r] - 1);
		return ret;
	}
	win->fence_open = false;
	s->started = true;
	return 0;
}

/*
 * End @win's access epoch, which was started; @carried (@len bytes): its
 * operation, to go in the COMPLETE of the epoch's one target.
 */
static int rmawin_pscw_complete(struct rmawin_win *win, const struct rmawin_wire_acc *carried,
				u16 len)
{
	struct rmawin_pscw_state *s = &win->pscw;
	struct rmawin_ep *ep = win->ep;
	struct rmawin_drain d;
	int ret, tret;
	bool cut;
	u32 r;

	/*
	 * The epoch's operations are done at the targets before they hear:
	 * complete here first, or, if they are puts and gets, followed on
	 * their queue pairs by COMPLETE (which an error there never lets
	 * through).  The call still returns once they complete here.
	 */
	ret = rmawin_win_drain_start(win, true, &d);
	/*
	 * Cut short (a fatal signal, a dead device) with operations still in
	 * flight: no COMPLETE may tell a target they are done.  Its WAIT
	 * fails once this rank's teardown fails it there.
	 */
	cut = ret && atomic_read(&win->inflight);
	for_each_set_bit(r, s->access, cut ? 0 : ep->group->nranks) {
		tret = rmawin_pscw_tell(win, r, RMAWIN_MSG_COMPLETE, d.fence, carried, len);
		ret = ret ?: tret;
	}
	s->started = false;
	return rmawin_win_drain_end(win, &d, ret);
}

static int rmawin_do_complete(struct rmawin_ep *ep, struct rmawin_pscw *p)
{
	struct rmawin_win *win;
	int ret;

	ret = rmawin_pscw_win(ep, p, &win);
	if (ret)
		return ret;
	if (!win->pscw.started)
		return -EPERM;
	return rmawin_pscw_complete(win, NULL, 0);
}

/**
 * rmawin_pscw_op_check() - may @op end its access epoch, in the COMPLETE?
 * @ep: the endpoint, locked
 * @op: an operation with RMAWIN_OP_F_EPOCH_COMPLETE, its target in range
 * @t: where it lands (@win set)
 *
 * In place of the access epoch check: a started epoch whose one target
 * @op names; a PUT or ACC of 1 to RMAWIN_EPOCH_OP_MAX bytes, not from the
 * ring (rmawin_op_check() refuses one on the device's atomics).
 *
 * Return: 0 (@t->carried set) or the uAPI's errno.
 */
int rmawin_pscw_op_check(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
			 struct rmawin_target *t)
{
	struct rmawin_pscw_state *s = &t->win->pscw;
	u32 n = ep->group->nranks;

	if (t->ring || op->target == ep->group->rank || !op->len ||
	    (op->opcode != RMAWIN_OP_PUT && op->opcode != RMAWIN_OP_ACC))
		return -EINVAL;
	if (op->len > RMAWIN_EPOCH_OP_MAX)
		return -EMSGSIZE;
	if (!s->started)
		return -EPERM;
	if (!test_bit(op->target, s->access) || bitmap_weight(s->access, n) != 1)
		return -EINVAL;
	if (s->waiting)
		return -EBUSY;
	t->carried = true;
	return 0;
}

/**
 * rmawin_pscw_op_issue() - send a checked carried operation in its COMPLETE
 * @ep: the endpoint, locked
 * @op: the operation (rmawin_pscw_op_check())
 * @t: where it lands
 *
 * A put goes as a byte REPLACE, applied by the target's CPU as the
 * message arrives, an accumulate as itself.
 *
 * Return: -EFAULT if the origin cannot be read (the epoch goes on), else
 * what RMAWIN_IOC_COMPLETE returns.
 */
int rmawin_pscw_op_issue(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
			 const struct rmawin_target *t)
{
	struct {
		struct rmawin_wire_acc m;
		u8 data[RMAWIN_EPOCH_OP_MAX];
	} c;
	bool put = op->opcode == RMAWIN_OP_PUT;

	memset(&c.m, 0, sizeof(c.m));
	c.m.win = cpu_to_le32(t->win->id);
	c.m.opcode = RMAWIN_OP_ACC;
	c.m.acc_op = put ? RMAWIN_ACC_REPLACE : op->acc_op;
	c.m.datatype = put ? RMAWIN_TYPE_UINT8 : op->datatype;
	c.m.offset = cpu_to_le64(t->off);
	c.m.len = cpu_to_le32(op->len);
	if (copy_from_user(c.data, u64_to_user_ptr(op->origin), op->len))
		return -EFAULT;
	rmawin_count(ep, RMAWIN_CNT_CARRIED_OPS, 1);
	return rmawin_pscw_complete(t->win, &c.m, sizeof(c.m) + op->len);
}

static int rmawin_do_wait(struct rmawin_ep *ep, struct rmawin_pscw *p)
{
	struct rmawin_pscw_state *s;
	struct rmawin_win *win;
	int ret;

	ret = rmawin_pscw_win(ep, p, &win);
	if (ret)
		return ret;
	s = &win->pscw;
	if (!s->posted)
		return -EPERM;
	if (p->flags & RMAWIN_WAIT_TEST) {
		p->done = rmawin_pscw_arrived(win, s->exposure, s->completes_rcvd,
					      s->completes_due);
		if (!p->done)
			return 0;
	} else if (rmawin_pscw_wait(win, s->exposure, s->completes_rcvd, s->completes_due)) {
		return -EINTR;
	}
	s->posted = false;
	return rmawin_pscw_failed(win, s->exposure, s->completes_rcvd, s->completes_due);
}

static int rmawin_pscw_ioctl(struct rmawin_ep *ep, struct rmawin_pscw *p, bool has_ranks,
			     u32 known_flags,
			     int (*fn)(struct rmawin_ep *ep, struct rmawin_pscw *p))
{
	int ret;

	if (p->flags & ~known_flags || p->reserved || p->done ||
	    (!has_ranks && (p->n || p->ranks_ptr)))
		return -EINVAL;
	if (mutex_lock_killable(&ep->lock))
		return -EINTR;
	ret = fn(ep, p);
	mutex_unlock(&ep->lock);
	return ret;
}

/**
 * rmawin_ioctl_post() - RMAWIN_IOC_POST
 * @ep: the endpoint
 * @arg: struct rmawin_pscw, already copied in
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_post(struct rmawin_ep *ep, void *arg)
{
	return rmawin_pscw_ioctl(ep, arg, true, 0, rmawin_do_post);
}

/**
 * rmawin_ioctl_start() - RMAWIN_IOC_START
 * @ep: the endpoint
 * @arg: struct rmawin_pscw, already copied in
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_start(struct rmawin_ep *ep, void *arg)
{
	return rmawin_pscw_ioctl(ep, arg, true, 0, rmawin_do_start);
}

/**
 * rmawin_ioctl_complete() - RMAWIN_IOC_COMPLETE
 * @ep: the endpoint
 * @arg: struct rmawin_pscw, already copied in
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_complete(struct rmawin_ep *ep, void *arg)
{
	return rmawin_pscw_ioctl(ep, arg, false, 0, rmawin_do_complete);
}

/**
 * rmawin_ioctl_wait() - RMAWIN_IOC_WAIT (and test)
 * @ep: the endpoint
 * @arg: struct rmawin_pscw, already copied in
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_wait(struct rmawin_ep *ep, void *arg)
{
	return rmawin_pscw_ioctl(ep, arg, false, RMAWIN_WAIT_TEST, rmawin_do_wait);
}
