// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Synchronization, with MPI's meaning: fence, post/start/complete/wait/test
 * (active target) and lock/unlock/flush/sync (passive target).  Each first
 * drains what the ring holds of this endpoint's queued operations, so the
 * kernel has seen them; the calls that complete operations (fence,
 * complete, unlock, flush) then return the first error of one that was
 * queued, if any, before their own; and every call keeps the library's view
 * of the window's epochs (epoch.c) in step.  A lock only noted (lazy.c) is
 * taken before any other synchronization of its window, whose result is
 * then that of the lock if it failed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rmawin_priv.h"

int rmawin_fence(struct rmawin_win *win, unsigned int assert_flags)
{
	struct rmawin_fence f;
	int ret, late;

	if (!win)
		return -EINVAL;
	/* collective: the fence goes on even if a noted lock could not be taken */
	late = rmawin__lazy_settle(win);
	rmawin__ring_drain(win->ep);
	memset(&f, 0, sizeof(f));
	f.flags = assert_flags;
	f.win = win->id;
	ret = rmawin__ioctl_struct(win->ep->fd, RMAWIN_IOC_FENCE, &f);
	rmawin__epoch_fence(win, assert_flags, ret);
	return late ?: rmawin__win_result(win, ret);
}

/* POST and START: the group as __u32 ranks, as the ABI wants them. */
static int rmawin_pscw_group(struct rmawin_win *win, unsigned long req, const int *ranks, int n)
{
	struct rmawin_pscw p;
	uint32_t *u;
	int i, ret;

	if (!win || !ranks || n < 1)
		return -EINVAL;
	ret = rmawin__lazy_settle(win);
	if (ret)
		return ret;
	u = calloc(n, sizeof(*u));
	if (!u)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (ranks[i] < 0) {
			free(u);
			return -EINVAL;
		}
		u[i] = ranks[i];
	}
	rmawin__ring_drain(win->ep);
	memset(&p, 0, sizeof(p));
	p.win = win->id;
	p.n = n;
	p.ranks_ptr = (uintptr_t)u;
	ret = rmawin__ioctl_struct(win->ep->fd, req, &p);
	if (req == RMAWIN_IOC_START) {
		rmawin__epoch_start(win, u, n, ret);
		/* its first small operation may go in its COMPLETE (lazy.c) */
		if (!ret && n == 1)
			rmawin__carry_arm(win, u[0]);
	}
	free(u);
	return ret;
}

int rmawin_post(struct rmawin_win *win, const int *origins, int n)
{
	return rmawin_pscw_group(win, RMAWIN_IOC_POST, origins, n);
}

int rmawin_start(struct rmawin_win *win, const int *targets, int n)
{
	return rmawin_pscw_group(win, RMAWIN_IOC_START, targets, n);
}

static int rmawin_pscw_end(struct rmawin_win *win, unsigned long req, uint32_t flags,
			   uint32_t *done)
{
	struct rmawin_pscw p;
	int ret;

	if (!win)
		return -EINVAL;
	ret = rmawin__lazy_settle(win);
	if (ret)
		return ret;
	rmawin__ring_drain(win->ep);
	memset(&p, 0, sizeof(p));
	p.flags = flags;
	p.win = win->id;
	ret = rmawin__ioctl_struct(win->ep->fd, req, &p);
	if (done)
		*done = p.done;
	return ret;
}

int rmawin_complete(struct rmawin_win *win)
{
	int ret;

	/* the epoch's kept operation, in the COMPLETE (lazy.c) */
	if (!win || !rmawin__carry_complete(win, &ret))
		ret = rmawin_pscw_end(win, RMAWIN_IOC_COMPLETE, 0, NULL);
	if (!win)
		return ret;
	rmawin__epoch_complete(win, ret);
	return rmawin__win_result(win, ret);
}

int rmawin_wait(struct rmawin_win *win)
{
	return rmawin_pscw_end(win, RMAWIN_IOC_WAIT, 0, NULL);
}

int rmawin_test(struct rmawin_win *win)
{
	uint32_t done = 0;
	int ret = rmawin_pscw_end(win, RMAWIN_IOC_WAIT, RMAWIN_WAIT_TEST, &done);

	return ret ? ret : (int)done;
}

/**
 * rmawin__passive_ioctl() - RMAWIN_IOC_LOCK, _UNLOCK or _FLUSH, nothing more
 * @win: the window
 * @req: the ioctl
 * @target: a rank or RMAWIN_ALL_RANKS
 * @type: LOCK: RMAWIN_LOCK_TYPE_*; else 0
 * @flags: LOCK: 0 or RMAWIN_LOCK_F_OTHERS; else 0
 *
 * The ring is emptied first, so that the call comes after what it holds.
 * Return: 0 or the kernel's -errno.
 */
int rmawin__passive_ioctl(struct rmawin_win *win, unsigned long req, uint32_t target,
			  uint32_t type, uint32_t flags)
{
	struct rmawin_passive p;

	rmawin__ring_drain(win->ep);
	memset(&p, 0, sizeof(p));
	p.flags = flags;
	p.win = win->id;
	p.target = target;
	p.type = type;
	return rmawin__ioctl_struct(win->ep->fd, req, &p);
}

static int rmawin_passive(struct rmawin_win *win, unsigned long req, uint32_t target,
			  uint32_t type)
{
	int ret;

	if (!win)
		return -EINVAL;
	ret = rmawin__lazy_settle(win);
	if (ret)
		return ret;
	ret = rmawin__passive_ioctl(win, req, target, type, 0);
	if (req == RMAWIN_IOC_LOCK)
		rmawin__epoch_lock(win, target, ret);
	else if (req == RMAWIN_IOC_UNLOCK)
		rmawin__epoch_unlock(win, target, ret);
	/* unlock and flush complete operations: theirs the queued errors */
	return req == RMAWIN_IOC_LOCK ? ret : rmawin__win_result(win, ret);
}

/* A negative rank must not alias RMAWIN_ALL_RANKS: send one the kernel refuses. */
static uint32_t rmawin_rank_arg(int target)
{
	return target < 0 ? RMAWIN_ALL_RANKS - 1 : (uint32_t)target;
}

int rmawin_lock(struct rmawin_win *win, enum rmawin_lock_type type, int target)
{
	uint32_t t = rmawin_rank_arg(target), lt;
	int ret;

	if (!win || (unsigned int)type > RMAWIN_LOCK_EXCLUSIVE)
		return -EINVAL;
	lt = type == RMAWIN_LOCK_EXCLUSIVE ? RMAWIN_LOCK_TYPE_EXCLUSIVE : RMAWIN_LOCK_TYPE_SHARED;
	/* noted only, on a lazy window (lazy.c) */
	ret = rmawin__lazy_lock(win, lt, t);
	if (ret)
		return ret < 0 ? ret : 0;
	return rmawin_passive(win, RMAWIN_IOC_LOCK, t, lt);
}

int rmawin_unlock(struct rmawin_win *win, int target)
{
	uint32_t t = rmawin_rank_arg(target);
	int res;

	if (win && rmawin__lazy_unlock(win, t, &res))
		return res;
	return rmawin_passive(win, RMAWIN_IOC_UNLOCK, t, 0);
}

int rmawin_lock_all(struct rmawin_win *win)
{
	int ret;

	/* only this rank's own lock taken, on a lazy window (lazy.c) */
	ret = win ? rmawin__lazy_lock_all(win) : 0;
	if (ret)
		return ret < 0 ? ret : 0;
	return rmawin_passive(win, RMAWIN_IOC_LOCK, RMAWIN_ALL_RANKS, RMAWIN_LOCK_TYPE_SHARED);
}

int rmawin_unlock_all(struct rmawin_win *win)
{
	int res;

	if (win && rmawin__lazy_unlock(win, RMAWIN_ALL_RANKS, &res))
		return res;
	return rmawin_passive(win, RMAWIN_IOC_UNLOCK, RMAWIN_ALL_RANKS, 0);
}

/*
 * Nothing to do when the window is quiet (rma.c), which the completions of
 * its queued ring entries may say (RMAWIN_CQE_F_QUIET): they are taken
 * first while the poller is awake, as the ring's flush would wait for them
 * anyway.  Else through the ring (RMAWIN_OP_FLUSH) when there is one: no
 * system call either, or one doorbell for the entries and the flush if the
 * poller sleeps.
 */
static int rmawin_flush_target(struct rmawin_win *win, uint32_t target)
{
	struct rmawin_op_desc op;
	int res, by_ring = 0;

	if (win) {
		/* a kept operation is issued now, under its lock */
		res = rmawin__lazy_settle(win);
		if (res)
			return res;
		/*
		 * By ioctl while the poller yields, as a lone operation goes,
		 * once everything queued has been run and reaped; decided
		 * before the catch-up, so that entries still queued now go
		 * with the flush (one doorbell if the poller falls asleep
		 * meanwhile), not before a RMAWIN_IOC_FLUSH.
		 */
		by_ring = win->ep->ring && !rmawin__ring_bypass(win->ep);
		if (by_ring)
			rmawin__ring_catch_up(win->ep);
	}
	if (win && rmawin__win_quiet(win) && rmawin__flush_allowed(win, target))
		return rmawin__win_result(win, 0);
	if (by_ring) {
		memset(&op, 0, sizeof(op));
		op.opcode = RMAWIN_OP_FLUSH;
		op.win = win->id;
		op.target = target;
		if (rmawin__ring_run(win->ep, &op, 1, &res))
			return rmawin__win_result(win, res);
	}
	return rmawin_passive(win, RMAWIN_IOC_FLUSH, target, 0);
}

int rmawin_flush(struct rmawin_win *win, int target)
{
	return rmawin_flush_target(win, rmawin_rank_arg(target));
}

int rmawin_flush_all(struct rmawin_win *win)
{
	return rmawin_flush_target(win, RMAWIN_ALL_RANKS);
}

/*
 * Local completion: with RC, an operation's completion at the origin is
 * its completion at the target too, so these are the flushes.
 */
int rmawin_flush_local(struct rmawin_win *win, int target)
{
	return rmawin_flush(win, target);
}

int rmawin_flush_local_all(struct rmawin_win *win)
{
	return rmawin_flush_all(win);
}

/*
 * The window's memory is the process's own memory, written by the device
 * with no copy to synchronize: a full barrier orders this thread's loads
 * and stores around it, which is all MPI_Win_sync asks here.
 */
int rmawin_sync(struct rmawin_win *win)
{
	if (!win)
		return -EINVAL;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}
