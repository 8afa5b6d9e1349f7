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
 * Context: process context, or softirq context where
 * rmawin_acc_softirq_ok() said yes.
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

/**
 * rmawin_acc_softirq_ok() - may softirq context apply an accumulate on @type?
 * @type: enum rmawin_datatype
 *
 * Integers, always.  Float and double need the FPU, and in 6.1 a softirq
 * can run on top of a task inside its own kernel_fpu_begin() section
 * (which keeps only preemption off): a nested kernel_fpu_begin() there
 * saves nothing and clobbers that task's registers.  irq_fpu_usable() is
 * the kernel's own test for this (the crypto code's may_use_simd()); when
 * it says no, the message goes to the receive work.
 *
 * Context: softirq.
 */
bool rmawin_acc_softirq_ok(u8 type)
{
	return (type != RMAWIN_TYPE_FLOAT && type != RMAWIN_TYPE_DOUBLE) || irq_fpu_usable();
}
