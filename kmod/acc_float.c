// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: accumulate on float and double.  The kernel is built without
 * the FPU; this file alone is built with SSE (see Kbuild) and touches FP
 * registers only between kernel_fpu_begin() and kernel_fpu_end().  MIN and
 * MAX are C's comparisons, so they behave as the same C code in userspace.
 */
#include <linux/types.h>
#include <asm/fpu/api.h>

#include "rmawin.h"

/* Floating point has SUM, PROD, MIN, MAX and REPLACE; NO_OP does nothing. */
#define RMAWIN_FLOAT_LOOP	((void)RMAWIN_ARITH_LOOP)

static void rmawin_apply_float(u8 op, float *t, const float *o, u32 n)
{
	u32 i;

	RMAWIN_FLOAT_LOOP;
}

static void rmawin_apply_double(u8 op, double *t, const double *o, u32 n)
{
	u32 i;

	RMAWIN_FLOAT_LOOP;
}

/**
 * rmawin_acc_apply_float() - rmawin_acc_apply() for float and double
 * @op: enum rmawin_acc_op
 * @type: RMAWIN_TYPE_FLOAT or RMAWIN_TYPE_DOUBLE
 * @t: target elements, updated
 * @o: origin elements
 * @n: number of elements
 *
 * Context: any but NMI.
 */
void rmawin_acc_apply_float(u8 op, u8 type, void *t, const void *o, u32 n)
{
	kernel_fpu_begin();
	if (type == RMAWIN_TYPE_FLOAT)
		rmawin_apply_float(op, t, o, n);
	else
		rmawin_apply_double(op, t, o, n);
	kernel_fpu_end();
}
