// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: the arithmetic of the accumulate family, on integers.  Floating
 * point lives in acc_float.c, the only file built with the FPU enabled.
 *
 * Every function computes target = op(target, origin) over @n elements
 * of kernel buffers aligned for the type, a word at a time where a word's
 * operation is its elements' (rmawin_apply_words()).
 */
#include <linux/types.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "rmawin.h"

/* The loops every integer type shares: op, t, o, n and i are the caller's. */
#define RMAWIN_INT_LOOP							\
	do {								\
		if (RMAWIN_ARITH_LOOP)					\
			break;						\
		switch (op) {						\
		case RMAWIN_ACC_BAND:					\
			RMAWIN_EACH(t[i] &= o[i]);			\
			break;						\
		case RMAWIN_ACC_BOR:					\
			RMAWIN_EACH(t[i] |= o[i]);			\
			break;						\
		case RMAWIN_ACC_BXOR:					\
			RMAWIN_EACH(t[i] ^= o[i]);			\
			break;						\
		case RMAWIN_ACC_LAND:					\
			RMAWIN_EACH(t[i] = t[i] && o[i]);		\
			break;						\
		case RMAWIN_ACC_LOR:					\
			RMAWIN_EACH(t[i] = t[i] || o[i]);		\
			break;						\
		case RMAWIN_ACC_LXOR:					\
			RMAWIN_EACH(t[i] = !t[i] != !o[i]);		\
			break;						\
		default:	/* NO_OP; invalid pairs never get here */	\
			break;						\
		}							\
	} while (0)

static void rmawin_apply_u8(u8 op, u8 *t, const u8 *o, u32 n)
{
	u32 i;

	RMAWIN_INT_LOOP;
}

static void rmawin_apply_s8(u8 op, s8 *t, const s8 *o, u32 n)
{
	u32 i;

	RMAWIN_INT_LOOP;
}

static void rmawin_apply_u16(u8 op, u16 *t, const u16 *o, u32 n)
{
	u32 i;

	RMAWIN_INT_LOOP;
}

static void rmawin_apply_s16(u8 op, s16 *t, const s16 *o, u32 n)
{
	u32 i;

	RMAWIN_INT_LOOP;
}

static void rmawin_apply_u32(u8 op, u32 *t, const u32 *o, u32 n)
{
	u32 i;

	RMAWIN_INT_LOOP;
}

static void rmawin_apply_s32(u8 op, s32 *t, const s32 *o, u32 n)
{
	u32 i;

	RMAWIN_INT_LOOP;
}

static void rmawin_apply_u64(u8 op, u64 *t, const u64 *o, u32 n)
{
	u32 i;

	RMAWIN_INT_LOOP;
}

static void rmawin_apply_s64(u8 op, s64 *t, const s64 *o, u32 n)
{
	u32 i;

	RMAWIN_INT_LOOP;
}

/**
 * rmawin_acc_size() - bytes of one element of a datatype
 * @type: enum rmawin_datatype
 *
 * Return: the size, or 0 for an unknown type.
 */
u32 rmawin_acc_size(u8 type)
{
	static const u8 sizes[RMAWIN_TYPE_LAST] = {
		[RMAWIN_TYPE_INT8] = 1, [RMAWIN_TYPE_UINT8] = 1,
		[RMAWIN_TYPE_INT16] = 2, [RMAWIN_TYPE_UINT16] = 2,
		[RMAWIN_TYPE_INT32] = 4, [RMAWIN_TYPE_UINT32] = 4,
		[RMAWIN_TYPE_INT64] = 8, [RMAWIN_TYPE_UINT64] = 8,
		[RMAWIN_TYPE_FLOAT] = 4, [RMAWIN_TYPE_DOUBLE] = 8,
	};

	return type < RMAWIN_TYPE_LAST ? sizes[type] : 0;
}

static bool rmawin_acc_is_float(u8 type)
{
	return type == RMAWIN_TYPE_FLOAT || type == RMAWIN_TYPE_DOUBLE;
}

/**
 * rmawin_acc_valid() - is (op, type) an operation MPI defines?
 * @op: enum rmawin_acc_op
 * @type: enum rmawin_datatype
 *
 * Bitwise and logical operations are for integers only.
 */
bool rmawin_acc_valid(u8 op, u8 type)
{
	if (op >= RMAWIN_ACC_LAST || !rmawin_acc_size(type))
		return false;
	if (!rmawin_acc_is_float(type))
		return true;
	return op == RMAWIN_ACC_SUM || op == RMAWIN_ACC_PROD || op == RMAWIN_ACC_MIN ||
	       op == RMAWIN_ACC_MAX || op == RMAWIN_ACC_REPLACE || op == RMAWIN_ACC_NO_OP;
}

/*
 * A word's lanes of @size bytes, added without a carry crossing from one
 * lane into the next: the low bits of each lane add as one sum (their
 * carry stops at the lane's top bit, cleared in both), and the top bit is
 * that carry xor both top bits.  Wrapping, as the element loop's.
 */
static u64 rmawin_lanes_add(u64 a, u64 b, u64 top)
{
	return ((a & ~top) + (b & ~top)) ^ ((a ^ b) & top);
}

/*
 * The first whole words of @len bytes, where an operation on a word is the
 * operation on each of its elements: the sum of integers narrower than a
 * word, lane by lane, and bitwise operations and REPLACE on any integer.
 * The kernel offers no vector unit, and a 64 KiB accumulate of bytes is
 * otherwise 65536 loads, adds and stores.
 *
 * Return: the bytes done, a multiple of 8 (whole elements); the caller
 * does the rest element by element.
 */
static u32 rmawin_apply_words(u8 op, u32 size, u8 *t, const u8 *o, u32 len)
{
	static const u64 tops[] = {
		[1] = 0x8080808080808080ULL, [2] = 0x8000800080008000ULL,
		[4] = 0x8000000080000000ULL,
	};
	u32 words = len / sizeof(u64), i;
	u64 top, *tw = (u64 *)t;
	const u64 *ow = (const u64 *)o;

	switch (op) {
	case RMAWIN_ACC_SUM:
		if (size >= sizeof(u64))
			return 0;	/* the element loop is a word's add already */
		top = tops[size];
		for (i = 0; i < words; i++)
			put_unaligned(rmawin_lanes_add(get_unaligned(tw + i), get_unaligned(ow + i),
						       top), tw + i);
		break;
	case RMAWIN_ACC_BAND:
		for (i = 0; i < words; i++)
			put_unaligned(get_unaligned(tw + i) & get_unaligned(ow + i), tw + i);
		break;
	case RMAWIN_ACC_BOR:
		for (i = 0; i < words; i++)
			put_unaligned(get_unaligned(tw + i) | get_unaligned(ow + i), tw + i);
		break;
	case RMAWIN_ACC_BXOR:
		for (i = 0; i < words; i++)
			put_unaligned(get_unaligned(tw + i) ^ get_unaligned(ow + i), tw + i);
		break;
	case RMAWIN_ACC_REPLACE:
		memcpy(t, o, len);
		return len;
	default:
		return 0;
	}
	return words * sizeof(u64);
}

/**
 * rmawin_acc_apply() - target = op(target, origin), for each element
 * @op: enum rmawin_acc_op, valid for @type
 * @type: enum rmawin_datatype
 * @t: target elements, updated
 * @o: origin elements
 * @n: number of elements
 *
 * Context: any; the caller holds the window's accumulate lock.
 */
void rmawin_acc_apply(u8 op, u8 type, void *t, const void *o, u32 n)
{
	u32 size = rmawin_acc_size(type), done;

	if (!rmawin_acc_is_float(type) && size) {
		done = rmawin_apply_words(op, size, t, o, n * size);
		t += done;
		o += done;
		n -= done / size;
		if (!n)
			return;
	}
	switch (type) {
	case RMAWIN_TYPE_INT8:
		rmawin_apply_s8(op, t, o, n);
		break;
	case RMAWIN_TYPE_UINT8:
		rmawin_apply_u8(op, t, o, n);
		break;
	case RMAWIN_TYPE_INT16:
		rmawin_apply_s16(op, t, o, n);
		break;
	case RMAWIN_TYPE_UINT16:
		rmawin_apply_u16(op, t, o, n);
		break;
	case RMAWIN_TYPE_INT32:
		rmawin_apply_s32(op, t, o, n);
		break;
	case RMAWIN_TYPE_UINT32:
		rmawin_apply_u32(op, t, o, n);
		break;
	case RMAWIN_TYPE_INT64:
		rmawin_apply_s64(op, t, o, n);
		break;
	case RMAWIN_TYPE_UINT64:
		rmawin_apply_u64(op, t, o, n);
		break;
	default:
		rmawin_acc_apply_float(op, type, t, o, n);
		break;
	}
}
