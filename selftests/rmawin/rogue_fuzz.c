// SPDX-License-Identifier: GPL-2.0
/*
 * The rogue's fuzzer (case fuzz): as a member that proved itself, it
 * sends messages that are mostly valid for the protocol state it keeps of
 * its connection, a third of them mutated (a boundary value in a payload
 * field, random bytes, a flipped bit, another length), joining again each
 * time the victim cuts it off.  Reproducible from its seed.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/rmawin.h>

#include "rogue_attack.h"
#include "victim.h"
#include "xorshift.h"

static uint64_t rng_state;

static uint64_t rng(void)
{
	return xorshift64s(&rng_state);
}

/*
 * What the fuzzer knows of the protocol state of its connection, so that
 * most of its messages are valid (and the connection lasts) before the
 * mutations make some of them not.
 */
struct fuzz_state {
	long barriers;		/* BARRIER messages sent */
	int lock;		/* lock type + 1 held (asked for), 0 for none */
	int posts;		/* POSTs sent (the victim never STARTs) */
	bool desc1;		/* window 1's descriptor sent */
	long notifies;
};

/* A message that is valid in state @st (with a few that never are). */
static size_t fuzz_base(uint8_t *msg, struct fuzz_state *st, const struct rg_conn *c)
{
	static const uint8_t never[] = { RMAWIN_MSG_AUTH, RMAWIN_MSG_LOCK_GRANT,
					 RMAWIN_MSG_COMPLETE, RMAWIN_MSG_ACC_REPLY };
	struct rmawin_wire_hdr *h = (void *)msg;
	uint8_t *p = msg + sizeof(*h);
	struct rmawin_wire_acc *a = (void *)p;
	struct rmawin_wire_notify *nt = (void *)p;
	struct rmawin_wire_desc *d = (void *)p;
	size_t len = 0;
	uint32_t n, pick = rng() % 100;

	memset(msg, 0, RMAWIN_CTRL_SIZE);
	h->version = RMAWIN_WIRE_VERSION;
	if (pick < 4) {
		h->type = never[rng() % sizeof(never)];
		len = h->type == RMAWIN_MSG_AUTH ? 32 :
		      h->type == RMAWIN_MSG_ACC_REPLY ? sizeof(struct rmawin_wire_acc_reply) : 0;
	} else if (pick < 12 && st->barriers <= (long)c->nbarrier) {
		h->type = RMAWIN_MSG_BARRIER;
		st->barriers++;
	} else if (pick < 24) {
		h->type = st->lock ? RMAWIN_MSG_UNLOCK : RMAWIN_MSG_LOCK;
		if (!st->lock)
			st->lock = 1 + rng() % 2;
		else
			st->lock = -st->lock;	/* sent the unlock */
		put_le32(p, (st->lock < 0 ? -st->lock : st->lock) - 1);
		if (st->lock < 0)
			st->lock = 0;
		len = 8;
	} else if (pick < 28 && st->posts < 2) {
		h->type = RMAWIN_MSG_POST;
		st->posts++;
	} else if (pick < 30 && !st->desc1) {
		h->type = RMAWIN_MSG_WIN_DESC;
		h->arg = htole32(1);
		d->chunk = htole64(4096);
		d->disp_unit = htole32(1);
		len = sizeof(*d);
		st->desc1 = true;
	} else if (pick < 60 && st->notifies < RMAWIN_NOTIFY_PER_PEER) {
		h->type = RMAWIN_MSG_NOTIFY;
		nt->target_disp = htole64(rng() % VICTIM_WIN);
		nt->len = htole64(rng() % (VICTIM_WIN - le64toh(nt->target_disp) + 1));
		nt->tag = htole32(rng());
		len = sizeof(*nt);
		st->notifies++;
	} else {
		h->type = RMAWIN_MSG_ACC;
		n = 8 * (1 + rng() % 8);
		a->opcode = RMAWIN_OP_ACC + rng() % 4;
		a->acc_op = a->opcode == RMAWIN_OP_CAS ? 0 : rng() % RMAWIN_ACC_LAST;
		a->datatype = RMAWIN_TYPE_INT64;
		if (a->opcode >= RMAWIN_OP_FETCH_OP)
			n = 8;
		a->offset = htole64(8 * (rng() % (VICTIM_WIN / 8 - n / 8 + 1)));
		a->len = htole32(n);
		/* now and then a whole lock epoch, valid while we hold no lock */
		if (!st->lock && rng() % 4 == 0)
			a->epoch = 1 + rng() % 2;
		len = sizeof(*a) + n * (a->opcode == RMAWIN_OP_CAS ? 2 : 1);
		h->arg = htole32(rng());
	}
	h->len = htole16(len);
	return sizeof(*h) + len;
}

/*
 * Mutate, one time in three: a boundary value in a payload field, random
 * payload bytes, a flipped bit anywhere, or another length.
 */
static size_t fuzz_mutate(uint8_t *msg, size_t len)
{
	static const uint64_t edge[] = { 0, 1, 0x7f, 0xff, 0xffff, 0x7fffffff, 0xffffffff,
					 4096, 4095, VICTIM_WIN, ~0ULL };
	uint32_t what = rng() % 40;
	size_t at;
	uint64_t v;

	if (what >= 10)
		return len;
	if (what < 5 && len > 8) {
		/* a boundary value in a field of the payload */
		at = 8 + (rng() % ((len - 8 + 3) / 4)) * 4;
		v = edge[rng() % (sizeof(edge) / sizeof(edge[0]))];
		if (at + 8 <= RMAWIN_CTRL_SIZE)
			memcpy(msg + at, &v, rng() % 2 ? 4 : 8);
	} else if (what < 7) {
		for (at = 8; at < len; at++)
			if (rng() % 8 == 0)
				msg[at] = rng();
	} else if (what < 9) {
		at = rng() % (len + 8);
		if (at < RMAWIN_CTRL_SIZE)
			msg[at] ^= 1 << (rng() % 8);
	} else {
		len = rng() % 2 ? len - rng() % (len + 1) : len + rng() % 64;
		if (len > RMAWIN_CTRL_SIZE)
			len = RMAWIN_CTRL_SIZE;
	}
	return len ?: 1;
}

int case_fuzz(uint64_t seed, long count)
{
	uint8_t msg[RMAWIN_CTRL_SIZE];
	long sent = 0, joins = 0, cutoffs = 0;
	struct fuzz_state st;
	struct rg_conn c;
	size_t len;
	int ret;

	rng_state = seed ?: 1;
	SAY("fuzz: seed %llu, %ld messages", (unsigned long long)seed, count);
	while (sent < count) {
		ret = member_join(&c);
		if (ret)
			return SAY("fuzz: join %ld: %s", joins + 1, strerror(-ret)), 1;
		joins++;
		memset(&st, 0, sizeof(st));
		if (getenv("ROGUE_VERBOSE") || joins % 500 == 0)
			SAY("fuzz: join %ld after %ld messages", joins, sent);
		while (sent < count && !c.dead) {
			len = fuzz_mutate(msg, fuzz_base(msg, &st, &c));
			if (getenv("ROGUE_VERBOSE"))
				SAY("fuzz: message %ld: type %u len %zu", sent + 1, msg[0], len);
			if (rg_send_raw(&c, msg, len))
				break;
			sent++;
			rg_poll(&c, 0);
		}
		if (!c.dead) {
			/* the last ones were valid: leave, as a member may */
			rg_close(&c);
			continue;
		}
		cutoffs++;
		rg_close(&c);
	}
	SAY("fuzz: seed %llu: %ld messages sent, %ld connections, %ld cut off",
	    (unsigned long long)seed, sent, joins, cutoffs);
	return 0;
}
