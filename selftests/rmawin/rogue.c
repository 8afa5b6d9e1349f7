// SPDX-License-Identifier: GPL-2.0
/*
 * rogue - a misbehaving rmawin group member, made of librdmacm and
 * libibverbs alone, for the security tests (rogue_test.sh, wire_test.sh).
 *
 *   rogue CASE ADDRS RANK [SEED COUNT]
 *
 * ADDRS is the group's table ("ip:port,..."), RANK the rogue's place in it
 * (the highest, so that it connects to every victim; for "impersonate" the
 * rank it pretends to be).  RMAWIN_JOB_KEY is the job's key where the case
 * needs a member.  The victims run selftests/rmawin/victim.  The rogue
 * exits 0 if everything it could observe was what a safe victim shows:
 * nothing sent to it before it proved itself, no remote access without a
 * proof or after being cut off.  The victims check the rest (their errors,
 * their memory); the runner checks the kernel log and the leak counters.
 *
 * Cases:
 *   silent       connect, never prove anything: dropped after the timeout
 *   nokey        a random proof: dropped, nothing received, no RDMA
 *   wrongkey     the victim's proof fails under a wrong key; ours is refused
 *   replay       a recorded request and proof, replayed: refused; then joins
 *   impersonate  listen on a lower rank's port first, answer with a replayed
 *                and with a forged reply: the victim refuses both
 *   relay        a man in the middle relays an honest member's handshake
 *                onto its own connection: refused
 *   msgs         as a member, one invalid message per connection, of every
 *                type: truncated, oversized, out of range; cut off each time,
 *                and the window's keys no longer work
 *   completes    as a member, once the victim has posted an exposure epoch
 *                to it (victim serve ... post), a COMPLETE whose carried
 *                operation is invalid, one per connection: cut off each time,
 *                the window untouched
 *   fuzz         as a member, SEED-reproducible mutations of valid messages,
 *                COUNT messages in all, reconnecting whenever cut off
 *   notify       as a member, a flood of valid notifications
 *   barrier4     rank 3 of 4 forges a barrier round it does not send
 *   mute         as a member, joins a fence, then never answers again
 *   badstatus    as a member, answers the victim's fetch_and_op with a
 *                status no target sends (-ERESTARTSYS): cut off, and the
 *                victim's call gets -EPROTO, never that errno
 *   stall        as a member, joins a fence, then takes messages without
 *                posting receives for more: the victim's sends beyond them
 *                are retried for ever, and what its queue pair holds waits
 *   huge         as a member, says its window has 2^40 bytes: the victim's
 *                put and get of all of it fail (-ENOMEM) before its kernel
 *                sizes anything by them, and nothing reaches us
 *   lateack      rank 0, the victim's responder: takes the victim's proof but
 *                sends no welcome and drops it 4 s later, as a responder
 *                whose proof timeout ran out; the victim must send nothing
 *                before a welcome and join on the next connection
 *
 * This file holds main() and the attacks on the handshake; the attacks of
 * a member that proved itself (msgs, completes, notify, barrier4, mute,
 * badstatus, stall, huge) are in rogue_member.c, its fuzzer in
 * rogue_fuzz.c, the connection layer in rogue_conn.c.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "rogue_attack.h"

struct rg_group G;
int failures;

/* Connect to @peer, retrying while the victim is not listening yet. */
int connect_retry(struct rg_conn *c, int peer, enum rg_auth auth, const uint8_t *nonce,
		  const uint8_t *mac, int tries)
{
	int ret = -ETIMEDOUT, i;

	for (i = 0; i < tries; i++) {
		ret = rg_connect(c, &G, peer, auth, nonce, mac, 5000);
		if (ret != -ECONNREFUSED && ret != -EHOSTUNREACH && ret != -ECONNRESET)
			return ret;
		rg_close(c);
		usleep(20000);
	}
	return ret;
}

/*
 * After a refused proof (or none): the victim must drop us within
 * @wait_ms and have sent us nothing; RDMA with any key must fail.
 */
static void expect_dropped(struct rg_conn *c, const char *what, int wait_ms)
{
	int waited = 0;

	while (!c->dead && waited < wait_ms) {
		rg_poll(c, 50);
		if (rg_cm_event(c, 50) == RDMA_CM_EVENT_DISCONNECTED)
			break;
		waited += 100;
	}
	if (!c->dead)
		BAD("%s: still connected after %d ms", what, wait_ms);
	if (c->nrecv)
		BAD("%s: the victim sent %lu messages to an unproven peer", what, c->nrecv);
	else
		SAY("%s: dropped, nothing received", what);
}

/* An unproven connection has no remote access, whatever key it tries. */
static void expect_no_rdma(struct rg_conn *c, const char *what)
{
	uint32_t guess;

	for (guess = 0; guess < 4 && !c->dead; guess++) {
		if (!rg_rdma(c, guess & 1, 0x10000, 0x100 * guess + 0x37, 8)) {
			BAD("%s: RDMA with a guessed key got through", what);
			return;
		}
	}
	SAY("%s: RDMA refused", what);
}

static int case_silent(void)
{
	struct rg_conn c;
	int ret = connect_retry(&c, 0, RG_AUTH_NONE, NULL, NULL, 500);

	if (ret)
		return SAY("connect: %s", strerror(-ret)), 1;
	expect_dropped(&c, "silent", 8000);
	rg_close(&c);
	return 0;
}

static int case_nokey(void)
{
	struct rg_conn c;
	int v, ret;

	for (v = 0; v < G.rank; v++) {
		ret = connect_retry(&c, v, RG_AUTH_GARBAGE, NULL, NULL, 500);
		if (ret)
			return SAY("connect to rank %d: %s", v, strerror(-ret)), 1;
		expect_no_rdma(&c, "nokey");
		rg_close(&c);
		ret = connect_retry(&c, v, RG_AUTH_GARBAGE, NULL, NULL, 500);
		if (ret)
			return SAY("connect to rank %d: %s", v, strerror(-ret)), 1;
		expect_dropped(&c, "nokey", 5000);
		rg_close(&c);
		/* a responder's welcome is no proof */
		ret = connect_retry(&c, v, RG_AUTH_WELCOME, NULL, NULL, 500);
		if (ret)
			return SAY("connect to rank %d: %s", v, strerror(-ret)), 1;
		expect_dropped(&c, "nokey: a welcome in place of the proof", 5000);
		rg_close(&c);
	}
	return 0;
}

static int case_wrongkey(void)
{
	struct rg_conn c;
	int ret;

	/* G's key is not the victims': their proof must not check out under it */
	memset(G.key, 0x3c, sizeof(G.key));
	G.key_len = 32;
	ret = connect_retry(&c, 0, RG_AUTH_HONEST, NULL, NULL, 500);
	if (ret != -EKEYREJECTED)
		BAD("wrongkey: the victim's proof under a wrong key: %s", strerror(-ret));
	rg_close(&c);
	ret = connect_retry(&c, 0, RG_AUTH_WRONG_KEY, NULL, NULL, 500);
	if (ret)
		return SAY("connect: %s", strerror(-ret)), 1;
	expect_dropped(&c, "wrongkey", 5000);
	rg_close(&c);
	return 0;
}

static int case_replay(void)
{
	uint8_t nonce[RMAWIN_NONCE_LEN], mac[RMAWIN_MAC_LEN];
	struct rg_conn c;
	int ret;

	/* a real handshake, recorded: the proof is made, never sent */
	ret = connect_retry(&c, 0, RG_AUTH_NONE, NULL, NULL, 500);
	if (ret)
		return SAY("record: %s", strerror(-ret)), 1;
	memcpy(nonce, c.nonce, sizeof(nonce));
	rg_mac(&G, G.key, G.key_len, RMAWIN_LABEL_INIT, G.rank, 0, c.id->qp->qp_num, c.rqpn,
	       c.nonce, c.rnonce, mac);
	rg_close(&c);
	/* the same request and proof again: a new responder nonce, new QPs */
	ret = connect_retry(&c, 0, RG_AUTH_GIVEN, nonce, mac, 500);
	if (ret)
		return SAY("replay: %s", strerror(-ret)), 1;
	expect_dropped(&c, "replay", 5000);
	rg_close(&c);
	/* the honest job still forms */
	ret = connect_retry(&c, 0, RG_AUTH_HONEST, NULL, NULL, 500);
	if (ret)
		BAD("replay: the honest join after it: %s", strerror(-ret));
	else if (member_until_closed(&c, 20000))
		BAD("replay: the victim did not go on as a member");
	else
		SAY("replay: refused; the honest join that followed worked");
	rg_close(&c);
	return 0;
}

/*
 * Listen on @port of the victims' address, as rank @rank, and answer
 * @n requests with @rep (or a forged one if NULL).  Each must be refused.
 */
static int impersonate(const struct sockaddr_in *addr, const uint8_t *rep, int n)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *lid, *id;
	struct rdma_cm_event *ev;
	struct rmawin_wire_rep forged;
	struct rdma_conn_param p;
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_wc wc;
	int answered = 0, refused = 0, i;

	if (!ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)addr) || rdma_listen(lid, 4))
		return SAY("listen: %s", strerror(errno)), 1;
	SAY("impersonate: listening in rank %d's place", G.rank);
	while (answered < n || refused < answered) {
		if (rdma_get_cm_event(ch, &ev))
			break;
		id = ev->id;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			if (!pd) {
				pd = ibv_alloc_pd(id->verbs);
				cq = ibv_create_cq(id->verbs, 16, NULL, NULL, 0);
			}
			qa.send_cq = qa.recv_cq = cq;
			rdma_create_qp(id, pd, &qa);
			memset(&forged, 0, sizeof(forged));
			forged.magic = htobe32(RMAWIN_CM_MAGIC);
			forged.version = RMAWIN_CM_VERSION;
			forged.rank = htobe32(G.rank);
			forged.nranks = htobe32(G.nranks);
			for (i = 0; i < RMAWIN_MAC_LEN; i++)
				forged.mac[i] = rand();
			memset(&p, 0, sizeof(p));
			p.private_data = rep && !answered ? (const void *)rep : (const void *)&forged;
			p.private_data_len = sizeof(forged);
			p.responder_resources = p.initiator_depth = 4;
			p.rnr_retry_count = 7;
			rdma_accept(id, &p);
			SAY("impersonate: answered request %d with a %s reply", answered + 1,
			    rep && !answered ? "replayed" : "forged");
			answered++;
		} else if (ev->event == RDMA_CM_EVENT_REJECTED ||
			   ev->event == RDMA_CM_EVENT_DISCONNECTED ||
			   ev->event == RDMA_CM_EVENT_CONNECT_ERROR) {
			/* the victim refused the reply; nothing arrived on the QP */
			if (id->qp && ibv_poll_cq(cq, 1, &wc) > 0 && wc.status == IBV_WC_SUCCESS &&
			    (wc.opcode & IBV_WC_RECV))
				BAD("impersonate: the victim sent a message to a forger");
			refused++;
			SAY("impersonate: the victim refused reply %d", refused);
		}
		rdma_ack_cm_event(ev);
	}
	rdma_destroy_id(lid);
	return 0;
}

static int case_impersonate(const char *recorded)
{
	uint8_t rep[sizeof(struct rmawin_wire_rep)];
	FILE *f;

	/* a real rank's reply from an earlier job, recorded by "record" */
	f = fopen(recorded, "rb");
	if (!f || fread(rep, 1, sizeof(rep), f) != sizeof(rep))
		return SAY("no recorded reply in %s", recorded), 1;
	fclose(f);
	return impersonate(&G.addrs[G.rank], rep, 2);
}

/* Record a victim's real reply (for impersonate), proving nothing. */
static int case_record(const char *out)
{
	struct rg_conn c;
	FILE *f;
	int ret = connect_retry(&c, 0, RG_AUTH_NONE, NULL, NULL, 500);

	if (ret)
		return SAY("record: %s", strerror(-ret)), 1;
	f = fopen(out, "wb");
	if (!f || fwrite(c.rep, 1, sizeof(c.rep), f) != sizeof(c.rep))
		return SAY("record: cannot write %s", out), 1;
	fclose(f);
	expect_dropped(&c, "record", 5000);
	rg_close(&c);
	return 0;
}

/*
 * relay's honest member, in the child: it joins as rank G.rank, holding the
 * key, with rank 0's address replaced by the rogue's side port @side; then
 * the child exits.
 */
static void relay_member(struct sockaddr_in side)
{
	struct rg_group mg = G;
	struct rg_conn mc;
	int i, ret;

	/* the honest member, whose route to rank 0 the rogue controls */
	mg.addrs[0] = side;
	for (i = 0; i < 100; i++) {
		ret = rg_connect(&mc, &mg, 0, RG_AUTH_BLIND, NULL, NULL, 10000);
		if (ret != -ECONNREFUSED && ret != -EHOSTUNREACH)
			break;
		rg_close(&mc);
		usleep(100000);
	}
	sleep(2);
	rg_close(&mc);
	_exit(0);
}

/* The member's connection request on @ch: its id, its request in @reqbuf; NULL if none came. */
static struct rdma_cm_id *relay_member_request(struct rdma_event_channel *ch, uint8_t *reqbuf)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *mid = NULL;

	while (!rdma_get_cm_event(ch, &ev)) {
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			mid = ev->id;
			memcpy(reqbuf, ev->param.conn.private_data, sizeof(struct rmawin_wire_req));
			rdma_ack_cm_event(ev);
			break;
		}
		rdma_ack_cm_event(ev);
	}
	return mid;
}

/*
 * Accept the member's connection @mid with the victim's reply in @v, a
 * receive for the member's proof posted first into @msg (RMAWIN_CTRL_SIZE
 * bytes).  Return: the completion queue the proof arrives on.
 */
static struct ibv_cq *relay_accept_member(struct rdma_cm_id *mid, struct rg_conn *v, uint8_t *msg)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param p;
	struct ibv_recv_wr rwr, *bad;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	pd = ibv_alloc_pd(mid->verbs);
	cq = ibv_create_cq(mid->verbs, 16, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, msg, RMAWIN_CTRL_SIZE, IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = qa.recv_cq = cq;
	rdma_create_qp(mid, pd, &qa);
	sge = (struct ibv_sge){ .addr = (uintptr_t)msg, .length = RMAWIN_CTRL_SIZE,
				.lkey = mr->lkey };
	rwr = (struct ibv_recv_wr){ .sg_list = &sge, .num_sge = 1 };
	ibv_post_recv(mid->qp, &rwr, &bad);
	/* the victim's reply, to the member */
	memset(&p, 0, sizeof(p));
	p.private_data = v->rep;
	p.private_data_len = sizeof(v->rep);
	p.responder_resources = p.initiator_depth = 4;
	p.rnr_retry_count = 7;
	rdma_accept(mid, &p);
	return cq;
}

/* Wait up to 10 s for a completion on @cq, into @wc.  Return: 1 if one came, else 0. */
static int relay_poll(struct ibv_cq *cq, struct ibv_wc *wc)
{
	int n;

	for (n = 0; n < 200; n++) {
		if (ibv_poll_cq(cq, 1, wc) > 0)
			break;
		usleep(50000);
	}
	return n < 200;
}

/*
 * relay: an honest member (a child process holding the key, as rank
 * G.rank) is led to the rogue's side port; the rogue opens its own
 * connection to victim 0 with the member's request, hands the victim's
 * reply to the member and the member's proof to the victim.  The proof is
 * bound to the member's connection, not the rogue's: refused.
 */
static int case_relay(int side_port)
{
	struct sockaddr_in side = G.addrs[0];
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid, *mid;
	uint8_t reqbuf[sizeof(struct rmawin_wire_req)], msg[RMAWIN_CTRL_SIZE];
	struct rmawin_wire_req *req = (void *)reqbuf;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	struct rg_conn v;
	pid_t member;
	int ret, st;

	side.sin_port = htons(side_port);
	/* before any verbs call here: a child must not share our device context */
	member = fork();
	if (member == 0)
		relay_member(side);	/* which exits */
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)&side) || rdma_listen(lid, 4))
		return SAY("relay: listen: %s", strerror(errno)), 1;

	/* the member's request */
	mid = relay_member_request(ch, reqbuf);
	if (!mid)
		return SAY("relay: no request from the member"), 1;
	/* the same request, on our own connection to the victim */
	ret = connect_retry(&v, 0, RG_AUTH_NONE, req->nonce, NULL, 500);
	if (ret)
		return SAY("relay: connect: %s", strerror(-ret)), 1;
	cq = relay_accept_member(mid, &v, msg);
	/* the member's proof (made for its own connection), to the victim */
	if (!relay_poll(cq, &wc) || wc.status != IBV_WC_SUCCESS)
		return SAY("relay: no proof from the member"), 1;
	SAY("relay: forwarding the member's proof (%u bytes) to the victim", wc.byte_len);
	rg_send_raw(&v, msg, wc.byte_len);
	expect_dropped(&v, "relay", 5000);
	rg_close(&v);
	waitpid(member, &st, 0);
	rdma_destroy_id(mid);
	rdma_destroy_id(lid);
	return 0;
}

/*
 * The victim (rank 1) connects to the rogue (rank 0).  Its first proof is
 * taken but never welcomed, and the connection dropped after 4 s, as a
 * responder that gave up waiting for the proof would: the victim is no
 * member of it, so it must send nothing more there, and it must connect
 * again rather than fail.  The second connection is welcomed, and the
 * victim's barrier (its first message as a member) meets ours.
 */
static int case_lateack(void)
{
	struct rg_listener l;
	struct rg_conn c;
	int ret;

	if (G.rank)
		return SAY("lateack: the rogue must be rank 0"), 2;
	ret = rg_listen(&l, &G);
	if (ret)
		return SAY("lateack: listen: %s", strerror(-ret)), 1;
	ret = rg_accept(&c, &l, &G, 20000);
	if (ret) {
		BAD("lateack: the first connection: %s", strerror(-ret));
		goto out;
	}
	SAY("lateack: the victim's proof checked out; no welcome for 4 s");
	rg_poll(&c, 4000);
	if (c.nrecv != 1)
		BAD("lateack: the victim sent %lu messages after its proof, unwelcomed",
		    c.nrecv - 1);
	rg_close(&c);
	ret = rg_accept(&c, &l, &G, 20000);
	if (ret) {
		BAD("lateack: the victim did not connect again: %s", strerror(-ret));
		goto out;
	}
	ret = rg_send(&c, RMAWIN_MSG_WELCOME, 0, NULL, 0);
	if (ret)
		BAD("lateack: welcome: %s", strerror(-ret));
	else if (member_until_closed(&c, 30000))
		BAD("lateack: the welcomed victim's barrier never came");
	else
		SAY("lateack: dropped unwelcomed, the victim joined on its next connection");
out:
	rg_close(&c);
	rg_unlisten(&l);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what;
	int ret;

	if (argc < 4) {
		fprintf(stderr, "usage: rogue CASE ADDRS RANK [ARG...]\n");
		return 2;
	}
	what = argv[1];
	if (rg_group_init(&G, argv[2], atoi(argv[3])))
		return SAY("bad ADDRS or RANK"), 2;
	srand(getpid());
	if (!strcmp(what, "silent"))
		ret = case_silent();
	else if (!strcmp(what, "nokey"))
		ret = case_nokey();
	else if (!strcmp(what, "wrongkey"))
		ret = case_wrongkey();
	else if (!strcmp(what, "replay"))
		ret = case_replay();
	else if (!strcmp(what, "record") && argc > 4)
		ret = case_record(argv[4]);
	else if (!strcmp(what, "impersonate") && argc > 4)
		ret = case_impersonate(argv[4]);
	else if (!strcmp(what, "relay") && argc > 4)
		ret = case_relay(atoi(argv[4]));
	else if (!strcmp(what, "msgs"))
		ret = case_msgs();
	else if (!strcmp(what, "completes"))
		ret = case_completes();
	else if (!strcmp(what, "fuzz") && argc > 5)
		ret = case_fuzz(strtoull(argv[4], NULL, 0), atol(argv[5]));
	else if (!strcmp(what, "notify") && argc > 4)
		ret = case_notify(atol(argv[4]));
	else if (!strcmp(what, "barrier4"))
		ret = case_barrier4();
	else if (!strcmp(what, "mute") && argc > 4)
		ret = case_mute(atoi(argv[4]));
	else if (!strcmp(what, "badstatus"))
		ret = case_badstatus();
	else if (!strcmp(what, "stall") && argc > 4)
		ret = case_stall(atoi(argv[4]));
	else if (!strcmp(what, "huge"))
		ret = case_huge();
	else if (!strcmp(what, "lateack"))
		ret = case_lateack();
	else
		return SAY("unknown case %s", what), 2;
	if (ret || failures)
		SAY("%s: FAILED (%d findings)", what, failures);
	else
		SAY("%s: as expected", what);
	return ret || failures;
}
