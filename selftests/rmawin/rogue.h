/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rogue peer's connection layer: a userspace rmawin group member made
 * of librdmacm and libibverbs alone, speaking the wire protocol of
 * kmod/wire.h, so that the tests can make it misbehave in every way the
 * module must survive.  See rogue.c, rogue_member.c and rogue_fuzz.c for
 * the attacks.
 */
#ifndef RMAWIN_ROGUE_H
#define RMAWIN_ROGUE_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

#include "../../kmod/wire.h"

#define RG_MAX_RANKS	16
#define RG_RX_SLOTS	64
#define RG_TX_SLOTS	64
#define RG_RDMA_BYTES	65536
#define RG_MAX_MRS	16

/* What the rogue learned of a victim's window from its descriptor. */
struct rg_win {
	uint64_t length;
	uint64_t chunk;
	uint32_t disp_unit;
	uint32_t page_off;
	uint32_t nmrs;
	uint32_t got;
	bool done;
	struct {
		uint64_t iova;
		uint32_t rkey;
	} mr[RG_MAX_MRS];
};

/* One connection to one victim rank. */
struct rg_conn {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;		/* rx slots, tx slots, then the RDMA buffer */
	int peer;		/* the victim's rank */
	uint8_t nonce[RMAWIN_NONCE_LEN];
	uint8_t rnonce[RMAWIN_NONCE_LEN];
	uint32_t rqpn;
	uint8_t rep[sizeof(struct rmawin_wire_rep)];	/* the reply as it came */
	unsigned int tx_next;
	unsigned long nrecv;	/* messages received from the victim */
	unsigned long nbarrier;	/* BARRIER messages among them */
	unsigned long ngrant;	/* LOCK_GRANTs */
	unsigned long nreply;	/* ACC_REPLYs */
	unsigned long nwelcome;	/* WELCOMEs */
	unsigned long npost;	/* POSTs */
	unsigned long nacc;	/* ACC fragments (answered ones) */
	uint32_t acc_arg;	/* the last one's request id */
	uint32_t acc_res_off;	/* and its offset in the operation */
	bool got_auth;		/* a responder's: the initiator's proof came */
	uint8_t auth[RMAWIN_MAC_LEN];	/* what it said */
	struct rg_win win[4];	/* by window handle */
	bool dead;		/* a send or receive failed, or the CM said so */
	bool no_repost;		/* messages taken are not replaced by new receives */
	bool last_at_barrier;	/* no_repost from the first barrier on, its own buffer too */
};

/* The group as the rogue sees it. */
struct rg_group {
	int nranks;
	int rank;		/* the rogue's own rank */
	struct sockaddr_in addrs[RG_MAX_RANKS];
	uint8_t id[RMAWIN_GROUP_ID_LEN];
	uint8_t key[RMAWIN_KEY_MAX];
	size_t key_len;
};

int rg_group_init(struct rg_group *g, const char *addrs, int rank);
void rg_mac(const struct rg_group *g, const uint8_t *key, size_t key_len, const char *label,
	    int init_rank, int resp_rank, uint32_t init_qpn, uint32_t resp_qpn,
	    const uint8_t *init_nonce, const uint8_t *resp_nonce, uint8_t *mac);

/* How rg_connect() treats the handshake. */
enum rg_auth {
	RG_AUTH_HONEST,		/* check the reply's proof, send ours */
	RG_AUTH_NONE,		/* send no proof at all */
	RG_AUTH_GARBAGE,	/* send random bytes as the proof */
	RG_AUTH_WRONG_KEY,	/* prove with another key */
	RG_AUTH_GIVEN,		/* send the proof in rg_connect()'s @mac */
	RG_AUTH_BLIND,		/* send our honest proof without checking theirs */
	RG_AUTH_WELCOME,	/* send a responder's welcome in place of a proof */
};

/* The rogue as a responder: listening at its own rank's address. */
struct rg_listener {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
};

/*
 * The local ACK timeout exponent of the next connections (4.096 us << it):
 * 12 (17 ms, three retries) notices a victim that cut us off at once;
 * cases that must never be cut off raise it, so that a slow victim (the
 * debug kernel across two emulated guests) is not mistaken for one.
 */
extern uint8_t rg_ack_timeout;

int rg_connect(struct rg_conn *c, const struct rg_group *g, int peer, enum rg_auth auth,
	       const uint8_t *nonce, const uint8_t *mac, int timeout_ms);
void rg_close(struct rg_conn *c);
int rg_listen(struct rg_listener *l, const struct rg_group *g);
void rg_unlisten(struct rg_listener *l);
int rg_accept(struct rg_conn *c, struct rg_listener *l, const struct rg_group *g,
	      int timeout_ms);
int rg_send(struct rg_conn *c, uint8_t type, uint32_t arg, const void *payload, size_t len);
int rg_send_raw(struct rg_conn *c, const void *msg, size_t len);
int rg_poll(struct rg_conn *c, int timeout_ms);
int rg_rdma(struct rg_conn *c, bool write, uint64_t iova, uint32_t rkey, size_t len);
int rg_write_imm(struct rg_conn *c, uint64_t iova, uint32_t rkey, size_t len);
uint8_t *rg_rdma_buf(struct rg_conn *c);
int rg_cm_event(struct rg_conn *c, int timeout_ms);
int rg_win_desc(struct rg_conn *c, uint32_t win);
int rg_win_desc_len(struct rg_conn *c, uint32_t win, uint64_t length);
int rg_wait_desc(struct rg_conn *c, uint32_t win, int timeout_ms);

#endif /* RMAWIN_ROGUE_H */
