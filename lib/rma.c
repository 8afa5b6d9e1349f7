// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Communication: put, get and the accumulate family.  Nonblocking; each
 * completes at the next synchronization.  Each call is one descriptor,
 * through the mmap'd ring when the endpoint has one and the operation
 * needs no pinning, else a one-operation batch of RMAWIN_IOC_RMA.
 */
#include <errno.h>
#include <string.h>

#include "rmawin_priv.h"

static int rmawin_ring_takes(const struct rmawin_op_desc *op)
{
	switch (op->opcode) {
	case RMAWIN_OP_PUT:
	case RMAWIN_OP_GET:
	case RMAWIN_OP_PUT_NOTIFY:
		/* larger ones may need pinning, which is the ioctl's job */
		return op->len <= RMAWIN_RING_COPY_MAX;
	default:
		return 1;
	}
}

int rmawin__submit(struct rmawin_ep *ep, struct rmawin_op_desc *op)
{
	struct rmawin_rma r;
	int res;

	if (ep->ring && rmawin_ring_takes(op) && rmawin__ring_run(ep, op, &res))
		return res;
	memset(&r, 0, sizeof(r));
	r.ops_ptr = (uintptr_t)op;
	r.nops = 1;
	r.op_size = sizeof(*op);
	return rmawin__ioctl_struct(ep->fd, RMAWIN_IOC_RMA, &r);
}

static int rmawin_rma_one(struct rmawin_win *win, uint8_t opcode, const void *origin,
			  size_t len, int target, size_t target_disp)
{
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
	return rmawin__submit(win->ep, &op);
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

/* The library's enums are the ABI's values. */
_Static_assert((int)RMAWIN_SUM == (int)RMAWIN_ACC_SUM &&
	       (int)RMAWIN_LXOR == (int)RMAWIN_ACC_LXOR &&
	       (int)RMAWIN_NO_OP == (int)RMAWIN_ACC_NO_OP, "enum rmawin_op != enum rmawin_acc_op");
_Static_assert((int)RMAWIN_INT8 == (int)RMAWIN_TYPE_INT8 &&
	       (int)RMAWIN_UINT32 == (int)RMAWIN_TYPE_UINT32 &&
	       (int)RMAWIN_DOUBLE == (int)RMAWIN_TYPE_DOUBLE, "enum rmawin_type != enum rmawin_datatype");

static size_t rmawin_type_size(enum rmawin_type type)
{
	static const unsigned char sizes[] = { 1, 1, 2, 2, 4, 4, 8, 8, 4, 8 };

	return (unsigned int)type < sizeof(sizes) ? sizes[type] : 0;
}

static int rmawin_acc_one(struct rmawin_win *win, uint8_t opcode, const void *origin,
			  const void *compare, void *result, size_t count, enum rmawin_type type,
			  int target, size_t target_disp, enum rmawin_op op)
{
	struct rmawin_op_desc d;

	if (!win || target < 0 || !rmawin_type_size(type) || (unsigned int)op > 255)
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	d.opcode = opcode;
	d.acc_op = op;
	d.datatype = type;
	d.target = target;
	d.win = win->id;
	d.origin = (uintptr_t)origin;
	d.len = count * rmawin_type_size(type);
	d.target_disp = target_disp;
	d.result = (uintptr_t)result;
	d.compare = (uintptr_t)compare;
	return rmawin__submit(win->ep, &d);
}

int rmawin_accumulate(struct rmawin_win *win, const void *origin, size_t count,
		      enum rmawin_type type, int target, size_t target_disp, enum rmawin_op op)
{
	return rmawin_acc_one(win, RMAWIN_OP_ACC, origin, NULL, NULL, count, type, target,
			      target_disp, op);
}

int rmawin_get_accumulate(struct rmawin_win *win, const void *origin, void *result,
			  size_t count, enum rmawin_type type, int target, size_t target_disp,
			  enum rmawin_op op)
{
	return rmawin_acc_one(win, RMAWIN_OP_GET_ACC, origin, NULL, result, count, type,
			      target, target_disp, op);
}

int rmawin_fetch_and_op(struct rmawin_win *win, const void *origin, void *result,
			enum rmawin_type type, int target, size_t target_disp, enum rmawin_op op)
{
	return rmawin_acc_one(win, RMAWIN_OP_FETCH_OP, origin, NULL, result, 1, type, target,
			      target_disp, op);
}

int rmawin_compare_and_swap(struct rmawin_win *win, const void *origin, const void *compare,
			    void *result, enum rmawin_type type, int target, size_t target_disp)
{
	return rmawin_acc_one(win, RMAWIN_OP_CAS, origin, compare, result, 1, type, target,
			      target_disp, 0);
}
