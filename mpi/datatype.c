// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Datatypes and reduction ops.  Predefined C datatypes map to rmawin's
 * element types by size and kind; derived datatypes (contiguous, vector,
 * hvector, indexed, hindexed, indexed_block, hindexed_block, struct,
 * resized, dup) are flattened through MPI_Type_get_envelope/get_contents
 * into a list of byte blocks that the operations walk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rmawin_mpi.h"

#define RMPI_MAX_DEPTH	16	/* nesting of derived datatypes */

struct rmpi_type_map {
	MPI_Datatype type;
	enum rmawin_type rt;
	int size;
};

/*
 * Only addresses and integer constants: valid as a static initializer
 * whichever MPI's handles these are.  long and long long are 64 bits on
 * the LP64 Linux targets this is built for (asserted below).
 */
static const struct rmpi_type_map rmpi_types[] = {
	{ MPI_CHAR, RMAWIN_INT8, 1 },		{ MPI_SIGNED_CHAR, RMAWIN_INT8, 1 },
	{ MPI_INT8_T, RMAWIN_INT8, 1 },		{ MPI_UNSIGNED_CHAR, RMAWIN_UINT8, 1 },
	{ MPI_BYTE, RMAWIN_UINT8, 1 },		{ MPI_UINT8_T, RMAWIN_UINT8, 1 },
	{ MPI_C_BOOL, RMAWIN_UINT8, 1 },	{ MPI_SHORT, RMAWIN_INT16, 2 },
	{ MPI_INT16_T, RMAWIN_INT16, 2 },	{ MPI_UNSIGNED_SHORT, RMAWIN_UINT16, 2 },
	{ MPI_UINT16_T, RMAWIN_UINT16, 2 },	{ MPI_INT, RMAWIN_INT32, 4 },
	{ MPI_INT32_T, RMAWIN_INT32, 4 },	{ MPI_WCHAR, RMAWIN_INT32, 4 },
	{ MPI_UNSIGNED, RMAWIN_UINT32, 4 },	{ MPI_UINT32_T, RMAWIN_UINT32, 4 },
	{ MPI_LONG, RMAWIN_INT64, 8 },		{ MPI_LONG_LONG_INT, RMAWIN_INT64, 8 },
	{ MPI_LONG_LONG, RMAWIN_INT64, 8 },	{ MPI_INT64_T, RMAWIN_INT64, 8 },
	{ MPI_AINT, RMAWIN_INT64, 8 },		{ MPI_OFFSET, RMAWIN_INT64, 8 },
	{ MPI_COUNT, RMAWIN_INT64, 8 },		{ MPI_UNSIGNED_LONG, RMAWIN_UINT64, 8 },
	{ MPI_UNSIGNED_LONG_LONG, RMAWIN_UINT64, 8 }, { MPI_UINT64_T, RMAWIN_UINT64, 8 },
	{ MPI_FLOAT, RMAWIN_FLOAT, 4 },		{ MPI_DOUBLE, RMAWIN_DOUBLE, 8 },
};

_Static_assert(sizeof(long) == 8 && sizeof(long long) == 8, "LP64 only");
_Static_assert(sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8, "64-bit MPI_Aint");

/**
 * rmpi_type_to_rmawin() - the rmawin element type of a predefined datatype
 * @type: the datatype
 * @rt: out: the element type
 * @size: out: its size in bytes
 *
 * Return: MPI_SUCCESS, or MPI_ERR_TYPE for a datatype rmawin cannot
 * combine (long double, complex, the MINLOC/MAXLOC pairs, derived types;
 * ops.c combines the 8-byte pairs itself).
 */
int rmpi_type_to_rmawin(MPI_Datatype type, enum rmawin_type *rt, int *size)
{
	for (size_t i = 0; i < ARRAY_SIZE(rmpi_types); i++) {
		if (rmpi_types[i].type == type && type != MPI_DATATYPE_NULL) {
			*rt = rmpi_types[i].rt;
			*size = rmpi_types[i].size;
			return MPI_SUCCESS;
		}
	}
	return MPI_ERR_TYPE;
}

/**
 * rmpi_op_to_rmawin() - the rmawin op of a predefined MPI op
 * @op: the op
 * @rt: the element type it will combine
 * @ro: out: rmawin's op
 *
 * Return: MPI_SUCCESS; MPI_ERR_OP for MPI_MINLOC and MPI_MAXLOC (defined on
 * the pair types only, which ops.c combines itself), a user-defined op or
 * one MPI does not define on @rt (bitwise or logical ops on floating point).
 */
int rmpi_op_to_rmawin(MPI_Op op, enum rmawin_type rt, enum rmawin_op *ro)
{
	static const struct { MPI_Op op; enum rmawin_op ro; int ints_only; } ops[] = {
		{ MPI_SUM, RMAWIN_SUM, 0 },	{ MPI_PROD, RMAWIN_PROD, 0 },
		{ MPI_MIN, RMAWIN_MIN, 0 },	{ MPI_MAX, RMAWIN_MAX, 0 },
		{ MPI_BAND, RMAWIN_BAND, 1 },	{ MPI_BOR, RMAWIN_BOR, 1 },
		{ MPI_BXOR, RMAWIN_BXOR, 1 },	{ MPI_LAND, RMAWIN_LAND, 1 },
		{ MPI_LOR, RMAWIN_LOR, 1 },	{ MPI_LXOR, RMAWIN_LXOR, 1 },
		{ MPI_REPLACE, RMAWIN_REPLACE, 0 }, { MPI_NO_OP, RMAWIN_NO_OP, 0 },
	};
	int fp = rt == RMAWIN_FLOAT || rt == RMAWIN_DOUBLE;

	if (op == MPI_MINLOC || op == MPI_MAXLOC)
		return MPI_ERR_OP;
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		if (ops[i].op == op) {
			if (ops[i].ints_only && fp)
				return MPI_ERR_OP;
			*ro = ops[i].ro;
			return MPI_SUCCESS;
		}
	}
	return MPI_ERR_OP;
}

/* Append a block, merging it into the last one when they touch. */
static int rmpi_layout_add(struct rmpi_layout *l, MPI_Aint off, MPI_Aint len, MPI_Datatype basic)
{
	struct rmpi_block *b;

	if (!len)
		return MPI_SUCCESS;
	if (l->basic == MPI_DATATYPE_NULL)
		l->basic = basic;
	else if (l->basic != basic)
		l->mixed = 1;
	if (l->n && l->blk[l->n - 1].off + l->blk[l->n - 1].len == off) {
		l->blk[l->n - 1].len += len;
		return MPI_SUCCESS;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;

		b = l->blk == &l->one ? NULL : l->blk;
		b = realloc(b, cap * sizeof(*b));
		if (!b)
			return MPI_ERR_NO_MEM;
		if (l->blk == &l->one && l->n)
			b[0] = l->one;
		l->blk = b;
		l->cap = cap;
	}
	l->blk[l->n].off = off;
	l->blk[l->n].len = len;
	l->n++;
	return MPI_SUCCESS;
}

static int rmpi_flatten(struct rmpi_layout *l, MPI_Datatype t, MPI_Aint off, int depth);

/* @count copies of @t, @stride bytes apart */
static int rmpi_flatten_rep(struct rmpi_layout *l, MPI_Datatype t, MPI_Aint off, MPI_Aint count,
			    MPI_Aint stride, int depth)
{
	int err = MPI_SUCCESS;

	for (MPI_Aint i = 0; i < count && err == MPI_SUCCESS; i++)
		err = rmpi_flatten(l, t, off + i * stride, depth);
	return err;
}

static MPI_Aint rmpi_extent(MPI_Datatype t)
{
	MPI_Aint lb, extent;

	if (PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS)
		return 0;
	return extent;
}

/*
 * One derived datatype's blocks, from its constructor's arguments.  @ai:
 * integers, @aa: addresses, @at: datatypes, as MPI_Type_get_contents gives
 * them.
 */
static int rmpi_flatten_contents(struct rmpi_layout *l, int combiner, const int *ai,
				 const MPI_Aint *aa, const MPI_Datatype *at, MPI_Aint off,
				 int depth)
{
	MPI_Aint ext = rmpi_extent(at[0]);
	int err = MPI_SUCCESS, i;

	switch (combiner) {
	case MPI_COMBINER_DUP:
	case MPI_COMBINER_RESIZED:	/* the parent used the new extent */
		return rmpi_flatten(l, at[0], off, depth);
	case MPI_COMBINER_CONTIGUOUS:
		return rmpi_flatten_rep(l, at[0], off, ai[0], ext, depth);
	case MPI_COMBINER_VECTOR:
	case MPI_COMBINER_HVECTOR: {
		MPI_Aint stride = combiner == MPI_COMBINER_VECTOR ? ai[2] * ext : aa[0];

		for (i = 0; i < ai[0] && err == MPI_SUCCESS; i++)
			err = rmpi_flatten_rep(l, at[0], off + i * stride, ai[1], ext, depth);
		return err;
	}
	case MPI_COMBINER_INDEXED:
		for (i = 0; i < ai[0] && err == MPI_SUCCESS; i++)
			err = rmpi_flatten_rep(l, at[0], off + ai[1 + ai[0] + i] * ext, ai[1 + i],
					       ext, depth);
		return err;
	case MPI_COMBINER_HINDEXED:
		for (i = 0; i < ai[0] && err == MPI_SUCCESS; i++)
			err = rmpi_flatten_rep(l, at[0], off + aa[i], ai[1 + i], ext, depth);
		return err;
	case MPI_COMBINER_INDEXED_BLOCK:
		for (i = 0; i < ai[0] && err == MPI_SUCCESS; i++)
			err = rmpi_flatten_rep(l, at[0], off + ai[2 + i] * ext, ai[1], ext, depth);
		return err;
	case MPI_COMBINER_HINDEXED_BLOCK:
		for (i = 0; i < ai[0] && err == MPI_SUCCESS; i++)
			err = rmpi_flatten_rep(l, at[0], off + aa[i], ai[1], ext, depth);
		return err;
	case MPI_COMBINER_STRUCT:
		for (i = 0; i < ai[0] && err == MPI_SUCCESS; i++)
			err = rmpi_flatten_rep(l, at[i], off + aa[i], ai[1 + i], rmpi_extent(at[i]),
					       depth);
		return err;
	default:	/* subarray, darray, f90 types: not yet */
		return MPI_ERR_TYPE;
	}
}

static void rmpi_free_types(MPI_Datatype *at, int n)
{
	for (int i = 0; i < n; i++) {
		int ni, na, nt, comb;

		if (PMPI_Type_get_envelope(at[i], &ni, &na, &nt, &comb) == MPI_SUCCESS &&
		    comb != MPI_COMBINER_NAMED)
			PMPI_Type_free(&at[i]);
	}
}

/*
 * A predefined datatype's bytes.  The MINLOC/MAXLOC pairs have holes:
 * MPI_SHORT_INT's short and int are 4 bytes apart, the others' second
 * member follows the first and the padding is at the end.
 */
static int rmpi_flatten_named(struct rmpi_layout *l, MPI_Datatype t, MPI_Aint off)
{
	int size, err;

	if (PMPI_Type_size(t, &size) != MPI_SUCCESS)
		return MPI_ERR_TYPE;
	if (t != MPI_SHORT_INT)
		return rmpi_layout_add(l, off, size, t);
	err = rmpi_layout_add(l, off, sizeof(short), t);
	if (err == MPI_SUCCESS)
		err = rmpi_layout_add(l, off + sizeof(int), sizeof(int), t);
	return err;
}

static int rmpi_flatten(struct rmpi_layout *l, MPI_Datatype t, MPI_Aint off, int depth)
{
	int ni, na, nt, comb, err;
	MPI_Datatype *at;
	MPI_Aint *aa;
	int *ai;

	if (PMPI_Type_get_envelope(t, &ni, &na, &nt, &comb) != MPI_SUCCESS)
		return MPI_ERR_TYPE;
	if (comb == MPI_COMBINER_NAMED)
		return rmpi_flatten_named(l, t, off);
	if (depth >= RMPI_MAX_DEPTH)
		return MPI_ERR_TYPE;
	ai = malloc(sizeof(*ai) * (size_t)(ni + 1));
	aa = malloc(sizeof(*aa) * (size_t)(na + 1));
	at = malloc(sizeof(*at) * (size_t)(nt + 1));
	err = MPI_ERR_NO_MEM;
	if (ai && aa && at) {
		err = PMPI_Type_get_contents(t, ni, na, nt, ai, aa, at);
		if (err == MPI_SUCCESS) {
			err = rmpi_flatten_contents(l, comb, ai, aa, at, off, depth + 1);
			rmpi_free_types(at, nt);
		}
	}
	free(ai);
	free(aa);
	free(at);
	return err;
}

/**
 * rmpi_layout_build() - the byte blocks of @count elements of @type
 * @type: a predefined or committed derived datatype
 * @count: number of elements, not negative
 * @l: out: the layout; rmpi_layout_free() it
 *
 * Return: MPI_SUCCESS; MPI_ERR_TYPE for MPI_DATATYPE_NULL or a constructor
 * not handled; MPI_ERR_NO_MEM.
 */
int rmpi_layout_build(MPI_Datatype type, int count, struct rmpi_layout *l)
{
	int ni, na, nt, comb, size, err;
	enum rmawin_type rt;

	memset(l, 0, sizeof(*l));
	l->blk = &l->one;
	l->cap = 1;
	l->basic = MPI_DATATYPE_NULL;
	/*
	 * The commonest case without asking the MPI: a predefined C type of
	 * the table, whose extent is its size, is one block.  Asking
	 * (envelope, size, extent) took about 500 instructions a layout, two
	 * or three layouts a call.
	 */
	if (rmpi_type_to_rmawin(type, &rt, &size) == MPI_SUCCESS)
		return rmpi_layout_add(l, 0, (MPI_Aint)size * count, type);
	if (type == MPI_DATATYPE_NULL ||
	    PMPI_Type_get_envelope(type, &ni, &na, &nt, &comb) != MPI_SUCCESS)
		return MPI_ERR_TYPE;
	if (comb == MPI_COMBINER_NAMED && PMPI_Type_size(type, &size) == MPI_SUCCESS &&
	    rmpi_extent(type) == size)	/* the common case: one block */
		return rmpi_layout_add(l, 0, (MPI_Aint)size * count, type);
	err = rmpi_flatten_rep(l, type, 0, count, rmpi_extent(type), 0);
	if (err != MPI_SUCCESS)
		rmpi_layout_free(l);
	return err;
}

/**
 * rmpi_layout_free() - release what rmpi_layout_build() allocated
 * @l: the layout
 */
void rmpi_layout_free(struct rmpi_layout *l)
{
	if (l->blk != &l->one)
		free(l->blk);
	l->blk = &l->one;
	l->n = 0;
	l->cap = 1;
}

/**
 * rmpi_layout_bytes() - total bytes of a layout
 * @l: the layout
 *
 * Return: the sum of its blocks' lengths.
 */
MPI_Aint rmpi_layout_bytes(const struct rmpi_layout *l)
{
	MPI_Aint sum = 0;

	for (size_t i = 0; i < l->n; i++)
		sum += l->blk[i].len;
	return sum;
}
