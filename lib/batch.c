// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Batches: operations prepared one by one and issued with one call, through
 * the ring in one pass (one doorbell at most) or as RMAWIN_IOC_RMA batches.
 */
#include <errno.h>
#include <stdlib.h>

#include "rmawin_priv.h"

/* The most operations one batch may hold (each is a 72-byte descriptor). */
#define RMAWIN_BATCH_MAX	65536

/**
 * struct rmawin_batch - operations waiting to be issued together
 * @ep: the endpoint whose windows they target
 * @n: operations prepared
 * @max: room, as created
 * @ops: their descriptors
 */
/*
 * @win: the window of every operation in @ops, or NULL if they are on
 * several (what rmawin__submit() wants to know)
 */
struct rmawin_batch {
	struct rmawin_ep *ep;
	struct rmawin_win *win;
	unsigned int n;
	unsigned int max;
	struct rmawin_op_desc ops[];
};

/* @b->ops[@b->n] is filled in, on @win */
static void rmawin_batch_add(struct rmawin_batch *b, struct rmawin_win *win)
{
	if (!b->n)
		b->win = win;
	else if (b->win != win)
		b->win = NULL;
	b->n++;
}

int rmawin_batch_create(struct rmawin_ep *ep, unsigned int max_ops, struct rmawin_batch **batch)
{
	struct rmawin_batch *b;

	if (!ep || !batch || !max_ops || max_ops > RMAWIN_BATCH_MAX)
		return -EINVAL;
	b = calloc(1, sizeof(*b) + (size_t)max_ops * sizeof(b->ops[0]));
	if (!b)
		return -ENOMEM;
	b->ep = ep;
	b->max = max_ops;
	*batch = b;
	return 0;
}

void rmawin_batch_free(struct rmawin_batch *batch)
{
	free(batch);
}

unsigned int rmawin_batch_count(const struct rmawin_batch *batch)
{
	return batch ? batch->n : 0;
}

/* Can @b take one more operation on @win? */
static int rmawin_batch_room(const struct rmawin_batch *b, const struct rmawin_win *win)
{
	if (!b || !win || win->ep != b->ep)
		return -EINVAL;
	return b->n < b->max ? 0 : -ENOSPC;
}

static int rmawin_batch_rma(struct rmawin_batch *b, struct rmawin_win *win, uint8_t opcode,
			    const void *origin, size_t len, int target, size_t target_disp)
{
	int ret = rmawin_batch_room(b, win);

	if (!ret)
		ret = rmawin__rma_desc(win, opcode, origin, len, target, target_disp,
				       &b->ops[b->n]);
	if (!ret)
		rmawin_batch_add(b, win);
	return ret;
}

static int rmawin_batch_acc(struct rmawin_batch *b, struct rmawin_win *win, uint8_t opcode,
			    const void *origin, const void *compare, void *result, size_t count,
			    enum rmawin_type type, int target, size_t target_disp,
			    enum rmawin_op op)
{
	int ret = rmawin_batch_room(b, win);

	if (!ret)
		ret = rmawin__acc_desc(win, opcode, origin, compare, result, count, type, target,
				       target_disp, op, &b->ops[b->n]);
	if (!ret)
		rmawin_batch_add(b, win);
	return ret;
}

int rmawin_batch_put(struct rmawin_batch *batch, struct rmawin_win *win, const void *origin,
		     size_t len, int target, size_t target_disp)
{
	return rmawin_batch_rma(batch, win, RMAWIN_OP_PUT, origin, len, target, target_disp);
}

int rmawin_batch_get(struct rmawin_batch *batch, struct rmawin_win *win, void *origin,
		     size_t len, int target, size_t target_disp)
{
	return rmawin_batch_rma(batch, win, RMAWIN_OP_GET, origin, len, target, target_disp);
}

int rmawin_batch_accumulate(struct rmawin_batch *batch, struct rmawin_win *win,
			    const void *origin, size_t count, enum rmawin_type type, int target,
			    size_t target_disp, enum rmawin_op op)
{
	return rmawin_batch_acc(batch, win, RMAWIN_OP_ACC, origin, NULL, NULL, count, type,
				target, target_disp, op);
}

int rmawin_batch_get_accumulate(struct rmawin_batch *batch, struct rmawin_win *win,
				const void *origin, void *result, size_t count,
				enum rmawin_type type, int target, size_t target_disp,
				enum rmawin_op op)
{
	return rmawin_batch_acc(batch, win, RMAWIN_OP_GET_ACC, origin, NULL, result, count, type,
				target, target_disp, op);
}

int rmawin_batch_fetch_and_op(struct rmawin_batch *batch, struct rmawin_win *win,
			      const void *origin, void *result, enum rmawin_type type, int target,
			      size_t target_disp, enum rmawin_op op)
{
	return rmawin_batch_acc(batch, win, RMAWIN_OP_FETCH_OP, origin, NULL, result, 1, type,
				target, target_disp, op);
}

int rmawin_batch_compare_and_swap(struct rmawin_batch *batch, struct rmawin_win *win,
				  const void *origin, const void *compare, void *result,
				  enum rmawin_type type, int target, size_t target_disp)
{
	return rmawin_batch_acc(batch, win, RMAWIN_OP_CAS, origin, compare, result, 1, type,
				target, target_disp, 0);
}

int rmawin_batch_submit(struct rmawin_batch *batch)
{
	unsigned int n;
	int ret;

	if (!batch)
		return -EINVAL;
	/* locks noted on lazy windows are taken first (lazy.c) */
	ret = rmawin__lazy_settle_all(batch->ep);
	if (ret)
		return ret;
	n = batch->n;
	batch->n = 0;
	return n ? rmawin__submit(batch->ep, batch->ops, n, batch->win) : 0;
}
