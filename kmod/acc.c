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
 * or fails when its target does.  At most RMAWIN_ACC_WINDOW fragments to
 * one target are unanswered at a time, so that a target never holds more
 * than that many of our replies; the target answers in order, and a
 * reply that does not answer the next fragment is a protocol error, as is
 * a fragment no honest origin sends (a range outside the window, a window
 * that does not exist, an op and type MPI does not define).
 *
 * A plain accumulate sends nothing back but a status, which is 0 unless
 * the fragment is a whole lock epoch (one fragment, always answered).  So
 * its fragments are answered in runs of RMAWIN_ACC_ANSWER_EVERY: all but
 * the last of a run go as RMAWIN_MSG_ACC_QUIET, which the target applies
 * without a reply, and the reply to the last answers the run.  On a
 * device that acknowledges every message, that takes a large
 * accumulate's packets from four a fragment to two.  The fetching ones
 * get their previous values back fragment by fragment, as before.
 */
#include <linux/slab.h>
#include <linux/highmem.h>
#include <linux/pagemap.h>
#include <linux/uaccess.h>

#include "ops.h"

/**
 * rmawin_acc_bufs() - the buffers of an accumulate-family request
 * @req: the request
 * @op: its descriptor, checked
 *
 * @req->acc.data gets room for the origin elements (and those to compare,
 * for CAS), @req->acc.result for the previous values of a fetching
 * operation, zeroed.  An operation of at most RMAWIN_ACC_INLINE bytes (a
 * fetch_and_op, a compare_and_swap) uses the request's own @acc.inl, the
 * rest is allocated (and charged); rmawin_acc_release() frees it.
 *
 * Return: 0 or -ENOMEM.
 */
int rmawin_acc_bufs(struct rmawin_req *req, const struct rmawin_op_desc *op)
{
	bool fetches = rmawin_acc_fetches(op->opcode);
	u32 cas = op->opcode == RMAWIN_OP_CAS;

	BUILD_BUG_ON(sizeof(req->acc.inl) < 3 * RMAWIN_ACC_INLINE);
	if (op->len <= RMAWIN_ACC_INLINE) {
		req->acc.data = req->acc.inl;
		if (fetches) {
			req->acc.result = (u8 *)req->acc.inl + 2 * RMAWIN_ACC_INLINE;
			memset(req->acc.result, 0, op->len);
		}
		return 0;
	}
	req->acc.data = kvmalloc(op->len * (1 + cas), GFP_KERNEL_ACCOUNT);
	if (fetches)
		req->acc.result = kvzalloc(op->len, GFP_KERNEL_ACCOUNT);
	if (!req->acc.data || (fetches && !req->acc.result))
		return -ENOMEM;
	return 0;
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
	return op->result ? rmawin_user_writable(u64_to_user_ptr(op->result), op->len) : 0;
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

/* Bytes of the window that rmawin_acc_apply_win() holds on its stack at once */
#define RMAWIN_ACC_STEP		64
static_assert(RMAWIN_ACC_STEP % sizeof(u64) == 0);

/**
 * rmawin_acc_apply_win() - apply one fragment to a window
 * @win: the window
 * @opcode: RMAWIN_OP_ACC .. RMAWIN_OP_CAS
 * @acc_op: enum rmawin_acc_op
 * @type: enum rmawin_datatype
 * @off: byte offset in the window, in range
 * @len: bytes, whole elements, at most RMAWIN_ACC_FRAG
 * @data: the origin elements (and, for CAS, the compare element after them)
 * @old: receives the previous values, or NULL for an accumulate that
 *	does not fetch them
 *
 * Atomic against every other accumulate on the window: the whole fragment
 * under its lock, taken RMAWIN_ACC_STEP bytes at a time.
 */
void rmawin_acc_apply_win(struct rmawin_win *win, u8 opcode, u8 acc_op, u8 type,
			  u64 off, u32 len, const void *data, void *old)
{
	u64 cur[RMAWIN_ACC_STEP / sizeof(u64)];
	u32 size = rmawin_acc_size(type), done, n;
	unsigned long flags;

	spin_lock_irqsave(&win->acc_lock, flags);
	for (done = 0; done < len; done += n) {
		n = min_t(u32, len - done, sizeof(cur));
		rmawin_win_copy(win, off + done, cur, n, false);
		if (old)
			memcpy(old + done, cur, n);
		if (opcode == RMAWIN_OP_CAS) {
			/* one element: @len is at most 8 bytes */
			if (!memcmp(cur, data + len, len))
				rmawin_win_copy(win, off, (void *)data, len, true);
		} else if (acc_op != RMAWIN_ACC_NO_OP) {
			rmawin_acc_apply(acc_op, type, cur, data + done, n / size);
			rmawin_win_copy(win, off + done, cur, n, true);
		}
	}
	spin_unlock_irqrestore(&win->acc_lock, flags);
}

/* Origin and compare elements, @op->len bytes each, from the user. */
int rmawin_acc_copy_in(const struct rmawin_op_desc *op, void *buf)
{
	if (op->acc_op == RMAWIN_ACC_NO_OP && op->opcode != RMAWIN_OP_CAS)
		memset(buf, 0, op->len);
	else if (rmawin_copy_from_user(buf, u64_to_user_ptr(op->origin), op->len))
		return -EFAULT;
	if (op->opcode == RMAWIN_OP_CAS &&
	    rmawin_copy_from_user(buf + op->len, u64_to_user_ptr(op->compare), op->len))
		return -EFAULT;
	return 0;
}

/*
 * Bytes of a local accumulate taken in one step: its origin (and compare)
 * elements and the old ones live on the stack meanwhile.  Whole elements of
 * every type; MPI's atomicity is per element, so the steps need no more.
 */
#define RMAWIN_ACC_LOCAL_STEP	128
static_assert(RMAWIN_ACC_LOCAL_STEP % sizeof(u64) == 0);

/**
 * rmawin_acc_local() - an accumulate on this rank's own window
 * @ep: the endpoint
 * @op: the descriptor
 * @t: its window and byte offset there
 *
 * Done at once, under the same lock as the peers' accumulates, in steps of
 * RMAWIN_ACC_LOCAL_STEP bytes.
 * Return: 0, -EFAULT.
 */
int rmawin_acc_local(struct rmawin_ep *ep, const struct rmawin_op_desc *op,
		     const struct rmawin_target *t)
{
	struct rmawin_win *win = t->win;
	u64 off = t->off;
	u8 data[2 * RMAWIN_ACC_LOCAL_STEP] __aligned(8);
	u8 old[RMAWIN_ACC_LOCAL_STEP] __aligned(8);
	struct rmawin_op_desc frag = *op;
	u64 done;
	u32 n;

	for (done = 0; done < op->len; done += n) {
		n = min_t(u64, op->len - done, RMAWIN_ACC_LOCAL_STEP);
		frag.len = n;
		frag.origin = op->origin + done;
		if (rmawin_acc_copy_in(&frag, data))
			return -EFAULT;
		rmawin_acc_apply_win(win, op->opcode, op->acc_op, op->datatype, off + done, n,
				     data, op->result ? old : NULL);
		if (op->result && copy_to_user(u64_to_user_ptr(op->result + done), old, n))
			return -EFAULT;
	}
	return 0;
}

static bool rmawin_acc_room(struct rmawin_peer *peer)
{
	return atomic_read(&peer->acc_out) < RMAWIN_ACC_WINDOW || rmawin_peer_err(peer);
}

/* Bytes of each of @req's fragments but the last: chunks through an inbox */
static u32 rmawin_acc_frag(const struct rmawin_req *req)
{
	return req->acc.bulk ? rmawin_bulk_chunk(req->win->ep->group->nranks) : RMAWIN_ACC_FRAG;
}

/*
 * The offset of the fragment whose reply answers the fragment at @off:
 * @off itself for a fetching operation or a chunk, else the last of its
 * run of RMAWIN_ACC_ANSWER_EVERY (or the operation's last fragment).
 */
static u64 rmawin_acc_answered_at(const struct rmawin_req *req, u64 off)
{
	u64 nfrags, k;

	if (req->acc.result || req->acc.bulk)
		return off;
	nfrags = DIV_ROUND_UP_ULL(req->len, RMAWIN_ACC_FRAG);
	k = div_u64(off, RMAWIN_ACC_FRAG);
	k = min(k - k % RMAWIN_ACC_ANSWER_EVERY + RMAWIN_ACC_ANSWER_EVERY, nfrags) - 1;
	return k * RMAWIN_ACC_FRAG;
}

/**
 * rmawin_acc_send_part() - send one part (fragment or chunk) of a request
 * @req: the request
 * @type: RMAWIN_MSG_ACC, _ACC_QUIET or _ACC_BULK
 * @m: the message, its part's fields filled in
 * @len: its bytes
 * @done: where the part starts in the request
 * @n: the part's bytes of the request
 *
 * The request counts the part sent and pending, and its target one more
 * fragment unanswered, before the message goes (its reply may beat our
 * return); undone if it could not be sent.
 *
 * Context: process context; may sleep for a send buffer.
 * Return: 0 or the error of rmawin_msg_send().
 */
int rmawin_acc_send_part(struct rmawin_req *req, u8 type, struct rmawin_wire_acc *m,
			 u32 len, u64 done, u32 n)
{
	struct rmawin_peer *peer = req->peer;
	int ret;

	WRITE_ONCE(req->acc.sent, done + n);
	atomic_inc(&req->pending);
	atomic_inc(&peer->acc_out);
	ret = rmawin_msg_send(peer, type, req->acc.id, m, len);
	if (ret) {
		atomic_dec(&peer->acc_out);
		atomic_dec(&req->pending);
		WRITE_ONCE(req->acc.sent, done);
	}
	return ret;
}

/* Send fragment [@done, @done + @n) of the request; @m is a message buffer. */
static int rmawin_acc_send_frag(struct rmawin_req *req, const struct rmawin_op_desc *op,
				struct rmawin_wire_acc *m, u64 off, u64 done, u32 n)
{
	struct rmawin_peer *peer = req->peer;
	u32 cas = op->opcode == RMAWIN_OP_CAS;
	u8 type;
	int ret;

	if (rmawin_wait_peers(req->win->ep, rmawin_acc_room(peer)))
		return -EINTR;
	ret = rmawin_peer_err(peer);
	if (ret)
		return ret;
	m->offset = cpu_to_le64(off + done);
	m->len = cpu_to_le32(n);
	m->res_off = cpu_to_le32(done);
	memcpy(m->data, req->acc.data + done, n);
	if (cas)
		memcpy(m->data + n, req->acc.data + op->len, n);
	type = rmawin_acc_answered_at(req, done) == done ? RMAWIN_MSG_ACC : RMAWIN_MSG_ACC_QUIET;
	return rmawin_acc_send_part(req, type, m, sizeof(*m) + n * (1 + cas), done, n);
}

/*
 * Sending stopped part way (a fatal signal, a lost peer): the fragments
 * sent quiet since the last answered one will never be answered, as the
 * one that would answer them was never sent.  Count them answered now;
 * the issuer's own reference keeps the request alive meanwhile.
 */
static void rmawin_acc_unanswerable(struct rmawin_req *req)
{
	u64 sent = READ_ONCE(req->acc.sent), last;
	u32 n;

	if (!sent)
		return;
	last = div_u64(sent - 1, RMAWIN_ACC_FRAG) * RMAWIN_ACC_FRAG;
	if (rmawin_acc_answered_at(req, last) == last)
		return;
	n = div_u64(last, RMAWIN_ACC_FRAG) % RMAWIN_ACC_ANSWER_EVERY + 1;
	atomic_sub(n, &req->peer->acc_out);
	atomic_sub(n, &req->pending);
}

/**
 * rmawin_acc_issue() - send an accumulate-family operation to its target
 * @req: the request, with its peer and window, on the window's list
 * @op: the descriptor, checked
 * @t: its window and the byte offset in the target's
 *
 * Context: process context, endpoint lock held; sleeps for send buffers
 * and for room in the target's window of unanswered fragments.
 * Return: 0 or a negative errno; the request then completes with it.
 */
int rmawin_acc_issue(struct rmawin_req *req, const struct rmawin_op_desc *op,
		     const struct rmawin_target *t)
{
	u64 small[(sizeof(struct rmawin_wire_acc) + 2 * RMAWIN_ACC_INLINE) / sizeof(u64) + 1];
	struct rmawin_group *grp = req->win->ep->group;
	struct rmawin_wire_acc *m;
	u64 done;
	u32 n;
	int ret;

	lockdep_assert_held(&req->win->ep->lock);
	/* a small operation's one fragment is staged on the stack */
	m = op->len <= RMAWIN_ACC_INLINE ? (struct rmawin_wire_acc *)small :
	    kmalloc(RMAWIN_MSG_MAX_PAYLOAD, GFP_KERNEL_ACCOUNT);
	if (!m || rmawin_acc_bufs(req, op)) {
		ret = -ENOMEM;
		goto out_free;
	}
	req->acc.result_uaddr = u64_to_user_ptr(op->result);
	ret = rmawin_acc_copy_in(op, req->acc.data);
	if (ret)
		goto out_free;
	ret = xa_alloc_irq(&grp->acc_reqs, &req->acc.id, req, xa_limit_32b, GFP_KERNEL_ACCOUNT);
	if (ret)
		goto out_free;

	memset(m, 0, sizeof(*m));
	m->win = cpu_to_le32(req->win->id);
	m->epoch = t->epoch;
	m->opcode = op->opcode;
	m->acc_op = op->acc_op;
	m->datatype = op->datatype;
	if (rmawin_bulk_wanted(op, t)) {
		ret = rmawin_bulk_issue(req, t, m);
		goto out_free;
	}
	for (done = 0; done < op->len && !ret; done += n) {
		n = min_t(u64, op->len - done, RMAWIN_ACC_FRAG);
		ret = rmawin_acc_send_frag(req, op, m, t->off, done, n);
	}
	if (ret)
		rmawin_acc_unanswerable(req);
out_free:
	if (m != (struct rmawin_wire_acc *)small)
		kfree(m);
	return ret;
}

/* Is @m a fragment an honest origin could send us?  The window is @win. */
static bool rmawin_acc_msg_ok(const struct rmawin_wire_acc *m, u16 len,
			      const struct rmawin_win *win)
{
	u32 n = le32_to_cpu(m->len), size = rmawin_acc_size(m->datatype);
	bool cas = m->opcode == RMAWIN_OP_CAS;
	u64 off = le64_to_cpu(m->offset), end;

	if (m->opcode < RMAWIN_OP_ACC || m->opcode > RMAWIN_OP_CAS || !size)
		return false;
	/* a whole lock epoch comes in one fragment */
	if (m->epoch > RMAWIN_WIRE_EPOCH_EXCLUSIVE || (m->epoch && m->res_off))
		return false;
	if (cas ? m->acc_op || n != size : !rmawin_acc_valid(m->acc_op, m->datatype))
		return false;
	if (!n || n > RMAWIN_ACC_FRAG || n % size || len != sizeof(*m) + n * (1 + cas) ||
	    le32_to_cpu(m->res_off) % RMAWIN_ACC_FRAG)
		return false;
	return !check_add_overflow(off, (u64)n, &end) && end <= win->length;
}

/**
 * rmawin_acc_carried_ok() - is @m an operation an honest origin's COMPLETE carries?
 * @m: the fragment
 * @len: its bytes, header included
 * @win: the window it names
 *
 * One plain accumulate fragment (a put comes as byte REPLACE), whole: no
 * epoch, at offset 0 of its operation, in range.
 *
 * Return: true if so.
 */
bool rmawin_acc_carried_ok(const struct rmawin_wire_acc *m, u16 len,
			   const struct rmawin_win *win)
{
	return m->opcode == RMAWIN_OP_ACC && !m->epoch && !m->res_off &&
	       rmawin_acc_msg_ok(m, len, win);
}

/*
 * Apply a peer's fragment; answer it unless @quiet.  A quiet fragment is
 * a plain accumulate and never an epoch: it has nothing to answer with.
 */
static int rmawin_acc_frag_recv(struct rmawin_peer *peer, u32 id, const void *p, u16 len,
				bool quiet)
{
	const struct rmawin_wire_acc *m = p;
	struct rmawin_ep *ep = peer->grp->ep;
	struct {
		struct rmawin_wire_acc_reply r;
		u64 old[RMAWIN_ACC_FRAG / sizeof(u64)];
	} rep = {};
	u32 n = le32_to_cpu(m->len), type = m->epoch - 1;
	struct rmawin_win *win;
	int status = 0;
	bool ok;

	xa_lock_bh(&ep->wins);
	win = xa_load(&ep->wins, le32_to_cpu(m->win));
	ok = win && rmawin_acc_msg_ok(m, len, win) &&
	     (!quiet || (m->opcode == RMAWIN_OP_ACC && !m->epoch));
	if (ok && m->epoch) {
		status = rmawin_lock_try(win, peer->rank, type);
		ok = status != -EPROTO;
	}
	if (ok && !status)
		rmawin_acc_apply_win(win, m->opcode, m->acc_op, m->datatype,
				     le64_to_cpu(m->offset), n, m->data,
				     rmawin_acc_fetches(m->opcode) ? rep.old : NULL);
	if (ok && m->epoch && !status)
		rmawin_lock_release(win, peer->rank, type);
	xa_unlock_bh(&ep->wins);
	if (!ok)
		return -EPROTO;
	if (quiet)
		return 0;
	if (m->epoch && !status)
		rmawin_lock_send_grants(ep, le32_to_cpu(m->win));
	rep.r.status = cpu_to_le32(status);
	rep.r.res_off = m->res_off;
	if (rmawin_acc_fetches(m->opcode) && !status)
		rep.r.len = cpu_to_le32(n);
	else
		n = 0;
	return rmawin_msg_send_async(peer, RMAWIN_MSG_ACC_REPLY, id, &rep, sizeof(rep.r) + n);
}

/**
 * rmawin_acc_recv() - apply a peer's accumulate fragment to our window
 * @peer: the origin
 * @id: its request id, echoed in the reply
 * @p: struct rmawin_wire_acc and data
 * @len: payload bytes
 *
 * A fragment that is a whole lock epoch (@epoch) is applied only if the
 * window's lock can be had at once, and the lock is let go of after it
 * (granting it to whoever waits); else the answer is -EAGAIN.
 *
 * Context: the receive completion's softirq, or the receive work (recv.c);
 * never waits for the CQ.
 * Return: 0, -EPROTO for a fragment no honest origin sends (an epoch from
 * a rank that holds or waits for the lock already among them), or for an
 * origin that leaves too many replies unreceived.
 */
int rmawin_acc_recv(struct rmawin_peer *peer, u32 id, const void *p, u16 len)
{
	return rmawin_acc_frag_recv(peer, id, p, len, false);
}

/**
 * rmawin_acc_quiet_recv() - apply a fragment the next reply answers
 * @peer: the origin
 * @id: its request id
 * @p: struct rmawin_wire_acc and data
 * @len: payload bytes
 *
 * Context: as rmawin_acc_recv().
 * Return: 0, or -EPROTO for what rmawin_acc_recv() refuses and for a
 * fetching operation or an epoch, which must be answered.
 */
int rmawin_acc_quiet_recv(struct rmawin_peer *peer, u32 id, const void *p, u16 len)
{
	return rmawin_acc_frag_recv(peer, id, p, len, true);
}

/*
 * Is @r the answer to @req's next fragment (or run of them, ending where
 * the fragment it answers said), from its target?
 */
static bool rmawin_acc_reply_ok(const struct rmawin_req *req, const struct rmawin_peer *peer,
				const struct rmawin_wire_acc_reply *r, u16 len)
{
	u32 res_off = le32_to_cpu(r->res_off), rlen = le32_to_cpu(r->len);
	s32 status = le32_to_cpu(r->status);
	u64 frag;

	if (!req || req->peer != peer || test_bit(0, &req->finished))
		return false;
	/*
	 * An honest target answers 0, or -EAGAIN to a whole epoch whose lock
	 * was taken: anything else (a kernel-internal -ERESTARTSYS, say) would
	 * reach the caller's system call as its return.
	 */
	if (r->pad || (status && status != -EAGAIN) ||
	    res_off != rmawin_acc_answered_at(req, req->acc.next) ||
	    res_off >= READ_ONCE(req->acc.sent))
		return false;
	frag = min_t(u64, req->len - res_off, rmawin_acc_frag(req));
	/* a chunk's previous values stay in the target's inbox */
	if (rlen != (req->acc.result && !status && !req->acc.bulk ? frag : 0))
		return false;
	return len == sizeof(*r) + rlen;
}

/**
 * rmawin_acc_reply_recv() - the target answered one of our fragments
 * @peer: the target
 * @id: our request id
 * @p: struct rmawin_wire_acc_reply and previous values
 * @len: payload bytes
 *
 * Context: the receive completion's softirq, or the receive work (recv.c).
 * Return: 0, or -EPROTO for a reply to no fragment of ours.
 */
int rmawin_acc_reply_recv(struct rmawin_peer *peer, u32 id, const void *p, u16 len)
{
	const struct rmawin_wire_acc_reply *r = p;
	struct rmawin_group *grp = peer->grp;
	struct rmawin_req *req;
	s32 status;
	u32 res_off, rlen, nfrags;

	xa_lock_irq(&grp->acc_reqs);
	req = xa_load(&grp->acc_reqs, id);
	if (!rmawin_acc_reply_ok(req, peer, r, len)) {
		xa_unlock_irq(&grp->acc_reqs);
		return -EPROTO;
	}
	status = le32_to_cpu(r->status);
	res_off = le32_to_cpu(r->res_off);
	rlen = le32_to_cpu(r->len);
	if (status && !req->status)
		req->status = status;
	if (rlen)
		memcpy(req->acc.result + res_off, r->old, rlen);
	/* the fragments it answers: 1, or a run of them */
	nfrags = (res_off - req->acc.next) / RMAWIN_ACC_FRAG + 1;
	req->acc.next = res_off + min_t(u64, req->len - res_off, rmawin_acc_frag(req));
	if (req->acc.bulk)
		rmawin_bulk_answered(peer);
	atomic_sub(nfrags, &peer->acc_out);
	if (atomic_sub_and_test(nfrags, &req->pending))
		rmawin_req_finish(req);
	xa_unlock_irq(&grp->acc_reqs);
	wake_up_all(&grp->ep->wq);
	return 0;
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
 * rmawin_acc_fail_all() - fail every accumulate still waiting at teardown
 * @grp: the group, whose queue pairs are gone: no reply will come
 *
 * Context: process context.
 */
void rmawin_acc_fail_all(struct rmawin_group *grp)
{
	struct rmawin_req *req;
	unsigned long id;

	xa_lock_irq(&grp->acc_reqs);
	xa_for_each(&grp->acc_reqs, id, req) {
		if (test_bit(0, &req->finished))
			continue;
		if (!req->status)
			req->status = -ECONNRESET;
		rmawin_req_finish(req);
	}
	xa_unlock_irq(&grp->acc_reqs);
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

	if (req->acc.nic)
		rmawin_atomic_release(req);
	/* ids start at 1: 0 means the request never got one */
	if (req->acc.id)
		xa_erase_irq(&grp->acc_reqs, req->acc.id);
	if (copy_out && !req->status && req->acc.result &&
	    rmawin_copy_to_user(req->acc.result_uaddr, req->acc.result, req->len))
		req->status = -EFAULT;
	if (req->acc.data != req->acc.inl) {
		kvfree(req->acc.data);
		kvfree(req->acc.result);
	}
	/* released once: the request's own release finds nothing left */
	req->acc.id = 0;
	req->acc.data = NULL;
	req->acc.result = NULL;
}
