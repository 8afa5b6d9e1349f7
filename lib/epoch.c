// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * What the library knows of a window's epochs, so that an operation it
 * queues without a system call still gets its argument errors at once:
 * an unknown rank (-EINVAL), a target outside any access epoch (-EPERM), a
 * range beyond the target's window (-ERANGE), an accumulate's op, type,
 * length or buffers that MPI does not allow (-EINVAL), checked in the
 * kernel's order (kmod/ops.c, rmawin_op_check()) and by the kernel's rules
 * (kmod/lock.c, rmawin_epoch_check(); kmod/acc.c, rmawin_acc_check()).
 *
 * The view follows the synchronization calls that succeed.  One that
 * fails may have left the kernel's state anywhere, so the view is then
 * "unknown" and operations on the window go to the kernel synchronously,
 * which judges them itself, until a fence or an unlock_all succeeds:
 * after either, no lock is held and no PSCW access epoch is open,
 * whatever came before.
 *
 * The endpoint's threads share the view under the endpoint's @lock,
 * taken for each check and each update, never across a system call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rmawin_priv.h"

int rmawin__epoch_init(struct rmawin_win *win)
{
	struct rmawin__epoch *e = &win->epoch;

	memset(e, 0, sizeof(*e));
	e->access = calloc(win->ep->nranks, 1);
	e->held = calloc(win->ep->nranks, 1);
	if (!e->access || !e->held) {
		rmawin__epoch_free(win);
		return -ENOMEM;
	}
	return 0;
}

void rmawin__epoch_free(struct rmawin_win *win)
{
	free(win->epoch.access);
	free(win->epoch.held);
	win->epoch.access = NULL;
	win->epoch.held = NULL;
}

/* As the kernel's rmawin_epoch_check(). */
static int rmawin_epoch_allows(const struct rmawin__epoch *e, uint32_t target)
{
	if (e->started)
		return e->access[target];
	if (e->nheld)
		return e->held[target];
	return e->fence_open;
}

/* Element size of an accumulate datatype, 0 for none. */
static uint32_t rmawin_acc_size(uint8_t type)
{
	static const unsigned char sizes[RMAWIN_TYPE_LAST] = { 1, 1, 2, 2, 4, 4, 8, 8, 4, 8 };

	return type < RMAWIN_TYPE_LAST ? sizes[type] : 0;
}

/* As the kernel's rmawin_acc_valid(): floats take no bitwise or logical op. */
static int rmawin_acc_valid(uint8_t op, uint8_t type)
{
	if (op >= RMAWIN_ACC_LAST || !rmawin_acc_size(type))
		return 0;
	if (type != RMAWIN_TYPE_FLOAT && type != RMAWIN_TYPE_DOUBLE)
		return 1;
	return op == RMAWIN_ACC_SUM || op == RMAWIN_ACC_PROD || op == RMAWIN_ACC_MIN ||
	       op == RMAWIN_ACC_MAX || op == RMAWIN_ACC_REPLACE || op == RMAWIN_ACC_NO_OP;
}

/*
 * As the kernel's rmawin_acc_check(), but for the memory checks, which
 * only the transfer makes (their -EFAULT comes at the synchronization).
 */
static int rmawin_acc_args(const struct rmawin_op_desc *op)
{
	uint32_t size = rmawin_acc_size(op->datatype);
	int cas = op->opcode == RMAWIN_OP_CAS;
	int one = op->opcode == RMAWIN_OP_FETCH_OP || cas;

	if (cas ? !size || op->acc_op : !rmawin_acc_valid(op->acc_op, op->datatype))
		return -EINVAL;
	if (!op->len || op->len % size || (one && op->len != size) || op->len > (16U << 20))
		return -EINVAL;
	if ((op->opcode != RMAWIN_OP_ACC) != !!op->result || cas != !!op->compare)
		return -EINVAL;
	return 0;
}

/*
 * As the kernel's rmawin_atomic_check(): on a RMAWIN_WIN_SAME_OP window
 * an 8-byte integer operation goes through the device's atomics, which
 * need it inside one aligned 8-byte word: the target offset a multiple of
 * 8.  Integers of 1, 2 and 4 bytes go there too with
 * RMAWIN_WIN_NIC_SMALL_INTS (on every same_op window, on a kernel with
 * RMAWIN_FEAT_NIC_INT_ATOMICS and without RMAWIN_FEAT_NIC_SMALL_FLAG):
 * their offset a multiple of their size, or the whole operation inside
 * one word.
 */
static const unsigned char rmawin_int_sizes[] = { 1, 1, 2, 2, 4, 4, 8, 8 };

/**
 * rmawin__acc_on_device() - do @win's accumulates of @datatype take the device's atomics?
 * @win: the window
 * @datatype: enum rmawin_datatype
 *
 * Return: 1 if so (the kernel's rmawin_atomic_on()), else 0.
 */
int rmawin__acc_on_device(const struct rmawin_win *win, unsigned int datatype)
{
	if (!(win->flags & RMAWIN_WIN_SAME_OP) || datatype >= sizeof(rmawin_int_sizes))
		return 0;
	return rmawin_int_sizes[datatype] == 8 || win->ep->nic_ints ||
	       (win->flags & RMAWIN_WIN_NIC_SMALL_INTS);
}

static int rmawin_acc_align(const struct rmawin_win *win, const struct rmawin_op_desc *op,
			    uint64_t off)
{
	unsigned int size;

	if (!rmawin__acc_on_device(win, op->datatype))
		return 0;
	size = rmawin_int_sizes[op->datatype];
	return off % size && off % 8 + op->len > 8 ? -EINVAL : 0;
}

/* rmawin__op_check(), under the endpoint's lock */
int rmawin__op_check_locked(const struct rmawin_win *win, const struct rmawin_op_desc *op)
{
	const struct rmawin_win_rank *r;
	uint64_t off, end;

	if (!win->ranks || win->epoch.unknown)
		return 1;
	if (op->target >= (uint32_t)win->ep->nranks)
		return -EINVAL;
	if (!rmawin_epoch_allows(&win->epoch, op->target))
		return -EPERM;
	r = &win->ranks[op->target];
	if (__builtin_mul_overflow(op->target_disp, (uint64_t)r->disp_unit, &off) ||
	    __builtin_add_overflow(off, op->len, &end) || end > r->length)
		return -ERANGE;
	switch (op->opcode) {
	case RMAWIN_OP_PUT:
	case RMAWIN_OP_GET:
		return 0;
	case RMAWIN_OP_ACC:
	case RMAWIN_OP_GET_ACC:
	case RMAWIN_OP_FETCH_OP:
	case RMAWIN_OP_CAS:
		return rmawin_acc_args(op) ?: rmawin_acc_align(win, op, off);
	default:
		return 1;
	}
}

/**
 * rmawin__op_check() - may this operation be queued, and is it valid?
 * @win: its window
 * @op: a put, a get or one of the accumulate family
 *
 * Return: 1 if the library knows too little to judge (the caller goes to
 * the kernel synchronously); 0 if it is valid; else the error the kernel
 * would return for it.
 */
int rmawin__op_check(const struct rmawin_win *win, const struct rmawin_op_desc *op)
{
	int ret;

	pthread_mutex_lock(&win->ep->lock);
	ret = rmawin__op_check_locked(win, op);
	pthread_mutex_unlock(&win->ep->lock);
	return ret;
}

/**
 * rmawin__flush_allowed() - would the kernel take a flush of @target?
 * @win: the window
 * @target: a rank, or RMAWIN_ALL_RANKS
 *
 * Return: 1 if the library knows it holds the lock a flush needs (the
 * kernel's rmawin_flush_check()), else 0: the kernel judges.
 */
int rmawin__flush_allowed(const struct rmawin_win *win, uint32_t target)
{
	const struct rmawin__epoch *e = &win->epoch;
	int ret;

	pthread_mutex_lock(&win->ep->lock);
	if (e->unknown)
		ret = 0;
	else if (target == RMAWIN_ALL_RANKS)
		ret = e->nheld > 0;
	else
		ret = target < (uint32_t)win->ep->nranks && e->held[target];
	pthread_mutex_unlock(&win->ep->lock);
	return ret;
}

static void rmawin_epoch_fence(struct rmawin_win *win, unsigned int flags, int ret)
{
	struct rmawin__epoch *e = &win->epoch;

	if (ret) {
		e->unknown = 1;
		return;
	}
	e->unknown = 0;
	e->started = 0;
	e->nheld = 0;
	memset(e->held, 0, win->ep->nranks);
	e->fence_open = !(flags & RMAWIN_MODE_NOSUCCEED);
}

static void rmawin_epoch_lock(struct rmawin_win *win, uint32_t target, int ret)
{
	struct rmawin__epoch *e = &win->epoch;
	int t;

	if (ret) {
		e->unknown = 1;
		return;
	}
	e->fence_open = 0;
	for (t = 0; t < win->ep->nranks; t++) {
		if ((target == RMAWIN_ALL_RANKS || (uint32_t)t == target) && !e->held[t]) {
			e->held[t] = 1;
			e->nheld++;
		}
	}
}

static void rmawin_epoch_unlock(struct rmawin_win *win, uint32_t target, int ret)
{
	struct rmawin__epoch *e = &win->epoch;
	int t;

	if (ret) {
		e->unknown = 1;
		return;
	}
	/*
	 * An unlock of every rank that succeeds ends every lock the window
	 * held, which the kernel let it take only outside PSCW access and
	 * non-empty fence epochs (and a START only with no lock held): the
	 * window is in no epoch now, whatever the view lost before.
	 */
	if (target == RMAWIN_ALL_RANKS && e->unknown) {
		e->unknown = 0;
		e->started = 0;
		e->fence_open = 0;
	}
	for (t = 0; t < win->ep->nranks; t++) {
		if ((target == RMAWIN_ALL_RANKS || (uint32_t)t == target) && e->held[t]) {
			e->held[t] = 0;
			e->nheld--;
		}
	}
}

static void rmawin_epoch_start(struct rmawin_win *win, const uint32_t *targets, int n, int ret)
{
	struct rmawin__epoch *e = &win->epoch;
	int i;

	if (ret) {
		e->unknown = 1;
		return;
	}
	memset(e->access, 0, win->ep->nranks);
	for (i = 0; i < n; i++)
		if (targets[i] < (uint32_t)win->ep->nranks)
			e->access[targets[i]] = 1;
	e->fence_open = 0;
	e->started = 1;
}

static void rmawin_epoch_complete(struct rmawin_win *win, int ret)
{
	if (ret)
		win->epoch.unknown = 1;
	else
		win->epoch.started = 0;
}

/* A lock of @target noted (lazy.c), as if taken; the caller holds the endpoint's lock. */
void rmawin__epoch_note_lock(struct rmawin_win *win, uint32_t target)
{
	rmawin_epoch_lock(win, target, 0);
}

/* The updates, each under the endpoint's lock: after the call they follow. */
void rmawin__epoch_fence(struct rmawin_win *win, unsigned int flags, int ret)
{
	pthread_mutex_lock(&win->ep->lock);
	rmawin_epoch_fence(win, flags, ret);
	pthread_mutex_unlock(&win->ep->lock);
}

void rmawin__epoch_lock(struct rmawin_win *win, uint32_t target, int ret)
{
	pthread_mutex_lock(&win->ep->lock);
	rmawin_epoch_lock(win, target, ret);
	pthread_mutex_unlock(&win->ep->lock);
}

void rmawin__epoch_unlock(struct rmawin_win *win, uint32_t target, int ret)
{
	pthread_mutex_lock(&win->ep->lock);
	rmawin_epoch_unlock(win, target, ret);
	pthread_mutex_unlock(&win->ep->lock);
}

void rmawin__epoch_start(struct rmawin_win *win, const uint32_t *targets, int n, int ret)
{
	pthread_mutex_lock(&win->ep->lock);
	rmawin_epoch_start(win, targets, n, ret);
	pthread_mutex_unlock(&win->ep->lock);
}

void rmawin__epoch_complete(struct rmawin_win *win, int ret)
{
	pthread_mutex_lock(&win->ep->lock);
	rmawin_epoch_complete(win, ret);
	pthread_mutex_unlock(&win->ep->lock);
}
