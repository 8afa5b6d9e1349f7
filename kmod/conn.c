// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: one connection of a group, from rdma_cm's events to a proven
 * member (the handshake itself is in auth.c).
 *
 * Connect order: a rank connects actively to every lower rank and accepts
 * from every higher one, so no two ranks ever wait on each other.  A
 * higher rank often asks before the lower one listens; the request is then
 * rejected with "invalid service id" and retried until the join's deadline.
 * Whatever goes wrong before a peer has proven itself (a wrong proof, a
 * refusal, a dropped connection, silence) only ends that attempt: nobody
 * who has not proven to hold the job's key can fail the group.
 *
 * Each side counts the other a member only once it knows that the other
 * took its proof: the responder when the initiator's proof (AUTH) checks
 * out, the initiator when the responder's WELCOME comes, the first message
 * the responder sends once it granted access.  A responder that gave up
 * waiting for the proof drops the connection before any welcome, and the
 * initiator tries again; it never counts as a member lost.
 *
 * The queue pairs are ours, not rdma_cm's (rdma_cm_id.qp stays NULL): we
 * move them through INIT, RTR and RTS ourselves, so that the responder's
 * grants no remote access until the initiator's proof arrived, and the
 * initiator's leaves INIT only after the responder's proof checked out.
 *
 * The CM handlers run in rdma_cm's context with the id's handler mutex
 * held; they never take the endpoint's mutex, which the joining (or
 * tearing-down) ioctl holds while it waits for them.  Teardown sets
 * grp->dying under grp->lock, and nothing queues peer->work once it is set.
 */
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jiffies.h>
#include <rdma/ib_cm.h>

#include "rmawin.h"

#define RMAWIN_RESOLVE_MS	2000
#define RMAWIN_RETRY_MS		50

#define RMAWIN_REMOTE_ACCESS \
	(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)

/* Run the peer's work after @delay ms, unless the group is being torn down. */
static void rmawin_peer_schedule(struct rmawin_peer *peer, unsigned int delay_ms)
{
	lockdep_assert_held(&peer->grp->lock);
	if (!peer->grp->dying)
		mod_delayed_work(system_long_wq, &peer->work, msecs_to_jiffies(delay_ms));
}

/**
 * rmawin_peer_retry() - end the current connection attempt
 * @peer: the peer
 * @auth_failed: the attempt failed the handshake: count it
 *
 * The work destroys the attempt's id and queue pair, which a CM handler
 * cannot; the active side then tries again.  Only an attempt still in
 * progress ends; a peer in any other state is left as it is (a proven
 * member's troubles go through rmawin_peer_fail()).
 *
 * Context: any; takes the group's spinlock.
 */
void rmawin_peer_retry(struct rmawin_peer *peer, bool auth_failed)
{
	struct rmawin_group *grp = peer->grp;
	unsigned long flags;
	bool ended = false;

	spin_lock_irqsave(&grp->lock, flags);
	if (peer->state == RMAWIN_PEER_CONNECTING) {
		peer->state = RMAWIN_PEER_CLEANUP;
		peer->auth_failed |= auth_failed;
		rmawin_peer_schedule(peer, RMAWIN_RETRY_MS);
		ended = true;
	}
	spin_unlock_irqrestore(&grp->lock, flags);
	if (ended && auth_failed) {
		rmawin_count(grp->ep, RMAWIN_CNT_AUTH_FAILURES, 1);
		rmawin_ep_dbg(grp->ep, "rank %u failed authentication\n", peer->rank);
	}
}

static void rmawin_peer_set_connected(struct rmawin_peer *peer)
{
	unsigned long flags;

	spin_lock_irqsave(&peer->grp->lock, flags);
	if (peer->state == RMAWIN_PEER_CONNECTING) {
		atomic_inc(&peer->grp->nconnected);
		peer->state = RMAWIN_PEER_CONNECTED;
	}
	spin_unlock_irqrestore(&peer->grp->lock, flags);
	rmawin_ep_wake_all(peer->grp->ep);
}

static void rmawin_qp_event(struct ib_event *ev, void *ctx)
{
	struct rmawin_peer *peer = ctx;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		/* a message beat the CM's RTU: tell the CM it is established */
		rdma_notify(peer->cm_id, IB_EVENT_COMM_EST);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_QP_REQ_ERR:
		rmawin_peer_lost(peer);
		break;
	default:
		break;
	}
}

/* Move the queue pair through INIT, RTR and RTS as rdma_cm would, with our access flags. */
static int rmawin_qp_ready(struct rmawin_peer *peer, struct rdma_cm_id *id, int access,
			   const struct rdma_conn_param *param)
{
	struct ib_qp_attr attr;
	int mask, ret;

	attr.qp_state = IB_QPS_INIT;
	ret = rdma_init_qp_attr(id, &attr, &mask);
	if (ret)
		return ret;
	attr.qp_access_flags = access;
	ret = ib_modify_qp(peer->qp, &attr, mask | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTR;
	ret = rdma_init_qp_attr(id, &attr, &mask);
	if (ret)
		return ret;
	if (param)
		attr.max_dest_rd_atomic = param->responder_resources;
	ret = ib_modify_qp(peer->qp, &attr, mask);
	if (ret)
		return ret;
	attr.qp_state = IB_QPS_RTS;
	ret = rdma_init_qp_attr(id, &attr, &mask);
	if (ret)
		return ret;
	if (param)
		attr.max_rd_atomic = param->initiator_depth;
	return ib_modify_qp(peer->qp, &attr, mask);
}

/**
 * rmawin_peer_grant_access() - the peer proved itself: open our windows to it
 * @peer: the peer, whose queue pair is in RTS
 *
 * Return: 0 or the error of ib_modify_qp().
 */
int rmawin_peer_grant_access(struct rmawin_peer *peer)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTS,
		.qp_access_flags = RMAWIN_REMOTE_ACCESS,
	};

	return ib_modify_qp(peer->qp, &attr, IB_QP_STATE | IB_QP_ACCESS_FLAGS);
}

static void rmawin_peer_destroy_qp(struct rmawin_peer *peer)
{
	ib_destroy_qp(peer->qp);
	peer->qp = NULL;
	atomic_dec(&rmawin_stats.qps);
}

/* Our queue pair for @id, in INIT with no remote access, receives posted. */
static int rmawin_peer_create_qp(struct rmawin_peer *peer, struct rdma_cm_id *id)
{
	struct rmawin_group *grp = peer->grp;
	struct ib_qp_init_attr init = {
		.event_handler = rmawin_qp_event,
		.qp_context = peer,
		.send_cq = grp->scq.cq,
		.recv_cq = grp->cq,
		.cap = {
			/*
			 * a window's registrations go on a peer's queue too,
			 * beside its data and messages; one more of each for
			 * ib_drain_qp()
			 */
			.max_send_wr = RMAWIN_SQ_DEPTH + RMAWIN_REG_BATCH + 1,
			.max_recv_wr = RMAWIN_CTRL_DEPTH + 1,
			.max_send_sge = min_t(u32, grp->ibdev->attrs.max_send_sge, 16),
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = id->port_num,
	};
	struct ib_qp_attr attr;
	struct ib_qp *qp;
	int mask, ret;

	if (id->device != grp->ibdev)
		return -EINVAL;
	/* small puts inline where the device can; without, where it cannot */
	init.cap.max_inline_data = RMAWIN_INLINE_MAX;
	qp = ib_create_qp(grp->ep->pd, &init);
	if (PTR_ERR_OR_ZERO(qp) == -EINVAL) {
		init.cap.max_inline_data = 0;
		qp = ib_create_qp(grp->ep->pd, &init);
	}
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	peer->qp = qp;
	peer->max_inline = min_t(u32, init.cap.max_inline_data, RMAWIN_INLINE_MAX);
	atomic_inc(&rmawin_stats.qps);
	attr.qp_state = IB_QPS_INIT;
	ret = rdma_init_qp_attr(id, &attr, &mask);
	if (!ret) {
		attr.qp_access_flags = 0;
		ret = ib_modify_qp(qp, &attr, mask | IB_QP_ACCESS_FLAGS);
	}
	if (!ret)
		ret = rmawin_ctrl_post_recvs(peer);
	if (ret)
		rmawin_peer_destroy_qp(peer);
	return ret;
}

/*
 * Flush everything posted on the peer's QP, let the receive work handle
 * what it queued of it (a buffer it still holds must not be posted on the
 * next QP), then destroy the QP and its id.
 */
void rmawin_peer_destroy_conn(struct rmawin_peer *peer)
{
	if (peer->qp) {
		rmawin_scq_drain_qp(peer->qp);
		flush_work(&peer->grp->rx_work);
		rmawin_peer_destroy_qp(peer);
	}
	if (peer->cm_id) {
		rdma_destroy_id(peer->cm_id);
		peer->cm_id = NULL;
	}
}

static void rmawin_conn_param(struct rmawin_peer *peer, struct rdma_conn_param *param,
			      const void *priv, u8 priv_len)
{
	u8 rd_atom = min_t(u32, peer->grp->ibdev->attrs.max_qp_rd_atom, 16);

	memset(param, 0, sizeof(*param));
	param->private_data = priv;
	param->private_data_len = priv_len;
	param->responder_resources = rd_atom;
	param->initiator_depth = rd_atom;
	/*
	 * Transport retries of an unacknowledged packet, each after the
	 * acknowledgment timeout: then the work request fails, and with it
	 * the peer (a node gone; the keepalive's probes rely on it).  Not 7:
	 * soft-RoCE takes 7 to mean "for ever", as IBTA has it only for the
	 * RNR count below.
	 */
	param->retry_count = 6;
	/* 7 = retry forever: a receiver short of buffers only slows us down */
	param->rnr_retry_count = 7;
	param->qp_num = peer->qp->qp_num;
}

static u8 rmawin_host_order(void)
{
	return IS_ENABLED(CONFIG_CPU_BIG_ENDIAN) ? RMAWIN_ORDER_BIG : RMAWIN_ORDER_LITTLE;
}

/* Active side, route resolved: our queue pair, then the request. */
static int rmawin_peer_request(struct rmawin_peer *peer, struct rdma_cm_id *id)
{
	struct rmawin_group *grp = peer->grp;
	struct rmawin_wire_req req = {
		.magic = cpu_to_be32(RMAWIN_CM_MAGIC),
		.version = RMAWIN_CM_VERSION,
		.order = rmawin_host_order(),
		.rank = cpu_to_be32(grp->rank),
		.nranks = cpu_to_be32(grp->nranks),
	};
	struct rdma_conn_param param;
	int ret;

	ret = rmawin_peer_create_qp(peer, id);
	if (ret)
		return ret;
	rmawin_auth_nonce(peer->nonce);
	memcpy(req.group, grp->group_id, RMAWIN_GROUP_TAG_LEN);
	memcpy(req.nonce, peer->nonce, RMAWIN_NONCE_LEN);
	rmawin_conn_param(peer, &param, &req, sizeof(req));
	return rdma_connect_locked(id, &param);
}

/*
 * Active side: the responder accepted.  Check its proof before our queue
 * pair can receive anything; then make ready, send the RTU and our proof.
 * The peer is a member once the responder's welcome says it took the
 * proof: a responder that gave up on it first (its proof timeout) drops
 * the connection, and that only ends this attempt.
 */
static int rmawin_peer_response(struct rmawin_peer *peer, struct rdma_cm_id *id,
				const struct rdma_cm_event *ev)
{
	const struct rmawin_wire_rep *rep = ev->param.conn.private_data;
	struct rmawin_group *grp = peer->grp;
	struct rmawin_wire_auth auth;
	int ret;

	if (!rep || ev->param.conn.private_data_len < sizeof(*rep) ||
	    be32_to_cpu(rep->magic) != RMAWIN_CM_MAGIC || rep->version != RMAWIN_CM_VERSION ||
	    be32_to_cpu(rep->rank) != peer->rank || be32_to_cpu(rep->nranks) != grp->nranks)
		return -EKEYREJECTED;
	peer->remote_qpn = ev->param.conn.qp_num;
	memcpy(peer->remote_nonce, rep->nonce, RMAWIN_NONCE_LEN);
	if (!rmawin_auth_check(peer, RMAWIN_LABEL_RESP, rep->mac))
		return -EKEYREJECTED;

	ret = rmawin_qp_ready(peer, id, RMAWIN_REMOTE_ACCESS, NULL);
	if (ret)
		return ret;
	/* with no rdma_cm QP, accepting the reply sends the RTU */
	ret = rdma_accept(id, NULL);
	if (ret)
		return ret;
	ret = rmawin_auth_mac(peer, RMAWIN_LABEL_INIT, auth.mac);
	if (!ret)
		ret = rmawin_msg_send_first(peer, RMAWIN_MSG_AUTH, &auth, sizeof(auth));
	memzero_explicit(&auth, sizeof(auth));
	return ret;
}

static int rmawin_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rmawin_peer *peer = id->context;
	int ret;

	if (READ_ONCE(peer->grp->dying))
		return 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(id, RMAWIN_RESOLVE_MS))
			rmawin_peer_retry(peer, false);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (rmawin_peer_request(peer, id))
			rmawin_peer_retry(peer, false);
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		ret = rmawin_peer_response(peer, id, ev);
		if (ret)
			rmawin_peer_retry(peer, ret == -EKEYREJECTED);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* passive side: the proof (AUTH) is what makes a member */
		break;
	case RDMA_CM_EVENT_REJECTED:
		/*
		 * Anyone may say no: remember it, and keep trying for the real
		 * peer.  A rejection of our reply (passive side) means the
		 * initiator did not accept our proof.
		 */
		if (peer->rank < peer->grp->rank && ev->status == IB_CM_REJ_CONSUMER_DEFINED)
			peer->refused = true;
		rmawin_peer_retry(peer, peer->rank > peer->grp->rank);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DISCONNECTED:
		if (READ_ONCE(peer->state) == RMAWIN_PEER_CONNECTED &&
		    ev->event == RDMA_CM_EVENT_DISCONNECTED)
			/* what it sent before it left is dispatched first */
			rmawin_peer_leave(peer);
		else if (READ_ONCE(peer->state) == RMAWIN_PEER_CONNECTED)
			rmawin_peer_lost(peer);
		else
			/*
			 * An initiator that dropped us before its proof: its
			 * loss.  A responder that dropped us before its
			 * welcome: try again.
			 */
			rmawin_peer_retry(peer, peer->rank > peer->grp->rank &&
					  ev->event == RDMA_CM_EVENT_DISCONNECTED);
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

/* Is this request from a member of our group's shape, and one we expect? */
static struct rmawin_peer *
rmawin_check_request(struct rmawin_group *grp, const struct rdma_cm_event *ev)
{
	const struct rmawin_wire_req *req = ev->param.conn.private_data;
	struct rmawin_peer *peer;
	u32 rank;

	if (!req || ev->param.conn.private_data_len < sizeof(*req) ||
	    be32_to_cpu(req->magic) != RMAWIN_CM_MAGIC ||
	    req->version != RMAWIN_CM_VERSION || req->order != rmawin_host_order() ||
	    be32_to_cpu(req->nranks) != grp->nranks ||
	    memcmp(req->group, grp->group_id, RMAWIN_GROUP_TAG_LEN))
		return ERR_PTR(-EPERM);
	rank = be32_to_cpu(req->rank);
	if (rank <= grp->rank || rank >= grp->nranks)
		return ERR_PTR(-EPERM);
	peer = &grp->peers[rank];
	/* an attempt of this rank is in progress or being cleaned up */
	if (READ_ONCE(peer->state) != RMAWIN_PEER_IDLE)
		return ERR_PTR(-EAGAIN);
	return peer;
}

/*
 * Passive side: a queue pair with no remote access, ready to receive the
 * initiator's proof, and our own proof in the reply.
 */
static int rmawin_peer_accept(struct rmawin_peer *peer, struct rdma_cm_id *id,
			      const struct rdma_cm_event *ev)
{
	const struct rmawin_wire_req *req = ev->param.conn.private_data;
	struct rmawin_group *grp = peer->grp;
	struct rmawin_wire_rep rep = {
		.magic = cpu_to_be32(RMAWIN_CM_MAGIC),
		.version = RMAWIN_CM_VERSION,
		.rank = cpu_to_be32(grp->rank),
		.nranks = cpu_to_be32(grp->nranks),
	};
	struct rdma_conn_param param;
	int ret;

	ret = rmawin_peer_create_qp(peer, id);
	if (ret)
		return ret;
	peer->remote_qpn = ev->param.conn.qp_num;
	memcpy(peer->remote_nonce, req->nonce, RMAWIN_NONCE_LEN);
	rmawin_auth_nonce(peer->nonce);
	memcpy(rep.nonce, peer->nonce, RMAWIN_NONCE_LEN);
	ret = rmawin_auth_mac(peer, RMAWIN_LABEL_RESP, rep.mac);
	if (ret)
		goto err_destroy_qp;
	rmawin_conn_param(peer, &param, &rep, sizeof(rep));
	ret = rmawin_qp_ready(peer, id, 0, &param);
	if (ret)
		goto err_destroy_qp;
	ret = rdma_accept(id, &param);
	if (ret)
		goto err_destroy_qp;
	return 0;

err_destroy_qp:
	rmawin_peer_destroy_qp(peer);
	return ret;
}

static int rmawin_listen_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rmawin_group *grp = id->context;
	struct rmawin_peer *peer;
	unsigned long flags;

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
	peer->proven = false;
	WRITE_ONCE(peer->state, RMAWIN_PEER_CONNECTING);
	if (rmawin_peer_accept(peer, id, ev)) {
		peer->cm_id = NULL;
		WRITE_ONCE(peer->state, RMAWIN_PEER_IDLE);
		return 1;
	}
	/* the initiator has this long to prove itself */
	spin_lock_irqsave(&grp->lock, flags);
	rmawin_peer_schedule(peer, RMAWIN_AUTH_TIMEOUT_MS);
	spin_unlock_irqrestore(&grp->lock, flags);
	return 0;
}

/**
 * rmawin_peer_auth_recv() - the initiator's proof, the first message it sends;
 * if it checks out, access is granted and the welcome sent
 * @peer: the peer (a higher rank)
 * @auth: its proof
 *
 * Context: the receive CQ's work.
 */
void rmawin_peer_auth_recv(struct rmawin_peer *peer, const struct rmawin_wire_auth *auth)
{
	struct rmawin_group *grp = peer->grp;
	unsigned long flags;
	bool in_time;

	if (peer->rank < grp->rank ||
	    !rmawin_auth_check(peer, RMAWIN_LABEL_INIT, auth->mac)) {
		rmawin_peer_retry(peer, true);
		return;
	}
	/*
	 * In time only if the proof timeout has not begun to end the attempt;
	 * once marked proven, it will not.  No welcome goes out on a
	 * connection being torn down: the initiator would count us a member
	 * and fail its join.
	 */
	spin_lock_irqsave(&grp->lock, flags);
	in_time = peer->state == RMAWIN_PEER_CONNECTING;
	peer->proven = in_time;
	spin_unlock_irqrestore(&grp->lock, flags);
	if (!in_time)
		return;
	/* the welcome goes first: the initiator hears nothing else before it */
	if (rmawin_peer_grant_access(peer) ||
	    rmawin_msg_send_first(peer, RMAWIN_MSG_WELCOME, NULL, 0)) {
		rmawin_peer_retry(peer, false);
		return;
	}
	rmawin_peer_set_connected(peer);
}

/**
 * rmawin_peer_welcome_recv() - the responder took our proof
 * @peer: the peer (a lower rank), whose own proof checked out in its reply
 *
 * Context: the receive CQ's work.
 */
void rmawin_peer_welcome_recv(struct rmawin_peer *peer)
{
	if (peer->rank > peer->grp->rank) {
		rmawin_peer_retry(peer, true);	/* only an initiator is welcomed */
		return;
	}
	rmawin_peer_set_connected(peer);
}

/**
 * rmawin_peer_connect() - start a connection attempt to a lower rank
 * @peer: the peer, IDLE
 *
 * Return: 0 or the error of rdma_create_id() or rdma_resolve_addr().
 */
int rmawin_peer_connect(struct rmawin_peer *peer)
{
	struct rmawin_group *grp = peer->grp;
	struct sockaddr_storage src;
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(grp->net, rmawin_cm_handler, peer, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	peer->cm_id = id;
	WRITE_ONCE(peer->state, RMAWIN_PEER_CONNECTING);

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
		WRITE_ONCE(peer->state, RMAWIN_PEER_IDLE);
	}
	return ret;
}

/* Why the attempts at a peer that never joined failed, for the join's caller. */
static int rmawin_peer_why(const struct rmawin_peer *peer)
{
	if (peer->auth_failed)
		return -EKEYREJECTED;
	return peer->refused ? -ECONNREFUSED : -ETIMEDOUT;
}

/*
 * An attempt ended (or, passive side, its proof is overdue): tear it
 * down.  The active side tries again until the deadline.
 */
static void rmawin_peer_work(struct work_struct *work)
{
	struct rmawin_peer *peer = container_of(to_delayed_work(work),
						struct rmawin_peer, work);
	struct rmawin_group *grp = peer->grp;
	unsigned long flags;
	int state, ret;

	if (READ_ONCE(grp->dying))
		return;
	spin_lock_irqsave(&grp->lock, flags);
	state = peer->state;
	if (state == RMAWIN_PEER_CONNECTING && peer->proven) {
		/* proven in time: its welcome is on its way, nothing to end */
		spin_unlock_irqrestore(&grp->lock, flags);
		return;
	}
	/* an attempt still unproven when its time is up */
	if (state == RMAWIN_PEER_CONNECTING)
		peer->state = RMAWIN_PEER_CLEANUP;
	spin_unlock_irqrestore(&grp->lock, flags);
	if (state == RMAWIN_PEER_CONNECTING) {
		peer->auth_failed = true;
		rmawin_count(grp->ep, RMAWIN_CNT_AUTH_FAILURES, 1);
	} else if (state != RMAWIN_PEER_CLEANUP) {
		return;		/* connected, or failed: nothing to end */
	}
	rmawin_peer_destroy_conn(peer);
	if (peer->rank > grp->rank) {
		spin_lock_irqsave(&grp->lock, flags);
		if (peer->state == RMAWIN_PEER_CLEANUP)
			peer->state = RMAWIN_PEER_IDLE;
		spin_unlock_irqrestore(&grp->lock, flags);
		rmawin_ep_wake_all(grp->ep);
		return;
	}
	WRITE_ONCE(peer->state, RMAWIN_PEER_IDLE);
	if (time_after(jiffies, grp->deadline)) {
		rmawin_peer_fail(peer, rmawin_peer_why(peer));
		return;
	}
	ret = rmawin_peer_connect(peer);
	if (ret)
		rmawin_peer_fail(peer, ret);
}

/**
 * rmawin_peer_init() - a peer's connection state, before any attempt
 * @peer: the peer
 * @grp: its group
 * @rank: its rank
 */
void rmawin_peer_init(struct rmawin_peer *peer, struct rmawin_group *grp, u32 rank)
{
	peer->grp = grp;
	peer->rank = rank;
	INIT_DELAYED_WORK(&peer->work, rmawin_peer_work);
	INIT_LIST_HEAD(&peer->deferred);
}

/**
 * rmawin_group_listen_id() - the id that accepts the higher ranks
 * @grp: the group
 *
 * Return: the id or an ERR_PTR.
 */
struct rdma_cm_id *rmawin_group_listen_id(struct rmawin_group *grp)
{
	return rdma_create_id(grp->net, rmawin_listen_handler, grp, RDMA_PS_TCP, IB_QPT_RC);
}

/**
 * rmawin_group_join_error() - why a join that timed out did
 * @grp: the group
 *
 * Return: the reason of the first rank that never joined.
 */
int rmawin_group_join_error(struct rmawin_group *grp)
{
	u32 i;

	for (i = 0; i < grp->nranks; i++)
		if (i != grp->rank && READ_ONCE(grp->peers[i].state) != RMAWIN_PEER_CONNECTED)
			return rmawin_peer_why(&grp->peers[i]);
	return -ETIMEDOUT;
}
