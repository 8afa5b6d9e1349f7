// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: groups.  An endpoint joins a group of nranks endpoints by
 * connecting one RC queue pair to every other rank with in-kernel rdma_cm
 * (conn.c), each peer proving that it holds the job's key (auth.c).  The
 * group lives in the network namespace of the process that joins it.
 */
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <linux/nsproxy.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/module.h>
#include <net/net_namespace.h>

#include "rmawin.h"

/* The lock class of every group's accumulate requests (rmawin_group_alloc()). */
static struct lock_class_key rmawin_acc_reqs_lock_key;

#define RMAWIN_JOIN_TIMEOUT_MS	30000
#define RMAWIN_QUIESCE_MS	5000

static unsigned int max_ranks = 1024;
module_param(max_ranks, uint, 0644);
MODULE_PARM_DESC(max_ranks, "Largest group an endpoint may join (at most 4096)");

static int rmawin_copy_addrs(struct rmawin_group *grp, u64 uptr)
{
	struct rmawin_addr __user *uaddrs = u64_to_user_ptr(uptr);
	struct rmawin_addr a;
	u32 i;

	for (i = 0; i < grp->nranks; i++) {
		struct sockaddr_storage *ss = &grp->addrs[i];

		if (copy_from_user(&a, &uaddrs[i], sizeof(a)))
			return -EFAULT;
		if (!a.port)
			return -EINVAL;
		if (a.family == AF_INET) {
			struct sockaddr_in *sin = (struct sockaddr_in *)ss;

			if (a.scope_id || memchr_inv(&a.addr[4], 0, 12))
				return -EINVAL;
			sin->sin_family = AF_INET;
			sin->sin_port = htons(a.port);
			memcpy(&sin->sin_addr, a.addr, 4);
		} else if (a.family == AF_INET6) {
			struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(a.port);
			sin6->sin6_scope_id = a.scope_id;
			memcpy(&sin6->sin6_addr, a.addr, 16);
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * An accumulate id never handed out: its reservation keeps the first node
 * of @acc_reqs (ids 1 to 62) from being freed when a lone accumulate's
 * reply is in and allocated again for the next one (an xarray holds only
 * index 0 without a node), a slab allocation and an RCU free per request.
 */
#define RMAWIN_ACC_ID_KEEP	(XA_CHUNK_SIZE - 1)

static struct rmawin_group *rmawin_group_alloc(struct rmawin_ep *ep,
					       const struct rmawin_group_join *j)
{
	struct rmawin_group *grp;
	u32 i;

	grp = kzalloc(sizeof(*grp), GFP_KERNEL_ACCOUNT);
	if (!grp)
		return NULL;
	grp->ep = ep;
	xa_init(&grp->tables);
	/*
	 * Replies and a send completion's peer failure walk it in softirq
	 * context; its own lock class, apart from @tables' (taken with bottom
	 * halves on), which every xa_init() of this file would share.
	 */
	xa_init_flags(&grp->acc_reqs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	lockdep_set_class(&grp->acc_reqs.xa_lock, &rmawin_acc_reqs_lock_key);
	grp->peers = kvcalloc(j->nranks, sizeof(*grp->peers), GFP_KERNEL_ACCOUNT);
	grp->addrs = kvcalloc(j->nranks, sizeof(*grp->addrs), GFP_KERNEL_ACCOUNT);
	/* the reservation is the last step that can fail: nothing to undo */
	if (!grp->peers || !grp->addrs ||
	    xa_reserve_irq(&grp->acc_reqs, RMAWIN_ACC_ID_KEEP, GFP_KERNEL_ACCOUNT)) {
		kvfree(grp->peers);
		kvfree(grp->addrs);
		kfree(grp);
		return NULL;
	}
	grp->rank = j->rank;
	grp->nranks = j->nranks;
	/* where the caller lives: its addresses mean something only there */
	grp->net = get_net(current->nsproxy->net_ns);
	spin_lock_init(&grp->lock);
	INIT_LIST_HEAD(&grp->rx_queue);
	INIT_WORK(&grp->rx_work, rmawin_rx_work);
	INIT_WORK(&grp->fail_work, rmawin_group_fail_work);
	for (i = 0; i < j->nranks; i++)
		rmawin_peer_init(&grp->peers[i], grp, i);
	return grp;
}

static bool rmawin_group_quiet(struct rmawin_group *grp)
{
	bool quiet = true;
	u32 i;

	spin_lock_irq(&grp->lock);
	for (i = 0; i < grp->nranks && quiet; i++)
		quiet = !grp->peers[i].tx_busy ||
			grp->peers[i].state != RMAWIN_PEER_CONNECTED;
	/* the send completions wake us */
	if (!quiet)
		grp->tx_wanted = true;
	spin_unlock_irq(&grp->lock);
	return quiet;
}

/*
 * Messages already posted (the last barrier round, say) must reach the
 * peers before the disconnect flushes them: give them a moment, at most
 * RMAWIN_QUIESCE_MS in all, less if the process is being killed.
 */
static void rmawin_group_quiesce(struct rmawin_group *grp)
{
	wait_event_killable_timeout(grp->ep->wq, rmawin_group_quiet(grp),
				    msecs_to_jiffies(RMAWIN_QUIESCE_MS));
}

/**
 * rmawin_keepalive() - probe the group's peers during a long wait for them
 * @ep: the endpoint; its caller holds its lock, or sleeps on its group
 *	(rmawin_wait_unlocked()): either keeps the group
 *
 * A peer whose node or link went away sends nothing, not even a
 * disconnect: the wait would last for ever.  Each connected peer with no
 * message of ours in flight gets a probe (rmawin_msg_probe()); one that
 * does not answer is failed once the device's retries run out, which ends
 * every wait on it with -ECONNRESET.  A peer that is only slow (its
 * process stopped, say) answers from its device and goes on being waited
 * for.
 */
void rmawin_keepalive(struct rmawin_ep *ep)
{
	struct rmawin_group *grp = READ_ONCE(ep->group);
	u32 i;

	if (!grp || READ_ONCE(ep->unwait))
		return;
	for (i = 0; i < grp->nranks; i++)
		if (i != grp->rank)
			rmawin_msg_probe(&grp->peers[i]);
}

/*
 * After this, no CM handler or work of the group runs or starts: a
 * handler that got past its check of @dying holds its id's handler
 * mutex, which we take once; any later one sees @dying.  Nor does any
 * completion handler post: those under way are waited for (they do not
 * sleep), later ones see @dying (rmawin_post_enter()).
 */
static void rmawin_group_stop_events(struct rmawin_group *grp)
{
	u32 i;

	spin_lock_irq(&grp->lock);
	grp->dying = true;
	spin_unlock_irq(&grp->lock);
	/* pairs with rmawin_post_enter(): it sees @dying, or we see it */
	smp_mb();
	wait_event(grp->ep->wq, !atomic_read(&grp->posters));
	if (grp->listen_id)
		rdma_destroy_id(grp->listen_id);
	grp->listen_id = NULL;
	for (i = 0; i < grp->nranks; i++)
		cancel_delayed_work_sync(&grp->peers[i].work);
	cancel_work_sync(&grp->fail_work);
	for (i = 0; i < grp->nranks; i++) {
		struct rdma_cm_id *id = grp->peers[i].cm_id;

		if (id) {
			rdma_lock_handler(id);
			rdma_unlock_handler(id);
		}
	}
}

/*
 * Free both CQs once no queue pair is left to complete on them.  ib_core's
 * softirq poller (ib_poll_handler()), and the send CQ's (scq.c), give a CQ
 * back with irq_poll_complete() before they re-arm it with
 * ib_req_notify_cq(), so irq_poll_disable() can return, and the driver free the
 * CQ (soft-RoCE vfree()s its queue), while a handler that has just run
 * the last drain's completion on another CPU is still to make that call
 * (cq_teardown_test widens the window and oopsed here).  A softirq handler
 * is an RCU read-side section: once a grace period has passed, every
 * handler that was running has returned, and with every queue pair
 * drained and gone nothing schedules another.
 */
static void rmawin_group_free_cqs(struct rmawin_group *grp)
{
	if (!grp->scq.cq && !grp->cq)
		return;
	synchronize_rcu();
	rmawin_scq_destroy(&grp->scq);
	if (grp->cq)
		ib_free_cq(grp->cq);
}

/**
 * rmawin_group_destroy() - tear a group down, in any state
 * @grp: the group; freed
 *
 * Context: process context, with the endpoint's lock held.  Mirrors the
 * join: no more connection requests, handlers or retries, then every
 * connection, then the buffers and the completion queues.
 */
void rmawin_group_destroy(struct rmawin_group *grp)
{
	u32 i;

	lockdep_assert_held(&grp->ep->lock);
	if (grp->ep->dev && !READ_ONCE(grp->ep->dev->dead))
		rmawin_group_quiesce(grp);
	rmawin_group_stop_events(grp);
	for (i = 0; i < grp->nranks; i++) {
		struct rmawin_peer *peer = &grp->peers[i];
		u32 delay = READ_ONCE(rmawin_teardown_delay_ms);
		bool had_qp = peer->qp;

		if (peer->cm_id && peer->state == RMAWIN_PEER_CONNECTED)
			rdma_disconnect(peer->cm_id);
		rmawin_peer_destroy_conn(peer);
		if (unlikely(delay) && had_qp)
			msleep(min_t(u32, delay, RMAWIN_RECV_DELAY_MAX));
	}
	rmawin_self_qp_destroy(grp);
	rmawin_atomic_guess_free(grp);
	/* every queue pair is drained: so is the receive work (recv.c) */
	flush_work(&grp->rx_work);
	/* no queue pair is left to reach into a window or a buffer */
	rmawin_acc_fail_all(grp);
	rmawin_notify_free(grp->ep);
	rmawin_wins_destroy_all(grp->ep);
	rmawin_rcache_destroy(&grp->rcache);
	rmawin_tables_free(grp);
	rmawin_bounce_free(grp);
	rmawin_inbox_free(grp);
	for (i = 0; i < grp->nranks; i++)
		rmawin_ctrl_free(&grp->peers[i]);
	rmawin_group_free_cqs(grp);
	rmawin_auth_free(grp);
	put_net(grp->net);
	/* the reservation (rmawin_group_alloc()); every request is gone */
	xa_destroy(&grp->acc_reqs);
	kvfree(grp->addrs);
	kvfree(grp->peers);
	kfree(grp);
	atomic_dec(&rmawin_stats.groups);
}

/*
 * Bind the listen id to our address, which tells the device; bind the
 * endpoint to that device if it is not bound yet.  Listening starts only
 * once the buffers for accepted connections exist.
 */
static int rmawin_group_bind(struct rmawin_group *grp)
{
	struct rmawin_ep *ep = grp->ep;
	struct rmawin_dev *rdev;
	struct rdma_cm_id *id;
	int ret;

	id = rmawin_group_listen_id(grp);
	if (IS_ERR(id))
		return PTR_ERR(id);
	grp->listen_id = id;

	ret = rdma_bind_addr(id, (struct sockaddr *)&grp->addrs[grp->rank]);
	if (ret)
		return ret == -EADDRNOTAVAIL || ret == -ENODEV ? -EADDRNOTAVAIL : ret;
	if (!id->device)
		return -EADDRNOTAVAIL;	/* an address no RDMA device owns */

	if (!ep->dev) {
		rdev = rmawin_dev_get_by_ibdev(id->device);
		if (!rdev)
			return -ENODEV;
		ret = rmawin_ep_bind_locked(ep, rdev, id->port_num);
		if (ret) {
			rmawin_dev_put(rdev);
			return ret;
		}
	} else if (ep->dev->ibdev != id->device) {
		return -EADDRNOTAVAIL;	/* the address is on another device */
	}
	grp->ibdev = id->device;
	return 0;
}

/*
 * The entries of a completion queue for @depth work requests of every
 * peer's queue pair: each queue pair's depth plus the one ib_drain_qp()
 * posts, and as much for the queue pair to itself (atomic.c), which uses
 * both CQs.
 */
static int rmawin_cq_entries(struct rmawin_group *grp, u32 depth)
{
	return min_t(u64, (u64)(grp->nranks - 1) * (depth + 1) + 16 + RMAWIN_SELF_DEPTH + 1,
		     grp->ibdev->attrs.max_cqe);
}

/* The receive completion queue, polled in softirq context. */
static int rmawin_cq_alloc(struct rmawin_group *grp, struct ib_cq **cq, u32 depth)
{
	struct ib_cq *q = ib_alloc_cq(grp->ibdev, grp, rmawin_cq_entries(grp, depth), 0,
				      IB_POLL_SOFTIRQ);

	if (IS_ERR(q))
		return PTR_ERR(q);
	*cq = q;
	return 0;
}

/*
 * Every send of every queue pair completes on the one send CQ: each peer's
 * control messages (RMAWIN_CTRL_DEPTH), a registration and the drain may
 * be there at once, and data gets what is left of the CQ, evenly.  A group
 * too large for the device's CQ to give each peer even one is refused.
 */
static int rmawin_sq_data_max(struct rmawin_group *grp)
{
	u32 peers = grp->nranks - 1, per;

	if (!peers) {
		grp->sq_data_max = RMAWIN_SQ_DATA;
		return 0;
	}
	if (grp->scq.cq->cqe <= 16 + RMAWIN_SELF_DEPTH + 1)
		return -ENOMEM;
	per = (grp->scq.cq->cqe - 16 - RMAWIN_SELF_DEPTH - 1) / peers;
	if (per <= RMAWIN_CTRL_DEPTH + 2)
		return -ENOMEM;
	grp->sq_data_max = min_t(u32, RMAWIN_SQ_DATA, per - RMAWIN_CTRL_DEPTH - 2);
	return 0;
}

static int rmawin_group_alloc_resources(struct rmawin_group *grp)
{
	u32 i;
	int ret;

	ret = rmawin_cq_alloc(grp, &grp->cq, RMAWIN_CTRL_DEPTH);
	if (!ret)
		ret = rmawin_scq_create(&grp->scq, grp->ep, grp->ibdev,
					rmawin_cq_entries(grp, RMAWIN_SQ_DEPTH + RMAWIN_REG_BATCH));
	if (ret)
		return ret;
	ret = rmawin_sq_data_max(grp);
	if (ret)
		return ret;
	ret = rmawin_bounce_alloc(grp);
	if (ret)
		return ret;
	rmawin_rcache_init(&grp->rcache, grp->ep, grp->ibdev);
	for (i = 0; i < grp->nranks; i++) {
		if (i == grp->rank)
			continue;
		ret = rmawin_ctrl_alloc(&grp->peers[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static bool rmawin_join_done(struct rmawin_group *grp)
{
	return atomic_read(&grp->nconnected) == grp->nranks - 1 ||
	       READ_ONCE(grp->error) || READ_ONCE(grp->ep->dev->dead);
}

static int rmawin_group_connect(struct rmawin_group *grp)
{
	long left;
	u32 i;
	int ret;

	ret = rdma_listen(grp->listen_id, 64);
	if (ret)
		return ret;
	for (i = 0; i < grp->rank; i++) {
		ret = rmawin_peer_connect(&grp->peers[i]);
		if (ret)
			return ret;
	}
	left = (long)grp->deadline - (long)jiffies;
	left = wait_event_killable_timeout(grp->ep->wq, rmawin_join_done(grp),
					   max(left, 1L));
	if (left < 0)
		return left;
	if (READ_ONCE(grp->ep->dev->dead))
		return -ENODEV;
	if (grp->error)
		return grp->error;
	if (!left)
		return rmawin_group_join_error(grp);
	return 0;
}

/* The checks of a join that need no lock. */
static int rmawin_join_check(const struct rmawin_group_join *j)
{
	if (j->flags)
		return -EINVAL;
	if (!j->nranks || j->nranks > min_t(u32, READ_ONCE(max_ranks), RMAWIN_MAX_RANKS) ||
	    j->rank >= j->nranks)
		return -EINVAL;
	if (!j->key_len != !j->key_ptr)
		return -EINVAL;
	if (j->key_len && (j->key_len < RMAWIN_JOB_KEY_MIN || j->key_len > RMAWIN_JOB_KEY_MAX))
		return -EINVAL;
	/* no silent insecure default: a group with peers needs the job's key */
	if (j->nranks > 1 && !j->key_len)
		return -ENOKEY;
	return 0;
}

static int rmawin_group_setup(struct rmawin_group *grp, const struct rmawin_group_join *j)
{
	int ret;

	ret = rmawin_copy_addrs(grp, j->addrs_ptr);
	if (ret)
		return ret;
	rmawin_group_id(grp);
	if (j->key_len) {
		ret = rmawin_auth_init(grp, u64_to_user_ptr(j->key_ptr), j->key_len);
		if (ret)
			return ret;
	}
	ret = rmawin_group_bind(grp);
	if (!ret)
		ret = rmawin_group_alloc_resources(grp);
	if (!ret)
		ret = rmawin_group_connect(grp);
	return ret;
}

/**
 * rmawin_ioctl_group_join() - RMAWIN_IOC_GROUP_JOIN
 * @ep: the endpoint
 * @arg: struct rmawin_group_join, already copied in
 *
 * Context: process context; sleeps until every peer is connected or the
 * timeout expires.
 * Return: 0 or a negative errno as the uAPI header documents.
 */
int rmawin_ioctl_group_join(struct rmawin_ep *ep, void *arg)
{
	struct rmawin_group_join *j = arg;
	struct rmawin_group *grp;
	bool was_bound;
	int ret;

	ret = rmawin_join_check(j);
	if (ret)
		return ret;

	if (mutex_lock_killable(&ep->lock))
		return -EINTR;
	if (ep->detached) {
		ret = -ENODEV;
		goto out_unlock;
	}
	if (ep->group) {
		ret = -EBUSY;
		goto out_unlock;
	}
	grp = rmawin_group_alloc(ep, j);
	if (!grp) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	atomic_inc(&rmawin_stats.groups);
	/* handles start again with the group; peers may send descriptors at once */
	WRITE_ONCE(ep->next_win, 0);
	grp->deadline = jiffies + msecs_to_jiffies(j->timeout_ms ?: RMAWIN_JOIN_TIMEOUT_MS);
	was_bound = ep->dev;

	ret = rmawin_group_setup(grp, j);
	if (ret) {
		rmawin_group_destroy(grp);
		/* leave the endpoint as it was: unbind what the join bound */
		if (!was_bound)
			rmawin_ep_unbind_locked(ep);
		goto out_unlock;
	}
	ep->group = grp;
	rmawin_ep_dbg(ep, "joined group: rank %u of %u\n", grp->rank, grp->nranks);
out_unlock:
	mutex_unlock(&ep->lock);
	return ret;
}
