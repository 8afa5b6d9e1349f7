// SPDX-License-Identifier: GPL-2.0
/*
 * The rogue peer's connection layer (rogue.h): rdma_cm connections that
 * speak the rmawin handshake, control messages and RDMA to one victim
 * rank, with librdmacm, libibverbs and OpenSSL's SHA-256 and HMAC only.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/random.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "rogue.h"

#define RG_SLOT		RMAWIN_CTRL_SIZE
#define RG_TX_OFF	(RG_RX_SLOTS * RG_SLOT)
#define RG_RDMA_OFF	(RG_TX_OFF + RG_TX_SLOTS * RG_SLOT)
#define RG_BUF_BYTES	(RG_RDMA_OFF + RG_RDMA_BYTES)
#define RG_WR_RDMA	(1ULL << 40)

static long rg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* "ip:port,ip:port,...": the group's table, as the victims were given it. */
int rg_group_init(struct rg_group *g, const char *addrs, int rank)
{
	uint8_t buf[sizeof(RMAWIN_GROUP_ID_PREFIX) + 4 +
		    RG_MAX_RANKS * sizeof(struct rmawin_wire_group_addr)];
	struct rmawin_wire_group_addr a;
	char *copy = strdup(addrs), *tok, *save = NULL, *colon;
	size_t n = 0;
	uint32_t be;
	int i;

	memset(g, 0, sizeof(*g));
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (g->nranks == RG_MAX_RANKS)
			goto bad;
		colon = strrchr(tok, ':');
		if (!colon)
			goto bad;
		*colon = 0;
		g->addrs[g->nranks].sin_family = AF_INET;
		g->addrs[g->nranks].sin_port = htons(atoi(colon + 1));
		if (inet_pton(AF_INET, tok, &g->addrs[g->nranks].sin_addr) != 1)
			goto bad;
		g->nranks++;
	}
	free(copy);
	if (rank < 0 || rank >= g->nranks)
		return -EINVAL;
	g->rank = rank;

	memcpy(buf, RMAWIN_GROUP_ID_PREFIX, sizeof(RMAWIN_GROUP_ID_PREFIX) - 1);
	n = sizeof(RMAWIN_GROUP_ID_PREFIX) - 1;
	be = htobe32(g->nranks);
	memcpy(buf + n, &be, 4);
	n += 4;
	for (i = 0; i < g->nranks; i++) {
		memset(&a, 0, sizeof(a));
		a.family = htobe16(AF_INET);
		a.port = g->addrs[i].sin_port;
		memcpy(a.addr, &g->addrs[i].sin_addr, 4);
		memcpy(buf + n, &a, sizeof(a));
		n += sizeof(a);
	}
	EVP_Digest(buf, n, g->id, NULL, EVP_sha256(), NULL);

	/* the job's key, if this rogue is (or was) a member */
	{
		const char *hex = getenv("RMAWIN_JOB_KEY");
		unsigned int b;

		while (hex && g->key_len < RMAWIN_KEY_MAX &&
		       sscanf(hex + 2 * g->key_len, "%2x", &b) == 1)
			g->key[g->key_len++] = b;
	}
	return 0;
bad:
	free(copy);
	return -EINVAL;
}

/* One direction's proof, exactly as kmod/auth.c computes it. */
void rg_mac(const struct rg_group *g, const uint8_t *key, size_t key_len, const char *label,
	    int init_rank, int resp_rank, uint32_t init_qpn, uint32_t resp_qpn,
	    const uint8_t *init_nonce, const uint8_t *resp_nonce, uint8_t *mac)
{
	struct rmawin_wire_transcript t;
	unsigned int len = RMAWIN_MAC_LEN;

	memset(&t, 0, sizeof(t));
	memcpy(t.label, label, RMAWIN_LABEL_LEN);
	memcpy(t.group, g->id, RMAWIN_GROUP_ID_LEN);
	t.nranks = htobe32(g->nranks);
	t.init_rank = htobe32(init_rank);
	t.resp_rank = htobe32(resp_rank);
	t.init_qpn = htobe32(init_qpn);
	t.resp_qpn = htobe32(resp_qpn);
	memcpy(t.init_nonce, init_nonce, RMAWIN_NONCE_LEN);
	memcpy(t.resp_nonce, resp_nonce, RMAWIN_NONCE_LEN);
	HMAC(EVP_sha256(), key, key_len, (const uint8_t *)&t, sizeof(t), mac, &len);
}

/* The next CM event of @c within @timeout_ms: its type, or -ETIMEDOUT. */
static int rg_next_event(struct rg_conn *c, int timeout_ms, struct rdma_cm_event *copy,
			 uint8_t *priv, size_t *priv_len)
{
	struct pollfd p = { .fd = c->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	int type;

	if (poll(&p, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	if (rdma_get_cm_event(c->ch, &ev))
		return -errno;
	type = ev->event;
	if (copy)
		*copy = *ev;
	if (priv && priv_len) {
		*priv_len = ev->param.conn.private_data_len < *priv_len ?
			    ev->param.conn.private_data_len : *priv_len;
		if (ev->param.conn.private_data)
			memcpy(priv, ev->param.conn.private_data, *priv_len);
		else
			*priv_len = 0;
	}
	if (type == RDMA_CM_EVENT_DISCONNECTED || type == RDMA_CM_EVENT_REJECTED)
		c->dead = true;
	rdma_ack_cm_event(ev);
	return type;
}

/* A CM event on the connection, if one comes within @timeout_ms. */
int rg_cm_event(struct rg_conn *c, int timeout_ms)
{
	return rg_next_event(c, timeout_ms, NULL, NULL, NULL);
}

static int rg_post_recv(struct rg_conn *c, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->buf + slot * RG_SLOT),
		.length = RG_SLOT,
		.lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad);
}

/* Everything but the handshake: PD, CQ, QP, buffers, receives posted. */
static int rg_setup_qp(struct rg_conn *c)
{
	struct ibv_qp_init_attr qa = {
		.cap = {
			.max_send_wr = RG_TX_SLOTS + 8,
			.max_recv_wr = RG_RX_SLOTS,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	unsigned int i;

	c->pd = ibv_alloc_pd(c->id->verbs);
	c->cq = ibv_create_cq(c->id->verbs, RG_RX_SLOTS + RG_TX_SLOTS + 16, NULL, NULL, 0);
	c->buf = aligned_alloc(4096, RG_BUF_BYTES);
	if (!c->pd || !c->cq || !c->buf)
		return -ENOMEM;
	memset(c->buf, 0, RG_BUF_BYTES);
	c->mr = ibv_reg_mr(c->pd, c->buf, RG_BUF_BYTES,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!c->mr)
		return -errno;
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return -errno;
	for (i = 0; i < RG_RX_SLOTS; i++)
		if (rg_post_recv(c, i))
			return -EIO;
	return 0;
}

uint8_t rg_ack_timeout = 12;

static void rg_conn_param(struct rdma_conn_param *p, const void *priv, size_t len)
{
	memset(p, 0, sizeof(*p));
	p->private_data = priv;
	p->private_data_len = len;
	p->responder_resources = 4;
	p->initiator_depth = 4;
	p->retry_count = 3;
	p->rnr_retry_count = 7;
}

/*
 * Connect to victim rank @peer as the rogue's rank and run the handshake
 * as @auth says (@nonce: the request's nonce, NULL for a fresh one; @mac:
 * the proof for RG_AUTH_GIVEN).  Returns 0 once the proof (if any) is
 * sent, -ECONNREFUSED if rejected, -EKEYREJECTED if the victim's own proof
 * does not check out (honest mode), -ETIMEDOUT.
 */
int rg_connect(struct rg_conn *c, const struct rg_group *g, int peer, enum rg_auth auth,
	       const uint8_t *nonce, const uint8_t *mac, int timeout_ms)
{
	struct rmawin_wire_req req = {
		.magic = htobe32(RMAWIN_CM_MAGIC),
		.version = RMAWIN_CM_VERSION,
		.order = RMAWIN_ORDER_LITTLE,
		.rank = htobe32(g->rank),
		.nranks = htobe32(g->nranks),
	};
	struct sockaddr_in src = g->addrs[g->rank];
	struct rdma_conn_param param;
	struct rdma_cm_event ev;
	struct rmawin_wire_rep *rep = (void *)c->rep;
	struct rmawin_wire_auth proof;
	uint8_t want[RMAWIN_MAC_LEN], other[RMAWIN_KEY_MAX];
	size_t plen = sizeof(c->rep);
	uint8_t ack_timeout = rg_ack_timeout;
	int type, ret;

	memset(c, 0, sizeof(*c));
	c->peer = peer;
	c->ch = rdma_create_event_channel();
	if (!c->ch || rdma_create_id(c->ch, &c->id, NULL, RDMA_PS_TCP))
		return -errno;
	/* a victim that cut us off is noticed in tens of ms, not seconds */
	rdma_set_option(c->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack_timeout,
			sizeof(ack_timeout));
	src.sin_port = 0;
	if (rdma_resolve_addr(c->id, (struct sockaddr *)&src,
			      (struct sockaddr *)&g->addrs[peer], 2000))
		return -errno;
	if (rg_next_event(c, timeout_ms, NULL, NULL, NULL) != RDMA_CM_EVENT_ADDR_RESOLVED)
		return -EHOSTUNREACH;
	if (rdma_resolve_route(c->id, 2000) ||
	    rg_next_event(c, timeout_ms, NULL, NULL, NULL) != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return -EHOSTUNREACH;
	ret = rg_setup_qp(c);
	if (ret)
		return ret;
	if (getenv("ROGUE_VERBOSE")) {
		struct sockaddr_in *l = (void *)rdma_get_local_addr(c->id);
		struct sockaddr_in *r = (void *)rdma_get_peer_addr(c->id);

		fprintf(stderr, "rogue: connect %s:%d -> ", inet_ntoa(l->sin_addr),
			ntohs(l->sin_port));
		fprintf(stderr, "%s:%d qpn %u port %u\n", inet_ntoa(r->sin_addr), ntohs(r->sin_port),
			c->id->qp->qp_num, c->id->port_num);
	}

	if (nonce)
		memcpy(c->nonce, nonce, RMAWIN_NONCE_LEN);
	else if (getrandom(c->nonce, RMAWIN_NONCE_LEN, 0) != RMAWIN_NONCE_LEN)
		return -EIO;
	memcpy(req.group, g->id, RMAWIN_GROUP_TAG_LEN);
	memcpy(req.nonce, c->nonce, RMAWIN_NONCE_LEN);
	rg_conn_param(&param, &req, sizeof(req));
	if (rdma_connect(c->id, &param))
		return -errno;
	type = rg_next_event(c, timeout_ms, &ev, c->rep, &plen);
	if (type == RDMA_CM_EVENT_REJECTED) {
		if (getenv("ROGUE_VERBOSE"))
			fprintf(stderr, "rogue: rank %d (port %d) rejected us (status %d)\n", peer,
				ntohs(g->addrs[peer].sin_port), ev.status);
		return -ECONNREFUSED;
	}
	if (type != RDMA_CM_EVENT_ESTABLISHED)
		return type < 0 ? type : -ECONNRESET;
	if (plen < sizeof(*rep))
		return -EPROTO;
	c->rqpn = ev.param.conn.qp_num;
	memcpy(c->rnonce, rep->nonce, RMAWIN_NONCE_LEN);

	switch (auth) {
	case RG_AUTH_NONE:
		return 0;
	case RG_AUTH_GARBAGE:
		if (getrandom(proof.mac, sizeof(proof.mac), 0) != sizeof(proof.mac))
			return -EIO;
		break;
	case RG_AUTH_WRONG_KEY:
		memset(other, 0xa5, sizeof(other));
		rg_mac(g, other, RMAWIN_KEY_MIN, RMAWIN_LABEL_INIT, g->rank, peer,
		       c->id->qp->qp_num, c->rqpn, c->nonce, c->rnonce, proof.mac);
		break;
	case RG_AUTH_GIVEN:
		memcpy(proof.mac, mac, sizeof(proof.mac));
		break;
	case RG_AUTH_WELCOME:
		return rg_send(c, RMAWIN_MSG_WELCOME, 0, NULL, 0);
	case RG_AUTH_HONEST:
	case RG_AUTH_BLIND:
		rg_mac(g, g->key, g->key_len, RMAWIN_LABEL_RESP, g->rank, peer,
		       c->id->qp->qp_num, c->rqpn, c->nonce, c->rnonce, want);
		if (auth == RG_AUTH_HONEST && memcmp(want, rep->mac, sizeof(want)))
			return -EKEYREJECTED;
		rg_mac(g, g->key, g->key_len, RMAWIN_LABEL_INIT, g->rank, peer,
		       c->id->qp->qp_num, c->rqpn, c->nonce, c->rnonce, proof.mac);
		break;
	}
	return rg_send(c, RMAWIN_MSG_AUTH, 0, &proof, sizeof(proof));
}

void rg_close(struct rg_conn *c)
{
	int ret;

	if (c->id) {
		rdma_disconnect(c->id);
		/* events not taken would keep the id (and its port) alive */
		while (rg_next_event(c, 0, NULL, NULL, NULL) >= 0)
			;
		if (c->id->qp)
			rdma_destroy_qp(c->id);
	}
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id) {
		ret = rdma_destroy_id(c->id);
		if (ret && getenv("ROGUE_VERBOSE"))
			fprintf(stderr, "rogue: rdma_destroy_id: %s\n", strerror(errno));
	}
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
	free(c->buf);
	memset(c, 0, sizeof(*c));
}

/* Listen at our own rank's address, as the responder of higher ranks. */
int rg_listen(struct rg_listener *l, const struct rg_group *g)
{
	memset(l, 0, sizeof(*l));
	l->ch = rdma_create_event_channel();
	if (!l->ch || rdma_create_id(l->ch, &l->id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(l->id, (struct sockaddr *)&g->addrs[g->rank]) || rdma_listen(l->id, 4))
		return -errno;
	return 0;
}

void rg_unlisten(struct rg_listener *l)
{
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->ch)
		rdma_destroy_event_channel(l->ch);
	memset(l, 0, sizeof(*l));
}

/* The next connection request on @l within @timeout_ms: its id, the request in @req. */
static struct rdma_cm_id *rg_next_request(struct rg_listener *l, int timeout_ms,
					  struct rmawin_wire_req *req, uint32_t *qpn)
{
	struct pollfd p = { .fd = l->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id = NULL;
	size_t len;

	while (!id) {
		if (poll(&p, 1, timeout_ms) <= 0 || rdma_get_cm_event(l->ch, &ev))
			return NULL;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			id = ev->id;
			*qpn = ev->param.conn.qp_num;
			len = ev->param.conn.private_data_len;
			memset(req, 0, sizeof(*req));
			if (ev->param.conn.private_data)
				memcpy(req, ev->param.conn.private_data,
				       len < sizeof(*req) ? len : sizeof(*req));
		}
		rdma_ack_cm_event(ev);
	}
	return id;
}

/*
 * Answer the next request on @l (from a higher victim rank) as an honest
 * responder: our proof in the reply; then wait for the victim's proof and
 * check it.  No welcome is sent: the caller decides.  Returns 0 once the
 * victim's proof checked out, -EKEYREJECTED if it did not, -EPROTO for a
 * request not of our group, -ETIMEDOUT, or another error of the set-up.
 */
int rg_accept(struct rg_conn *c, struct rg_listener *l, const struct rg_group *g,
	      int timeout_ms)
{
	struct rmawin_wire_rep rep = {
		.magic = htobe32(RMAWIN_CM_MAGIC),
		.version = RMAWIN_CM_VERSION,
		.rank = htobe32(g->rank),
		.nranks = htobe32(g->nranks),
	};
	long end = rg_now_ms() + timeout_ms;
	struct rmawin_wire_req req;
	struct rdma_conn_param param;
	uint8_t want[RMAWIN_MAC_LEN];
	struct rdma_cm_id *id;
	uint32_t iqpn;
	int ret;

	memset(c, 0, sizeof(*c));
	id = rg_next_request(l, timeout_ms, &req, &iqpn);
	if (!id)
		return -ETIMEDOUT;
	c->peer = be32toh(req.rank);
	if (be32toh(req.magic) != RMAWIN_CM_MAGIC || req.version != RMAWIN_CM_VERSION ||
	    be32toh(req.nranks) != (uint32_t)g->nranks || c->peer <= g->rank ||
	    c->peer >= g->nranks || memcmp(req.group, g->id, RMAWIN_GROUP_TAG_LEN)) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return -EPROTO;
	}
	/* the connection's events on a channel of its own, as rg_connect()'s */
	c->ch = rdma_create_event_channel();
	if (!c->ch || rdma_migrate_id(id, c->ch)) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return -errno;
	}
	c->id = id;
	ret = rg_setup_qp(c);
	if (ret)
		return ret;
	c->rqpn = iqpn;
	memcpy(c->rnonce, req.nonce, RMAWIN_NONCE_LEN);
	if (getrandom(c->nonce, RMAWIN_NONCE_LEN, 0) != RMAWIN_NONCE_LEN)
		return -EIO;
	memcpy(rep.nonce, c->nonce, RMAWIN_NONCE_LEN);
	rg_mac(g, g->key, g->key_len, RMAWIN_LABEL_RESP, c->peer, g->rank, iqpn,
	       c->id->qp->qp_num, c->rnonce, c->nonce, rep.mac);
	rg_conn_param(&param, &rep, sizeof(rep));
	if (rdma_accept(c->id, &param))
		return -errno;
	ret = rg_next_event(c, timeout_ms, NULL, NULL, NULL);
	if (ret != RDMA_CM_EVENT_ESTABLISHED)
		return ret < 0 ? ret : -ECONNRESET;
	while (!c->got_auth && !c->dead && rg_now_ms() < end)
		rg_poll(c, 20);
	if (!c->got_auth)
		return -ETIMEDOUT;
	rg_mac(g, g->key, g->key_len, RMAWIN_LABEL_INIT, c->peer, g->rank, iqpn,
	       c->id->qp->qp_num, c->rnonce, c->nonce, want);
	return memcmp(want, c->auth, sizeof(want)) ? -EKEYREJECTED : 0;
}

/* Learn what a received message says (window descriptors), count it. */
static void rg_parse(struct rg_conn *c, const uint8_t *msg, uint32_t len)
{
	const struct rmawin_wire_hdr *h = (const void *)msg;
	const struct rmawin_wire_desc *d = (const void *)(h + 1);
	uint32_t arg, i, first, count;
	struct rg_win *w;

	c->nrecv++;
	if (len < sizeof(*h))
		return;
	arg = le32toh(h->arg);
	if (h->type == RMAWIN_MSG_BARRIER)
		c->nbarrier++;
	if (h->type == RMAWIN_MSG_LOCK_GRANT)
		c->ngrant++;
	if (h->type == RMAWIN_MSG_ACC_REPLY)
		c->nreply++;
	if (h->type == RMAWIN_MSG_WELCOME)
		c->nwelcome++;
	if (h->type == RMAWIN_MSG_POST)
		c->npost++;
	if (h->type == RMAWIN_MSG_ACC && len >= sizeof(*h) + sizeof(struct rmawin_wire_acc)) {
		const struct rmawin_wire_acc *a = (const void *)(h + 1);

		c->nacc++;
		c->acc_arg = arg;
		c->acc_res_off = le32toh(a->res_off);
	}
	if (h->type == RMAWIN_MSG_AUTH && len == sizeof(*h) + RMAWIN_MAC_LEN) {
		memcpy(c->auth, h + 1, RMAWIN_MAC_LEN);
		c->got_auth = true;
	}
	if (h->type != RMAWIN_MSG_WIN_DESC || arg >= 4 || len < sizeof(*h) + sizeof(*d))
		return;
	w = &c->win[arg];
	first = le32toh(d->first);
	count = le32toh(d->count);
	w->length = le64toh(d->length);
	w->chunk = le64toh(d->chunk);
	w->disp_unit = le32toh(d->disp_unit);
	w->page_off = le32toh(d->page_off);
	w->nmrs = le32toh(d->nmrs);
	for (i = 0; i < count && first + i < RG_MAX_MRS; i++) {
		w->mr[first + i].iova = le64toh(d->mr[i].iova);
		w->mr[first + i].rkey = le32toh(d->mr[i].rkey);
	}
	w->got = first + count;
	w->done = w->got >= w->nmrs;
}

/*
 * Take completions for up to @timeout_ms (0: only what is there).  Returns
 * the number of send or RDMA completions seen, or a negative error for a
 * failed one (the connection is then dead).
 */
static int rg_complete(struct rg_conn *c, int timeout_ms, uint64_t want)
{
	long end = rg_now_ms() + timeout_ms;
	struct ibv_wc wc[16];
	int n, i, done = 0, err = 0;

	do {
		n = ibv_poll_cq(c->cq, 16, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				c->dead = true;
				if (!err)
					err = -EIO;
				continue;
			}
			if (wc[i].opcode & IBV_WC_RECV) {
				rg_parse(c, c->buf + wc[i].wr_id * RG_SLOT, wc[i].byte_len);
				if (c->last_at_barrier && c->nbarrier)
					c->no_repost = true;
				if (!c->no_repost)
					rg_post_recv(c, wc[i].wr_id);
			} else if (!want || wc[i].wr_id == want) {
				done++;
			}
		}
		if (err || (want && done) || c->dead)
			break;
		if (!n && timeout_ms)
			usleep(200);
	} while (rg_now_ms() < end);
	return err ?: done;
}

/* Receive whatever the victim sends for @timeout_ms. */
int rg_poll(struct rg_conn *c, int timeout_ms)
{
	int ret = rg_complete(c, timeout_ms, ~0ULL);

	return ret < 0 ? ret : 0;
}

/* Send @len bytes as they are: header and all. */
int rg_send_raw(struct rg_conn *c, const void *msg, size_t len)
{
	unsigned int slot = c->tx_next++ % RG_TX_SLOTS;
	uint8_t *p = c->buf + RG_TX_OFF + slot * RG_SLOT;
	struct ibv_sge sge = { .addr = (uintptr_t)p, .length = len, .lkey = c->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = RG_WR_RDMA + c->tx_next,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int ret;

	if (c->dead)
		return -ENOTCONN;
	if (len > RG_SLOT)
		return -EINVAL;
	memcpy(p, msg, len);
	if (ibv_post_send(c->id->qp, &wr, &bad))
		return -EIO;
	ret = rg_complete(c, 10000, wr.wr_id);
	return ret < 0 ? ret : ret ? 0 : -ETIMEDOUT;
}

int rg_send(struct rg_conn *c, uint8_t type, uint32_t arg, const void *payload, size_t len)
{
	uint8_t msg[RG_SLOT];
	struct rmawin_wire_hdr *h = (void *)msg;

	if (len > sizeof(msg) - sizeof(*h))
		return -EINVAL;
	h->type = type;
	h->version = RMAWIN_WIRE_VERSION;
	h->len = htole16(len);
	h->arg = htole32(arg);
	if (len)
		memcpy(h + 1, payload, len);
	return rg_send_raw(c, msg, sizeof(*h) + len);
}

/* Post one RDMA operation of @len bytes from or to the RDMA buffer, and wait for it. */
static int rg_post_rdma(struct rg_conn *c, enum ibv_wr_opcode opcode, uint64_t iova,
			uint32_t rkey, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->buf + RG_RDMA_OFF),
		.length = len,
		.lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = RG_WR_RDMA + ++c->tx_next,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(1),
		.wr.rdma = { .remote_addr = iova, .rkey = rkey },
	}, *bad;
	int ret;

	if (c->dead)
		return -ENOTCONN;
	if (len > RG_RDMA_BYTES)
		return -EINVAL;
	if (ibv_post_send(c->id->qp, &wr, &bad))
		return -EIO;
	ret = rg_complete(c, 20000, wr.wr_id);
	return ret < 0 ? ret : ret ? 0 : -ETIMEDOUT;
}

/* An RDMA READ (or WRITE) of the victim's memory: 0 if it got through. */
int rg_rdma(struct rg_conn *c, bool write, uint64_t iova, uint32_t rkey, size_t len)
{
	return rg_post_rdma(c, write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ, iova, rkey, len);
}

/*
 * An RDMA WRITE with immediate of @len bytes from the RDMA buffer: it takes
 * one of the victim's receives.  0 if it got through.
 */
int rg_write_imm(struct rg_conn *c, uint64_t iova, uint32_t rkey, size_t len)
{
	return rg_post_rdma(c, IBV_WR_RDMA_WRITE_WITH_IMM, iova, rkey, len);
}

/* The RDMA buffer: what a READ brought, what a WRITE sends. */
uint8_t *rg_rdma_buf(struct rg_conn *c)
{
	return c->buf + RG_RDMA_OFF;
}

/*
 * Our descriptor of window @win: @length bytes (at most a page: our RDMA
 * buffer, in one region; the victim's accumulates reach us by message,
 * its puts and gets by RDMA), or nothing exposed.  Above a page, up to
 * RMAWIN_WIN_MAX (2^40): a lie, one region of that length under our
 * page's key (the case "huge"; nothing may be sent to it).
 */
int rg_win_desc_len(struct rg_conn *c, uint32_t win, uint64_t length)
{
	struct {
		struct rmawin_wire_desc d;
		struct rmawin_wire_mr mr;
	} m;

	memset(&m, 0, sizeof(m));
	m.d.chunk = htole64(length > 4096 ? length : 4096);
	m.d.disp_unit = htole32(1);
	m.d.length = htole64(length);
	if (!length)
		return rg_send(c, RMAWIN_MSG_WIN_DESC, win, &m.d, sizeof(m.d));
	/*
	 * A real key: a put to one that does not exist would have our queue
	 * pair fail the victim's, and its operations queued behind would all
	 * fail at once (the mute case's second thread, when it ran first).
	 */
	if (length > (1ULL << 40))
		return -EINVAL;
	m.d.nmrs = htole32(1);
	m.d.count = htole32(1);
	m.mr.iova = htole64((uintptr_t)(c->buf + RG_RDMA_OFF));
	m.mr.rkey = htole32(c->mr->rkey);
	return rg_send(c, RMAWIN_MSG_WIN_DESC, win, &m, sizeof(m));
}

int rg_win_desc(struct rg_conn *c, uint32_t win)
{
	return rg_win_desc_len(c, win, 0);
}

/* Wait until the victim's descriptor of window @win has come whole. */
int rg_wait_desc(struct rg_conn *c, uint32_t win, int timeout_ms)
{
	long end = rg_now_ms() + timeout_ms;

	while (!c->win[win].done) {
		if (c->dead || rg_now_ms() > end)
			return -ETIMEDOUT;
		rg_poll(c, 20);
	}
	return 0;
}
