// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: synchronization.  The group barrier is a dissemination barrier:
 * in round k, rank r signals rank (r + 2^k) mod n and waits for rank
 * (r - 2^k) mod n, so every rank has heard from every other after
 * ceil(log2 n) rounds of one message each, and the cost grows with log n.
 *
 * Each rank hears from the same sender in a given round every time, so a
 * per-round count of messages ever received says whether barrier number s
 * has been reached in that round.  A sender can be at most one barrier
 * ahead of us (it cannot leave barrier s before we entered it), so a
 * message from anyone but the round's sender, or one that would put the
 * count further ahead, is a protocol error: no peer can end a barrier
 * early.
 */
#include <linux/log2.h>

#include "rmawin.h"

/* The rank that signals us in round @k. */
static u32 rmawin_barrier_src(struct rmawin_group *grp, u32 k)
{
	u32 n = grp->nranks;

	return (grp->rank + n - (1U << k) % n) % n;
}

/**
 * rmawin_barrier_recv() - a barrier message arrived
 * @peer: the sender
 * @round: its round
 * @p: payload (none)
 * @len: 0
 *
 * Context: the receive completion's softirq, or the receive work (recv.c).
 * Return: 0, or -EPROTO for a round the peer does not signal us in, or a
 * barrier we cannot be in yet.
 */
int rmawin_barrier_recv(struct rmawin_peer *peer, u32 round, const void *p, u16 len)
{
	struct rmawin_group *grp = peer->grp;
	u32 seq = READ_ONCE(grp->barrier_seq);

	if (round >= order_base_2(grp->nranks) || rmawin_barrier_src(grp, round) != peer->rank)
		return -EPROTO;
	/* the count may run one barrier ahead of the one we are in, no more */
	if ((s32)(atomic_inc_return(&grp->barrier_rcvd[round]) - seq) > 1) {
		atomic_dec(&grp->barrier_rcvd[round]);
		return -EPROTO;
	}
	wake_up_all(&grp->ep->wq);
	return 0;
}

static bool rmawin_barrier_round_done(struct rmawin_group *grp, u32 round,
				      u32 seq, u32 src)
{
	return (s32)(atomic_read(&grp->barrier_rcvd[round]) - seq) >= 0 ||
	       READ_ONCE(grp->peers[src].state) == RMAWIN_PEER_FAILED ||
	       READ_ONCE(grp->ep->dev->dead);
}

/*
 * The barrier; @fence: its messages go behind the reads posted before
 * them (rmawin_msg_signal()).
 */
static int rmawin_barrier(struct rmawin_group *grp, bool fence)
{
	u32 n = grp->nranks, rounds, k, dst, src, seq;
	int ret;

	lockdep_assert_held(&grp->ep->lock);
	lockdep_assert_held(&grp->ep->coll);
	if (n == 1)
		return 0;
	rounds = order_base_2(n);
	seq = grp->barrier_seq + 1;
	/* before any message of this barrier can go out: see rmawin_barrier_recv() */
	WRITE_ONCE(grp->barrier_seq, seq);
	for (k = 0; k < rounds; k++) {
		dst = (grp->rank + (1U << k)) % n;
		src = rmawin_barrier_src(grp, k);
		ret = rmawin_msg_signal(&grp->peers[dst], RMAWIN_MSG_BARRIER, k, fence);
		if (ret)
			return ret;
		if (rmawin_wait_unlocked(grp->ep, NULL,
					 rmawin_barrier_round_done(grp, k, seq, src)))
			return -EINTR;
		/* a peer may leave right after its last message: that is fine */
		if ((s32)(atomic_read(&grp->barrier_rcvd[k]) - seq) >= 0)
			continue;
		if (READ_ONCE(grp->ep->dev->dead))
			return -ENODEV;
		return grp->peers[src].error ?: -ECONNRESET;
	}
	return 0;
}

/**
 * rmawin_group_barrier() - wait until every rank of the group enters
 * @grp: the group
 *
 * Context: process context, in a collective call (rmawin_coll_lock());
 * sleeps for the peers without the endpoint's lock.
 * Return: 0, -ECONNRESET (or the peer's error) if a peer failed, -ENODEV
 * if the device went away, -EINTR on a fatal signal.
 */
int rmawin_group_barrier(struct rmawin_group *grp)
{
	return rmawin_barrier(grp, false);
}

/**
 * rmawin_ioctl_fence() - RMAWIN_IOC_FENCE
 * @ep: the endpoint
 * @arg: struct rmawin_fence, already copied in
 *
 * Completes every operation this rank issued on the window (an RC
 * completion means the data is placed at the target, or has arrived here
 * for a get), then a barrier: when any rank leaves, every rank's
 * operations of the epoch are complete everywhere.  The assertions are
 * hints; even NOPRECEDE completes what is outstanding, which is cheap.
 *
 * In a group of two, when what is in flight are puts and gets, the barrier
 * goes first: the other rank leaves only once it handled our message,
 * which follows our operations on the same queue pair
 * (rmawin_win_drain_start()), and they complete here meanwhile.  Not in a
 * larger group: a rank may leave the barrier before a third rank's
 * operations reached a fourth, whose window it may read next.
 *
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_fence(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_fence *f = arg;
	struct rmawin_drain d;
	struct rmawin_win *win;
	int ret, bret;

	if (f->flags & ~RMAWIN_MODE_ALL || f->reserved)
		return -EINVAL;
	ret = rmawin_coll_lock(ep);
	if (ret)
		return ret;
	win = rmawin_win_lookup(ep, f->win);
	if (!win) {
		ret = -ENOENT;
		goto out_unlock;
	}
	/* a passive epoch is open: fences and locks do not mix */
	if (win->nheld || win->pscw.started || win->pscw.posted || win->pscw.waiting) {
		ret = -EBUSY;
		goto out_unlock;
	}
	ret = rmawin_win_drain_start(win, ep->group->nranks == 2, &d);
	win->fence_open = !(f->flags & RMAWIN_MODE_NOSUCCEED);
	win->fence_ops = 0;
	/* the others wait for us in the barrier even when our epoch failed */
	bret = ret == -EINTR || ret == -ENODEV ? 0 : rmawin_barrier(ep->group, d.fence);
	/* the window stays: WIN_FREE takes the collective mutex we hold */
	ret = rmawin_win_drain_end(win, &d, ret ?: bret);
out_unlock:
	rmawin_coll_unlock(ep);
	return ret;
}

/**
 * rmawin_ioctl_barrier() - RMAWIN_IOC_BARRIER
 * @ep: the endpoint
 * @arg: struct rmawin_barrier, already copied in
 *
 * Return: 0, -EINVAL for flags, -ENOTCONN before GROUP_JOIN, -ENODEV, or
 * an error of rmawin_group_barrier().
 */
int rmawin_ioctl_barrier(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_barrier *b = arg;
	int ret;

	if (b->flags)
		return -EINVAL;
	ret = rmawin_coll_lock(ep);
	if (ret)
		return ret;
	ret = rmawin_group_barrier(ep->group);
	rmawin_coll_unlock(ep);
	return ret;
}
