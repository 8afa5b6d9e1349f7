// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: the accumulate family (accumulate, get_accumulate, fetch_and_op,
 * compare_and_swap).
 *
 * One mechanism for all of them: the target's kernel applies the
 * operation on receipt of a control message, under the window's
 * accumulate lock, and answers with an acknowledgment (and the previous
 * values, for the fetching ones).  So every op and type MPI defines works,
 * floats included, the operations are atomic per element against each
 * other whichever rank issues them, and the target process takes no part.
 * RDMA atomics would be faster for 8-byte integer SUM and CAS but cover
 * nothing else, and are not atomic against a CPU applying the rest: one
 * mechanism means no mixing.
 *
 * An operation is cut into fragments of RMAWIN_ACC_FRAG bytes, whole
 * elements each; the request completes when every fragment is answered,
 * or fails when its target does.
 */
#include <linux/slab.h>
#include <linux/highmem.h>
#include <linux/pagemap.h>
#include <linux/uaccess.h>

#include "rmawin.h"

/* Data bytes per message: whole elements of any type, within the buffer. */
#define RMAWIN_ACC_FRAG		448

/* RMAWIN_MSG_ACC payload; the data follows: origin, then compare (CAS). */
struct rmawin_acc_msg {
	u32 win;
	u8 opcode;
	u8 acc_op;
	u8 datatype;
	u8 pad;
	u64 offset;
	u32 len;
	u32 res_off;
};

/* RMAWIN_MSG_ACC_REPLY payload; previous values follow for fetching ops. */
struct rmawin_acc_reply {
	s32 status;
	u32 res_off;
	u32 len;
	u32 pad;
};

static bool rmawin_acc_fetches(u8 opcode)
{
	return opcode != RMAWIN_OP_ACC;
}

/**
 * rmawin_acc_check() - validate an accumulate-family descriptor
 * @op: the descriptor
 *
 * Return: 0; -EINVAL for an op/type pair MPI does not define (BAND on
 * double...), a length that is not whole elements (one, for FETCH_OP and
 * CAS), missing result or compare buffers; -EFAULT for buffers that are
 * not mapped (writable, for results).
 */
int rmawin_acc_check(const struct rmawin_op_desc *op)
{
	u32 size = rmawin_acc_size(op->datatype);
	bool cas = op->opcode == RMAWIN_OP_CAS;
	bool one = op->opcode == RMAWIN_OP_FETCH_OP || cas;

	if (cas ? !size || op->acc_op :
	    !rmawin_acc_valid(op->acc_op, op->datatype))
		return -EINVAL;
	if (!op->len || op->len % size || (one && op->len != size) ||
	    op->len > SZ_16M)
		return -EINVAL;
	if (rmawin_acc_fetches(op->opcode) != !!op->result)
		return -EINVAL;
	if (cas != !!op->compare)
		return -EINVAL;
	if (op->acc_op != RMAWIN_ACC_NO_OP &&
	    fault_in_readable(u64_to_user_ptr(op->origin), op->len))
		return -EFAULT;
	if (op->compare && fault_in_readable(u64_to_user_ptr(op->compare), op->len))
		return -EFAULT;
	if (op->result && fault_in_safe_writeable(u64_to_user_ptr(op->result), op->len))
		return -EFAULT;
	return 0;
}

/* Copy window bytes [off, off + len) to or from @buf, across pages. */
static void rmawin_win_copy(struct rmawin_win *win, u64 off, void *buf, u32 len, bool to_win)
{
	u64 pos = off + offset_in_page(win->base);
	u32 done, n;
	void *kaddr;

	for (done = 0; done < len; done += n, pos += n) {
		n = min_t(u64, len - done, PAGE_SIZE - offset_in_page(pos));
		kaddr = kmap_local_page(win->pages[pos >> PAGE_SHIFT]);
		if (to_win)
			memcpy(kaddr + offset_in_page(pos), buf + done, n);
		else
			memcpy(buf + done, kaddr + offset_in_page(pos), n);
		kunmap_local(kaddr);
	}
}

/*
 * Apply one fragment to the window: @old receives the previous values.
 * @data holds the origin elements (and, for CAS, the compare element
 * after them).  Atomic against every other accumulate on the window.
 */
static void rmawin_acc_apply_win(struct rmawin_win *win, u8 opcode, u8 acc_op, u8 type,
				 u64 off, u32 len, const void *data, void *old)
{
	u64 cur[RMAWIN_ACC_FRAG / sizeof(u64)];
	unsigned long flags;

	spin_lock_irqsave(&win->acc_lock, flags);
	rmawin_win_copy(win, off, cur, len, false);
	memcpy(old, cur, len);
	if (opcode == RMAWIN_OP_CAS) {
		if (!memcmp(cur, data + len, len))
			rmawin_win_copy(win, off, (void *)data, len, true);
	} else if (acc_op != RMAWIN_ACC_NO_OP) {
		rmawin_acc_apply(acc_op, type, cur, data, len / rmawin_acc_size(type));
		rmawin_win_copy(win, off, cur, len, true);
	}
	spin_unlock_irqrestore(&win->acc_lock, flags);
}

/* Origin and compare elements, fragment-sized, from the user. */
static int rmawin_acc_copy_in(const struct rmawin_op_desc *op, void *buf)
{
	if (op->acc_op == RMAWIN_ACC_NO_OP && op->opcode != RMAWIN_OP_CAS)
		memset(buf, 0, op->len);
	else if (copy_from_user(buf, u64_to_user_ptr(op->origin), op->len))
		return -EFAULT;
	if (op->opcode == RMAWIN_OP_CAS &&
	    copy_from_user(buf + op->len, u64_to_user_ptr(op->compare), op->len))
		return -EFAULT;
	return 0;
}

/**
 * rmawin_acc_local() - an accumulate on this rank's own window
 * @op: the descriptor
 * @win: the window
 * @off: byte offset in it
 *
 * Done at once, under the same lock as the peers' accumulates.
 * Return: 0, -EFAULT, -ENOMEM.
 */
int rmawin_acc_local(const struct rmawin_op_desc *op, struct rmawin_win *win, u64 off)
{
	u8 data[2 * RMAWIN_ACC_FRAG], old[RMAWIN_ACC_FRAG] __aligned(8);
	struct rmawin_op_desc frag = *op;
	u64 done;
	u32 n;

	for (done = 0; done < op->len; done += n) {
		n = min_t(u64, op->len - done, RMAWIN_ACC_FRAG);
		frag.len = n;
		frag.origin = op->origin + done;
		if (rmawin_acc_copy_in(&frag, data))
			return -EFAULT;
		rmawin_acc_apply_win(win, op->opcode, op->acc_op, op->datatype, off + done, n,
				     data, old);
		if (op->result && copy_to_user(u64_to_user_ptr(op->result + done), old, n))
			return -EFAULT;
	}
	return 0;
}

/**
 * rmawin_acc_issue() - send an accumulate-family operation to its target
 * @req: the request, with its peer and window, on the window's list
 * @op: the descriptor, checked
 * @off: byte offset in the target's window
 *
 * Context: process context, endpoint lock held; sleeps for send buffers.
 * Return: 0 or a negative errno; the request then completes with it.
 */
int rmawin_acc_issue(struct rmawin_req *req, const struct rmawin_op_desc *op, u64 off)
{
	struct rmawin_group *grp = req->win->ep->group;
	u32 cas = op->opcode == RMAWIN_OP_CAS;
	struct rmawin_acc_msg *m;
	u64 done;
	u32 n;
	int ret;

	req->acc_data = kvmalloc(op->len * (1 + cas), GFP_KERNEL);
	if (rmawin_acc_fetches(op->opcode))
		req->result = kvzalloc(op->len, GFP_KERNEL);
	m = kmalloc(sizeof(*m) + 2 * RMAWIN_ACC_FRAG, GFP_KERNEL);
	if (!req->acc_data || (rmawin_acc_fetches(op->opcode) && !req->result) || !m) {
		ret = -ENOMEM;
		goto out_free;
	}
	req->result_uaddr = u64_to_user_ptr(op->result);
	ret = rmawin_acc_copy_in(op, req->acc_data);
	if (ret)
		goto out_free;
	ret = xa_alloc_irq(&grp->acc_reqs, &req->acc_id, req, xa_limit_32b, GFP_KERNEL);
	if (ret)
		goto out_free;

	m->win = req->win->id;
	m->opcode = op->opcode;
	m->acc_op = op->acc_op;
	m->datatype = op->datatype;
	m->pad = 0;
	for (done = 0; done < op->len && !ret; done += n) {
		n = min_t(u64, op->len - done, RMAWIN_ACC_FRAG);
		m->offset = off + done;
		m->len = n;
		m->res_off = done;
		memcpy(m + 1, req->acc_data + done, n);
		if (cas)
			memcpy((u8 *)(m + 1) + n, req->acc_data + op->len, n);
		atomic_inc(&req->pending);
		ret = rmawin_msg_send(req->peer, RMAWIN_MSG_ACC, req->acc_id, m,
				      sizeof(*m) + n * (1 + cas));
		if (ret)
			atomic_dec(&req->pending);
	}
out_free:
	kfree(m);
	return ret;
}

/**
 * rmawin_acc_recv() - apply a peer's accumulate fragment to our window
 * @peer: the origin
 * @id: its request id, echoed in the reply
 * @payload: struct rmawin_acc_msg and data
 * @len: payload bytes
 *
 * Context: completion (workqueue) context; never waits for the CQ.
 */
void rmawin_acc_recv(struct rmawin_peer *peer, u32 id, const void *payload, u16 len)
{
	const struct rmawin_acc_msg *m = payload;
	struct rmawin_ep *ep = peer->grp->ep;
	struct {
		struct rmawin_acc_reply r;
		u64 old[RMAWIN_ACC_FRAG / sizeof(u64)];
	} rep = {};
	u32 cas, size, n;
	struct rmawin_win *win;
	u64 end;

	if (len < sizeof(*m)) {
		rmawin_peer_fail(peer, -EPROTO);
		return;
	}
	cas = m->opcode == RMAWIN_OP_CAS;
	size = rmawin_acc_size(m->datatype);
	n = m->len;
	rep.r.res_off = m->res_off;
	/* a peer is another kernel running our code, but check all the same */
	if (n > RMAWIN_ACC_FRAG || len < sizeof(*m) + n * (1 + cas) || !size || n % size ||
	    m->opcode < RMAWIN_OP_ACC || m->opcode > RMAWIN_OP_CAS ||
	    (!cas && !rmawin_acc_valid(m->acc_op, m->datatype))) {
		rep.r.status = -EPROTO;
		goto reply;
	}
	xa_lock(&ep->wins);
	win = xa_load(&ep->wins, m->win);
	if (!win)
		rep.r.status = -ENOENT;
	else if (check_add_overflow(m->offset, (u64)n, &end) || end > win->length)
		rep.r.status = -ERANGE;
	else
		rmawin_acc_apply_win(win, m->opcode, m->acc_op, m->datatype, m->offset, n,
				     m + 1, rep.old);
	xa_unlock(&ep->wins);
	if (!rep.r.status && rmawin_acc_fetches(m->opcode))
		rep.r.len = n;
reply:
	if (rmawin_msg_send_async(peer, RMAWIN_MSG_ACC_REPLY, id, &rep,
				  sizeof(rep.r) + rep.r.len))
		rmawin_peer_fail(peer, -ENOMEM);
}

/**
 * rmawin_acc_reply_recv() - the target answered one of our fragments
 * @peer: the target
 * @id: our request id
 * @payload: struct rmawin_acc_reply and previous values
 * @len: payload bytes
 *
 * Context: completion (workqueue) context.
 */
void rmawin_acc_reply_recv(struct rmawin_peer *peer, u32 id, const void *payload, u16 len)
{
	const struct rmawin_acc_reply *r = payload;
	struct rmawin_group *grp = peer->grp;
	struct rmawin_req *req;

	if (len < sizeof(*r) || r->len > len - sizeof(*r)) {
		rmawin_peer_fail(peer, -EPROTO);
		return;
	}
	xa_lock_irq(&grp->acc_reqs);
	req = xa_load(&grp->acc_reqs, id);
	if (req && req->peer == peer && !test_bit(0, &req->finished)) {
		if (r->status && !req->status)
			req->status = r->status;
		if (req->result && r->len && r->res_off <= req->len &&
		    r->len <= req->len - r->res_off)
			memcpy(req->result + r->res_off, r + 1, r->len);
		if (atomic_dec_and_test(&req->pending))
			rmawin_req_finish(req);
	}
	xa_unlock_irq(&grp->acc_reqs);
}

/**
 * rmawin_acc_fail_peer() - fail every accumulate waiting on a dead peer
 * @peer: the peer
 *
 * Context: any.
 */
void rmawin_acc_fail_peer(struct rmawin_peer *peer)
{
	struct rmawin_group *grp = peer->grp;
	struct rmawin_req *req;
	unsigned long id, flags;

	xa_lock_irqsave(&grp->acc_reqs, flags);
	xa_for_each(&grp->acc_reqs, id, req) {
		if (req->peer != peer || test_bit(0, &req->finished))
			continue;
		if (!req->status)
			req->status = peer->error ?: -ECONNRESET;
		/* drop the issuer's bias too if it is done posting */
		rmawin_req_finish(req);
	}
	xa_unlock_irqrestore(&grp->acc_reqs, flags);
}

/**
 * rmawin_acc_release() - free what an accumulate request holds
 * @req: a finished request
 * @copy_out: copy the previous values to the caller's result buffer
 *
 * Context: process context of the window's owner.
 */
void rmawin_acc_release(struct rmawin_req *req, bool copy_out)
{
	struct rmawin_group *grp = req->win->ep->group;

	/* ids start at 1: 0 means the request never got one */
	if (req->acc_id)
		xa_erase_irq(&grp->acc_reqs, req->acc_id);
	if (copy_out && !req->status && req->result &&
	    copy_to_user(req->result_uaddr, req->result, req->len))
		req->status = -EFAULT;
	kvfree(req->acc_data);
	kvfree(req->result);
	/* released once: the request's own release finds nothing left */
	req->acc_id = 0;
	req->acc_data = NULL;
	req->result = NULL;
}
