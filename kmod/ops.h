/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmawin: what the operations' table shares with the files its entries
 * point into (ops.c, rma.c, acc.c, atomic.c) and nobody else needs.
 */
#ifndef RMAWIN_OPS_H
#define RMAWIN_OPS_H

#include "rmawin.h"

/**
 * struct rmawin_target - where a checked operation lands
 * @win: the window
 * @remote: the target rank's descriptor of it; NULL for this rank
 * @off: byte offset in the target's window
 * @ring: from the poller: never pin
 * @atomic: through the device's atomics (rmawin_atomic_check()); then
 *	@remote is set for this rank's own window too
 * @epoch: 0, or RMAWIN_WIRE_EPOCH_*: the operation is a whole lock epoch
 *	(RMAWIN_OP_F_EPOCH_SHARED or _EXCLUSIVE, rmawin_epoch_op_check())
 * @carried: it ends its PSCW access epoch, in the COMPLETE message
 *	(RMAWIN_OP_F_EPOCH_COMPLETE, rmawin_pscw_op_check())
 */
struct rmawin_target {
	struct rmawin_win *win;
	const struct rmawin_remote *remote;
	u64 off;
	bool ring;
	bool atomic;
	bool carried;
	u8 epoch;
};

/**
 * struct rmawin_op_def - what one opcode is (ops.c's table, after
 * io_uring's io_issue_defs); the operation is dispatched through it once
 * @acc: accumulate family: acc_op, datatype, result and compare are its
 * @tag: carries a notification tag
 * @check: its own fields, after the common ones and the target range
 * @local: on this rank's own window, done at once
 * @prep: what a remote issue takes before it is posted; NULL for nothing
 * @issue: post it to its target
 * @release: let go of what @prep and @issue took, results copied out
 *	first if asked (context: the window owner's process)
 */
struct rmawin_op_def {
	bool acc;
	bool tag;
	int (*check)(const struct rmawin_op_desc *op);
	int (*local)(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
		     const struct rmawin_target *t);
	int (*prep)(struct rmawin_req *req, const struct rmawin_op_desc *op,
		    const struct rmawin_target *t);
	int (*issue)(struct rmawin_req *req, const struct rmawin_op_desc *op,
		     const struct rmawin_target *t);
	void (*release)(struct rmawin_req *req, bool copy_out);
};

/* acc.c: the accumulate family's entries */
int rmawin_acc_check(const struct rmawin_op_desc *op);
int rmawin_acc_local(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
		     const struct rmawin_target *t);
int rmawin_acc_issue(struct rmawin_req *req, const struct rmawin_op_desc *op,
		     const struct rmawin_target *t);
void rmawin_acc_release(struct rmawin_req *req, bool copy_out);
int rmawin_acc_copy_in(const struct rmawin_op_desc *op, void *buf);
int rmawin_acc_bufs(struct rmawin_req *req, const struct rmawin_op_desc *op);
void rmawin_acc_apply_win(struct rmawin_win *win, u8 opcode, u8 acc_op, u8 type,
			  u64 off, u32 len, const void *data, void *old);
int rmawin_acc_send_part(struct rmawin_req *req, u8 type, struct rmawin_wire_acc *m,
			 u32 len, u64 done, u32 n);
bool rmawin_acc_carried_ok(const struct rmawin_wire_acc *m, u16 len,
			   const struct rmawin_win *win);

/* pscw.c: an operation carried by its epoch's COMPLETE */
int rmawin_pscw_op_check(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
			 struct rmawin_target *t);
int rmawin_pscw_op_issue(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
			 const struct rmawin_target *t);

/* bulk.c: plain accumulates through the target's inbox */
bool rmawin_bulk_wanted(const struct rmawin_op_desc *op, const struct rmawin_target *t);
int rmawin_bulk_issue(struct rmawin_req *req, const struct rmawin_target *t,
		      struct rmawin_wire_acc *m);
void rmawin_bulk_answered(struct rmawin_peer *peer);

static inline bool rmawin_acc_fetches(u8 opcode)
{
	return opcode != RMAWIN_OP_ACC;
}

/* rma.c: puts and gets' entries */
int rmawin_rma_check(const struct rmawin_op_desc *op);
int rmawin_rma_local(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
		     const struct rmawin_target *t);
int rmawin_put_notify_local(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
			    const struct rmawin_target *t);
int rmawin_rma_prep(struct rmawin_req *req, const struct rmawin_op_desc *op,
		    const struct rmawin_target *t);
int rmawin_rma_issue(struct rmawin_req *req, const struct rmawin_op_desc *op,
		     const struct rmawin_target *t);
int rmawin_put_notify_issue(struct rmawin_req *req, const struct rmawin_op_desc *op,
			    const struct rmawin_target *t);
void rmawin_rma_release(struct rmawin_req *req, bool copy_out);

/* rma.c: what the accumulate family shares with puts and gets */
int rmawin_remote_addr(const struct rmawin_remote *r, u64 off, u64 *addr, u32 *rkey,
		       u64 *room);
bool rmawin_sq_room(struct rmawin_peer *peer);
int rmawin_peer_err(struct rmawin_peer *peer);
int rmawin_user_writable(void __user *p, u64 len);
int rmawin_bounce_take(struct rmawin_ep *ep, struct rmawin_peer *peer);

/* atomic.c: the accumulate family on same_op windows */
int rmawin_atomic_check(struct rmawin_target *t, const struct rmawin_op_desc *op);
int rmawin_atomic_issue(struct rmawin_req *req, const struct rmawin_op_desc *op,
			const struct rmawin_target *t);
void rmawin_atomic_release(struct rmawin_req *req);
bool rmawin_atomic_would_wait(struct rmawin_ep *ep, const struct rmawin_op_desc *op);

#endif /* RMAWIN_OPS_H */
