// SPDX-License-Identifier: GPL-2.0
/*
 * The rogue's attacks as a member (rogue.c has the cases' list and main):
 * it proves itself honestly, then sends invalid messages of every type
 * (msgs), a flood of notifications (notify), a forged barrier round
 * (barrier4), or stops answering (mute).  Mutations of valid messages
 * (fuzz) are rogue_fuzz.c's.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/rmawin.h>

#include "rogue_attack.h"
#include "victim.h"

/* ---- As a member --------------------------------------------------------- */

/* Be rank G.rank of the group honestly until the victim leaves it. */
int member_until_closed(struct rg_conn *c, int wait_ms)
{
	int waited;

	if (rg_send(c, RMAWIN_MSG_BARRIER, 0, NULL, 0))
		return -1;
	for (waited = 0; !c->dead && waited < wait_ms; waited += 100) {
		rg_poll(c, 50);
		rg_cm_event(c, 50);
	}
	return c->nbarrier ? 0 : -1;
}

/*
 * Join victim 0's serve loop as a member: prove, exchange window 0's
 * descriptors, and check that the window's key really reads its memory.
 */
static uint64_t member_win_len;	/* what our window exposes: 0, or 4096 (mute) */
static bool member_last_at_barrier;	/* no receive reposted from the victim's first barrier on */

static int member_join_once(struct rg_conn *c, bool desc)
{
	const struct rg_win *w = &c->win[0];
	uint8_t *b;
	int ret, i;

	ret = connect_retry(c, 0, RG_AUTH_HONEST, NULL, NULL, 1500);
	if (ret)
		return ret;
	/* before our descriptor, which lets the victim's fence (its first barrier) start */
	c->last_at_barrier = member_last_at_barrier;
	ret = rg_wait_desc(c, 0, 20000);
	if (!ret && desc)
		ret = rg_win_desc_len(c, 0, member_win_len);
	if (ret)
		return ret;
	if (w->length != VICTIM_WIN || !w->nmrs)
		return -EPROTO;
	ret = rg_rdma(c, false, w->mr[0].iova, w->mr[0].rkey, 64);
	if (ret)
		return ret;
	b = rg_rdma_buf(c);
	for (i = 0; i < 64; i++)
		if (b[i] != victim_byte(i))
			return -EBADMSG;
	return 0;
}

/*
 * Joining is valid traffic: a transport error while we join (-EIO: our
 * sends were not acknowledged in 17 ms x 4) means a slow victim, two
 * emulated guests on two host cores, not a cut-off.  Join again, up to
 * twice, giving the victim's ACKs a second; the connections after a good
 * join keep the short timeout that notices a cut-off at once.
 */
static int member_join_desc(struct rg_conn *c, bool desc)
{
	uint8_t ack = rg_ack_timeout;
	int ret, tries;

	for (tries = 0;; tries++) {
		ret = member_join_once(c, desc);
		if (ret != -EIO || tries == 2)
			break;
		SAY("join: %s: joining again with a 1 s ACK timeout", strerror(-ret));
		rg_close(c);
		rg_ack_timeout = 18;
	}
	rg_ack_timeout = ack;
	return ret;
}

int member_join(struct rg_conn *c)
{
	return member_join_desc(c, true);
}

/* Cut off?  Then the keys it was given must not work any more. */
static bool member_cut_off(struct rg_conn *c, const char *what)
{
	const struct rg_win *w = &c->win[0];
	int waited;

	/* the victim fails us and puts our QP in error at once: give it time */
	for (waited = 0; waited < 1500 && !c->dead; waited += 100) {
		rg_poll(c, 50);
		rg_cm_event(c, 50);
	}
	memset(rg_rdma_buf(c), 0xee, 8);
	if (!c->dead && !rg_rdma(c, true, w->mr[0].iova, w->mr[0].rkey, 8)) {
		BAD("%s: not cut off: an RDMA write with its key got through", what);
		return false;
	}
	return true;
}

/* One invalid message of each kind: built on top of the valid ones. */
/* A window descriptor's payload with no regions */
#define DESC_LEN	sizeof(struct rmawin_wire_desc)

struct bad_msg {
	const char *name;
	uint8_t type;
	uint32_t arg;
	uint16_t len;		/* payload bytes */
	int hdr_len_delta;	/* header's len minus the real one */
	uint8_t version;	/* 0: the right one */
	void (*fill)(uint8_t *payload);
};

static void fill_desc_nmrs(uint8_t *p)
{
	struct rmawin_wire_desc *d = (void *)p;

	d->length = htole64(4096);
	d->chunk = htole64(4096);
	d->disp_unit = htole32(1);
	d->nmrs = htole32(0x7fffffff);	/* far more regions than the length needs */
}

static void fill_desc_dup(uint8_t *p)
{
	struct rmawin_wire_desc *d = (void *)p;

	d->chunk = htole64(4096);
	d->disp_unit = htole32(1);	/* window 0 again: it is complete already */
}

static void fill_desc_flags(uint8_t *p)
{
	struct rmawin_wire_desc *d = (void *)p;

	d->chunk = htole64(4096);
	d->disp_unit = htole32(1);
	d->flags = htole32(2);		/* no such flag */
}

static void fill_desc_inbox(uint8_t *p)
{
	struct rmawin_wire_desc *d = (void *)p;

	d->chunk = htole64(4096);
	d->disp_unit = htole32(1);
	d->inbox_rkey = htole32(0x1234);	/* an inbox key, yet no inbox */
}

static void fill_desc_status(uint8_t *p)
{
	struct rmawin_wire_desc *d = (void *)p;

	d->status = htole32(5);		/* a positive "errno" */
}

static void fill_acc_range(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->opcode = RMAWIN_OP_ACC;
	a->datatype = RMAWIN_TYPE_INT64;
	a->offset = htole64(VICTIM_WIN);	/* just past the window */
	a->len = htole32(8);
}

static void fill_acc_wrap(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->opcode = RMAWIN_OP_ACC;
	a->datatype = RMAWIN_TYPE_INT64;
	a->offset = htole64(~0ULL - 3);	/* offset + len wraps around */
	a->len = htole32(8);
}

static void fill_acc_type(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->opcode = RMAWIN_OP_ACC;
	a->acc_op = RMAWIN_ACC_BAND;
	a->datatype = RMAWIN_TYPE_DOUBLE;	/* BAND on double: MPI has none */
	a->len = htole32(8);
}

static void fill_acc_len(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->opcode = RMAWIN_OP_ACC;
	a->datatype = RMAWIN_TYPE_INT64;
	a->len = htole32(448 * 1000);	/* more data than the message holds */
}

static void fill_acc_win(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->win = htole32(77);		/* no such window */
	a->opcode = RMAWIN_OP_ACC;
	a->datatype = RMAWIN_TYPE_INT64;
	a->len = htole32(8);
}

static void fill_acc_epoch_mode(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->opcode = RMAWIN_OP_ACC;
	a->datatype = RMAWIN_TYPE_INT64;
	a->epoch = RMAWIN_WIRE_EPOCH_EXCLUSIVE + 1;	/* no such lock mode */
	a->len = htole32(8);
}

static void fill_acc_epoch_frag(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->opcode = RMAWIN_OP_ACC;
	a->datatype = RMAWIN_TYPE_INT64;
	a->epoch = RMAWIN_WIRE_EPOCH_SHARED;
	a->res_off = htole32(448);	/* a whole epoch comes in its first fragment */
	a->len = htole32(8);
}

/* Fine as RMAWIN_MSG_ACC; as RMAWIN_MSG_ACC_QUIET it must be answered. */
static void fill_acc_fetching(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->opcode = RMAWIN_OP_GET_ACC;	/* its previous values must go back */
	a->acc_op = RMAWIN_ACC_SUM;
	a->datatype = RMAWIN_TYPE_INT64;
	a->len = htole32(8);
}

/* Fine as RMAWIN_MSG_ACC; never a chunk: one element */
static void fill_fetch_op(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->opcode = RMAWIN_OP_FETCH_OP;
	a->acc_op = RMAWIN_ACC_SUM;
	a->datatype = RMAWIN_TYPE_INT64;
	a->len = htole32(8);
}

static void fill_acc_epoch(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->opcode = RMAWIN_OP_ACC;
	a->datatype = RMAWIN_TYPE_INT64;
	a->epoch = RMAWIN_WIRE_EPOCH_SHARED;	/* its status must go back */
	a->len = htole32(8);
}

/* A chunk as an honest origin sends it (but the test's length) */
static void fill_bulk(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->opcode = RMAWIN_OP_ACC;
	a->acc_op = RMAWIN_ACC_SUM;
	a->datatype = RMAWIN_TYPE_INT64;
	a->len = htole32(8);
}

static void fill_bulk_long(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	fill_bulk(p);
	a->len = htole32(RMAWIN_BULK_CHUNK_MAX + 8);	/* more than the inbox holds for us */
}

static void fill_reply(uint8_t *p)
{
	struct rmawin_wire_acc_reply *r = (void *)p;

	r->len = htole32(8);		/* a reply to a request never made */
}

static void fill_lock_type(uint8_t *p)
{
	put_le32(p, 7);
}

static void fill_lock_shared(uint8_t *p)
{
	put_le32(p, RMAWIN_LOCK_TYPE_SHARED);
}

static void fill_notify_range(uint8_t *p)
{
	struct rmawin_wire_notify *n = (void *)p;

	n->target_disp = htole64(VICTIM_WIN);
	n->len = htole64(1);
}

static void fill_notify_huge(uint8_t *p)
{
	struct rmawin_wire_notify *n = (void *)p;

	n->target_disp = htole64(1ULL << 62);	/* disp * unit overflows */
	n->len = htole64(8);
}

static const struct bad_msg bad_msgs[] = {
	{ "type 0", 0, 0, 0 },
	{ "type past the last", RMAWIN_MSG_LAST, 0, 0 },
	{ "type 255", 255, 0, 0 },
	{ "wrong version", RMAWIN_MSG_BARRIER, 0, 0, 0, 1 },
	{ "header longer than the message", RMAWIN_MSG_BARRIER, 0, 0, 8 },
	{ "header shorter than the message", RMAWIN_MSG_NOTIFY, 0, 24, -4 },
	{ "second proof", RMAWIN_MSG_AUTH, 0, 32 },
	{ "welcome from the initiator", RMAWIN_MSG_WELCOME, 0, 0 },
	{ "barrier: round past the last", RMAWIN_MSG_BARRIER, 5, 0 },
	{ "barrier: with a payload", RMAWIN_MSG_BARRIER, 0, 8 },
	{ "desc: truncated", RMAWIN_MSG_WIN_DESC, 1, 16 },
	{ "desc: oversized", RMAWIN_MSG_WIN_DESC, 1, RMAWIN_CTRL_SIZE - 8 },
	{ "desc: nmrs against length", RMAWIN_MSG_WIN_DESC, 1, DESC_LEN, 0, 0, fill_desc_nmrs },
	{ "desc: window 0 twice", RMAWIN_MSG_WIN_DESC, 0, DESC_LEN, 0, 0, fill_desc_dup },
	{ "desc: window far ahead", RMAWIN_MSG_WIN_DESC, 1000, DESC_LEN, 0, 0, fill_desc_dup },
	{ "desc: positive status", RMAWIN_MSG_WIN_DESC, 1, DESC_LEN, 0, 0, fill_desc_status },
	{ "desc: unknown flag", RMAWIN_MSG_WIN_DESC, 1, DESC_LEN, 0, 0, fill_desc_flags },
	{ "desc: inbox key without the flag", RMAWIN_MSG_WIN_DESC, 1, DESC_LEN, 0, 0,
	  fill_desc_inbox },
	{ "acc: truncated", RMAWIN_MSG_ACC, 1, 12 },
	{ "acc: past the window", RMAWIN_MSG_ACC, 1, 32, 0, 0, fill_acc_range },
	{ "acc: offset wraps", RMAWIN_MSG_ACC, 1, 32, 0, 0, fill_acc_wrap },
	{ "acc: op and type MPI lacks", RMAWIN_MSG_ACC, 1, 32, 0, 0, fill_acc_type },
	{ "acc: longer than its data", RMAWIN_MSG_ACC, 1, 32, 0, 0, fill_acc_len },
	{ "acc: unknown window", RMAWIN_MSG_ACC, 1, 32, 0, 0, fill_acc_win },
	{ "acc: epoch of no lock mode", RMAWIN_MSG_ACC, 1, 32, 0, 0, fill_acc_epoch_mode },
	{ "acc: epoch in a later fragment", RMAWIN_MSG_ACC, 1, 32, 0, 0, fill_acc_epoch_frag },
	{ "acc reply: to nothing", RMAWIN_MSG_ACC_REPLY, 1, 24, 0, 0, fill_reply },
	{ "acc quiet: a fetching op", RMAWIN_MSG_ACC_QUIET, 1, 32, 0, 0, fill_acc_fetching },
	{ "acc quiet: an epoch", RMAWIN_MSG_ACC_QUIET, 1, 32, 0, 0, fill_acc_epoch },
	{ "acc quiet: past the window", RMAWIN_MSG_ACC_QUIET, 1, 32, 0, 0, fill_acc_range },
	{ "acc bulk: with data after it", RMAWIN_MSG_ACC_BULK, 1, 32, 0, 0, fill_bulk },
	{ "acc bulk: a fetch_and_op", RMAWIN_MSG_ACC_BULK, 1, 24, 0, 0, fill_fetch_op },
	{ "acc bulk: an epoch", RMAWIN_MSG_ACC_BULK, 1, 24, 0, 0, fill_acc_epoch },
	{ "acc bulk: past the window", RMAWIN_MSG_ACC_BULK, 1, 24, 0, 0, fill_acc_range },
	{ "acc bulk: more than a chunk", RMAWIN_MSG_ACC_BULK, 1, 24, 0, 0, fill_bulk_long },
	{ "lock: bad type", RMAWIN_MSG_LOCK, 0, 8, 0, 0, fill_lock_type },
	{ "lock: unknown window", RMAWIN_MSG_LOCK, 9, 8, 0, 0, fill_lock_shared },
	{ "lock: truncated", RMAWIN_MSG_LOCK, 0, 4 },
	{ "unlock: not held", RMAWIN_MSG_UNLOCK, 0, 8, 0, 0, fill_lock_shared },
	{ "lock grant: never asked", RMAWIN_MSG_LOCK_GRANT, 0, 0 },
	{ "complete: no post", RMAWIN_MSG_COMPLETE, 0, 0 },
	{ "complete: carried op shorter than its header", RMAWIN_MSG_COMPLETE, 0, 12 },
	{ "post: unknown window", RMAWIN_MSG_POST, 5, 0 },
	{ "notify: past the window", RMAWIN_MSG_NOTIFY, 0, 24, 0, 0, fill_notify_range },
	{ "notify: displacement overflows", RMAWIN_MSG_NOTIFY, 0, 24, 0, 0, fill_notify_huge },
	{ "notify: truncated", RMAWIN_MSG_NOTIFY, 0, 20 },
};

/* An accumulate fragment after the first of its operation */
static void fill_acc_later(uint8_t *p)
{
	struct rmawin_wire_acc *a = (void *)p;

	a->opcode = RMAWIN_OP_ACC;
	a->datatype = RMAWIN_TYPE_INT64;
	a->res_off = htole32(448);	/* a carried operation is whole */
	a->len = htole32(8);
}

/*
 * COMPLETEs of window 0 whose carried operation is invalid, each sent once
 * the victim has posted to us, so that the count check passes and the
 * payload's own checks are what must refuse it.
 */
static const struct bad_msg bad_completes[] = {
	{ "carried op past the window", RMAWIN_MSG_COMPLETE, 0, 32, 0, 0, fill_acc_range },
	{ "carried op whose offset wraps", RMAWIN_MSG_COMPLETE, 0, 32, 0, 0, fill_acc_wrap },
	{ "carried op and type MPI lacks", RMAWIN_MSG_COMPLETE, 0, 32, 0, 0, fill_acc_type },
	{ "carried op longer than its data", RMAWIN_MSG_COMPLETE, 0, 32, 0, 0, fill_acc_len },
	{ "carried fetching op", RMAWIN_MSG_COMPLETE, 0, 32, 0, 0, fill_acc_fetching },
	{ "carried fetch_and_op", RMAWIN_MSG_COMPLETE, 0, 32, 0, 0, fill_fetch_op },
	{ "carried op with a lock epoch", RMAWIN_MSG_COMPLETE, 0, 32, 0, 0, fill_acc_epoch },
	{ "carried later fragment", RMAWIN_MSG_COMPLETE, 0, 32, 0, 0, fill_acc_later },
	{ "carried op shorter than its header", RMAWIN_MSG_COMPLETE, 0, 12 },
};

static int send_bad(struct rg_conn *c, const struct bad_msg *b)
{
	uint8_t msg[RMAWIN_CTRL_SIZE];
	struct rmawin_wire_hdr *h = (void *)msg;

	memset(msg, 0, sizeof(msg));
	h->type = b->type;
	h->version = b->version ?: RMAWIN_WIRE_VERSION;
	h->len = htole16(b->len + b->hdr_len_delta);
	h->arg = htole32(b->arg);
	if (b->fill)
		b->fill(msg + sizeof(*h));
	return rg_send_raw(c, msg, sizeof(*h) + b->len);
}

/* A whole sequence in one connection that is invalid only as a whole. */
static int send_sequence(struct rg_conn *c, int which)
{
	uint8_t lk[8] = { 0 }, acc[sizeof(struct rmawin_wire_acc) + 8] = { 0 };
	struct rmawin_wire_acc *a = (void *)acc;
	int i, ret = 0;

	switch (which) {
	case 0:	/* the same lock twice: one waiter per rank and window */
		for (i = 0; i < 2 && !ret; i++)
			ret = rg_send(c, RMAWIN_MSG_LOCK, 0, lk, sizeof(lk));
		return ret;
	case 3:	/* a whole lock epoch from a rank that holds the lock already */
		a->opcode = RMAWIN_OP_ACC;
		a->datatype = RMAWIN_TYPE_INT64;
		a->epoch = RMAWIN_WIRE_EPOCH_SHARED;
		a->len = htole32(8);
		ret = rg_send(c, RMAWIN_MSG_LOCK, 0, lk, sizeof(lk));
		return ret ?: rg_send(c, RMAWIN_MSG_ACC, 1, acc, sizeof(acc));
	case 4:
		/*
		 * An old message handled again: after more valid accumulates
		 * (of 0) than the victim has receive buffers, every buffer
		 * holds one; an RDMA write with immediate of as many bytes
		 * (the window's own, read first: it stays intact) takes a
		 * receive and leaves its buffer as it was.
		 */
		a->opcode = RMAWIN_OP_ACC;
		a->acc_op = RMAWIN_ACC_SUM;
		a->datatype = RMAWIN_TYPE_INT64;
		a->len = htole32(8);
		for (i = 0; i < 40 && !ret; i++)
			ret = rg_send(c, RMAWIN_MSG_ACC, i, acc, sizeof(acc));
		ret = ret ?: rg_rdma(c, false, c->win[0].mr[0].iova, c->win[0].mr[0].rkey,
				     sizeof(struct rmawin_wire_hdr) + sizeof(acc));
		return ret ?: rg_write_imm(c, c->win[0].mr[0].iova, c->win[0].mr[0].rkey,
					   sizeof(struct rmawin_wire_hdr) + sizeof(acc));
	case 1:	/* POSTs far ahead of any START */
		for (i = 0; i < 4 && !ret; i++)
			ret = rg_send(c, RMAWIN_MSG_POST, 0, NULL, 0);
		return ret;
	default:	/* barrier rounds ahead of the victim, still creating its window */
		for (i = 0; i < 3 && !ret; i++)
			ret = rg_send(c, RMAWIN_MSG_BARRIER, 0, NULL, 0);
		return ret;
	}
}

int case_msgs(void)
{
	size_t n = sizeof(bad_msgs) / sizeof(bad_msgs[0]), i;
	struct rg_conn c;
	int ret;

	for (i = 0; i < n + 5; i++) {
		const char *name = i < n ? bad_msgs[i].name :
				   i == n ? "lock twice" : i == n + 1 ? "posts ahead" :
				   i == n + 2 ? "barriers ahead" :
				   i == n + 3 ? "epoch while holding the lock" :
				   "a message replayed by an RDMA write with immediate";

		/* the victim waits for our window descriptor in all but "barriers ahead" */
		ret = member_join_desc(&c, i != n + 2);
		if (ret)
			return SAY("%s: join: %s", name, strerror(-ret)), 1;
		ret = i < n ? send_bad(&c, &bad_msgs[i]) : send_sequence(&c, i - n);
		if (member_cut_off(&c, name))
			SAY("%s: cut off, its keys dead", name);
		rg_close(&c);
	}
	return 0;
}

int case_completes(void)
{
	size_t n = sizeof(bad_completes) / sizeof(bad_completes[0]), i;
	const char *name;
	struct rg_conn c;
	int ret, waited;

	for (i = 0; i < n; i++) {
		name = bad_completes[i].name;
		ret = member_join(&c);
		if (ret)
			return SAY("%s: join: %s", name, strerror(-ret)), 1;
		/* the victim posts to us once its window is made */
		for (waited = 0; waited < 20000 && !c.npost && !c.dead; waited += 100)
			rg_poll(&c, 100);
		if (!c.npost) {
			BAD("%s: the victim never posted to us", name);
			rg_close(&c);
			return 1;
		}
		ret = send_bad(&c, &bad_completes[i]);
		if (member_cut_off(&c, name))
			SAY("%s: cut off, its keys dead", name);
		rg_close(&c);
	}
	return 0;
}

/* ---- Floods and forged barriers ---------------------------------------- */

int case_notify(long count)
{
	struct rmawin_wire_notify n = { .len = htole64(8) };
	struct rg_conn c;
	long i;
	int ret;

	/* valid traffic only: a cut-off here is the failure, not a finding */
	rg_ack_timeout = 18;	/* 1.07 s, four tries */
	ret = member_join(&c);
	if (ret)
		return SAY("notify: join: %s", strerror(-ret)), 1;
	for (i = 0; i < count; i++) {
		n.tag = htole32(i);
		n.target_disp = htole64(8 * (i % (VICTIM_WIN / 8)));
		ret = rg_send(&c, RMAWIN_MSG_NOTIFY, 0, &n, sizeof(n));
		if (ret) {
			BAD("notify: cut off after %ld valid notifications: %s", i, strerror(-ret));
			break;
		}
	}
	SAY("notify: %ld notifications sent", i);
	/* tell the victim we are done: the barrier it waits in */
	if (!c.dead && member_until_closed(&c, 60000))
		BAD("notify: the victim did not go on");
	rg_close(&c);
	return 0;
}

int case_barrier4(void)
{
	struct rg_conn c[RG_MAX_RANKS];
	int v, ret;

	/* our send must be acknowledged, and a slow victim (PREEMPT_RT) is not a cut-off */
	rg_ack_timeout = 18;	/* 1.07 s, four tries */
	for (v = 0; v < G.rank; v++) {
		ret = connect_retry(&c[v], v, RG_AUTH_HONEST, NULL, NULL, 1500);
		if (ret)
			return SAY("barrier4: connect to %d: %s", v, strerror(-ret)), 1;
	}
	/* rank 3 sends rank 0's round 0 legitimately; round 1 is rank 2's */
	ret = rg_send(&c[0], RMAWIN_MSG_BARRIER, 1, NULL, 0);
	/*
	 * Victim 0 cuts us off for it, as it must: if it tore the queue pair
	 * down before its ACK reached us (a loaded PREEMPT_RT guest), our send
	 * ends in EIO.  The victims check that it came and was refused.
	 */
	if (ret == -EIO)
		SAY("barrier4: send: %s: cut off before the ACK came", strerror(-ret));
	else if (ret)
		BAD("barrier4: send: %s", strerror(-ret));
	rg_poll(&c[0], 1500);
	for (v = 0; v < G.rank; v++)
		rg_close(&c[v]);
	return 0;
}

/*
 * A member that stops answering: it joins, passes the victim's first
 * fence, then takes messages and answers none (no accumulate reply ever).
 * The victim's poller fills its window of unanswered fragments and waits;
 * the victim must still be able to die at once.
 */
int case_mute(int secs)
{
	struct rg_conn c;
	int ret, t;

	member_win_len = 4096;
	ret = member_join(&c);
	if (ret)
		return SAY("mute: join: %s", strerror(-ret)), 1;
	ret = rg_send(&c, RMAWIN_MSG_BARRIER, 0, NULL, 0);
	for (t = 0; t < secs * 10 && !c.dead; t++)
		rg_poll(&c, 100);
	SAY("mute: %lu messages taken, %lu of them accumulate fragments never answered",
	    c.nrecv, c.nrecv - c.nbarrier - c.nwelcome - 1);
	rg_close(&c);
	return ret;
}

/*
 * A member whose receive queue runs dry: it joins, passes the victim's
 * first fence, then takes the messages it has receives for and posts no
 * more.  The victim's next send is retried for ever (rnr_retry 7), and
 * every work request behind it on our queue pair waits: the victim must
 * still be able to die at once, whatever it waits for there.
 */
int case_stall(int secs)
{
	struct rg_conn c;
	int ret, t;

	member_win_len = 4096;
	/*
	 * The victim must find exactly 63 receives after its fence's barrier,
	 * so that its 64th fetch_and_op waits: none is reposted from that
	 * barrier on, its own buffer included, whenever it comes.  (Setting
	 * no_repost after the join let a barrier that came during the join's
	 * RDMA read be reposted: one receive more, the 64th fitted, and the
	 * registration had nothing to wait behind.)
	 */
	member_last_at_barrier = true;
	ret = member_join(&c);
	if (ret)
		return SAY("stall: join: %s", strerror(-ret)), 1;
	ret = rg_send(&c, RMAWIN_MSG_BARRIER, 0, NULL, 0);
	for (t = 0; t < secs * 10 && !c.dead; t++)
		rg_poll(&c, 100);
	SAY("stall: %lu messages taken, then no receive posted; %s", c.nrecv,
	    c.dead ? "the victim ended the connection" : "still connected");
	rg_close(&c);
	return ret;
}

/*
 * A member that answers an accumulate with a status no honest target
 * sends: only 0 and -EAGAIN (a lock it could not take at once) exist.
 * -ERESTARTSYS (-512), passed up, would make the victim's kernel restart
 * its system call; the victim must cut us off and report -EPROTO.
 */
int case_badstatus(void)
{
	struct rmawin_wire_acc_reply r = { .status = htole32((uint32_t)-512) };
	struct rg_conn c;
	int ret, t;

	member_win_len = 4096;
	ret = member_join(&c);
	if (ret)
		return SAY("badstatus: join: %s", strerror(-ret)), 1;
	ret = rg_send(&c, RMAWIN_MSG_BARRIER, 0, NULL, 0);
	for (t = 0; t < 200 && !ret && !c.nacc && !c.dead; t++)
		rg_poll(&c, 100);
	if (ret || !c.nacc) {
		rg_close(&c);
		return SAY("badstatus: no accumulate came: %s", strerror(-ret)), 1;
	}
	r.res_off = htole32(c.acc_res_off);
	ret = rg_send(&c, RMAWIN_MSG_ACC_REPLY, c.acc_arg, &r, sizeof(r));
	if (ret)
		SAY("badstatus: the reply's send: %s", strerror(-ret));
	else if (member_cut_off(&c, "badstatus"))
		SAY("badstatus: a reply of status -512 cut us off, its keys dead");
	rg_close(&c);
	return 0;
}

/*
 * A member whose window descriptor claims 2^40 bytes (RMAWIN_WIN_MAX, one
 * region under its one real page's key), more than the victim's machine
 * has: the victim's put and get of the whole of it must fail before its
 * kernel sizes anything by them, and nothing may reach our page.
 */
int case_huge(void)
{
	struct rg_conn c;
	uint8_t *b;
	int ret, i, bad = 0;

	member_win_len = 1ULL << 40;
	ret = member_join(&c);
	if (ret)
		return SAY("huge: join: %s", strerror(-ret)), 1;
	b = rg_rdma_buf(&c);
	memset(b, 0x5a, 4096);
	ret = member_until_closed(&c, 30000);
	for (i = 0; i < 4096; i++)
		bad += b[i] != 0x5a;
	if (ret)
		BAD("huge: the victim's fence never came");
	if (bad)
		BAD("huge: %d bytes of our page were written", bad);
	if (c.nacc)
		BAD("huge: %lu accumulates came", c.nacc);
	if (!ret && !bad && !c.nacc)
		SAY("huge: the victim's fence came, nothing else reached us");
	rg_close(&c);
	return 0;
}
