// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: a member's failure and what follows it.
 *
 * A proven member fails once, for good: its work requests completed in
 * error, its connection ended, it sent something no honest peer sends, or
 * it left in order and its last message was dispatched.  The group then
 * records the first error for the local process, wakes every waiter,
 * fails the accumulates owed by that peer, and queues the fail work, which
 * cuts the peer off (queue pair to error, disconnect) and lets go of the
 * window locks it held or waited for.  A peer whose connection attempt is
 * still in progress cannot fail the group: its attempt ends instead and
 * the active side tries again (conn.c).
 */
#include "rmawin.h"
/**
 * rmawin_group_fail_work() - what follows a member's failure, in process context
 * @work: the group's @fail_work
 *
 * Each failed member is cut off once: its queue pair goes to the error
 * state (no more RDMA into our windows, our own requests to it flushed)
 * and its connection is disconnected, so that its kernel learns of it at
 * once even when it has nothing in flight (a member we failed for a
 * reason of our own, -ENOMEM say, would otherwise wait for us for ever).
 * Then the locks of our windows that failed members held or waited for
 * are let go (lock.c).
 *
 * Context: process context; cancelled at the group's teardown, before
 * any queue pair or id is destroyed.
 */
void rmawin_group_fail_work(struct work_struct *work)
{
	struct rmawin_group *grp = container_of(work, struct rmawin_group, fail_work);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct rmawin_peer *peer;
	u32 i;

	for (i = 0; i < grp->nranks; i++) {
		peer = &grp->peers[i];
		if (i == grp->rank || peer->cut || READ_ONCE(peer->state) != RMAWIN_PEER_FAILED)
			continue;
		/* only this work cuts: a failed peer's id and QP stay until the teardown */
		peer->cut = true;
		if (peer->qp)
			ib_modify_qp(peer->qp, &attr, IB_QP_STATE);
		if (peer->cm_id)
			rdma_disconnect(peer->cm_id);
	}
	rmawin_lock_drop_failed_all(grp);
}

/* Queue the group's fail work, unless the group is going.  Group lock held. */
static void rmawin_group_fail_queue(struct rmawin_group *grp)
{
	lockdep_assert_held(&grp->lock);
	if (!grp->dying)
		queue_work(system_wq, &grp->fail_work);
}

/**
 * rmawin_group_fail_recheck() - have the failed members' locks let go again
 * @grp: the group
 *
 * For a LOCK that a member sent just before it failed, handled after the
 * group's fail work let go of its locks.
 *
 * Context: any.
 */
void rmawin_group_fail_recheck(struct rmawin_group *grp)
{
	unsigned long flags;

	spin_lock_irqsave(&grp->lock, flags);
	rmawin_group_fail_queue(grp);
	spin_unlock_irqrestore(&grp->lock, flags);
}

static void rmawin_peer_do_fail(struct rmawin_peer *peer, int err, bool lost)
{
	struct rmawin_group *grp = peer->grp;
	unsigned long flags;
	int state;

	spin_lock_irqsave(&grp->lock, flags);
	state = peer->state;
	/*
	 * A peer that left in order fails at its marker (rmawin_peer_left()):
	 * until then the end of its connection (@lost: the flushes of its
	 * queue pair) is expected, and what it sent before it left is still
	 * being dispatched.
	 */
	if (peer->leaving && lost) {
		spin_unlock_irqrestore(&grp->lock, flags);
		return;
	}
	if (state == RMAWIN_PEER_CONNECTED || state == RMAWIN_PEER_IDLE) {
		if (state == RMAWIN_PEER_CONNECTED)
			atomic_dec(&grp->nconnected);
		peer->state = RMAWIN_PEER_FAILED;
		peer->error = err;
		if (!grp->error)
			grp->error = err;
		/* it will never unlock what it holds of our windows */
		rmawin_group_fail_queue(grp);
	}
	spin_unlock_irqrestore(&grp->lock, flags);
	if (state == RMAWIN_PEER_CONNECTING) {
		rmawin_peer_retry(peer, false);
		return;
	}
	if (state == RMAWIN_PEER_CLEANUP || state == RMAWIN_PEER_FAILED)
		return;
	/* its accumulates will never be answered */
	rmawin_acc_fail_peer(peer);
	rmawin_ep_wake_all(grp->ep);
}

/**
 * rmawin_peer_fail() - a member is gone for good
 * @peer: the peer
 * @err: why (negative errno)
 *
 * Only a peer that proved itself (or one we gave up on) can fail the
 * group: for one whose connection attempt is in progress, this ends the
 * attempt instead.  Fails even a peer that is leaving in order: for the
 * end of its connection, use rmawin_peer_lost().
 *
 * Context: any; takes the group's spinlock.
 */
void rmawin_peer_fail(struct rmawin_peer *peer, int err)
{
	rmawin_peer_do_fail(peer, err, false);
}

/**
 * rmawin_peer_lost() - the connection to a member ended under us
 * @peer: the peer
 *
 * A work request to it completed in error or was flushed, a post to its
 * queue pair was refused, or the CM or the device said the connection is
 * gone.  For a peer leaving in order (rmawin_peer_leave()) that is what
 * leaving looks like: it fails only once its last messages are dispatched
 * (rmawin_peer_left()).  Anyone else fails now, with -ECONNRESET.
 *
 * Context: any; takes the group's spinlock.
 */
void rmawin_peer_lost(struct rmawin_peer *peer)
{
	rmawin_peer_do_fail(peer, -ECONNRESET, true);
}

/**
 * rmawin_peer_left() - a member that left in order is gone now
 * @peer: the peer, whose marker receive completed after all it sent
 *
 * Context: the receive CQ's work.
 */
void rmawin_peer_left(struct rmawin_peer *peer)
{
	rmawin_peer_do_fail(peer, -ECONNRESET, false);
}

/**
 * rmawin_peer_cut_off() - fail a peer and end its queue pair now
 * @peer: the peer
 * @err: what the local process is told
 *
 * rmawin_peer_fail(), and the queue pair put in the error state here
 * rather than in the fail work (which does not run in a dying group): the
 * peer's remote access to our windows ends at once, and every work
 * request still on the queue pair is flushed.
 *
 * Context: process context, the peer's queue pair alive.
 */
void rmawin_peer_cut_off(struct rmawin_peer *peer, int err)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	rmawin_peer_fail(peer, err);
	ib_modify_qp(peer->qp, &attr, IB_QP_STATE);
}

/**
 * rmawin_peer_protocol_error() - a member sent something invalid
 * @peer: the peer
 *
 * It is cut off (-EPROTO to the local process).
 *
 * Context: process context (the receive CQ's work), the peer's queue pair
 * alive.
 */
void rmawin_peer_protocol_error(struct rmawin_peer *peer)
{
	rmawin_count(peer->grp->ep, RMAWIN_CNT_PROTO_ERRORS, 1);
	rmawin_ep_dbg(peer->grp->ep, "rank %u sent an invalid message\n", peer->rank);
	rmawin_peer_cut_off(peer, -EPROTO);
}
