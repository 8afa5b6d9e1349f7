// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Communication: put, get and the accumulate family.  Nonblocking; each
 * completes at the next synchronization.  put and get are one-operation
 * batches of RMAWIN_IOC_RMA; the accumulate family is not implemented yet.
 */
#include <errno.h>
#include <string.h>

#include "rmawin_priv.h"

static int rmawin_rma_one(struct rmawin_win *win, uint8_t opcode, const void *origin,
			  size_t len, int target, size_t target_disp)
{
	struct rmawin_rma r;
	struct rmawin_op_desc op;

	if (!win || target < 0 || (!origin && len))
		return -EINVAL;
	memset(&op, 0, sizeof(op));
	op.opcode = opcode;
	op.target = target;
	op.win = win->id;
	op.origin = (uintptr_t)origin;
	op.len = len;
	op.target_disp = target_disp;
	memset(&r, 0, sizeof(r));
	r.ops_ptr = (uintptr_t)&op;
	r.nops = 1;
	r.op_size = sizeof(op);
	return rmawin__ioctl_struct(win->ep->fd, RMAWIN_IOC_RMA, &r);
}

int rmawin_put(struct rmawin_win *win, const void *origin, size_t len, int target,
	       size_t target_disp)
{
	return rmawin_rma_one(win, RMAWIN_OP_PUT, origin, len, target, target_disp);
}

int rmawin_get(struct rmawin_win *win, void *origin, size_t len, int target,
	       size_t target_disp)
{
	return rmawin_rma_one(win, RMAWIN_OP_GET, origin, len, target, target_disp);
}

int rmawin_accumulate(struct rmawin_win *win, const void *origin, size_t count,
		      enum rmawin_type type, int target, size_t target_disp, enum rmawin_op op)
{
	if (!win)
		return -EINVAL;
	(void)origin;
	(void)count;
	(void)type;
	(void)target;
	(void)target_disp;
	(void)op;
	return -EOPNOTSUPP;
}

int rmawin_get_accumulate(struct rmawin_win *win, const void *origin, void *result,
			  size_t count, enum rmawin_type type, int target, size_t target_disp,
			  enum rmawin_op op)
{
	if (!win)
		return -EINVAL;
	(void)origin;
	(void)result;
	(void)count;
	(void)type;
	(void)target;
	(void)target_disp;
	(void)op;
	return -EOPNOTSUPP;
}

int rmawin_fetch_and_op(struct rmawin_win *win, const void *origin, void *result,
			enum rmawin_type type, int target, size_t target_disp, enum rmawin_op op)
{
	if (!win)
		return -EINVAL;
	(void)origin;
	(void)result;
	(void)type;
	(void)target;
	(void)target_disp;
	(void)op;
	return -EOPNOTSUPP;
}

int rmawin_compare_and_swap(struct rmawin_win *win, const void *origin, const void *compare,
			    void *result, enum rmawin_type type, int target, size_t target_disp)
{
	if (!win)
		return -EINVAL;
	(void)origin;
	(void)compare;
	(void)result;
	(void)type;
	(void)target;
	(void)target_disp;
	return -EOPNOTSUPP;
}
