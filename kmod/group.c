// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: groups.  An endpoint joins a group of nranks endpoints by
 * connecting one RC queue pair to every other rank with in-kernel rdma_cm.
 *
 * Connect order: a rank connects actively to every lower rank and accepts
 * from every higher one, so no two ranks ever wait on each other.  A
 * higher rank often asks before the lower one listens; the request is then
 * rejected with "invalid service id" and retried until the join's deadline.
 *
 * The CM handlers run in rdma_cm's context with the id's handler mutex
 * held; they never take the endpoint's mutex, which the joining (or
 * tearing-down) ioctl holds while it waits for them.
 */
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>

#include "rmawin.h"

#define RMAWIN_CM_MAGIC		0x726d6177	/* "rmaw" */
#define RMAWIN_CM_VERSION	1
#define RMAWIN_JOIN_TIMEOUT_MS	30000
#define RMAWIN_RESOLVE_MS	2000
#define RMAWIN_RETRY_MS		50
#define RMAWIN_QUIESCE_MS	5000

/* What a connection request carries, big-endian on the wire. */
struct rmawin_cm_priv {
	__be32 magic;
	__be32 version;
	__be32 rank;
	__be32 nranks;
	__be64 key;
};

static int rmawin_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

static void rmawin_group_wake(struct rmawin_group *grp)
{
	wake_up_all(&grp->ep->wq);
}

/**
 * rmawin_peer_fail() - a peer is gone for good
 * @peer: the peer
 * @err: why (negative errno)
 *
 * Context: any; takes the group's spinlock.
 */
void rmawin_peer_fail(struct rmawin_peer *peer, int err)
{
	struct rmawin_group *grp = peer->grp;
	unsigned long flags;

	spin_lock_irqsave(&grp->lock, flags);
	if (peer->state != RMAWIN_PEER_FAILED) {
		if (peer->state == RMAWIN_PEER_CONNECTED)
			atomic_dec(&grp->nconnected);
		peer->state = RMAWIN_PEER_FAILED;
		peer->error = err;
		if (!grp->error)
			grp->error = err;
	}
	spin_unlock_irqrestore(&grp->lock, flags);
	/* its accumulates will never be answered */
	rmawin_acc_fail_peer(peer);
	rmawin_group_wake(grp);
}

static void rmawin_peer_set_state(struct rmawin_peer *peer, int state)
{
	unsigned long flags;

	spin_lock_irqsave(&peer->grp->lock, flags);
	if (peer->state != RMAWIN_PEER_FAILED) {
		if (state == RMAWIN_PEER_CONNECTED)
			atomic_inc(&peer->grp->nconnected);
		peer->state = state;
	}
	spin_unlock_irqrestore(&peer->grp->lock, flags);
	rmawin_group_wake(peer->grp);
}

static void rmawin_qp_event(struct ib_event *ev, void *ctx)
{
	struct rmawin_peer *peer = ctx;

	if (ev->event == IB_EVENT_QP_FATAL || ev->event == IB_EVENT_QP_ACCESS_ERR)
		rmawin_peer_fail(peer, -ECONNRESET);
}

static int rmawin_peer_create_qp(struct rmawin_peer *peer, struct rdma_cm_id *id)
{
	struct rmawin_group *grp = peer->grp;
	struct ib_qp_init_attr attr = {
		.event_handler = rmawin_qp_event,
		.qp_context = peer,
		.send_cq = grp->scq,
		.recv_cq = grp->cq,
		.cap = {
			/* one more of each for ib_drain_qp() */
			.max_send_wr = RMAWIN_SQ_DEPTH + 1,
			.max_recv_wr = RMAWIN_CTRL_DEPTH + 1,
			.max_send_sge = min_t(u32, grp->ibdev->attrs.max_send_sge, 16),
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	int ret;

	ret = rdma_create_qp(id, grp->ep->pd, &attr);
	if (ret)
		return ret;
	peer->qp = id->qp;
	atomic_inc(&rmawin_stats.qps);
	ret = rmawin_ctrl_post_recvs(peer);
	if (ret) {
		rdma_destroy_qp(id);
		peer->qp = NULL;
		atomic_dec(&rmawin_stats.qps);
	}
	return ret;
}

/* Flush everything posted on the peer's QP, then destroy it and its id. */
static void rmawin_peer_destroy_conn(struct rmawin_peer *peer)
{
	if (peer->qp) {
		ib_drain_qp(peer->qp);
		rdma_destroy_qp(peer->cm_id);
		peer->qp = NULL;
		atomic_dec(&rmawin_stats.qps);
	}
	if (peer->cm_id) {
		rdma_destroy_id(peer->cm_id);
		peer->cm_id = NULL;
	}
}

static void rmawin_conn_param(struct rmawin_group *grp,
			      struct rdma_conn_param *param,
			      struct rmawin_cm_priv *priv)
{
	u8 rd_atom = min_t(u32, grp->ibdev->attrs.max_qp_rd_atom, 16);

	priv->magic = cpu_to_be32(RMAWIN_CM_MAGIC);
	priv->version = cpu_to_be32(RMAWIN_CM_VERSION);
	priv->rank = cpu_to_be32(grp->rank);
	priv->nranks = cpu_to_be32(grp->nranks);
	priv->key = cpu_to_be64(grp->key);
	memset(param, 0, sizeof(*param));
	param->private_data = priv;
	param->private_data_len = sizeof(*priv);
	param->responder_resources = rd_atom;
	param->initiator_depth = rd_atom;
	param->retry_count = 7;
	/* 7 = retry forever: a receiver short of buffers only slows us down */
	param->rnr_retry_count = 7;
}

static int rmawin_peer_connect(struct rmawin_peer *peer)
{
	struct rmawin_group *grp = peer->grp;
	struct sockaddr_storage src;
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, rmawin_cm_handler, peer, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	peer->cm_id = id;
	peer->state = RMAWIN_PEER_CONNECTING;

	/* from our own address (any port), so the route uses our device */
	src = grp->addrs[grp->rank];
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&src)->sin6_port = 0;
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
				(struct sockaddr *)&grp->addrs[peer->rank],
				RMAWIN_RESOLVE_MS);
	if (ret) {
		rdma_destroy_id(id);
		peer->cm_id = NULL;
		peer->state = RMAWIN_PEER_IDLE;
	}
	return ret;
}

/*
 * A connection attempt failed.  Active side: try again until the deadline.
 * Passive side: clean up and wait for the peer to try again.
 */
static void rmawin_peer_work(struct work_struct *work)
{
	struct rmawin_peer *peer = container_of(to_delayed_work(work),
						struct rmawin_peer, work);
	struct rmawin_group *grp = peer->grp;
	int ret;

	if (READ_ONCE(grp->dying))
		return;
	rmawin_peer_destroy_conn(peer);
	if (peer->rank > grp->rank) {
		rmawin_peer_set_state(peer, RMAWIN_PEER_IDLE);
		return;
	}
	if (time_after(jiffies, grp->deadline)) {
		rmawin_peer_fail(peer, -ETIMEDOUT);
		return;
	}
	ret = rmawin_peer_connect(peer);
	if (ret)
		rmawin_peer_fail(peer, ret);
}

/* Called from the CM handler: the work destroys the id, which we can't. */
static void rmawin_peer_retry(struct rmawin_peer *peer)
{
	unsigned long flags;
	bool sched = false;

	spin_lock_irqsave(&peer->grp->lock, flags);
	if (peer->state == RMAWIN_PEER_CONNECTING) {
		peer->state = RMAWIN_PEER_CLEANUP;
		sched = true;
	}
	spin_unlock_irqrestore(&peer->grp->lock, flags);
	if (sched)
		queue_delayed_work(system_long_wq, &peer->work,
				   msecs_to_jiffies(RMAWIN_RETRY_MS));
}

static bool rmawin_peer_connected(struct rmawin_peer *peer)
{
	return READ_ONCE(peer->state) == RMAWIN_PEER_CONNECTED;
}

static int rmawin_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rmawin_peer *peer = id->context;
	struct rmawin_group *grp = peer->grp;
	struct rdma_conn_param param;
	struct rmawin_cm_priv priv;
	int ret;

	if (READ_ONCE(grp->dying))
		return 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, RMAWIN_RESOLVE_MS);
		if (ret)
			rmawin_peer_retry(peer);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = rmawin_peer_create_qp(peer, id);
		if (!ret) {
			rmawin_conn_param(grp, &param, &priv);
			ret = rdma_connect_locked(id, &param);
		}
		if (ret)
			rmawin_peer_retry(peer);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		rmawin_peer_set_state(peer, RMAWIN_PEER_CONNECTED);
		break;
	case RDMA_CM_EVENT_REJECTED:
		/* the peer looked at our request and said no: final */
		if (ev->status == IB_CM_REJ_CONSUMER_DEFINED)
			rmawin_peer_fail(peer, -ECONNREFUSED);
		else
			rmawin_peer_retry(peer);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (rmawin_peer_connected(peer))
			rmawin_peer_fail(peer, -ECONNRESET);
		else
			rmawin_peer_retry(peer);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		rmawin_peer_fail(peer, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* the ib_client remove path tears the group down */
		rmawin_peer_fail(peer, -ENODEV);
		break;
	default:
		break;
	}
	return 0;
}

/* Is this request from a member of our group, and one we expect? */
static struct rmawin_peer *
rmawin_check_request(struct rmawin_group *grp, struct rdma_cm_event *ev)
{
	const struct rmawin_cm_priv *priv = ev->param.conn.private_data;
	struct rmawin_peer *peer;
	u32 rank;

	if (ev->param.conn.private_data_len < sizeof(*priv) ||
	    be32_to_cpu(priv->magic) != RMAWIN_CM_MAGIC ||
	    be32_to_cpu(priv->version) != RMAWIN_CM_VERSION ||
	    be32_to_cpu(priv->nranks) != grp->nranks ||
	    be64_to_cpu(priv->key) != grp->key)
		return ERR_PTR(-EPERM);
	rank = be32_to_cpu(priv->rank);
	if (rank <= grp->rank || rank >= grp->nranks)
		return ERR_PTR(-EPERM);
	peer = &grp->peers[rank];
	/* a previous attempt of this peer is still being cleaned up */
	if (READ_ONCE(peer->state) != RMAWIN_PEER_IDLE)
		return ERR_PTR(-EAGAIN);
	return peer;
}

static int rmawin_listen_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rmawin_group *grp = id->context;
	struct rdma_conn_param param;
	struct rmawin_cm_priv priv;
	struct rmawin_peer *peer;
	int ret;

	/* events on accepted ids come here too, with the peer as context */
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return rmawin_cm_handler(id, ev);

	if (READ_ONCE(grp->dying))
		return -ENODEV;
	peer = rmawin_check_request(grp, ev);
	if (IS_ERR(peer)) {
		/* strangers are refused for good; a peer too early, for now */
		rdma_reject(id, NULL, 0, PTR_ERR(peer) == -EPERM ?
			    IB_CM_REJ_CONSUMER_DEFINED : IB_CM_REJ_STALE_CONN);
		return 1;	/* rdma_cm destroys the id */
	}

	id->context = peer;
	peer->cm_id = id;
	peer->state = RMAWIN_PEER_CONNECTING;
	ret = rmawin_peer_create_qp(peer, id);
	if (!ret) {
		rmawin_conn_param(grp, &param, &priv);
		ret = rdma_accept(id, &param);
		if (ret) {
			rdma_destroy_qp(id);
			peer->qp = NULL;
			atomic_dec(&rmawin_stats.qps);
		}
	}
	if (ret) {
		peer->cm_id = NULL;
		peer->state = RMAWIN_PEER_IDLE;
		return 1;
	}
	return 0;
}

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

static struct rmawin_group *rmawin_group_alloc(struct rmawin_ep *ep,
					       const struct rmawin_group_join *j)
{
	struct rmawin_group *grp;
	u32 i;

	grp = kzalloc(sizeof(*grp), GFP_KERNEL);
	if (!grp)
		return NULL;
	grp->peers = kvcalloc(j->nranks, sizeof(*grp->peers), GFP_KERNEL);
	grp->addrs = kvcalloc(j->nranks, sizeof(*grp->addrs), GFP_KERNEL);
	if (!grp->peers || !grp->addrs) {
		kvfree(grp->peers);
		kvfree(grp->addrs);
		kfree(grp);
		return NULL;
	}
	grp->ep = ep;
	xa_init(&grp->tables);
	/* a send completion's peer failure walks it in softirq context */
	xa_init_flags(&grp->acc_reqs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	grp->rank = j->rank;
	grp->nranks = j->nranks;
	grp->key = j->key;
	spin_lock_init(&grp->lock);
	for (i = 0; i < j->nranks; i++) {
		grp->peers[i].grp = grp;
		grp->peers[i].rank = i;
		INIT_DELAYED_WORK(&grp->peers[i].work, rmawin_peer_work);
		INIT_LIST_HEAD(&grp->peers[i].deferred);
	}
	return grp;
}

static bool rmawin_peer_quiet(struct rmawin_peer *peer)
{
	return !READ_ONCE(peer->tx_busy) ||
	       READ_ONCE(peer->state) != RMAWIN_PEER_CONNECTED;
}

/*
 * Messages already posted (the last barrier round, say) must reach the
 * peer before the disconnect flushes them: give them a moment.
 */
static void rmawin_group_quiesce(struct rmawin_group *grp)
{
	u32 i;

	for (i = 0; i < grp->nranks; i++)
		wait_event_timeout(grp->ep->wq, rmawin_peer_quiet(&grp->peers[i]),
				   msecs_to_jiffies(RMAWIN_QUIESCE_MS));
}

/**
 * rmawin_group_destroy() - tear a group down, in any state
 * @grp: the group; freed
 *
 * Context: process context, with the endpoint's lock held.  Mirrors the
 * join: no more connection requests, no more retries, then every
 * connection, then the buffers and the completion queue.
 */
void rmawin_group_destroy(struct rmawin_group *grp)
{
	u32 i;

	if (grp->ep->dev && !READ_ONCE(grp->ep->dev->dead))
		rmawin_group_quiesce(grp);
	WRITE_ONCE(grp->dying, true);
	if (grp->listen_id)
		rdma_destroy_id(grp->listen_id);
	for (i = 0; i < grp->nranks; i++)
		cancel_delayed_work_sync(&grp->peers[i].work);
	for (i = 0; i < grp->nranks; i++) {
		struct rmawin_peer *peer = &grp->peers[i];

		if (peer->cm_id && peer->state == RMAWIN_PEER_CONNECTED)
			rdma_disconnect(peer->cm_id);
		rmawin_peer_destroy_conn(peer);
	}
	/* no queue pair is left to reach into a window or a buffer */
	rmawin_wins_destroy_all(grp->ep);
	rmawin_rcache_destroy(&grp->rcache);
	rmawin_tables_free(grp);
	rmawin_bounce_free(grp);
	for (i = 0; i < grp->nranks; i++)
		rmawin_ctrl_free(&grp->peers[i]);
	if (grp->scq)
		ib_free_cq(grp->scq);
	if (grp->cq)
		ib_free_cq(grp->cq);
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

	id = rdma_create_id(&init_net, rmawin_listen_handler, grp, RDMA_PS_TCP,
			    IB_QPT_RC);
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

/* A completion queue for @depth work requests of every peer's queue pair. */
static int rmawin_cq_alloc(struct rmawin_group *grp, struct ib_cq **cq, u32 depth,
			   enum ib_poll_context poll)
{
	/* each queue pair's depth plus the one ib_drain_qp() posts */
	int cqe = min_t(u64, (u64)(grp->nranks - 1) * (depth + 1) + 16,
			grp->ibdev->attrs.max_cqe);
	struct ib_cq *q = ib_alloc_cq(grp->ibdev, grp, cqe, 0, poll);

	if (IS_ERR(q))
		return PTR_ERR(q);
	*cq = q;
	return 0;
}

static int rmawin_group_alloc_resources(struct rmawin_group *grp)
{
	u32 i;
	int ret;

	ret = rmawin_cq_alloc(grp, &grp->cq, RMAWIN_CTRL_DEPTH, IB_POLL_WORKQUEUE);
	if (!ret)
		ret = rmawin_cq_alloc(grp, &grp->scq, RMAWIN_SQ_DEPTH, IB_POLL_SOFTIRQ);
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
		return -ETIMEDOUT;
	return 0;
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

	if (j->flags || j->reserved)
		return -EINVAL;
	if (!j->nranks || j->nranks > RMAWIN_MAX_RANKS || j->rank >= j->nranks)
		return -EINVAL;

	mutex_lock(&ep->lock);
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
	grp->deadline = jiffies + msecs_to_jiffies(j->timeout_ms ?: RMAWIN_JOIN_TIMEOUT_MS);
	was_bound = ep->dev;

	ret = rmawin_copy_addrs(grp, j->addrs_ptr);
	if (!ret)
		ret = rmawin_group_bind(grp);
	if (!ret)
		ret = rmawin_group_alloc_resources(grp);
	if (!ret)
		ret = rmawin_group_connect(grp);
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
