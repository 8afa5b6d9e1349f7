// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The communication calls.  Each becomes one rmawin call when both sides'
 * data are contiguous; otherwise the origin, result and target layouts are
 * walked together and every piece that is contiguous in all of them is one
 * operation of a batch, submitted as it fills and at the end.  Target
 * displacements are scaled here by the target's disp_unit (the rmawin
 * window's is 1).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "rmawin_mpi.h"

enum rmpi_kind { RMPI_PUT, RMPI_GET, RMPI_ACC, RMPI_GET_ACC };

/* one call's arguments, as MPI gives them */
struct rmpi_args {
	enum rmpi_kind kind;
	const void *origin;
	int ocount;
	MPI_Datatype otype;
	void *result;
	int rcount;
	MPI_Datatype rtype;
	int target;
	MPI_Aint disp;
	int tcount;
	MPI_Datatype ttype;
	MPI_Op op;
};

/* what the walk needs once the arguments are checked */
struct rmpi_rma {
	const struct rmpi_args *a;
	struct rmpi_win *w;
	struct rmawin_batch *batch;	/* NULL: one direct call */
	enum rmawin_type rt;
	enum rmawin_op ro;
	int esize;
	int use_origin;
	const struct rmpi_pair *pair;	/* a MINLOC/MAXLOC pair type: rmpi_pair_walk() */
	MPI_Aint tbase;
	struct rmpi_layout lo, lr, lt;
};

struct rmpi_cursor {
	const struct rmpi_layout *l;
	size_t i;
	MPI_Aint done;
};

static MPI_Aint rmpi_cur_avail(const struct rmpi_cursor *c)
{
	return c->l->blk[c->i].len - c->done;
}

static MPI_Aint rmpi_cur_off(const struct rmpi_cursor *c)
{
	return c->l->blk[c->i].off + c->done;
}

static void rmpi_cur_advance(struct rmpi_cursor *c, MPI_Aint n)
{
	c->done += n;
	if (c->done == c->l->blk[c->i].len) {
		c->i++;
		c->done = 0;
	}
}

static void *rmpi_addr(const void *buf, MPI_Aint off)
{
	return (void *)((uintptr_t)buf + (uintptr_t)off);
}

/* One contiguous piece: @o origin, @res result, @len bytes at @toff. */
static int rmpi_rma_one(struct rmpi_rma *r, void *o, void *res, MPI_Aint len, MPI_Aint toff)
{
	struct rmawin_win *rw = r->w->rw;
	struct rmawin_batch *b = r->batch;
	int t = r->a->target;
	size_t n = (size_t)(len / r->esize), d = (size_t)toff;

	switch (r->a->kind) {
	case RMPI_PUT:
		return b ? rmawin_batch_put(b, rw, o, (size_t)len, t, d)
			 : rmawin_put(rw, o, (size_t)len, t, d);
	case RMPI_GET:
		return b ? rmawin_batch_get(b, rw, o, (size_t)len, t, d)
			 : rmawin_get(rw, o, (size_t)len, t, d);
	case RMPI_ACC:
		return b ? rmawin_batch_accumulate(b, rw, o, n, r->rt, t, d, r->ro)
			 : rmawin_accumulate(rw, o, n, r->rt, t, d, r->ro);
	case RMPI_GET_ACC:
		if (!o)		/* NO_OP: rmawin ignores the operand */
			o = res;
		return b ? rmawin_batch_get_accumulate(b, rw, o, res, n, r->rt, t, d, r->ro)
			 : rmawin_get_accumulate(rw, o, res, n, r->rt, t, d, r->ro);
	}
	return -EINVAL;
}

/*
 * With RMAWIN_MPI_DEBUG: an 8-byte integer element at a target byte offset
 * that is not a multiple of 8, refused on a same_op window (-EINVAL): the
 * device's atomics need one.  Say so, and how to do without them.
 */
static void rmpi_debug_misaligned(const struct rmpi_win *w, int err, enum rmawin_type rt,
				  MPI_Aint toff)
{
	if (err == -EINVAL && w->same_op && (rt == RMAWIN_INT64 || rt == RMAWIN_UINT64) &&
	    toff % 8)
		rmpi_debug("8-byte integer accumulate at target byte offset %lld of a window with "
			   "accumulate_ops same_op_no_op (MPI's default) or same_op: the device's "
			   "atomics need a multiple of 8 (RMAWIN_MPI_SAME_OP=0 does without them)",
			   (long long)toff);
}

/* Walk the layouts together; returns a negative errno or MPI_ERR_RMA_RANGE. */
static int rmpi_rma_walk(struct rmpi_rma *r)
{
	struct rmpi_cursor co = { &r->lo, 0, 0 }, cr = { &r->lr, 0, 0 }, ct = { &r->lt, 0, 0 };
	int use_res = r->a->kind == RMPI_GET_ACC;
	int err = 0;

	while (ct.i < r->lt.n && !err) {
		MPI_Aint len = rmpi_cur_avail(&ct), toff = r->tbase + rmpi_cur_off(&ct);
		void *o = NULL, *res = NULL;

		if (toff < 0)
			return -ERANGE;
		if (r->use_origin) {
			len = len < rmpi_cur_avail(&co) ? len : rmpi_cur_avail(&co);
			o = rmpi_addr(r->a->origin, rmpi_cur_off(&co));
		}
		if (use_res) {
			len = len < rmpi_cur_avail(&cr) ? len : rmpi_cur_avail(&cr);
			res = rmpi_addr(r->a->result, rmpi_cur_off(&cr));
		}
		err = rmpi_rma_one(r, o, res, len, toff);
		if (r->a->kind == RMPI_ACC || r->a->kind == RMPI_GET_ACC)
			rmpi_debug_misaligned(r->w, err, r->rt, toff);
		if (!err && r->batch && rmawin_batch_count(r->batch) == 1024)
			err = rmawin_batch_submit(r->batch);
		if (r->use_origin)
			rmpi_cur_advance(&co, len);
		if (use_res)
			rmpi_cur_advance(&cr, len);
		rmpi_cur_advance(&ct, len);
	}
	if (r->batch) {
		int e = rmawin_batch_submit(r->batch);	/* empties it, error or not */

		err = err ? err : e;
	}
	return err;
}

/*
 * The MINLOC/MAXLOC pair types.  rmawin combines no pairs, so an
 * accumulate of one is a compare-and-swap loop on the 8-byte word that
 * holds the pair: read it, combine, swap it in if it is unchanged, else
 * combine again with what was there.  Every step needs the previous one's
 * result, which librmawin delivers at a flush: only in a passive-target
 * epoch (lock, lock_all), where flushing early is allowed.  Each element
 * is atomic against every other accumulate of a pair type (all take this
 * path, REPLACE and NO_OP included).  The 16-byte pairs (MPI_LONG_INT,
 * MPI_DOUBLE_INT, MPI_LONG_DOUBLE_INT) would need a 16-byte
 * compare-and-swap, which rmawin does not have: MPI_ERR_TYPE.
 */
enum rmpi_pair_kind { RMPI_PAIR_INT, RMPI_PAIR_FLOAT, RMPI_PAIR_SHORT };

struct rmpi_pair {
	MPI_Datatype type;
	enum rmpi_pair_kind kind;
	int vsize;		/* bytes of the value member; the int index is at 4 */
};

static const struct rmpi_pair *rmpi_pair_type(MPI_Datatype t)
{
	static const struct rmpi_pair pairs[] = {
		{ MPI_2INT, RMPI_PAIR_INT, sizeof(int) },
		{ MPI_FLOAT_INT, RMPI_PAIR_FLOAT, sizeof(float) },
		{ MPI_SHORT_INT, RMPI_PAIR_SHORT, sizeof(short) },
	};

	for (size_t i = 0; i < ARRAY_SIZE(pairs); i++)
		if (pairs[i].type == t && t != MPI_DATATYPE_NULL)
			return &pairs[i];
	return NULL;
}

static int rmpi_pair_wide(MPI_Datatype t)
{
	return t != MPI_DATATYPE_NULL &&
	       (t == MPI_LONG_INT || t == MPI_DOUBLE_INT || t == MPI_LONG_DOUBLE_INT);
}

/* -1, 0, 1 as value @a is below, equal to, above value @b (at offset 0 of each) */
static int rmpi_pair_cmp(const struct rmpi_pair *p, const unsigned char *a,
			 const unsigned char *b)
{
	int ia, ib;
	float fa, fb;
	short sa, sb;

	switch (p->kind) {
	case RMPI_PAIR_INT:
		memcpy(&ia, a, sizeof(ia));
		memcpy(&ib, b, sizeof(ib));
		return (ia > ib) - (ia < ib);
	case RMPI_PAIR_FLOAT:
		memcpy(&fa, a, sizeof(fa));
		memcpy(&fb, b, sizeof(fb));
		return (fa > fb) - (fa < fb);
	case RMPI_PAIR_SHORT:
		memcpy(&sa, a, sizeof(sa));
		memcpy(&sb, b, sizeof(sb));
		return (sa > sb) - (sa < sb);
	}
	return 0;
}

/*
 * @word (the target's 8 bytes) op= @in (value and index members, the same
 * layout), as MPI defines MINLOC and MAXLOC: the smaller (larger) value
 * wins, a tie takes the smaller index.  The padding of @word is kept.
 */
static void rmpi_pair_combine(const struct rmpi_pair *p, MPI_Op op, unsigned char *word,
			      const unsigned char *in)
{
	int c, iw, ii;

	if (op == MPI_REPLACE) {
		memcpy(word, in, p->vsize);
		memcpy(word + 4, in + 4, sizeof(int));
		return;
	}
	if (op == MPI_NO_OP)
		return;
	c = rmpi_pair_cmp(p, in, word);
	memcpy(&iw, word + 4, sizeof(iw));
	memcpy(&ii, in + 4, sizeof(ii));
	if ((op == MPI_MINLOC && c < 0) || (op == MPI_MAXLOC && c > 0)) {
		memcpy(word, in, p->vsize);
		memcpy(word + 4, &ii, sizeof(ii));
	} else if (c == 0 && ii < iw) {
		memcpy(word + 4, &ii, sizeof(ii));
	}
}

/*
 * A pair element's value and index members at @c: their offsets in *@v
 * and *@i.  Return: 0, or -1 if they are not where a pair's members are
 * (the value 4 bytes before the index, whole in the layout's blocks).
 */
static int rmpi_pair_take(struct rmpi_cursor *c, const struct rmpi_pair *p, MPI_Aint *v,
			  MPI_Aint *i)
{
	if (c->i >= c->l->n || rmpi_cur_avail(c) < p->vsize)
		return -1;
	*v = rmpi_cur_off(c);
	rmpi_cur_advance(c, p->vsize);
	if (c->i >= c->l->n || rmpi_cur_avail(c) < (MPI_Aint)sizeof(int))
		return -1;
	*i = rmpi_cur_off(c);
	rmpi_cur_advance(c, sizeof(int));
	return *i == *v + 4 ? 0 : -1;
}

/* One pair element: target word at @toff op= @in; its old members to @res. */
static int rmpi_pair_one(struct rmpi_rma *r, const unsigned char *in, void *res_v,
			 void *res_i, size_t toff)
{
	const struct rmpi_pair *p = r->pair;
	struct rmawin_win *rw = r->w->rw;
	int t = r->a->target, err, tries;
	uint64_t cur, want, prev;

	err = rmawin_fetch_and_op(rw, &cur, &cur, RMAWIN_UINT64, t, toff, RMAWIN_NO_OP);
	rmpi_debug_misaligned(r->w, err, RMAWIN_UINT64, (MPI_Aint)toff);
	err = err ? err : rmawin_flush(rw, t);
	for (tries = 0; !err; tries++) {
		want = cur;
		rmpi_pair_combine(p, r->a->op, (unsigned char *)&want, in);
		if (want == cur)	/* nothing to write: a read is atomic */
			break;
		err = rmawin_compare_and_swap(rw, &want, &cur, &prev, RMAWIN_UINT64, t, toff);
		err = err ? err : rmawin_flush(rw, t);
		if (!err && prev == cur)
			break;
		cur = prev;
		if (tries > 1000000)
			err = -EAGAIN;
	}
	if (!err && res_v) {
		memcpy(res_v, &cur, p->vsize);
		memcpy(res_i, (unsigned char *)&cur + 4, sizeof(int));
	}
	return err;
}

/* Walk a pair-type accumulate element by element; an MPI error class. */
static int rmpi_pair_walk(struct rmpi_rma *r)
{
	struct rmpi_cursor co = { &r->lo, 0, 0 }, cr = { &r->lr, 0, 0 }, ct = { &r->lt, 0, 0 };
	const struct rmpi_pair *p = r->pair;
	int use_res = r->a->kind == RMPI_GET_ACC;
	unsigned char in[8] = { 0 };
	MPI_Aint tv, ti, ov, oi, rv = 0, ri = 0;
	int err;

	/* outside a lock or lock_all epoch to the target: nothing is issued */
	err = rmawin_flush(r->w->rw, r->a->target);
	if (err) {
		rmpi_debug("MINLOC/MAXLOC pairs need a passive-target epoch: %s",
			   rmawin_strerror(err));
		return err == -EINVAL ? MPI_ERR_ARG : MPI_ERR_RMA_SYNC;
	}
	while (ct.i < r->lt.n && !err) {
		if (rmpi_pair_take(&ct, p, &tv, &ti))
			return MPI_ERR_TYPE;
		if (r->tbase + tv < 0)
			return MPI_ERR_RMA_RANGE;
		if (r->use_origin) {
			if (rmpi_pair_take(&co, p, &ov, &oi))
				return MPI_ERR_TYPE;
			memcpy(in, rmpi_addr(r->a->origin, ov), p->vsize);
			memcpy(in + 4, rmpi_addr(r->a->origin, oi), sizeof(int));
		}
		if (use_res && rmpi_pair_take(&cr, p, &rv, &ri))
			return MPI_ERR_TYPE;
		err = rmpi_pair_one(r, in, use_res ? rmpi_addr(r->a->result, rv) : NULL,
				    use_res ? rmpi_addr(r->a->result, ri) : NULL,
				    (size_t)(r->tbase + tv));
	}
	if (err)
		rmpi_debug("MINLOC/MAXLOC to %d: %s", r->a->target, rmawin_strerror(err));
	return rmpi_errclass(err);
}

/* The element type and op of an accumulate: one predefined type throughout. */
static int rmpi_rma_acc_type(struct rmpi_rma *r)
{
	MPI_Datatype basic = r->lt.basic;
	int err;

	if (r->lt.mixed || (r->use_origin && (r->lo.mixed || r->lo.basic != basic)))
		return MPI_ERR_TYPE;
	if (r->a->kind == RMPI_GET_ACC && (r->lr.mixed || r->lr.basic != basic))
		return MPI_ERR_TYPE;
	if (basic == MPI_DATATYPE_NULL)
		return MPI_SUCCESS;	/* nothing to do */
	r->pair = rmpi_pair_type(basic);
	if (r->pair) {
		if (r->a->op == MPI_MINLOC || r->a->op == MPI_MAXLOC ||
		    r->a->op == MPI_REPLACE || r->a->op == MPI_NO_OP)
			return MPI_SUCCESS;
		return MPI_ERR_TYPE;	/* the other ops are not defined on pairs */
	}
	if (rmpi_pair_wide(basic))
		rmpi_debug("%s on a 16-byte pair type: rmawin has no 16-byte compare-and-swap",
			   r->a->op == MPI_MINLOC ? "MINLOC" :
			   r->a->op == MPI_MAXLOC ? "MAXLOC" : "an accumulate");
	err = rmpi_type_to_rmawin(basic, &r->rt, &r->esize);
	if (err == MPI_SUCCESS)
		err = rmpi_op_to_rmawin(r->a->op, r->rt, &r->ro);
	else if (r->a->op != MPI_MINLOC && r->a->op != MPI_MAXLOC &&
		 rmpi_op_to_rmawin(r->a->op, RMAWIN_INT8, &r->ro) != MPI_SUCCESS)
		err = MPI_ERR_OP;	/* a bad op is the first thing wrong */
	return err;
}

/* Layouts and their consistency; MPI error class. */
static int rmpi_rma_prepare(struct rmpi_rma *r)
{
	const struct rmpi_args *a = r->a;
	MPI_Aint tbytes;
	int err;

	err = rmpi_layout_build(a->ttype, a->tcount, &r->lt);
	if (err == MPI_SUCCESS && r->use_origin)
		err = rmpi_layout_build(a->otype, a->ocount, &r->lo);
	if (err == MPI_SUCCESS && a->kind == RMPI_GET_ACC)
		err = rmpi_layout_build(a->rtype, a->rcount, &r->lr);
	if (err != MPI_SUCCESS)
		return err;
	tbytes = rmpi_layout_bytes(&r->lt);
	if ((r->use_origin && rmpi_layout_bytes(&r->lo) != tbytes) ||
	    (a->kind == RMPI_GET_ACC && rmpi_layout_bytes(&r->lr) != tbytes))
		return MPI_ERR_TYPE;	/* the type signatures differ */
	r->esize = 1;
	if (a->kind == RMPI_ACC || a->kind == RMPI_GET_ACC)
		err = rmpi_rma_acc_type(r);
	if (err == MPI_SUCCESS && !r->pair && (r->lo.n > 1 || r->lr.n > 1 || r->lt.n > 1))
		r->batch = r->w->grp->batch;
	return err;
}

/* Check, flatten and issue one call on an rmawin window; raises errors. */
static int rmpi_rma(struct rmpi_win *w, const struct rmpi_args *a)
{
	struct rmpi_rma r = { .a = a, .w = w };
	int code, err;

	if (a->target == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (a->target < 0 || a->target >= w->nranks)
		return rmpi_win_raise(w->win, MPI_ERR_RANK);
	if (a->ocount < 0 || a->rcount < 0 || a->tcount < 0)
		return rmpi_win_raise(w->win, MPI_ERR_COUNT);
	r.use_origin = !(a->kind == RMPI_GET_ACC && a->op == MPI_NO_OP);
	r.tbase = a->disp * w->disp_units[a->target];
	code = rmpi_rma_prepare(&r);
	if (code == MPI_SUCCESS && r.pair) {
		code = rmpi_pair_walk(&r);
	} else if (code == MPI_SUCCESS) {
		err = rmpi_rma_walk(&r);
		code = rmpi_errclass(err);
		if (err)
			rmpi_debug("rma to %d: %s", a->target, rmawin_strerror(err));
	}
	rmpi_layout_free(&r.lo);
	rmpi_layout_free(&r.lr);
	rmpi_layout_free(&r.lt);
	return rmpi_win_raise(w->win, code);
}

int MPI_Put(const void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
	    int tcount, MPI_Datatype ttype, MPI_Win win)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	struct rmpi_args a = { .kind = RMPI_PUT, .origin = origin, .ocount = ocount,
			       .otype = otype, .target = target, .disp = disp,
			       .tcount = tcount, .ttype = ttype };

	if (!w)
		return PMPI_Put(origin, ocount, otype, target, disp, tcount, ttype, win);
	return rmpi_rma(w, &a);
}

int MPI_Get(void *origin, int ocount, MPI_Datatype otype, int target, MPI_Aint disp,
	    int tcount, MPI_Datatype ttype, MPI_Win win)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	struct rmpi_args a = { .kind = RMPI_GET, .origin = origin, .ocount = ocount,
			       .otype = otype, .target = target, .disp = disp,
			       .tcount = tcount, .ttype = ttype };

	if (!w)
		return PMPI_Get(origin, ocount, otype, target, disp, tcount, ttype, win);
	return rmpi_rma(w, &a);
}

int MPI_Accumulate(const void *origin, int ocount, MPI_Datatype otype, int target,
		   MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	struct rmpi_args a = { .kind = RMPI_ACC, .origin = origin, .ocount = ocount,
			       .otype = otype, .target = target, .disp = disp,
			       .tcount = tcount, .ttype = ttype, .op = op };

	if (!w)
		return PMPI_Accumulate(origin, ocount, otype, target, disp, tcount, ttype, op,
				       win);
	return rmpi_rma(w, &a);
}

int MPI_Get_accumulate(const void *origin, int ocount, MPI_Datatype otype, void *result,
		       int rcount, MPI_Datatype rtype, int target, MPI_Aint disp, int tcount,
		       MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
	struct rmpi_win *w = rmpi_win_lookup(win);
	struct rmpi_args a = { .kind = RMPI_GET_ACC, .origin = origin, .ocount = ocount,
			       .otype = otype, .result = result, .rcount = rcount,
			       .rtype = rtype, .target = target, .disp = disp,
			       .tcount = tcount, .ttype = ttype, .op = op };

	if (!w)
		return PMPI_Get_accumulate(origin, ocount, otype, result, rcount, rtype, target,
					   disp, tcount, ttype, op, win);
	return rmpi_rma(w, &a);
}

/* fetch_and_op and compare_and_swap: one predefined element */
static int rmpi_atomic(struct rmpi_win *w, const void *origin, const void *compare,
		       void *result, MPI_Datatype type, int target, MPI_Aint disp, MPI_Op op)
{
	enum rmawin_type rt;
	enum rmawin_op ro = RMAWIN_NO_OP;
	int code, size, err;

	if (target == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (target < 0 || target >= w->nranks)
		return rmpi_win_raise(w->win, MPI_ERR_RANK);
	if (!compare && rmpi_pair_type(type)) {
		struct rmpi_args a = { .kind = RMPI_GET_ACC, .origin = origin, .ocount = 1,
				       .otype = type, .result = result, .rcount = 1,
				       .rtype = type, .target = target, .disp = disp,
				       .tcount = 1, .ttype = type, .op = op };

		return rmpi_rma(w, &a);
	}
	code = rmpi_type_to_rmawin(type, &rt, &size);
	if (code == MPI_SUCCESS && !compare)
		code = rmpi_op_to_rmawin(op, rt, &ro);
	if (code != MPI_SUCCESS)
		return rmpi_win_raise(w->win, code);
	disp *= w->disp_units[target];
	if (disp < 0)
		return rmpi_win_raise(w->win, MPI_ERR_RMA_RANGE);
	if (compare)
		err = rmawin_compare_and_swap(w->rw, origin, compare, result, rt, target,
					      (size_t)disp);
	else
		err = rmawin_fetch_and_op(w->rw, ro == RMAWIN_NO_OP ? result : origin, result,
					  rt, target, (size_t)disp, ro);
	if (err)
		rmpi_debug("atomic to %d: %s", target, rmawin_strerror(err));
	rmpi_debug_misaligned(w, err, rt, disp);
	return rmpi_win_raise(w->win, rmpi_errclass(err));
}

int MPI_Fetch_and_op(const void *origin, void *result, MPI_Datatype type, int target,
		     MPI_Aint disp, MPI_Op op, MPI_Win win)
{
	struct rmpi_win *w = rmpi_win_lookup(win);

	if (!w)
		return PMPI_Fetch_and_op(origin, result, type, target, disp, op, win);
	return rmpi_atomic(w, origin, NULL, result, type, target, disp, op);
}

int MPI_Compare_and_swap(const void *origin, const void *compare, void *result,
			 MPI_Datatype type, int target, MPI_Aint disp, MPI_Win win)
{
	struct rmpi_win *w = rmpi_win_lookup(win);

	if (!w)
		return PMPI_Compare_and_swap(origin, compare, result, type, target, disp, win);
	if (!compare)
		return rmpi_win_raise(win, MPI_ERR_BUFFER);
	return rmpi_atomic(w, origin, compare, result, type, target, disp, MPI_NO_OP);
}
