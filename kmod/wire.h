/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rmawin: the wire protocol between the kernels of a group, in one place.
 *
 * Everything another host sends us is described here: the rdma_cm private
 * data of the connection handshake, the transcript both ends MAC, the
 * control message header and every control message payload.  Fixed-width
 * fields in an explicit byte order (big-endian in the handshake, as the
 * CM's own headers are; little-endian in control messages), no implicit
 * padding, sizes frozen below.  The element data of the accumulate family
 * travels in the hosts' own byte order: the handshake refuses a peer of the
 * other one.
 *
 * The header is shared with userspace test peers (selftests/rmawin/rogue*.c
 * speak this protocol), so it needs only <linux/types.h>.
 */
#ifndef RMAWIN_WIRE_H
#define RMAWIN_WIRE_H

#include <linux/types.h>

#ifdef __KERNEL__
#include <linux/build_bug.h>
#else
#include <assert.h>
#endif

/* ---- Connection handshake --------------------------------------------- */

#define RMAWIN_CM_MAGIC		0x726d6177	/* "rmaw" */
#define RMAWIN_CM_VERSION	3
#define RMAWIN_NONCE_LEN	16
#define RMAWIN_MAC_LEN		32		/* HMAC-SHA256 */
#define RMAWIN_GROUP_ID_LEN	32		/* SHA-256 */
/* The connect request carries this much of the group id. */
#define RMAWIN_GROUP_TAG_LEN	16
#define RMAWIN_KEY_MIN		16
#define RMAWIN_KEY_MAX		64		/* one HMAC-SHA256 block */

/* rmawin_wire_req.order: the host byte order of the element data */
#define RMAWIN_ORDER_LITTLE	1
#define RMAWIN_ORDER_BIG	2

/**
 * struct rmawin_wire_req - private data of a connection request
 * @magic: RMAWIN_CM_MAGIC
 * @version: RMAWIN_CM_VERSION
 * @order: RMAWIN_ORDER_LITTLE or RMAWIN_ORDER_BIG
 * @pad: zero
 * @rank: the initiator's rank (always above the responder's)
 * @nranks: group size
 * @group: the first bytes of the group id (not secret: it tells two
 *	groups on the same ports apart before any MAC is computed)
 * @nonce: the initiator's fresh random nonce
 *
 * 48 bytes: InfiniBand's REQ leaves 56 to an rdma_cm user.
 */
struct rmawin_wire_req {
	__be32 magic;
	__u8 version;
	__u8 order;
	__u8 pad[2];
	__be32 rank;
	__be32 nranks;
	__u8 group[RMAWIN_GROUP_TAG_LEN];
	__u8 nonce[RMAWIN_NONCE_LEN];
};

/**
 * struct rmawin_wire_rep - private data of the responder's accept
 * @magic: RMAWIN_CM_MAGIC
 * @version: RMAWIN_CM_VERSION
 * @pad: zero
 * @rank: the responder's rank
 * @nranks: group size
 * @nonce: the responder's fresh random nonce
 * @mac: HMAC(job key, transcript with label "rmawin-R") - the responder's
 *	proof; the initiator's goes in the first control message (AUTH)
 */
struct rmawin_wire_rep {
	__be32 magic;
	__u8 version;
	__u8 pad[3];
	__be32 rank;
	__be32 nranks;
	__u8 nonce[RMAWIN_NONCE_LEN];
	__u8 mac[RMAWIN_MAC_LEN];
};

#define RMAWIN_LABEL_LEN	8
#define RMAWIN_LABEL_INIT	"rmawin-I"
#define RMAWIN_LABEL_RESP	"rmawin-R"

/**
 * struct rmawin_wire_transcript - what each end's MAC covers
 * @label: RMAWIN_LABEL_RESP for the responder's proof, RMAWIN_LABEL_INIT
 *	for the initiator's: neither can be reflected as the other
 * @group: the full group id: SHA-256 of the group's shape
 * @nranks: group size
 * @init_rank: the initiator's rank
 * @resp_rank: the responder's rank
 * @init_qpn: the initiator's queue pair number
 * @resp_qpn: the responder's queue pair number
 * @init_nonce: the initiator's nonce
 * @resp_nonce: the responder's nonce
 *
 * Fresh nonces from both sides defeat replay; the queue pair numbers of
 * both ends bind the proof to this one connection, so that a man in the
 * middle cannot relay a proof made for its own connection to another.
 */
struct rmawin_wire_transcript {
	__u8 label[RMAWIN_LABEL_LEN];
	__u8 group[RMAWIN_GROUP_ID_LEN];
	__be32 nranks;
	__be32 init_rank;
	__be32 resp_rank;
	__be32 init_qpn;
	__be32 resp_qpn;
	__u8 pad[4];
	__u8 init_nonce[RMAWIN_NONCE_LEN];
	__u8 resp_nonce[RMAWIN_NONCE_LEN];
};

/**
 * struct rmawin_wire_group_addr - one rank's address, as the group id hashes it
 * @family: AF_INET or AF_INET6
 * @port: the port
 * @scope_id: IPv6 scope, else 0
 * @addr: the address, IPv4 in the first 4 bytes and zeroes after
 *
 * The group id is SHA-256 over "rmawin-group-v2", nranks (__be32) and
 * then one of these per rank.
 */
struct rmawin_wire_group_addr {
	__be16 family;
	__be16 port;
	__be32 scope_id;
	__u8 addr[16];
};

#define RMAWIN_GROUP_ID_PREFIX	"rmawin-group-v2"

/* ---- Control messages ------------------------------------------------- */

#define RMAWIN_WIRE_VERSION	8
/* Bytes per control message buffer, header included. */
#define RMAWIN_CTRL_SIZE	512

/**
 * enum rmawin_msg_type - control message types
 * @RMAWIN_MSG_AUTH: the initiator's proof; the first message on a
 *	connection and the only one accepted before it
 * @RMAWIN_MSG_BARRIER: one round of a dissemination barrier (@arg: round)
 * @RMAWIN_MSG_WIN_DESC: a fragment of a window's descriptor (@arg: window)
 * @RMAWIN_MSG_ACC: a fragment of an accumulate (@arg: request id)
 * @RMAWIN_MSG_ACC_REPLY: its answer (@arg: request id)
 * @RMAWIN_MSG_LOCK: lock request (@arg: window)
 * @RMAWIN_MSG_LOCK_GRANT: lock granted (@arg: window)
 * @RMAWIN_MSG_UNLOCK: lock released (@arg: window)
 * @RMAWIN_MSG_POST: exposure epoch opened to the receiver (@arg: window)
 * @RMAWIN_MSG_COMPLETE: access epoch to the receiver over (@arg: window);
 *	its payload, if any, is the epoch's one operation (struct rmawin_wire_acc)
 * @RMAWIN_MSG_NOTIFY: a notified put's data has landed (@arg: 0)
 * @RMAWIN_MSG_WELCOME: the responder took the initiator's proof; the
 *	responder's first message, the only one the initiator accepts before it
 * @RMAWIN_MSG_ACC_BULK: a chunk of a plain accumulate (@arg: request id),
 *	as struct rmawin_wire_acc with no data: the chunk's elements are in
 *	the sender's slot of the receiver's inbox, written just before on the
 *	same queue pair; answered as an RMAWIN_MSG_ACC is
 * @RMAWIN_MSG_ACC_QUIET: a fragment of an accumulate that is not answered
 *	on its own (@arg: request id), as struct rmawin_wire_acc: the reply
 *	to the request's next fragment sent as RMAWIN_MSG_ACC answers it too.
 *	Only for RMAWIN_OP_ACC (nothing to send back) and never an epoch
 * @RMAWIN_MSG_LAST: first unused type
 */
enum rmawin_msg_type {
	RMAWIN_MSG_AUTH = 1,
	RMAWIN_MSG_BARRIER,
	RMAWIN_MSG_WIN_DESC,
	RMAWIN_MSG_ACC,
	RMAWIN_MSG_ACC_REPLY,
	RMAWIN_MSG_LOCK,
	RMAWIN_MSG_LOCK_GRANT,
	RMAWIN_MSG_UNLOCK,
	RMAWIN_MSG_POST,
	RMAWIN_MSG_COMPLETE,
	RMAWIN_MSG_NOTIFY,
	RMAWIN_MSG_WELCOME,
	RMAWIN_MSG_ACC_QUIET,
	RMAWIN_MSG_ACC_BULK,
	RMAWIN_MSG_LAST,
};

/**
 * struct rmawin_wire_hdr - header of every control message
 * @type: enum rmawin_msg_type
 * @version: RMAWIN_WIRE_VERSION
 * @len: payload bytes after the header; the message is exactly this long
 * @arg: type-specific, see enum rmawin_msg_type
 */
struct rmawin_wire_hdr {
	__u8 type;
	__u8 version;
	__le16 len;
	__le32 arg;
};

#define RMAWIN_MSG_MAX_PAYLOAD	(RMAWIN_CTRL_SIZE - sizeof(struct rmawin_wire_hdr))

/**
 * struct rmawin_wire_auth - RMAWIN_MSG_AUTH
 * @mac: HMAC(job key, transcript with label "rmawin-I")
 */
struct rmawin_wire_auth {
	__u8 mac[RMAWIN_MAC_LEN];
};

/**
 * struct rmawin_wire_mr - one registered region of a window
 * @iova: where it starts, as the owner's device knows it
 * @rkey: its remote key
 * @pad: zero
 */
struct rmawin_wire_mr {
	__le64 iova;
	__le32 rkey;
	__le32 pad;
};

/**
 * struct rmawin_wire_desc - RMAWIN_MSG_WIN_DESC, one fragment
 * @length: window bytes
 * @chunk: bytes each region covers (the first @page_off less)
 * @disp_unit: the owner's displacement unit, >= 1
 * @page_off: offset of the window's start within the first region's block
 * @nmrs: regions in all: exactly DIV_ROUND_UP(@page_off + @length, @chunk)
 * @first: index of this fragment's first region: fragments come in order
 * @count: regions in this fragment
 * @status: 0, or the negative errno of a creation that failed at the
 *	owner (then @nmrs and @count are 0)
 * @flags: RMAWIN_WIRE_DESC_INBOX or 0 (and 0 with a @status)
 * @inbox_rkey: with RMAWIN_WIRE_DESC_INBOX, the remote key of the owner's
 *	inbox (bulk.c), else 0
 * @inbox: with RMAWIN_WIRE_DESC_INBOX, where the inbox starts, as the
 *	owner's device knows it (rank r's chunk rmawin_bulk_chunk() * r bytes
 *	on), else 0
 * @mr: @count regions
 *
 * Every fragment repeats the first's fields but @first, @count and @mr.
 */
struct rmawin_wire_desc {
	__le64 length;
	__le64 chunk;
	__le32 disp_unit;
	__le32 page_off;
	__le32 nmrs;
	__le32 first;
	__le32 count;
	__le32 status;
	__le32 flags;
	__le32 inbox_rkey;
	__le64 inbox;
	struct rmawin_wire_mr mr[];
};

/* rmawin_wire_desc.flags: the owner has an inbox for large accumulates */
#define RMAWIN_WIRE_DESC_INBOX	0x1

#define RMAWIN_DESC_PER_MSG \
	((RMAWIN_MSG_MAX_PAYLOAD - sizeof(struct rmawin_wire_desc)) / \
	 sizeof(struct rmawin_wire_mr))

/* Data bytes per accumulate fragment: whole elements of any type. */
#define RMAWIN_ACC_FRAG		448
/*
 * Bytes of one rank's chunk of an inbox (bulk.c), whole pages: the most,
 * halved while the inbox of a group of @nranks would hold more than
 * RMAWIN_BULK_INBOX bytes, down to the least.  Both ends of a connection
 * know the group's size, so both know the chunk.
 */
#define RMAWIN_BULK_CHUNK_MAX	65536
#define RMAWIN_BULK_CHUNK_MIN	8192
#define RMAWIN_BULK_INBOX	524288

static inline __u32 rmawin_bulk_chunk(__u32 nranks)
{
	__u32 chunk = RMAWIN_BULK_CHUNK_MAX;

	while (chunk > RMAWIN_BULK_CHUNK_MIN && (__u64)chunk * nranks > RMAWIN_BULK_INBOX)
		chunk /= 2;
	return chunk;
}

/**
 * struct rmawin_wire_acc - RMAWIN_MSG_ACC, one fragment
 * @win: the target window
 * @opcode: RMAWIN_OP_ACC .. RMAWIN_OP_CAS
 * @acc_op: enum rmawin_acc_op (0 for CAS)
 * @datatype: enum rmawin_datatype
 * @epoch: 0, or RMAWIN_WIRE_EPOCH_*: the operation is a whole lock epoch
 *	of its own, in this one fragment (@res_off 0): the target takes its
 *	window's lock in that mode if it can grant it at once, applies the
 *	fragment and releases the lock; else it applies nothing and answers
 *	-EAGAIN
 * @offset: byte offset in the window
 * @len: data bytes, whole elements, at most RMAWIN_ACC_FRAG
 * @res_off: the fragment's offset in the operation, echoed in the reply
 * @data: @len bytes of origin elements, then (CAS) @len bytes to compare
 */
struct rmawin_wire_acc {
	__le32 win;
	__u8 opcode;
	__u8 acc_op;
	__u8 datatype;
	__u8 epoch;
	__le64 offset;
	__le32 len;
	__le32 res_off;
	__u8 data[];
};

/* rmawin_wire_acc.epoch: the lock type + 1 */
#define RMAWIN_WIRE_EPOCH_SHARED	1
#define RMAWIN_WIRE_EPOCH_EXCLUSIVE	2

/**
 * struct rmawin_wire_acc_reply - RMAWIN_MSG_ACC_REPLY
 * @status: 0 or a negative errno (as __le32)
 * @res_off: the fragment's offset, as the request said; the reply answers
 *	the request's RMAWIN_MSG_ACC_QUIET fragments before it too
 * @len: bytes of previous values after the header (fetching ops), else 0
 * @pad: zero
 * @old: @len bytes
 */
struct rmawin_wire_acc_reply {
	__le32 status;
	__le32 res_off;
	__le32 len;
	__le32 pad;
	__u8 old[];
};

/**
 * struct rmawin_wire_lock - RMAWIN_MSG_LOCK and RMAWIN_MSG_UNLOCK
 * @type: RMAWIN_LOCK_TYPE_SHARED or RMAWIN_LOCK_TYPE_EXCLUSIVE
 * @pad: zero
 */
struct rmawin_wire_lock {
	__le32 type;
	__le32 pad;
};

/**
 * struct rmawin_wire_notify - RMAWIN_MSG_NOTIFY
 * @win: the window the data went to
 * @tag: the sender's tag
 * @target_disp: where, in the window's disp_units
 * @len: bytes
 */
struct rmawin_wire_notify {
	__le32 win;
	__le32 tag;
	__le64 target_disp;
	__le64 len;
};

static_assert(sizeof(struct rmawin_wire_req) == 48, "rmawin_wire_req");
static_assert(sizeof(struct rmawin_wire_rep) == 64, "rmawin_wire_rep");
static_assert(sizeof(struct rmawin_wire_transcript) == 96, "rmawin_wire_transcript");
static_assert(sizeof(struct rmawin_wire_group_addr) == 24, "rmawin_wire_group_addr");
static_assert(sizeof(struct rmawin_wire_hdr) == 8, "rmawin_wire_hdr");
static_assert(sizeof(struct rmawin_wire_auth) == 32, "rmawin_wire_auth");
static_assert(sizeof(struct rmawin_wire_mr) == 16, "rmawin_wire_mr");
static_assert(sizeof(struct rmawin_wire_desc) == 56, "rmawin_wire_desc");
static_assert(sizeof(struct rmawin_wire_acc) == 24, "rmawin_wire_acc");
static_assert(sizeof(struct rmawin_wire_acc_reply) == 16, "rmawin_wire_acc_reply");
static_assert(sizeof(struct rmawin_wire_lock) == 8, "rmawin_wire_lock");
static_assert(sizeof(struct rmawin_wire_notify) == 24, "rmawin_wire_notify");
/* a whole fragment fits one message (CAS carries one element, twice) */
static_assert(sizeof(struct rmawin_wire_acc) + RMAWIN_ACC_FRAG <= RMAWIN_MSG_MAX_PAYLOAD,
	      "accumulate fragment");
static_assert(sizeof(struct rmawin_wire_acc_reply) + RMAWIN_ACC_FRAG <= RMAWIN_MSG_MAX_PAYLOAD,
	      "accumulate reply");

#endif /* RMAWIN_WIRE_H */
