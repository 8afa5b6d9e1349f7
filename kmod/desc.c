// SPDX-License-Identifier: GPL-2.0
/*
 * rmawin: window descriptors.  When a window is created every rank sends
 * every other its shape (length, displacement unit, and per region the
 * iova and rkey), in fragments of at most RMAWIN_DESC_PER_MSG regions, and
 * waits for all of theirs.  A peer may send its descriptor before this
 * rank creates the window, so what arrives goes into a table per window
 * handle, kept by the group until the window takes it.
 *
 * Everything here comes from a peer and is checked before use: the
 * handle must be the window being created or the next, each fragment must
 * agree with the first, the regions must cover exactly the window, and
 * nothing is allocated beyond RMAWIN_WIN_MAX_MRS regions.
 */
#include <linux/math64.h>
#include <linux/slab.h>
#include <linux/overflow.h>

#include "window.h"

static struct rmawin_win_table *rmawin_table_get(struct rmawin_group *grp, u32 id)
{
	struct rmawin_win_table *tbl, *old;

	tbl = xa_load(&grp->tables, id);
	if (tbl)
		return tbl;
	tbl = kzalloc(sizeof(*tbl), GFP_KERNEL_ACCOUNT);
	if (!tbl)
		return NULL;
	tbl->remote = kvcalloc(grp->nranks, sizeof(*tbl->remote), GFP_KERNEL_ACCOUNT);
	if (!tbl->remote) {
		kfree(tbl);
		return NULL;
	}
	old = xa_cmpxchg(&grp->tables, id, NULL, tbl, GFP_KERNEL_ACCOUNT);
	if (old) {
		kvfree(tbl->remote);
		kfree(tbl);
		return xa_is_err(old) ? NULL : old;
	}
	return tbl;
}

/**
 * rmawin_desc_self() - this rank's own window, as a peer's descriptor gives it
 * @win: the window, registered
 *
 * For what reaches our own window through the device (atomic.c): the
 * regions as complete as a peer's table entry once its descriptor arrived.
 *
 * Return: the description, to free with rmawin_desc_self_free(), or NULL.
 */
struct rmawin_remote *rmawin_desc_self(struct rmawin_win *win)
{
	struct rmawin_remote *r;
	u32 i;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return NULL;
	r->length = win->length;
	r->disp_unit = win->disp_unit;
	r->page_off = rmawin_win_block_off(win);
	r->chunk = rmawin_win_chunk_bytes(win);
	r->nmrs = win->nchunks;
	r->mrs = kvcalloc(r->nmrs, sizeof(*r->mrs), GFP_KERNEL_ACCOUNT);
	if (r->nmrs && !r->mrs) {
		kfree(r);
		return NULL;
	}
	for (i = 0; i < r->nmrs; i++) {
		r->mrs[i].iova = win->chunks[i].mr->iova;
		r->mrs[i].rkey = win->chunks[i].mr->rkey;
	}
	r->got = r->nmrs;
	r->done = true;
	return r;
}

void rmawin_desc_self_free(struct rmawin_remote *r)
{
	if (!r)
		return;
	kvfree(r->mrs);
	kfree(r);
}

/**
 * rmawin_table_free() - free a window's descriptor table
 * @grp: the group
 * @tbl: the table, or NULL
 */
void rmawin_table_free(struct rmawin_group *grp, struct rmawin_win_table *tbl)
{
	u32 i;

	if (!tbl)
		return;
	for (i = 0; i < grp->nranks; i++)
		kvfree(tbl->remote[i].mrs);
	kvfree(tbl->remote);
	kfree(tbl);
}

/**
 * rmawin_tables_free() - free descriptor tables no window took
 * @grp: the group, being destroyed
 */
void rmawin_tables_free(struct rmawin_group *grp)
{
	struct rmawin_win_table *tbl;
	unsigned long id;

	xa_for_each(&grp->tables, id, tbl)
		rmawin_table_free(grp, tbl);
	xa_destroy(&grp->tables);
}

/* The first fragment of a descriptor: the window's shape. */
static int rmawin_desc_start(struct rmawin_remote *r, const struct rmawin_wire_desc *d)
{
	u64 length = le64_to_cpu(d->length), chunk = le64_to_cpu(d->chunk);
	u32 page_off = le32_to_cpu(d->page_off), nmrs = le32_to_cpu(d->nmrs);
	s32 status = le32_to_cpu(d->status);

	if (status) {
		/* the owner's creation failed: a negative errno and nothing else */
		if (status > 0 || status < -MAX_ERRNO || nmrs || d->count || d->first ||
		    d->length || d->chunk || d->disp_unit || d->page_off || d->flags ||
		    d->inbox_rkey || d->inbox)
			return -EPROTO;
		r->disp_unit = 0;	/* marks the peer's failure */
		r->done = true;
		return 0;
	}
	if (!d->disp_unit || length > RMAWIN_WIN_MAX || chunk < PAGE_SIZE ||
	    chunk > RMAWIN_WIN_MAX || page_off >= chunk || d->first)
		return -EPROTO;
	/* an inbox or none; its address and key are the owner's to choose */
	if (d->flags & ~cpu_to_le32(RMAWIN_WIRE_DESC_INBOX) ||
	    (!d->flags && (d->inbox_rkey || d->inbox)))
		return -EPROTO;
	/*
	 * Exactly the regions that cover the window: every offset finds one.
	 * The chunk may exceed 32 bits: a 64-bit divisor (do_div() would
	 * truncate it, and a multiple of 2^32 divided by zero).
	 */
	if (nmrs > RMAWIN_WIN_MAX_MRS ||
	    nmrs != (length ? DIV64_U64_ROUND_UP(page_off + length, chunk) : 0))
		return -EPROTO;
	r->length = length;
	r->chunk = chunk;
	r->disp_unit = le32_to_cpu(d->disp_unit);
	r->page_off = page_off;
	r->nmrs = nmrs;
	r->has_inbox = !!d->flags;
	r->inbox = le64_to_cpu(d->inbox);
	r->inbox_rkey = le32_to_cpu(d->inbox_rkey);
	if (nmrs) {
		r->mrs = kvcalloc(nmrs, sizeof(*r->mrs), GFP_KERNEL_ACCOUNT);
		if (!r->mrs)
			return -ENOMEM;
	}
	return 0;
}

/* Check one fragment against what earlier ones said; fill it in. */
static int rmawin_desc_apply(struct rmawin_remote *r, const struct rmawin_wire_desc *d,
			     u16 len)
{
	u32 first = le32_to_cpu(d->first), count = le32_to_cpu(d->count), i;
	int ret;

	if (r->done || count > RMAWIN_DESC_PER_MSG ||
	    len != sizeof(*d) + count * sizeof(d->mr[0]))
		return -EPROTO;
	if (!r->got && !r->nmrs) {
		ret = rmawin_desc_start(r, d);
		if (ret || r->done)
			return ret;
	} else if (le32_to_cpu(d->nmrs) != r->nmrs || le64_to_cpu(d->length) != r->length ||
		   le64_to_cpu(d->chunk) != r->chunk || le32_to_cpu(d->page_off) != r->page_off ||
		   le32_to_cpu(d->disp_unit) != r->disp_unit || d->status ||
		   !!d->flags != r->has_inbox || le64_to_cpu(d->inbox) != r->inbox ||
		   le32_to_cpu(d->inbox_rkey) != r->inbox_rkey) {
		return -EPROTO;
	}
	/* fragments come in order, each region once */
	if (first != r->got || count > r->nmrs - r->got || (!count && r->nmrs))
		return -EPROTO;
	for (i = 0; i < count; i++) {
		if (d->mr[i].pad)
			return -EPROTO;
		r->mrs[first + i].iova = le64_to_cpu(d->mr[i].iova);
		r->mrs[first + i].rkey = le32_to_cpu(d->mr[i].rkey);
	}
	r->got += count;
	r->done = r->got == r->nmrs;
	return 0;
}

/*
 * Descriptors a peer may send us now: creation is collective and ordered,
 * and a peer finishes creating window w only with our descriptor of w, so
 * it can be at most one window ahead of the one we create, and never
 * sends a window's descriptor again.
 */
static bool rmawin_desc_id_ok(struct rmawin_group *grp, u32 id)
{
	u32 next = READ_ONCE(grp->ep->next_win);

	/* and none for a window whose descriptors are all in already */
	return id >= READ_ONCE(grp->desc_floor) && id + 2 >= next && id <= next + 1;
}

/**
 * rmawin_win_desc_recv() - a fragment of a peer's window descriptor
 * @peer: the sender
 * @win_id: the window handle
 * @p: struct rmawin_wire_desc
 * @len: payload bytes
 *
 * Context: the receive work (recv.c); may sleep.
 * Return: 0, -EPROTO, -ENOMEM.
 */
int rmawin_win_desc_recv(struct rmawin_peer *peer, u32 win_id, const void *p, u16 len)
{
	struct rmawin_group *grp = peer->grp;
	struct rmawin_win_table *tbl;
	struct rmawin_remote *r;
	int ret;

	if (!rmawin_desc_id_ok(grp, win_id))
		return -EPROTO;
	tbl = rmawin_table_get(grp, win_id);
	if (!tbl)
		return -ENOMEM;
	/*
	 * The window may have taken its complete table and raised the floor
	 * since the check above, and the lookup then made a fresh table: a
	 * descriptor sent twice would fill it.  Pairs with the barrier in
	 * rmawin_win_exchange_descs(): a lookup that missed the table sees
	 * the raised floor.  The stray table goes with the group.
	 */
	smp_rmb();	/* the table's lookup before the floor's */
	if (win_id < READ_ONCE(grp->desc_floor))
		return -EPROTO;
	r = &tbl->remote[peer->rank];
	/* a peer sends one descriptor per window, in order: fragments never race */
	ret = rmawin_desc_apply(r, p, len);
	if (ret)
		return ret;
	if (r->done) {
		spin_lock_irq(&grp->lock);
		tbl->complete++;
		spin_unlock_irq(&grp->lock);
		wake_up_all(&grp->ep->wq);
	}
	return 0;
}

/* Fill @d with the window's shape, or only @status if its creation failed. */
static u32 rmawin_desc_fill(struct rmawin_win *win, struct rmawin_wire_desc *d, int status)
{
	struct ib_mr *inbox = win->ep->group->inbox.mr;

	memset(d, 0, sizeof(*d));
	if (status) {
		d->status = cpu_to_le32(status);
		return 0;
	}
	d->length = cpu_to_le64(win->length);
	d->chunk = cpu_to_le64(rmawin_win_chunk_bytes(win));
	d->disp_unit = cpu_to_le32(win->disp_unit);
	d->page_off = cpu_to_le32(rmawin_win_block_off(win));
	d->nmrs = cpu_to_le32(win->nchunks);
	if (inbox) {
		d->flags = cpu_to_le32(RMAWIN_WIRE_DESC_INBOX);
		d->inbox_rkey = cpu_to_le32(inbox->rkey);
		d->inbox = cpu_to_le64(inbox->iova);
	}
	return win->nchunks;
}

static int rmawin_win_send_desc(struct rmawin_win *win, int status)
{
	struct rmawin_group *grp = win->ep->group;
	struct rmawin_wire_desc *d;
	u32 i, first = 0, k, nmrs, count;
	int ret = 0;

	d = kzalloc(RMAWIN_MSG_MAX_PAYLOAD, GFP_KERNEL_ACCOUNT);
	if (!d)
		return -ENOMEM;
	nmrs = rmawin_desc_fill(win, d, status);
	do {
		count = min_t(u32, nmrs - first, RMAWIN_DESC_PER_MSG);
		d->first = cpu_to_le32(first);
		d->count = cpu_to_le32(count);
		for (k = 0; k < count; k++) {
			struct ib_mr *mr = win->chunks[first + k].mr;

			d->mr[k].iova = cpu_to_le64(mr->iova);
			d->mr[k].rkey = cpu_to_le32(mr->rkey);
			d->mr[k].pad = 0;
		}
		for (i = 0; i < grp->nranks && !ret; i++)
			if (i != grp->rank)
				ret = rmawin_msg_send(&grp->peers[i], RMAWIN_MSG_WIN_DESC,
						      win->id, d, sizeof(*d) +
						      count * sizeof(d->mr[0]));
		first += count;
	} while (!ret && first < nmrs);
	kfree(d);
	return ret;
}

/*
 * A peer that failed before its descriptor was all in, or NULL.  Only such
 * a peer fails the creation: one that sent its descriptor and then left
 * (it finished creating the window and closed its endpoint) takes nothing
 * from us, and the others' descriptors may still be on their way.
 */
static struct rmawin_peer *rmawin_descs_lost(struct rmawin_group *grp,
					     struct rmawin_win_table *tbl)
{
	u32 i;

	for (i = 0; i < grp->nranks; i++)
		if (i != grp->rank && !READ_ONCE(tbl->remote[i].done) &&
		    READ_ONCE(grp->peers[i].state) == RMAWIN_PEER_FAILED)
			return &grp->peers[i];
	return NULL;
}

static bool rmawin_descs_done(struct rmawin_group *grp, struct rmawin_win_table *tbl)
{
	return READ_ONCE(tbl->complete) == grp->nranks - 1 || READ_ONCE(grp->ep->dev->dead) ||
	       rmawin_descs_lost(grp, tbl);
}

/* Wait for every peer's descriptor; a peer that failed without sending it fails us. */
static int rmawin_win_wait_descs(struct rmawin_win *win)
{
	struct rmawin_group *grp = win->ep->group;
	struct rmawin_peer *lost;
	u32 i;

	/* the window is not @ready: no other thread reaches it meanwhile */
	if (rmawin_wait_unlocked(grp->ep, NULL, rmawin_descs_done(grp, win->tbl)))
		return -EINTR;
	if (READ_ONCE(grp->ep->dev->dead))
		return -ENODEV;
	if (READ_ONCE(win->tbl->complete) != grp->nranks - 1) {
		lost = rmawin_descs_lost(grp, win->tbl);
		return (lost ? READ_ONCE(lost->error) : 0) ?: -ECONNRESET;
	}
	for (i = 0; i < grp->nranks; i++)
		if (i != grp->rank && !win->tbl->remote[i].disp_unit)
			return -EREMOTEIO;
	return 0;
}

/**
 * rmawin_win_exchange_descs() - tell the peers of a new window, learn theirs
 * @win: the window, set up locally or not (@status)
 * @status: 0, or the negative errno of the local setup, which the peers
 *	are told instead of the window's shape, so that nobody waits forever
 *
 * On success the window takes its table (@win->tbl): a complete table gets
 * no more messages.  Otherwise a late descriptor may still come: the group
 * keeps the table and frees it with itself.
 *
 * Context: in a collective call (rmawin_coll_lock()); waits killably for
 * the peers, without the endpoint's lock.
 * Return: @status if it is an error; else 0, -ENOMEM, the error of
 * sending, -EINTR, -ENODEV, the error of a peer that failed before its
 * descriptor was in (-ECONNRESET), or -EREMOTEIO if a peer's creation
 * failed.
 */
int rmawin_win_exchange_descs(struct rmawin_win *win, int status)
{
	struct rmawin_group *grp = win->ep->group;
	int ret;

	lockdep_assert_held(&win->ep->lock);
	lockdep_assert_held(&win->ep->coll);
	/* the descriptor tells of the inbox: it exists from the first window on */
	if (!status)
		status = rmawin_inbox_setup(grp);
	win->tbl = rmawin_table_get(grp, win->id);
	ret = win->tbl ? rmawin_win_send_desc(win, status) : -ENOMEM;
	ret = status ?: ret;
	if (!ret)
		ret = rmawin_win_wait_descs(win);
	if (!ret) {
		WRITE_ONCE(grp->desc_floor, win->id + 1);
		smp_wmb();	/* the floor before the erase: rmawin_win_desc_recv() */
		xa_erase(&grp->tables, win->id);
	} else {
		win->tbl = NULL;
	}
	return ret;
}
